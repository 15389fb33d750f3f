//===- FloatRounding.cpp - Exact float rounding builders ------------------===//
//
// The builders behind PTX's float rounding, shared by the families that round
// (FloatRounding.h): narrowing and integer-to-float conversions with any
// rounding mode, f32 to bf16, the directed roundings (.rz, .rm, .rp) of
// f32/f64 add, sub, mul, fma, div, sqrt and rcp (bit-exact on every target),
// and round-to-nearest-even without llvm.roundeven.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/FloatRounding.h"
#include "zmlir/lowering/PTXLowering.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;
using FP = arith::CmpFPredicate;

} // namespace

Value zmlir::bitsOf(OpBuilder &b, Location loc, Value f) {
  return arith::BitcastOp::create(b, loc, b.getIntegerType(widthOf(f.getType())), f);
}

namespace {

/// The next float above (`up`) or below `f`, for finite or infinite `f`
/// that is not NaN: one step of the bit pattern away from or towards zero,
/// and the smallest subnormal of the right sign next to a zero.
Value stepFloat(OpBuilder &b, Location loc, Value f, bool up) {
  mlir::Type ft = f.getType();
  Value bits = bitsOf(b, loc, f);
  mlir::Type it = bits.getType();
  unsigned width = widthOf(it);
  Value signBit = intConst(b, loc, it, static_cast<int64_t>(uint64_t(1) << (width - 1)));
  Value one = intConst(b, loc, it, 1);
  Value isNegative = arith::CmpIOp::create(b, loc, IP::slt, bits, intConst(b, loc, it, 0));
  Value magnitude = arith::AndIOp::create(
      b, loc, bits, arith::XOrIOp::create(b, loc, signBit, intConst(b, loc, it, -1)));
  Value isZero = arith::CmpIOp::create(b, loc, IP::eq, magnitude, intConst(b, loc, it, 0));
  // Away from zero: up for positive values, down for negative ones.
  Value away =
      up ? arith::XOrIOp::create(b, loc, isNegative, intConst(b, loc, b.getI1Type(), 1)).getResult()
         : isNegative;
  Value stepped = arith::SelectOp::create(b, loc, away, arith::AddIOp::create(b, loc, bits, one),
                                          arith::SubIOp::create(b, loc, bits, one));
  Value nextToZero = up ? one : arith::OrIOp::create(b, loc, signBit, one).getResult();
  Value r = arith::SelectOp::create(b, loc, isZero, nextToZero, stepped);
  return arith::BitcastOp::create(b, loc, ft, r);
}

/// Moves the round-to-nearest result `r` of the exact value `x` one step for
/// a directed rounding mode. `above`/`below` say whether r overshot x;
/// `positive`/`negative` give x's sign.
Value adjustRounding(OpBuilder &b, Location loc, Value r, Rounding rnd, Value above, Value below,
                     Value positive, Value negative) {
  switch (rnd) {
  case Rounding::RM:
    return arith::SelectOp::create(b, loc, above, stepFloat(b, loc, r, false), r);
  case Rounding::RP:
    return arith::SelectOp::create(b, loc, below, stepFloat(b, loc, r, true), r);
  case Rounding::RZ: {
    Value down = arith::AndIOp::create(b, loc, above, positive);
    Value up = arith::AndIOp::create(b, loc, below, negative);
    Value r1 = arith::SelectOp::create(b, loc, down, stepFloat(b, loc, r, false), r);
    return arith::SelectOp::create(b, loc, up, stepFloat(b, loc, r, true), r1);
  }
  default:
    return r;
  }
}

} // namespace

/// f32 -> bf16 round to nearest even, in integer arithmetic (bf16 floats
/// need an extension on SPIR-V). NaN gives NVIDIA's canonical NaN 0x7fff.
Value zmlir::f32ToBf16Bits(OpBuilder &b, Location loc, Value x) {
  mlir::Type i32 = b.getI32Type();
  Value bits = bitsOf(b, loc, x);
  Value c16 = intConst(b, loc, i32, 16);
  Value lsb = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, bits, c16),
                                    intConst(b, loc, i32, 1));
  Value rounded = arith::AddIOp::create(
      b, loc, bits, arith::AddIOp::create(b, loc, lsb, intConst(b, loc, i32, 0x7fff)));
  Value nearest = arith::ShRUIOp::create(b, loc, rounded, c16);
  Value isNaN = arith::CmpFOp::create(b, loc, FP::UNO, x, x);
  Value r = arith::SelectOp::create(b, loc, isNaN, intConst(b, loc, i32, 0x7fff), nearest);
  return arith::TruncIOp::create(b, loc, b.getI16Type(), r);
}

/// Narrowing with a directed rounding mode, exactly:
///  1. round to nearest (the hardware conversion);
///  2. widen the result back (exact) and compare it with the input;
///  3. if it is on the wrong side for the mode, step one ulp back.
/// bf16 results are rounded in integer arithmetic from an f32; an f64 is
/// first rounded to odd at f32's 24 bits, which every mode then rounds to
/// bf16's 8 as it would the f64 (roundToOdd).
static Value narrowFloatRounded(OpBuilder &b, Location loc, Value x, mlir::Type target,
                                Rounding rnd) {
  // Between f16 and bf16: from the exact f32.
  if (widthOf(x.getType()) == 16 && x.getType() != target)
    x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  mlir::Type source = x.getType();
  Value r;
  if (target.isBF16()) {
    if (!source.isF32() && !source.isF64())
      return Value();
    Value single = x;
    if (source.isF64()) {
      Value near = arith::TruncFOp::create(b, loc, b.getF32Type(), x);
      Value wide = arith::ExtFOp::create(b, loc, source, near);
      single = roundToOdd(b, loc, near, arith::CmpFOp::create(b, loc, FP::OGT, wide, x),
                          arith::CmpFOp::create(b, loc, FP::OLT, wide, x));
    }
    Value bits = f32ToBf16Bits(b, loc, single);
    r = arith::BitcastOp::create(b, loc, target, bits);
    if (rnd == Rounding::None || rnd == Rounding::RN)
      return r;
    Value wide = arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, b.getI32Type(), bits),
                                       intConst(b, loc, b.getI32Type(), 16));
    Value back = arith::BitcastOp::create(b, loc, b.getF32Type(), wide);
    if (source.isF64())
      back = arith::ExtFOp::create(b, loc, source, back);
    Value zero = floatConst(b, loc, source, 0.0);
    return adjustRounding(b, loc, r, rnd, arith::CmpFOp::create(b, loc, FP::OGT, back, x),
                          arith::CmpFOp::create(b, loc, FP::OLT, back, x),
                          arith::CmpFOp::create(b, loc, FP::OGT, x, zero),
                          arith::CmpFOp::create(b, loc, FP::OLT, x, zero));
  }
  r = arith::TruncFOp::create(b, loc, target, x);
  if (rnd == Rounding::None || rnd == Rounding::RN)
    return r;
  Value back = arith::ExtFOp::create(b, loc, source, r);
  Value zero = floatConst(b, loc, source, 0.0);
  return adjustRounding(b, loc, r, rnd, arith::CmpFOp::create(b, loc, FP::OGT, back, x),
                        arith::CmpFOp::create(b, loc, FP::OLT, back, x),
                        arith::CmpFOp::create(b, loc, FP::OGT, x, zero),
                        arith::CmpFOp::create(b, loc, FP::OLT, x, zero));
}

