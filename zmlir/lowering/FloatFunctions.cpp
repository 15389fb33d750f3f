//===- FloatFunctions.cpp - rcp, sqrt, approx, testp ----------------------===//
//
// rcp/sqrt/rsqrt (IEEE, directed and .approx), the .approx transcendentals
// (sin, cos, lg2, ex2, tanh; ex2 and tanh also of f16/bf16 and their
// packed pairs), testp, and div.approx/div.full.
//
// `.approx` on NVPTX is NVIDIA's own instruction (through the NVVM
// intrinsics), so it matches the hardware bit for bit; elsewhere it is the
// correctly rounded (or libm-accurate) function, which is within the bound
// the PTX ISA documents for each `.approx` op; sin and cos first reduce the
// angle the way the hardware does, so large angles agree with NVIDIA too.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/FloatRounding.h"
#include "zmlir/lowering/PTXLowering.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;
using FP = arith::CmpFPredicate;

//===----------------------------------------------------------------------===//
// rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh
//===----------------------------------------------------------------------===//

/// tanh from exp2 for targets without a tanh instruction: below 2^-5 x
/// itself (relative error < 2^-11), or with `cubic` x - x^3/3 (relative
/// error < 2^-22), else sign(x) * (1 - 2 / (e^2|x| + 1)).
Value tanhFromExp(OpBuilder &b, Location loc, Value x, const TargetInfo &target,
                  bool cubic = false) {
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
  Value near = x;
  if (cubic) {
    Value x2 = arith::MulFOp::create(b, loc, x, x);
    Value term = arith::MulFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, x2, floatConst(b, loc, t, -1.0 / 3.0)));
    near = arith::AddFOp::create(b, loc, x, term);
  }
  return arith::SelectOp::create(b, loc, small, near, big);
}

bool isHalfType(DataType type) {
  return type == DataType::F16 || type == DataType::F16x2 || type == DataType::BF16 ||
         type == DataType::BF16x2;
}

