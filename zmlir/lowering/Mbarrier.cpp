//===- Mbarrier.cpp - mbarrier and cp.async.mbarrier.arrive ---------------===//
//
// Where the target has mbarriers of its own (TargetInfo::emitNativeMbarrier:
// NVPTX), every mbarrier instruction is that. Elsewhere the barrier is its
// 64-bit word in shared memory, changed only by atomic compare-and-swap:
//
//   bits  0-20  pending arrivals of the current phase
//   bits 21-41  expected arrivals (what the pending count restarts at)
//   bits 42-62  pending transactions (tx-count, modulo 2^21)
//   bit  63     the current phase's parity
//
// An arrival, expect_tx and complete_tx are one update of the word (see
// updateWord): once neither arrivals nor transactions are pending the phase
// completes, in the same update: the parity flips, the pending arrivals
// restart at the expected count and the tx-count at 0. The state an arrival
// returns is the word it left before any completion (its parity names the
// phase arrived at; its pending count is what mbarrier.pending_count reads).
// A wait tests whether the barrier's parity has moved past the state's (or
// the given parity), after TargetInfo::emitMbarrierWaitTurn has let the
// other threads run where they do not run concurrently.
//
// cp.async copies synchronously off NVPTX (AsyncCopy.cpp), so the arrival
// cp.async.mbarrier.arrive promises once they complete is due at once:
// with .noinc an ordinary arrival, without it (a pending arrival added,
// then that one arrival) no change at all. A bulk copy's complete_tx is
// due once its bytes are written: emitMbarrierCompleteTx (Mbarrier.h).
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/Mbarrier.h"

#include "zmlir/lowering/Patterns.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

constexpr int64_t kFieldBits = 21;
constexpr int64_t kFieldMask = (int64_t(1) << kFieldBits) - 1;
constexpr int64_t kExpectedShift = kFieldBits;
constexpr int64_t kTxShift = 2 * kFieldBits;
constexpr int64_t kPhaseShift = 63;

/// One atomic update of the word at `ptr`:
///  1. read it (relaxed), then loop:
///  2. pending -= arrivals, expected -= dropped, tx += tx (each modulo 2^21);
///  3. with nothing pending, complete the phase: flip the parity, pending =
///     expected, tx = 0;
///  4. compare-and-swap (acquire-release at the CTA's scope) until no other
///     thread changed the word in between.
/// Returns the word of step 2 (before a completion): the arrival's state.
Value updateWord(ConversionPatternRewriter &b, Location loc, const PTXLoweringState &state,
                 Value ptr, Value arrivals, Value dropped, Value tx) {
  mlir::Type i64 = b.getI64Type();
  auto c = [&](int64_t v) { return intConst(b, loc, i64, v); };
  auto field = [&](Value word, int64_t shift) {
    return arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, word, c(shift)),
                                 c(kFieldMask));
  };
  auto masked = [&](Value v) { return arith::AndIOp::create(b, loc, v, c(kFieldMask)); };
  auto shl = [&](Value v, int64_t shift) { return arith::ShLIOp::create(b, loc, v, c(shift)); };
  auto orOf = [&](ArrayRef<Value> values) {
    Value r = values.front();
    for (Value v : values.drop_front())
      r = arith::OrIOp::create(b, loc, r, v);
    return r;
  };
  std::string scope = state.target.syncScopeName(Scope::CTA);
  // 1.
  Value initial = LLVM::LoadOp::create(b, loc, i64, ptr, /*alignment=*/8, false, false, false,
                                       false, LLVM::AtomicOrdering::monotonic, scope);
  Block *entry = b.getInsertionBlock();
  Block *exit = b.splitBlock(entry, b.getInsertionPoint());
  Block *loop = b.createBlock(exit, {i64}, {loc});
  Value old = loop->getArgument(0);
  // 2.
  Value pending = masked(arith::SubIOp::create(b, loc, field(old, 0), arrivals));
  Value expected = masked(arith::SubIOp::create(b, loc, field(old, kExpectedShift), dropped));
  Value txCount = masked(arith::AddIOp::create(b, loc, field(old, kTxShift), tx));
  Value phase = arith::AndIOp::create(b, loc, old, c(int64_t(1) << kPhaseShift));
  Value left = orOf({phase, shl(txCount, kTxShift), shl(expected, kExpectedShift), pending});
  // 3.
  Value done = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     arith::OrIOp::create(b, loc, pending, txCount), c(0));
  Value next = orOf({arith::XOrIOp::create(b, loc, phase, c(int64_t(1) << kPhaseShift)),
                     shl(expected, kExpectedShift), expected});
  Value word = arith::SelectOp::create(b, loc, done, next, left);
  // 4.
  Value pair = LLVM::AtomicCmpXchgOp::create(b, loc, ptr, old, word, LLVM::AtomicOrdering::acq_rel,
                                             LLVM::AtomicOrdering::monotonic, scope);
  Value now = LLVM::ExtractValueOp::create(b, loc, pair, ArrayRef<int64_t>{0});
  Value swapped = LLVM::ExtractValueOp::create(b, loc, pair, ArrayRef<int64_t>{1});
  cf::CondBranchOp::create(b, loc, swapped, exit, ValueRange{}, loop, ValueRange{now});
  b.setInsertionPointToEnd(entry);
  cf::BranchOp::create(b, loc, loop, ValueRange{initial});
  b.setInsertionPointToStart(exit);
  return left;
}

