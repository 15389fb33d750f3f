//===- PTXDialect.h - The ptx dialect ---------------------------*- C++ -*-===//

#ifndef ZMLIR_DIALECTS_PTX_PTXDIALECT_H
#define ZMLIR_DIALECTS_PTX_PTXDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "zmlir/dialects/ptx/PTXDialect.h.inc"
#include "zmlir/dialects/ptx/PTXEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "zmlir/dialects/ptx/PTXAttrs.h.inc"

#define GET_OP_CLASSES
#include "zmlir/dialects/ptx/PTXOps.h.inc"

namespace zmlir::ptx {

/// Width in bits of a PTX instruction type (.b32 -> 32, .pred -> 1).
unsigned getTypeBitWidth(DataType type);
bool isFloatType(DataType type);
/// .e4m3x2 or .e5m2x2: two fp8 values in 16 bits (cvt's first value upper).
bool isFp8PairType(DataType type);
bool isSignedType(DataType type);
/// Coordinates of a texture or surface geometry, its layer apart (.a2d -> 2).
unsigned texCoordinateCount(TexGeometry geometry);
/// Whether a geometry is an array one (.a1d, .a2d, .acube): a layer operand.
bool isLayered(TexGeometry geometry);

} // namespace zmlir::ptx

#endif // ZMLIR_DIALECTS_PTX_PTXDIALECT_H
