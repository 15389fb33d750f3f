//===- Control.cpp - Branches, ret, trap, barriers, fences ----------------===//
//
// Control flow (bra, ret, exit, trap), memory fences with scopes, and the CTA
// barriers bar.sync, bar.arrive and bar.red: the target's own named barriers
// where it has them (TargetInfo), else a whole-CTA barrier and, for bar.red, a
// counter at the start of the kernel's shared window.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"
#include "zmlir/targets/CodeEmission.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

struct BraOpLowering : PTXPattern<BraOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BraOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<cf::BranchOp>(op, op.getDest(), adaptor.getDestOperands());
    return success();
  }
};

struct CondBraOpLowering : PTXPattern<CondBraOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CondBraOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Block *taken = op.getTaken(), *fallthrough = op.getFallthrough();
    ValueRange takenArgs = adaptor.getTakenOperands();
    ValueRange fallthroughArgs = adaptor.getFallthroughOperands();
    if (op.getNegated())
      rewriter.replaceOpWithNewOp<cf::CondBranchOp>(op, adaptor.getPred(), fallthrough,
                                                    fallthroughArgs, taken, takenArgs);
    else
      rewriter.replaceOpWithNewOp<cf::CondBranchOp>(op, adaptor.getPred(), taken, takenArgs,
                                                    fallthrough, fallthroughArgs);
    return success();
  }
};

/// `.pragma "nounroll"`: a call of the marker that translation to LLVM IR
/// turns into its loop's metadata (zmlir::kLoopNoUnrollMarker). A call, so
/// no pass on the way moves or drops it.
struct LoopNoUnrollOpLowering : PTXPattern<LoopNoUnrollOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(LoopNoUnrollOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(op.getContext()), {});
    LLVM::LLVMFuncOp marker = declareFunction(rewriter, op, kLoopNoUnrollMarker, type);
    rewriter.replaceOpWithNewOp<LLVM::CallOp>(op, marker, ValueRange{});
    return success();
  }
};

/// ret and exit: gpu.return in kernels, llvm.return (with the values of the
/// return parameters) in device functions.
template <typename OpTy>
struct ReturnLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
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

/// fence and membar: an LLVM fence at the PTX scope.
struct FenceOpLowering : PTXPattern<FenceOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(FenceOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    LLVM::AtomicOrdering ordering = op.getSem() == Semantics::SC ? LLVM::AtomicOrdering::seq_cst
                                                                 : LLVM::AtomicOrdering::acq_rel;
    LLVM::FenceOp::create(rewriter, op.getLoc(), ordering,
                          state.target.syncScopeName(op.getScope()));
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

/// The number of threads in the CTA, as an i32.
Value blockThreads(OpBuilder &b, Location loc) {
  Value n = arith::MulIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, gpu::BlockDimOp::create(b, loc, gpu::Dimension::x),
                            gpu::BlockDimOp::create(b, loc, gpu::Dimension::y)),
      gpu::BlockDimOp::create(b, loc, gpu::Dimension::z));
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), n);
}

/// Off NVPTX a barrier is the work-group barrier, which waits for every
/// thread of the CTA: the PTX barrier is that one when it has no thread
/// count (all threads, whatever the barrier id) or a count equal to the
/// CTA's size. OpenCL and AMDGPU have no named or partial barriers, so
///  1. a constant count that differs from a `.reqntid` block size is a
///     compile-time error;
///  2. any other count is compared with the CTA size at run time, and a
///     barrier over part of the CTA traps (never a full barrier where a
///     partial one was asked for, which could deadlock or reorder).
LogicalResult emitFullBarrier(Operation *op, Value count, ConversionPatternRewriter &rewriter,
                              const PTXLoweringState &state) {
  Location loc = op->getLoc();
  if (count) {
    std::optional<int64_t> c = constantInt(count);
    auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
    auto reqntid = kernel ? kernel->getAttrOfType<DenseI64ArrayAttr>("ptx.reqntid")
                          : DenseI64ArrayAttr();
    if (c && reqntid) {
      int64_t threads = 1;
      for (int64_t d : reqntid.asArrayRef())
        threads *= d;
      if (*c != threads)
        return op->emitError("unsupported barrier over ")
               << *c << " of the CTA's " << threads << " threads on target '"
               << state.target.getName() << "' (only whole-CTA barriers)";
      count = Value();
    }
  }
  if (count) {
    Value whole = arith::CmpIOp::create(rewriter, loc, IP::eq, count, blockThreads(rewriter, loc));
    Block *block = rewriter.getInsertionBlock();
    Block *cont = rewriter.splitBlock(block, rewriter.getInsertionPoint());
    Block *partial = rewriter.createBlock(cont);
    state.target.emitTrap(rewriter, loc, state);
    rewriter.setInsertionPointToEnd(block);
    cf::CondBranchOp::create(rewriter, loc, whole, cont, ValueRange{}, partial, ValueRange{});
    rewriter.setInsertionPointToStart(cont);
  }
  gpu::BarrierOp::create(rewriter, loc);
  return success();
}

