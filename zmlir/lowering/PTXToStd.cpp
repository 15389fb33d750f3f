//===- PTXToStd.cpp - Lower the ptx dialect to upstream dialects ----------===//
//
// PTX kernels become `gpu.func` kernels in one `gpu.module`; each ptx op is
// rewritten to arith/math/cf/gpu/llvm ops with PTX's exact semantics where
// LLVM's differ (shift amounts past the width, division by zero, float to
// integer saturation, out-of-range shuffles). Anything not handled yet is a
// `unsupported ...` error at the op's PTX source location.
//
//===----------------------------------------------------------------------===//

#include "zmlir/dialects/ptx/PTXDialect.h"
#include "zmlir/lowering/Passes.h"

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

namespace zmlir {
struct PTXLoweringState {
  AddressSpaceMap addressSpaces;
  /// Base of the shared window, per kernel (the gpu.func operation).
  llvm::DenseMap<Operation *, Value> sharedWindows;
  /// Offset of each shared variable in a kernel's window.
  llvm::DenseMap<std::pair<Operation *, StringAttr>, int64_t> sharedOffsets;
  /// Module-scope variables by name.
  llvm::DenseMap<StringAttr, VarOp> variables;
};
} // namespace zmlir

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value intConst(OpBuilder &b, Location loc, mlir::Type type, int64_t value) {
  return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
}

Value floatConst(OpBuilder &b, Location loc, mlir::Type type, double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

unsigned widthOf(mlir::Type type) { return type.getIntOrFloatBitWidth(); }

/// The MLIR type of memory accessed by a PTX data type.
mlir::Type memoryType(MLIRContext *ctx, DataType type) {
  switch (type) {
  case DataType::F16:
    return Float16Type::get(ctx);
  case DataType::BF16:
    return BFloat16Type::get(ctx);
  case DataType::F32:
    return Float32Type::get(ctx);
  case DataType::F64:
    return Float64Type::get(ctx);
  default:
    return IntegerType::get(ctx, getTypeBitWidth(type));
  }
}

/// Reinterprets `value` as an integer of the same width.
Value asInteger(OpBuilder &b, Location loc, Value value) {
  mlir::Type type = value.getType();
  if (type.isInteger())
    return value;
  return arith::BitcastOp::create(
      b, loc, b.getIntegerType(widthOf(type)), value);
}

/// Converts `value` to `target` the way a PTX register move does when the
/// instruction type and the register differ: bitcast at equal width, else
/// truncate or extend (signed when `isSigned`) the bits.
Value adjustBits(OpBuilder &b, Location loc, Value value, mlir::Type target,
                 bool isSigned) {
  mlir::Type source = value.getType();
  if (source == target)
    return value;
  unsigned from = widthOf(source), to = widthOf(target);
  if (from == to)
    return arith::BitcastOp::create(b, loc, target, value);
  Value bits = asInteger(b, loc, value);
  mlir::Type intTarget = b.getIntegerType(to);
  if (to < from)
    bits = arith::TruncIOp::create(b, loc, intTarget, bits);
  else if (isSigned)
    bits = arith::ExtSIOp::create(b, loc, intTarget, bits);
  else
    bits = arith::ExtUIOp::create(b, loc, intTarget, bits);
  if (target.isInteger())
    return bits;
  return arith::BitcastOp::create(b, loc, target, bits);
}

/// Flushes a subnormal f32 to a zero of the same sign (PTX `.ftz`).
Value flushSubnormal(OpBuilder &b, Location loc, Value value) {
  if (!value.getType().isF32())
    return value;
  mlir::Type i32 = b.getI32Type();
  Value bits = arith::BitcastOp::create(b, loc, i32, value);
  Value exponent = arith::AndIOp::create(b, loc, bits, intConst(b, loc, i32, 0x7f800000));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            exponent, intConst(b, loc, i32, 0));
  Value sign = arith::AndIOp::create(
      b, loc, bits, intConst(b, loc, i32, static_cast<int32_t>(0x80000000u)));
  Value zero = arith::BitcastOp::create(b, loc, value.getType(), sign);
  return arith::SelectOp::create(b, loc, isSubnormal, zero, value);
}

