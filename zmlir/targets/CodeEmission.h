//===- CodeEmission.h - MLIR -> LLVM IR -> target code ----------*- C++ -*-===//

#ifndef ZMLIR_TARGETS_CODEEMISSION_H
#define ZMLIR_TARGETS_CODEEMISSION_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace zmlir {

/// A target's change to, or check of, the LLVM module translated from a
/// gpu.module.
using LLVMModuleFixup = llvm::Error (*)(mlir::gpu::GPUModuleOp gpuModule, llvm::Module &llvmModule);

/// A call of this `void()` function marks its block as the header of a loop
/// not to be unrolled (PTX's `.pragma "nounroll"`): translation replaces the
/// calls by `llvm.loop.unroll.disable` on the loop's latches.
inline constexpr llvm::StringLiteral kLoopNoUnrollMarker = "__zmlir_loop_nounroll";

/// Translates the body of the single `gpu.module` in `module` (already in the
/// LLVM dialect) to an LLVM module for `triple`, makes the loop markers
/// (kLoopNoUnrollMarker) metadata, then applies the target's `fixups` (by
/// name) in order.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateGpuModuleToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                           llvm::StringRef triple, llvm::ArrayRef<std::string> fixups);

enum class OutputKind { Assembly, Object };

/// NVPTX, after LLVM's optimizations: each `or disjoint` of two i32 or i64
/// registers as inline PTX `add` (NVPTXFixups.cpp).
void addNVPTXDisjointOrs(llvm::Module &module);

/// NVPTX, after LLVM's optimizations: `x + (G + k)`, G the address of a
/// variable, as `(x + G) + k`, whose k ptxas folds into address offsets
/// (NVPTXFixups.cpp).
void splitNVPTXConstantOffsets(llvm::Module &module);

/// NVPTX, after LLVM's optimizations: `b ^ sext(q)`, q an i1, as
/// `q ? ~b : b`, which ptxas makes a predicated not (NVPTXFixups.cpp).
void selectNVPTXConditionalNots(llvm::Module &module);

/// Runs the LLVM backend for `triple`/`cpu`/`features` on LLVM IR text.
llvm::Expected<std::string> emitCode(llvm::StringRef llvmIR, llvm::StringRef triple,
                                     llvm::StringRef cpu, llvm::StringRef features, OutputKind kind,
                                     int optLevel);

/// Each target's fix-ups, in its folder (zmlir/targets/Targets.def).
#define ZMLIR_LLVM_FIXUP(Name, Function)                                                           \
  llvm::Error Function(mlir::gpu::GPUModuleOp gpuModule, llvm::Module &llvmModule);
#include "zmlir/targets/Targets.def"

} // namespace zmlir

#endif // ZMLIR_TARGETS_CODEEMISSION_H
