//===- PTXToStd.cpp - Lower the ptx dialect to upstream dialects ----------===//
//
// PTX kernels become `gpu.func` kernels in one `gpu.module`; each ptx op is
// rewritten to arith/math/cf/gpu/llvm ops with PTX's exact semantics where
// LLVM's differ (shift amounts past the width, division by zero, float to
// integer saturation). Anything not handled yet is a
// `unsupported ...` error at the op's PTX source location.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

namespace zmlir {
#define GEN_PASS_DEF_CONVERTPTXTOSTD
#include "zmlir/lowering/Passes.h.inc"
} // namespace zmlir

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
    return p.unsupported(op, Twine("rounding modifier '.") +
                                 stringifyRounding(rnd) + "' on '" +
                                 op->getName().stripDialect() + "'");
  return success();
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
    r = arith::SelectOp::create(b, loc, equal,
                                arith::BitcastOp::create(b, loc, x.getType(), zeros), r);
    if (nan) {
      // NVIDIA's canonical NaN (all ones but the sign).
      unsigned width = widthOf(x.getType());
      Value canonical = arith::BitcastOp::create(
          b, loc, x.getType(),
          intConst(b, loc, b.getIntegerType(width),
                   static_cast<int64_t>(~uint64_t(0) >> 1)));
      return arith::SelectOp::create(b, loc, arith::OrIOp::create(b, loc, xNaN, yNaN),
                                     canonical, r);
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

/// |magnitude| with the sign bit of `sign`, in integer arithmetic (exact for
/// NaNs, and llvm.copysign is not legal for every GPU lowering).
Value copySign(OpBuilder &b, Location loc, Value magnitude, Value sign) {
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
/// lowering): below 2^(p-1) adding and subtracting 2^(p-1) rounds exactly
/// that way; larger magnitudes, infinities and NaN are already integral.
Value roundEven(OpBuilder &b, Location loc, Value x) {
  mlir::Type t = x.getType();
  double big = t.isF64() ? 4503599627370496.0 : 8388608.0;
  Value zero = floatConst(b, loc, t, 0.0);
  Value ax = copySign(b, loc, x, zero);
  Value c = floatConst(b, loc, t, big);
  Value r = arith::SubFOp::create(b, loc, arith::AddFOp::create(b, loc, ax, c), c);
  Value small = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, ax, c);
  return arith::SelectOp::create(b, loc, small, copySign(b, loc, r, x), x);
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

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
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
        return this->unsupported(op, Twine("type '.") + stringifyDataType(type) +
                                         "' on '" + name + "'");
      if (op.getFtz()) {
        a = flushSubnormal(rewriter, loc, a);
        b = flushSubnormal(rewriter, loc, b);
      }
      Value r;
      if (name == "add")
        r = arith::AddFOp::create(rewriter, loc, a, b);
      else if (name == "sub")
        r = arith::SubFOp::create(rewriter, loc, a, b);
      else if (name == "min" || name == "max")
        r = floatMinMax(rewriter, loc, a, b, name == "min", op.getNan(),
                        !this->state.target.hasExactFloatMinMax());
      else if (name == "copysign")
        r = copySign(rewriter, loc, b, a);
      else
        return this->unsupported(op, Twine("float '") + name + "'");
      if (op.getFtz())
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
      return this->unsupported(op, Twine("'.relu' on '") + name + "." +
                                       stringifyDataType(type) + "'");
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
/// undefined behaviour; PTX only leaves the value unspecified. We divide by
/// 1 instead and return all ones for both `x / 0` and `x % 0`, as the H200
/// does, so a kernel never traps.
template <typename OpTy>
struct DivRemLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DataType type = op.getType();
    Value a = adaptor.getA(), b = adaptor.getB();
    bool isDiv = std::is_same_v<OpTy, DivOp>;
    if (isFloatType(type)) {
      if (!isDiv || (type != DataType::F32 && type != DataType::F64))
        return this->unsupported(op, Twine("type '.") + stringifyDataType(type) +
                                         "' on '" + op->getName().stripDialect() + "'");
      if (failed(checkDefaultRounding(op, *this)))
        return failure();
      // .approx and .full are within 2 ulp of IEEE division; correctly
      // rounded division satisfies both.
      if (op.getFtz()) {
        a = flushSubnormal(rewriter, loc, a);
        b = flushSubnormal(rewriter, loc, b);
      }
      Value r = arith::DivFOp::create(rewriter, loc, a, b);
      if (op.getFtz())
        r = flushSubnormal(rewriter, loc, r);
      rewriter.replaceOp(op, r);
      return success();
    }
    mlir::Type t = a.getType();
    Value zero = intConst(rewriter, loc, t, 0);
    Value one = intConst(rewriter, loc, t, 1);
    Value isZero = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, b, zero);
    Value divisor = arith::SelectOp::create(rewriter, loc, isZero, one, b);
    bool isSigned = isSignedType(type);
    if (isSigned) {
      // INT_MIN / -1 overflows: divide by 1 and negate (wraps to INT_MIN).
      Value minusOne = intConst(rewriter, loc, t, -1);
      Value isMinusOne = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, divisor, minusOne);
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
  high = arith::SubIOp::create(b, loc, high,
                               arith::SelectOp::create(b, loc, negative(x), y, zero));
  return arith::SubIOp::create(b, loc, high,
                               arith::SelectOp::create(b, loc, negative(y), x, zero));
}