/// Clamps a float to [0, 1] with NaN going to 0 (PTX `.sat` on floats).
Value saturateFloat(OpBuilder &b, Location loc, Value value) {
  mlir::Type type = value.getType();
  Value lo = arith::MaxNumFOp::create(b, loc, value, floatConst(b, loc, type, 0.0));
  return arith::MinNumFOp::create(b, loc, lo, floatConst(b, loc, type, 1.0));
}

LLVM::AtomicOrdering orderingFor(Semantics sem) {
  switch (sem) {
  case Semantics::Acquire:
    return LLVM::AtomicOrdering::acquire;
  case Semantics::Release:
    return LLVM::AtomicOrdering::release;
  case Semantics::AcqRel:
    return LLVM::AtomicOrdering::acq_rel;
  default:
    return LLVM::AtomicOrdering::monotonic;
  }
}

/// Base class of the ptx lowering patterns: gives access to the shared state
/// and a uniform way to reject what is not supported yet.
template <typename OpTy>
struct PTXPattern : OpConversionPattern<OpTy> {
  PTXPattern(MLIRContext *ctx, const PTXLoweringState &state)
      : OpConversionPattern<OpTy>(ctx), state(state) {}

  LogicalResult unsupported(OpTy op, const Twine &what) const {
    op->emitError("unsupported ") << what;
    return failure();
  }

  /// The shared window base of the kernel containing `op`.
  Value sharedWindow(Operation *op) const {
    auto func = op->template getParentOfType<gpu::GPUFuncOp>();
    return state.sharedWindows.lookup(func);
  }

  /// A pointer to `[address + offset]` in `space`.
  FailureOr<Value> pointerTo(OpTy op, OpBuilder &b, Value address,
                             int64_t offset, StateSpace space) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    mlir::Type i64 = b.getI64Type();
    Value wide = address.getType() == i64
                     ? address
                     : arith::ExtUIOp::create(b, loc, i64, address).getResult();
    if (offset != 0)
      wide = arith::AddIOp::create(b, loc, wide, intConst(b, loc, i64, offset));
    const AddressSpaceMap &as = state.addressSpaces;
    switch (space) {
    case StateSpace::None:
      return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, as.generic), wide)
          .getResult();
    case StateSpace::Global:
      return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, as.global), wide)
          .getResult();
    case StateSpace::Const:
      return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, as.constant), wide)
          .getResult();
    case StateSpace::Shared: {
      // Shared addresses are offsets into the block's window.
      Value window = sharedWindow(op);
      return LLVM::GEPOp::create(b, loc, window.getType(), b.getI8Type(),
                                 window, ValueRange{wide})
          .getResult();
    }
    default:
      (void)unsupported(op, Twine("state space '") +
                                stringifyStateSpace(space) + "' in memory access");
      return failure();
    }
  }

  const PTXLoweringState &state;
};

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

/// add, sub, min, max, and, or, xor on integers, predicates and floats.
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
      else if (name == "min")
        r = arith::MinNumFOp::create(rewriter, loc, a, b);
      else if (name == "max")
        r = arith::MaxNumFOp::create(rewriter, loc, a, b);
      else
        return this->unsupported(op, Twine("float '") + name + "'");
      if (op.getFtz())
        r = flushSubnormal(rewriter, loc, r);
      if (op.getSat())
        r = saturateFloat(rewriter, loc, r);
      rewriter.replaceOp(op, r);
      return success();
    }
    if (op.getSat())
      return this->unsupported(op, Twine("'.sat' on integer '") + name + "'");
    mlir::Type resultType = op.getType() == DataType::None ? a.getType() : a.getType();
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
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, resultType, false));
    return success();
  }
};

/// div and rem. LLVM makes integer division by zero (and INT_MIN / -1)
/// undefined behaviour; PTX only leaves the value unspecified. We divide by
/// 1 instead and return all ones for `x / 0` and `x` for `x % 0`, so a kernel
/// never traps.
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
        result = arith::SelectOp::create(rewriter, loc, isZero, a, remOrZero);
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
      result = arith::SelectOp::create(rewriter, loc, isZero, a, r);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The high half (or full double-width product) of an integer multiply.
