//===- Arith.cpp - Integer and float arithmetic ---------------------------===//
//
// add, sub, mul, mad, fma, div, rem, min, max, neg, abs, and/or/xor/not and
// copysign on integers, predicates and floats, with PTX's semantics where
// LLVM's differ (division by zero, saturation, the high half of products, float
// min/max of -0 and NaN); comparison and selection: setp, set, selp, slct.
// Their f16/bf16 and directed-rounding forms are FloatArith.cpp's.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/FloatRounding.h"
#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

/// Float `.rn` (or no rounding modifier) is LLVM's default rounding; the
/// directed modes need constrained intrinsics we do not emit yet.
template <typename OpTy>
LogicalResult checkDefaultRounding(OpTy op, const PTXPattern<OpTy> &p) {
  Rounding rnd = op.getRnd();
  if (rnd != Rounding::None && rnd != Rounding::RN)
    return p.unsupported(op, Twine("rounding modifier '.") + stringifyRounding(rnd) + "' on '" +
                                 op->getName().stripDialect() + "'");
  return success();
}

/// The fast-math flags of an f32/f64 add, sub or mul computed as it is (no
/// software flush, no `.sat`): `contract` where it has no rounding modifier
/// and the target keeps PTX's freedom to fuse it
/// (TargetInfo::contractsUnroundedFloatArith).
template <typename OpTy>
arith::FastMathFlags unroundedFlags(OpTy op, const PTXPattern<OpTy> &p, bool flush) {
  bool contract = p.state.target.contractsUnroundedFloatArith() && op.getRnd() == Rounding::None &&
                  !flush && !op.getSat();
  return contract ? arith::FastMathFlags::contract : arith::FastMathFlags::none;
}

/// PTX float min/max: -0 orders below +0; without `.NaN` a NaN operand
/// yields the other operand, with `.NaN` the result is NaN.
///
/// arith.minimumf/maximumf have exactly the `.NaN` semantics, but LLVM's
/// SPIR-V backend lowers llvm.minimum/maximum to OpenCL fmin/fmax, which
/// ignore NaNs and may return either zero. With `explicitOrder` the order is
/// built from compares instead: the smaller (larger) operand, and for equal
/// operands (only +-0 differ) the OR (AND) of their bits, which prefers -0
/// (+0).
Value floatMinMax(OpBuilder &b, Location loc, Value x, Value y, bool isMin, bool nan,
                  bool explicitOrder) {
  using FP = arith::CmpFPredicate;
  Value xNaN = arith::CmpFOp::create(b, loc, FP::UNO, x, x);
  Value yNaN = arith::CmpFOp::create(b, loc, FP::UNO, y, y);
  Value r;
  if (explicitOrder) {
    Value first = arith::CmpFOp::create(b, loc, isMin ? FP::OLT : FP::OGT, x, y);
    r = arith::SelectOp::create(b, loc, first, x, y);
    Value bx = asInteger(b, loc, x), by = asInteger(b, loc, y);
    Value zeros = isMin ? arith::OrIOp::create(b, loc, bx, by).getResult()
                        : arith::AndIOp::create(b, loc, bx, by).getResult();
    Value equal = arith::CmpFOp::create(b, loc, FP::OEQ, x, y);
    r = arith::SelectOp::create(b, loc, equal, arith::BitcastOp::create(b, loc, x.getType(), zeros),
                                r);
    if (nan) {
      // NVIDIA's canonical NaN (all ones but the sign).
      unsigned width = widthOf(x.getType());
      Value canonical = arith::BitcastOp::create(
          b, loc, x.getType(),
          intConst(b, loc, b.getIntegerType(width), static_cast<int64_t>(~uint64_t(0) >> 1)));
      return arith::SelectOp::create(b, loc, arith::OrIOp::create(b, loc, xNaN, yNaN), canonical,
                                     r);
    }
  } else {
    r = isMin ? arith::MinimumFOp::create(b, loc, x, y).getResult()
              : arith::MaximumFOp::create(b, loc, x, y).getResult();
    if (nan)
      return r;
  }
  r = arith::SelectOp::create(b, loc, yNaN, x, r);
  return arith::SelectOp::create(b, loc, xNaN, y, r);
}

