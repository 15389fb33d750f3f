//===- Patterns.h - The ptx-to-std lowering as pattern sets -----*- C++ -*-===//
//
// convert-ptx-to-std's conversion patterns, usable outside the pass (as
// upstream's populate<X>To<Y>ConversionPatterns are). Every pattern reads
// one PTXLoweringState, in two parts:
//  - PTXLoweringOptions: the facts injected from outside (the backend's
//    TargetInfo and where each state space lives);
//  - PTXModuleLayout: what the pass computes for the module before the
//    patterns run (each kernel's shared window and the offsets of its
//    variables, the module's variables, the kernels with a bar.red counter).
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_PATTERNS_H
#define ZMLIR_LOWERING_PATTERNS_H

#include "zmlir/dialects/ptx/PTXDialect.h"
#include "zmlir/lowering/TargetInfo.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

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

/// The facts the lowering is given: the pass builds them from its options.
struct PTXLoweringOptions {
  /// What the backend the std dialects are for can do (TargetInfo.h).
  const TargetInfo &target;
  AddressSpaceMap addressSpaces;
};

/// What convert-ptx-to-std computes for the module before the patterns run
/// (PTXToStd.cpp).
struct PTXModuleLayout {
  /// Base of the shared window, per kernel (the gpu.func operation).
  llvm::DenseMap<mlir::Operation *, mlir::Value> sharedWindows;
  /// Offset of each shared variable in a kernel's window.
  llvm::DenseMap<std::pair<mlir::Operation *, mlir::StringAttr>, int64_t> sharedOffsets;
  /// Module-scope variables by name.
  llvm::DenseMap<mlir::StringAttr, ptx::VarOp> variables;
  /// Kernels whose shared window starts with the bar.red counter (see
  /// BarRedOpLowering); their variables are laid out after it.
  llvm::DenseSet<mlir::Operation *> barrierCounters;
};

/// The state the ptx lowering patterns share: the injected facts and the
/// module's layout.
struct PTXLoweringState : PTXLoweringOptions, PTXModuleLayout {
  explicit PTXLoweringState(const PTXLoweringOptions &options)
      : PTXLoweringOptions(options) {}
};

/// Every pattern of convert-ptx-to-std.
void populatePTXToStdConversionPatterns(mlir::RewritePatternSet &patterns,
                                        const PTXLoweringState &state);
/// The ptx dialect illegal, the dialects the patterns produce legal.
void configurePTXToStdConversionLegality(mlir::ConversionTarget &target);

} // namespace zmlir

#endif // ZMLIR_LOWERING_PATTERNS_H