/// ex2.approx and tanh.approx of f16, f16x2, bf16 and bf16x2 (`a` an f16 or
/// bf16 value, or the i32 of a packed pair, low half first):
///  1. the target's own instruction, on f16/bf16 or vector<2 x f16/bf16>
///     values (NVPTX: ex2.approx.f16, ex2.approx.ftz.bf16x2, ...);
///  2. elsewhere each lane widened to f32 (exact), the f32 function there
///     (ex2: the hardware's or math.exp2; tanh: tanhFromExp with its cubic
///     term, far below the 16-bit rounding error) and rounded to nearest
///     even, NaN as the canonical 0x7fff. That is within the PTX ISA's
///     bounds (ex2: 2^-9.9 relative for f16, 2^-7 for bf16; tanh:
///     2^-10.987 and 2^-8). `ex2.approx.ftz.bf16` flushes a subnormal
///     result to zero (its input is moot: 2^x rounds to 1 there).
Value halfApprox(OpBuilder &b, Location loc, StringRef name, Value a, DataType type,
                 const TargetInfo &target) {
  bool bf16 = type == DataType::BF16 || type == DataType::BF16x2;
  bool packed = type == DataType::F16x2 || type == DataType::BF16x2;
  mlir::Type laneType = bf16 ? mlir::Type(b.getBF16Type()) : b.getF16Type();
  mlir::Type i16 = b.getI16Type(), i32 = b.getI32Type();
  Value arg = a;
  if (packed)
    arg = LLVM::BitcastOp::create(b, loc, VectorType::get({2}, laneType), a);
  if (Value native = target.nativeApprox(b, loc, name, arg, /*ftz=*/bf16 && name == "ex2"))
    return packed ? LLVM::BitcastOp::create(b, loc, i32, native).getResult() : native;
  if (packed)
    arg.getDefiningOp()->erase();
  auto lane = [&](Value bits) -> Value {
    Value x;
    if (bf16) {
      Value w = arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, bits),
                                      intConst(b, loc, i32, 16));
      x = arith::BitcastOp::create(b, loc, b.getF32Type(), w);
    } else {
      Value h = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
      x = arith::ExtFOp::create(b, loc, b.getF32Type(), h);
    }
    Value r;
    if (name == "ex2") {
      r = target.hardwareApprox(b, loc, "ex2", x);
      if (!r)
        r = math::Exp2Op::create(b, loc, x);
    } else {
      r = tanhFromExp(b, loc, x, target, /*cubic=*/true);
    }
    if (!bf16)
      return bitsOf(b, loc, narrowFloat(b, loc, r, b.getF16Type(), Rounding::RN));
    Value out = f32ToBf16Bits(b, loc, r);
    if (name != "ex2")
      return out;
    Value exponent = arith::AndIOp::create(b, loc, out, intConst(b, loc, i16, 0x7f80));
    Value isSubnormal = arith::CmpIOp::create(b, loc, IP::eq, exponent, intConst(b, loc, i16, 0));
    Value sign = arith::AndIOp::create(b, loc, out, intConst(b, loc, i16, -0x8000));
    return arith::SelectOp::create(b, loc, isSubnormal, sign, out);
  };
  Value bits = asInteger(b, loc, a);
  if (!packed)
    return adjustBits(b, loc, lane(bits), a.getType(), false);
  Value lo = lane(arith::TruncIOp::create(b, loc, i16, bits));
  Value hi = lane(arith::TruncIOp::create(
      b, loc, i16, arith::ShRUIOp::create(b, loc, bits, intConst(b, loc, i32, 16))));
  return arith::OrIOp::create(b, loc,
                              arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, hi),
                                                    intConst(b, loc, i32, 16)),
                              arith::ExtUIOp::create(b, loc, i32, lo));
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
  Value turns = arith::MulFOp::create(b, loc, x,
                                      floatConst(b, loc, t, 0.5 * llvm::numbers::inv_pi));
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
    if (Value native = this->state.target.nativeSqrt(b, loc, a))
      return native;
    return math::SqrtOp::create(b, loc, a);
  }

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
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
      return this->unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) + "' on '" + name +
                                       "'");
    if (isHalfType(op.getType()) && approx && (name == "ex2" || name == "tanh")) {
      rewriter.replaceOp(op, halfApprox(rewriter, loc, name, a, op.getType(), this->state.target));
      return success();
    }
    if (!t.isF32() && !t.isF64())
      return this->unsupported(op, Twine("type '.") + stringifyDataType(op.getType()) + "' on '" +
                                       name + "'");
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
    if (ftz && name == "rcp" && t.isF32())
      r = flushTinyNearest(
          rewriter, loc, r,
          arith::DivFOp::create(rewriter, loc, floatConst(rewriter, loc, t, 0x1p24), a));
    else if (ftz)
      r = flush(r);
    rewriter.replaceOp(op, r);
    return success();
  }

  /// A subnormal f64 as the zero of its sign, on the bit pattern.
  static Value flushSubnormalF64(OpBuilder &b, Location loc, Value value) {
    mlir::Type i64 = b.getI64Type();
    Value bits = arith::BitcastOp::create(b, loc, i64, value);
    Value exponent = arith::AndIOp::create(b, loc, bits,
                                           intConst(b, loc, i64, 0x7ff0000000000000LL));
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

  LogicalResult matchAndRewrite(TestpOp op, OpAdaptor adaptor,
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
    Value expZero = arith::CmpIOp::create(rewriter, loc, IP::eq, exp,
                                          intConst(rewriter, loc, it, 0));
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

  LogicalResult matchAndRewrite(DivOp op, OpAdaptor adaptor,
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
          arith::CmpIOp::create(rewriter, loc, IP::ult, mag,
                                intConst(rewriter, loc, i32, 0x00800000)),
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

void zmlir::populatePTXFloatFunctionPatterns(RewritePatternSet &patterns,
                                             const PTXLoweringState &state) {
  patterns.add<FloatUnaryLowering<RcpOp>, FloatUnaryLowering<SqrtOp>, FloatUnaryLowering<RsqrtOp>,
               FloatUnaryLowering<SinOp>, FloatUnaryLowering<CosOp>, FloatUnaryLowering<Lg2Op>,
               FloatUnaryLowering<Ex2Op>, FloatUnaryLowering<TanhOp>, TestpOpLowering,
               DivApproxLowering>(patterns.getContext(), state);
}
