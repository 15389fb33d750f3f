//===- HostTargetInfo.cpp - The ptx lowering's host CPU facts ---*- C++ -*-===//
//
// The host CPU through LLVM's own backend, with no GPU runtime underneath:
// every CUDA thread is a fiber of HostRuntime.cpp, which also answers the
// OpenCL-named work-item and sub-group built-ins upstream's gpu-to-llvm-spv
// lowering calls. What the lowering asks beyond those is a runtime call too.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

/// A call of the runtime's `name` (HostRuntime.cpp) returning `result`, at
/// `loc` inside `user`'s module. `convergent` marks a warp collective, which
/// the runtime tells apart from others by its call site (its return
/// address, so never a tail call): no pass may make it depend on more
/// control flow (sink it into a branch, unswitch a loop around it).
Value callRuntime(OpBuilder &b, Operation *user, Location loc, StringRef name, mlir::Type result,
                  ValueRange args = {}, bool convergent = false) {
  SmallVector<mlir::Type> types(args.getTypes());
  mlir::Type returned = result ? result : LLVM::LLVMVoidType::get(b.getContext());
  auto fn = declareFunction(b, user, name, LLVM::LLVMFunctionType::get(returned, types));
  auto call = LLVM::CallOp::create(b, loc, fn, args);
  if (convergent) {
    fn.setConvergent(true);
    call.setConvergent(true);
    call.setTailCallKindAttr(
        LLVM::TailCallKindAttr::get(b.getContext(), LLVM::tailcallkind::TailCallKind::NoTail));
  }
  return result ? call.getResult() : Value();
}

class HostTargetInfo final : public TargetInfo {
public:
  using TargetInfo::TargetInfo;

  StringRef getName() const override { return "host"; }

  Value sharedWindowBytes(OpBuilder &b, Operation *user) const override {
    return callRuntime(b, user, user->getLoc(), "zmlir_host_shared_bytes", b.getI32Type());
  }

  /// The time-stamp counter for %clock/%clock64 (cycles of the core),
  /// CLOCK_REALTIME in nanoseconds for %globaltimer.
  Value readClock(OpBuilder &b, Operation *user, SpecialReg reg) const override {
    if (reg == SpecialReg::Globaltimer)
      return callRuntime(b, user, user->getLoc(), "zmlir_host_globaltimer", b.getI64Type());
    return callIntrinsic(b, user->getLoc(), b.getI64Type(), "llvm.readcyclecounter", {});
  }

  /// The runtime's ballot over the lanes at it, once those of `mask` are.
  Value ballot(OpBuilder &b, Operation *user, Value pred, Value mask) const override {
    Value arg = arith::ExtUIOp::create(b, user->getLoc(), b.getI32Type(), pred);
    return callRuntime(b, user, user->getLoc(), "zmlir_host_ballot", b.getI32Type(), {arg, mask},
                       /*convergent=*/true);
  }

  /// The runtime's sub_group_shuffle of an i32 (what upstream's gpu.shuffle
  /// becomes, but a convergent call, and one a device function can make).
  Value readLane(OpBuilder &b, Location loc, Value v, Value src) const override {
    return callRuntime(b, b.getInsertionBlock()->getParentOp(), loc, "_Z17sub_group_shuffleij",
                       b.getI32Type(), {v, src}, /*convergent=*/true);
  }

  /// The lanes of a warp are fibers, not in lockstep: bar.warp.sync waits
  /// for the lanes executing it, as a collective.
  LogicalResult emitNativeWarpSync(OpBuilder &b, Location loc, Value mask) const override {
    callRuntime(b, b.getInsertionBlock()->getParentOp(), loc, "zmlir_host_warp_sync", mlir::Type(),
                mask, /*convergent=*/true);
    return success();
  }

  /// A fiber waiting at bar.arrive waits for the whole block, which PTX
  /// allows (the barrier completes once every thread has arrived).
  bool arrivesAtFullBarrier() const override { return true; }

  /// isspacep: the runtime knows the block's shared window and the calling
  /// fiber's stack, where its `.local` allocas (and parameter copies) live;
  /// every other address of the process is global (device pointers are
  /// this process's memory). .const and .param have no generic window.
  Value isSpace(OpBuilder &b, Operation *user, Value ptr, Value address, StateSpace space,
                Value window, std::string &whyNot) const override {
    if (!inGenericWindow(space, whyNot))
      return Value();
    Location loc = user->getLoc();
    mlir::Type i32 = b.getI32Type();
    Value found = callRuntime(b, user, loc, "zmlir_host_state_space", i32, address);
    int64_t want = space == StateSpace::Shared ? 1 : space == StateSpace::Local ? 2 : 0;
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, found,
                                 intConst(b, loc, i32, want));
  }

  /// The other fibers run before a waiting one reads the barrier.
  bool emitMbarrierWaitTurn(OpBuilder &b, Operation *user) const override {
    callRuntime(b, user, user->getLoc(), "zmlir_host_yield", mlir::Type());
    return false;
  }

  /// The runtime ends the launch with an error and never returns to the
  /// trapping thread.
  void emitTrap(OpBuilder &b, Location loc, const PTXLoweringState &state) const override {
    callRuntime(b, b.getInsertionBlock()->getParentOp(), loc, "zmlir_host_trap", mlir::Type());
    LLVM::UnreachableOp::create(b, loc);
  }
};

} // namespace

std::unique_ptr<TargetInfo> zmlir::createHostTargetInfo(unsigned waveSize) {
  return std::make_unique<HostTargetInfo>(waveSize);
}
