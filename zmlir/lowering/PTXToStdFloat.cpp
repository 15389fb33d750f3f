//===- PTXToStdFloat.cpp - Float special functions, classes, packing ------===//
//
// rcp/sqrt/rsqrt (IEEE and .approx), the .approx transcendentals, testp,
// register packing moves and the f16x2/bf16x2 conversions, plus the
// directed-rounding helpers cvt uses; f16/f16x2/bf16/bf16x2 arithmetic and
// the directed roundings (.rz/.rm/.rp) of f32/f64 add, sub, mul, fma, mad,
// div, sqrt and rcp, bit-exact on every target.
//
// `.approx` on NVPTX is NVIDIA's own instruction (through the NVVM
// intrinsics), so it matches the hardware bit for bit; elsewhere it is the
// correctly rounded (or libm-accurate) function, which is within the bound
// the PTX ISA documents for each `.approx` op; sin and cos first reduce the
// angle the way the hardware does, so large angles agree with NVIDIA too.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;
using FP = arith::CmpFPredicate;

Value bitsOf(OpBuilder &b, Location loc, Value f) {
  return arith::BitcastOp::create(b, loc, b.getIntegerType(widthOf(f.getType())), f);
}

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
  Value away = up ? arith::XOrIOp::create(b, loc, isNegative,
                                          intConst(b, loc, b.getI1Type(), 1)).getResult()
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
Value adjustRounding(OpBuilder &b, Location loc, Value r, Rounding rnd, Value above,
                     Value below, Value positive, Value negative) {
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

/// f32 -> bf16 round to nearest even, in integer arithmetic (bf16 floats
/// need an extension on SPIR-V). NaN gives NVIDIA's canonical NaN 0x7fff.
Value f32ToBf16Bits(OpBuilder &b, Location loc, Value x) {
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

} // namespace

/// Narrowing with a directed rounding mode, exactly:
///  1. round to nearest (the hardware conversion);
///  2. widen the result back (exact) and compare it with the input;
///  3. if it is on the wrong side for the mode, step one ulp back.
/// bf16 results are rounded in integer arithmetic (only from f32).
static Value narrowFloatRounded(OpBuilder &b, Location loc, Value x, mlir::Type target,
                                Rounding rnd) {
  mlir::Type source = x.getType();
  Value r;
  if (target.isBF16()) {
    if (!source.isF32())
      return Value();
    Value bits = f32ToBf16Bits(b, loc, x);
    r = arith::BitcastOp::create(b, loc, target, bits);
    if (rnd == Rounding::None || rnd == Rounding::RN)
      return r;
    Value wide = arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, b.getI32Type(), bits),
                                       intConst(b, loc, b.getI32Type(), 16));
    Value back = arith::BitcastOp::create(b, loc, source, wide);
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
Value zmlir::narrowFloat(OpBuilder &b, Location loc, Value x, mlir::Type target,
                         Rounding rnd) {
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
Value zmlir::integerToFloat(OpBuilder &b, Location loc, Value x, bool isSigned,
                            mlir::Type target, Rounding rnd) {
  bool nearest = rnd == Rounding::None || rnd == Rounding::RN;
  if (target.isBF16() && !nearest)
    return Value();
  Value r = isSigned ? arith::SIToFPOp::create(b, loc, target, x).getResult()
                     : arith::UIToFPOp::create(b, loc, target, x).getResult();
  if (rnd == Rounding::None || rnd == Rounding::RN)
    return r;
  mlir::Type it = x.getType();
  unsigned width = widthOf(it);
  double limit = std::ldexp(1.0, isSigned ? width - 1 : width);
  Value tooHigh = arith::CmpFOp::create(b, loc, FP::OGE, r, floatConst(b, loc, target, limit));
  Value tooLow = isSigned ? arith::CmpFOp::create(b, loc, FP::OLT, r,
                                                  floatConst(b, loc, target, -limit))
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

namespace {

//===----------------------------------------------------------------------===//
// rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh
//===----------------------------------------------------------------------===//

/// tanh from exp2 for targets without a tanh instruction: x itself below
/// 2^-5 (relative error < 2^-11), else sign(x) * (1 - 2 / (e^2|x| + 1)).
Value tanhFromExp(OpBuilder &b, Location loc, Value x, const TargetInfo &target) {
  mlir::Type t = x.getType();
  Value ax = math::AbsFOp::create(b, loc, x);
  Value twoLog2e = floatConst(b, loc, t, 2.0 * 1.4426950408889634);
  Value scaled = arith::MulFOp::create(b, loc, ax, twoLog2e);
  Value e = target.hardwareApprox(b, loc, "ex2", scaled);
  if (!e)
    e = math::Exp2Op::create(b, loc, scaled);
  Value q = arith::DivFOp::create(b, loc, floatConst(b, loc, t, 2.0),
                                  arith::AddFOp::create(b, loc, e, floatConst(b, loc, t, 1.0)));
  Value big = math::CopySignOp::create(
      b, loc, arith::SubFOp::create(b, loc, floatConst(b, loc, t, 1.0), q), x);
  Value small = arith::CmpFOp::create(b, loc, FP::OLT, ax, floatConst(b, loc, t, 0.03125));
  return arith::SelectOp::create(b, loc, small, x, big);
}

/// The angle `x` (radians) in revolutions, reduced the way NVIDIA's
/// sin/cos.approx reduce it: x * 1/(2 pi) rounded to the type, then its
/// fraction, in [-0.5, 0.5]. Angles too large for a fraction are whole
/// revolutions (the H200 gives sin 0, cos 1 for +-FLT_MAX), a zero keeps the
/// sign of x, and infinities give NaN. `wholeOnly` (AMDGPU, whose v_sin/v_cos
/// reduce revolutions themselves and where llvm.floor is not legal) only
/// turns the whole revolutions into zeros.
Value revolutions(OpBuilder &b, Location loc, Value x, bool wholeOnly) {
  mlir::Type t = x.getType();
  Value turns =
      arith::MulFOp::create(b, loc, x, floatConst(b, loc, t, 0.5 * llvm::numbers::inv_pi));
  Value zero = floatConst(b, loc, t, 0.0);
  Value signedZero = arith::MulFOp::create(b, loc, turns, zero);
  if (wholeOnly) {
    // From 2^(p-1) on (p the precision) every value is an integer.
    double integral = t.isF64() ? 4503599627370496.0 : 8388608.0;
    Value whole = arith::CmpFOp::create(b, loc, FP::OGE, math::AbsFOp::create(b, loc, turns),
                                        floatConst(b, loc, t, integral));
    return arith::SelectOp::create(b, loc, whole, signedZero, turns);
  }
  Value whole = math::FloorOp::create(
      b, loc, arith::AddFOp::create(b, loc, turns, floatConst(b, loc, t, 0.5)));
  Value fraction = arith::SubFOp::create(b, loc, turns, whole);
  Value isZero = arith::CmpFOp::create(b, loc, FP::OEQ, fraction, zero);
  return arith::SelectOp::create(b, loc, isZero, signedZero, fraction);
}

//===----------------------------------------------------------------------===//
// Directed rounding (.rz, .rm, .rp) of f32/f64 add, sub, mul, fma, div,
// sqrt, rcp
//===----------------------------------------------------------------------===//

/// |x| by clearing the sign bit (llvm.fabs is not legal in every GPU
/// lowering: NVPTX's wants libdevice).
Value absFloat(OpBuilder &b, Location loc, Value x) {
  Value bits = bitsOf(b, loc, x);
  mlir::Type it = bits.getType();
  Value mask = intConst(b, loc, it, static_cast<int64_t>(~uint64_t(0) >> (65 - widthOf(it))));
  return arith::BitcastOp::create(b, loc, x.getType(), arith::AndIOp::create(b, loc, bits, mask));
}

Value isFiniteFloat(OpBuilder &b, Location loc, Value x) {
  Value inf = floatConst(b, loc, x.getType(), std::numeric_limits<double>::infinity());
  return arith::CmpFOp::create(b, loc, FP::ONE, absFloat(b, loc, x), inf);
}

/// The rounding error of `s = x + y` (TwoSum: exact in binary floating
/// point, with or without subnormals, unless `s` overflows; NaN then).
Value twoSumError(OpBuilder &b, Location loc, Value x, Value y, Value s) {
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
Value roundToOdd(OpBuilder &b, Location loc, Value r, Value rIsAbove, Value rIsBelow) {
  Value bits = bitsOf(b, loc, r);
  mlir::Type it = bits.getType();
  Value even = arith::CmpIOp::create(
      b, loc, IP::eq, arith::AndIOp::create(b, loc, bits, intConst(b, loc, it, 1)),
      intConst(b, loc, it, 0));
  Value up = arith::AndIOp::create(b, loc, rIsBelow, even);
  Value down = arith::AndIOp::create(b, loc, rIsAbove, even);
  Value r1 = arith::SelectOp::create(b, loc, down, stepFloat(b, loc, r, false), r);
  return arith::SelectOp::create(b, loc, up, stepFloat(b, loc, r, true), r1);
}

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
    return arith::CmpFOp::create(b, loc, FP::OLT, absFloat(b, loc, v),
                                 floatConst(b, loc, t, k));
  };
  auto absGT = [&](Value v, double k) -> Value {
    return arith::CmpFOp::create(b, loc, FP::OGT, absFloat(b, loc, v),
                                 floatConst(b, loc, t, k));
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
  Value aSmaller = arith::CmpFOp::create(b, loc, FP::OLE, absFloat(b, loc, a),
                                         absFloat(b, loc, x));
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
Value directedF64(OpBuilder &b, Location loc, StringRef name, ArrayRef<Value> x,
                  Rounding rnd) {
  mlir::Type t = b.getF64Type();
  Value zero = floatConst(b, loc, t, 0.0);
  Value f = intConst(b, loc, b.getI1Type(), 0);
  Value r, above = f, below = f;
  if (name == "add" || name == "sub") {
    Value y = name == "sub" ? arith::NegFOp::create(b, loc, x[1]).getResult() : x[1];
    r = arith::AddFOp::create(b, loc, x[0], y);
    Value e = twoSumError(b, loc, x[0], y, r);
    Value overflow = arith::AndIOp::create(
        b, loc, arith::AndIOp::create(b, loc, isFiniteFloat(b, loc, x[0]), isFiniteFloat(b, loc, y)),
        arith::XOrIOp::create(b, loc, isFiniteFloat(b, loc, r), intConst(b, loc, b.getI1Type(), 1)));
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
    r = arith::SelectOp::create(b, loc, exactZero,
                                signedZeroSum(b, loc, product, x[2], r, rnd), r);
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
        b, loc, IP::slt,
        arith::XOrIOp::create(b, loc, bitsOf(b, loc, num), bitsOf(b, loc, den)),
        intConst(b, loc, i64, 0));
    Value positive = arith::XOrIOp::create(b, loc, negative, intConst(b, loc, i1, 1));
    // Magnitude below the exact value: r is below it when positive.
    Value magBelowAll = arith::OrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, normal, magBelow),
        arith::AndIOp::create(b, loc, regular, rZero));
    Value magAboveAll = arith::OrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, normal, magAbove),
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
Value directedF32(OpBuilder &b, Location loc, StringRef name, ArrayRef<Value> x,
                  Rounding rnd, bool ftz) {
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

/// `name` (add, sub, mul, fma, div, rcp, sqrt) of f32/f64 operands with the
/// directed rounding `rnd`, bit-exact. On NVPTX, NVIDIA's own instruction through its NVVM
/// intrinsic; elsewhere directedF32 / directedF64. `.ftz` flushes f32
/// operands and the result.
Value directedRounding(OpBuilder &b, Location loc, const PTXLoweringState &state,
                       StringRef name, SmallVector<Value> x, Rounding rnd, bool ftz) {
  mlir::Type t = x[0].getType();
  bool f64 = t.isF64();
  if (ftz)
    for (Value &v : x)
      v = flushSubnormal(b, loc, v);
  if (Value native = state.target.nativeDirectedArith(b, loc, name, x, rnd, ftz))
    return native;
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

bool isDirected(Rounding rnd) {
  return rnd == Rounding::RZ || rnd == Rounding::RM || rnd == Rounding::RP;
}

template <typename OpTy>
struct FloatUnaryLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  /// IEEE square root; NVPTX's NVVM lowering only takes its own intrinsic.
  Value squareRoot(OpBuilder &b, Location loc, Value a) const {
    if (Value native = this->state.target.nativeSqrt(b, loc, a))
      return native;
    return math::SqrtOp::create(b, loc, a);
  }

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    StringRef name = op->getName().stripDialect();
    Value a = adaptor.getA();
    mlir::Type t = a.getType();
    Rounding rnd = op.getRnd();
    bool approx = op.getPrecision() == Precision::Approx;
    if (isDirected(rnd) && (name == "sqrt" || name == "rcp") && (t.isF32() || t.isF64()) &&
        !approx) {
      if (Value r = directedRounding(rewriter, loc, this->state, name, {a}, rnd, op.getFtz())) {
        rewriter.replaceOp(op, r);
        return success();
      }
    }
    if (rnd != Rounding::None && rnd != Rounding::RN)
      return this->unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) + "' on '" +
                                       name + "'");
    if (!t.isF32() && !t.isF64())
      return this->unsupported(op, Twine("type '.") + stringifyDataType(op.getType()) +
                                       "' on '" + name + "'");
    bool transcendental = name == "sin" || name == "cos" || name == "lg2" || name == "ex2" ||
                          name == "tanh";
    if (transcendental && !approx)
      return this->unsupported(op, Twine("'") + name + "' without '.approx'");
    if (approx) {
      if (Value native = this->state.target.nativeApprox(rewriter, loc, name, a, op.getFtz())) {
        rewriter.replaceOp(op, native);
        return success();
      }
    }
    bool ftz = op.getFtz();
    // .ftz flushes f32 operands; rcp.approx.ftz.f64 is the one f64 form that
    // flushes too (the H200: 1/subnormal is inf, 1/DBL_MAX is 0).
    auto flush = [&](Value v) {
      return t.isF64() && name == "rcp" ? flushSubnormalF64(rewriter, loc, v)
                                        : flushSubnormal(rewriter, loc, v);
    };
    if (ftz)
      a = flush(a);
    if (transcendental && !t.isF32() && !this->state.target.hasF64ApproxTranscendentals())
      return this->unsupported(op, Twine("'") + name + ".approx' on f64 for target '" +
                                       this->state.target.getName() + "'");
    Value one = floatConst(rewriter, loc, t, 1.0);
    Value r;
    if (name == "rcp")
      r = arith::DivFOp::create(rewriter, loc, one, a);
    else if (name == "sqrt")
      r = squareRoot(rewriter, loc, a);
    else if (name == "rsqrt")
      r = arith::DivFOp::create(rewriter, loc, one, squareRoot(rewriter, loc, a));
    else if (name == "sin" || name == "cos") {
      const TargetInfo &target = this->state.target;
      bool inTurns = target.hasRevolutionSinCos();
      Value turns = revolutions(rewriter, loc, a, inTurns);
      if (inTurns) {
        r = target.hardwareApprox(rewriter, loc, name, turns);
      } else {
        Value angle = arith::MulFOp::create(rewriter, loc, turns,
                                            floatConst(rewriter, loc, t, 2.0 * llvm::numbers::pi));
        r = name == "sin" ? math::SinOp::create(rewriter, loc, angle).getResult()
                          : math::CosOp::create(rewriter, loc, angle).getResult();
      }
    } else if (name == "lg2" || name == "ex2") {
      r = this->state.target.hardwareApprox(rewriter, loc, name, a);
      if (!r)
        r = name == "lg2" ? math::Log2Op::create(rewriter, loc, a).getResult()
                          : math::Exp2Op::create(rewriter, loc, a).getResult();
    } else
      r = tanhFromExp(rewriter, loc, a, this->state.target);
    if (ftz)
      r = flush(r);
    rewriter.replaceOp(op, r);
    return success();
  }

  /// A subnormal f64 as the zero of its sign, on the bit pattern.
  static Value flushSubnormalF64(OpBuilder &b, Location loc, Value value) {
    mlir::Type i64 = b.getI64Type();
    Value bits = arith::BitcastOp::create(b, loc, i64, value);
    Value exponent =
        arith::AndIOp::create(b, loc, bits, intConst(b, loc, i64, 0x7ff0000000000000LL));
    Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exponent,
                                              intConst(b, loc, i64, 0));
    Value sign = arith::AndIOp::create(b, loc, bits,
                                       intConst(b, loc, i64, std::numeric_limits<int64_t>::min()));
    Value zero = arith::BitcastOp::create(b, loc, value.getType(), sign);
    return arith::SelectOp::create(b, loc, isSubnormal, zero, value);
  }
};