/// The parts every mbarrier pattern shares: the barrier's pointer and the
/// target's own instruction.
template <typename OpTy>
struct MbarrierPattern : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  /// The target's own `op` on the barrier at `ptr`: success with `result`
  /// set (null for none), or failure.
  LogicalResult native(OpTy op, OpBuilder &b, Value ptr, ValueRange args, Value &result) const {
    FailureOr<Value> r = this->state.target.emitNativeMbarrier(b, op, ptr, args);
    if (failed(r))
      return failure();
    result = *r;
    return success();
  }

  FailureOr<Value> barrier(OpTy op, OpBuilder &b, Value addr) const {
    return this->pointerTo(op, b, addr, op.getOffset(), op.getSpace());
  }

  Value i64Of(OpBuilder &b, Location loc, Value v) const {
    return arith::ExtUIOp::create(b, loc, b.getI64Type(), v);
  }
};

/// mbarrier.init: the word with phase 0, `count` expected and pending
/// arrivals and no transactions, stored atomically.
struct MbarrierInitOpLowering : MbarrierPattern<MbarrierInitOp> {
  using MbarrierPattern::MbarrierPattern;

  LogicalResult matchAndRewrite(MbarrierInitOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<Value> ptr = barrier(op, rewriter, adaptor.getAddr());
    if (failed(ptr))
      return failure();
    Value result;
    if (succeeded(native(op, rewriter, *ptr, adaptor.getCount(), result))) {
      rewriter.eraseOp(op);
      return success();
    }
    mlir::Type i64 = rewriter.getI64Type();
    Value count = arith::AndIOp::create(rewriter, loc, i64Of(rewriter, loc, adaptor.getCount()),
                                        intConst(rewriter, loc, i64, kFieldMask));
    Value word = arith::OrIOp::create(
        rewriter, loc, count,
        arith::ShLIOp::create(rewriter, loc, count, intConst(rewriter, loc, i64, kExpectedShift)));
    LLVM::StoreOp::create(rewriter, loc, word, *ptr, /*alignment=*/8, false, false, false,
                          LLVM::AtomicOrdering::monotonic, state.target.syncScopeName(Scope::CTA));
    rewriter.eraseOp(op);
    return success();
  }
};

/// mbarrier.inval: the target's own, or nothing (the word is memory again).
struct MbarrierInvalOpLowering : MbarrierPattern<MbarrierInvalOp> {
  using MbarrierPattern::MbarrierPattern;

  LogicalResult matchAndRewrite(MbarrierInvalOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> ptr = barrier(op, rewriter, adaptor.getAddr());
    if (failed(ptr))
      return failure();
    Value result;
    (void)native(op, rewriter, *ptr, {}, result);
    rewriter.eraseOp(op);
    return success();
  }
};

/// mbarrier.expect_tx / complete_tx: the tx-count raised or lowered.
struct MbarrierTxOpLowering : MbarrierPattern<MbarrierTxOp> {
  using MbarrierPattern::MbarrierPattern;

  LogicalResult matchAndRewrite(MbarrierTxOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<Value> ptr = barrier(op, rewriter, adaptor.getAddr());
    if (failed(ptr))
      return failure();
    Value result;
    if (succeeded(native(op, rewriter, *ptr, adaptor.getTxCount(), result))) {
      rewriter.eraseOp(op);
      return success();
    }
    if (op.getComplete()) {
      emitMbarrierCompleteTx(rewriter, loc, state, *ptr, adaptor.getTxCount());
      rewriter.eraseOp(op);
      return success();
    }
    mlir::Type i64 = rewriter.getI64Type();
    Value tx = arith::ExtSIOp::create(rewriter, loc, i64, adaptor.getTxCount());
    Value zero = intConst(rewriter, loc, i64, 0);
    updateWord(rewriter, loc, state, *ptr, zero, zero, tx);
    rewriter.eraseOp(op);
    return success();
  }
};