/// add.sat.s32 / sub.sat.s32: the exact result in 64 bits, clamped.
Value saturatingAddSub(OpBuilder &b, Location loc, Value x, Value y, bool subtract) {
  mlir::Type i64 = b.getI64Type();
  Value wx = arith::ExtSIOp::create(b, loc, i64, x);
  Value wy = arith::ExtSIOp::create(b, loc, i64, y);
  Value r = subtract ? arith::SubIOp::create(b, loc, wx, wy).getResult()
                     : arith::AddIOp::create(b, loc, wx, wy).getResult();
  r = arith::MaxSIOp::create(b, loc, r, intConst(b, loc, i64, INT32_MIN));
  r = arith::MinSIOp::create(b, loc, r, intConst(b, loc, i64, INT32_MAX));
  return arith::TruncIOp::create(b, loc, x.getType(), r);
}

/// add, sub, min, max, and, or, xor, copysign on integers, predicates and
/// floats.
template <typename OpTy>
struct BinaryOpLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DataType type = op.getType();
    Value a = adaptor.getA(), b = adaptor.getB();
    StringRef name = op->getName().stripDialect();
    bool bitwise = name == "and" || name == "or" || name == "xor";
    if (isFloatType(type) && !bitwise) {
      if (failed(checkDefaultRounding(op, *this)))
        return failure();
      if (type != DataType::F32 && type != DataType::F64)
        return this->unsupported(op, Twine("type '.") + stringifyDataType(type) + "' on '" + name +
                                         "'");
      if (name == "min" || name == "max") {
        if (Value native = this->state.target.nativeMinMax(rewriter, loc, name == "min", a, b,
                                                           op.getNan(), op.getFtz())) {
          rewriter.replaceOp(op, native);
          return success();
        }
      }
      // min/max select an operand's bits where one is NaN: flushed here
      // whatever the function's mode.
      bool flush = name == "min" || name == "max" ? op.getFtz() : this->softwareFtz(op);
      if (flush) {
        a = flushSubnormal(rewriter, loc, a);
        b = flushSubnormal(rewriter, loc, b);
      }
      Value r;
      if (name == "add")
        r = arith::AddFOp::create(rewriter, loc, a, b, unroundedFlags(op, *this, flush));
      else if (name == "sub")
        r = arith::SubFOp::create(rewriter, loc, a, b, unroundedFlags(op, *this, flush));
      else if (name == "min" || name == "max")
        r = floatMinMax(rewriter, loc, a, b, name == "min", op.getNan(),
                        !this->state.target.hasExactFloatMinMax());
      else if (name == "copysign")
        r = copySign(rewriter, loc, b, a);
      else
        return this->unsupported(op, Twine("float '") + name + "'");
      if (flush)
        r = flushSubnormal(rewriter, loc, r);
      if (op.getSat())
        r = saturateFloat(rewriter, loc, r);
      rewriter.replaceOp(op, r);
      return success();
    }
    if (op.getNan() || name == "copysign")
      return this->unsupported(op, Twine("integer '") + name + "'" +
                                       (op.getNan() ? " with '.NaN'" : ""));
    if (op.getSat()) {
      if (type != DataType::S32 || (name != "add" && name != "sub"))
        return this->unsupported(op, Twine("'.sat' on integer '") + name + "' other than .s32");
      rewriter.replaceOp(op, saturatingAddSub(rewriter, loc, a, b, name == "sub"));
      return success();
    }
    if (op.getRelu() && !((name == "min" || name == "max") && type == DataType::S32))
      return this->unsupported(op,
                               Twine("'.relu' on '") + name + "." + stringifyDataType(type) + "'");
    mlir::Type resultType = a.getType();
    Value ia = asInteger(rewriter, loc, a), ib = asInteger(rewriter, loc, b);
    bool isSigned = isSignedType(type);
    Value r;
    if (name == "add")
      r = arith::AddIOp::create(rewriter, loc, ia, ib);
    else if (name == "sub")
      r = arith::SubIOp::create(rewriter, loc, ia, ib);
    else if (name == "min")
      r = isSigned ? arith::MinSIOp::create(rewriter, loc, ia, ib).getResult()
                   : arith::MinUIOp::create(rewriter, loc, ia, ib).getResult();
    else if (name == "max")
      r = isSigned ? arith::MaxSIOp::create(rewriter, loc, ia, ib).getResult()
                   : arith::MaxUIOp::create(rewriter, loc, ia, ib).getResult();
    else if (name == "and")
      r = arith::AndIOp::create(rewriter, loc, ia, ib);
    else if (name == "or")
      r = arith::OrIOp::create(rewriter, loc, ia, ib);
    else if (name == "xor")
      r = arith::XOrIOp::create(rewriter, loc, ia, ib);
    if (op.getRelu())
      r = arith::MaxSIOp::create(rewriter, loc, r, intConst(rewriter, loc, r.getType(), 0));
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, resultType, false));
    return success();
  }
};

