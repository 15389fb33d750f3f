//===- AMDGPUTargetInfo.cpp - The ptx lowering's AMDGPU facts ---*- C++ -*-===//
//
// AMDGPU through ROCDL: wave32 on gfx10+, and on the wave64 gfx9 chips each
// half of a wavefront is one CUDA warp (ballots take the lane's half, lane
// reads stay inside it).
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

class AMDGPUTargetInfo final : public TargetInfo {
public:
  using TargetInfo::TargetInfo;

  StringRef getName() const override { return "amdgpu"; }

  bool hasF64ApproxTranscendentals() const override { return false; }

  /// v_log, v_exp, and v_sin/v_cos, which take the angle in revolutions.
  Value hardwareApprox(OpBuilder &b, Location loc, StringRef name, Value x) const override {
    StringRef intrinsic = llvm::StringSwitch<StringRef>(name)
                              .Case("lg2", "llvm.amdgcn.log")
                              .Case("ex2", "llvm.amdgcn.exp2")
                              .Case("sin", "llvm.amdgcn.sin")
                              .Case("cos", "llvm.amdgcn.cos")
                              .Default("");
    if (intrinsic.empty())
      return Value();
    return callIntrinsic(b, loc, x.getType(), intrinsic, x);
  }
  bool hasRevolutionSinCos() const override { return true; }

  /// In a `preserve-sign` function the backend sets the FP32 denormal mode
  /// of the mode register to flush inputs and outputs (sign-preserving,
  /// AMDGPUUsage): v_add, v_sub, v_mul, v_fma and the division's sequence
  /// flush as PTX's `.ftz` does.
  F32FlushScope f32FlushScope() const override { return F32FlushScope::Function; }

  /// Those alone: comparisons, conversions, negations and magnitudes
  /// (source modifiers on the bits) keep flushing in software, as no AMD
  /// GPU here could show how the mode treats them.
  bool flushesInF32FlushMode(Operation *op) const override {
    return isa<AddOp, SubOp, MulOp, FmaOp, MadOp, DivOp>(op);
  }

  std::string syncScopeName(Scope scope) const override {
    switch (scope) {
    case Scope::CTA:
      return "workgroup";
    case Scope::Cluster:
    case Scope::GPU:
      return "agent";
    default:
      return "";
    }
  }

  StringRef warpFenceScope() const override { return "wavefront"; }

  /// hsa_kernel_dispatch_packet_t: group_segment_size is the u32 at byte 28.
  Value sharedWindowBytes(OpBuilder &b, Operation *user) const override {
    Location loc = user->getLoc();
    auto constPtr = LLVM::LLVMPointerType::get(b.getContext(), 4);
    Value packet = callIntrinsic(b, loc, constPtr, "llvm.amdgcn.dispatch.ptr", {});
    Value field = LLVM::GEPOp::create(b, loc, constPtr, b.getI8Type(), packet,
                                      ArrayRef<LLVM::GEPArg>{28});
    return LLVM::LoadOp::create(b, loc, b.getI32Type(), field, /*alignment=*/4);
  }

  Value readClock(OpBuilder &b, Operation *user, SpecialReg reg) const override {
    Location loc = user->getLoc();
    mlir::Type i64 = b.getI64Type();
    bool timer = reg == SpecialReg::Globaltimer;
    Value r = callIntrinsic(b, loc, i64, timer ? "llvm.readsteadycounter" : "llvm.readcyclecounter",
                            {});
    // The steady counter (s_memrealtime) runs at a constant 100 MHz;
    // %globaltimer counts nanoseconds.
    if (timer)
      r = arith::MulIOp::create(b, loc, r, intConst(b, loc, i64, 10));
    return r;
  }

  Value isSpace(OpBuilder &b, Operation *user, Value ptr, Value address, StateSpace space,
                Value window, std::string &whyNot) const override {
    if (!inGenericWindow(space, whyNot))
      return Value();
    Location loc = user->getLoc();
    mlir::Type i1 = b.getI1Type();
    auto is = [&](StringRef name) { return callIntrinsic(b, loc, i1, name, ptr); };
    if (space == StateSpace::Shared)
      return is("llvm.amdgcn.is.shared");
    if (space == StateSpace::Local)
      return is("llvm.amdgcn.is.private");
    Value shared = is("llvm.amdgcn.is.shared");
    Value other = arith::OrIOp::create(b, loc, shared, is("llvm.amdgcn.is.private"));
    return arith::XOrIOp::create(b, loc, other, intConst(b, loc, i1, 1));
  }

  Value ballot(OpBuilder &b, Operation *user, Value pred, Value mask) const override {
    Location loc = user->getLoc();
    mlir::Type i32 = b.getI32Type(), i64 = b.getI64Type();
    if (waveSize == 32)
      return callIntrinsic(b, loc, i32, "llvm.amdgcn.ballot.i32", pred);
    Value wave = callIntrinsic(b, loc, i64, "llvm.amdgcn.ballot.i64", pred);
    Value lane = arith::IndexCastUIOp::create(b, loc, i64, gpu::LaneIdOp::create(b, loc, nullptr));
    Value half = arith::AndIOp::create(b, loc, lane, intConst(b, loc, i64, 32));
    return arith::TruncIOp::create(b, loc, i32, arith::ShRUIOp::create(b, loc, wave, half));
  }

  /// ds_bpermute, whose byte address picks the wavefront lane: on wave64
  /// chips that is `src` in the caller's half (upstream's gpu.shuffle idx
  /// takes `src` as a wavefront lane, so the upper half-wave would read the
  /// lower one).
  Value readLane(OpBuilder &b, Location loc, Value v, Value src) const override {
    mlir::Type i32 = b.getI32Type();
    Value lane = src;
    if (waveSize > 32) {
      Value wave = arith::IndexCastUIOp::create(b, loc, i32,
                                                gpu::LaneIdOp::create(b, loc, nullptr));
      lane = arith::OrIOp::create(
          b, loc, arith::AndIOp::create(b, loc, wave, intConst(b, loc, i32, ~31)), src);
    }
    Value address = arith::ShLIOp::create(b, loc, lane, intConst(b, loc, i32, 2));
    Value bits = callIntrinsic(b, loc, i32, "llvm.amdgcn.ds.bpermute",
                               ValueRange{address, asInteger(b, loc, v)});
    return adjustBits(b, loc, bits, v.getType(), false);
  }

  /// The arriving threads then also wait, which PTX allows (the barrier
  /// completes once every thread has arrived).
  bool arrivesAtFullBarrier() const override { return true; }
};

} // namespace

std::unique_ptr<TargetInfo> zmlir::createAMDGPUTargetInfo(unsigned waveSize) {
  return std::make_unique<AMDGPUTargetInfo>(waveSize);
}
