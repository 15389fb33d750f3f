// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv | FileCheck %s --check-prefixes=CHECK,SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefixes=CHECK,NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefixes=CHECK,GFX9

// Addresses of variables in an initializer: a packed struct of the bytes
// around them and one pointer field per 8-byte address, the addend a
// constant GEP; NVPTX casts a generic(...) one to the generic space.
// CHECK-LABEL: llvm.mlir.global external @table
// CHECK-SAME: !llvm.array<16 x i8>
// CHECK-LABEL: llvm.mlir.global external @ptrs()
// CHECK-SAME: !llvm.struct<packed (array<8 x i8>, ptr<1>, array<8 x i8>, ptr{{(<1>)?}})>
// CHECK: %[[HEAD:.*]] = llvm.mlir.constant(dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi8>) : !llvm.array<8 x i8>
// CHECK: %[[T:.*]] = llvm.mlir.addressof @table : !llvm.ptr<1>
// CHECK: %[[T8:.*]] = llvm.getelementptr %[[T]][8] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
// CHECK: llvm.mlir.constant(dense<0> : tensor<8xi8>) : !llvm.array<8 x i8>
// CHECK: %[[G:.*]] = llvm.mlir.addressof @table : !llvm.ptr<1>
// NV: %[[GEN:.*]] = llvm.addrspacecast %[[G]] : !llvm.ptr<1> to !llvm.ptr
// SPV-NOT: llvm.addrspacecast
// GFX9-NOT: llvm.addrspacecast
// CHECK: %[[S:.*]] = llvm.mlir.undef
// CHECK: llvm.insertvalue %[[HEAD]], %[[S]][0]
// CHECK: llvm.insertvalue %[[T8]], %{{.*}}[1]
// CHECK: llvm.return
ptx.var @table {space = #ptx.space<global>, type = #ptx.type<b8>, count = 16, align = 4}
ptx.var @ptrs {space = #ptx.space<global>, type = #ptx.type<u64>, count = 4, align = 8, init = array<i8: 1, 2, 3, 4, 5, 6, 7, 8>, init_addresses = [#ptx.init_addr<offset = 8, symbol = @table, addend = 8>, #ptx.init_addr<offset = 24, symbol = @table, generic = true>]}

// -----

// A .func's address is its indirect-call encoding, kFuncAddressBase plus its
// index among the address-taken functions by name (@a 0, @b 1, whether taken
// in code or only in an initializer), and the indirect call switches over it.
// CHECK-LABEL: llvm.mlir.global external @fns()
// CHECK-SAME: !llvm.struct<packed (i64, i64)>
// CHECK: llvm.mlir.constant(8821707245088669697 : i64) : i64
// CHECK: llvm.mlir.constant(8821707245088669696 : i64) : i64
// CHECK-LABEL: gpu.func @call_b
// CHECK: cf.switch %{{.*}} : i64
// CHECK-NEXT: default: ^{{.*}},
// CHECK-NEXT: 8821707245088669696: ^[[A:[a-z0-9]*]],
// CHECK-NEXT: 8821707245088669697: ^[[B:[a-z0-9]*]]
// CHECK: ^[[A]]:
// CHECK-NEXT: llvm.call @a
// CHECK: ^[[B]]:
// CHECK-NEXT: llvm.call @b
ptx.var @fns {space = #ptx.space<global>, type = #ptx.type<u64>, count = 2, align = 8, init = array<i8: 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, init_addresses = [#ptx.init_addr<offset = 0, symbol = @b>, #ptx.init_addr<offset = 8, symbol = @a>]}
func.func @a(%x: i32) -> i32 {
  ptx.ret %x : i32
}
func.func @b(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  ptx.ret %y : i32
}
func.func @call_b(%x: i32) attributes {ptx.entry} {
  %f = ptx.func_addr @b : i64
  %r = ptx.call_indirect %f(%x) : (i64, i32) -> i32
  ptx.ret
}
