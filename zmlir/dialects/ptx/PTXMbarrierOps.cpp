//===- PTXMbarrierOps.cpp - The mbarrier verifiers ------------------------===//

#include "zmlir/dialects/ptx/PTXDialect.h"

using namespace mlir;
using namespace zmlir::ptx;

namespace {

/// An mbarrier is a .shared::cta object: its address is a shared or a
/// generic one.
LogicalResult verifySpace(Operation *op, StateSpace space) {
  if (space != StateSpace::None && space != StateSpace::Shared)
    return op->emitOpError("takes a shared or generic address, not .")
           << stringifyStateSpace(space);
  return success();
}

LogicalResult verifyScope(Operation *op, Scope scope) {
  if (scope != Scope::None && scope != Scope::CTA && scope != Scope::Cluster)
    return op->emitOpError("takes the scope .cta or .cluster, not .") << stringifyScope(scope);
  return success();
}

} // namespace

LogicalResult MbarrierInitOp::verify() {
  return verifySpace(*this, getSpace());
}

LogicalResult MbarrierInvalOp::verify() {
  return verifySpace(*this, getSpace());
}

LogicalResult MbarrierTxOp::verify() {
  if (getSem() != Semantics::None && getSem() != Semantics::Relaxed)
    return emitOpError("takes the semantics .relaxed only");
  if (failed(verifyScope(*this, getScope())))
    return failure();
  return verifySpace(*this, getSpace());
}

LogicalResult MbarrierArriveOp::verify() {
  if (getSem() != Semantics::None && getSem() != Semantics::Release &&
      getSem() != Semantics::Relaxed)
    return emitOpError("takes the semantics .release or .relaxed");
  if (getTxCount() && getCount())
    return emitOpError("with .expect_tx takes a transaction count, not an arrival count");
  if (getTxCount() && getNoComplete())
    return emitOpError("takes .expect_tx or .noComplete, not both");
  if (getNoComplete() && !getCount())
    return emitOpError("with .noComplete takes an arrival count");
  if (failed(verifyScope(*this, getScope())))
    return failure();
  return verifySpace(*this, getSpace());
}

LogicalResult MbarrierTestWaitOp::verify() {
  if (getSem() != Semantics::None && getSem() != Semantics::Acquire &&
      getSem() != Semantics::Relaxed)
    return emitOpError("takes the semantics .acquire or .relaxed");
  if (getParity() != getPhase().getType().isInteger(32))
    return emitOpError(getParity() ? "with .parity takes an i32 phase parity"
                                   : "takes an i64 state");
  if (getSuspendHint() && !getTryWait())
    return emitOpError("takes a suspend time hint only as try_wait");
  if (failed(verifyScope(*this, getScope())))
    return failure();
  return verifySpace(*this, getSpace());
}