/// testp on the bit pattern, so a flushing FPU cannot blur subnormals.
struct TestpOpLowering : PTXPattern<TestpOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(TestpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value bits = bitsOf(rewriter, loc, adaptor.getA());
    mlir::Type it = bits.getType();
    bool wide = widthOf(it) == 64;
    int64_t expMask = wide ? 0x7ff0000000000000ll : 0x7f800000;
    int64_t mantMask = wide ? 0x000fffffffffffffll : 0x007fffff;
    Value exp = arith::AndIOp::create(rewriter, loc, bits, intConst(rewriter, loc, it, expMask));
    Value mant = arith::AndIOp::create(rewriter, loc, bits, intConst(rewriter, loc, it, mantMask));
    Value expMax = arith::CmpIOp::create(rewriter, loc, IP::eq, exp,
                                         intConst(rewriter, loc, it, expMask));
    Value expZero = arith::CmpIOp::create(rewriter, loc, IP::eq, exp, intConst(rewriter, loc, it, 0));
    Value mantZero = arith::CmpIOp::create(rewriter, loc, IP::eq, mant,
                                           intConst(rewriter, loc, it, 0));
    Value t = intConst(rewriter, loc, rewriter.getI1Type(), 1);
    auto notOf = [&](Value v) -> Value { return arith::XOrIOp::create(rewriter, loc, v, t); };
    Value r;
    switch (op.getKind()) {
    case TestpClass::Finite:
      r = notOf(expMax);
      break;
    case TestpClass::Infinite:
      r = arith::AndIOp::create(rewriter, loc, expMax, mantZero);
      break;
    case TestpClass::Number:
      r = notOf(arith::AndIOp::create(rewriter, loc, expMax, notOf(mantZero)));
      break;
    case TestpClass::NotANumber:
      r = arith::AndIOp::create(rewriter, loc, expMax, notOf(mantZero));
      break;
    case TestpClass::Normal: {
      // Not NaN, infinite or subnormal: NVIDIA hardware counts +-0 as normal.
      Value subnormal = arith::AndIOp::create(rewriter, loc, expZero, notOf(mantZero));
      r = arith::AndIOp::create(rewriter, loc, notOf(expMax), notOf(subnormal));
      break;
    }
    case TestpClass::Subnormal:
      r = arith::AndIOp::create(rewriter, loc, expZero, notOf(mantZero));
      break;
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Packing moves and conversions
//===----------------------------------------------------------------------===//

struct MovPackOpLowering : PTXPattern<MovPackOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(MovPackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type resultType = op.getRes().getType();
    mlir::Type it = rewriter.getIntegerType(widthOf(resultType));
    Value r = intConst(rewriter, loc, it, 0);
    unsigned shift = 0;
    for (Value e : adaptor.getElems()) {
      Value bits = asInteger(rewriter, loc, e);
      unsigned w = widthOf(bits.getType());
      Value wide = arith::ExtUIOp::create(rewriter, loc, it, bits);
      r = arith::OrIOp::create(rewriter, loc, r,
                               arith::ShLIOp::create(rewriter, loc, wide,
                                                     intConst(rewriter, loc, it, shift)));
      shift += w;
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, resultType, false));
    return success();
  }
};