Value integerProduct(OpBuilder &b, Location loc, Value x, Value y, MulMode mode,
                     bool isSigned) {
  switch (mode) {
  case MulMode::Hi:
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
                                          isSignedType(op.getType())));
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
    if (op.getSat())
      return unsupported(op, "'.sat' on integer 'mad'");
    Location loc = op.getLoc();
    Value product = integerProduct(rewriter, loc, adaptor.getA(), adaptor.getB(),
                                   op.getMode(), isSignedType(op.getType()));
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
      if (!pred || (op.getType() != DataType::F32 && op.getType() != DataType::F64))
        return unsupported(op, Twine("comparison '.") + stringifyCmp(op.getCmp()) +
                                   "." + stringifyDataType(op.getType()) + "'");
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

/// Float to integer conversion with PTX's saturation: NaN gives 0, values
/// beyond the range give the nearest representable integer.
///  1. round to an integral float by the `.rXi` mode (default `.rzi`);
///  2. convert with fptosi/fptoui (poison only when out of range);
///  3. select the clamped constants for NaN and out-of-range inputs.
Value floatToInteger(OpBuilder &b, Location loc, Value x, Rounding rnd,
                     mlir::Type intType, bool isSigned) {
  switch (rnd) {
  case Rounding::RNI:
    x = math::RoundEvenOp::create(b, loc, x);
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
  return arith::SelectOp::create(b, loc, isNaN, intConst(b, loc, intType, 0), r);
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
    if (op.getRelu() || (op.getSat() && !isFloatType(dst)))
      return unsupported(op, Twine("'cvt' modifier '") +
                                 (op.getRelu() ? ".relu" : ".sat") + "'");
    bool srcFloat = isFloatType(src), dstFloat = isFloatType(dst);
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
      r = adjustBits(rewriter, loc, x, dstType, isSignedType(src));
    } else if (!srcFloat && dstFloat) {
      if (rnd != Rounding::None && rnd != Rounding::RN)
        return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                   "' converting integer to float");
      r = isSignedType(src) ? arith::SIToFPOp::create(rewriter, loc, dstType, x).getResult()
                            : arith::UIToFPOp::create(rewriter, loc, dstType, x).getResult();
    } else if (srcFloat && !dstFloat) {
      if (rnd != Rounding::None && rnd != Rounding::RZI && rnd != Rounding::RNI &&
          rnd != Rounding::RMI && rnd != Rounding::RPI)
        return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                   "' converting float to integer");
      if (widthOf(srcType) < 32)
        x = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), x);
      r = floatToInteger(rewriter, loc, x, rnd, dstType, isSignedType(dst));
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
          r = math::RoundEvenOp::create(rewriter, loc, x);
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
        if (rnd != Rounding::None && rnd != Rounding::RN)
          return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                     "' on a narrowing float conversion");
        r = arith::TruncFOp::create(rewriter, loc, dstType, x);
      }
    }
    if (dstFloat && op.getFtz())
      r = flushSubnormal(rewriter, loc, r);
    if (dstFloat && op.getSat())
      r = saturateFloat(rewriter, loc, r);
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, resultType, isSignedType(dst)));
    return success();
  }
};

struct SregOpLowering : PTXPattern<SregOp> {
  using PTXPattern::PTXPattern;

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
      index = gpu::LaneIdOp::create(rewriter, loc, /*upper_bound=*/nullptr);
      break;
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
    default:
      return unsupported(op, Twine("'cvta' for state space '") +
                                 stringifyStateSpace(op.getSpace()) + "'");
    }
  }
};

