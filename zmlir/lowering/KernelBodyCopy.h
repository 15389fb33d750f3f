//===- KernelBodyCopy.h - A kernel's body in two copies ---------*- C++ -*-===//
//
// A kernel that runs one of two copies of its body, chosen once at a new
// entry block by a value uniform across the launch (the block's shape):
// each copy can then be rewritten for its case without a test per use.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_KERNELBODYCOPY_H
#define ZMLIR_LOWERING_KERNELBODYCOPY_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/SmallVector.h"

namespace zmlir {

/// The blocks of a kernel whose body was copied.
struct KernelBodyCopy {
  /// The new entry: it takes the kernel's arguments, which both copies now
  /// use, and has no terminator; the caller ends it with the branch.
  mlir::Block *entry;
  /// The first block of the body as it was.
  mlir::Block *original;
  /// The first block of the copy, and all of the copy's blocks.
  mlir::Block *copy;
  llvm::SmallVector<mlir::Block *> copyBlocks;
};

/// Copies `kernel`'s body after itself and gives it a new entry block.
KernelBodyCopy copyKernelBody(mlir::gpu::GPUFuncOp kernel);

} // namespace zmlir

#endif // ZMLIR_LOWERING_KERNELBODYCOPY_H
