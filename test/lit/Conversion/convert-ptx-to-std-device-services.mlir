// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefix=SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefix=GFX9

// printf("%d and %s\n", v, s) as nvcc emits it: the format is a constant
// string, so the record's layout is known: the header (16 bytes), the int
// at 16 and the string's pointer at 24 (vprintf's buffer, copied), then the
// string's bytes with its NUL. The module's formats and state are globals
// the driver reads and sets; printf returns its argument count.
// SPV: llvm.mlir.global external @__zmlir_printf_formats(dense<[37, 100, 32, 97, 110, 100, 32, 37, 115, 10, 0]> : tensor<11xi8>) {addr_space = 1 : i32, alignment = 1 : i64} : !llvm.array<11 x i8>
// SPV: llvm.mlir.global external @__zmlir_printf(dense<0> : tensor<2xi64>) {addr_space = 1 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>
// SPV-LABEL: gpu.func @print
// SPV: %[[V:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> i32
// SPV: %[[S:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr -> i64
// The string's length: a loop over its bytes to the NUL, however long.
// SPV: ^[[HEAD:.*]](%[[N:.*]]: i64):
// SPV-NOT: %c4096_i64
// SPV: %[[BYTE:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> i8
// SPV: arith.cmpi eq, %[[BYTE]], %{{.*}} : i8
// SPV: ^{{.*}}(%[[LEN:.*]]: i64):
// SPV: %[[STATE:.*]] = llvm.mlir.addressof @__zmlir_printf : !llvm.ptr<1>
// SPV: %[[BUF:.*]] = llvm.load %[[STATE]] {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// SPV: %[[HEAD_PTR:.*]] = llvm.inttoptr %[[BUF]] : i64 to !llvm.ptr<1>
// SPV: %[[AT:.*]] = llvm.atomicrmw add %[[HEAD_PTR]], %[[SIZE:.*]] monotonic : !llvm.ptr<1>, i64
// SPV: %[[END:.*]] = arith.addi %[[AT]], %[[SIZE]] : i64
// SPV: arith.cmpi ule, %[[END]], %{{.*}} : i64
// SPV: llvm.store %[[V]], %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// SPV: llvm.store %[[S]], %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
// SPV: llvm.store %{{.*}}, %{{.*}} {alignment = 1 : i64} : i8, !llvm.ptr<1>
// SPV: %[[TWO:.*]] = arith.constant 2 : i32
// SPV: llvm.store %[[TWO]]
// NV-LABEL: gpu.module @ptx
// NV: llvm.func @vprintf(i64, i64) -> i32
// NV-LABEL: gpu.func @print
// NV: %[[R:.*]] = llvm.call @vprintf(%{{.*}}, %{{.*}}) : (i64, i64) -> i32
// NV-NOT: __zmlir_printf
// GFX9-LABEL: gpu.func @print
// GFX9: llvm.atomicrmw add
ptx.var @"$str" {space = #ptx.space<global>, type = #ptx.type<b8>, count = 11, align = 1, init = array<i8: 37, 100, 32, 97, 110, 100, 32, 37, 115, 10>}
func.func @print(%out: i64, %v: i32, %s: i64) attributes {ptx.entry} {
  %depot = ptx.local_var {align = 8 : i64, size = 16 : i64} : i64
  %args = ptx.cvta %depot {space = #ptx.space<local>, type = #ptx.type<u64>} : i64 -> i64
  ptx.st %depot, %v {space = #ptx.space<local>, type = #ptx.type<u32>} : i64, i32
  ptx.st %depot, %s {offset = 8 : i64, space = #ptx.space<local>, type = #ptx.type<u64>} : i64, i64
  %a = ptx.addr_of @"$str" : i64
  %f = ptx.cvta %a {space = #ptx.space<global>, type = #ptx.type<u64>} : i64 -> i64
  %r = ptx.call @vprintf(%f, %args) {uni} : (i64, i64) -> i32
  ptx.st %out, %r {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  ptx.ret
}

// -----

// The same format reached through a block argument (a register set on two
// paths) and at an offset into its variable ("ok\n", no arguments: no loads
// of the argument buffer, a 16-byte record); two calls of one format share
// its index.
// SPV: llvm.mlir.global external @__zmlir_printf_formats(dense<[111, 107, 10, 0]> : tensor<4xi8>)
// SPV-LABEL: gpu.func @joined
// SPV-NOT: !llvm.ptr -> i32
// SPV: llvm.atomicrmw add %{{.*}}, %c16_i64{{(_[0-9]+)?}} monotonic
// SPV: llvm.atomicrmw add %{{.*}}, %c16_i64{{(_[0-9]+)?}} monotonic
ptx.var @msg {space = #ptx.space<global>, type = #ptx.type<b8>, count = 8, align = 1, init = array<i8: 110, 111, 116, 32, 111, 107, 10>}
func.func @joined(%p: i1) attributes {ptx.entry} {
  %a = ptx.addr_of @msg : i64
  %c4 = arith.constant 4 : i64
  %b = ptx.add %a, %c4 {type = #ptx.type<u64>} : i64
  %zero = arith.constant 0 : i64
  ptx.cond_bra %p, ^left(%b : i64), ^right(%b : i64)
^left(%l: i64):
  ptx.bra ^join(%l : i64)
^right(%r: i64):
  ptx.bra ^join(%r : i64)
^join(%f: i64):
  %g = ptx.cvta %f {space = #ptx.space<global>, type = #ptx.type<u64>} : i64 -> i64
  %0 = ptx.call @vprintf(%g, %zero) : (i64, i64) -> i32
  %1 = ptx.call @vprintf(%g, %zero) : (i64, i64) -> i32
  ptx.ret
}

// -----

// __assertfail(message, file, line, function, charsize): NVIDIA's message
// format with the block and thread indices, then the thread ends: on SPIR-V
// the trap word's assert value (2, CUDA_ERROR_ASSERT for the runtime) and a
// return; the code after the call stays behind an always-taken branch.
// SPV: @__zmlir_printf_formats(dense<[37, 115, 58, 37, 100, 58, 32, 37, 115, 58, 32, 98, 108, 111, 99, 107, 58, 32, 91, 37, 100, 44, 37, 100, 44, 37, 100, 93, 44, 32, 116, 104, 114, 101, 97, 100, 58, 32, 91, 37, 100, 44, 37, 100, 44, 37, 100, 93, 32, 65, 115, 115, 101, 114, 116, 105, 111, 110, 32, 96, 37, 115, 96, 32, 102, 97, 105, 108, 101, 100, 46, 10, 0]> : tensor<73xi8>)
// SPV-LABEL: gpu.func @check
// SPV: gpu.block_id x
// SPV: gpu.thread_id z
// SPV: llvm.atomicrmw add
// SPV: %[[TRUE:.*]] = arith.constant true
// SPV: cf.cond_br %[[TRUE]], ^[[END:[a-z0-9]*]], ^[[REST:[a-z0-9]*]]
// SPV: ^[[END]]:
// SPV-NEXT: %[[TWO:.*]] = arith.constant 2 : i32
// SPV-NEXT: %[[WORD:.*]] = llvm.mlir.addressof @__zmlir_trap : !llvm.ptr<1>
// SPV-NEXT: llvm.atomicrmw xchg %[[WORD]], %[[TWO]] monotonic : !llvm.ptr<1>, i32
// SPV-NEXT: gpu.return
// NV: llvm.func @__assertfail(i64, i64, i32, i64, i64)
// NV-LABEL: gpu.func @check
// NV: llvm.call @__assertfail(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i32, i64, i64) -> ()
// GFX9-LABEL: gpu.func @check
// GFX9: llvm.atomicrmw add
// GFX9: llvm.call_intrinsic "llvm.trap"
ptx.var @text {space = #ptx.space<global>, type = #ptx.type<b8>, count = 2, align = 1, init = array<i8: 120>}
func.func @check(%p: i1) attributes {ptx.entry} {
  ptx.cond_bra %p, ^fail, ^ok
^fail:
  %a = ptx.addr_of @text : i64
  %s = ptx.cvta %a {space = #ptx.space<global>, type = #ptx.type<u64>} : i64 -> i64
  %line = arith.constant 64 : i32
  %one = arith.constant 1 : i64
  ptx.call @__assertfail(%s, %s, %line, %s, %one) {uni} : (i64, i64, i32, i64, i64) -> ()
  ptx.bra ^ok
^ok:
  ptx.ret
}