/// The high half (or full double-width product) of an integer multiply.
/// `noI128`: the 64-bit high half without an i128 product (SPIR-V).
Value integerProduct(OpBuilder &b, Location loc, Value x, Value y, MulMode mode,
                     bool isSigned, bool noI128) {
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

  LogicalResult
  matchAndRewrite(MulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    if (isFloatType(op.getType())) {
      if (failed(checkDefaultRounding(op, *this)))
        return failure();
      if (op.getFtz()) {
        a = flushSubnormal(rewriter, loc, a);
        b = flushSubnormal(rewriter, loc, b);
      }
      Value r = arith::MulFOp::create(rewriter, loc, a, b);
      if (op.getFtz())
        r = flushSubnormal(rewriter, loc, r);
      if (op.getSat())
        r = saturateFloat(rewriter, loc, r);
      rewriter.replaceOp(op, r);
      return success();
    }
    if (op.getSat())
      return unsupported(op, "'.sat' on integer 'mul'");
    rewriter.replaceOp(op, integerProduct(rewriter, loc, a, b, op.getMode(),
                                          isSignedType(op.getType()),
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
  if (op.getFtz()) {
    a = flushSubnormal(rewriter, loc, a);
    b = flushSubnormal(rewriter, loc, b);
    c = flushSubnormal(rewriter, loc, c);
  }
  Value r = math::FmaOp::create(rewriter, loc, a, b, c);
  if (op.getFtz())
    r = flushSubnormal(rewriter, loc, r);
  if (op.getSat())
    r = saturateFloat(rewriter, loc, r);
  rewriter.replaceOp(op, r);
  return success();
}

struct MadOpLowering : PTXPattern<MadOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(MadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (isFloatType(op.getType()))
      return lowerFusedMultiplyAdd(op, adaptor.getA(), adaptor.getB(),
                                   adaptor.getC(), rewriter, *this);
    bool sat = op.getSat();
    if (sat && (op.getType() != DataType::S32 || op.getMode() != MulMode::Hi))
      return unsupported(op, "'.sat' on integer 'mad' other than 'mad.hi.sat.s32'");
    Location loc = op.getLoc();
    Value product = integerProduct(rewriter, loc, adaptor.getA(), adaptor.getB(),
                                   op.getMode(), isSignedType(op.getType()),
                                   !state.target.hasI128Multiply());
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

  LogicalResult
  matchAndRewrite(FmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return lowerFusedMultiplyAdd(op, adaptor.getA(), adaptor.getB(),
                                 adaptor.getC(), rewriter, *this);
  }
};

/// neg, abs, not.
template <typename OpTy>
struct UnaryOpLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA();
    StringRef name = op->getName().stripDialect();
    mlir::Type type = a.getType();
    Value r;
    if (name == "not") {
      Value bits = asInteger(rewriter, loc, a);
      r = arith::XOrIOp::create(rewriter, loc, bits,
                                intConst(rewriter, loc, bits.getType(), -1));
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, type, false));
      return success();
    }
    if (isFloatType(op.getType())) {
      if (op.getFtz())
        a = flushSubnormal(rewriter, loc, a);
      r = name == "neg" ? arith::NegFOp::create(rewriter, loc, a).getResult()
                        : math::AbsFOp::create(rewriter, loc, a).getResult();
      if (op.getFtz())
        r = flushSubnormal(rewriter, loc, r);
    } else {
      r = name == "neg"
              ? arith::SubIOp::create(rewriter, loc, intConst(rewriter, loc, type, 0), a)
                    .getResult()
              : math::AbsIOp::create(rewriter, loc, a).getResult();
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// shl and shr. PTX clamps shift amounts above the width (the result is 0,
/// or all sign bits for `shr.s`); LLVM would produce poison.
template <typename OpTy>
struct ShiftOpLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = asInteger(rewriter, loc, adaptor.getA());
    mlir::Type t = a.getType();
    unsigned width = widthOf(t);
    Value amount = adaptor.getB();
    if (width > 32)
      amount = arith::ExtUIOp::create(rewriter, loc, t, amount);
    else if (width < 32) {
      // Clamp in 32 bits before narrowing so large amounts stay large.
      amount = arith::MinUIOp::create(rewriter, loc, amount,
                                      intConst(rewriter, loc, amount.getType(), width));
      amount = arith::TruncIOp::create(rewriter, loc, t, amount);
    }
    Value limit = intConst(rewriter, loc, t, width);
    Value tooFar = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::uge, amount, limit);
    Value r;
    if (std::is_same_v<OpTy, ShrOp> && isSignedType(op.getType())) {
      Value clamped = arith::MinUIOp::create(rewriter, loc, amount,
                                             intConst(rewriter, loc, t, width - 1));
      r = arith::ShRSIOp::create(rewriter, loc, a, clamped);
    } else {
      Value shifted = std::is_same_v<OpTy, ShlOp>
                          ? arith::ShLIOp::create(rewriter, loc, a, amount).getResult()
                          : arith::ShRUIOp::create(rewriter, loc, a, amount).getResult();
      r = arith::SelectOp::create(rewriter, loc, tooFar, intConst(rewriter, loc, t, 0), shifted);
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, adaptor.getA().getType(), false));
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
/// PTX); `.ftz.f16` would need f16's own subnormal range, not done yet.
bool comparableFloat(DataType type, bool ftz) {
  return type == DataType::F32 || type == DataType::F64 ||
         ((type == DataType::BF16 || type == DataType::F16) && !ftz);
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

  LogicalResult
  matchAndRewrite(SetpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    Value p;
    if (isFloatType(op.getType())) {
      auto pred = floatPredicate(op.getCmp());
      if (!pred || !comparableFloat(op.getType(), op.getFtz()))
        return unsupported(op, Twine("comparison '.") + stringifyCmp(op.getCmp()) +
                                   (op.getFtz() ? ".ftz." : ".") +
                                   stringifyDataType(op.getType()) + "'");
      a = widenHalf(rewriter, loc, a, op.getType());
      b = widenHalf(rewriter, loc, b, op.getType());
      if (op.getFtz()) {
        a = flushSubnormal(rewriter, loc, a);
        b = flushSubnormal(rewriter, loc, b);
      }
      p = arith::CmpFOp::create(rewriter, loc, *pred, a, b);
    } else {
      auto pred = integerPredicate(op.getCmp(), isSignedType(op.getType()));
      if (!pred)
        return unsupported(op, Twine("comparison '.") + stringifyCmp(op.getCmp()) +
                                   "' on integers");
      p = arith::CmpIOp::create(rewriter, loc, *pred, asInteger(rewriter, loc, a),
                                asInteger(rewriter, loc, b));
    }
    Value trueValue = intConst(rewriter, loc, rewriter.getI1Type(), 1);
    Value q = arith::XOrIOp::create(rewriter, loc, p, trueValue);
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
                                  DataType type, bool ftz) {
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
    if (ftz) {
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

  LogicalResult
  matchAndRewrite(SetOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<Value> p = comparePredicate(op, rewriter, adaptor.getA(), adaptor.getB(),
                                          op.getCmp(), op.getSrcType(), op.getFtz());
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

  LogicalResult
  matchAndRewrite(SlctOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value c = adaptor.getC();
    Value p;
    if (c.getType().isF32()) {
      if (op.getFtz())
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

  LogicalResult
  matchAndRewrite(SelpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, adaptor.getP(), adaptor.getA(),
                                                 adaptor.getB());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Moves and conversions
//===----------------------------------------------------------------------===//

struct MovOpLowering : PTXPattern<MovOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(MovOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adjustBits(rewriter, op.getLoc(), adaptor.getSrc(),
                                      op.getRes().getType(), false));
    return success();
  }
};

/// Float to integer conversion with PTX's saturation: values beyond the
/// range give the nearest representable integer. NaN gives 0 (as the PTX ISA
/// says) only from f32 to at most 32 bits; from f64 (f16 is modelled so, not
/// yet captured), or to 64 bits, the H200 gives the destination's sign bit
/// alone, 0x80000000 for u32 too (`nanIsZero` says which).
///  1. round to an integral float by the `.rXi` mode (default `.rzi`);
///  2. convert with fptosi/fptoui (poison only when out of range);
///  3. select the clamped constants for NaN and out-of-range inputs.
Value floatToInteger(OpBuilder &b, Location loc, Value x, Rounding rnd,
                     mlir::Type intType, bool isSigned, bool nanIsZero) {
  switch (rnd) {
  case Rounding::RNI:
    x = roundEven(b, loc, x);
    break;
  case Rounding::RMI:
    x = math::FloorOp::create(b, loc, x);
    break;
  case Rounding::RPI:
    x = math::CeilOp::create(b, loc, x);
    break;
  default:
    x = math::TruncOp::create(b, loc, x);
    break;
  }
  mlir::Type floatType = x.getType();
  unsigned width = widthOf(intType);
  double lo = isSigned ? -std::ldexp(1.0, width - 1) : 0.0;
  double hiExclusive = isSigned ? std::ldexp(1.0, width - 1) : std::ldexp(1.0, width);
  Value converted = isSigned ? arith::FPToSIOp::create(b, loc, intType, x).getResult()
                             : arith::FPToUIOp::create(b, loc, intType, x).getResult();
  llvm::APInt minInt = isSigned ? llvm::APInt::getSignedMinValue(width)
                                : llvm::APInt::getMinValue(width);
  llvm::APInt maxInt = isSigned ? llvm::APInt::getSignedMaxValue(width)
                                : llvm::APInt::getMaxValue(width);
  Value minValue = arith::ConstantOp::create(b, loc, intType, b.getIntegerAttr(intType, minInt));
  Value maxValue = arith::ConstantOp::create(b, loc, intType, b.getIntegerAttr(intType, maxInt));
  Value tooSmall = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                         floatConst(b, loc, floatType, lo));
  Value tooLarge = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                         floatConst(b, loc, floatType, hiExclusive));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value r = arith::SelectOp::create(b, loc, tooSmall, minValue, converted);
  r = arith::SelectOp::create(b, loc, tooLarge, maxValue, r);
  llvm::APInt nanInt = nanIsZero ? llvm::APInt(width, 0) : llvm::APInt::getSignMask(width);
  Value nanValue = arith::ConstantOp::create(b, loc, intType, b.getIntegerAttr(intType, nanInt));
  return arith::SelectOp::create(b, loc, isNaN, nanValue, r);
}

/// cvt.sat between integers: clamps `x` (of its own signedness) to the
/// range of `target` before the bits are truncated or extended.
Value clampInteger(OpBuilder &b, Location loc, Value x, bool srcSigned, mlir::Type target,
                   bool dstSigned) {
  mlir::Type t = x.getType();
  unsigned ws = widthOf(t), wd = widthOf(target);
  APInt srcMax = srcSigned ? APInt::getSignedMaxValue(ws) : APInt::getMaxValue(ws);
  APInt dstMax = dstSigned ? APInt::getSignedMaxValue(wd) : APInt::getMaxValue(wd);
  // dstMax < srcMax, compared as unsigned numbers of the larger width.
  unsigned w = std::max(ws, wd);
  if (dstMax.zext(w).ult(srcMax.zext(w))) {
    Value limit = arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, dstMax.zextOrTrunc(ws)));
    Value above = arith::CmpIOp::create(
        b, loc, srcSigned ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ugt, x, limit);
    x = arith::SelectOp::create(b, loc, above, limit, x);
  }
  if (srcSigned) {
    // The smallest destination value, if it is above the source's.
    bool clampLow = !dstSigned || wd < ws;
    if (clampLow) {
      APInt dstMin = dstSigned ? APInt::getSignedMinValue(wd).sext(ws) : APInt(ws, 0);
      Value limit = arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, dstMin));
      Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, limit);
      x = arith::SelectOp::create(b, loc, below, limit, x);
    }
  }
  return x;
}