/// div and rem. LLVM makes integer division by zero (and INT_MIN / -1)
/// undefined behaviour; PTX only leaves the value unspecified. A target with
/// its own division (NVPTX) takes a variable divisor as it is; otherwise we
/// divide by 1 instead and return all ones for both `x / 0` and `x % 0`, as
/// the H200 does, so a kernel never traps.
template <typename OpTy>
struct DivRemLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DataType type = op.getType();
    Value a = adaptor.getA(), b = adaptor.getB();
    bool isDiv = std::is_same_v<OpTy, DivOp>;
    if (isFloatType(type)) {
      if (!isDiv || (type != DataType::F32 && type != DataType::F64))
        return this->unsupported(op, Twine("type '.") + stringifyDataType(type) + "' on '" +
                                         op->getName().stripDialect() + "'");
      if (failed(checkDefaultRounding(op, *this)))
        return failure();
      // .approx and .full are within 2 ulp of IEEE division; correctly
      // rounded division satisfies both.
      bool flush = this->softwareFtz(op);
      if (flush) {
        a = flushSubnormal(rewriter, loc, a);
        b = flushSubnormal(rewriter, loc, b);
      }
      Value r = arith::DivFOp::create(rewriter, loc, a, b);
      if (flush && type == DataType::F32)
        r = flushTinyNearest(
            rewriter, loc, r,
            arith::DivFOp::create(rewriter, loc, timesTwoTo24(rewriter, loc, a), b));
      rewriter.replaceOp(op, r);
      return success();
    }
    bool isSigned = isSignedType(type);
    // A constant divisor folds the guards below away (and LLVM turns the
    // division into multiplications); any other goes to the target's own
    // division where it has one.
    if (!matchPattern(b, m_Constant()))
      if (Value r = this->state.target.nativeIntegerDivRem(rewriter, loc, isDiv, isSigned, a, b)) {
        rewriter.replaceOp(op, r);
        return success();
      }
    mlir::Type t = a.getType();
    Value zero = intConst(rewriter, loc, t, 0);
    Value one = intConst(rewriter, loc, t, 1);
    Value isZero = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, b, zero);
    Value divisor = arith::SelectOp::create(rewriter, loc, isZero, one, b);
    if (isSigned) {
      // INT_MIN / -1 overflows: divide by 1 and negate (wraps to INT_MIN).
      Value minusOne = intConst(rewriter, loc, t, -1);
      Value isMinusOne = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, divisor,
                                               minusOne);
      divisor = arith::SelectOp::create(rewriter, loc, isMinusOne, one, divisor);
      Value q = arith::DivSIOp::create(rewriter, loc, a, divisor);
      Value negQ = arith::SubIOp::create(rewriter, loc, zero, q);
      Value quotient = arith::SelectOp::create(rewriter, loc, isMinusOne, negQ, q);
      Value result;
      if (isDiv) {
        result = arith::SelectOp::create(rewriter, loc, isZero, minusOne, quotient);
      } else {
        Value rem = arith::RemSIOp::create(rewriter, loc, a, divisor);
        Value remOrZero = arith::SelectOp::create(rewriter, loc, isMinusOne, zero, rem);
        result = arith::SelectOp::create(rewriter, loc, isZero, minusOne, remOrZero);
      }
      rewriter.replaceOp(op, result);
      return success();
    }
    Value result;
    if (isDiv) {
      Value q = arith::DivUIOp::create(rewriter, loc, a, divisor);
      result = arith::SelectOp::create(rewriter, loc, isZero, intConst(rewriter, loc, t, -1), q);
    } else {
      Value r = arith::RemUIOp::create(rewriter, loc, a, divisor);
      result = arith::SelectOp::create(rewriter, loc, isZero, intConst(rewriter, loc, t, -1), r);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The high half of the 128-bit product of two i64, from 32-bit halves (no
/// i128, which LLVM's SPIR-V backend rejects without
/// SPV_ALTERA_arbitrary_precision_integers):
///  1. x = x1 * 2^32 + x0, y = y1 * 2^32 + y0 (unsigned halves);
///  2. the four 32x32->64 partial products p00, p01 = x0 * y1, p10 = x1 * y0,
///     p11;
///  3. mid = hi32(p00) + lo32(p01) + lo32(p10) (at most 3 * (2^32 - 1));
///  4. high = p11 + hi32(p01) + hi32(p10) + hi32(mid), mod 2^64;
///  5. signed: the product of the two's-complement values is the unsigned
///     one less 2^64 * y if x < 0 and less 2^64 * x if y < 0, so the high
///     half loses y and x respectively.
Value mulHigh64By32BitHalves(OpBuilder &b, Location loc, Value x, Value y, bool isSigned) {
  mlir::Type i64 = b.getI64Type();
  Value low32 = intConst(b, loc, i64, 0xffffffff);
  Value c32 = intConst(b, loc, i64, 32);
  auto lo = [&](Value v) { return arith::AndIOp::create(b, loc, v, low32).getResult(); };
  auto hi = [&](Value v) { return arith::ShRUIOp::create(b, loc, v, c32).getResult(); };
  auto mul = [&](Value u, Value v) { return arith::MulIOp::create(b, loc, u, v).getResult(); };
  auto add = [&](Value u, Value v) { return arith::AddIOp::create(b, loc, u, v).getResult(); };
  Value x0 = lo(x), x1 = hi(x), y0 = lo(y), y1 = hi(y);
  Value p00 = mul(x0, y0), p01 = mul(x0, y1), p10 = mul(x1, y0), p11 = mul(x1, y1);
  Value mid = add(add(hi(p00), lo(p01)), lo(p10));
  Value high = add(add(add(p11, hi(p01)), hi(p10)), hi(mid));
  if (!isSigned)
    return high;
  Value zero = intConst(b, loc, i64, 0);
  auto negative = [&](Value v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero).getResult();
  };
  high = arith::SubIOp::create(b, loc, high, arith::SelectOp::create(b, loc, negative(x), y, zero));
  return arith::SubIOp::create(b, loc, high, arith::SelectOp::create(b, loc, negative(y), x, zero));
}

/// The high half (or full double-width product) of an integer multiply.
/// `noI128`: the 64-bit high half without an i128 product (SPIR-V).
Value integerProduct(OpBuilder &b, Location loc, Value x, Value y, MulMode mode, bool isSigned,
                     bool noI128) {
  switch (mode) {
  case MulMode::Hi:
    if (noI128 && widthOf(x.getType()) == 64)
      return mulHigh64By32BitHalves(b, loc, x, y, isSigned);
    if (isSigned)
      return arith::MulSIExtendedOp::create(b, loc, x, y).getHigh();
    return arith::MulUIExtendedOp::create(b, loc, x, y).getHigh();
  case MulMode::Wide: {
    mlir::Type wide = b.getIntegerType(2 * widthOf(x.getType()));
    Value wx = isSigned ? arith::ExtSIOp::create(b, loc, wide, x).getResult()
                        : arith::ExtUIOp::create(b, loc, wide, x).getResult();
    Value wy = isSigned ? arith::ExtSIOp::create(b, loc, wide, y).getResult()
                        : arith::ExtUIOp::create(b, loc, wide, y).getResult();
    return arith::MulIOp::create(b, loc, wx, wy);
  }
  default:
    return arith::MulIOp::create(b, loc, x, y);
  }
}

struct MulOpLowering : PTXPattern<MulOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(MulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    if (isFloatType(op.getType())) {
      if (failed(checkDefaultRounding(op, *this)))
        return failure();
      bool flush = softwareFtz(op);
      if (flush) {
        a = flushSubnormal(rewriter, loc, a);
        b = flushSubnormal(rewriter, loc, b);
      }
      Value r = arith::MulFOp::create(rewriter, loc, a, b, unroundedFlags(op, *this, flush));
      if (flush && r.getType().isF32())
        r = flushTinyNearest(rewriter, loc, r,
                             arith::MulFOp::create(rewriter, loc, timesTwoTo24(rewriter, loc, a), b,
                                                   unroundedFlags(op, *this, flush)));
      if (op.getSat())
        r = saturateFloat(rewriter, loc, r);
      rewriter.replaceOp(op, r);
      return success();
    }
    if (op.getSat())
      return unsupported(op, "'.sat' on integer 'mul'");
    rewriter.replaceOp(op,
                       integerProduct(rewriter, loc, a, b, op.getMode(), isSignedType(op.getType()),
                                      !state.target.hasI128Multiply()));
    return success();
  }
};

