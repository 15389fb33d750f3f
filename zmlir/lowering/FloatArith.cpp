//===- FloatArith.cpp - f16/bf16 and directed-rounding arith --------------===//
//
// The float arithmetic LLVM's ops do not give directly: f16/f16x2/bf16/bf16x2
// add, sub, mul, fma, neg, abs, min and max; f32 min/max .xorsign.abs; and the
// directed roundings (.rz/.rm/.rp) of f32/f64 add, sub, mul, fma, mad and div,
// bit-exact on every target. These patterns have benefit 2: they are tried
// before Arith.cpp's.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/FloatRounding.h"
#include "zmlir/lowering/PTXLowering.h"

#include <cmath>

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;
using FP = arith::CmpFPredicate;

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

Value c16(OpBuilder &b, Location loc, int64_t v) {
  return intConst(b, loc, b.getI16Type(), v);
}

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
    return arith::CmpIOp::create(b, loc, IP::ugt,
                                 arith::AndIOp::create(b, loc, bits, intConst(b, loc, it, magMask)),
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
    r = minMaxBits(b, loc, x[0], x[1], name == "min", bf16 ? BitsFormat::BF16 : BitsFormat::F16, f);
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

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
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
    SmallVector<Value> nativeOperands;
    for (Value v : adaptor.getOperands())
      nativeOperands.push_back(
          adjustBits(rewriter, loc, asInteger(rewriter, loc, v), packed ? i32 : i16, false));
    if (Value r = this->state.target.nativeHalfArith(rewriter, op, nativeOperands)) {
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, op.getRes().getType(), false));
      return success();
    }
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
      Value h = arith::ExtUIOp::create(rewriter, loc, i32,
                                       halfLane(rewriter, loc, name, hi, bf16, f));
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

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
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

/// The range the PTX fixes for a float operand: a finite constant, or the
/// [0, 1] of a float-to-f32 cvt.sat (NaN gives 0).
FloatRange knownRange(Value v) {
  if (auto constant = v.getDefiningOp<arith::ConstantOp>())
    if (auto value = dyn_cast<FloatAttr>(constant.getValue()))
      if (std::isfinite(value.getValueAsDouble()))
        return std::pair{value.getValueAsDouble(), value.getValueAsDouble()};
  if (auto cvt = v.getDefiningOp<CvtOp>()) {
    DataType from = cvt.getSrcType();
    if (cvt.getSat() && cvt.getType() == DataType::F32 &&
        (from == DataType::F16 || from == DataType::BF16 || from == DataType::F32 ||
         from == DataType::F64))
      return std::pair{0.0, 1.0};
  }
  return std::nullopt;
}

/// add, sub, mul, fma, mad and div of f32/f64 with .rz, .rm or .rp
/// (directedRounding). Registered ahead of the generic arithmetic patterns,
/// which reject directed rounding.
template <typename OpTy>
struct DirectedRoundingLowering : PTXPattern<OpTy> {
  DirectedRoundingLowering(MLIRContext *ctx, const PTXLoweringState &state)
      : PTXPattern<OpTy>(ctx, state, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
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
    SmallVector<FloatRange> ranges;
    for (Value operand : op->getOperands())
      ranges.push_back(knownRange(operand));
    Value r = directedRounding(rewriter, loc, this->state, name,
                               SmallVector<Value>(adaptor.getOperands()), rnd, op.getFtz(), ranges);
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
      r = arith::SelectOp::create(rewriter, loc,
                                  arith::CmpFOp::create(rewriter, loc, FP::OGT, r, one), one, r);
      r = arith::SelectOp::create(rewriter, loc, low, floatConst(rewriter, loc, t, 0.0), r);
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void zmlir::populatePTXFloatArithPatterns(RewritePatternSet &patterns,
                                          const PTXLoweringState &state) {
  patterns.add<HalfArithLowering<AddOp>, HalfArithLowering<SubOp>, HalfArithLowering<MulOp>,
               HalfArithLowering<FmaOp>, HalfArithLowering<NegOp>, HalfArithLowering<AbsOp>,
               HalfArithLowering<MinOp>, HalfArithLowering<MaxOp>, XorsignMinMaxLowering<MinOp>,
               XorsignMinMaxLowering<MaxOp>, DirectedRoundingLowering<AddOp>,
               DirectedRoundingLowering<SubOp>, DirectedRoundingLowering<MulOp>,
               DirectedRoundingLowering<FmaOp>, DirectedRoundingLowering<MadOp>,
               DirectedRoundingLowering<DivOp>>(patterns.getContext(), state);
}