struct LdParamOpLowering : PTXPattern<LdParamOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(LdParamOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value param = adaptor.getParam();
    if (op.getOffset() != 0 || !param.getType().isIntOrFloat())
      return unsupported(op, "'ld.param' of part of an aggregate parameter");
    rewriter.replaceOp(op, adjustBits(rewriter, op.getLoc(), param,
                                      op.getRes().getType(), isSignedType(op.getType())));
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
      Value v = LLVM::LoadOp::create(rewriter, loc, elem, *ptr, align, isVolatile,
                                     false, false, false, accessOrdering(op.getSem()));
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
      LLVM::StoreOp::create(rewriter, loc, values.front(), *ptr, align, isVolatile,
                            false, false, accessOrdering(op.getSem()));
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

struct AtomOpLowering : PTXPattern<AtomOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(AtomOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DataType type = op.getType();
    bool isFloat = isFloatType(type);
    if (isFloat && !(op.getOp() == AtomicOp::Add || op.getOp() == AtomicOp::Exch))
      return unsupported(op, Twine("float atomic '") + stringifyAtomicOp(op.getOp()) + "'");
    if (type == DataType::F16x2 || type == DataType::BF16x2 || type == DataType::B128)
      return unsupported(op, Twine("atomic type '.") + stringifyDataType(type) + "'");
    FailureOr<Value> ptr =
        pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(), op.getSpace());
    if (failed(ptr))
      return failure();
    mlir::Type elem = memoryType(rewriter.getContext(), type);
    Value b = adjustBits(rewriter, loc, adaptor.getB(), elem, false);
    LLVM::AtomicOrdering ordering = orderingFor(op.getSem());
    Value r;
    if (op.getOp() == AtomicOp::Cas) {
      Value c = adjustBits(rewriter, loc, adaptor.getC(), elem, false);
      LLVM::AtomicOrdering failure = ordering == LLVM::AtomicOrdering::acq_rel ||
                                             ordering == LLVM::AtomicOrdering::acquire
                                         ? LLVM::AtomicOrdering::acquire
                                         : LLVM::AtomicOrdering::monotonic;
      if (ordering == LLVM::AtomicOrdering::release)
        failure = LLVM::AtomicOrdering::monotonic;
      Value pair = LLVM::AtomicCmpXchgOp::create(rewriter, loc, *ptr, b, c, ordering, failure);
      r = LLVM::ExtractValueOp::create(rewriter, loc, pair, ArrayRef<int64_t>{0});
    } else {
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
      r = LLVM::AtomicRMWOp::create(rewriter, loc, bin, *ptr, b, ordering);
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, op.getRes().getType(), false));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Synchronisation and warp-level ops
//===----------------------------------------------------------------------===//

