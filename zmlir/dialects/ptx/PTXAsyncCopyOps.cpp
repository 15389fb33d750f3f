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