struct CvtOpLowering : PTXPattern<CvtOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(CvtOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    DataType dst = op.getType(), src = op.getSrcType();
    mlir::Type srcType = memoryType(ctx, src), dstType = memoryType(ctx, dst);
    mlir::Type resultType = op.getRes().getType();
    Rounding rnd = op.getRnd();
    // The source register may be wider than the source type (cvt.u32.u16 on
    // a 32-bit register reads its low half).
    Value x = adjustBits(rewriter, loc, adaptor.getSrc(), srcType, isSignedType(src));
    bool srcFloat = isFloatType(src), dstFloat = isFloatType(dst);
    if (op.getRelu() && !dstFloat)
      return unsupported(op, "'cvt' modifier '.relu' to an integer type");
    if ((srcFloat && src != DataType::F16 && src != DataType::BF16 &&
         src != DataType::F32 && src != DataType::F64) ||
        (dstFloat && dst != DataType::F16 && dst != DataType::BF16 &&
         dst != DataType::F32 && dst != DataType::F64))
      return unsupported(op, Twine("conversion '.") + stringifyDataType(dst) +
                                 "." + stringifyDataType(src) + "'");
    if (srcFloat && op.getFtz())
      x = flushSubnormal(rewriter, loc, x);
    Value r;
    if (!srcFloat && !dstFloat) {
      if (op.getSat())
        x = clampInteger(rewriter, loc, x, isSignedType(src), dstType, isSignedType(dst));
      if (!isSignedType(dst) && widthOf(srcType) == 64 && widthOf(dstType) == 8 &&
          resultType.isInteger() && widthOf(resultType) > 8) {
        // u8 from 64 bits as `and (trunc x), 0xff` in the register's width:
        // LLVM 22's SPIR-V backend turns `zext (trunc i64 to i8)` into an
        // OpBitwiseAnd of mixed widths, which spirv-val rejects.
        Value bits = adjustBits(rewriter, loc, x, resultType, false);
        rewriter.replaceOp(op, arith::AndIOp::create(rewriter, loc, bits,
                                                     intConst(rewriter, loc, resultType, 0xff)));
        return success();
      }
      r = adjustBits(rewriter, loc, x, dstType, isSignedType(src));
    } else if (!srcFloat && dstFloat) {
      if (rnd != Rounding::None && rnd != Rounding::RN && rnd != Rounding::RZ &&
          rnd != Rounding::RM && rnd != Rounding::RP)
        return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                   "' converting integer to float");
      r = integerToFloat(rewriter, loc, x, isSignedType(src), dstType, rnd);
      if (!r)
        return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                   "' converting integer to bf16");
    } else if (srcFloat && !dstFloat) {
      if (rnd != Rounding::None && rnd != Rounding::RZI && rnd != Rounding::RNI &&
          rnd != Rounding::RMI && rnd != Rounding::RPI)
        return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                   "' converting float to integer");
      if (widthOf(srcType) < 32)
        x = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), x);
      bool nanIsZero = src == DataType::F32 && widthOf(dstType) <= 32;
      r = floatToInteger(rewriter, loc, x, rnd, dstType, isSignedType(dst), nanIsZero);
    } else {
      unsigned from = widthOf(srcType), to = widthOf(dstType);
      if (from < to || (from == to && srcType == dstType)) {
        if (from < to)
          x = arith::ExtFOp::create(rewriter, loc, dstType, x);
        switch (rnd) {
        case Rounding::None:
        case Rounding::RN:
          r = x;
          break;
        case Rounding::RNI:
          r = roundEven(rewriter, loc, x);
          break;
        case Rounding::RZI:
          r = math::TruncOp::create(rewriter, loc, x);
          break;
        case Rounding::RMI:
          r = math::FloorOp::create(rewriter, loc, x);
          break;
        case Rounding::RPI:
          r = math::CeilOp::create(rewriter, loc, x);
          break;
        default:
          return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                     "' on a widening float conversion");
        }
      } else {
        if (rnd != Rounding::None && rnd != Rounding::RN && rnd != Rounding::RZ &&
            rnd != Rounding::RM && rnd != Rounding::RP)
          return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                     "' on a narrowing float conversion");
        r = narrowFloat(rewriter, loc, x, dstType, rnd);
        if (!r)
          return unsupported(op, Twine("conversion '.") + stringifyDataType(dst) + "." +
                                     stringifyDataType(src) + "'");
      }
    }
    if (dstFloat && op.getFtz())
      r = flushSubnormal(rewriter, loc, r);
    if (dstFloat && op.getSat())
      r = saturateFloat(rewriter, loc, r);
    if (op.getRelu()) {
      // Negative values and -0 become +0 (as on the H200); NaN stays NaN.
      Value zero = floatConst(rewriter, loc, r.getType(), 0.0);
      Value notPositive = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLE, r, zero);
      r = arith::SelectOp::create(rewriter, loc, notPositive, zero, r);
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, resultType, isSignedType(dst)));
    return success();
  }
};

struct SregOpLowering : PTXPattern<SregOp> {
  using PTXPattern::PTXPattern;

  /// The registers that describe the launch and the machine rather than the
  /// thread. NVPTX reads NVIDIA's; elsewhere:
  ///  - %nwarpid is the number of warps of the CTA (so %warpid < %nwarpid;
  ///    NVIDIA's is the SM's warp slots);
  ///  - %smid is 0 and %nsmid 1: neither OpenCL nor our AMDGPU code reads
  ///    the compute unit a work-group runs on;
  ///  - %gridid is 0 (NVIDIA's is a launch sequence number);
  ///  - on AMDGPU, %total_smem_size is the dispatch packet's group segment
  ///    size (the launcher passes the window, static + dynamic, there) and
  ///    %dynamic_smem_size that minus the kernel's static window (so on
  ///    NVPTX, whose launches also size the whole window as dynamic shared
  ///    memory); SPIR-V kernels cannot read the size of their __local window
  ///    argument, so the launcher passes the window as the global work
  ///    offset in x, read with get_global_offset(0) (nothing else reads
  ///    global ids or offsets: %tid and %ctaid are local and group ids).
  FailureOr<Value> launchRegister(SregOp op, OpBuilder &b, SpecialReg reg) const {
    Location loc = op.getLoc();
    mlir::Type i32 = b.getI32Type(), i64 = b.getI64Type();
    if (Value r = state.target.nativeLaunchRegister(b, loc, reg)) {
      if (reg != SpecialReg::DynamicSmemSize)
        return r;
      // The kernel's .shared variables are in the window too, which the
      // launch sizes as dynamic shared memory.
      return lessStaticWindow(op, b, r);
    }
    switch (reg) {
    case SpecialReg::Nwarpid: {
      Value n = arith::MulIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, gpu::BlockDimOp::create(b, loc, gpu::Dimension::x),
                                gpu::BlockDimOp::create(b, loc, gpu::Dimension::y)),
          gpu::BlockDimOp::create(b, loc, gpu::Dimension::z));
      Value warps = arith::DivUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, n, arith::ConstantIndexOp::create(b, loc, 31)),
          arith::ConstantIndexOp::create(b, loc, 32));
      return arith::IndexCastUIOp::create(b, loc, i32, warps).getResult();
    }
    case SpecialReg::Smid:
    case SpecialReg::Gridid:
      return intConst(b, loc, reg == SpecialReg::Gridid ? i64 : i32, 0);
    case SpecialReg::Nsmid:
      return intConst(b, loc, i32, 1);
    default:
      break;
    }
    Value total = state.target.sharedWindowBytes(b, op);
    if (!total) {
      (void)unsupported(op, Twine("special register '%") + stringifySpecialReg(reg) +
                                "' on target '" + state.target.getName() + "'");
      return failure();
    }
    if (reg == SpecialReg::TotalSmemSize)
      return inAllocationUnits(b, loc, total);
    return lessStaticWindow(op, b, total);
  }

  /// NVIDIA's %total_smem_size is the CTA's shared memory in whole allocation
  /// units of 128 bytes (the H200 reads 1152 for a 1028-byte window).
  static Value inAllocationUnits(OpBuilder &b, Location loc, Value bytes) {
    mlir::Type i32 = b.getI32Type();
    Value rounded = arith::AddIOp::create(b, loc, bytes, intConst(b, loc, i32, 127));
    return arith::AndIOp::create(b, loc, rounded, intConst(b, loc, i32, ~127));
  }

  /// `window` (the launch's shared-memory size) less the kernel's static
  /// .shared variables, which the window also holds.
  FailureOr<Value> lessStaticWindow(SregOp op, OpBuilder &b, Value window) const {
    auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
    auto staticBytes = kernel ? kernel->getAttrOfType<IntegerAttr>("zmlir.static_shared_bytes")
                              : IntegerAttr();
    if (!staticBytes) {
      (void)unsupported(op, "'%dynamic_smem_size' outside a kernel");
      return failure();
    }
    return arith::SubIOp::create(b, op.getLoc(), window,
                                 intConst(b, op.getLoc(), b.getI32Type(), staticBytes.getInt()))
        .getResult();
  }

  /// %laneid: the sub-group (SPIR-V) or wavefront lane, modulo 32 on wave64
  /// AMD chips, whose wavefronts hold two CUDA warps.
  Value laneInWarp(OpBuilder &b, Location loc, mlir::Type type) const {
    Value lane = arith::IndexCastUIOp::create(b, loc, type,
                                              gpu::LaneIdOp::create(b, loc, nullptr));
    if (state.target.getWaveSize() > 32)
      lane = arith::AndIOp::create(b, loc, lane, intConst(b, loc, type, 31));
    return lane;
  }

  LogicalResult
  matchAndRewrite(SregOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type type = op.getRes().getType();
    auto dim = [](SpecialReg r, SpecialReg x) {
      return static_cast<gpu::Dimension>(static_cast<int>(r) - static_cast<int>(x));
    };
    Value index;
    SpecialReg reg = op.getReg();
    switch (reg) {
    case SpecialReg::TidX:
    case SpecialReg::TidY:
    case SpecialReg::TidZ:
      index = gpu::ThreadIdOp::create(rewriter, loc, dim(reg, SpecialReg::TidX));
      break;
    case SpecialReg::NtidX:
    case SpecialReg::NtidY:
    case SpecialReg::NtidZ:
      index = gpu::BlockDimOp::create(rewriter, loc, dim(reg, SpecialReg::NtidX));
      break;
    case SpecialReg::CtaidX:
    case SpecialReg::CtaidY:
    case SpecialReg::CtaidZ:
      index = gpu::BlockIdOp::create(rewriter, loc, dim(reg, SpecialReg::CtaidX));
      break;
    case SpecialReg::NctaidX:
    case SpecialReg::NctaidY:
    case SpecialReg::NctaidZ:
      index = gpu::GridDimOp::create(rewriter, loc, dim(reg, SpecialReg::NctaidX));
      break;
    case SpecialReg::Laneid:
      rewriter.replaceOp(op, laneInWarp(rewriter, loc, type));
      return success();
    case SpecialReg::LanemaskEq:
    case SpecialReg::LanemaskLt:
    case SpecialReg::LanemaskLe:
    case SpecialReg::LanemaskGt:
    case SpecialReg::LanemaskGe: {
      // eq = 1 << lane, lt = eq - 1, le = (2 << lane) - 1, gt = ~le, ge = ~lt
      // (2 << 31 wraps to 0, so le of lane 31 is all ones).
      Value lane = laneInWarp(rewriter, loc, type);
      Value one = intConst(rewriter, loc, type, 1), ones = intConst(rewriter, loc, type, -1);
      Value eq = arith::ShLIOp::create(rewriter, loc, one, lane);
      Value lt = arith::SubIOp::create(rewriter, loc, eq, one);
      Value le = arith::SubIOp::create(
          rewriter, loc, arith::ShLIOp::create(rewriter, loc, intConst(rewriter, loc, type, 2), lane),
          one);
      Value r = reg == SpecialReg::LanemaskEq   ? eq
                : reg == SpecialReg::LanemaskLt ? lt
                : reg == SpecialReg::LanemaskLe ? le
                : reg == SpecialReg::LanemaskGt
                    ? arith::XOrIOp::create(rewriter, loc, le, ones).getResult()
                    : arith::XOrIOp::create(rewriter, loc, lt, ones).getResult();
      rewriter.replaceOp(op, r);
      return success();
    }
    case SpecialReg::Warpid: {
      // The warp's index in its CTA (PTX's %warpid is the hardware slot,
      // which may differ and change; programs use it as an identifier).
      mlir::Type idx = rewriter.getIndexType();
      Value tx = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
      Value ty = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::y);
      Value tz = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::z);
      Value nx = gpu::BlockDimOp::create(rewriter, loc, gpu::Dimension::x);
      Value ny = gpu::BlockDimOp::create(rewriter, loc, gpu::Dimension::y);
      Value linear = arith::AddIOp::create(
          rewriter, loc, tx,
          arith::MulIOp::create(rewriter, loc, nx,
                                arith::AddIOp::create(rewriter, loc, ty,
                                                      arith::MulIOp::create(rewriter, loc, ny, tz))));
      Value warp = arith::DivUIOp::create(rewriter, loc, linear,
                                          arith::ConstantIndexOp::create(rewriter, loc, 32));
      (void)idx;
      rewriter.replaceOpWithNewOp<arith::IndexCastUIOp>(op, type, warp);
      return success();
    }
    case SpecialReg::Clock:
    case SpecialReg::Clock64:
    case SpecialReg::Globaltimer: {
      mlir::Type i64 = rewriter.getI64Type();
      bool timer = reg == SpecialReg::Globaltimer;
      Value r = state.target.readClock(rewriter, op, reg);
      if (!r)
        return unsupported(op, Twine("special register '%") + stringifySpecialReg(reg) +
                                   "' on target '" + state.target.getName() + "'");
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, type, false));
      return success();
    }
    case SpecialReg::Nwarpid:
    case SpecialReg::Smid:
    case SpecialReg::Nsmid:
    case SpecialReg::Gridid:
    case SpecialReg::DynamicSmemSize:
    case SpecialReg::TotalSmemSize: {
      FailureOr<Value> r = launchRegister(op, rewriter, reg);
      if (failed(r))
        return failure();
      rewriter.replaceOp(op, adjustBits(rewriter, loc, *r, type, false));
      return success();
    }
    case SpecialReg::WarpSize:
      rewriter.replaceOp(op, intConst(rewriter, loc, type, 32));
      return success();
    default:
      return unsupported(op, Twine("special register '%") +
                                 stringifySpecialReg(reg) + "'");
    }
    rewriter.replaceOpWithNewOp<arith::IndexCastUIOp>(op, type, index);
    return success();
  }
};

