// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefix=GFX9

// bar.arrive is NVIDIA's on NVPTX; on AMDGPU a whole-CTA barrier (s_barrier
// counts the wavefronts reaching any barrier).
// NV-LABEL: gpu.func @bar_arrive
// NV: llvm.call_intrinsic "llvm.nvvm.barrier.cta.arrive.aligned.count"(%{{.*}}, %arg0) : (i32, i32) -> ()
// GFX9-LABEL: gpu.func @bar_arrive
// GFX9: arith.cmpi eq, %arg0, %{{.*}} : i32
// GFX9: gpu.barrier
func.func @bar_arrive(%n: i32) attributes {ptx.entry} {
  %c1 = arith.constant 1 : i32
  ptx.bar_arrive %c1, %n {aligned}
  ptx.ret
}

// -----

// Shared-memory sizes: NVIDIA's registers, less the static .shared
// variables for the dynamic size (they are in the window the launch sizes as
// dynamic shared memory); on AMDGPU the dispatch packet's group segment size
// (the window, static + dynamic) less the static part.
// NV-LABEL: gpu.func @smem_size
// NV: %[[D:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.dynamic_smem_size"
// NV: arith.subi %[[D]], %c64_i32 : i32
// NV: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.total_smem_size"
// NV-NOT: arith.subi
// GFX9-LABEL: gpu.func @smem_size
// GFX9-SAME: zmlir.static_shared_bytes = 64
// GFX9: %[[PACKET:.*]] = llvm.call_intrinsic "llvm.amdgcn.dispatch.ptr"() : () -> !llvm.ptr<4>
// GFX9: %[[FIELD:.*]] = llvm.getelementptr %[[PACKET]][28]
// GFX9: %[[TOTAL:.*]] = llvm.load %[[FIELD]]
// GFX9: arith.subi %[[TOTAL]], %c64_i32 : i32
ptx.var @tile {space = #ptx.space<shared>, type = #ptx.type<b8>, count = 64, align = 4}
func.func @smem_size() attributes {ptx.entry} {
  %a = ptx.addr_of @tile : i32
  %0 = ptx.sreg <dynamic_smem_size> : i32
  %1 = ptx.sreg <total_smem_size> : i32
  ptx.ret
}

// -----

// %globaltimer counts nanoseconds; AMD's steady counter runs at 100 MHz.
// NV-LABEL: gpu.func @globaltimer
// NV: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.globaltimer"
// GFX9-LABEL: gpu.func @globaltimer
// GFX9: %[[T:.*]] = llvm.call_intrinsic "llvm.readsteadycounter"() : () -> i64
// GFX9: arith.muli %[[T]], %c10_i64 : i64
func.func @globaltimer() attributes {ptx.entry} {
  %0 = ptx.sreg <globaltimer> : i64
  ptx.ret
}

// -----

// %clock64: NVIDIA's register, AMD's cycle counter.
// NV-LABEL: gpu.func @clock
// NV: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.clock64"
// GFX9-LABEL: gpu.func @clock
// GFX9: llvm.call_intrinsic "llvm.readcyclecounter"
func.func @clock() attributes {ptx.entry} {
  %0 = ptx.sreg <clock64> : i64
  ptx.ret
}