/// narrowFloatRounded, then NaN results of f16 made canonical.
Value zmlir::narrowFloat(OpBuilder &b, Location loc, Value x, mlir::Type target, Rounding rnd) {
  Value r = narrowFloatRounded(b, loc, x, target, rnd);
  if (!r || !target.isF16())
    return r;
  // NVIDIA converts every NaN to the canonical 16-bit NaN 0x7fff (payload
  // and sign dropped); the CPU's conversion keeps the payload. (bf16: in
  // f32ToBf16Bits, as bf16 values are not legal on SPIR-V.)
  Value isNaN = arith::CmpFOp::create(b, loc, FP::UNO, x, x);
  Value canonical = arith::BitcastOp::create(b, loc, target,
                                             intConst(b, loc, b.getI16Type(), 0x7fff));
  return arith::SelectOp::create(b, loc, isNaN, canonical, r);
}

/// Integer to float with a directed rounding mode:
///  1. convert rounding to nearest;
///  2. compare the result with the input as integers; a result at or past
///     2^(w-1) (2^w unsigned), or an infinity, is past every input;
///  3. step one ulp back if it is on the wrong side for the mode.
/// To bf16 in any mode, without an integer-to-bf16 conversion (LLVM's SPIR-V
/// backend has none):
///  1. convert towards zero to f32 as above (never past the input, so it
///     converts back exactly);
///  2. set its last bit when that differs from the input: the f32 rounded
///     to odd;
///  3. narrow that to bf16 in the mode (roundToOdd: 24 >= 8 + 2).
Value zmlir::integerToFloat(OpBuilder &b, Location loc, Value x, bool isSigned, mlir::Type target,
                            Rounding rnd) {
  if (target.isBF16()) {
    mlir::Type f32 = b.getF32Type();
    Value towardsZero = integerToFloat(b, loc, x, isSigned, f32, Rounding::RZ);
    Value back = isSigned ? arith::FPToSIOp::create(b, loc, x.getType(), towardsZero).getResult()
                          : arith::FPToUIOp::create(b, loc, x.getType(), towardsZero).getResult();
    Value inexact = arith::ExtUIOp::create(b, loc, b.getI32Type(),
                                           arith::CmpIOp::create(b, loc, IP::ne, back, x));
    Value odd = arith::BitcastOp::create(
        b, loc, f32, arith::OrIOp::create(b, loc, bitsOf(b, loc, towardsZero), inexact));
    return narrowFloat(b, loc, odd, target, rnd);
  }
  Value r = isSigned ? arith::SIToFPOp::create(b, loc, target, x).getResult()
                     : arith::UIToFPOp::create(b, loc, target, x).getResult();
  if (rnd == Rounding::None || rnd == Rounding::RN)
    return r;
  mlir::Type it = x.getType();
  unsigned width = widthOf(it);
  double limit = std::ldexp(1.0, isSigned ? width - 1 : width);
  Value tooHigh = arith::CmpFOp::create(b, loc, FP::OGE, r, floatConst(b, loc, target, limit));
  Value tooLow = isSigned
                     ? arith::CmpFOp::create(b, loc, FP::OLT, r, floatConst(b, loc, target, -limit))
                           .getResult()
                     : intConst(b, loc, b.getI1Type(), 0);
  Value outside = arith::OrIOp::create(b, loc, tooHigh, tooLow);
  Value safe = arith::SelectOp::create(b, loc, outside, floatConst(b, loc, target, 0.0), r);
  Value asInt = isSigned ? arith::FPToSIOp::create(b, loc, it, safe).getResult()
                         : arith::FPToUIOp::create(b, loc, it, safe).getResult();
  Value inside = arith::XOrIOp::create(b, loc, outside, intConst(b, loc, b.getI1Type(), 1));
  Value above = arith::OrIOp::create(
      b, loc, tooHigh,
      arith::AndIOp::create(b, loc, inside,
                            arith::CmpIOp::create(b, loc, isSigned ? IP::sgt : IP::ugt, asInt, x)));
  Value below = arith::OrIOp::create(
      b, loc, tooLow,
      arith::AndIOp::create(b, loc, inside,
                            arith::CmpIOp::create(b, loc, isSigned ? IP::slt : IP::ult, asInt, x)));
  Value zero = intConst(b, loc, it, 0);
  Value positive = arith::CmpIOp::create(b, loc, isSigned ? IP::sgt : IP::ne, x, zero);
  Value negative = isSigned ? arith::CmpIOp::create(b, loc, IP::slt, x, zero).getResult()
                            : intConst(b, loc, b.getI1Type(), 0);
  return adjustRounding(b, loc, r, rnd, above, below, positive, negative);
}

