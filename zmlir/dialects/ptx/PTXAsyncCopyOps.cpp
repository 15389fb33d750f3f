//===- PTXAsyncCopyOps.cpp - The cp.async verifiers -----------------------===//

#include "zmlir/dialects/ptx/PTXDialect.h"

using namespace mlir;
using namespace zmlir::ptx;

LogicalResult CpAsyncOp::verify() {
  int64_t size = getSize();
  if (size != 4 && size != 8 && size != 16)
    return emitOpError("copies 4, 8 or 16 bytes, not ") << size;
  if (getCache() != CacheOp::CA && getCache() != CacheOp::CG)
    return emitOpError("takes the cache operator .ca or .cg");
  if (getCache() == CacheOp::CG && size != 16)
    return emitOpError("with .cg copies 16 bytes");
  if (getSrcSize() && getIgnoreSrc())
    return emitOpError("takes a source size or an ignore-src predicate, not both");
  return success();
}

LogicalResult CpAsyncWaitGroupOp::verify() {
  auto pending = static_cast<int64_t>(getPending());
  if (pending < 0)
    return emitOpError("expects a count of pending groups of at least 0, got ") << pending;
  if (getAll() && pending != 0)
    return emitOpError("waits for all groups or for a count of them, not both");
  return success();
}

LogicalResult CpAsyncMbarrierArriveOp::verify() {
  if (getSpace() != StateSpace::None && getSpace() != StateSpace::Shared)
    return emitOpError("takes a shared or generic address");
  return success();
}

LogicalResult CpAsyncBulkOp::verify() {
  StateSpace dst = getDstSpace(), src = getSrcSpace();
  bool toShared = (dst == StateSpace::Shared || dst == StateSpace::SharedCluster) &&
                  src == StateSpace::Global;
  bool toCluster = dst == StateSpace::SharedCluster && src == StateSpace::Shared;
  bool toGlobal = dst == StateSpace::Global && src == StateSpace::Shared;
  if (!toShared && !toCluster && !toGlobal)
    return emitOpError("copies global to shared, shared to shared::cluster or shared to "
                       "global memory, not ")
           << stringifyStateSpace(src) << " to " << stringifyStateSpace(dst);
  if (toGlobal && getMbar())
    return emitOpError("to global memory completes by its bulk async-group, not an mbarrier");
  if (!toGlobal && !getMbar())
    return emitOpError("into shared memory completes on an mbarrier");
  return success();
}

LogicalResult CpAsyncBulkWaitGroupOp::verify() {
  if (static_cast<int64_t>(getPending()) < 0)
    return emitOpError("expects a count of pending groups of at least 0, got ")
           << static_cast<int64_t>(getPending());
  return success();
}

LogicalResult FenceProxyAsyncOp::verify() {
  StateSpace space = getSpace();
  if (space != StateSpace::None && space != StateSpace::Global && space != StateSpace::Shared &&
      space != StateSpace::SharedCluster)
    return emitOpError("orders global or shared memory, not ") << stringifyStateSpace(space);
  return success();
}