struct MovUnpackOpLowering : PTXPattern<MovUnpackOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(MovUnpackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value bits = asInteger(rewriter, loc, adaptor.getSrc());
    mlir::Type it = bits.getType();
    SmallVector<Value> results;
    unsigned shift = 0;
    for (Value e : op.getElems()) {
      unsigned w = widthOf(e.getType());
      Value part = arith::ShRUIOp::create(rewriter, loc, bits, intConst(rewriter, loc, it, shift));
      Value narrow = arith::TruncIOp::create(rewriter, loc, rewriter.getIntegerType(w), part);
      results.push_back(adjustBits(rewriter, loc, narrow, e.getType(), false));
      shift += w;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// cvt.{rn,rz}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b: a in the high
/// half. .relu turns negative values and -0 into +0; .satfinite clamps to
/// the largest finite value of the result type; NaN gives the canonical NaN
/// 0x7fff (narrowFloat).
struct CvtPackOpLowering : PTXPattern<CvtPackOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(CvtPackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool bf16 = op.getType() == DataType::BF16x2;
    if (!bf16 && op.getType() != DataType::F16x2)
      return unsupported(op, Twine("packed conversion to '.") +
                                 stringifyDataType(op.getType()) + "'");
    Rounding rnd = op.getRnd();
    if (rnd != Rounding::RN && rnd != Rounding::RZ)
      return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                 "' on a packed conversion");
    mlir::Type half = bf16 ? mlir::Type(rewriter.getBF16Type()) : rewriter.getF16Type();
    mlir::Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type();
    double maxFinite = bf16 ? 3.3895313892515355e38 : 65504.0;
    auto convert = [&](Value x) -> Value {
      if (op.getSatfinite()) {
        Value lim = floatConst(rewriter, loc, f32, maxFinite);
        Value neg = floatConst(rewriter, loc, f32, -maxFinite);
        Value isNaN = arith::CmpFOp::create(rewriter, loc, FP::UNO, x, x);
        Value clamped = arith::MinimumFOp::create(
            rewriter, loc, arith::MaximumFOp::create(rewriter, loc, x, neg), lim);
        x = arith::SelectOp::create(rewriter, loc, isNaN, x, clamped);
      }
      if (op.getRelu()) {
        // -0 becomes +0 as well (ole); NaN stays NaN.
        Value zero = floatConst(rewriter, loc, f32, 0.0);
        Value notPositive = arith::CmpFOp::create(rewriter, loc, FP::OLE, x, zero);
        x = arith::SelectOp::create(rewriter, loc, notPositive, zero, x);
      }
      Value h = narrowFloat(rewriter, loc, x, half, rnd);
      if (op.getSatfinite()) {
        // Rounding may still overflow to infinity; clamp the result too.
        Value bits = bitsOf(rewriter, loc, h);
        Value hmax = intConst(rewriter, loc, rewriter.getI16Type(), bf16 ? 0x7f7f : 0x7bff);
        Value magnitude = arith::AndIOp::create(rewriter, loc, bits,
                                                intConst(rewriter, loc, rewriter.getI16Type(), 0x7fff));
        Value isInf = arith::CmpIOp::create(rewriter, loc, IP::eq, magnitude,
                                            intConst(rewriter, loc, rewriter.getI16Type(),
                                                     bf16 ? 0x7f80 : 0x7c00));
        Value sign = arith::AndIOp::create(
            rewriter, loc, bits, intConst(rewriter, loc, rewriter.getI16Type(), -0x8000));
        Value sat = arith::OrIOp::create(rewriter, loc, sign, hmax);
        h = arith::BitcastOp::create(rewriter, loc, half,
                                     arith::SelectOp::create(rewriter, loc, isInf, sat, bits));
      }
      return arith::ExtUIOp::create(rewriter, loc, i32, bitsOf(rewriter, loc, h));
    };
    Value hi = convert(adaptor.getA()), lo = convert(adaptor.getB());
    Value r = arith::OrIOp::create(
        rewriter, loc, arith::ShLIOp::create(rewriter, loc, hi, intConst(rewriter, loc, i32, 16)),
        lo);
    rewriter.replaceOp(op, r);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// f16, f16x2, bf16, bf16x2 arithmetic
//===----------------------------------------------------------------------===//
//
// Each 16-bit lane is widened to f32 (exact), computed there and rounded
// back to nearest even, with NaN results NVIDIA's canonical 0x7fff. For
// add, sub and mul that is correctly rounded: f32's 24 bits are at least
// 2p + 2 for p = 11 (f16) and p = 8 (bf16), so rounding twice gives the same
// result as rounding once (Figueroa, "When is double rounding innocuous?");
// bf16 shares f32's exponent range, and f32's quantum is 2^-16 of bf16's at
// every magnitude, subnormals included. fma needs more, see fusedHalf.
// neg, abs, min and max work on the bits.

struct HalfFlags {
  bool ftz = false, sat = false, relu = false, nan = false, xorsign = false;
};

Value c16(OpBuilder &b, Location loc, int64_t v) { return intConst(b, loc, b.getI16Type(), v); }

Value halfToF32(OpBuilder &b, Location loc, Value bits, bool bf16) {
  if (bf16) {
    mlir::Type i32 = b.getI32Type();
    Value w = arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, bits),
                                    intConst(b, loc, i32, 16));
    return arith::BitcastOp::create(b, loc, b.getF32Type(), w);
  }
  Value h = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), h);
}