/// Float mad with a rounding modifier and fma are both fused (PTX ISA:
/// `mad.rn.f32` is `fma.rn.f32`).
template <typename OpTy>
LogicalResult lowerFusedMultiplyAdd(OpTy op, Value a, Value b, Value c,
                                    ConversionPatternRewriter &rewriter,
                                    const PTXPattern<OpTy> &p) {
  Location loc = op.getLoc();
  DataType type = op.getType();
  if (type != DataType::F32 && type != DataType::F64)
    return p.unsupported(op, Twine("type '.") + stringifyDataType(type) + "' on '" +
                                 op->getName().stripDialect() + "'");
  if (failed(checkDefaultRounding(op, p)))
    return failure();
  bool flush = p.softwareFtz(op);
  if (flush) {
    a = flushSubnormal(rewriter, loc, a);
    b = flushSubnormal(rewriter, loc, b);
    c = flushSubnormal(rewriter, loc, c);
  }
  Value r = math::FmaOp::create(rewriter, loc, a, b, c);
  if (flush && type == DataType::F32)
    r = flushTinyNearest(rewriter, loc, r,
                         math::FmaOp::create(rewriter, loc, timesTwoTo24(rewriter, loc, a), b,
                                             timesTwoTo24(rewriter, loc, c)));
  if (op.getSat())
    r = saturateFloat(rewriter, loc, r);
  rewriter.replaceOp(op, r);
  return success();
}