struct BarSyncOpLowering : PTXPattern<BarSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BarSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (succeeded(state.target.lowerNative(op, adaptor, rewriter)))
      return success();
    if (failed(emitFullBarrier(op, adaptor.getCount(), rewriter, state)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// bar.arrive: on AMDGPU a full barrier when the count is the CTA's size.
/// The arriving threads then also wait, which PTX allows (the barrier
/// completes once every thread has arrived), and they need not meet the
/// waiting ones at the same barrier instruction: s_barrier counts the
/// wavefronts that reach any s_barrier. OpenCL's work-group barrier must be
/// reached by all work-items at the same barrier; Intel's CPU runtime gives
/// wrong results (arrive and sync in two branches) or crashes its compiler
/// otherwise, so SPIR-V rejects bar.arrive.
struct BarArriveOpLowering : PTXPattern<BarArriveOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BarArriveOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (succeeded(state.target.lowerNative(op, adaptor, rewriter)))
      return success();
    if (!state.target.arrivesAtFullBarrier())
      return unsupported(op, Twine("'bar.arrive' on target '") + state.target.getName() +
                                 "' (its work-group barrier must be reached by every thread "
                                 "at the same instruction)");
    if (failed(emitFullBarrier(op, adaptor.getCount(), rewriter, state)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// bar.red: NVIDIA's instruction on NVPTX. Elsewhere a counter at the start
/// of the shared window counts the arriving threads (high 16 bits) and the
/// true predicates (low 16 bits):
///  1. each thread reads the counter before the first barrier (no thread
///     adds to it before everyone has passed that barrier, and after the
///     previous bar.red's second barrier no one does until then);
///  2. after the barrier every thread adds 2^16 + its predicate (0 or 1);
///  3. after a second barrier the counter has grown by arrivals * 2^16 +
///     popc, read as the difference with step 1 (modulo 2^32, so it is
///     never reset; a block has at most 1024 threads).
/// .and is popc == arrivals (threads that exited are not waited for, nor
/// counted), .or popc != 0. The counter is read with an atomic add of 0,
/// acq_rel (LLVM makes a monotonic one a load), not a load: a target may
/// take a volatile or atomic load of shared memory for a poll (SPIR-V's
/// spin waits), and this read is none.
struct BarRedOpLowering : PTXPattern<BarRedOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BarRedOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type();
    if (succeeded(state.target.lowerNative(op, adaptor, rewriter)))
      return success();
    Value count = adaptor.getCount();
    auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
    Value window = kernel ? state.sharedWindows.lookup(kernel) : Value();
    if (!window || !state.barrierCounters.contains(kernel))
      return unsupported(op, "'bar.red' in a '.func' (its counter is in the kernel's shared "
                             "window)");
    auto read = [&]() -> Value {
      return LLVM::AtomicRMWOp::create(rewriter, loc, LLVM::AtomicBinOp::add, window,
                                       intConst(rewriter, loc, i32, 0),
                                       LLVM::AtomicOrdering::acq_rel, "workgroup");
    };
    Value before = read();
    if (failed(emitFullBarrier(op, count, rewriter, state)))
      return failure();
    Value arrival = arith::AddIOp::create(
        rewriter, loc, arith::ExtUIOp::create(rewriter, loc, i32, adaptor.getPred()),
        intConst(rewriter, loc, i32, 1 << 16));
    LLVM::AtomicRMWOp::create(rewriter, loc, LLVM::AtomicBinOp::add, window, arrival,
                              LLVM::AtomicOrdering::monotonic, "workgroup");
    gpu::BarrierOp::create(rewriter, loc);
    Value grown = arith::SubIOp::create(rewriter, loc, read(), before);
    Value popc = arith::AndIOp::create(rewriter, loc, grown, intConst(rewriter, loc, i32, 0xffff));
    Value r;
    switch (op.getMode()) {
    case BarRedMode::Popc:
      r = popc;
      break;
    case BarRedMode::And: {
      Value arrivals = arith::ShRUIOp::create(rewriter, loc, grown,
                                              intConst(rewriter, loc, i32, 16));
      r = arith::CmpIOp::create(rewriter, loc, IP::eq, popc, arrivals);
      break;
    }
    case BarRedMode::Or:
      r = arith::CmpIOp::create(rewriter, loc, IP::ne, popc, intConst(rewriter, loc, i32, 0));
      break;
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct TrapOpLowering : PTXPattern<TrapOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(TrapOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    state.target.emitTrap(rewriter, op.getLoc(), state);
    rewriter.eraseOp(op);
    return success();
  }
};

struct BrkptOpLowering : PTXPattern<BrkptOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BrkptOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    state.target.emitBreakpoint(rewriter, op.getLoc(), state);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void zmlir::populatePTXControlPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<FenceOpLowering, BarSyncOpLowering, BarArriveOpLowering, BarRedOpLowering,
               TrapOpLowering, BrkptOpLowering, BraOpLowering, CondBraOpLowering,
               LoopNoUnrollOpLowering, ReturnLowering<RetOp>, ReturnLowering<ExitOp>>(
      patterns.getContext(), state);
}
