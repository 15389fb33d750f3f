//===- DeviceServices.h - Device printf and assert -------------*- C++ -*-===//
//
// What the driver provides a kernel beyond memory: CUDA's `vprintf` and
// `__assertfail`. Where the target has no functions of those names of its
// own (TargetInfo::hasNativePrintf), each call writes a record to the
// driver's printf buffer, which the driver formats at its synchronisation
// points (zmlir/runtime/cuda/printf.py reads the layout below).
//
//  - The module's state: `__zmlir_printf`, two i64 the driver sets when it
//    loads the module: the address of its buffer (0: none, records are
//    dropped) and the module's id.
//  - The module's formats: `__zmlir_printf_formats`, each format with its
//    NUL, in the order of their indices.
//  - The buffer: an 8-byte head (the bytes reserved so far, past the
//    capacity once a record did not fit), an 8-byte capacity, then records.
//  - A record: u32 size (8-aligned, all of it), u32 module id, u32 format
//    index, u32 zero; the arguments as vprintf's argument buffer holds them
//    (the CUDA ABI: each at an offset aligned to its size); from the next
//    8-byte boundary, each %s argument's bytes and NUL (none for a null
//    pointer), in order.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_DEVICESERVICES_H
#define ZMLIR_LOWERING_DEVICESERVICES_H

#include "zmlir/lowering/Patterns.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace zmlir {

constexpr const char *kPrintfStateName = "__zmlir_printf";
constexpr const char *kPrintfFormatsName = "__zmlir_printf_formats";
/// Bytes before the first record in the buffer (head, capacity).
constexpr int64_t kPrintfBufferHeaderBytes = 16;
/// Bytes of a record's header (size, module id, format index, zero).
constexpr int64_t kPrintfHeaderBytes = 16;

/// Replaces each call of `vprintf` and `__assertfail` (not a .func of the
/// module) with its record, or declares them where the target has its own.
/// A format that is not a constant string is an `unsupported` error. Runs
/// before the conversion patterns (DeviceServices.cpp).
mlir::LogicalResult expandDeviceServices(mlir::gpu::GPUModuleOp module,
                                         const PTXLoweringState &state);

} // namespace zmlir

#endif // ZMLIR_LOWERING_DEVICESERVICES_H
