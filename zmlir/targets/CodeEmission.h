//===- CodeEmission.h - MLIR -> LLVM IR -> target code ----------*- C++ -*-===//

#ifndef ZMLIR_TARGETS_CODEEMISSION_H
#define ZMLIR_TARGETS_CODEEMISSION_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace zmlir {

/// Translates the body of the single `gpu.module` in `module` (already in the
/// LLVM dialect) to an LLVM module for `triple`.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateGpuModuleToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                           llvm::StringRef triple);

enum class OutputKind { Assembly, Object };

/// Runs the LLVM backend for `triple`/`cpu`/`features` on LLVM IR text.
llvm::Expected<std::string> emitCode(llvm::StringRef llvmIR, llvm::StringRef triple,
                                     llvm::StringRef cpu, llvm::StringRef features,
                                     OutputKind kind, int optLevel);

} // namespace zmlir

#endif // ZMLIR_TARGETS_CODEEMISSION_H