struct AddrOfOpLowering : PTXPattern<AddrOfOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(AddrOfOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type type = op.getRes().getType();
    StringAttr name = op.getSymAttr().getAttr();
    VarOp var = state.variables.lookup(name);
    if (!var)
      return unsupported(op, Twine("address of '") + name.getValue() +
                                 "' (not a variable)");
    if (var.getSpace() == StateSpace::Shared) {
      auto func = op->getParentOfType<gpu::GPUFuncOp>();
      int64_t offset = state.sharedOffsets.lookup({func, name});
      rewriter.replaceOp(op, intConst(rewriter, loc, type, offset));
      return success();
    }
    unsigned as = var.getSpace() == StateSpace::Const ? state.addressSpaces.constant
                                                      : state.addressSpaces.global;
    Value ptr = LLVM::AddressOfOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext(), as),
        name.getValue());
    rewriter.replaceOpWithNewOp<LLVM::PtrToIntOp>(op, type, ptr);
    return success();
  }
};

struct CvtaOpLowering : PTXPattern<CvtaOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(CvtaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type type = op.getRes().getType();
    Value src = adaptor.getSrc();
    switch (op.getSpace()) {
    case StateSpace::Global:
      // Global and generic addresses of global memory are the same number.
      rewriter.replaceOp(op, adjustBits(rewriter, loc, src, type, false));
      return success();
    case StateSpace::Shared: {
      MLIRContext *ctx = rewriter.getContext();
      Value window = sharedWindow(op);
      auto genericPtr = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic);
      mlir::Type i64 = rewriter.getI64Type();
      if (op.getTo()) {
        // generic -> offset in the window.
        Value base = LLVM::AddrSpaceCastOp::create(rewriter, loc, genericPtr, window);
        Value baseInt = LLVM::PtrToIntOp::create(rewriter, loc, i64, base);
        Value wide = adjustBits(rewriter, loc, src, i64, false);
        Value offset = arith::SubIOp::create(rewriter, loc, wide, baseInt);
        rewriter.replaceOp(op, adjustBits(rewriter, loc, offset, type, false));
        return success();
      }
      Value wide = adjustBits(rewriter, loc, src, i64, false);
      Value ptr = LLVM::GEPOp::create(rewriter, loc, window.getType(),
                                      rewriter.getI8Type(), window, ValueRange{wide});
      Value generic = LLVM::AddrSpaceCastOp::create(rewriter, loc, genericPtr, ptr);
      Value asInt = LLVM::PtrToIntOp::create(rewriter, loc, i64, generic);
      rewriter.replaceOp(op, adjustBits(rewriter, loc, asInt, type, false));
      return success();
    }
    case StateSpace::Local: {
      // Local addresses are private-space pointers as integers.
      MLIRContext *ctx = rewriter.getContext();
      auto localPtr = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.local);
      auto genericPtr = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic);
      mlir::Type i64 = rewriter.getI64Type();
      Value wide = adjustBits(rewriter, loc, src, i64, false);
      Value result;
      if (localPtr == genericPtr) {
        result = wide;
      } else if (op.getTo()) {
        Value p = LLVM::IntToPtrOp::create(rewriter, loc, genericPtr, wide);
        Value q = LLVM::AddrSpaceCastOp::create(rewriter, loc, localPtr, p);
        result = LLVM::PtrToIntOp::create(rewriter, loc, i64, q);
      } else {
        Value p = LLVM::IntToPtrOp::create(rewriter, loc, localPtr, wide);
        Value q = LLVM::AddrSpaceCastOp::create(rewriter, loc, genericPtr, p);
        result = LLVM::PtrToIntOp::create(rewriter, loc, i64, q);
      }
      rewriter.replaceOp(op, adjustBits(rewriter, loc, result, type, false));
      return success();
    }
    default:
      return unsupported(op, Twine("'cvta' for state space '") +
                                 stringifyStateSpace(op.getSpace()) + "'");
    }
  }
};

/// isspacep, in agreement with cvta (generic addresses are the numbers of
/// generic-space pointers: global ones unchanged, the shared window and
/// .local allocas cast to the generic space):
///  - NVPTX: NVIDIA's instruction (llvm.nvvm.isspacep.*);
///  - AMDGPU: llvm.amdgcn.is.shared / is.private on the flat pointer, and
///    global is neither (flat addresses outside LDS and scratch are global);
///  - SPIR-V: the shared window only (see below); .global and .local are
///    rejected.
/// .const and .param have no generic window off NVPTX (their variables'
/// addresses never become generic ones there): rejected.
struct IsspacepOpLowering : PTXPattern<IsspacepOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(IsspacepOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    mlir::Type i64 = rewriter.getI64Type();
    const AddressSpaceMap &as = state.addressSpaces;
    StateSpace space = op.getSpace();
    Value wide = adjustBits(rewriter, loc, adaptor.getAddr(), i64, false);
    Value ptr = LLVM::IntToPtrOp::create(rewriter, loc, LLVM::LLVMPointerType::get(ctx, as.generic),
                                         wide);
    std::string whyNot;
    Value r = state.target.isSpace(rewriter, op, ptr, wide, space, sharedWindow(op), whyNot);
    if (!r)
      return unsupported(op, Twine("'isspacep.") + stringifyStateSpace(space) + "' on target '" +
                                 state.target.getName() + "' (" + whyNot + ")");
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// prefetch/prefetchu: NVIDIA's instruction on NVPTX; nothing elsewhere (a
/// prefetch has no effect on results).
struct PrefetchOpLowering : PTXPattern<PrefetchOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(PrefetchOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    state.target.emitPrefetch(rewriter, op, adaptor.getAddr());
    rewriter.eraseOp(op);
    return success();
  }
};

