//===- TargetInfo.cpp - The generic target and the target choice -*- C++ -*-===//
//
// The base TargetInfo is the `generic` target: what it answers holds on any
// backend, and what needs a target's intrinsics is rejected.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/TargetInfo.h"
#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

TargetInfo::~TargetInfo() = default;

std::string TargetInfo::syncScopeName(Scope scope) const {
  switch (scope) {
  case Scope::CTA:
    return "workgroup";
  case Scope::Cluster:
  case Scope::GPU:
    return "device";
  default:
    // System scope (and none given) is LLVM's default, cross-device scope.
    return "";
  }
}

bool TargetInfo::needsAtomicCasLoop(AtomicOp op, DataType type) const {
  unsigned width = getTypeBitWidth(type);
  bool halfAdd = op == AtomicOp::Add && (type == DataType::F16 || type == DataType::BF16 ||
                                         type == DataType::F16x2 || type == DataType::BF16x2);
  // atom.add.f32 on global memory flushes subnormal inputs and results
  // (NVIDIA's RED.ADD.F32 is .FTZ).
  if (op == AtomicOp::Add && type == DataType::F32)
    return true;
  // OpenCL and AMDGPU atomics are 32 or 64 bits wide.
  return halfAdd || (width == 16 && (op == AtomicOp::Cas || op == AtomicOp::Exch));
}

Value TargetInfo::isSpace(OpBuilder &b, Operation *user, Value ptr, Value address, StateSpace space,
                          Value window, std::string &whyNot) const {
  if (inGenericWindow(space, whyNot))
    whyNot = "no address space queries";
  return Value();
}

bool TargetInfo::inGenericWindow(StateSpace space, std::string &whyNot) {
  if (space == StateSpace::Global || space == StateSpace::Shared || space == StateSpace::Local)
    return true;
  whyNot = "no generic window for it";
  return false;
}

/// gpu.shuffle idx over the 32 lanes of the sub-group.
Value TargetInfo::readLane(OpBuilder &b, Location loc, Value v, Value src) const {
  Value width = intConst(b, loc, b.getI32Type(), 32);
  return gpu::ShuffleOp::create(b, loc, v, src, width, gpu::ShuffleMode::IDX).getShuffleResult();
}

void TargetInfo::emitTrap(OpBuilder &b, Location loc, const PTXLoweringState &state) const {
  callIntrinsic(b, loc, mlir::Type(), "llvm.trap", {});
  LLVM::UnreachableOp::create(b, loc);
}

std::unique_ptr<TargetInfo> zmlir::createGenericTargetInfo(unsigned waveSize) {
  return std::make_unique<TargetInfo>(waveSize);
}

std::unique_ptr<TargetInfo> zmlir::createTargetInfo(LoweringTarget target, unsigned waveSize) {
  switch (target) {
#define ZMLIR_TARGET(Enumerator, Name, Factory)                                                    \
  case LoweringTarget::Enumerator:                                                                 \
    return Factory(waveSize);
#include "zmlir/targets/Targets.def"
  }
  llvm_unreachable("unknown lowering target");
}
