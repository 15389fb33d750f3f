// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0 generic-address-space=4 shared-window=kernel-arg subgroup-size=32" | FileCheck %s --check-prefix=SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefix=GFX9

// prefetch has no effect on results: nothing on SPIR-V and AMDGPU, the PTX
// instruction (inline: LLVM selects its intrinsics only for PTX ISA 8.0) on
// NVPTX, on the address plus offset.
// SPV-LABEL: gpu.func @prefetch
// SPV-NOT: llvm.inline_asm
// SPV: gpu.return
// NV-LABEL: gpu.func @prefetch
// NV-SAME: (%[[A:.*]]: i64)
// NV: %[[P:.*]] = arith.addi %[[A]], %c16_i64 : i64
// NV: llvm.inline_asm has_side_effects "prefetch.global.L2::evict_last [$0];", "l,~{memory}" %[[P]] : (i64) -> ()
// NV: llvm.inline_asm has_side_effects "prefetchu.L1 [$0];", "l,~{memory}" %[[A]] : (i64) -> ()
// GFX9-LABEL: gpu.func @prefetch
// GFX9-NOT: llvm.inline_asm
// GFX9: gpu.return
func.func @prefetch(%a: i64) attributes {ptx.entry} {
  ptx.prefetch %a {space = #ptx.space<global>, level = #ptx.level<L2_evict_last>, offset = 16} : i64
  ptx.prefetch %a {level = #ptx.level<L1>, uniform} : i64
  ptx.ret
}

// -----

// isspacep.shared: NVIDIA's instruction on NVPTX, the aperture test on
// AMDGPU, and on SPIR-V the generic window [base, base + the launch's window
// size, passed as the global offset).
// SPV-LABEL: gpu.func @isspacep_shared
// SPV-SAME: (%[[A:.*]]: i64, %[[W:.*]]: !llvm.ptr<3>)
// SPV: %[[G:.*]] = llvm.addrspacecast %[[W]] : !llvm.ptr<3> to !llvm.ptr<4>
// SPV: %[[BASE:.*]] = llvm.ptrtoint %[[G]] : !llvm.ptr<4> to i64
// SPV: %[[OFF:.*]] = llvm.call @_Z17get_global_offsetj
// SPV: %[[SIZE:.*]] = arith.andi %[[OFF]], %c4294967295_i64 : i64
// SPV: %[[D:.*]] = arith.subi %[[A]], %[[BASE]] : i64
// SPV: arith.cmpi ult, %[[D]], %[[SIZE]] : i64
// NV-LABEL: gpu.func @isspacep_shared
// NV: %[[P:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// NV: llvm.call_intrinsic "llvm.nvvm.isspacep.shared"(%[[P]]) : (!llvm.ptr) -> i1
// GFX9-LABEL: gpu.func @isspacep_shared
// GFX9: llvm.call_intrinsic "llvm.amdgcn.is.shared"
func.func @isspacep_shared(%a: i64) attributes {ptx.entry} {
  %0 = ptx.isspacep %a {space = #ptx.space<shared>} : i64
  ptx.ret
}

// -----

// isspacep.local and .global on SPIR-V: Intel's CPU runtime keeps private
// memory on the stack of the thread running the work-group, which
// __zmlir_spirv_on_stack tests (the fix-up spirv-state-space defines it);
// local is on the stack and not shared, global neither.
// SPV-LABEL: gpu.func @isspacep_local_global
// SPV-SAME: (%[[A:.*]]: i64, %[[W:.*]]: !llvm.ptr<3>)
// SPV: %[[SHARED:.*]] = arith.cmpi ult
// SPV: %[[STACK:.*]] = llvm.call @__zmlir_spirv_on_stack(%[[A]]) : (i64) -> i1
// SPV: %[[NOT_SHARED:.*]] = arith.xori %[[SHARED]], %true
// SPV: arith.andi %[[STACK]], %[[NOT_SHARED]] : i1
// SPV: %[[STACK2:.*]] = llvm.call @__zmlir_spirv_on_stack(%[[A]]) : (i64) -> i1
// SPV: %[[NOT_STACK:.*]] = arith.xori %[[STACK2]], %true
// SPV: arith.andi %[[NOT_STACK]], %{{.*}} : i1
func.func @isspacep_local_global(%a: i64) attributes {ptx.entry} {
  %0 = ptx.isspacep %a {space = #ptx.space<local>} : i64
  %1 = ptx.isspacep %a {space = #ptx.space<global>} : i64
  ptx.ret
}

// -----

// A device function asks for its kernel's window (the fix-up inlines it into
// the kernels that call it and gives it theirs).
// SPV-LABEL: llvm.func internal @isspacep_shared_func
// SPV: %[[W:.*]] = llvm.call @__zmlir_spirv_shared_window() : () -> !llvm.ptr<3>
// SPV: llvm.addrspacecast %[[W]] : !llvm.ptr<3> to !llvm.ptr<4>
// SPV: arith.cmpi ult
func.func @isspacep_shared_func(%a: i64) {
  %0 = ptx.isspacep %a {space = #ptx.space<shared>} : i64
  ptx.ret
}