/// f32 to 16 bits, to nearest even; NaN gives 0x7fff.
Value f32ToHalfBits(OpBuilder &b, Location loc, Value x, bool bf16) {
  if (bf16)
    return f32ToBf16Bits(b, loc, x);
  return bitsOf(b, loc, narrowFloat(b, loc, x, b.getF16Type(), Rounding::RN));
}

Value halfIsNaN(OpBuilder &b, Location loc, Value bits, bool bf16) {
  Value magnitude = arith::AndIOp::create(b, loc, bits, c16(b, loc, 0x7fff));
  return arith::CmpIOp::create(b, loc, IP::ugt, magnitude, c16(b, loc, bf16 ? 0x7f80 : 0x7c00));
}

Value halfIsNegative(OpBuilder &b, Location loc, Value bits) {
  return arith::CmpIOp::create(b, loc, IP::slt, bits, c16(b, loc, 0));
}

/// `.ftz`: a subnormal becomes the zero of its sign.
Value flushHalf(OpBuilder &b, Location loc, Value bits, bool bf16) {
  Value exponent = arith::AndIOp::create(b, loc, bits, c16(b, loc, bf16 ? 0x7f80 : 0x7c00));
  Value isSubnormal = arith::CmpIOp::create(b, loc, IP::eq, exponent, c16(b, loc, 0));
  Value sign = arith::AndIOp::create(b, loc, bits, c16(b, loc, -0x8000));
  return arith::SelectOp::create(b, loc, isSubnormal, sign, bits);
}