/// The width in bits of a `ld.param`/`st.param` of `type` at `offset` of
/// the aggregate parameter `param`, or a diagnostic when the access is not
/// whole bytes inside it.
template <typename OpTy>
FailureOr<unsigned> aggregateAccessBits(OpTy op, DataType type, int64_t offset, Value param) {
  auto array = dyn_cast<LLVM::LLVMArrayType>(param.getType());
  if (!array || !array.getElementType().isInteger(8))
    return op.emitError("unsupported parameter of type ") << param.getType();
  unsigned bits = getTypeBitWidth(type);
  if (bits % 8 != 0 || bits == 0)
    return op.emitError("unsupported access of type '")
           << stringifyDataType(type) << "' to an aggregate parameter";
  if (offset < 0 || offset + bits / 8 > static_cast<int64_t>(array.getNumElements()))
    return op.emitError("unsupported access at bytes [")
           << offset << ", " << offset + bits / 8 << ") of a " << array.getNumElements()
           << "-byte parameter";
  return bits;
}

struct LdParamOpLowering : PTXPattern<LdParamOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(LdParamOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value param = adaptor.getParam();
    Location loc = op.getLoc();
    bool isSigned = isSignedType(op.getType());
    if (param.getType().isIntOrFloat()) {
      if (op.getOffset() != 0)
        return unsupported(op, "'ld.param' at an offset of a scalar parameter");
      rewriter.replaceOp(op, adjustBits(rewriter, loc, param, op.getRes().getType(), isSigned));
      return success();
    }
    // An aggregate call or return parameter (!llvm.array<N x i8>): the
    // little-endian bytes at the offset, assembled into an integer.
    FailureOr<unsigned> bits = aggregateAccessBits(op, op.getType(), op.getOffset(), param);
    if (failed(bits))
      return failure();
    mlir::Type wide = rewriter.getIntegerType(*bits);
    Value value;
    for (unsigned k = 0; k < *bits / 8; ++k) {
      Value byte = LLVM::ExtractValueOp::create(rewriter, loc, param,
                                                ArrayRef<int64_t>{op.getOffset() + k});
      if (*bits > 8) {
        byte = arith::ExtUIOp::create(rewriter, loc, wide, byte);
        if (k != 0)
          byte = arith::ShLIOp::create(rewriter, loc, byte, intConst(rewriter, loc, wide, 8 * k));
      }
      value = k == 0 ? byte : arith::OrIOp::create(rewriter, loc, value, byte).getResult();
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, value, op.getRes().getType(), isSigned));
    return success();
  }
};

