//===- Passes.h - zmlir lowering passes -------------------------*- C++ -*-===//

#ifndef ZMLIR_LOWERING_PASSES_H
#define ZMLIR_LOWERING_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"
#include "zmlir/lowering/TargetInfo.h"

namespace zmlir {

/// Where each PTX state space lives in the target's LLVM address spaces, and
/// how kernels reach their shared-memory window.
struct AddressSpaceMap {
  unsigned generic = 0;
  unsigned global = 1;
  unsigned shared = 3;
  unsigned constant = 4;
  unsigned local = 5;
};

#define GEN_PASS_DECL
#include "zmlir/lowering/Passes.h.inc"

/// Patterns lowering ptx ops inside `gpu.func` kernels. `sharedWindows` maps
/// each kernel to the `!llvm.ptr<3>` base of its shared window and
/// `sharedOffsets` each (kernel, variable) pair to the variable's offset in it.
struct PTXLoweringState;
void populatePTXToStdConversionPatterns(mlir::RewritePatternSet &patterns,
                                        const PTXLoweringState &state);
void configurePTXToStdConversionLegality(mlir::ConversionTarget &target);

#define GEN_PASS_REGISTRATION
#include "zmlir/lowering/Passes.h.inc"

/// Registers every zmlir pass with the global registry (for zmlir-opt and
/// textual pipelines).
inline void registerLoweringPasses() { registerZmlirLoweringPasses(); }

} // namespace zmlir

#endif // ZMLIR_LOWERING_PASSES_H
