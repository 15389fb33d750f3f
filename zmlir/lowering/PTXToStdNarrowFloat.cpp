//===- PTXToStdNarrowFloat.cpp - tf32 and fp8 conversions -----------------===//
//
// cvt to and from the formats narrower than f16 that the ptx dialect has no
// types for: cvt.rna.tf32.f32 and the fp8 pairs (.e4m3x2, .e5m2x2), imported
// as `ptx.inst`. Every target computes them with integer operations on the
// bits, so no target's float mode (denormal flushing) changes a result; the
// results match the H200's golden data on every captured case.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;

/// Small i32 helpers.
struct Bits {
  OpBuilder &b;
  Location loc;
  mlir::Type i32 = b.getI32Type();

  Value c(int64_t v) const { return intConst(b, loc, i32, v); }
  Value add(Value x, Value y) const { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) const { return arith::SubIOp::create(b, loc, x, y); }
  Value band(Value x, Value y) const { return arith::AndIOp::create(b, loc, x, y); }
  Value bor(Value x, Value y) const { return arith::OrIOp::create(b, loc, x, y); }
  Value shl(Value x, Value y) const { return arith::ShLIOp::create(b, loc, x, y); }
  Value shr(Value x, Value y) const { return arith::ShRUIOp::create(b, loc, x, y); }
  Value cmp(IP p, Value x, Value y) const { return arith::CmpIOp::create(b, loc, p, x, y); }
  Value sel(Value p, Value x, Value y) const { return arith::SelectOp::create(b, loc, p, x, y); }
};

/// f32 to an fp8 byte (in an i32) with .rn.satfinite{.relu}; `expBits` is 4
/// (E4M3: bias 7, no infinity, NaN 0x7f, largest 448 = 0x7e) or 5 (E5M2: bias
/// 15, largest finite 57344 = 0x7b).
///  1. normal results: round the f32 bits to M = 7 - expBits mantissa bits
///     (to nearest, ties to even, by adding 2^(22-M) - 1 plus the lowest kept
///     bit), then rebias the exponent;
///  2. subnormal results (|x| below 2^(1-bias)): the 24-bit significand
///     shifted right to the quantum 2^(1-bias-M), rounded to nearest even;
///  3. .satfinite: anything above the largest finite value (infinity too)
///     gives it; NaN gives 0x7f; the sign is the input's (-0 gives 0x80);
///  4. .relu: a negative input (-0 too) gives +0, NaN still 0x7f.
Value floatToFp8(OpBuilder &b, Location loc, Value x, unsigned expBits, bool relu) {
  Bits k{b, loc};
  int64_t man = 7 - expBits, bias = (1 << (expBits - 1)) - 1, sh = 23 - man;
  int64_t maxCode = expBits == 4 ? 0x7e : 0x7b;
  Value bits = arith::BitcastOp::create(b, loc, k.i32, x);
  Value sign = k.shr(bits, k.c(31));
  Value mag = k.band(bits, k.c(0x7fffffff));
  // 1.
  Value rounded = k.add(k.add(mag, k.c((1 << (sh - 1)) - 1)), k.band(k.shr(mag, k.c(sh)), k.c(1)));
  Value normal = k.sub(k.shr(rounded, k.c(sh)), k.c((127 - bias) << man));
  // 2.
  Value exponent = k.shr(mag, k.c(23));
  Value isZeroExp = k.cmp(IP::eq, exponent, k.c(0));
  Value significand = k.sel(isZeroExp, mag, k.bor(k.band(mag, k.c(0x7fffff)), k.c(1 << 23)));
  Value effExp = k.sel(isZeroExp, k.c(1), exponent);
  // In [1, 31] (it is at least 24 - M where the result is subnormal).
  Value shift = arith::MaxUIOp::create(
      b, loc, arith::MinUIOp::create(b, loc, k.sub(k.c(151 - bias - man), effExp), k.c(31)),
      k.c(1));
  Value q = k.shr(significand, shift);
  Value rem = k.band(significand, k.sub(k.shl(k.c(1), shift), k.c(1)));
  Value half = k.shl(k.c(1), k.sub(shift, k.c(1)));
  Value up = arith::OrIOp::create(
      b, loc, k.cmp(IP::ugt, rem, half),
      arith::AndIOp::create(b, loc, k.cmp(IP::eq, rem, half),
                            k.cmp(IP::ne, k.band(q, k.c(1)), k.c(0))));
  Value subnormal = k.add(q, arith::ExtUIOp::create(b, loc, k.i32, up));
  Value isSubnormal = k.cmp(IP::ult, mag, k.c((128 - bias) << 23));
  // 3.
  Value code = arith::MinUIOp::create(b, loc, k.sel(isSubnormal, subnormal, normal),
                                      k.c(maxCode));
  code = k.bor(code, k.shl(sign, k.c(7)));
  // 4.
  if (relu)
    code = k.sel(k.cmp(IP::ne, sign, k.c(0)), k.c(0), code);
  return k.sel(k.cmp(IP::ugt, mag, k.c(0x7f800000)), k.c(0x7f), code);
}