struct MadOpLowering : PTXPattern<MadOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(MadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (isFloatType(op.getType()))
      return lowerFusedMultiplyAdd(op, adaptor.getA(), adaptor.getB(), adaptor.getC(), rewriter,
                                   *this);
    bool sat = op.getSat();
    if (sat && (op.getType() != DataType::S32 || op.getMode() != MulMode::Hi))
      return unsupported(op, "'.sat' on integer 'mad' other than 'mad.hi.sat.s32'");
    Location loc = op.getLoc();
    Value product = integerProduct(rewriter, loc, adaptor.getA(), adaptor.getB(), op.getMode(),
                                   isSignedType(op.getType()), !state.target.hasI128Multiply());
    if (sat) {
      // mad.hi.sat.s32: the high half plus c, clamped to the s32 range (the
      // H200's golden data agrees on every case), summed in 64 bits.
      mlir::Type i64 = rewriter.getI64Type();
      Value sum = arith::AddIOp::create(rewriter, loc,
                                        arith::ExtSIOp::create(rewriter, loc, i64, product),
                                        arith::ExtSIOp::create(rewriter, loc, i64, adaptor.getC()));
      sum = arith::MaxSIOp::create(rewriter, loc, sum, intConst(rewriter, loc, i64, INT32_MIN));
      sum = arith::MinSIOp::create(rewriter, loc, sum, intConst(rewriter, loc, i64, INT32_MAX));
      rewriter.replaceOp(op, arith::TruncIOp::create(rewriter, loc, product.getType(), sum));
      return success();
    }
    rewriter.replaceOp(op, arith::AddIOp::create(rewriter, loc, product, adaptor.getC()));
    return success();
  }
};

struct FmaOpLowering : PTXPattern<FmaOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(FmaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    return lowerFusedMultiplyAdd(op, adaptor.getA(), adaptor.getB(), adaptor.getC(), rewriter,
                                 *this);
  }
};