//===----------------------------------------------------------------------===//
// Directed rounding (.rz, .rm, .rp) of f32/f64 add, sub, mul, fma, div,
// sqrt, rcp
//===----------------------------------------------------------------------===//

/// |x| by clearing the sign bit (llvm.fabs is not legal in every GPU
/// lowering: NVPTX's wants libdevice).
Value zmlir::absFloat(OpBuilder &b, Location loc, Value x) {
  Value bits = bitsOf(b, loc, x);
  mlir::Type it = bits.getType();
  Value mask = intConst(b, loc, it, static_cast<int64_t>(~uint64_t(0) >> (65 - widthOf(it))));
  return arith::BitcastOp::create(b, loc, x.getType(), arith::AndIOp::create(b, loc, bits, mask));
}

Value zmlir::isFiniteFloat(OpBuilder &b, Location loc, Value x) {
  Value inf = floatConst(b, loc, x.getType(), std::numeric_limits<double>::infinity());
  return arith::CmpFOp::create(b, loc, FP::ONE, absFloat(b, loc, x), inf);
}

/// The rounding error of `s = x + y` (TwoSum: exact in binary floating
/// point, with or without subnormals, unless `s` overflows; NaN then).
Value zmlir::twoSumError(OpBuilder &b, Location loc, Value x, Value y, Value s) {
  Value yy = arith::SubFOp::create(b, loc, s, x);
  Value xx = arith::SubFOp::create(b, loc, s, yy);
  return arith::AddFOp::create(b, loc, arith::SubFOp::create(b, loc, x, xx),
                               arith::SubFOp::create(b, loc, y, yy));
}

/// Makes the round-to-nearest result `r` round-to-odd: when the exact value
/// lies `above` or below (`below` says r is below it) and r's last bit is
/// even, step one ulp towards the exact value (the odd neighbour). A
/// round-to-odd result at precision q rounds correctly, in every mode, to
/// any precision p <= q - 2 (Boldo and Melquiond, "Emulation of FMA and
/// correctly rounded sums: proved algorithms using rounding to odd").
Value zmlir::roundToOdd(OpBuilder &b, Location loc, Value r, Value rIsAbove, Value rIsBelow) {
  Value bits = bitsOf(b, loc, r);
  mlir::Type it = bits.getType();
  Value even = arith::CmpIOp::create(b, loc, IP::eq,
                                     arith::AndIOp::create(b, loc, bits, intConst(b, loc, it, 1)),
                                     intConst(b, loc, it, 0));
  Value up = arith::AndIOp::create(b, loc, rIsBelow, even);
  Value down = arith::AndIOp::create(b, loc, rIsAbove, even);
  Value r1 = arith::SelectOp::create(b, loc, down, stepFloat(b, loc, r, false), r);
  return arith::SelectOp::create(b, loc, up, stepFloat(b, loc, r, true), r1);
}

namespace {

/// The sign of an exact zero sum x + y: IEEE gives -0 under .rm unless both
/// are +0, and +0 otherwise unless both are -0. `s` is the rounded sum.
Value signedZeroSum(OpBuilder &b, Location loc, Value x, Value y, Value s, Rounding rnd) {
  Value bx = bitsOf(b, loc, x), by = bitsOf(b, loc, y);
  mlir::Type it = bx.getType();
  Value signBit = intConst(b, loc, it, static_cast<int64_t>(uint64_t(1) << (widthOf(it) - 1)));
  Value sign = rnd == Rounding::RM ? arith::OrIOp::create(b, loc, bx, by).getResult()
                                   : arith::AndIOp::create(b, loc, bx, by).getResult();
  Value zero = arith::BitcastOp::create(b, loc, s.getType(),
                                        arith::AndIOp::create(b, loc, sign, signBit));
  Value isZero = arith::CmpFOp::create(b, loc, FP::OEQ, s, floatConst(b, loc, s.getType(), 0.0));
  return arith::SelectOp::create(b, loc, isZero, zero, s);
}

Value selectF(OpBuilder &b, Location loc, Value c, double x, double y, mlir::Type t) {
  return arith::SelectOp::create(b, loc, c, floatConst(b, loc, t, x), floatConst(b, loc, t, y));
}

/// x * k * k: exact scaling by k^2 (a power of two) where it cannot overflow.
Value scaleTwice(OpBuilder &b, Location loc, Value x, Value k) {
  return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, k), k);
}

/// |x| = m * 2^e with m in [1, 2), for finite nonzero f64 x (subnormals
/// included): returns {m, e (i64)}.
std::pair<Value, Value> normalizeF64(OpBuilder &b, Location loc, Value x) {
  mlir::Type f64 = b.getF64Type(), i64 = b.getI64Type();
  Value ax = absFloat(b, loc, x);
  Value sub = arith::CmpFOp::create(b, loc, FP::OLT, ax, floatConst(b, loc, f64, 0x1p-1022));
  Value x1 = arith::MulFOp::create(b, loc, ax, selectF(b, loc, sub, 0x1p64, 1.0, f64));
  Value bits = bitsOf(b, loc, x1);
  Value e = arith::SubIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, intConst(b, loc, i64, 52)),
      arith::SelectOp::create(b, loc, sub, intConst(b, loc, i64, 1023 + 64),
                              intConst(b, loc, i64, 1023)));
  Value m = arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, bits, intConst(b, loc, i64, 0x000fffffffffffffll)),
      intConst(b, loc, i64, 0x3ff0000000000000ll));
  return {arith::BitcastOp::create(b, loc, f64, m), e};
}