/// fma of 16-bit lanes, correctly rounded once:
///  1. the product of two f16 values is exact in f32 (22 bits, exponents
///     within f32's), of two bf16 values in f64 (bf16 has f32's range);
///  2. add the third operand in that type and take TwoSum's exact error;
///  3. make the sum round-to-odd with it (roundToOdd); for bf16 narrow the
///     f64 result to f32 and make that round-to-odd too (rounding to odd
///     twice is rounding to odd once at the narrower precision);
///  4. round the f32 to the 16-bit type to nearest even: round-to-odd at
///     24 >= p + 2 bits rounds correctly (Boldo and Melquiond).
Value fusedHalf(OpBuilder &b, Location loc, Value fa, Value fb, Value fc, bool bf16) {
  mlir::Type t = bf16 ? mlir::Type(b.getF64Type()) : b.getF32Type();
  if (bf16) {
    fa = arith::ExtFOp::create(b, loc, t, fa);
    fb = arith::ExtFOp::create(b, loc, t, fb);
    fc = arith::ExtFOp::create(b, loc, t, fc);
  }
  Value zero = floatConst(b, loc, t, 0.0);
  Value p = arith::MulFOp::create(b, loc, fa, fb);
  Value s = arith::AddFOp::create(b, loc, p, fc);
  Value e = twoSumError(b, loc, p, fc, s);
  s = roundToOdd(b, loc, s, arith::CmpFOp::create(b, loc, FP::OLT, e, zero),
                 arith::CmpFOp::create(b, loc, FP::OGT, e, zero));
  if (!bf16)
    return s;
  Value r = arith::TruncFOp::create(b, loc, b.getF32Type(), s);
  Value back = arith::ExtFOp::create(b, loc, t, r);
  return roundToOdd(b, loc, r, arith::CmpFOp::create(b, loc, FP::OGT, back, s),
                    arith::CmpFOp::create(b, loc, FP::OLT, back, s));
}

/// The float formats min/max work on as bits.
enum class BitsFormat { F16, BF16, F32 };

