//===- PTXOps.td - PTX instructions as ops -----------------*- tablegen -*-===//
//
// One op per PTX instruction. Modifiers are attributes; defaults are elided
// when printing. Links point at the PTX ISA 9.0 section of each instruction.
//
// The ops live in one file per instruction family, the same families as the
// lowering's files in zmlir/lowering/; PTXOpBase.td holds what they share.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_OPS
#define ZMLIR_DIALECT_PTX_OPS

include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "zmlir/dialects/ptx/PTXDialect.td"
include "zmlir/dialects/ptx/PTXEnums.td"

include "zmlir/dialects/ptx/PTXOpBase.td"
include "zmlir/dialects/ptx/PTXArithOps.td"
include "zmlir/dialects/ptx/PTXBitsOps.td"
include "zmlir/dialects/ptx/PTXFloatOps.td"
include "zmlir/dialects/ptx/PTXConvertOps.td"
include "zmlir/dialects/ptx/PTXSpecialRegistersOps.td"
include "zmlir/dialects/ptx/PTXMemoryOps.td"
include "zmlir/dialects/ptx/PTXAtomicsOps.td"
include "zmlir/dialects/ptx/PTXControlOps.td"
include "zmlir/dialects/ptx/PTXWarpOps.td"
include "zmlir/dialects/ptx/PTXMatrixOps.td"
include "zmlir/dialects/ptx/PTXAsyncCopyOps.td"
include "zmlir/dialects/ptx/PTXMbarrierOps.td"
include "zmlir/dialects/ptx/PTXCallsOps.td"
include "zmlir/dialects/ptx/PTXTextureOps.td"
include "zmlir/dialects/ptx/PTXVideoOps.td"

#endif // ZMLIR_DIALECT_PTX_OPS