/// The sign of the exact a*b + c - r for f64 (r = fma(a, b, c) rounded to
/// nearest), as {r is above the exact value, r is below it}:
///  1. r infinite with finite operands: the exact value is finite;
///  2. r == c: the exact difference is a*b, whose sign is the operands';
///  3. otherwise scale so nothing overflows and a*b's TwoProd error is
///     exact: tiny products (|a*b| < 2^-969, where then |c| < 2^-200, as
///     r != c) get the smaller operand, c and r scaled by 2^1180; large
///     values (a*b, c or r above 2^900) the larger operand, c and r by
///     2^-128, with a c below 2^-900 (then negligible but for its sign)
///     replaced by +-2^-1000;
///  4. a*b = ph + pl exactly (pl = fma(a, b, -ph)); the four terms pl, ph,
///     c, -r are summed into a nonoverlapping expansion with TwoSum
///     (Shewchuk's Grow-Expansion, exact), whose sign is that of its most
///     significant nonzero component.
std::pair<Value, Value> fmaErrorSignF64(OpBuilder &b, Location loc, Value a, Value x, Value c,
                                        Value r) {
  mlir::Type t = b.getF64Type(), i1 = b.getI1Type();
  Value zero = floatConst(b, loc, t, 0.0);
  Value one = floatConst(b, loc, t, 1.0);
  Value yes = intConst(b, loc, i1, 1);
  auto notOf = [&](Value v) -> Value { return arith::XOrIOp::create(b, loc, v, yes); };
  auto absLT = [&](Value v, double k) -> Value {
    return arith::CmpFOp::create(b, loc, FP::OLT, absFloat(b, loc, v), floatConst(b, loc, t, k));
  };
  auto absGT = [&](Value v, double k) -> Value {
    return arith::CmpFOp::create(b, loc, FP::OGT, absFloat(b, loc, v), floatConst(b, loc, t, k));
  };
  auto sel = [&](Value cond, Value p, Value q) -> Value {
    return arith::SelectOp::create(b, loc, cond, p, q);
  };
  Value finite = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, isFiniteFloat(b, loc, a), isFiniteFloat(b, loc, x)),
      isFiniteFloat(b, loc, c));
  Value rInf = notOf(isFiniteFloat(b, loc, r));
  Value rIsC = arith::CmpFOp::create(b, loc, FP::OEQ, r, c);
  // 2. The sign of a*b: a and x nonzero, sign bits XORed.
  Value productNonzero = arith::AndIOp::create(b, loc,
                                               arith::CmpFOp::create(b, loc, FP::ONE, a, zero),
                                               arith::CmpFOp::create(b, loc, FP::ONE, x, zero));
  Value productNegative = arith::CmpIOp::create(
      b, loc, IP::slt, arith::XOrIOp::create(b, loc, bitsOf(b, loc, a), bitsOf(b, loc, x)),
      intConst(b, loc, b.getI64Type(), 0));
  // 3. Scaling.
  Value ph0 = arith::MulFOp::create(b, loc, a, x);
  Value tiny = absLT(ph0, 0x1p-969);
  Value big = arith::OrIOp::create(
      b, loc, arith::OrIOp::create(b, loc, absGT(ph0, 0x1p900), absGT(c, 0x1p900)),
      absGT(r, 0x1p900));
  Value aSmaller = arith::CmpFOp::create(b, loc, FP::OLE, absFloat(b, loc, a), absFloat(b, loc, x));
  Value up = floatConst(b, loc, t, 0x1p590), down = floatConst(b, loc, t, 0x1p-64);
  // Each scale is applied twice: 2^1180 = (2^590)^2, 2^-128 = (2^-64)^2.
  Value sa = sel(arith::AndIOp::create(b, loc, tiny, aSmaller), up,
                 sel(arith::AndIOp::create(b, loc, big, notOf(aSmaller)), down, one));
  Value sx = sel(arith::AndIOp::create(b, loc, tiny, notOf(aSmaller)), up,
                 sel(arith::AndIOp::create(b, loc, big, aSmaller), down, one));
  Value sc = sel(tiny, up, sel(big, down, one));
  Value as = scaleTwice(b, loc, a, sa), xs = scaleTwice(b, loc, x, sx);
  Value rs = scaleTwice(b, loc, r, sc);
  Value cs = scaleTwice(b, loc, c, sc);
  Value cTinyInBig = arith::AndIOp::create(b, loc, big, absLT(c, 0x1p-900));
  Value cStandIn = sel(arith::CmpFOp::create(b, loc, FP::OEQ, c, zero), zero,
                       math::CopySignOp::create(b, loc, floatConst(b, loc, t, 0x1p-1000), c));
  cs = sel(cTinyInBig, cStandIn, cs);
  // 4. The expansion of pl + ph + c - r.
  Value ph = arith::MulFOp::create(b, loc, as, xs);
  Value pl = math::FmaOp::create(b, loc, as, xs, arith::NegFOp::create(b, loc, ph));
  auto twoSum = [&](Value p, Value q) -> std::pair<Value, Value> {
    Value s = arith::AddFOp::create(b, loc, p, q);
    return {s, twoSumError(b, loc, p, q, s)};
  };
  auto [q0, h0] = twoSum(ph, pl);
  auto [q1, g0] = twoSum(cs, h0);
  auto [q2, g1] = twoSum(q1, q0);
  auto [k3a, k0] = twoSum(arith::NegFOp::create(b, loc, rs), g0);
  auto [k3b, k1] = twoSum(k3a, g1);
  auto [top, k2] = twoSum(k3b, q2);
  Value sign = top;
  for (Value part : {k2, k1, k0})
    sign = sel(arith::CmpFOp::create(b, loc, FP::OEQ, sign, zero), part, sign);
  Value exactAbove = arith::CmpFOp::create(b, loc, FP::OGT, sign, zero);
  Value exactBelow = arith::CmpFOp::create(b, loc, FP::OLT, sign, zero);
  // Case 2 and case 1 override; non-finite operands give exact results.
  exactAbove = sel(rIsC, arith::AndIOp::create(b, loc, productNonzero, notOf(productNegative)),
                   exactAbove);
  exactBelow = sel(rIsC, arith::AndIOp::create(b, loc, productNonzero, productNegative),
                   exactBelow);
  Value rPos = arith::CmpFOp::create(b, loc, FP::OGT, r, zero);
  exactAbove = sel(rInf, notOf(rPos), exactAbove);
  exactBelow = sel(rInf, rPos, exactBelow);
  Value rAbove = arith::AndIOp::create(b, loc, finite, exactBelow);
  Value rBelow = arith::AndIOp::create(b, loc, finite, exactAbove);
  return {rAbove, rBelow};
}