/// neg, abs, not.
template <typename OpTy>
struct UnaryOpLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA();
    StringRef name = op->getName().stripDialect();
    mlir::Type type = a.getType();
    Value r;
    if (name == "not") {
      Value bits = asInteger(rewriter, loc, a);
      r = arith::XOrIOp::create(rewriter, loc, bits, intConst(rewriter, loc, bits.getType(), -1));
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, type, false));
      return success();
    }
    if (isFloatType(op.getType())) {
      bool flush = this->softwareFtz(op);
      if (flush)
        a = flushSubnormal(rewriter, loc, a);
      r = name == "neg" ? arith::NegFOp::create(rewriter, loc, a).getResult()
                        : math::AbsFOp::create(rewriter, loc, a).getResult();
      if (flush)
        r = flushSubnormal(rewriter, loc, r);
    } else {
      r = name == "neg" ? arith::SubIOp::create(rewriter, loc, intConst(rewriter, loc, type, 0), a)
                              .getResult()
                        : math::AbsIOp::create(rewriter, loc, a).getResult();
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Comparison and selection
//===----------------------------------------------------------------------===//

std::optional<arith::CmpIPredicate> integerPredicate(Cmp cmp, bool isSigned) {
  using P = arith::CmpIPredicate;
  switch (cmp) {
  case Cmp::EQ:
    return P::eq;
  case Cmp::NE:
    return P::ne;
  case Cmp::LT:
    return isSigned ? P::slt : P::ult;
  case Cmp::LE:
    return isSigned ? P::sle : P::ule;
  case Cmp::GT:
    return isSigned ? P::sgt : P::ugt;
  case Cmp::GE:
    return isSigned ? P::sge : P::uge;
  case Cmp::LO:
    return P::ult;
  case Cmp::LS:
    return P::ule;
  case Cmp::HI:
    return P::ugt;
  case Cmp::HS:
    return P::uge;
  default:
    return std::nullopt;
  }
}

std::optional<arith::CmpFPredicate> floatPredicate(Cmp cmp) {
  using P = arith::CmpFPredicate;
  switch (cmp) {
  case Cmp::EQ:
    return P::OEQ;
  case Cmp::NE:
    return P::ONE;
  case Cmp::LT:
    return P::OLT;
  case Cmp::LE:
    return P::OLE;
  case Cmp::GT:
    return P::OGT;
  case Cmp::GE:
    return P::OGE;
  case Cmp::EQU:
    return P::UEQ;
  case Cmp::NEU:
    return P::UNE;
  case Cmp::LTU:
    return P::ULT;
  case Cmp::LEU:
    return P::ULE;
  case Cmp::GTU:
    return P::UGT;
  case Cmp::GEU:
    return P::UGE;
  case Cmp::Num:
    return P::ORD;
  case Cmp::IsNaN:
    return P::UNO;
  default:
    return std::nullopt;
  }
}

/// Whether setp/set compare `type` (with `.ftz`): f32 and f64; f16 and bf16
/// through f32, which holds each exactly, so every comparison and NaN test
/// is unchanged. `.ftz.bf16` is not PTX (NVIDIA's JIT rejects it as invalid
/// PTX); setp's `.ftz.f16` and packed pairs are SetpOpLowering's own.
bool comparableFloat(DataType type, bool ftz) {
  return type == DataType::F32 || type == DataType::F64 ||
         ((type == DataType::BF16 || type == DataType::F16) && !ftz);
}

/// The bits of an f16 with a subnormal flushed to the zero of its sign.
Value flushHalfBits(OpBuilder &b, Location loc, Value bits) {
  mlir::Type i16 = b.getI16Type();
  Value exponent = arith::AndIOp::create(b, loc, bits, intConst(b, loc, i16, 0x7c00));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exponent,
                                            intConst(b, loc, i16, 0));
  Value sign = arith::AndIOp::create(b, loc, bits, intConst(b, loc, i16, -0x8000));
  return arith::SelectOp::create(b, loc, isSubnormal, sign, bits);
}

/// An f16/bf16 operand (in a .b16 or a float register) as the exact f32;
/// other operands unchanged.
Value widenHalf(OpBuilder &b, Location loc, Value x, DataType type) {
  if (type != DataType::F16 && type != DataType::BF16)
    return x;
  if (type == DataType::BF16) {
    // The bits as the top half of an f32 (an extf from bf16 needs
    // SPV_KHR_bfloat16 on SPIR-V).
    mlir::Type i32 = b.getI32Type();
    Value bits = arith::ExtUIOp::create(b, loc, i32, adjustBits(b, loc, x, b.getI16Type(), false));
    bits = arith::ShLIOp::create(b, loc, bits, intConst(b, loc, i32, 16));
    return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
  }
  mlir::Type half = memoryType(b.getContext(), type);
  if (x.getType() != half)
    x = adjustBits(b, loc, x, half, false);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
}