/// min/max on the bits of f16, bf16 or f32 values (PTX ISA 9.7.3.10/11,
/// 9.7.4.10/11): -0 below +0; a NaN operand gives the other one, two NaNs
/// (or any NaN with `.NaN`) the canonical NaN; `.xorsign.abs` compares
/// magnitudes and gives the result the XOR of the operands' signs.
Value minMaxBits(OpBuilder &b, Location loc, Value xa, Value xb, bool isMin, BitsFormat fmt,
                 const HalfFlags &f) {
  mlir::Type it = xa.getType();
  bool wide = fmt == BitsFormat::F32;
  int64_t magMask = wide ? 0x7fffffff : 0x7fff;
  int64_t signBit = wide ? static_cast<int32_t>(0x80000000u) : -0x8000;
  int64_t expMask = wide ? 0x7f800000 : fmt == BitsFormat::BF16 ? 0x7f80 : 0x7c00;
  auto toFloat = [&](Value bits) -> Value {
    return wide ? arith::BitcastOp::create(b, loc, b.getF32Type(), bits).getResult()
                : halfToF32(b, loc, bits, fmt == BitsFormat::BF16);
  };
  auto isNaN = [&](Value bits) -> Value {
    return arith::CmpIOp::create(
        b, loc, IP::ugt, arith::AndIOp::create(b, loc, bits, intConst(b, loc, it, magMask)),
        intConst(b, loc, it, expMask));
  };
  Value ma = xa, mb = xb;
  if (f.xorsign) {
    ma = arith::AndIOp::create(b, loc, xa, intConst(b, loc, it, magMask));
    mb = arith::AndIOp::create(b, loc, xb, intConst(b, loc, it, magMask));
  }
  Value fa = toFloat(ma), fb = toFloat(mb);
  Value first = arith::CmpFOp::create(b, loc, isMin ? FP::OLT : FP::OGT, fa, fb);
  Value r = arith::SelectOp::create(b, loc, first, ma, mb);
  Value zeros = isMin ? arith::OrIOp::create(b, loc, ma, mb).getResult()
                      : arith::AndIOp::create(b, loc, ma, mb).getResult();
  r = arith::SelectOp::create(b, loc, arith::CmpFOp::create(b, loc, FP::OEQ, fa, fb), zeros, r);
  Value aNaN = isNaN(xa), bNaN = isNaN(xb);
  if (!f.nan) {
    r = arith::SelectOp::create(b, loc, bNaN, ma, r);
    r = arith::SelectOp::create(b, loc, aNaN, mb, r);
  }
  if (f.xorsign) {
    Value sign = arith::AndIOp::create(b, loc, arith::XOrIOp::create(b, loc, xa, xb),
                                       intConst(b, loc, it, signBit));
    r = arith::OrIOp::create(b, loc, r, sign);
  }
  Value anyNaN = f.nan ? arith::OrIOp::create(b, loc, aNaN, bNaN).getResult()
                       : arith::AndIOp::create(b, loc, aNaN, bNaN).getResult();
  return arith::SelectOp::create(b, loc, anyNaN, intConst(b, loc, it, magMask), r);
}

/// One 16-bit lane of `name` on the lanes `x` (i16 bits).
Value halfLane(OpBuilder &b, Location loc, StringRef name, SmallVector<Value> x, bool bf16,
               const HalfFlags &f) {
  if (f.ftz)
    for (Value &v : x)
      v = flushHalf(b, loc, v, bf16);
  Value r;
  if (name == "neg" || name == "abs") {
    // The sign bit, but NaNs become the canonical NaN (as on the H200).
    r = name == "neg" ? arith::XOrIOp::create(b, loc, x[0], c16(b, loc, -0x8000)).getResult()
                      : arith::AndIOp::create(b, loc, x[0], c16(b, loc, 0x7fff)).getResult();
    r = arith::SelectOp::create(b, loc, halfIsNaN(b, loc, x[0], bf16), c16(b, loc, 0x7fff), r);
  } else if (name == "min" || name == "max") {
    r = minMaxBits(b, loc, x[0], x[1], name == "min", bf16 ? BitsFormat::BF16 : BitsFormat::F16,
                   f);
  } else {
    Value fa = halfToF32(b, loc, x[0], bf16), fb = halfToF32(b, loc, x[1], bf16);
    Value w;
    if (name == "add")
      w = arith::AddFOp::create(b, loc, fa, fb);
    else if (name == "sub")
      w = arith::SubFOp::create(b, loc, fa, fb);
    else if (name == "mul")
      w = arith::MulFOp::create(b, loc, fa, fb);
    else
      w = fusedHalf(b, loc, fa, fb, halfToF32(b, loc, x[2], bf16), bf16);
    r = f32ToHalfBits(b, loc, w, bf16);
    if (f.ftz) {
      // .ftz flushes results that are tiny after rounding with an unbounded
      // exponent (what the H200 does): below 2^-14 less half an ulp of the
      // binade below, 2^-14 (1 - 2^-12), even where the result rounds up to
      // 2^-14. w is exact there for add, sub and mul, and round-to-odd for
      // fma, which keeps it on the same side of that (even) threshold.
      Value tiny = arith::CmpFOp::create(
          b, loc, FP::OLT, absFloat(b, loc, w),
          floatConst(b, loc, b.getF32Type(),
                     bf16 ? 0x1p-126 * (1 - 0x1p-9) : 0x1p-14 * (1 - 0x1p-12)));
      mlir::Type i32 = b.getI32Type();
      Value sign = arith::TruncIOp::create(
          b, loc, b.getI16Type(),
          arith::ShRUIOp::create(b, loc, bitsOf(b, loc, w), intConst(b, loc, i32, 16)));
      sign = arith::AndIOp::create(b, loc, sign, c16(b, loc, -0x8000));
      r = arith::SelectOp::create(b, loc, tiny, sign, r);
    }
    Value isNaN = halfIsNaN(b, loc, r, bf16);
    Value notNaN = arith::XOrIOp::create(b, loc, isNaN, intConst(b, loc, b.getI1Type(), 1));
    if (f.relu) {
      // Negative results and -0 become +0; NaN stays the canonical NaN.
      Value clamp = arith::AndIOp::create(b, loc, notNaN, halfIsNegative(b, loc, r));
      r = arith::SelectOp::create(b, loc, clamp, c16(b, loc, 0), r);
    }
    if (f.sat) {
      // Clamped to [+0, 1]; NaN gives +0.
      Value one = c16(b, loc, bf16 ? 0x3f80 : 0x3c00);
      Value low = arith::OrIOp::create(b, loc, isNaN, halfIsNegative(b, loc, r));
      Value high = arith::CmpIOp::create(b, loc, IP::ugt, r, one);
      r = arith::SelectOp::create(b, loc, high, one, r);
      r = arith::SelectOp::create(b, loc, low, c16(b, loc, 0), r);
    }
  }
  if (f.ftz)
    r = flushHalf(b, loc, r, bf16);
  return r;
}