/// f64 directed rounding in f64 (no wider type). Each op computes the
/// round-to-nearest result r and the sign of the exact value minus r, then
/// adjustRounding moves r one ulp where the mode needs it:
///  add: TwoSum gives the error exactly; when r overflowed (finite inputs,
///       infinite r) the exact value lies inside the finite range.
///  mul: the error's sign is fma(a, b, -r). When r is tiny (|r| < 2^-969)
///       that error may underflow, so the smaller operand and r are first
///       scaled by 2^1100 (exact: the smaller operand is < 2^-484), which
///       keeps fma's result nonzero whenever the error is.
///  div: on the normalized operands |a| = A 2^ea, |b| = B 2^eb and
///       |r| = R 2^er (all in [1, 2)), sign(|a/b| - |r|) is the sign of
///       fma(-R 2^(er-ea+eb), B, A), where er - ea + eb is in [-3, 2];
///       a quotient that underflowed to 0 or overflowed to inf is below
///       or above the exact value by its sign.
///  sqrt: the error's sign is fma(-r, r, a), with a and r scaled by 2^200
///       and 2^100 below 2^-900;
///  fma: fmaErrorSignF64.
Value directedF64(OpBuilder &b, Location loc, StringRef name, ArrayRef<Value> x, Rounding rnd) {
  mlir::Type t = b.getF64Type();
  Value zero = floatConst(b, loc, t, 0.0);
  Value f = intConst(b, loc, b.getI1Type(), 0);
  Value r, above = f, below = f;
  if (name == "add" || name == "sub") {
    Value y = name == "sub" ? arith::NegFOp::create(b, loc, x[1]).getResult() : x[1];
    r = arith::AddFOp::create(b, loc, x[0], y);
    Value e = twoSumError(b, loc, x[0], y, r);
    Value overflow = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, isFiniteFloat(b, loc, x[0]), isFiniteFloat(b, loc, y)),
        arith::XOrIOp::create(b, loc, isFiniteFloat(b, loc, r),
                              intConst(b, loc, b.getI1Type(), 1)));
    above = arith::OrIOp::create(
        b, loc, arith::CmpFOp::create(b, loc, FP::OLT, e, zero),
        arith::AndIOp::create(b, loc, overflow, arith::CmpFOp::create(b, loc, FP::OGT, r, zero)));
    below = arith::OrIOp::create(
        b, loc, arith::CmpFOp::create(b, loc, FP::OGT, e, zero),
        arith::AndIOp::create(b, loc, overflow, arith::CmpFOp::create(b, loc, FP::OLT, r, zero)));
    r = signedZeroSum(b, loc, x[0], y, r, rnd);
  } else if (name == "mul") {
    r = arith::MulFOp::create(b, loc, x[0], x[1]);
    Value ar = absFloat(b, loc, r);
    Value small = arith::CmpFOp::create(b, loc, FP::OLT, ar, floatConst(b, loc, t, 0x1p-969));
    Value aSmaller = arith::CmpFOp::create(b, loc, FP::OLE, absFloat(b, loc, x[0]),
                                           absFloat(b, loc, x[1]));
    Value scaleA = arith::AndIOp::create(b, loc, small, aSmaller);
    Value scaleB = arith::AndIOp::create(
        b, loc, small, arith::XOrIOp::create(b, loc, aSmaller, intConst(b, loc, b.getI1Type(), 1)));
    Value xa = scaleTwice(b, loc, x[0], selectF(b, loc, scaleA, 0x1p550, 1.0, t));
    Value xb = scaleTwice(b, loc, x[1], selectF(b, loc, scaleB, 0x1p550, 1.0, t));
    Value xr = scaleTwice(b, loc, r, selectF(b, loc, small, 0x1p550, 1.0, t));
    Value d = math::FmaOp::create(b, loc, xa, xb, arith::NegFOp::create(b, loc, xr));
    above = arith::CmpFOp::create(b, loc, FP::OLT, d, zero);
    below = arith::CmpFOp::create(b, loc, FP::OGT, d, zero);
  } else if (name == "fma") {
    r = math::FmaOp::create(b, loc, x[0], x[1], x[2]);
    std::tie(above, below) = fmaErrorSignF64(b, loc, x[0], x[1], x[2], r);
    // An exact zero gets IEEE's sign for the mode; the rounded product
    // keeps the sign of a*b.
    Value exactZero = arith::AndIOp::create(
        b, loc, arith::CmpFOp::create(b, loc, FP::OEQ, r, zero),
        arith::XOrIOp::create(b, loc, arith::OrIOp::create(b, loc, above, below),
                              intConst(b, loc, b.getI1Type(), 1)));
    Value product = arith::MulFOp::create(b, loc, x[0], x[1]);
    r = arith::SelectOp::create(b, loc, exactZero, signedZeroSum(b, loc, product, x[2], r, rnd), r);
  } else if (name == "div" || name == "rcp") {
    Value num = name == "rcp" ? floatConst(b, loc, t, 1.0) : x[0];
    Value den = name == "rcp" ? x[0] : x[1];
    r = arith::DivFOp::create(b, loc, num, den);
    mlir::Type i1 = b.getI1Type(), i64 = b.getI64Type();
    Value regular = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, isFiniteFloat(b, loc, num), isFiniteFloat(b, loc, den)),
        arith::AndIOp::create(b, loc, arith::CmpFOp::create(b, loc, FP::ONE, num, zero),
                              arith::CmpFOp::create(b, loc, FP::ONE, den, zero)));
    Value rZero = arith::CmpFOp::create(b, loc, FP::OEQ, r, zero);
    Value rInf = arith::XOrIOp::create(b, loc, isFiniteFloat(b, loc, r), intConst(b, loc, i1, 1));
    Value normal = arith::AndIOp::create(
        b, loc, regular,
        arith::XOrIOp::create(b, loc, arith::OrIOp::create(b, loc, rZero, rInf),
                              intConst(b, loc, i1, 1)));
    // Keep the normalization away from zeros and infinities.
    Value one = floatConst(b, loc, t, 1.0);
    auto [ma, ea] = normalizeF64(b, loc, arith::SelectOp::create(b, loc, normal, num, one));
    auto [mb, eb] = normalizeF64(b, loc, arith::SelectOp::create(b, loc, normal, den, one));
    auto [mr, er] = normalizeF64(b, loc, arith::SelectOp::create(b, loc, normal, r, one));
    Value d = arith::AddIOp::create(b, loc, arith::SubIOp::create(b, loc, er, ea), eb);
    Value pow2 = arith::BitcastOp::create(
        b, loc, t,
        arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, d, intConst(b, loc, i64, 1023)),
                              intConst(b, loc, i64, 52)));
    Value scaled = arith::MulFOp::create(b, loc, mr, pow2);
    Value rem = math::FmaOp::create(b, loc, arith::NegFOp::create(b, loc, scaled), mb, ma);
    Value magBelow = arith::CmpFOp::create(b, loc, FP::OGT, rem, zero);
    Value magAbove = arith::CmpFOp::create(b, loc, FP::OLT, rem, zero);
    // The exact quotient's sign is the XOR of the operands' signs (also
    // when r underflowed to a zero).
    Value negative = arith::CmpIOp::create(
        b, loc, IP::slt, arith::XOrIOp::create(b, loc, bitsOf(b, loc, num), bitsOf(b, loc, den)),
        intConst(b, loc, i64, 0));
    Value positive = arith::XOrIOp::create(b, loc, negative, intConst(b, loc, i1, 1));
    // Magnitude below the exact value: r is below it when positive.
    Value magBelowAll = arith::OrIOp::create(b, loc,
                                             arith::AndIOp::create(b, loc, normal, magBelow),
                                             arith::AndIOp::create(b, loc, regular, rZero));
    Value magAboveAll = arith::OrIOp::create(b, loc,
                                             arith::AndIOp::create(b, loc, normal, magAbove),
                                             arith::AndIOp::create(b, loc, regular, rInf));
    below = arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, positive, magBelowAll),
                                 arith::AndIOp::create(b, loc, negative, magAboveAll));
    above = arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, positive, magAboveAll),
                                 arith::AndIOp::create(b, loc, negative, magBelowAll));
  } else if (name == "sqrt") {
    r = math::SqrtOp::create(b, loc, x[0]);
    Value tiny = arith::CmpFOp::create(b, loc, FP::OLT, x[0], floatConst(b, loc, t, 0x1p-900));
    Value sa = arith::MulFOp::create(b, loc, x[0], selectF(b, loc, tiny, 0x1p200, 1.0, t));
    Value sr = arith::MulFOp::create(b, loc, r, selectF(b, loc, tiny, 0x1p100, 1.0, t));
    Value rem = math::FmaOp::create(b, loc, arith::NegFOp::create(b, loc, sr), sr, sa);
    above = arith::CmpFOp::create(b, loc, FP::OLT, rem, zero);
    below = arith::CmpFOp::create(b, loc, FP::OGT, rem, zero);
  } else {
    return Value();
  }
  // The exact value's sign, for .rz: a zero r only stays a zero.
  return adjustRounding(b, loc, r, rnd, above, below,
                        arith::CmpFOp::create(b, loc, FP::OGT, r, zero),
                        arith::CmpFOp::create(b, loc, FP::OLT, r, zero));
}

