//===- LocalStack.h - Recursive functions' local memory on a stack -*- C++ -*-===//
//
// Where a target's private memory has one instance per function, not per
// call (Intel's OpenCL CPU runtime: a recursive function's frames would
// share its `.local` arrays), the local memory of the functions on a call
// cycle lives on a software stack instead: a slot of device memory per
// thread in recursion, from a pool the driver allocates per context
// (zmlir/runtime/cuda/stacks.py reads the layout below).
//
//  - The module's state: `__zmlir_local_stack`, four i64 the driver sets when
//    it loads the module: the flags' address (one i32 per slot, 0: free),
//    the slots' address, the bytes of a slot (CU_LIMIT_STACK_SIZE) and the
//    number of slots (0: no pool, a thread that needs one traps).
//  - A call from outside those functions into one (a root call) takes a
//    free slot (a compare-and-swap of its flag, probing from the thread's
//    linear id) and gives it back after the call returns.
//  - Each function on a cycle with local memory takes the top of the stack
//    and its end as two last i64 parameters; its allocas become a frame at
//    the top (rounded up to the frame's alignment), and the calls it makes
//    into the others get the top past the frame. A frame past the end is a
//    stack overflow.
//
// Everything else is left as it was: functions off the cycles, and cycles
// without local memory, keep their allocas and signatures.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_LOCALSTACK_H
#define ZMLIR_LOWERING_LOCALSTACK_H

#include "zmlir/lowering/Patterns.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace zmlir {

constexpr const char *kLocalStackStateName = "__zmlir_local_stack";

/// How a thread fails for want of stack: a frame past its slot's end
/// (`noSlot` false) or no free slot at a root call (true). Ends the
/// function the insertion point is in, including the block's terminator.
using StackFailure = llvm::function_ref<void(mlir::OpBuilder &, mlir::Location, bool noSlot)>;

/// Moves the allocas of the functions in `recursive` that are on a cycle
/// with one that has any onto the software stack described above. Runs
/// after the conversion patterns, when every call is a direct LLVM::CallOp,
/// before anything appends other parameters to the recursive functions.
mlir::LogicalResult placeRecursiveLocalsOnStack(mlir::gpu::GPUModuleOp module,
                                                const llvm::DenseSet<mlir::Operation *> &recursive,
                                                const PTXLoweringState &state, StackFailure fail);

} // namespace zmlir

#endif // ZMLIR_LOWERING_LOCALSTACK_H
