//===- Atomics.cpp - atom and red -----------------------------------------===//
//
// atom and red: LLVM atomics with PTX's ordering and scope, the target's own
// instruction where an LLVM atomic would lose them (TargetInfo), and a
// compare-and-swap loop where the target has no such atomic (16-bit cas and
// exch, f16/bf16 adds, the flushing f32 add).
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/FloatRounding.h"
#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

/// `x + y` of two f16 or bf16 values given as i16 bits, rounded to nearest
/// even: the f32 sum of two 11- (8-) bit significands rounded once more to
/// 11 (8) bits is the correctly rounded sum (24 >= 2p + 2), subnormals
/// included. A NaN sum is NVIDIA's canonical NaN, 0x7fff.
Value halfAdd(OpBuilder &b, Location loc, Value x, Value y, bool bf16) {
  mlir::Type i16 = b.getI16Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
  auto widen = [&](Value bits) -> Value {
    if (bf16)
      return arith::BitcastOp::create(
          b, loc, f32,
          arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, bits),
                                intConst(b, loc, i32, 16)));
    Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
    return arith::ExtFOp::create(b, loc, f32, half);
  };
  Value sum = arith::AddFOp::create(b, loc, widen(x), widen(y));
  mlir::Type half = bf16 ? mlir::Type(b.getBF16Type()) : mlir::Type(b.getF16Type());
  Value r = asInteger(b, loc, narrowFloat(b, loc, sum, half, Rounding::RN));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, sum, sum);
  return arith::SelectOp::create(b, loc, isNaN, intConst(b, loc, i16, 0x7fff), r);
}

/// The compare-and-swap loop of an atomic without a native form
/// (TargetInfo::needsAtomicCasLoop) on the 32-bit word at `word`; a 16-bit
/// operand sits `shift` (an i32: 0 or 16) bits up in it. Returns the old
/// value as the bits of `type` (i16 or i32). `flushF32` flushes the
/// subnormal operands and result of an f32 add.
Value emitAtomicCasLoop(ConversionPatternRewriter &rewriter, Location loc,
                        const PTXLoweringState &state, Value word, Value shift, AtomicOp op,
                        DataType type, Value b, Value c, LLVM::AtomicOrdering ordering,
                        StringRef scope, bool flushF32) {
  // 1. Load the word; 2. in the loop, compute the new value of the operand's
  // bits from the word last seen and try to swap it in; 3. a failed swap
  // returns the word that is there now, and the loop tries again with it.
  mlir::Type i16 = rewriter.getI16Type(), i32 = rewriter.getI32Type();
  bool bf16 = type == DataType::BF16 || type == DataType::BF16x2;
  unsigned width = getTypeBitWidth(type) == 64 ? 64 : 32;
  mlir::Type wordType = rewriter.getIntegerType(width);
  Value initial = LLVM::LoadOp::create(rewriter, loc, wordType, word, /*alignment=*/width / 8,
                                       /*isVolatile=*/false, /*isNonTemporal=*/false,
                                       /*isInvariant=*/false, /*isInvariantGroup=*/false,
                                       LLVM::AtomicOrdering::monotonic, scope);
  Block *entry = rewriter.getInsertionBlock();
  Block *exit = rewriter.splitBlock(entry, rewriter.getInsertionPoint());
  Block *loop = rewriter.createBlock(exit, TypeRange{wordType}, {loc});
  Value seen = loop->getArgument(0);
  Value old = shift ? arith::TruncIOp::create(rewriter, loc, i16,
                                              arith::ShRUIOp::create(rewriter, loc, seen, shift))
                          .getResult()
                    : seen;
  Value updated;
  using IP = arith::CmpIPredicate;
  if (op == AtomicOp::Add && (type == DataType::F32 || type == DataType::F64)) {
    mlir::Type f = type == DataType::F32 ? mlir::Type(rewriter.getF32Type())
                                         : mlir::Type(rewriter.getF64Type());
    auto flush = [&](Value v) { return flushF32 ? flushSubnormal(rewriter, loc, v) : v; };
    Value x = flush(arith::BitcastOp::create(rewriter, loc, f, old));
    Value y = flush(arith::BitcastOp::create(rewriter, loc, f, b));
    Value sum = flush(arith::AddFOp::create(rewriter, loc, x, y));
    updated = arith::BitcastOp::create(rewriter, loc, wordType, sum);
  } else if (op == AtomicOp::Inc || op == AtomicOp::Dec) {
    // inc: old >= b ? 0 : old + 1; dec: old == 0 || old > b ? b : old - 1.
    Value zero = intConst(rewriter, loc, wordType, 0), one = intConst(rewriter, loc, wordType, 1);
    if (op == AtomicOp::Inc) {
      Value wrap = arith::CmpIOp::create(rewriter, loc, IP::uge, old, b);
      updated = arith::SelectOp::create(rewriter, loc, wrap, zero,
                                        arith::AddIOp::create(rewriter, loc, old, one));
    } else {
      Value wrap = arith::OrIOp::create(rewriter, loc,
                                        arith::CmpIOp::create(rewriter, loc, IP::eq, old, zero),
                                        arith::CmpIOp::create(rewriter, loc, IP::ugt, old, b));
      updated = arith::SelectOp::create(rewriter, loc, wrap, b,
                                        arith::SubIOp::create(rewriter, loc, old, one));
    }
  } else if (op == AtomicOp::Add && shift) {
    updated = halfAdd(rewriter, loc, old, b, bf16);
  } else if (op == AtomicOp::Add) {
    // Packed pairs: each half separately.
    auto part = [&](Value v, int64_t at) -> Value {
      return arith::TruncIOp::create(
          rewriter, loc, i16,
          arith::ShRUIOp::create(rewriter, loc, v, intConst(rewriter, loc, i32, at)));
    };
    Value lo = halfAdd(rewriter, loc, part(old, 0), part(b, 0), bf16);
    Value hi = halfAdd(rewriter, loc, part(old, 16), part(b, 16), bf16);
    updated = arith::OrIOp::create(
        rewriter, loc, arith::ExtUIOp::create(rewriter, loc, i32, lo),
        arith::ShLIOp::create(rewriter, loc, arith::ExtUIOp::create(rewriter, loc, i32, hi),
                              intConst(rewriter, loc, i32, 16)));
  } else if (op == AtomicOp::Cas) {
    Value equal = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, old, b);
    updated = arith::SelectOp::create(rewriter, loc, equal, c, old);
  } else {
    updated = b; // exch
  }
  Value next = updated;
  if (shift) {
    Value mask = arith::ShLIOp::create(rewriter, loc, intConst(rewriter, loc, i32, 0xffff), shift);
    Value rest = arith::AndIOp::create(
        rewriter, loc, seen,
        arith::XOrIOp::create(rewriter, loc, mask, intConst(rewriter, loc, i32, -1)));
    next = arith::OrIOp::create(
        rewriter, loc, rest,
        arith::ShLIOp::create(rewriter, loc, arith::ExtUIOp::create(rewriter, loc, i32, updated),
                              shift));
  }
  LLVM::AtomicOrdering failure = ordering == LLVM::AtomicOrdering::acq_rel ||
                                         ordering == LLVM::AtomicOrdering::acquire
                                     ? LLVM::AtomicOrdering::acquire
                                     : LLVM::AtomicOrdering::monotonic;
  Value pair = LLVM::AtomicCmpXchgOp::create(rewriter, loc, word, seen, next, ordering, failure,
                                             scope);
  Value now = LLVM::ExtractValueOp::create(rewriter, loc, pair, ArrayRef<int64_t>{0});
  Value swapped = LLVM::ExtractValueOp::create(rewriter, loc, pair, ArrayRef<int64_t>{1});
  cf::CondBranchOp::create(rewriter, loc, swapped, exit, ValueRange{}, loop, ValueRange{now});
  rewriter.setInsertionPointToEnd(entry);
  cf::BranchOp::create(rewriter, loc, loop, ValueRange{initial});
  rewriter.setInsertionPointToStart(exit);
  return old;
}