/// fma of f32 with a directed rounding, from the target's own fma (correctly
/// rounded to nearest) and the sign of its error, in f64:
///  1. r = fma(a, b, c) rounded to nearest, in f32;
///  2. p = a * b in f64 (exact), s = p + c rounded to nearest and e its
///     TwoSum error: the exact value is s + e;
///  3. s - r is exact: both round the exact value to nearest, so s lies in
///     [r/2, 2r] (Sterbenz) or r is a zero; an infinite r (finite operands)
///     gives an infinite difference of the sign it overshot by. Rounding to
///     nearest keeps the sign of (s - r) + e, that of the exact value less r
///     (f64 sums never underflow to zero);
///  4. step r one ulp where the mode needs it (adjustRounding);
///  5. an exact zero (s == 0) under .rm is -0 unless a*b and c are both +0;
///     rounding to nearest already gives .rz's and .rp's zero.
/// An infinite or NaN operand makes e a NaN: r, exact then, stays. About
/// half the operations of the round-to-odd path below, which handles .ftz.
Value directedFmaF32(OpBuilder &b, Location loc, ArrayRef<Value> x, Rounding rnd) {
  mlir::Type t = b.getF64Type();
  Value r = math::FmaOp::create(b, loc, x[0], x[1], x[2]);
  Value p = arith::MulFOp::create(b, loc, arith::ExtFOp::create(b, loc, t, x[0]),
                                  arith::ExtFOp::create(b, loc, t, x[1]));
  Value c = arith::ExtFOp::create(b, loc, t, x[2]);
  Value s = arith::AddFOp::create(b, loc, p, c);
  Value e = twoSumError(b, loc, p, c, s);
  Value d = arith::AddFOp::create(
      b, loc, arith::SubFOp::create(b, loc, s, arith::ExtFOp::create(b, loc, t, r)), e);
  Value zero = floatConst(b, loc, t, 0.0);
  Value zero32 = floatConst(b, loc, r.getType(), 0.0);
  Value result = adjustRounding(b, loc, r, rnd, arith::CmpFOp::create(b, loc, FP::OLT, d, zero),
                                arith::CmpFOp::create(b, loc, FP::OGT, d, zero),
                                arith::CmpFOp::create(b, loc, FP::OGT, r, zero32),
                                arith::CmpFOp::create(b, loc, FP::OLT, r, zero32));
  if (rnd != Rounding::RM)
    return result;
  Value negative = arith::CmpIOp::create(
      b, loc, IP::slt, arith::OrIOp::create(b, loc, bitsOf(b, loc, p), bitsOf(b, loc, c)),
      intConst(b, loc, b.getI64Type(), 0));
  Value signed0 = arith::SelectOp::create(b, loc, negative, floatConst(b, loc, r.getType(), -0.0),
                                          zero32);
  return arith::SelectOp::create(b, loc, arith::CmpFOp::create(b, loc, FP::OEQ, s, zero), signed0,
                                 result);
}

