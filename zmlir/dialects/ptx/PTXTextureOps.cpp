//===- PTXTextureOps.cpp - The texture and surface verifiers --------------===//

#include "zmlir/dialects/ptx/PTXDialect.h"

using namespace mlir;
using namespace zmlir::ptx;

unsigned zmlir::ptx::texCoordinateCount(TexGeometry geometry) {
  switch (geometry) {
  case TexGeometry::D1:
  case TexGeometry::A1D:
    return 1;
  case TexGeometry::D2:
  case TexGeometry::A2D:
    return 2;
  case TexGeometry::D3:
  case TexGeometry::Cube:
  case TexGeometry::ACube:
    return 3;
  }
  llvm_unreachable("unknown texture geometry");
}

bool zmlir::ptx::isLayered(TexGeometry geometry) {
  return geometry == TexGeometry::A1D || geometry == TexGeometry::A2D ||
         geometry == TexGeometry::ACube;
}

namespace {

/// The layer operand is there exactly for the array geometries, and the
/// coordinates are as many as the geometry has, all of one type.
LogicalResult verifyCoordinates(Operation *op, TexGeometry geometry, Value layer,
                                ValueRange coords) {
  if (isLayered(geometry) != static_cast<bool>(layer))
    return op->emitOpError(isLayered(geometry) ? "needs" : "takes no")
           << " layer operand with geometry " << stringifyTexGeometry(geometry);
  unsigned expected = texCoordinateCount(geometry);
  if (coords.size() != expected)
    return op->emitOpError("takes ") << expected << " coordinates with geometry "
                                     << stringifyTexGeometry(geometry) << ", got " << coords.size();
  for (Value c : coords)
    if (c.getType() != coords.front().getType())
      return op->emitOpError("takes coordinates of one type");
  return success();
}

LogicalResult verifyFourResults(Operation *op, TypeRange results) {
  if (results.size() != 4)
    return op->emitOpError("gives 4 results, got ") << results.size();
  for (Type t : results)
    if (t != results.front())
      return op->emitOpError("gives results of one type");
  return success();
}

bool isSurfaceGeometry(TexGeometry geometry) {
  return geometry != TexGeometry::Cube && geometry != TexGeometry::ACube;
}

LogicalResult verifySurfaceAccess(Operation *op, TexGeometry geometry, Value layer,
                                  ValueRange coords, DataType type, size_t count) {
  if (!isSurfaceGeometry(geometry))
    return op->emitOpError("takes no geometry ") << stringifyTexGeometry(geometry);
  if (failed(verifyCoordinates(op, geometry, layer, coords)))
    return failure();
  if (type != DataType::B8 && type != DataType::B16 && type != DataType::B32 &&
      type != DataType::B64)
    return op->emitOpError("takes the type .b8, .b16, .b32 or .b64, not .")
           << stringifyDataType(type);
  if (count != 1 && count != 2 && count != 4)
    return op->emitOpError("accesses 1, 2 or 4 elements, not ") << count;
  return success();
}

} // namespace

LogicalResult TexOp::verify() {
  if (failed(verifyCoordinates(*this, getGeometry(), getLayer(), getCoords())))
    return failure();
  TexGeometry g = getGeometry();
  if ((g == TexGeometry::Cube || g == TexGeometry::ACube) && !getCoords().front().getType().isF32())
    return emitOpError("takes .f32 coordinates with geometry ") << stringifyTexGeometry(g);
  return verifyFourResults(*this, getRes().getTypes());
}

LogicalResult Tld4Op::verify() {
  if (getGeometry() != TexGeometry::D2 && getGeometry() != TexGeometry::A2D)
    return emitOpError("takes geometry d2 or a2d, not ") << stringifyTexGeometry(getGeometry());
  if (failed(verifyCoordinates(*this, getGeometry(), getLayer(), getCoords())))
    return failure();
  return verifyFourResults(*this, getRes().getTypes());
}

LogicalResult TxqOp::verify() {
  if (getQuery() == TexQuery::MemoryLayout)
    return emitOpError("has no attribute memory_layout (suq has)");
  return success();
}

LogicalResult SuqOp::verify() {
  switch (getQuery()) {
  case TexQuery::Width:
  case TexQuery::Height:
  case TexQuery::Depth:
  case TexQuery::ChannelDataType:
  case TexQuery::ChannelOrder:
  case TexQuery::ArraySize:
  case TexQuery::MemoryLayout:
    return success();
  default:
    return emitOpError("has no attribute ") << stringifyTexQuery(getQuery()) << " (txq has)";
  }
}

LogicalResult SuldOp::verify() {
  return verifySurfaceAccess(*this, getGeometry(), getLayer(), getCoords(), getType(),
                             getRes().size());
}

LogicalResult SustOp::verify() {
  return verifySurfaceAccess(*this, getGeometry(), getLayer(), getCoords(), getType(),
                             getValues().size());
}
