// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefix=SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV

// malloc, __nv_aligned_device_malloc (__cuda_syscall_aligned_malloc) and
// free where the target has no functions of its own: calls of the module's
// allocator, whose state (the heap's address) the driver sets. malloc is an
// aligned malloc of NVIDIA's 16 bytes.
// SPV: llvm.mlir.global external @__zmlir_device_heap(0 : i64) {addr_space = 1 : i32, alignment = 8 : i64} : i64
// SPV-LABEL: gpu.func @heap
// SPV: %[[SIXTEEN:.*]] = arith.constant 16 : i64
// SPV: %[[P:.*]] = llvm.call @__zmlir_heap_alloc(%[[N:.*]], %[[SIXTEEN]]) {{.*}}: (i64, i64) -> i64
// SPV: llvm.call @__zmlir_heap_alloc(%[[N]], %{{.*}}) {{.*}}: (i64, i64) -> i64
// SPV: llvm.call @__zmlir_heap_free(%[[P]]) {{.*}}: (i64) -> ()
// A push on a free list: the block's link, then a compare-and-swap of the
// list's head (index and tag), retried with the head it found.
// SPV-LABEL: llvm.func internal @__zmlir_heap_push(
// SPV: ^[[PUSH:.*]](%[[HEAD:.*]]: i64):
// SPV: llvm.store %{{.*}}, %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// SPV: %[[PAIR:.*]] = llvm.cmpxchg %{{.*}}, %[[HEAD]], %{{.*}} syncscope("device") acq_rel acquire
// SPV: %[[SEEN:.*]] = llvm.extractvalue %[[PAIR]][0]
// SPV: cf.cond_br %{{.*}}, ^{{.*}}, ^[[PUSH]](%[[SEEN]] : i64)
// The allocator: the class from the request's size and alignment, a pop
// from its free list, the bump region, larger classes split.
// SPV-LABEL: llvm.func internal @__zmlir_heap_alloc(
// SPV: llvm.mlir.addressof @__zmlir_device_heap
// SPV: math.ctlz
// SPV: llvm.cmpxchg
// SPV: llvm.cmpxchg
// SPV: llvm.call @__zmlir_heap_push(
// SPV-LABEL: llvm.func internal @__zmlir_heap_free(
// SPV: llvm.call @__zmlir_heap_push(
// NV-LABEL: gpu.module @ptx
// NV-DAG: llvm.func @malloc(i64) -> i64
// NV-DAG: llvm.func @free(i64)
// NV-DAG: llvm.func @__cuda_syscall_aligned_malloc(i64, i64) -> i64
// NV-LABEL: gpu.func @heap
// NV: llvm.call @malloc(
// NV: llvm.call @__cuda_syscall_aligned_malloc(
// NV: llvm.call @free(
// NV-NOT: __zmlir_heap
func.func @heap(%out: i64, %n: i64) attributes {ptx.entry} {
  %p = ptx.call @malloc(%n) {uni} : (i64) -> i64
  ptx.st %out, %p {space = #ptx.space<global>, type = #ptx.type<u64>} : i64, i64
  %c64 = arith.constant 64 : i64
  %q = ptx.call @__cuda_syscall_aligned_malloc(%n, %c64) {uni} : (i64, i64) -> i64
  ptx.st %out, %q {offset = 8 : i64, space = #ptx.space<global>, type = #ptx.type<u64>} : i64, i64
  ptx.call @free(%p) {uni} : (i64) -> ()
  ptx.ret
}

// -----

// A module that defines its own malloc keeps calling it.
// SPV-LABEL: gpu.func @own
// SPV: llvm.call @malloc(
// SPV-NOT: __zmlir_device_heap
func.func @malloc(%n: i64) -> i64 {
  ptx.ret %n : i64
}
func.func @own(%out: i64, %n: i64) attributes {ptx.entry} {
  %p = ptx.call @malloc(%n) : (i64) -> i64
  ptx.st %out, %p {space = #ptx.space<global>, type = #ptx.type<u64>} : i64, i64
  ptx.ret
}