/// An fp8 byte (the low 8 bits of an i32) as f16 bits (in an i32), exactly.
/// E5M2 is the upper byte of an f16; E4M3 normals rebias the exponent
/// (7 -> 15), its subnormals m * 2^-9 are normal f16 values (m converted and
/// scaled exactly in f32). NaN gives 0x7fff, as on the H200.
Value fp8ToHalf(OpBuilder &b, Location loc, Value code, unsigned expBits) {
  Bits k{b, loc};
  Value mag = k.band(code, k.c(0x7f));
  Value sign = k.shl(k.band(code, k.c(0x80)), k.c(8));
  Value nan = k.c(0x7fff);
  if (expBits == 5)
    return k.sel(k.cmp(IP::ugt, mag, k.c(0x7c)), nan, k.shl(k.band(code, k.c(0xff)), k.c(8)));
  Value exponent = k.shr(mag, k.c(3));
  Value mantissa = k.band(mag, k.c(7));
  Value normal = k.bor(k.shl(k.add(exponent, k.c(8)), k.c(10)), k.shl(mantissa, k.c(7)));
  mlir::Type f32 = b.getF32Type();
  Value scaled = arith::MulFOp::create(b, loc, arith::UIToFPOp::create(b, loc, f32, mantissa),
                                       floatConst(b, loc, f32, std::ldexp(1.0, -9)));
  Value half = arith::TruncFOp::create(b, loc, b.getF16Type(), scaled);
  Value subnormal = arith::ExtUIOp::create(
      b, loc, k.i32, arith::BitcastOp::create(b, loc, b.getI16Type(), half));
  Value r = k.bor(k.sel(k.cmp(IP::eq, exponent, k.c(0)), subnormal, normal), sign);
  return k.sel(k.cmp(IP::eq, mag, k.c(0x7f)), nan, r);
}

/// cvt.rna.tf32.f32: f32 bits rounded to 10 mantissa bits, ties away from
/// zero (add half of the dropped range, clear it; the carry reaches the
/// exponent and, past the largest value, infinity). NaN keeps its upper bits,
/// as on the H200 (0x7fc00001 -> 0x7fc00000, 0x7fa00000 unchanged); a NaN
/// whose payload is only in the dropped bits (not captured) gets the quiet
/// bit, so it stays NaN.
Value floatToTf32(OpBuilder &b, Location loc, Value x) {
  Bits k{b, loc};
  Value bits = arith::BitcastOp::create(b, loc, k.i32, x);
  Value mask = k.c(static_cast<int32_t>(0xffffe000));
  Value rounded = k.band(k.add(bits, k.c(0x1000)), mask);
  Value truncated = k.band(bits, mask);
  Value mag = k.band(bits, k.c(0x7fffffff));
  Value isNaN = k.cmp(IP::ugt, mag, k.c(0x7f800000));
  Value lostPayload = k.cmp(IP::eq, k.band(truncated, k.c(0x7fffff)), k.c(0));
  Value nan = k.sel(lostPayload, k.bor(truncated, k.c(0x400000)), truncated);
  return k.sel(isNaN, nan, rounded);
}

} // namespace

