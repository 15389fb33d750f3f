"""The compilation stages `zmlir compile --emit` can stop at, in order."""

STAGES = ("ptx-mlir", "std-mlir", "llvm-mlir", "llvm-ir", "asm", "bin")