bool isHalfType(DataType type) {
  return type == DataType::F16 || type == DataType::F16x2 || type == DataType::BF16 ||
         type == DataType::BF16x2;
}

/// add, sub, mul, fma, neg, abs, min, max of f16/f16x2/bf16/bf16x2 (rounding
/// .rn or none). Registered ahead of the generic arithmetic patterns, which
/// reject these types.
template <typename OpTy>
struct HalfArithLowering : PTXPattern<OpTy> {
  HalfArithLowering(MLIRContext *ctx, const PTXLoweringState &state)
      : PTXPattern<OpTy>(ctx, state, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    DataType type = op.getType();
    Rounding rnd = op.getRnd();
    if (!isHalfType(type) || (rnd != Rounding::None && rnd != Rounding::RN))
      return failure();
    StringRef name = op->getName().stripDialect();
    if (auto mode = op->template getAttrOfType<MulModeAttr>("mode"))
      if (mode.getValue() != MulMode::None)
        return failure();
    Location loc = op.getLoc();
    bool bf16 = type == DataType::BF16 || type == DataType::BF16x2;
    bool packed = type == DataType::F16x2 || type == DataType::BF16x2;
    HalfFlags f;
    f.ftz = op.getFtz();
    f.sat = op.getSat();
    f.relu = op->hasAttr("relu");
    f.nan = op->hasAttr("nan");
    f.xorsign = op->hasAttr("xorsign");
    mlir::Type i16 = rewriter.getI16Type(), i32 = rewriter.getI32Type();
    SmallVector<Value> lo, hi;
    for (Value v : adaptor.getOperands()) {
      Value bits = asInteger(rewriter, loc, v);
      if (!packed) {
        lo.push_back(bits);
        continue;
      }
      lo.push_back(arith::TruncIOp::create(rewriter, loc, i16, bits));
      hi.push_back(arith::TruncIOp::create(
          rewriter, loc, i16,
          arith::ShRUIOp::create(rewriter, loc, bits, intConst(rewriter, loc, i32, 16))));
    }
    Value r = halfLane(rewriter, loc, name, lo, bf16, f);
    if (packed) {
      Value h = arith::ExtUIOp::create(rewriter, loc, i32, halfLane(rewriter, loc, name, hi, bf16, f));
      r = arith::OrIOp::create(
          rewriter, loc, arith::ShLIOp::create(rewriter, loc, h, intConst(rewriter, loc, i32, 16)),
          arith::ExtUIOp::create(rewriter, loc, i32, r));
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, op.getRes().getType(), false));
    return success();
  }
};

/// min/max.xorsign.abs.f32 (minMaxBits); the generic min/max pattern does
/// not know .xorsign.
template <typename OpTy>
struct XorsignMinMaxLowering : PTXPattern<OpTy> {
  XorsignMinMaxLowering(MLIRContext *ctx, const PTXLoweringState &state)
      : PTXPattern<OpTy>(ctx, state, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getType() != DataType::F32 || !op.getXorsign())
      return failure();
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    if (op.getFtz()) {
      a = flushSubnormal(rewriter, loc, a);
      b = flushSubnormal(rewriter, loc, b);
    }
    HalfFlags f;
    f.nan = op.getNan();
    f.xorsign = true;
    Value r = minMaxBits(rewriter, loc, bitsOf(rewriter, loc, a), bitsOf(rewriter, loc, b),
                         std::is_same_v<OpTy, MinOp>, BitsFormat::F32, f);
    rewriter.replaceOp(op, arith::BitcastOp::create(rewriter, loc, rewriter.getF32Type(), r));
    return success();
  }
};

