// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefix=SYNC
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=host | FileCheck %s --check-prefix=SYNC
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefix=SYNC
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV

// A whole copy (a source size of at least the copy's, or none) is one
// load of 32-bit words from global memory and one store into the shared
// window, at the offsets (a 32-bit address's in 32 bits: it wraps); the
// groups are dropped. NVPTX: NVIDIA's
// cp.async, without the source size, and its groups.
// SYNC-LABEL: gpu.func @whole
// SYNC: %[[WINDOW:.*]] = llvm.mlir.addressof @__zmlir_shared_window : !llvm.ptr<3>
// SYNC: %[[DOFF:.*]] = arith.addi %{{.*}}, %c16_i32{{.*}} : i32
// SYNC: %[[DOFF64:.*]] = arith.extui %[[DOFF]] : i32 to i64
// SYNC: %[[DST:.*]] = llvm.getelementptr %[[WINDOW]][%[[DOFF64]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// SYNC: %[[SOFF:.*]] = arith.addi %{{.*}}, %c32_i64
// SYNC: %[[SRC:.*]] = llvm.inttoptr %[[SOFF]] : i64 to !llvm.ptr<1>
// SYNC: %[[V:.*]] = llvm.load %[[SRC]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// SYNC: llvm.store %[[V]], %[[DST]] {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// SYNC: %[[V2:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xi32>
// SYNC: llvm.store %[[V2]], %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<3>
// SYNC: %[[V3:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// SYNC: llvm.store %[[V3]], %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// SYNC-NOT: cf.cond_br
// SYNC-NOT: ptx.
// SYNC: gpu.return
// NV-LABEL: gpu.func @whole
// NV: llvm.call_intrinsic "llvm.nvvm.cp.async.cg.shared.global.16"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, !llvm.ptr<1>) -> ()
// NV: llvm.call_intrinsic "llvm.nvvm.cp.async.ca.shared.global.8"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, !llvm.ptr<1>) -> ()
// NV: llvm.call_intrinsic "llvm.nvvm.cp.async.ca.shared.global.4"(%{{.*}}, %{{.*}}) : (!llvm.ptr<3>, !llvm.ptr<1>) -> ()
// NV: llvm.call_intrinsic "llvm.nvvm.cp.async.commit.group"() : () -> ()
// NV: llvm.inline_asm has_side_effects "cp.async.wait_group 1;", "~{memory}"
// NV: llvm.call_intrinsic "llvm.nvvm.cp.async.wait.all"() : () -> ()
func.func @whole(%d: i32, %s: i64) attributes {ptx.entry} {
  %c16 = arith.constant 16 : i32
  ptx.cp_async %d, %s src_size %c16 {cache = #ptx.cache<cg>, size = 16 : i64, dst_offset = 16 : i64, src_offset = 32 : i64} : i32, i64
  ptx.cp_async %d, %s {cache = #ptx.cache<ca>, size = 8 : i64} : i32, i64
  ptx.cp_async %d, %s {cache = #ptx.cache<ca>, size = 4 : i64} : i32, i64
  ptx.cp_async_commit_group
  ptx.cp_async_wait_group {pending = 1 : i64}
  ptx.cp_async_wait_group {all}
  ptx.ret
}

// -----

// A source size in a register: zeros where it is 0, without reading the
// source; else the copy's bytes, those from the source size on replaced by
// zeros. NVPTX: cp.async with the source size (`.s`).
// SYNC-LABEL: gpu.func @zero_fill
// SYNC-SAME: %[[N:[^:]*]]: i32)
// SYNC: %[[ZEROS:.*]] = arith.constant dense<0> : vector<8xi8>
// SYNC: %[[ANY:.*]] = arith.cmpi ne, %[[N]], %c0_i32
// SYNC: cf.cond_br %[[ANY]], ^[[LOAD:.*]], ^[[STORE:.*]](%[[ZEROS]] : vector<8xi8>)
// SYNC: ^[[LOAD]]:
// SYNC: %[[V:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<8xi8>
// SYNC: %[[SPLAT:.*]] = llvm.shufflevector
// SYNC: %[[KEEP:.*]] = arith.cmpi ult, %{{.*}}, %[[SPLAT]] : vector<8xi32>
// SYNC: %[[BYTES:.*]] = arith.select %[[KEEP]], %[[V]], %[[ZEROS]] : vector<8xi1>, vector<8xi8>
// SYNC: cf.br ^[[STORE]](%[[BYTES]] : vector<8xi8>)
// SYNC: ^[[STORE]](%[[B:.*]]: vector<8xi8>):
// SYNC: llvm.store %[[B]], %{{.*}} {alignment = 8 : i64} : vector<8xi8>, !llvm.ptr<3>
// NV-LABEL: gpu.func @zero_fill
// NV-SAME: %[[N:[^:]*]]: i32)
// NV: llvm.call_intrinsic "llvm.nvvm.cp.async.ca.shared.global.8.s"(%{{.*}}, %{{.*}}, %[[N]]) : (!llvm.ptr<3>, !llvm.ptr<1>, i32) -> ()
func.func @zero_fill(%d: i32, %s: i64, %n: i32) attributes {ptx.entry} {
  ptx.cp_async %d, %s src_size %n {cache = #ptx.cache<ca>, size = 8 : i64} : i32, i64
  ptx.ret
}

// -----

// ignore-src is a source size of 0 (all zeros, the source not read) or of
// the whole copy.
// SYNC-LABEL: gpu.func @ignore_src
// SYNC-SAME: %[[P:[^:]*]]: i1)
// SYNC: %[[N:.*]] = arith.select %[[P]], %c0_i32, %c4_i32 : i32
// SYNC: %[[ANY:.*]] = arith.cmpi ne, %[[N]], %{{.*}}
// SYNC: cf.cond_br %[[ANY]]
// SYNC: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<4xi8>
// SYNC: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xi8>, !llvm.ptr<3>
// NV-LABEL: gpu.func @ignore_src
// NV-SAME: %[[P:[^:]*]]: i1)
// NV: %[[N:.*]] = arith.select %[[P]], %c0_i32, %c4_i32 : i32
// NV: llvm.call_intrinsic "llvm.nvvm.cp.async.ca.shared.global.4.s"(%{{.*}}, %{{.*}}, %[[N]])
func.func @ignore_src(%d: i32, %s: i64, %p: i1) attributes {ptx.entry} {
  ptx.cp_async %d, %s ignore_src %p {cache = #ptx.cache<ca>, size = 4 : i64} : i32, i64
  ptx.ret
}

// -----

// A bulk copy of a constant size up to 128 bytes: one <4 x i32> load and
// store per 16 bytes (a shared::cluster destination in the shared window),
// then the mbarrier's tx-count lowered by the size (its word's
// compare-and-swap loop). NVPTX: NVIDIA's instruction, its addresses as
// 64-bit operands.
// SYNC-LABEL: gpu.func @bulk_constant
// SYNC: %[[WINDOW:.*]] = llvm.mlir.addressof @__zmlir_shared_window : !llvm.ptr<3>
// SYNC: %[[DST:.*]] = llvm.getelementptr %[[WINDOW]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// SYNC: %[[SRC:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// SYNC: %[[BAR:.*]] = llvm.getelementptr %[[WINDOW]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// SYNC: %[[S0:.*]] = llvm.getelementptr %[[SRC]][%c0_i64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// SYNC: %[[V0:.*]] = llvm.load %[[S0]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// SYNC: %[[D0:.*]] = llvm.getelementptr %[[DST]][%c0_i64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// SYNC: llvm.store %[[V0]], %[[D0]] {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// SYNC: %[[S1:.*]] = llvm.getelementptr %[[SRC]][%c16_i64{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
// SYNC: llvm.load %[[S1]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// SYNC-NOT: llvm.load {{.*}}vector
// SYNC: %[[SIZE:.*]] = arith.extsi %c32_i32 : i32 to i64
// SYNC: %[[TX:.*]] = arith.subi %{{.*}}, %[[SIZE]] : i64
// SYNC: llvm.load %[[BAR]] atomic syncscope("workgroup") monotonic
// SYNC: arith.addi %{{.*}}, %[[TX]] : i64
// SYNC: llvm.cmpxchg %[[BAR]]
// NV-LABEL: gpu.func @bulk_constant
// NV: llvm.inline_asm has_side_effects "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];", "l,l,r,l,~{memory}" %{{.*}}, %{{.*}}, %c32_i32, %{{.*}} : (i64, i64, i32, i64) -> ()
// NV-NOT: llvm.cmpxchg
func.func @bulk_constant(%d: i32, %s: i64, %b: i32) attributes {ptx.entry} {
  %c32 = arith.constant 32 : i32
  ptx.cp_async_bulk %d, %s, %c32 mbarrier %b {dst_space = #ptx.space<shared_cluster>, src_space = #ptx.space<global>, dst_offset = 16 : i64} : i32, i64, i32
  ptx.ret
}

// -----

// A size in a register: a loop of size / 16 steps, none for a size below
// 16; shared to shared::cluster, the mbarrier at its offset.
// SYNC-LABEL: gpu.func @bulk_loop
// SYNC-SAME: %[[N:[^:]*]]: i32, %{{[^:]*}}: i32)
// SYNC: %[[WIDE:.*]] = arith.extui %[[N]] : i32 to i64
// SYNC: %[[STEPS:.*]] = arith.shrui %[[WIDE]], %c4_i64 : i64
// SYNC: %[[ANY:.*]] = arith.cmpi ne, %[[STEPS]], %c0_i64 : i64
// SYNC: cf.cond_br %[[ANY]], ^[[LOOP:.*]](%c0_i64 : i64), ^[[EXIT:bb[0-9]+]]
// SYNC: ^[[LOOP]](%[[STEP:.*]]: i64):
// SYNC: %[[OFF:.*]] = arith.shli %[[STEP]], %{{.*}} : i64
// SYNC: %[[S:.*]] = llvm.getelementptr %{{.*}}[%[[OFF]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// SYNC: %[[V:.*]] = llvm.load %[[S]] {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// SYNC: %[[D:.*]] = llvm.getelementptr %{{.*}}[%[[OFF]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// SYNC: llvm.store %[[V]], %[[D]] {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// SYNC: %[[NEXT:.*]] = arith.addi %[[STEP]], %{{.*}} : i64
// SYNC: %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %[[STEPS]] : i64
// SYNC: cf.cond_br %[[MORE]], ^[[LOOP]](%[[NEXT]] : i64), ^[[EXIT]]
// SYNC: ^[[EXIT]]:
// SYNC: arith.extsi %[[N]] : i32 to i64
// SYNC: llvm.cmpxchg
// NV-LABEL: gpu.func @bulk_loop
// NV-SAME: %[[N:[^:]*]]: i32, %{{[^:]*}}: i32)
// NV: llvm.inline_asm has_side_effects "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];", "l,l,r,l,~{memory}" %{{.*}}, %{{.*}}, %[[N]], %{{.*}} : (i64, i64, i32, i64) -> ()
func.func @bulk_loop(%d: i32, %s: i32, %n: i32, %b: i32) attributes {ptx.entry} {
  ptx.cp_async_bulk %d, %s, %n mbarrier %b {dst_space = #ptx.space<shared_cluster>, src_space = #ptx.space<shared>, mbar_offset = 8 : i64} : i32, i32, i32
  ptx.ret
}

// -----

// Shared to global memory (bulk_group): the copy with no mbarrier; the
// bulk groups are dropped. NVPTX: NVIDIA's copy, commit and waits.
// SYNC-LABEL: gpu.func @bulk_to_global
// SYNC: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// SYNC: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// SYNC-NOT: llvm.cmpxchg
// SYNC-NOT: ptx.
// SYNC: gpu.return
// NV-LABEL: gpu.func @bulk_to_global
// NV: llvm.inline_asm has_side_effects "cp.async.bulk.global.shared::cta.bulk_group [$0], [$1], $2;", "l,l,r,~{memory}"
// NV: llvm.inline_asm has_side_effects "cp.async.bulk.commit_group;", "~{memory}"
// NV: llvm.inline_asm has_side_effects "cp.async.bulk.wait_group.read 1;", "~{memory}"
// NV: llvm.inline_asm has_side_effects "cp.async.bulk.wait_group 0;", "~{memory}"
func.func @bulk_to_global(%d: i64, %s: i32, %n: i32) attributes {ptx.entry} {
  ptx.cp_async_bulk %d, %s, %n {dst_space = #ptx.space<global>, src_space = #ptx.space<shared>} : i64, i32
  ptx.cp_async_bulk_commit_group
  ptx.cp_async_bulk_wait_group {pending = 1 : i64, read}
  ptx.cp_async_bulk_wait_group
  ptx.ret
}

// -----

// fence.proxy.async: nothing where bulk copies are the thread's own loads
// and stores; NVPTX: NVIDIA's, with its state space.
// SYNC-LABEL: gpu.func @proxy_fence
// SYNC-NOT: llvm.fence
// SYNC-NOT: ptx.
// SYNC: gpu.return
// NV-LABEL: gpu.func @proxy_fence
// NV: llvm.inline_asm has_side_effects "fence.proxy.async.shared::cta;", "~{memory}"
// NV: llvm.inline_asm has_side_effects "fence.proxy.async;", "~{memory}"
func.func @proxy_fence() attributes {ptx.entry} {
  ptx.fence_proxy_async {space = #ptx.space<shared>}
  ptx.fence_proxy_async
  ptx.ret
}