/// fma.rm/.rz of f32 whose exact value provably lies in one positive binade
/// [2^k, 2^(k+1)), k >= 23, where the floats are the multiples of
/// q = 2^(k-23): with c in it (so a multiple of q) and a*b in [0, 2^k) and
/// below 2^(k+1) - c (`ranges`),
/// rounding down is c + q * floor(a*b / q). nvcc's expf rounds with it,
/// fma.rm(cvt.sat(x), 252, 12582913). Built in f32:
///  1. f = q * floor(RN(a*b) / q): RN(a*b) is monotone and within q/4 of
///     a*b (below 2^k), so f is the floor or one q above it;
///  2. fma(a, b, -f) < 0 (the exact sign: f = 0 leaves a*b >= 0, and a
///     nonzero a*b - f for f >= q is at least 2^-48 in magnitude) means f is
///     above: f - q;
///  3. c + f is exact (a float of the binade).
/// Null where the ranges do not say so.
Value integralFmaF32(OpBuilder &b, Location loc, ArrayRef<Value> x, Rounding rnd,
                     ArrayRef<FloatRange> ranges) {
  if ((rnd != Rounding::RM && rnd != Rounding::RZ) || ranges.size() != 3 ||
      !llvm::all_of(ranges, [](const FloatRange &r) { return r.has_value(); }))
    return Value();
  auto [la, ha] = *ranges[0];
  auto [lb, hb] = *ranges[1];
  auto [lc, hc] = *ranges[2];
  if (lc != hc)
    return Value();
  // Products of f32 bounds are exact in f64, and so are the differences of
  // multiples of q below 2^54: every test here is exact.
  double products[] = {la * lb, la * hb, ha * lb, ha * hb};
  double lp = *std::min_element(std::begin(products), std::end(products));
  double hp = *std::max_element(std::begin(products), std::end(products));
  double c = lc;
  if (!(lp >= 0.0) || !(c >= 0x1p23) || !std::isfinite(c))
    return Value();
  int k = std::ilogb(c);
  double q = std::ldexp(1.0, k - 23);
  if (!(hp < std::ldexp(1.0, k + 1) - c) || !(hp < std::ldexp(1.0, k)) || std::fmod(c, q) != 0.0)
    return Value();
  mlir::Type t = x[0].getType();
  auto scale = [&](Value v, double by) {
    return by == 1.0 ? v : arith::MulFOp::create(b, loc, v, floatConst(b, loc, t, by)).getResult();
  };
  Value f = scale(
      math::FloorOp::create(b, loc, scale(arith::MulFOp::create(b, loc, x[0], x[1]), 1.0 / q)), q);
  Value over = arith::CmpFOp::create(
      b, loc, FP::OLT, math::FmaOp::create(b, loc, x[0], x[1], arith::NegFOp::create(b, loc, f)),
      floatConst(b, loc, t, 0.0));
  f = arith::SelectOp::create(b, loc, over,
                              arith::SubFOp::create(b, loc, f, floatConst(b, loc, t, q)), f);
  return arith::AddFOp::create(b, loc, x[2], f);
}

