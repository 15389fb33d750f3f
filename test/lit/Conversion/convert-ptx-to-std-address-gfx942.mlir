// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefix=GFX9
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=host | FileCheck %s --check-prefix=HOST

// isspacep.global and .local, which SPIR-V rejects
// (convert-ptx-to-std-address-unsupported.mlir).

// isspacep.global on AMDGPU: a flat address in neither LDS nor scratch.
// GFX9-LABEL: gpu.func @isspacep_global
// GFX9: %[[S:.*]] = llvm.call_intrinsic "llvm.amdgcn.is.shared"
// GFX9: %[[L:.*]] = llvm.call_intrinsic "llvm.amdgcn.is.private"
// GFX9: %[[E:.*]] = arith.ori %[[S]], %[[L]] : i1
// GFX9: arith.xori %[[E]], %true : i1
// NV-LABEL: gpu.func @isspacep_global
// The host target asks its runtime (0 global, 1 shared, 2 local: the
// fiber's stack).
// HOST-LABEL: gpu.func @isspacep_global
// HOST-SAME: (%[[A:[^:]*]]: i64)
// HOST: %[[S:.*]] = llvm.call @zmlir_host_state_space(%[[A]]) : (i64) -> i32
// HOST: arith.cmpi eq, %[[S]], %c0_i32 : i32
// NV: llvm.call_intrinsic "llvm.nvvm.isspacep.global"
func.func @isspacep_global(%a: i64) attributes {ptx.entry} {
  %0 = ptx.isspacep %a {space = #ptx.space<global>} : i64
  ptx.ret
}

// -----

// A 32-bit generic address is zero-extended; isspacep.local is the
// aperture test of scratch on AMDGPU.
// GFX9-LABEL: gpu.func @isspacep_local32
// GFX9: %[[W:.*]] = arith.extui %{{.*}} : i32 to i64
// GFX9: %[[P:.*]] = llvm.inttoptr %[[W]] : i64 to !llvm.ptr
// GFX9: llvm.call_intrinsic "llvm.amdgcn.is.private"(%[[P]])
// NV-LABEL: gpu.func @isspacep_local32
// HOST-LABEL: gpu.func @isspacep_local32
// HOST: %[[W:.*]] = arith.extui %{{.*}} : i32 to i64
// HOST: %[[S:.*]] = llvm.call @zmlir_host_state_space(%[[W]]) : (i64) -> i32
// HOST: arith.cmpi eq, %[[S]], %c2_i32 : i32
// NV: llvm.call_intrinsic "llvm.nvvm.isspacep.local"
func.func @isspacep_local32(%a: i32) attributes {ptx.entry} {
  %0 = ptx.isspacep %a {space = #ptx.space<local>} : i32
  ptx.ret
}