/// add, sub, mul, fma, mad and div of f32/f64 with .rz, .rm or .rp
/// (directedRounding). Registered ahead of the generic arithmetic patterns,
/// which reject directed rounding.
template <typename OpTy>
struct DirectedRoundingLowering : PTXPattern<OpTy> {
  DirectedRoundingLowering(MLIRContext *ctx, const PTXLoweringState &state)
      : PTXPattern<OpTy>(ctx, state, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    DataType type = op.getType();
    Rounding rnd = op.getRnd();
    if ((type != DataType::F32 && type != DataType::F64) || !isDirected(rnd))
      return failure();
    StringRef name = op->getName().stripDialect();
    if (name == "mad")
      name = "fma";
    if (auto precision = op->template getAttrOfType<PrecisionAttr>("precision"))
      if (precision.getValue() != Precision::None)
        return failure();
    if (op->hasAttr("relu") || op->hasAttr("nan") || op->hasAttr("xorsign"))
      return failure();
    Location loc = op.getLoc();
    Value r = directedRounding(rewriter, loc, this->state, name,
                               SmallVector<Value>(adaptor.getOperands()), rnd, op.getFtz());
    if (!r)
      return failure();
    if (op.getSat()) {
      // [+0, 1]: NaN and every negative value, -0 included, give +0 (CUDA's
      // __saturatef documents +0.0 as the lower bound).
      Value bits = bitsOf(rewriter, loc, r);
      Value low = arith::OrIOp::create(
          rewriter, loc, arith::CmpFOp::create(rewriter, loc, FP::UNO, r, r),
          arith::CmpIOp::create(rewriter, loc, IP::slt, bits,
                                intConst(rewriter, loc, bits.getType(), 0)));
      mlir::Type t = r.getType();
      Value one = floatConst(rewriter, loc, t, 1.0);
      r = arith::SelectOp::create(
          rewriter, loc, arith::CmpFOp::create(rewriter, loc, FP::OGT, r, one), one, r);
      r = arith::SelectOp::create(rewriter, loc, low, floatConst(rewriter, loc, t, 0.0), r);
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// div.full.f32 on NVPTX and div.approx.f32 everywhere (with .ftz): NVIDIA's
/// instructions on NVPTX.
/// Elsewhere what the H200 computes, a * (1/b) with the reciprocal flushed:
///  1. .ftz flushes subnormal a and b (so 0 / subnormal is 0 * inf = NaN);
///  2. without .ftz a subnormal b scales a and b by 2^24 first (exact, and
///     1/b then has no overflow: 2^-126 / 2^-149 gives 2^23, not inf);
///  3. r = 1/b, flushed to zero when subnormal: for |b| > 2^126 the result
///     is a * 0 (inf / FLT_MAX is NaN, 1 / FLT_MAX is 0);
///  4. d = a * r (.ftz: flushed). Within the ISA's 2 ulp of the H200 where
///     the ISA bounds the error; the same zeros, infinities and NaNs.
/// Registered ahead of the generic div pattern, which divides exactly.
struct DivApproxLowering : PTXPattern<DivOp> {
  DivApproxLowering(MLIRContext *ctx, const PTXLoweringState &state)
      : PTXPattern<DivOp>(ctx, state, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(DivOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool full = op.getPrecision() == Precision::Full;
    if ((op.getPrecision() != Precision::Approx && !full) || op.getType() != DataType::F32 ||
        op.getRnd() != Rounding::None || op.getSat())
      return failure();
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    bool ftz = op.getFtz();
    if (full) {
      // div.full (2 ulp) is NVIDIA's own instruction on NVPTX; elsewhere the
      // generic pattern's correctly rounded division is within its bound.
      Value native = state.target.nativeDivFull(rewriter, loc, a, b, ftz);
      if (!native)
        return failure();
      rewriter.replaceOp(op, native);
      return success();
    }
    if (Value native = state.target.nativeDivApprox(rewriter, loc, a, b, ftz)) {
      rewriter.replaceOp(op, native);
      return success();
    }
    mlir::Type f32 = rewriter.getF32Type();
    auto isSubnormal = [&](Value x) {
      mlir::Type i32 = rewriter.getI32Type();
      Value mag = arith::AndIOp::create(rewriter, loc, asInteger(rewriter, loc, x),
                                        intConst(rewriter, loc, i32, 0x7fffffff));
      return arith::AndIOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, IP::ult, mag, intConst(rewriter, loc, i32, 0x00800000)),
          arith::CmpIOp::create(rewriter, loc, IP::ne, mag, intConst(rewriter, loc, i32, 0)));
    };
    if (ftz) {
      a = flushSubnormal(rewriter, loc, a);
      b = flushSubnormal(rewriter, loc, b);
    } else {
      Value scale = arith::SelectOp::create(rewriter, loc, isSubnormal(b),
                                            floatConst(rewriter, loc, f32, 0x1p24),
                                            floatConst(rewriter, loc, f32, 1.0));
      a = arith::MulFOp::create(rewriter, loc, a, scale);
      b = arith::MulFOp::create(rewriter, loc, b, scale);
    }
    Value r = arith::DivFOp::create(rewriter, loc, floatConst(rewriter, loc, f32, 1.0), b);
    Value d = arith::MulFOp::create(rewriter, loc, a, flushSubnormal(rewriter, loc, r));
    rewriter.replaceOp(op, ftz ? flushSubnormal(rewriter, loc, d) : d);
    return success();
  }
};

} // namespace

void zmlir::populatePTXFloatPatterns(RewritePatternSet &patterns,
                                     const PTXLoweringState &state) {
  patterns.add<FloatUnaryLowering<RcpOp>, FloatUnaryLowering<SqrtOp>,
               FloatUnaryLowering<RsqrtOp>, FloatUnaryLowering<SinOp>,
               FloatUnaryLowering<CosOp>, FloatUnaryLowering<Lg2Op>,
               FloatUnaryLowering<Ex2Op>, FloatUnaryLowering<TanhOp>, TestpOpLowering,
               MovPackOpLowering, MovUnpackOpLowering, CvtPackOpLowering,
               HalfArithLowering<AddOp>, HalfArithLowering<SubOp>, HalfArithLowering<MulOp>,
               HalfArithLowering<FmaOp>, HalfArithLowering<NegOp>, HalfArithLowering<AbsOp>,
               HalfArithLowering<MinOp>, HalfArithLowering<MaxOp>,
               XorsignMinMaxLowering<MinOp>, XorsignMinMaxLowering<MaxOp>,
               DirectedRoundingLowering<AddOp>, DirectedRoundingLowering<SubOp>,
               DirectedRoundingLowering<MulOp>, DirectedRoundingLowering<FmaOp>,
               DirectedRoundingLowering<MadOp>, DirectedRoundingLowering<DivOp>,
               DivApproxLowering>(
      patterns.getContext(), state);
}