/// An aggregate call or return parameter is an !llvm.array<N x i8> value
/// (passed and returned by value by the lowered functions); `st.param`
/// replaces the `size(type)` bytes at the offset, little-endian.
struct StParamOpLowering : PTXPattern<StParamOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(StParamOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value param = adaptor.getParam();
    Location loc = op.getLoc();
    FailureOr<unsigned> bits = aggregateAccessBits(op, op.getType(), op.getOffset(), param);
    if (failed(bits))
      return failure();
    mlir::Type wide = rewriter.getIntegerType(*bits);
    Value value = adjustBits(rewriter, loc, adaptor.getValue(), wide, false);
    for (unsigned k = 0; k < *bits / 8; ++k) {
      Value byte = value;
      if (k != 0)
        byte = arith::ShRUIOp::create(rewriter, loc, byte, intConst(rewriter, loc, wide, 8 * k));
      if (*bits > 8)
        byte = arith::TruncIOp::create(rewriter, loc, rewriter.getI8Type(), byte);
      param = LLVM::InsertValueOp::create(rewriter, loc, param, byte,
                                          ArrayRef<int64_t>{op.getOffset() + k});
    }
    rewriter.replaceOp(op, param);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Rejects memory-model modifiers we cannot honour yet.
template <typename OpTy>
LogicalResult checkMemorySemantics(OpTy op, const PTXPattern<OpTy> &p) {
  Semantics sem = op.getSem();
  if (sem == Semantics::MMIO)
    return p.unsupported(op, "'.mmio' memory access");
  if (op.getVec() > 1 && sem != Semantics::None && sem != Semantics::Weak &&
      sem != Semantics::Volatile)
    return p.unsupported(op, "atomic vector memory access");
  return success();
}

LLVM::AtomicOrdering accessOrdering(Semantics sem) {
  switch (sem) {
  case Semantics::Relaxed:
    return LLVM::AtomicOrdering::monotonic;
  case Semantics::Acquire:
    return LLVM::AtomicOrdering::acquire;
  case Semantics::Release:
    return LLVM::AtomicOrdering::release;
  default:
    return LLVM::AtomicOrdering::not_atomic;
  }
}

/// The syncscope of an ld/st `.relaxed`/`.acquire`/`.release` at its PTX
/// scope (NVPTX prints syncscope("device") as .gpu; without one it would be
/// .sys); none for a plain access.
template <typename OpTy>
std::string accessSyncScope(const PTXLoweringState &state, OpTy op,
                            LLVM::AtomicOrdering ordering) {
  if (ordering == LLVM::AtomicOrdering::not_atomic)
    return "";
  return state.target.syncScopeName(op.getScope());
}

struct LdOpLowering : PTXPattern<LdOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(LdOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (failed(checkMemorySemantics(op, *this)))
      return failure();
    FailureOr<Value> ptr =
        pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(), op.getSpace());
    if (failed(ptr))
      return failure();
    mlir::Type elem = memoryType(rewriter.getContext(), op.getType());
    int64_t vec = op.getVec();
    unsigned bytes = std::max(1u, widthOf(elem) / 8);
    unsigned align = bytes * vec;
    bool isVolatile = op.getSem() == Semantics::Volatile;
    bool isSigned = isSignedType(op.getType());
    SmallVector<Value> results;
    if (vec == 1) {
      LLVM::AtomicOrdering ordering = accessOrdering(op.getSem());
      Value v = LLVM::LoadOp::create(rewriter, loc, elem, *ptr, align, isVolatile, false, false,
                                     false, ordering, accessSyncScope(state, op, ordering));
      results.push_back(v);
    } else {
      auto vecType = VectorType::get({vec}, elem);
      Value v = LLVM::LoadOp::create(rewriter, loc, vecType, *ptr, align, isVolatile);
      for (int64_t i = 0; i < vec; ++i)
        results.push_back(LLVM::ExtractElementOp::create(
            rewriter, loc, v, intConst(rewriter, loc, rewriter.getI32Type(), i)));
    }
    for (auto [value, result] : llvm::zip(results, op.getResults()))
      value = adjustBits(rewriter, loc, value, result.getType(), isSigned);
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct StOpLowering : PTXPattern<StOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(StOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (failed(checkMemorySemantics(op, *this)))
      return failure();
    FailureOr<Value> ptr =
        pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(), op.getSpace());
    if (failed(ptr))
      return failure();
    mlir::Type elem = memoryType(rewriter.getContext(), op.getType());
    int64_t vec = op.getVec();
    unsigned bytes = std::max(1u, widthOf(elem) / 8);
    unsigned align = bytes * vec;
    bool isVolatile = op.getSem() == Semantics::Volatile;
    SmallVector<Value> values;
    for (Value v : adaptor.getValues())
      values.push_back(adjustBits(rewriter, loc, v, elem, false));
    if (vec == 1) {
      LLVM::AtomicOrdering ordering = accessOrdering(op.getSem());
      LLVM::StoreOp::create(rewriter, loc, values.front(), *ptr, align, isVolatile, false, false,
                            ordering, accessSyncScope(state, op, ordering));
    } else {
      auto vecType = VectorType::get({vec}, elem);
      Value v = LLVM::PoisonOp::create(rewriter, loc, vecType);
      for (int64_t i = 0; i < vec; ++i)
        v = LLVM::InsertElementOp::create(rewriter, loc, v, values[i],
                                          intConst(rewriter, loc, rewriter.getI32Type(), i));
      LLVM::StoreOp::create(rewriter, loc, v, *ptr, align, isVolatile);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// atom and red (red is atom without the old value): LLVM atomics with
/// PTX's ordering and scope. Without an ordering PTX atomics are relaxed,
/// without a scope .gpu. On NVPTX, what LLVM 22's backend would emit weaker
/// or different is the target's own instruction (TargetInfo::hasNativeAtomic).
template <typename OpTy>
struct AtomicLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;
  using PTXPattern<OpTy>::unsupported;
  using PTXPattern<OpTy>::pointerTo;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DataType type = op.getType();
    bool isFloat = isFloatType(type);
    if (isFloat && !(op.getOp() == AtomicOp::Add || op.getOp() == AtomicOp::Exch))
      return unsupported(op, Twine("float atomic '") + stringifyAtomicOp(op.getOp()) + "'");
    if (this->state.target.needsAtomicCasLoop(op.getOp(), type)) {
      // The 32-bit word holding the operand: 16-bit operands are 2-aligned,
      // so bit 1 of the address says which half of the word they are.
      mlir::Type i64 = rewriter.getI64Type(), i32 = rewriter.getI32Type();
      Value addr = adaptor.getAddr();
      if (addr.getType() != i64)
        addr = arith::ExtUIOp::create(rewriter, loc, i64, addr);
      if (op.getOffset() != 0)
        addr = arith::AddIOp::create(rewriter, loc, addr, intConst(rewriter, loc, i64, op.getOffset()));
      Value shift;
      unsigned width = getTypeBitWidth(type);
      if (width == 16) {
        Value half = arith::AndIOp::create(rewriter, loc, addr, intConst(rewriter, loc, i64, 2));
        shift = arith::ShLIOp::create(rewriter, loc, arith::TruncIOp::create(rewriter, loc, i32, half),
                                      intConst(rewriter, loc, i32, 3));
        addr = arith::AndIOp::create(rewriter, loc, addr, intConst(rewriter, loc, i64, ~int64_t(3)));
      }
      FailureOr<Value> word = pointerTo(op, rewriter, addr, 0, op.getSpace());
      if (failed(word))
        return failure();
      mlir::Type bits = rewriter.getIntegerType(width);
      Value b = adjustBits(rewriter, loc, adaptor.getB(), bits, false);
      Value c;
      if constexpr (std::is_same_v<OpTy, AtomOp>)
        if (adaptor.getC())
          c = adjustBits(rewriter, loc, adaptor.getC(), bits, false);
      // The H200 flushes f32 adds to global memory (RED.ADD.F32.FTZ) but
      // not those to shared memory (0 + 0x1 is 0x1 there).
      bool flush = op.getSpace() != StateSpace::Shared;
      Value old = emitAtomicCasLoop(rewriter, loc, this->state, *word, shift, op.getOp(), type,
                                    b, c, orderingFor(op.getSem()),
                                    this->state.target.syncScopeName(op.getScope()), flush);
      if constexpr (std::is_same_v<OpTy, AtomOp>)
        rewriter.replaceOp(op, adjustBits(rewriter, loc, old, op.getRes().getType(), false));
      else
        rewriter.eraseOp(op);
      return success();
    }
    if (this->state.target.hasNativeAtomic(op.getOp(), type, op.getSem(), op.getScope())) {
      StateSpace space = op.getSpace();
      if (space != StateSpace::None && space != StateSpace::Global && space != StateSpace::Shared)
        return unsupported(op, Twine("atomic in state space '.") + stringifyStateSpace(space) +
                                   "'");
      FailureOr<Value> ptr =
          pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(), space);
      if (failed(ptr))
        return failure();
      mlir::Type bits = rewriter.getIntegerType(getTypeBitWidth(type));
      Value b = adjustBits(rewriter, loc, adaptor.getB(), bits, false);
      Value c;
      if constexpr (std::is_same_v<OpTy, AtomOp>)
        if (adaptor.getC())
          c = adjustBits(rewriter, loc, adaptor.getC(), bits, false);
      constexpr bool withResult = std::is_same_v<OpTy, AtomOp>;
      Value old = this->state.target.emitNativeAtomic(rewriter, loc, *ptr, space, op.getOp(),
                                                       type, op.getSem(), op.getScope(), b, c,
                                                       withResult);
      if constexpr (withResult)
        rewriter.replaceOp(op, adjustBits(rewriter, loc, old, op.getRes().getType(), false));
      else
        rewriter.eraseOp(op);
      return success();
    }
    if (type == DataType::B128 || type == DataType::F16x2 || type == DataType::BF16x2)
      return unsupported(op, Twine("atomic type '.") + stringifyDataType(type) + "'");
    FailureOr<Value> ptr =
        pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(), op.getSpace());
    if (failed(ptr))
      return failure();
    mlir::Type elem = memoryType(rewriter.getContext(), type);
    Value b = adjustBits(rewriter, loc, adaptor.getB(), elem, false);
    LLVM::AtomicOrdering ordering = orderingFor(op.getSem());
    Scope ptxScope = op.getScope();
    if (ptxScope == Scope::None)
      ptxScope = this->state.target.unscopedAtomicScope();
    std::string scope = this->state.target.syncScopeName(ptxScope);
    Value r;
    if constexpr (std::is_same_v<OpTy, AtomOp>) {
      if (op.getOp() == AtomicOp::Cas) {
      Value c = adjustBits(rewriter, loc, adaptor.getC(), elem, false);
      LLVM::AtomicOrdering failure = ordering == LLVM::AtomicOrdering::acq_rel ||
                                             ordering == LLVM::AtomicOrdering::acquire
                                         ? LLVM::AtomicOrdering::acquire
                                         : LLVM::AtomicOrdering::monotonic;
      if (ordering == LLVM::AtomicOrdering::release)
        failure = LLVM::AtomicOrdering::monotonic;
      Value pair = LLVM::AtomicCmpXchgOp::create(rewriter, loc, *ptr, b, c, ordering, failure,
                                                 scope);
      r = LLVM::ExtractValueOp::create(rewriter, loc, pair, ArrayRef<int64_t>{0});
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, op.getRes().getType(), false));
      return success();
      }
    }
    {
      using B = LLVM::AtomicBinOp;
      bool isSigned = isSignedType(type);
      B bin;
      switch (op.getOp()) {
      case AtomicOp::Add:
        bin = isFloat ? B::fadd : B::add;
        break;
      case AtomicOp::Exch:
        bin = B::xchg;
        break;
      case AtomicOp::And:
        bin = B::_and;
        break;
      case AtomicOp::Or:
        bin = B::_or;
        break;
      case AtomicOp::Xor:
        bin = B::_xor;
        break;
      case AtomicOp::Min:
        bin = isSigned ? B::min : B::umin;
        break;
      case AtomicOp::Max:
        bin = isSigned ? B::max : B::umax;
        break;
      case AtomicOp::Inc:
        bin = B::uinc_wrap;
        break;
      case AtomicOp::Dec:
        bin = B::udec_wrap;
        break;
      default:
        return unsupported(op, "atomic operation");
      }
      r = LLVM::AtomicRMWOp::create(rewriter, loc, bin, *ptr, b, ordering, scope);
    }
    if constexpr (std::is_same_v<OpTy, AtomOp>)
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, op.getRes().getType(), false));
    else
      rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

struct BraOpLowering : PTXPattern<BraOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(BraOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<cf::BranchOp>(op, op.getDest(), adaptor.getDestOperands());
    return success();
  }
};

struct CondBraOpLowering : PTXPattern<CondBraOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(CondBraOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Block *taken = op.getTaken(), *fallthrough = op.getFallthrough();
    ValueRange takenArgs = adaptor.getTakenOperands();
    ValueRange fallthroughArgs = adaptor.getFallthroughOperands();
    if (op.getNegated())
      rewriter.replaceOpWithNewOp<cf::CondBranchOp>(op, adaptor.getPred(), fallthrough,
                                                    fallthroughArgs, taken, takenArgs);
    else
      rewriter.replaceOpWithNewOp<cf::CondBranchOp>(op, adaptor.getPred(), taken,
                                                    takenArgs, fallthrough, fallthroughArgs);
    return success();
  }
};

/// Instructions imported without a dedicated op: say which one.
struct InstOpLowering : PTXPattern<InstOp> {
  using PTXPattern::PTXPattern;

  /// `mov` of %envreg<0..31> (set by NVIDIA's driver) or %pm<0..7>{_64}
  /// (performance-monitor counters): NVIDIA's registers on NVPTX. Elsewhere
  /// the counters read 0 (no counters run), but %envreg is rejected: the
  /// H200's driver sets %envreg0 (58995400 in the fidelity capture), so 0
  /// would be a wrong value.
  LogicalResult lowerEnvironmentRegister(InstOp op, StringRef reg,
                                         ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    mlir::Type type = op.getResult(0).getType();
    if (Value r = state.target.readMachineRegister(rewriter, loc, reg)) {
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, type, false));
      return success();
    }
    if (reg.starts_with("%envreg"))
      return unsupported(op, Twine("special register '") + reg + "' on target '" +
                                 state.target.getName() + "' (set by NVIDIA's driver)");
    rewriter.replaceOp(op, intConst(rewriter, loc, type, 0));
    return success();
  }

  LogicalResult
  matchAndRewrite(InstOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (Value r = lowerNarrowFloatCvt(op, adaptor.getOperands(), rewriter)) {
      rewriter.replaceOp(op, r);
      return success();
    }
    ArrayAttr kinds = op.getOperandKinds();
    if (op.getOpcode() == "mov" && kinds.size() == 2 && op->getNumResults() == 1 &&
        op.getResult(0).getType().isInteger()) {
      StringRef reg = cast<StringAttr>(kinds[1]).getValue();
      unsigned n = 0;
      StringRef pm = reg;
      bool isPm = pm.consume_front("%pm") && (pm.consume_back("_64"), true) &&
                  !pm.getAsInteger(10, n) && n < 8;
      StringRef env = reg;
      bool isEnv = env.consume_front("%envreg") && !env.getAsInteger(10, n) && n < 32;
      if (isPm || isEnv)
        return lowerEnvironmentRegister(op, reg, rewriter);
    }
    std::string name = op.getOpcode().str();
    for (Attribute mod : op.getModifiers())
      name += "." + cast<StringAttr>(mod).getValue().ltrim('.').str();
    return unsupported(op, Twine("instruction '") + name + "'");
  }
};