/// atom and red (red is atom without the old value): LLVM atomics with
/// PTX's ordering and scope. Without an ordering PTX atomics are relaxed,
/// without a scope .gpu. On NVPTX, what LLVM 22's backend would emit weaker
/// or different is the target's own instruction (TargetInfo::hasNativeAtomic).
template <typename OpTy>
struct AtomicLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;
  using PTXPattern<OpTy>::unsupported;
  using PTXPattern<OpTy>::pointerTo;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
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
        addr = arith::AddIOp::create(rewriter, loc, addr,
                                     intConst(rewriter, loc, i64, op.getOffset()));
      Value shift;
      unsigned width = getTypeBitWidth(type);
      if (width == 16) {
        Value half = arith::AndIOp::create(rewriter, loc, addr, intConst(rewriter, loc, i64, 2));
        shift = arith::ShLIOp::create(rewriter, loc,
                                      arith::TruncIOp::create(rewriter, loc, i32, half),
                                      intConst(rewriter, loc, i32, 3));
        addr = arith::AndIOp::create(rewriter, loc, addr,
                                     intConst(rewriter, loc, i64, ~int64_t(3)));
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
      Value old = emitAtomicCasLoop(rewriter, loc, this->state, *word, shift, op.getOp(), type, b,
                                    c, orderingFor(op.getSem()),
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
        return unsupported(op,
                           Twine("atomic in state space '.") + stringifyStateSpace(space) + "'");
      FailureOr<Value> ptr = pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(), space);
      if (failed(ptr))
        return failure();
      mlir::Type bits = rewriter.getIntegerType(getTypeBitWidth(type));
      Value b = adjustBits(rewriter, loc, adaptor.getB(), bits, false);
      Value c;
      if constexpr (std::is_same_v<OpTy, AtomOp>)
        if (adaptor.getC())
          c = adjustBits(rewriter, loc, adaptor.getC(), bits, false);
      constexpr bool withResult = std::is_same_v<OpTy, AtomOp>;
      Value old = this->state.target.emitNativeAtomic(rewriter, loc, *ptr, space, op.getOp(), type,
                                                      op.getSem(), op.getScope(), b, c, withResult);
      if constexpr (withResult)
        rewriter.replaceOp(op, adjustBits(rewriter, loc, old, op.getRes().getType(), false));
      else
        rewriter.eraseOp(op);
      return success();
    }
    if (type == DataType::B128 || type == DataType::F16x2 || type == DataType::BF16x2)
      return unsupported(op, Twine("atomic type '.") + stringifyDataType(type) + "'");
    FailureOr<Value> ptr = pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(),
                                     op.getSpace());
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

} // namespace

void zmlir::populatePTXAtomicPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<AtomicLowering<AtomOp>, AtomicLowering<RedOp>>(patterns.getContext(), state);
}
