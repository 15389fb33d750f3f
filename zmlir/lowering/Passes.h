//===- Passes.h - zmlir lowering passes -------------------------*- C++ -*-===//
//
// The passes of zmlir/lowering (Passes.td); convert-ptx-to-std's patterns,
// for use without the pass, are in Patterns.h.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_PASSES_H
#define ZMLIR_LOWERING_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"
#include "zmlir/lowering/Patterns.h"

namespace zmlir {

#define GEN_PASS_DECL
#include "zmlir/lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zmlir/lowering/Passes.h.inc"

/// Registers every zmlir pass with the global registry (for zmlir-opt and
/// textual pipelines).
inline void registerLoweringPasses() {
  registerZmlirLoweringPasses();
}

} // namespace zmlir

#endif // ZMLIR_LOWERING_PASSES_H