/// ret and exit: gpu.return in kernels, llvm.return (with the values of the
/// return parameters) in device functions.
template <typename OpTy>
struct ReturnLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->template getParentOfType<gpu::GPUFuncOp>()) {
      rewriter.replaceOpWithNewOp<gpu::ReturnOp>(op);
      return success();
    }
    if constexpr (std::is_same_v<OpTy, ExitOp>) {
      return this->unsupported(op, "'exit' in a device function");
    } else {
      rewriter.replaceOpWithNewOp<LLVM::ReturnOp>(op, adaptor.getValues());
      return success();
    }
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Lays out the `.shared` variables `kernel` refers to and returns the size
/// of the static part. Unsized (`.extern`) arrays all start where the static
/// ones end, aligned to the strictest of them.
int64_t layoutSharedWindow(gpu::GPUFuncOp kernel, PTXLoweringState &state) {
  llvm::SetVector<StringAttr> used;
  kernel.walk([&](AddrOfOp addr) {
    StringAttr name = addr.getSymAttr().getAttr();
    VarOp var = state.variables.lookup(name);
    if (var && var.getSpace() == StateSpace::Shared)
      used.insert(name);
  });
  int64_t offset = 0, dynamicAlign = 1;
  bool barRed = kernel.walk([](BarRedOp) { return WalkResult::interrupt(); }).wasInterrupted();
  if (barRed && !state.target.hasNativeBarrierReduction()) {
    state.barrierCounters.insert(kernel);
    offset = kBarrierCounterBytes;
  }
  SmallVector<StringAttr> dynamic;
  for (StringAttr name : used) {
    VarOp var = state.variables.lookup(name);
    int64_t align = std::max<int64_t>(var.getAlign(), var.getElementSize());
    if (var.getCount() == 0) {
      dynamic.push_back(name);
      dynamicAlign = std::max(dynamicAlign, align);
      continue;
    }
    offset = llvm::alignTo(offset, align);
    state.sharedOffsets[{kernel, name}] = offset;
    offset += var.getCount() * var.getElementSize();
  }
  int64_t staticEnd = offset;
  int64_t dynamicStart = llvm::alignTo(staticEnd, dynamicAlign);
  for (StringAttr name : dynamic)
    state.sharedOffsets[{kernel, name}] = dynamicStart;
  // The runtime adds the dynamic size to this; keep the padding before the
  // dynamic part inside the static size.
  return dynamic.empty() ? staticEnd : dynamicStart;
}

struct ConvertPTXToStdPass
    : zmlir::impl::ConvertPTXToStdBase<ConvertPTXToStdPass> {
  using ConvertPTXToStdBase::ConvertPTXToStdBase;

  void runOnOperation() override;

private:
  LogicalResult convertDeviceFunction(func::FuncOp func, gpu::GPUModuleOp gpuModule);
  LogicalResult convertVariables(ModuleOp module, gpu::GPUModuleOp gpuModule,
                                 PTXLoweringState &state);
  FailureOr<gpu::GPUFuncOp> convertKernel(func::FuncOp func,
                                          gpu::GPUModuleOp gpuModule,
                                          PTXLoweringState &state);
};

/// A variable whose initializer holds addresses of symbols
/// (`.u64 t[2] = {generic(a), f}`) gets an initializer region building a
/// packed struct: the initializer's bytes between the addresses, and at each
/// address's offset
///  - for a `.global`/`.const` variable, its address plus the addend (a
///    constant GEP, as a pointer field or ptrtoint; generic and global addresses are
///    the same number, as for `mov` and `cvta.global`);
///  - for a `.func`, `ptx.func_addr`, which expandIndirectCalls replaces
///    with the function's encoding (kFuncAddressBase + its index) and adds
///    to the switch of each indirect call.
/// Each address is truncated to the element's width (4 or 8 bytes).
static LogicalResult buildAddressInitializer(VarOp var, LLVM::GlobalOp global,
                                             ArrayRef<int8_t> bytes, ModuleOp module,
                                             const PTXLoweringState &state) {
  MLIRContext *ctx = var.getContext();
  Location loc = var.getLoc();
  int64_t width = var.getElementSize();
  if (width != 4 && width != 8)
    return var.emitError("unsupported address in an initializer of ")
           << width << "-byte elements in '" << var.getSymName() << "'";
  mlir::Type i8 = IntegerType::get(ctx, 8), i64 = IntegerType::get(ctx, 64);
  mlir::Type element = IntegerType::get(ctx, 8 * width);
  OpBuilder b(ctx);
  Block *body = b.createBlock(&global.getInitializerRegion());
  SmallVector<mlir::Type> fields;
  SmallVector<Value> values;
  auto addBytes = [&](int64_t from, int64_t to) {
    if (from >= to)
      return;
    auto type = LLVM::LLVMArrayType::get(i8, to - from);
    auto data = DenseElementsAttr::get(RankedTensorType::get({to - from}, i8),
                                       bytes.slice(from, to - from));
    fields.push_back(type);
    values.push_back(LLVM::ConstantOp::create(b, loc, type, data));
  };
  SmallVector<InitAddressAttr> addresses(var.getInitAddresses()->getAsRange<InitAddressAttr>());
  llvm::sort(addresses, [](InitAddressAttr x, InitAddressAttr y) {
    return x.getOffset() < y.getOffset();
  });
  int64_t at = 0;
  for (InitAddressAttr address : addresses) {
    int64_t offset = address.getOffset();
    if (offset < at || offset % width != 0 || offset + width > static_cast<int64_t>(bytes.size()))
      return var.emitError("unsupported address at byte ")
             << offset << " of the initializer of '" << var.getSymName() << "'";
    addBytes(at, offset);
    StringRef name = address.getSymbol().getValue();
    Value value;
    if (VarOp target = state.variables.lookup(address.getSymbol().getAttr())) {
      if (target.getSpace() != StateSpace::Global && target.getSpace() != StateSpace::Const)
        return var.emitError("unsupported address of '")
               << name << "' in state space '" << stringifyStateSpace(target.getSpace())
               << "' in the initializer of '" << var.getSymName() << "'";
      unsigned as = target.getSpace() == StateSpace::Const ? state.addressSpaces.constant
                                                           : state.addressSpaces.global;
      auto ptrType = LLVM::LLVMPointerType::get(ctx, as);
      Value ptr = LLVM::AddressOfOp::create(b, loc, ptrType, name);
      if (address.getAddend() != 0)
        ptr = LLVM::GEPOp::create(b, loc, ptrType, i8, ptr,
                                  ArrayRef<LLVM::GEPArg>{address.getAddend()});
      // A 64-bit element stays a pointer field: LLVM 22's SPIR-V backend
      // emits an undefined id for ptrtoint of a constant GEP or add
      // (spirv-val rejects both).
      if (width == 8) {
        if (address.getGeneric() && state.target.castsGenericInitializers()) {
          ptrType = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic);
          ptr = LLVM::AddrSpaceCastOp::create(b, loc, ptrType, ptr);
        }
        fields.push_back(ptrType);
        values.push_back(ptr);
        at = offset + width;
        continue;
      }
      value = LLVM::PtrToIntOp::create(b, loc, i64, ptr);
    } else if (auto fn = module.lookupSymbol<func::FuncOp>(name); fn && !fn->hasAttr("ptx.entry")) {
      if (address.getAddend() != 0)
        return var.emitError("unsupported address of function '")
               << name << "' plus " << address.getAddend() << " in the initializer of '"
               << var.getSymName() << "'";
      value = FuncAddrOp::create(b, loc, i64, address.getSymbol());
    } else {
      return var.emitError("unsupported address of '")
             << name << "' (neither a variable nor a .func) in the initializer of '"
             << var.getSymName() << "'";
    }
    if (width != 8)
      value = LLVM::TruncOp::create(b, loc, element, value);
    fields.push_back(element);
    values.push_back(value);
    at = offset + width;
  }
  addBytes(at, bytes.size());
  auto type = LLVM::LLVMStructType::getLiteral(ctx, fields, /*isPacked=*/true);
  Value result = LLVM::UndefOp::create(b, loc, type);
  for (auto [index, value] : llvm::enumerate(values))
    result = LLVM::InsertValueOp::create(b, loc, result, value,
                                         ArrayRef<int64_t>{static_cast<int64_t>(index)});
  LLVM::ReturnOp::create(b, loc, result);
  global.setGlobalTypeAttr(TypeAttr::get(type));
  return success();
}