std::optional<int64_t> constantInt(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

struct BarSyncOpLowering : PTXPattern<BarSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(BarSyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> id = constantInt(adaptor.getBarrier());
    if (!id || *id != 0 || adaptor.getCount())
      return unsupported(op, "'bar.sync' on a barrier other than 0 or with a "
                             "thread count");
    gpu::BarrierOp::create(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

/// shfl.sync with the whole warp as one segment: `c` must be the constant
/// nvcc emits for width 32 (0x1f: clamp 31, segment mask 0; or 0 for up).
/// Out-of-range source lanes read their own value, like PTX.
struct ShflSyncOpLowering : PTXPattern<ShflSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(ShflSyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    std::optional<int64_t> c = constantInt(adaptor.getC());
    int64_t expected = op.getMode() == ShflMode::Up ? 0 : 0x1f;
    if (!c || *c != expected)
      return unsupported(op, "'shfl.sync' over a segment narrower than the warp "
                             "(c operand is not a constant full-warp mask)");
    gpu::ShuffleMode mode;
    switch (op.getMode()) {
    case ShflMode::Up:
      mode = gpu::ShuffleMode::UP;
      break;
    case ShflMode::Down:
      mode = gpu::ShuffleMode::DOWN;
      break;
    case ShflMode::Bfly:
      mode = gpu::ShuffleMode::XOR;
      break;
    case ShflMode::Idx:
      mode = gpu::ShuffleMode::IDX;
      break;
    }
    Value a = adaptor.getA();
    Value width = intConst(rewriter, loc, rewriter.getI32Type(), 32);
    auto shuffle = gpu::ShuffleOp::create(rewriter, loc, a, adaptor.getB(), width, mode);
    Value d = arith::SelectOp::create(rewriter, loc, shuffle.getValid(),
                                      shuffle.getShuffleResult(), a);
    rewriter.replaceOp(op, {d, shuffle.getValid()});
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

  LogicalResult
  matchAndRewrite(InstOp op, OpAdaptor,
                  ConversionPatternRewriter &) const override {
    std::string name = op.getOpcode().str();
    for (Attribute mod : op.getModifiers())
      name += "." + cast<StringAttr>(mod).getValue().ltrim('.').str();
    return unsupported(op, Twine("instruction '") + name + "'");
  }
};

template <typename OpTy>
struct ReturnLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<gpu::ReturnOp>(op);
    return success();
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
  LogicalResult convertVariables(ModuleOp module, gpu::GPUModuleOp gpuModule,
                                 PTXLoweringState &state);
  FailureOr<gpu::GPUFuncOp> convertKernel(func::FuncOp func,
                                          gpu::GPUModuleOp gpuModule,
                                          PTXLoweringState &state);
};

LogicalResult ConvertPTXToStdPass::convertVariables(ModuleOp module,
                                                    gpu::GPUModuleOp gpuModule,
                                                    PTXLoweringState &state) {
  OpBuilder b(gpuModule.getBodyRegion());
  for (VarOp var : llvm::make_early_inc_range(module.getOps<VarOp>())) {
    state.variables[var.getSymNameAttr()] = var;
    if (var.getSpace() == StateSpace::Shared)
      continue;
    if (var.getSpace() != StateSpace::Global && var.getSpace() != StateSpace::Const)
      return var.emitError("unsupported module variable in state space '")
             << stringifyStateSpace(var.getSpace()) << "'";
    if (var.getCount() == 0)
      return var.emitError("unsupported unsized variable outside .shared");
    int64_t size = var.getCount() * var.getElementSize();
    auto type = LLVM::LLVMArrayType::get(b.getI8Type(), size);
    Attribute init;
    bool isExtern = var.getLinkage() && *var.getLinkage() == "extern";
    if (!isExtern) {
      SmallVector<int8_t> bytes(size, 0);
      if (auto data = var.getInit())
        llvm::copy(*data, bytes.begin());
      init = DenseElementsAttr::get(RankedTensorType::get({size}, b.getI8Type()),
                                    ArrayRef<int8_t>(bytes));
    }
    bool isConst = var.getSpace() == StateSpace::Const;
    unsigned as = isConst ? state.addressSpaces.constant : state.addressSpaces.global;
    auto global = LLVM::GlobalOp::create(
        b, var.getLoc(), type, /*isConstant=*/false,
        isExtern ? LLVM::Linkage::External : LLVM::Linkage::External,
        var.getSymName(), init, std::max<int64_t>(var.getAlign(), 1), as);
    (void)global;
  }
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
  PTXLoweringState state;
  state.addressSpaces = {genericAddressSpace, globalAddressSpace,
                         sharedAddressSpace, constAddressSpace};

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
      func.emitError("unsupported device function '")
          << func.getName() << "' (.func and call are not lowered yet)";
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
  patterns.add<BinaryOpLowering<AddOp>, BinaryOpLowering<SubOp>,
               BinaryOpLowering<MinOp>, BinaryOpLowering<MaxOp>,
               BinaryOpLowering<AndOp>, BinaryOpLowering<OrOp>,
               BinaryOpLowering<XorOp>, DivRemLowering<DivOp>,
               DivRemLowering<RemOp>, MulOpLowering, MadOpLowering,
               FmaOpLowering, UnaryOpLowering<NegOp>, UnaryOpLowering<AbsOp>,
               UnaryOpLowering<NotOp>, ShiftOpLowering<ShlOp>,
               ShiftOpLowering<ShrOp>, SetpOpLowering, SelpOpLowering,
               MovOpLowering, CvtOpLowering, SregOpLowering, AddrOfOpLowering,
               CvtaOpLowering, LdParamOpLowering, LdOpLowering, StOpLowering,
               AtomOpLowering, BarSyncOpLowering, ShflSyncOpLowering,
               BraOpLowering, CondBraOpLowering, InstOpLowering, ReturnLowering<RetOp>,
               ReturnLowering<ExitOp>>(ctx, state);
}
