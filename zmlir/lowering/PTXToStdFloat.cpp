//===- PTXToStdFloat.cpp - Float special functions, classes, packing ------===//
//
// rcp/sqrt/rsqrt (IEEE and .approx), the .approx transcendentals, testp,
// register packing moves and the f16x2/bf16x2 conversions, plus the
// directed-rounding helpers cvt uses.
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
Value tanhFromExp(OpBuilder &b, Location loc, Value x, bool amdgpu) {
  mlir::Type t = x.getType();
  Value ax = math::AbsFOp::create(b, loc, x);
  Value twoLog2e = floatConst(b, loc, t, 2.0 * 1.4426950408889634);
  Value scaled = arith::MulFOp::create(b, loc, ax, twoLog2e);
  Value e = amdgpu ? callIntrinsic(b, loc, t, "llvm.amdgcn.exp2", scaled)
                   : math::Exp2Op::create(b, loc, scaled).getResult();
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

template <typename OpTy>
struct FloatUnaryLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  /// IEEE square root; NVPTX's NVVM lowering only takes its own intrinsic.
  Value squareRoot(OpBuilder &b, Location loc, Value a) const {
    if (this->state.target == "nvptx")
      return callIntrinsic(b, loc, a.getType(),
                           a.getType().isF64() ? "llvm.nvvm.sqrt.rn.d" : "llvm.nvvm.sqrt.rn.f",
                           a);
    return math::SqrtOp::create(b, loc, a);
  }

  /// NVIDIA's own .approx instruction on NVPTX, else null.
  Value nativeApprox(OpTy op, OpBuilder &b, Value a, StringRef name) const {
    if (this->state.target != "nvptx")
      return Value();
    Location loc = op.getLoc();
    mlir::Type t = a.getType();
    bool ftz = op.getFtz();
    std::string suffix = t.isF64() ? "d" : "f";
    if (name == "tanh") {
      if (!t.isF32())
        return Value();
      auto asmOp = LLVM::InlineAsmOp::create(
          b, loc, t, ValueRange{a}, "tanh.approx.f32 $0, $1;", "=f,f",
          /*has_side_effects=*/false, /*is_align_stack=*/false,
          LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
      return asmOp.getResult(0);
    }
    if (name == "ex2") {
      if (!t.isF32())
        return Value();
      return callIntrinsic(b, loc, t, ftz ? "llvm.nvvm.ex2.approx.ftz.f32"
                                          : "llvm.nvvm.ex2.approx.f32", a);
    }
    // rcp.approx exists only with .ftz; f64 .approx only for rcp and rsqrt.
    if (name == "rcp" && !ftz)
      return Value();
    if (t.isF64() && name != "rcp" && name != "rsqrt")
      return Value();
    std::string intrinsic = ("llvm.nvvm." + name + ".approx." + (ftz ? "ftz." : "") + suffix).str();
    return callIntrinsic(b, loc, t, intrinsic, a);
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
      if (Value native = nativeApprox(op, rewriter, a, name)) {
        rewriter.replaceOp(op, native);
        return success();
      }
    }
    bool ftz = op.getFtz();
    if (ftz)
      a = flushSubnormal(rewriter, loc, a);
    bool amdgpu = this->state.target == "amdgpu";
    if (amdgpu && transcendental && !t.isF32())
      return this->unsupported(op, Twine("'") + name + ".approx' on f64 for AMDGPU");
    Value one = floatConst(rewriter, loc, t, 1.0);
    Value r;
    if (name == "rcp")
      r = arith::DivFOp::create(rewriter, loc, one, a);
    else if (name == "sqrt")
      r = squareRoot(rewriter, loc, a);
    else if (name == "rsqrt")
      r = arith::DivFOp::create(rewriter, loc, one, squareRoot(rewriter, loc, a));
    else if (name == "sin" || name == "cos") {
      Value turns = revolutions(rewriter, loc, a, amdgpu);
      if (amdgpu) {
        // v_sin/v_cos take the angle in revolutions.
        r = callIntrinsic(rewriter, loc, t, name == "sin" ? "llvm.amdgcn.sin" : "llvm.amdgcn.cos",
                          turns);
      } else {
        Value angle = arith::MulFOp::create(rewriter, loc, turns,
                                            floatConst(rewriter, loc, t, 2.0 * llvm::numbers::pi));
        r = name == "sin" ? math::SinOp::create(rewriter, loc, angle).getResult()
                          : math::CosOp::create(rewriter, loc, angle).getResult();
      }
    } else if (name == "lg2")
      r = amdgpu ? callIntrinsic(rewriter, loc, t, "llvm.amdgcn.log", a)
                 : math::Log2Op::create(rewriter, loc, a).getResult();
    else if (name == "ex2")
      r = amdgpu ? callIntrinsic(rewriter, loc, t, "llvm.amdgcn.exp2", a)
                 : math::Exp2Op::create(rewriter, loc, a).getResult();
    else
      r = tanhFromExp(rewriter, loc, a, amdgpu);
    if (ftz)
      r = flushSubnormal(rewriter, loc, r);
    rewriter.replaceOp(op, r);
    return success();
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

} // namespace

void zmlir::populatePTXFloatPatterns(RewritePatternSet &patterns,
                                     const PTXLoweringState &state) {
  patterns.add<FloatUnaryLowering<RcpOp>, FloatUnaryLowering<SqrtOp>,
               FloatUnaryLowering<RsqrtOp>, FloatUnaryLowering<SinOp>,
               FloatUnaryLowering<CosOp>, FloatUnaryLowering<Lg2Op>,
               FloatUnaryLowering<Ex2Op>, FloatUnaryLowering<TanhOp>, TestpOpLowering,
               MovPackOpLowering, MovUnpackOpLowering, CvtPackOpLowering>(
      patterns.getContext(), state);
}