Value zmlir::lowerNarrowFloatCvt(InstOp op, ValueRange operands, OpBuilder &b) {
  Location loc = op.getLoc();
  SmallVector<StringRef> mods;
  for (Attribute mod : op.getModifiers())
    mods.push_back(cast<StringAttr>(mod).getValue());
  if (op.getOpcode() != "cvt" || op->getNumResults() != 1)
    return {};
  mlir::Type resultType = op.getResult(0).getType();
  Bits k{b, loc};
  auto is = [&](std::initializer_list<StringRef> want) {
    return mods.size() == want.size() && std::equal(want.begin(), want.end(), mods.begin());
  };
  auto fp8Bits = [](StringRef t) -> unsigned { return t == ".e4m3x2" ? 4 : t == ".e5m2x2" ? 5 : 0; };
  if (is({".rna", ".tf32", ".f32"}) && operands.size() == 1 && operands[0].getType().isF32())
    return adjustBits(b, loc, floatToTf32(b, loc, operands[0]), resultType, false);
  // cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b: a to the upper byte.
  bool relu = mods.size() == 5 && mods[2] == ".relu";
  if (mods.size() == 4 + relu && mods[0] == ".rn" && mods[1] == ".satfinite" &&
      fp8Bits(mods[2 + relu]) && mods[3 + relu] == ".f32" && operands.size() == 2 &&
      operands[0].getType().isF32() && operands[1].getType().isF32()) {
    unsigned e = fp8Bits(mods[2 + relu]);
    Value hi = floatToFp8(b, loc, operands[0], e, relu);
    Value lo = floatToFp8(b, loc, operands[1], e, relu);
    return adjustBits(b, loc, k.bor(k.shl(hi, k.c(8)), lo), resultType, false);
  }
  // cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a: each half exactly to f32.
  if (mods.size() == 4 + relu && mods[0] == ".rn" && mods[1] == ".satfinite" &&
      fp8Bits(mods[2 + relu]) && mods[3 + relu] == ".f16x2" && operands.size() == 1 &&
      operands[0].getType().isInteger(32)) {
    unsigned e = fp8Bits(mods[2 + relu]);
    auto part = [&](Value v) {
      Value h = arith::BitcastOp::create(b, loc, b.getF16Type(),
                                         arith::TruncIOp::create(b, loc, b.getI16Type(), v));
      return floatToFp8(b, loc, arith::ExtFOp::create(b, loc, b.getF32Type(), h), e, relu);
    };
    Value hi = part(k.shr(operands[0], k.c(16)));
    Value lo = part(operands[0]);
    return adjustBits(b, loc, k.bor(k.shl(hi, k.c(8)), lo), resultType, false);
  }
  // cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a: the upper byte to the upper half.
  if (mods.size() == 3 && mods[0] == ".rn" && mods[1] == ".f16x2" && fp8Bits(mods[2]) &&
      operands.size() == 1 && operands[0].getType().isInteger(16)) {
    unsigned e = fp8Bits(mods[2]);
    Value pair = arith::ExtUIOp::create(b, loc, k.i32, operands[0]);
    Value hi = fp8ToHalf(b, loc, k.shr(pair, k.c(8)), e);
    Value lo = fp8ToHalf(b, loc, k.band(pair, k.c(0xff)), e);
    return adjustBits(b, loc, k.bor(k.shl(hi, k.c(16)), lo), resultType, false);
  }
  return {};
}