struct SetpOpLowering : PTXPattern<SetpOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(SetpOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    DataType type = op.getType();
    bool ftz = op.getFtz();
    Value p, q;
    Value trueValue = intConst(rewriter, loc, rewriter.getI1Type(), 1);
    if (isFloatType(type)) {
      auto pred = floatPredicate(op.getCmp());
      bool half = type == DataType::F16 || type == DataType::F16x2;
      bool packed = type == DataType::F16x2 || type == DataType::BF16x2;
      if (!pred || !(comparableFloat(type, ftz) || half || (packed && !ftz)))
        return unsupported(op, Twine("comparison '.") + stringifyCmp(op.getCmp()) +
                                   (ftz ? ".ftz." : ".") + stringifyDataType(type) + "'");
      if (half || packed) {
        // f16/bf16 lanes (.ftz: f16 subnormals flushed on their bits) compared
        // exactly in f32. A packed pair compares its halves: p the low
        // ones, q the high ones (PTX ISA 9.7.4.1), not p's complement.
        DataType lane = type == DataType::BF16x2 ? DataType::BF16 : packed ? DataType::F16 : type;
        auto compareLanes = [&](Value x, Value y) -> Value {
          if (ftz) {
            x = flushHalfBits(rewriter, loc, x);
            y = flushHalfBits(rewriter, loc, y);
          }
          Value wx = widenHalf(rewriter, loc, x, lane);
          Value wy = widenHalf(rewriter, loc, y, lane);
          return arith::CmpFOp::create(rewriter, loc, *pred, wx, wy);
        };
        mlir::Type i16 = rewriter.getI16Type(), i32 = rewriter.getI32Type();
        if (!packed) {
          Value xa = adjustBits(rewriter, loc, a, i16, false);
          Value xb = adjustBits(rewriter, loc, b, i16, false);
          p = compareLanes(xa, xb);
        } else {
          Value wa = asInteger(rewriter, loc, a), wb = asInteger(rewriter, loc, b);
          auto high = [&](Value w) -> Value {
            return arith::TruncIOp::create(
                rewriter, loc, i16,
                arith::ShRUIOp::create(rewriter, loc, w, intConst(rewriter, loc, i32, 16)));
          };
          Value la = arith::TruncIOp::create(rewriter, loc, i16, wa);
          Value lb = arith::TruncIOp::create(rewriter, loc, i16, wb);
          p = compareLanes(la, lb);
          Value ha = high(wa);
          Value hb = high(wb);
          q = compareLanes(ha, hb);
        }
      } else {
        a = widenHalf(rewriter, loc, a, type);
        b = widenHalf(rewriter, loc, b, type);
        if (softwareFtz(op)) {
          a = flushSubnormal(rewriter, loc, a);
          b = flushSubnormal(rewriter, loc, b);
        }
        p = arith::CmpFOp::create(rewriter, loc, *pred, a, b);
      }
    } else {
      auto pred = integerPredicate(op.getCmp(), isSignedType(op.getType()));
      if (!pred)
        return unsupported(op,
                           Twine("comparison '.") + stringifyCmp(op.getCmp()) + "' on integers");
      p = arith::CmpIOp::create(rewriter, loc, *pred, asInteger(rewriter, loc, a),
                                asInteger(rewriter, loc, b));
    }
    if (!q)
      q = arith::XOrIOp::create(rewriter, loc, p, trueValue);
    if (Value c = adaptor.getC()) {
      if (op.getNegateC())
        c = arith::XOrIOp::create(rewriter, loc, c, trueValue);
      auto combine = [&](Value x) -> Value {
        switch (op.getBoolop()) {
        case BoolOp::And:
          return arith::AndIOp::create(rewriter, loc, x, c);
        case BoolOp::Or:
          return arith::OrIOp::create(rewriter, loc, x, c);
        default:
          return arith::XOrIOp::create(rewriter, loc, x, c);
        }
      };
      p = combine(p);
      q = combine(q);
    }
    rewriter.replaceOp(op, {p, q});
    return success();
  }
};