/// mbarrier.arrive{_drop}{.expect_tx}{.noComplete}: `count` arrivals (1
/// without one), as many dropped from the expected count with arrive_drop,
/// after the transactions of .expect_tx.
struct MbarrierArriveOpLowering : MbarrierPattern<MbarrierArriveOp> {
  using MbarrierPattern::MbarrierPattern;

  LogicalResult matchAndRewrite(MbarrierArriveOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<Value> ptr = barrier(op, rewriter, adaptor.getAddr());
    if (failed(ptr))
      return failure();
    SmallVector<Value> args;
    if (adaptor.getCount())
      args.push_back(adaptor.getCount());
    if (adaptor.getTxCount())
      args.push_back(adaptor.getTxCount());
    Value result;
    if (succeeded(native(op, rewriter, *ptr, args, result))) {
      rewriter.replaceOp(op, result);
      return success();
    }
    mlir::Type i64 = rewriter.getI64Type();
    Value zero = intConst(rewriter, loc, i64, 0);
    Value count = adaptor.getCount() ? i64Of(rewriter, loc, adaptor.getCount())
                                     : intConst(rewriter, loc, i64, 1);
    Value tx = adaptor.getTxCount() ? i64Of(rewriter, loc, adaptor.getTxCount()) : zero;
    rewriter.replaceOp(
        op, updateWord(rewriter, loc, state, *ptr, count, op.getDrop() ? count : zero, tx));
    return success();
  }
};

/// mbarrier.test_wait / try_wait{.parity}: whether the barrier's parity
/// differs from the state's (or from the given parity), read with acquire
/// after the target's wait turn. try_wait's time limit is 0 (PTX leaves it
/// to the system): it waits no longer than test_wait.
///
/// Where the turn waited for the whole block, a thread that finds a phase
/// incomplete twice in a row with the barrier's word unchanged in between
/// is spinning on a phase no thread can complete any more (all of them
/// waited at the turn's barrier, and no arrival came): the launch fails
/// instead of hanging. Each wait keeps the barrier (its address | 1) and
/// the word it last found incomplete in two `.local` slots of its
/// function, cleared when it finds the phase complete.
struct MbarrierTestWaitOpLowering : MbarrierPattern<MbarrierTestWaitOp> {
  using MbarrierPattern::MbarrierPattern;

  LogicalResult matchAndRewrite(MbarrierTestWaitOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<Value> ptr = barrier(op, rewriter, adaptor.getAddr());
    if (failed(ptr))
      return failure();
    SmallVector<Value> args{adaptor.getPhase()};
    if (adaptor.getSuspendHint())
      args.push_back(adaptor.getSuspendHint());
    Value result;
    if (succeeded(native(op, rewriter, *ptr, args, result))) {
      rewriter.replaceOp(op, result);
      return success();
    }
    mlir::Type i64 = rewriter.getI64Type();
    bool wholeBlock = state.target.emitMbarrierWaitTurn(rewriter, op);
    Value word = LLVM::LoadOp::create(rewriter, loc, i64, *ptr, /*alignment=*/8, false, false,
                                      false, false, LLVM::AtomicOrdering::acquire,
                                      state.target.syncScopeName(Scope::CTA));
    Value one = intConst(rewriter, loc, i64, 1);
    Value parity = arith::ShRUIOp::create(rewriter, loc, word,
                                          intConst(rewriter, loc, i64, kPhaseShift));
    Value waited = op.getParity()
                       ? arith::AndIOp::create(rewriter, loc,
                                               i64Of(rewriter, loc, adaptor.getPhase()), one)
                             .getResult()
                       : arith::ShRUIOp::create(rewriter, loc, adaptor.getPhase(),
                                                intConst(rewriter, loc, i64, kPhaseShift))
                             .getResult();
    Value complete = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, parity, waited);
    if (wholeBlock) {
      Value zero = intConst(rewriter, loc, i64, 0);
      Value lastBarrier, lastWord;
      {
        OpBuilder::InsertionGuard guard(rewriter);
        auto fn = op->getParentOfType<FunctionOpInterface>();
        rewriter.setInsertionPointToStart(&fn.getFunctionBody().front());
        lastBarrier = localAlloca(rewriter, loc, i64, 8, state);
        lastWord = localAlloca(rewriter, loc, i64, 8, state);
        LLVM::StoreOp::create(rewriter, loc, intConst(rewriter, loc, i64, 0), lastBarrier);
      }
      Value here = arith::OrIOp::create(rewriter, loc,
                                        LLVM::PtrToIntOp::create(rewriter, loc, i64, *ptr), one);
      Value same = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                LLVM::LoadOp::create(rewriter, loc, i64, lastBarrier), here),
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                LLVM::LoadOp::create(rewriter, loc, i64, lastWord), word));
      Value spinning = arith::AndIOp::create(
          rewriter, loc, same,
          arith::XOrIOp::create(rewriter, loc, complete,
                                intConst(rewriter, loc, rewriter.getI1Type(), 1)));
      Block *block = rewriter.getInsertionBlock();
      Block *cont = rewriter.splitBlock(block, rewriter.getInsertionPoint());
      Block *stuck = rewriter.createBlock(cont);
      state.target.emitTrap(rewriter, loc, state);
      rewriter.setInsertionPointToEnd(block);
      cf::CondBranchOp::create(rewriter, loc, spinning, stuck, ValueRange{}, cont, ValueRange{});
      rewriter.setInsertionPointToStart(cont);
      LLVM::StoreOp::create(
          rewriter, loc, arith::SelectOp::create(rewriter, loc, complete, zero, here), lastBarrier);
      LLVM::StoreOp::create(rewriter, loc, word, lastWord);
    }
    rewriter.replaceOp(op, complete);
    return success();
  }
};

