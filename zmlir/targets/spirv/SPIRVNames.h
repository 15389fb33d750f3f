//===- SPIRVNames.h - Names the SPIR-V lowering and fix-ups share -*- C++ -*-===//
//
// What the lowering (SPIRVTargetInfo.cpp) leaves in a module for the LLVM
// fix-ups (SPIRVFixups.cpp) to finish. isspacep is lowered in two steps: the
// lowering calls the two functions named here, and the fix-up
// `spirv-state-space` gives them their meaning.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_TARGETS_SPIRV_SPIRVNAMES_H
#define ZMLIR_TARGETS_SPIRV_SPIRVNAMES_H

namespace zmlir::spirv {

/// The module's trap word: an i32 global that a trapping thread sets to 1
/// (2 after a failed assert, 3 where its kernel's sub-groups are narrower
/// than a warp); the runtime reads it after each launch and fails the
/// context (zmlir/runtime/cuda/launch.py).
constexpr const char *kTrapWordName = "__zmlir_trap";

/// The trap word's value when a block's threads all spin, turn after turn,
/// and none gets out of its loop (the fix-up `spirv-spin-waits`).
constexpr int kTrapDeadlocked = 5;

/// `ptr addrspace(3) ()`: the shared window of the kernel the call runs in,
/// called where the lowering has none (a device function). The fix-up
/// inlines the functions that call it into their callers up to the kernels
/// and replaces it with the kernel's window argument.
constexpr const char *kSharedWindowName = "__zmlir_spirv_shared_window";

/// `i1 (i64 address)`: whether `address` lies in the calling thread's stack,
/// which is where Intel's OpenCL CPU runtime keeps a work-item's private
/// memory (its allocas, and its copies of by-value arguments) and a
/// work-group's local memory. The fix-up defines it: the C library's
/// pthread_getattr_np of pthread_self, which the runtime resolves in the
/// process.
constexpr const char *kOnStackName = "__zmlir_spirv_on_stack";

} // namespace zmlir::spirv

#endif // ZMLIR_TARGETS_SPIRV_SPIRVNAMES_H