/// The predicate of a comparison (with .ftz flushing float operands).
FailureOr<Value> comparePredicate(Operation *op, OpBuilder &b, Value a, Value x, Cmp cmp,
                                  DataType type, bool ftz, const TargetInfo &target) {
  Location loc = op->getLoc();
  if (isFloatType(type)) {
    auto pred = floatPredicate(cmp);
    if (!pred || !comparableFloat(type, ftz)) {
      op->emitError("unsupported comparison '.")
          << stringifyCmp(cmp) << (ftz ? ".ftz." : ".") << stringifyDataType(type) << "'";
      return failure();
    }
    a = widenHalf(b, loc, a, type);
    x = widenHalf(b, loc, x, type);
    if (ftz && !flushedByTarget(op, target)) {
      a = flushSubnormal(b, loc, a);
      x = flushSubnormal(b, loc, x);
    }
    return arith::CmpFOp::create(b, loc, *pred, a, x).getResult();
  }
  auto pred = integerPredicate(cmp, isSignedType(type));
  if (!pred) {
    op->emitError("unsupported comparison '.") << stringifyCmp(cmp) << "' on integers";
    return failure();
  }
  return arith::CmpIOp::create(b, loc, *pred, asInteger(b, loc, a), asInteger(b, loc, x))
      .getResult();
}

/// set: the predicate (combined like setp's) as all ones / 1.0 or zero.
struct SetOpLowering : PTXPattern<SetOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(SetOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<Value> p = comparePredicate(op, rewriter, adaptor.getA(), adaptor.getB(), op.getCmp(),
                                          op.getSrcType(), op.getFtz(), state.target);
    if (failed(p))
      return failure();
    Value r = *p;
    if (Value c = adaptor.getC()) {
      Value t = intConst(rewriter, loc, rewriter.getI1Type(), 1);
      if (op.getNegateC())
        c = arith::XOrIOp::create(rewriter, loc, c, t);
      switch (op.getBoolop()) {
      case BoolOp::And:
        r = arith::AndIOp::create(rewriter, loc, r, c);
        break;
      case BoolOp::Or:
        r = arith::OrIOp::create(rewriter, loc, r, c);
        break;
      default:
        r = arith::XOrIOp::create(rewriter, loc, r, c);
        break;
      }
    }
    mlir::Type t = op.getRes().getType();
    Value yes = t.isF32() ? floatConst(rewriter, loc, t, 1.0) : intConst(rewriter, loc, t, -1);
    Value no = t.isF32() ? floatConst(rewriter, loc, t, 0.0) : intConst(rewriter, loc, t, 0);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, r, yes, no);
    return success();
  }
};

/// slct: c >= 0 picks a; a float -0.0 counts as >= 0, NaN picks b.
struct SlctOpLowering : PTXPattern<SlctOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(SlctOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value c = adaptor.getC();
    Value p;
    if (c.getType().isF32()) {
      if (softwareFtz(op))
        c = flushSubnormal(rewriter, loc, c);
      p = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGE, c,
                                floatConst(rewriter, loc, c.getType(), 0.0));
    } else {
      p = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, c,
                                intConst(rewriter, loc, c.getType(), 0));
    }
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, p, adaptor.getA(), adaptor.getB());
    return success();
  }
};

struct SelpOpLowering : PTXPattern<SelpOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(SelpOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, adaptor.getP(), adaptor.getA(),
                                                 adaptor.getB());
    return success();
  }
};

} // namespace

void zmlir::populatePTXArithPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<BinaryOpLowering<AddOp>, BinaryOpLowering<CopysignOp>, SetOpLowering, SlctOpLowering,
               BinaryOpLowering<SubOp>, BinaryOpLowering<MinOp>, BinaryOpLowering<MaxOp>,
               BinaryOpLowering<AndOp>, BinaryOpLowering<OrOp>, BinaryOpLowering<XorOp>,
               DivRemLowering<DivOp>, DivRemLowering<RemOp>, MulOpLowering, MadOpLowering,
               FmaOpLowering, UnaryOpLowering<NegOp>, UnaryOpLowering<AbsOp>,
               UnaryOpLowering<NotOp>, SetpOpLowering, SelpOpLowering>(patterns.getContext(),
                                                                       state);
}
