//===- DeviceHeap.h - Device malloc and free -------------------*- C++ -*-===//
//
// CUDA's device heap: `malloc`, `free` and `__nv_aligned_device_malloc`
// (`__cuda_syscall_aligned_malloc` in PTX; C++ `new` and `delete` are calls
// of malloc and free). Where the target has no functions of those names of
// its own (TargetInfo::hasNativeMalloc), the module gets an allocator of
// its own over a heap the driver allocates per context
// (zmlir/runtime/cuda/heap.py reads the layout below).
//
//  - The module's state: `__zmlir_device_heap`, one i64 the driver sets when
//    it loads the module: the heap's address (0: none, malloc returns NULL).
//  - The heap: a header of kHeapHeaderBytes: u64 bump offset (the first byte
//    never handed out, from the heap's start), u64 end offset (the header
//    plus cudaLimitMallocHeapSize), then one u64 free-list head per size
//    class; blocks follow.
//  - A size class c holds blocks of 32 << c bytes (c < kHeapClasses),
//    taken from its free list, else from the bump region, else split from a
//    larger free block (as a buddy allocator splits; blocks are never merged
//    again). 16 bytes before the pointer malloc returns is the block's
//    header: u64 class | (bytes from the block's start to the pointer) << 8.
//    A free block's first u64 is the next free block's index.
//  - A free-list head: the first block's index (its offset / 16, 0: none)
//    in the low kHeapIndexBits, a tag counting the list's changes above
//    (against ABA: a pop that read a stale next fails its compare-and-swap).
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_DEVICEHEAP_H
#define ZMLIR_LOWERING_DEVICEHEAP_H

#include "zmlir/lowering/Patterns.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace zmlir {

constexpr const char *kHeapStateName = "__zmlir_device_heap";
/// Bytes before the first block: bump, end, the free-list heads, padding.
constexpr int64_t kHeapHeaderBytes = 512;
/// Size classes: blocks of 32 bytes to 1 TiB.
constexpr int64_t kHeapClasses = 36;
/// Bits of a block index (in 16-byte units) in a free-list head.
constexpr int64_t kHeapIndexBits = 36;
/// Bytes of a block's header before the pointer malloc returns (and its
/// alignment, NVIDIA's).
constexpr int64_t kHeapBlockHeaderBytes = 16;

/// Replaces each call of `malloc`, `free` and `__cuda_syscall_aligned_malloc`
/// (not a .func of the module) with a call of the module's allocator, or
/// declares them where the target has its own. Runs before the conversion
/// patterns (DeviceHeap.cpp).
mlir::LogicalResult expandDeviceHeap(mlir::gpu::GPUModuleOp module, const PTXLoweringState &state);

} // namespace zmlir

#endif // ZMLIR_LOWERING_DEVICEHEAP_H