LogicalResult ConvertPTXToStdPass::convertVariables(ModuleOp module,
                                                    gpu::GPUModuleOp gpuModule,
                                                    PTXLoweringState &state) {
  OpBuilder b(gpuModule.getBodyRegion());
  // Every variable first: an initializer may hold the address of a later one.
  for (VarOp var : module.getOps<VarOp>())
    state.variables[var.getSymNameAttr()] = var;
  for (VarOp var : llvm::make_early_inc_range(module.getOps<VarOp>())) {
    if (var.getSpace() == StateSpace::Shared)
      continue;
    if (var.getSpace() != StateSpace::Global && var.getSpace() != StateSpace::Const)
      return var.emitError("unsupported module variable in state space '")
             << stringifyStateSpace(var.getSpace()) << "'";
    if (var.getCount() == 0)
      return var.emitError("unsupported unsized variable outside .shared");
    int64_t size = var.getCount() * var.getElementSize();
    mlir::Type type = LLVM::LLVMArrayType::get(b.getI8Type(), size);
    Attribute init;
    bool isExtern = var.getLinkage() && *var.getLinkage() == "extern";
    SmallVector<int8_t> bytes(size, 0);
    if (!isExtern) {
      if (auto data = var.getInit())
        llvm::copy(*data, bytes.begin());
      if (!var.getInitAddresses())
        init = DenseElementsAttr::get(RankedTensorType::get({size}, b.getI8Type()),
                                      ArrayRef<int8_t>(bytes));
    }
    bool isConst = var.getSpace() == StateSpace::Const;
    unsigned as = isConst ? state.addressSpaces.constant : state.addressSpaces.global;
    auto global = LLVM::GlobalOp::create(
        b, var.getLoc(), type, /*isConstant=*/false,
        isExtern ? LLVM::Linkage::External : LLVM::Linkage::External,
        var.getSymName(), init, std::max<int64_t>(var.getAlign(), 1), as);
    if (var.getInitAddresses() &&
        failed(buildAddressInitializer(var, global, bytes, module, state)))
      return failure();
    // __managed__: code emission tells the target (NVPTX prints
    // `.attribute(.managed)`); other targets' globals are plain memory.
    if (var.getManaged())
      global->setAttr("ptx.managed", b.getUnitAttr());
  }
  return success();
}

/// A `.func` becomes an internal llvm.func in the gpu.module with the same
/// blocks; its `.param` arguments and return value are plain values.
LogicalResult ConvertPTXToStdPass::convertDeviceFunction(func::FuncOp func,
                                                         gpu::GPUModuleOp gpuModule) {
  MLIRContext *ctx = func.getContext();
  FunctionType type = func.getFunctionType();
  if (type.getNumResults() > 1)
    return func.emitError("unsupported device function '")
           << func.getName() << "' with more than one return value";
  mlir::Type result = type.getNumResults() ? type.getResult(0) : LLVM::LLVMVoidType::get(ctx);
  auto fnType = LLVM::LLVMFunctionType::get(result, type.getInputs());
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(gpuModule.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, func.getLoc(), func.getName(), fnType,
                                     LLVM::Linkage::Internal);
  fn.getBody().getBlocks().splice(fn.getBody().end(), func.getBody().getBlocks());
  func.erase();
  return success();
}

FailureOr<gpu::GPUFuncOp>
ConvertPTXToStdPass::convertKernel(func::FuncOp func, gpu::GPUModuleOp gpuModule,
                                   PTXLoweringState &state) {
  MLIRContext *ctx = func.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(gpuModule.getBody());
  SmallVector<mlir::Type> inputs(func.getArgumentTypes());
  bool windowArg = sharedWindow == "kernel-arg";
  auto windowType = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.shared);
  if (windowArg)
    inputs.push_back(windowType);
  auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                       FunctionType::get(ctx, inputs, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  if (subgroupSize != 0)
    kernel->setAttr("intel_reqd_sub_group_size", b.getI32IntegerAttr(subgroupSize));
  // Replace the builder's empty body with the PTX function's blocks.
  Region &body = kernel.getBody();
  body.front().erase();
  body.getBlocks().splice(body.end(), func.getBody().getBlocks());
  Block &entry = body.front();
  Value window;
  if (windowArg) {
    window = entry.addArgument(windowType, func.getLoc());
  } else {
    b.setInsertionPointToStart(&entry);
    window = LLVM::AddressOfOp::create(b, func.getLoc(), windowType,
                                       "__zmlir_shared_window");
  }
  state.sharedWindows[kernel] = window;
  int64_t staticBytes = layoutSharedWindow(kernel, state);
  kernel->setAttr("zmlir.static_shared_bytes", b.getI64IntegerAttr(staticBytes));
  kernel->setAttr("zmlir.param_count", b.getI64IntegerAttr(func.getNumArguments()));
  if (Attribute reqntid = func->getAttr("ptx.reqntid"))
    kernel->setAttr("ptx.reqntid", reqntid);
  func.erase();
  return kernel;
}

void ConvertPTXToStdPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  if (sharedWindow != "global" && sharedWindow != "kernel-arg") {
    module.emitError("invalid shared-window '") << sharedWindow
                                                << "': expected 'global' or 'kernel-arg'";
    return signalPassFailure();
  }
  if (waveSize != 32 && waveSize != 64) {
    module.emitError("invalid wave-size ") << waveSize << ": expected 32 or 64";
    return signalPassFailure();
  }
  std::unique_ptr<TargetInfo> targetInfo = createTargetInfo(target, waveSize);
  AddressSpaceMap addressSpaces{genericAddressSpace, globalAddressSpace, sharedAddressSpace,
                                constAddressSpace, localAddressSpace};
  PTXLoweringState state(PTXLoweringOptions{*targetInfo, addressSpaces});

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "ptx");
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());

  if (failed(convertVariables(module, gpuModule, state)))
    return signalPassFailure();

  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  bool failedAny = false;
  for (func::FuncOp func : funcs) {
    if (func.isExternal()) {
      func.erase();
      continue;
    }
    if (!func->hasAttr("ptx.entry")) {
      if (failed(convertDeviceFunction(func, gpuModule)))
        failedAny = true;
      continue;
    }
    if (failed(convertKernel(func, gpuModule, state)))
      failedAny = true;
  }
  if (failedAny)
    return signalPassFailure();

  if (sharedWindow == "global") {
    OpBuilder gb(gpuModule.getBodyRegion());
    LLVM::GlobalOp::create(gb, module.getLoc(),
                           LLVM::LLVMArrayType::get(gb.getI8Type(), 0),
                           /*isConstant=*/false, LLVM::Linkage::External,
                           "__zmlir_shared_window", Attribute(), /*alignment=*/16,
                           state.addressSpaces.shared);
  }

  if (failed(expandIndirectCalls(gpuModule, state)))
    return signalPassFailure();

  ConversionTarget target(*ctx);
  configurePTXToStdConversionLegality(target);
  RewritePatternSet patterns(ctx);
  populatePTXToStdConversionPatterns(patterns, state);
  // A pattern that rejects an op says why ("unsupported ..."); the driver's
  // own "failed to legalize" follow-up would only repeat it.
  bool reportedUnsupported = false;
  ScopedDiagnosticHandler dropFollowUps(ctx, [&](Diagnostic &diag) {
    std::string message = diag.str();
    if (StringRef(message).starts_with("unsupported "))
      reportedUnsupported = true;
    else if (reportedUnsupported &&
             StringRef(message).starts_with("failed to legalize"))
      return success();
    return failure();
  });
  if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
    return signalPassFailure();
  state.target.finishTraps(gpuModule, state);

  for (VarOp var : llvm::make_early_inc_range(module.getOps<VarOp>()))
    var.erase();
}

} // namespace

void zmlir::configurePTXToStdConversionLegality(ConversionTarget &target) {
  target.addIllegalDialect<PTXDialect>();
  target.addLegalDialect<arith::ArithDialect, cf::ControlFlowDialect,
                         gpu::GPUDialect, LLVM::LLVMDialect, math::MathDialect,
                         ub::UBDialect>();
}

void zmlir::populatePTXToStdConversionPatterns(RewritePatternSet &patterns,
                                               const PTXLoweringState &state) {
  MLIRContext *ctx = patterns.getContext();
  populatePTXIntegerPatterns(patterns, state);
  populatePTXFloatPatterns(patterns, state);
  populatePTXWarpPatterns(patterns, state);
  patterns.add<BinaryOpLowering<AddOp>, BinaryOpLowering<CopysignOp>, SetOpLowering,
               SlctOpLowering, BinaryOpLowering<SubOp>,
               BinaryOpLowering<MinOp>, BinaryOpLowering<MaxOp>,
               BinaryOpLowering<AndOp>, BinaryOpLowering<OrOp>,
               BinaryOpLowering<XorOp>, DivRemLowering<DivOp>,
               DivRemLowering<RemOp>, MulOpLowering, MadOpLowering,
               FmaOpLowering, UnaryOpLowering<NegOp>, UnaryOpLowering<AbsOp>,
               UnaryOpLowering<NotOp>, ShiftOpLowering<ShlOp>,
               ShiftOpLowering<ShrOp>, SetpOpLowering, SelpOpLowering,
               MovOpLowering, CvtOpLowering, SregOpLowering, AddrOfOpLowering,
               CvtaOpLowering, LdParamOpLowering, StParamOpLowering, LdOpLowering, StOpLowering,
               AtomicLowering<AtomOp>, AtomicLowering<RedOp>,
               BraOpLowering, CondBraOpLowering, InstOpLowering, ReturnLowering<RetOp>,
               ReturnLowering<ExitOp>>(ctx, state);
  patterns.add<IsspacepOpLowering, PrefetchOpLowering>(ctx, state);
}