/// mbarrier.pending_count: the state's pending arrivals.
struct MbarrierPendingCountOpLowering : MbarrierPattern<MbarrierPendingCountOp> {
  using MbarrierPattern::MbarrierPattern;

  LogicalResult matchAndRewrite(MbarrierPendingCountOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<Value> r = state.target.emitNativeMbarrier(rewriter, op, Value(), adaptor.getState());
    if (succeeded(r)) {
      rewriter.replaceOp(op, *r);
      return success();
    }
    Value count = arith::AndIOp::create(rewriter, loc, adaptor.getState(),
                                        intConst(rewriter, loc, rewriter.getI64Type(), kFieldMask));
    rewriter.replaceOp(op, arith::TruncIOp::create(rewriter, loc, rewriter.getI32Type(), count));
    return success();
  }
};

/// cp.async.mbarrier.arrive{.noinc}: the target's own, or (the copies being
/// complete) one arrival with .noinc and nothing without.
struct CpAsyncMbarrierArriveOpLowering : MbarrierPattern<CpAsyncMbarrierArriveOp> {
  using MbarrierPattern::MbarrierPattern;

  LogicalResult matchAndRewrite(CpAsyncMbarrierArriveOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<Value> ptr = barrier(op, rewriter, adaptor.getAddr());
    if (failed(ptr))
      return failure();
    Value result;
    if (succeeded(native(op, rewriter, *ptr, {}, result)) || !op.getNoinc()) {
      rewriter.eraseOp(op);
      return success();
    }
    mlir::Type i64 = rewriter.getI64Type();
    Value zero = intConst(rewriter, loc, i64, 0);
    updateWord(rewriter, loc, state, *ptr, intConst(rewriter, loc, i64, 1), zero, zero);
    rewriter.eraseOp(op);
    return success();
  }
};

/// fence.mbarrier_init.release.cluster: the target's own, or a release
/// fence at the CTA's scope (no cluster has more than one CTA there).
struct FenceMbarrierInitOpLowering : PTXPattern<FenceMbarrierInitOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(FenceMbarrierInitOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (failed(state.target.emitNativeMbarrier(rewriter, op, Value(), {})))
      LLVM::FenceOp::create(rewriter, op.getLoc(), LLVM::AtomicOrdering::release,
                            state.target.syncScopeName(Scope::CTA));
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void zmlir::emitMbarrierCompleteTx(ConversionPatternRewriter &b, Location loc,
                                   const PTXLoweringState &state, Value ptr, Value bytes) {
  mlir::Type i64 = b.getI64Type();
  Value zero = intConst(b, loc, i64, 0);
  Value tx = arith::SubIOp::create(b, loc, zero, arith::ExtSIOp::create(b, loc, i64, bytes));
  updateWord(b, loc, state, ptr, zero, zero, tx);
}

void zmlir::populatePTXMbarrierPatterns(RewritePatternSet &patterns,
                                        const PTXLoweringState &state) {
  patterns.add<MbarrierInitOpLowering, MbarrierInvalOpLowering, MbarrierTxOpLowering,
               MbarrierArriveOpLowering, MbarrierTestWaitOpLowering, MbarrierPendingCountOpLowering,
               CpAsyncMbarrierArriveOpLowering, FenceMbarrierInitOpLowering>(patterns.getContext(),
                                                                             state);
}