/// f32 directed rounding through f64, where every f32 product is exact:
///  1. widen the operands (exact);
///  2. compute in f64 and make the result round-to-odd: add and fma from
///     the exact TwoSum error of the f64 sum (the product is exact), div,
///     rcp and sqrt from the sign of the exact remainder fma(-q, b, a) or
///     fma(-s, s, a) (no underflow: f32 operands are far inside f64's
///     range); mul is exact already;
///  3. an exact zero sum gets IEEE's sign for the mode (x + -x is -0 under
///     .rm);
///  4. narrow to f32 with the mode (narrowFloat): round-to-odd at 53 bits
///     rounds correctly to 24, subnormals and overflow included;
///  5. with .ftz, see below.
/// fma without .ftz takes directedFmaF32.
Value directedF32(OpBuilder &b, Location loc, StringRef name, ArrayRef<Value> x, Rounding rnd,
                  bool ftz) {
  if (name == "fma" && !ftz)
    return directedFmaF32(b, loc, x, rnd);
  mlir::Type t = b.getF64Type();
  SmallVector<Value> w;
  for (Value v : x)
    w.push_back(arith::ExtFOp::create(b, loc, t, v));
  Value zero = floatConst(b, loc, t, 0.0);
  Value s;
  if (name == "mul") {
    s = arith::MulFOp::create(b, loc, w[0], w[1]);
  } else if (name == "add" || name == "sub" || name == "fma") {
    Value p = name == "fma" ? arith::MulFOp::create(b, loc, w[0], w[1]).getResult() : w[0];
    Value y = name == "fma" ? w[2] : w[1];
    if (name == "sub")
      y = arith::NegFOp::create(b, loc, y);
    s = arith::AddFOp::create(b, loc, p, y);
    Value e = twoSumError(b, loc, p, y, s);
    s = roundToOdd(b, loc, s, arith::CmpFOp::create(b, loc, FP::OLT, e, zero),
                   arith::CmpFOp::create(b, loc, FP::OGT, e, zero));
    s = signedZeroSum(b, loc, p, y, s, rnd);
  } else if (name == "div" || name == "rcp") {
    Value num = name == "rcp" ? floatConst(b, loc, t, 1.0) : w[0];
    Value den = name == "rcp" ? w[0] : w[1];
    s = arith::DivFOp::create(b, loc, num, den);
    Value rem = math::FmaOp::create(b, loc, arith::NegFOp::create(b, loc, s), den, num);
    // The exact quotient is above s when rem / den > 0.
    Value remPos = arith::CmpFOp::create(b, loc, FP::OGT, rem, zero);
    Value remNeg = arith::CmpFOp::create(b, loc, FP::OLT, rem, zero);
    Value denPos = arith::CmpFOp::create(b, loc, FP::OGT, den, zero);
    Value denNeg = arith::CmpFOp::create(b, loc, FP::OLT, den, zero);
    Value sBelow = arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, remPos, denPos),
                                        arith::AndIOp::create(b, loc, remNeg, denNeg));
    Value sAbove = arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, remPos, denNeg),
                                        arith::AndIOp::create(b, loc, remNeg, denPos));
    s = roundToOdd(b, loc, s, sAbove, sBelow);
  } else if (name == "sqrt") {
    s = math::SqrtOp::create(b, loc, w[0]);
    Value rem = math::FmaOp::create(b, loc, arith::NegFOp::create(b, loc, s), s, w[0]);
    s = roundToOdd(b, loc, s, arith::CmpFOp::create(b, loc, FP::OLT, rem, zero),
                   arith::CmpFOp::create(b, loc, FP::OGT, rem, zero));
  } else {
    return Value();
  }
  Value r = narrowFloat(b, loc, s, b.getF32Type(), rnd);
  if (!ftz)
    return r;
  // 5. .ftz flushes results that are tiny after rounding with an unbounded
  //    exponent in the mode (the H200 gives -0 for div.rm.ftz of -2^-126 by
  //    1 + 2^-23): below 2^-126 where the mode rounds the magnitude down, at
  //    or below 2^-126 (1 - 2^-24) where it rounds it up. s is on the same
  //    side of these (even) thresholds as the exact value.
  Value negative = arith::CmpIOp::create(b, loc, IP::slt, bitsOf(b, loc, s),
                                         intConst(b, loc, b.getI64Type(), 0));
  Value as = absFloat(b, loc, s);
  Value below = arith::CmpFOp::create(b, loc, FP::OLT, as, floatConst(b, loc, t, 0x1p-126));
  Value atOrBelow = arith::CmpFOp::create(b, loc, FP::OLE, as,
                                          floatConst(b, loc, t, 0x1p-126 * (1 - 0x1p-24)));
  Value tiny = below;
  if (rnd == Rounding::RM)
    tiny = arith::SelectOp::create(b, loc, negative, atOrBelow, below);
  else if (rnd == Rounding::RP)
    tiny = arith::SelectOp::create(b, loc, negative, below, atOrBelow);
  mlir::Type f32 = b.getF32Type();
  Value zero32 = arith::SelectOp::create(b, loc, negative, floatConst(b, loc, f32, -0.0),
                                         floatConst(b, loc, f32, 0.0));
  return arith::SelectOp::create(b, loc, tiny, zero32, r);
}

} // namespace

/// `name` (add, sub, mul, fma, div, rcp, sqrt) of f32/f64 operands with the
/// directed rounding `rnd`, bit-exact. On NVPTX, NVIDIA's own instruction through its NVVM
/// intrinsic; elsewhere directedF32 / directedF64. `.ftz` flushes f32
/// operands and the result.
Value zmlir::directedRounding(OpBuilder &b, Location loc, const PTXLoweringState &state,
                              StringRef name, SmallVector<Value> x, Rounding rnd, bool ftz,
                              ArrayRef<FloatRange> ranges) {
  mlir::Type t = x[0].getType();
  bool f64 = t.isF64();
  if (ftz)
    for (Value &v : x)
      v = flushSubnormal(b, loc, v);
  if (Value native = state.target.nativeDirectedArith(b, loc, name, x, rnd, ftz))
    return native;
  if (name == "fma" && !f64 && !ftz)
    if (Value r = integralFmaF32(b, loc, x, rnd, ranges))
      return r;
  Value r;
  if (f64) {
    r = directedF64(b, loc, name, x, rnd);
  } else {
    r = directedF32(b, loc, name, x, rnd, ftz);
  }
  if (r && ftz)
    r = flushSubnormal(b, loc, r);
  return r;
}

bool zmlir::isDirected(Rounding rnd) {
  return rnd == Rounding::RZ || rnd == Rounding::RM || rnd == Rounding::RP;
}

//===----------------------------------------------------------------------===//
// Signs and rounding to integral values
//===----------------------------------------------------------------------===//

/// |magnitude| with the sign bit of `sign`, in integer arithmetic (exact for
/// NaNs, and llvm.copysign is not legal for every GPU lowering).
Value zmlir::copySign(OpBuilder &b, Location loc, Value magnitude, Value sign) {
  Value m = asInteger(b, loc, magnitude), s = asInteger(b, loc, sign);
  mlir::Type t = m.getType();
  unsigned width = widthOf(t);
  Value signBit = intConst(b, loc, t, static_cast<int64_t>(uint64_t(1) << (width - 1)));
  Value rest = arith::XOrIOp::create(b, loc, signBit, intConst(b, loc, t, -1));
  Value r = arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, m, rest),
                                 arith::AndIOp::create(b, loc, s, signBit));
  return arith::BitcastOp::create(b, loc, magnitude.getType(), r);
}

/// Round half to even without llvm.roundeven (not legal for every GPU
/// lowering): below 2^(p-1) (p the type's precision: 11 for f16, 24 for
/// f32) adding and subtracting 2^(p-1) rounds exactly that way; larger
/// magnitudes, infinities and NaN are already integral.
Value zmlir::roundEven(OpBuilder &b, Location loc, Value x) {
  mlir::Type t = x.getType();
  auto floatType = cast<FloatType>(getElementTypeOrSelf(t));
  double big = std::ldexp(
      1.0, static_cast<int>(llvm::APFloat::semanticsPrecision(floatType.getFloatSemantics())) - 1);
  Value zero = floatConst(b, loc, t, 0.0);
  Value ax = copySign(b, loc, x, zero);
  Value c = floatConst(b, loc, t, big);
  Value r = arith::SubFOp::create(b, loc, arith::AddFOp::create(b, loc, ax, c), c);
  Value small = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, ax, c);
  return arith::SelectOp::create(b, loc, small, copySign(b, loc, r, x), x);
}
