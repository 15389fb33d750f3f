// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefix=SPV

// NVPTX: wmma.load, wmma.mma and wmma.store of a module for sm_90 are the
// llvm.nvvm.wmma.* intrinsics (f16 pairs as <2 x half>, the address a
// pointer in the op's state space, the stride given or not), with no
// exchange area in the shared window; SPIR-V keeps the emulation.
// NV-LABEL: gpu.func @f16_f32
// NV-SAME: zmlir.static_shared_bytes = 0 : i64
// NV: %[[A:.*]] = llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.load.a.row.f16"(%{{.*}}) : (!llvm.ptr<3>) -> !llvm.struct<(vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>)>
// NV: %[[A0:.*]] = llvm.extractvalue %[[A]][0]
// NV: llvm.bitcast %[[A0]] : vector<2xf16> to i32
// NV: llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.load.b.col.stride.f16"(%{{.*}}, %{{.*}}) : (!llvm.ptr<1>, i32) -> !llvm.struct<(vector<2xf16>,
// NV: %[[C:.*]] = llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.load.c.row.stride.f32"(%{{.*}}, %{{.*}}) : (!llvm.ptr, i32) -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// NV: %[[D:.*]] = llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.mma.row.col.f32.f32"({{.*}}) : (vector<2xf16>, {{.*}}, f32, f32, f32, f32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// NV: %[[D0:.*]] = llvm.extractvalue %[[D]][0]
// NV: llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.store.d.col.stride.f32"(%{{.*}}, %[[D0]], {{.*}}) : (!llvm.ptr<1>, f32, f32, f32, f32, f32, f32, f32, f32, i32) -> ()
// NV-NOT: __zmlir_wmma_mma
// SPV-LABEL: gpu.func @f16_f32
// SPV: llvm.call @__zmlir_wmma_mma_m16n16k16_f32_f16_f16_f32(
// SPV-NOT: llvm.nvvm.wmma
module attributes {ptx.target = ["sm_90"]} {
  func.func @f16_f32(%p: i64, %s: i32, %q: i32) attributes {ptx.entry} {
    %a:8 = ptx.wmma_load %q {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<a>, shape = #ptx.wmma_shape<m16n16k16>, space = #ptx.space<shared>, type = #ptx.wmma_type<f16>} : i32 -> i32, i32, i32, i32, i32, i32, i32, i32
    %b:8 = ptx.wmma_load %p, %s {layout = #ptx.wmma_layout<col>, matrix = #ptx.wmma_matrix<b>, shape = #ptx.wmma_shape<m16n16k16>, space = #ptx.space<global>, type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32, i32, i32, i32, i32
    %c:8 = ptx.wmma_load %p, %s {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<c>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f32>} : i64 -> f32, f32, f32, f32, f32, f32, f32, f32
    %d:8 = ptx.wmma_mma a(%a#0, %a#1, %a#2, %a#3, %a#4, %a#5, %a#6, %a#7) b(%b#0, %b#1, %b#2, %b#3, %b#4, %b#5, %b#6, %b#7) c(%c#0, %c#1, %c#2, %c#3, %c#4, %c#5, %c#6, %c#7) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<f16>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<f16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32, i32, i32, i32, i32), (f32, f32, f32, f32, f32, f32, f32, f32) -> f32, f32, f32, f32, f32, f32, f32, f32
    ptx.wmma_store %p, %d#0, %d#1, %d#2, %d#3, %d#4, %d#5, %d#6, %d#7 stride %s {layout = #ptx.wmma_layout<col>, shape = #ptx.wmma_shape<m16n16k16>, space = #ptx.space<global>, type = #ptx.wmma_type<f32>} : i64, f32, f32, f32, f32, f32, f32, f32, f32
    ptx.ret
  }
}

// -----

// An f16 accumulator with .satfinite: C and D as <2 x half> pairs, the
// signature D's and C's types.
// NV-LABEL: gpu.func @f16_satfinite
// NV: llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.mma.row.col.f16.f16.satfinite"({{.*}}) : ({{.*}}) -> !llvm.struct<(vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>)>
// NV: llvm.bitcast %{{.*}} : vector<2xf16> to i32
// SPV-LABEL: gpu.func @f16_satfinite
// SPV: llvm.call @__zmlir_wmma_mma_m16n16k16_f16_f16_f16_f16_satfinite(
module attributes {ptx.target = ["sm_90"]} {
  func.func @f16_satfinite(%a: i32, %p: i64) attributes {ptx.entry} {
    %d:4 = ptx.wmma_mma a(%a, %a, %a, %a, %a, %a, %a, %a) b(%a, %a, %a, %a, %a, %a, %a, %a) c(%a, %a, %a, %a) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<f16>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<f16>, ctype = #ptx.wmma_type<f16>, dtype = #ptx.wmma_type<f16>, satfinite, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32) -> i32, i32, i32, i32
    ptx.st %p, %d#0 {type = #ptx.type<b32>} : i64, i32
    ptx.ret
  }
}

// -----

// The other multiplicand types are named by A's: bf16 and tf32 in i32
// registers, s8 with .satfinite, f64 with its rounding modifier.
// NV-LABEL: gpu.func @other_types
// NV: llvm.call_intrinsic "llvm.nvvm.wmma.m32n8k16.mma.row.row.bf16"({{.*}}) : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, f32, f32, f32, f32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// NV: llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k8.mma.col.row.tf32"({{.*}}) : (i32, i32, i32, i32, i32, i32, i32, i32, f32, f32, f32, f32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// NV: llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.mma.row.col.s8.satfinite"({{.*}}) : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)>
// NV: llvm.call_intrinsic "llvm.nvvm.wmma.m8n8k4.mma.row.col.rz.f64"({{.*}}) : (f64, f64, f64, f64) -> !llvm.struct<(f64, f64)>
// NV: llvm.call_intrinsic "llvm.nvvm.wmma.m8n8k4.store.d.row.f64"
// SPV-LABEL: gpu.func @other_types
// SPV: llvm.call @__zmlir_wmma_mma_m32n8k16_f32_bf16_bf16_f32(
// SPV: llvm.call @__zmlir_wmma_mma_m16n16k8_f32_tf32_tf32_f32(
// SPV: llvm.call @__zmlir_wmma_mma_m16n16k16_s32_s8_s8_s32_satfinite(
// SPV: llvm.call @__zmlir_wmma_mma_m8n8k4_f64_f64_f64_f64_rz(
module attributes {ptx.target = ["sm_90"]} {
  func.func @other_types(%i: i32, %f: f32, %x: f64, %p: i64) attributes {ptx.entry} {
    %d1:8 = ptx.wmma_mma a(%i, %i, %i, %i, %i, %i, %i, %i) b(%i, %i) c(%f, %f, %f, %f, %f, %f, %f, %f) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<bf16>, blayout = #ptx.wmma_layout<row>, btype = #ptx.wmma_type<bf16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.wmma_shape<m32n8k16>} : (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32), (f32, f32, f32, f32, f32, f32, f32, f32) -> f32, f32, f32, f32, f32, f32, f32, f32
    %d2:8 = ptx.wmma_mma a(%i, %i, %i, %i) b(%i, %i, %i, %i) c(%d1#0, %f, %f, %f, %f, %f, %f, %f) {alayout = #ptx.wmma_layout<col>, atype = #ptx.wmma_type<tf32>, blayout = #ptx.wmma_layout<row>, btype = #ptx.wmma_type<tf32>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.wmma_shape<m16n16k8>} : (i32, i32, i32, i32), (i32, i32, i32, i32), (f32, f32, f32, f32, f32, f32, f32, f32) -> f32, f32, f32, f32, f32, f32, f32, f32
    %d3:8 = ptx.wmma_mma a(%i, %i) b(%i, %i) c(%i, %i, %i, %i, %i, %i, %i, %i) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<s8>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<s8>, ctype = #ptx.wmma_type<s32>, dtype = #ptx.wmma_type<s32>, satfinite, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32), (i32, i32), (i32, i32, i32, i32, i32, i32, i32, i32) -> i32, i32, i32, i32, i32, i32, i32, i32
    %d4:2 = ptx.wmma_mma a(%x) b(%x) c(%x, %x) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<f64>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, rnd = #ptx.rnd<rz>, shape = #ptx.wmma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64, f64
    ptx.st %p, %d2#0 {type = #ptx.type<f32>} : i64, f32
    ptx.st %p, %d3#0 {type = #ptx.type<b32>} : i64, i32
    ptx.wmma_store %p, %d4#0, %d4#1 {layout = #ptx.wmma_layout<row>, shape = #ptx.wmma_shape<m8n8k4>, type = #ptx.wmma_type<f64>} : i64, f64, f64
    ptx.ret
  }
}

// -----

// An mma of s8 by u8 has no NVVM intrinsic: the whole module keeps the
// emulation on NVPTX too (its fragments' distribution is the emulation's),
// the f16 load beside it included.
// NV-LABEL: gpu.func @mixed_int8
// NV-NOT: llvm.nvvm.wmma
// NV: llvm.call @__zmlir_wmma_mma_m16n16k16_s32_s8_u8_s32(
module attributes {ptx.target = ["sm_90"]} {
  func.func @mixed_int8(%a: i32, %c: i32, %p: i64) attributes {ptx.entry} {
    %f:8 = ptx.wmma_load %p {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<a>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32, i32, i32, i32, i32
    ptx.st %p, %f#0 {type = #ptx.type<b32>} : i64, i32
    %d:8 = ptx.wmma_mma a(%a, %a) b(%a, %a) c(%c, %c, %c, %c, %c, %c, %c, %c) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<s8>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<u8>, ctype = #ptx.wmma_type<s32>, dtype = #ptx.wmma_type<s32>, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32), (i32, i32), (i32, i32, i32, i32, i32, i32, i32, i32) -> i32, i32, i32, i32, i32, i32, i32, i32
    ptx.st %p, %d#0 {type = #ptx.type<b32>} : i64, i32
    ptx.ret
  }
}

// -----

// bf16 wmma needs sm_80: PTX for sm_75 keeps the emulation, as does a
// module naming no architecture.
// NV-LABEL: gpu.func @bf16_sm75
// NV-NOT: llvm.nvvm.wmma
// NV: llvm.call @__zmlir_wmma_mma_m16n16k16_f32_bf16_bf16_f32(
module attributes {ptx.target = ["sm_75"]} {
  func.func @bf16_sm75(%i: i32, %f: f32, %p: i64) attributes {ptx.entry} {
    %d:8 = ptx.wmma_mma a(%i, %i, %i, %i) b(%i, %i, %i, %i) c(%f, %f, %f, %f, %f, %f, %f, %f) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<bf16>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<bf16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32, i32, i32), (i32, i32, i32, i32), (f32, f32, f32, f32, f32, f32, f32, f32) -> f32, f32, f32, f32, f32, f32, f32, f32
    ptx.st %p, %d#0 {type = #ptx.type<f32>} : i64, f32
    ptx.ret
  }
}
