// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefix=SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV

// ldmatrix off NVIDIA's instruction: lane t reads the address of row t / 4
// of matrix i from lane 8 i + t / 4 (a shuffle) and loads the 32-bit word
// 4 (t % 4) bytes into it, at the op's offset in the shared window.
// SPV-LABEL: gpu.func @ldmatrix_x2
// SPV: %[[LANE:.*]] = arith.index_castui %{{.*}} : index to i32
// SPV: %[[ROW:.*]] = arith.shrui %[[LANE]], %c2_i32{{.*}} : i32
// SPV: %[[QUAD:.*]] = arith.andi %[[LANE]], %c3_i32{{.*}} : i32
// SPV: %[[COL:.*]] = arith.muli %[[QUAD]], %c4_i32{{.*}} : i32
// SPV: %[[SRC:.*]] = arith.addi %[[ROW]], %c0_i32{{.*}} : i32
// SPV: %[[ADDR:.*]] = llvm.call spir_funccc @_Z17sub_group_shuffleij(%{{.*}}, %[[SRC]]) {convergent}
// SPV: %[[AT:.*]] = arith.addi %[[ADDR]], %[[COL]] : i32
// SPV: %[[OFF:.*]] = arith.addi %[[AT]], %c16_i32{{.*}} : i32
// SPV: %[[OFF64:.*]] = arith.extui %[[OFF]] : i32 to i64
// SPV: %[[P:.*]] = llvm.getelementptr %{{.*}}[%[[OFF64]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// SPV: llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// SPV: %[[SRC1:.*]] = arith.addi %[[ROW]], %c8_i32{{.*}} : i32
// SPV: llvm.call spir_funccc @_Z17sub_group_shuffleij(%{{.*}}, %[[SRC1]])
// SPV: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// SPV-NOT: sub_group_shuffle
// SPV: gpu.return
func.func @ldmatrix_x2(%q: i32, %p: i64) attributes {ptx.entry} {
  %a:2 = ptx.ldmatrix %q {offset = 16, space = #ptx.space<shared>} : i32 -> i32, i32
  ptx.st %p, %a#1 {type = #ptx.type<b32>} : i64, i32
  ptx.ret
}

// -----

// .trans from a generic 64-bit address: the row addresses of lanes
// 2 (t % 4) and 2 (t % 4) + 1, each in two 32-bit shuffles, and the 16-bit
// element 2 (t / 4) bytes into each, the first in the low half.
// SPV-LABEL: gpu.func @ldmatrix_trans
// SPV: %[[ROW:.*]] = arith.shrui %{{.*}}, %c2_i32{{.*}} : i32
// SPV: %[[QUAD:.*]] = arith.andi %{{.*}}, %c3_i32{{.*}} : i32
// SPV: %[[TWICE:.*]] = arith.muli %[[QUAD]], %c2_i32{{.*}} : i32
// SPV: %[[FIRST:.*]] = arith.addi %[[TWICE]], %c0_i32{{.*}} : i32
// SPV: %[[COL:.*]] = arith.muli %[[ROW]], %c2_i32{{.*}} : i32
// SPV-COUNT-2: llvm.call spir_funccc @_Z17sub_group_shuffleij(%{{.*}}, %[[FIRST]])
// SPV: %[[LO:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> i16
// SPV: %[[SECOND:.*]] = arith.addi %[[FIRST]], %c1_i32{{.*}} : i32
// SPV-COUNT-2: llvm.call spir_funccc @_Z17sub_group_shuffleij(%{{.*}}, %[[SECOND]])
// SPV: %[[HI:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> i16
// SPV: %[[HI32:.*]] = arith.extui %[[HI]] : i16 to i32
// SPV: %[[SH:.*]] = arith.shli %[[HI32]], %c16_i32{{.*}} : i32
// SPV: %[[LO32:.*]] = arith.extui %[[LO]] : i16 to i32
// SPV: arith.ori %[[LO32]], %[[SH]] : i32
func.func @ldmatrix_trans(%p: i64) attributes {ptx.entry} {
  %b = ptx.ldmatrix %p {trans} : i64 -> i32
  ptx.st %p, %b {type = #ptx.type<b32>} : i64, i32
  ptx.ret
}

// -----

// mma.sync off NVIDIA's instruction: each lane stores its registers of A
// where they lie in A row-major (16 x 16 f16: register i at row g + 8 (i % 2),
// columns 2 t + 8 (i / 2)) and of B in B column-major (after A's 512 bytes:
// column g, rows 2 t + 8 i), in its warp's part of the exchange area (768
// bytes a warp, 32 warps), then the warp synchronizes, calls the form's
// function (given the lane: it reads no sub-group id itself) and
// synchronizes again. The function reads A's rows g and g + 8
// and B's columns 2 t and 2 t + 1 and sums D's registers from C's with fma,
// k = 0 .. 15.
// SPV-LABEL: llvm.func internal @__zmlir_mma_sync_m16n8k16_f32_f16_f16_f32(
// SPV-SAME: %{{[^:]*}}: !llvm.ptr<3>, %{{[^:]*}}: i32, %[[C0:[^:]*]]: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32) -> !llvm.struct<(f32, f32, f32, f32)>
// SPV-SAME: no_inline
// SPV-NOT: gpu.lane_id
// SPV: %[[A0:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<3> -> vector<16xf16>
// SPV: %[[A0F:.*]] = arith.extf %[[A0]] : vector<16xf16> to vector<16xf32>
// SPV: %[[B0:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<3> -> vector<16xf16>
// SPV: %[[B0F:.*]] = arith.extf %[[B0]] : vector<16xf16> to vector<16xf32>
// SPV: %[[BK:.*]] = llvm.extractelement %[[B0F]][%{{.*}} : i32] : vector<16xf32>
// SPV: %[[AK:.*]] = llvm.extractelement %[[A0F]][%{{.*}} : i32] : vector<16xf32>
// SPV: math.fma %[[AK]], %[[BK]], %[[C0]] : f32
// SPV-COUNT-63: math.fma
// SPV-NOT: math.fma
// SPV: llvm.return
// The warp's part is the sub-group's (get_sub_group_id), which reads no
// %tid.y or .z: the kernel needs no copy for blocks run one-dimensional.
// SPV-LABEL: gpu.func @mma_f16
// SPV-SAME: zmlir.static_shared_bytes = 24576 : i64
// SPV-NOT: linear_blocks
// SPV: llvm.call spir_funccc @_Z16get_sub_group_idv()
// SPV: %[[OFF:.*]] = arith.muli %{{.*}}, %c768_i64{{.*}} : i64
// SPV: %[[AREA:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// SPV-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// SPV: %[[B:.*]] = arith.addi %{{.*}}, %c512_i32{{.*}} : i32
// SPV: llvm.getelementptr %[[AREA]][%[[B]]]
// SPV: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// SPV: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// SPV: llvm.call spir_funccc @_Z22__spirv_ControlBarrieriii
// SPV: llvm.call @__zmlir_mma_sync_m16n8k16_f32_f16_f16_f32(%[[AREA]],
// SPV: llvm.call spir_funccc @_Z22__spirv_ControlBarrieriii
// NV-LABEL: gpu.func @mma_f16
// NV: llvm.call @__zmlir_mma_sync_m16n8k16_f32_f16_f16_f32
// NV-NOT: llvm.nvvm.mma
func.func @mma_f16(%a: i32, %c: f32, %p: i64) attributes {ptx.entry} {
  %d:4 = ptx.mma_sync a(%a, %a, %a, %a) b(%a, %a) c(%c, %c, %c, %c) {atype = #ptx.wmma_type<f16>, btype = #ptx.wmma_type<f16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.mma_shape<m16n8k16>} : (i32, i32, i32, i32), (i32, i32), (f32, f32, f32, f32) -> f32, f32, f32, f32
  ptx.st %p, %d#3 {type = #ptx.type<f32>} : i64, f32
  ptx.ret
}

// -----

// tf32: the registers are whole elements (A's register i at row g + 8 (i % 2),
// column t + 4 (i / 2)), widened keeping their upper 19 bits.
// SPV-LABEL: llvm.func internal @__zmlir_mma_sync_m16n8k8_f32_tf32_tf32_f32
// SPV: %[[A:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<8xi32>
// SPV: %[[KEPT:.*]] = arith.andi %[[A]], %{{.*}} : vector<8xi32>
// SPV: arith.bitcast %[[KEPT]] : vector<8xi32> to vector<8xf32>
// SPV-COUNT-32: math.fma
// SPV-NOT: math.fma
// SPV-LABEL: gpu.func @mma_tf32
// SPV-SAME: zmlir.static_shared_bytes = 24576 : i64
// SPV: %[[COL:.*]] = arith.addi %{{.*}}, %c4_i32{{.*}} : i32
func.func @mma_tf32(%a: i32, %c: f32, %p: i64) attributes {ptx.entry} {
  %d:4 = ptx.mma_sync a(%a, %a, %a, %a) b(%a, %a) c(%c, %c, %c, %c) {atype = #ptx.wmma_type<tf32>, btype = #ptx.wmma_type<tf32>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.mma_shape<m16n8k8>} : (i32, i32, i32, i32), (i32, i32), (f32, f32, f32, f32) -> f32, f32, f32, f32
  ptx.st %p, %d#0 {type = #ptx.type<f32>} : i64, f32
  ptx.ret
}

// -----

// m8n8k4.f64: one register of A (g, t) and of B (t, g); D's two (g, 2 t + i),
// from 512 bytes a warp.
// SPV-LABEL: llvm.func internal @__zmlir_mma_sync_m8n8k4_f64_f64_f64_f64
// SPV: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<4xf64>
// SPV-COUNT-8: math.fma %{{.*}} : f64
// SPV-NOT: math.fma
// SPV-LABEL: gpu.func @mma_f64
// SPV-SAME: zmlir.static_shared_bytes = 16384 : i64
// SPV: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : f64, !llvm.ptr<3>
// SPV: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : f64, !llvm.ptr<3>
// SPV: llvm.call @__zmlir_mma_sync_m8n8k4_f64_f64_f64_f64(
func.func @mma_f64(%x: f64, %p: i64) attributes {ptx.entry} {
  %d:2 = ptx.mma_sync a(%x) b(%x) c(%x, %x) {atype = #ptx.wmma_type<f64>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, shape = #ptx.mma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64, f64
  ptx.st %p, %d#1 {type = #ptx.type<f64>} : i64, f64
  ptx.ret
}

// -----

// A kernel whose blocks are at most 96 threads (`.maxntid`) has an area for
// 3 warps, not 32 (512 bytes a warp).
// SPV-LABEL: gpu.func @mma_f64_maxntid
// SPV-SAME: zmlir.static_shared_bytes = 1536 : i64
func.func @mma_f64_maxntid(%x: f64, %p: i64) attributes {ptx.entry, ptx.maxntid = array<i64: 48, 2, 1>} {
  %d:2 = ptx.mma_sync a(%x) b(%x) c(%x, %x) {atype = #ptx.wmma_type<f64>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, shape = #ptx.mma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64, f64
  ptx.st %p, %d#1 {type = #ptx.type<f64>} : i64, f64
  ptx.ret
}

// -----

// NVPTX for sm_80 on: NVIDIA's ldmatrix and mma (f16 pairs as <2 x half>,
// the others as PTX has them), no exchange area; SPIR-V keeps the
// emulation.
// NV-LABEL: gpu.func @native
// NV-SAME: zmlir.static_shared_bytes = 0 : i64
// NV: %[[A:.*]] = llvm.call_intrinsic "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16"(%{{.*}}) : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// NV: %[[B:.*]] = llvm.call_intrinsic "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16"(%{{.*}}) : (!llvm.ptr) -> !llvm.struct<(i32, i32)>
// NV: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"({{.*}}) : (vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// NV: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"({{.*}}) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// NV: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"({{.*}}) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// NV: llvm.call_intrinsic "llvm.nvvm.mma.m8n8k4.row.col.f64"({{.*}}) : (f64, f64, f64, f64) -> !llvm.struct<(f64, f64)>
// NV-NOT: __zmlir_mma_sync
// SPV-LABEL: gpu.func @native
// SPV-COUNT-4: llvm.call @__zmlir_mma_sync_
module attributes {ptx.target = ["sm_80"]} {
  func.func @native(%q: i32, %p: i64, %c: f32, %x: f64) attributes {ptx.entry} {
    %a:4 = ptx.ldmatrix %q {space = #ptx.space<shared>} : i32 -> i32, i32, i32, i32
    %b:2 = ptx.ldmatrix %p {trans} : i64 -> i32, i32
    %d:4 = ptx.mma_sync a(%a#0, %a#1, %a#2, %a#3) b(%b#0, %b#1) c(%c, %c, %c, %c) {atype = #ptx.wmma_type<f16>, btype = #ptx.wmma_type<f16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.mma_shape<m16n8k16>} : (i32, i32, i32, i32), (i32, i32), (f32, f32, f32, f32) -> f32, f32, f32, f32
    %e:4 = ptx.mma_sync a(%a#0, %a#1, %a#2, %a#3) b(%b#0, %b#1) c(%d#0, %d#1, %d#2, %d#3) {atype = #ptx.wmma_type<bf16>, btype = #ptx.wmma_type<bf16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.mma_shape<m16n8k16>} : (i32, i32, i32, i32), (i32, i32), (f32, f32, f32, f32) -> f32, f32, f32, f32
    %f:4 = ptx.mma_sync a(%a#0, %a#1, %a#2, %a#3) b(%b#0, %b#1) c(%e#0, %e#1, %e#2, %e#3) {atype = #ptx.wmma_type<tf32>, btype = #ptx.wmma_type<tf32>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.mma_shape<m16n8k8>} : (i32, i32, i32, i32), (i32, i32), (f32, f32, f32, f32) -> f32, f32, f32, f32
    %g:2 = ptx.mma_sync a(%x) b(%x) c(%x, %x) {atype = #ptx.wmma_type<f64>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, shape = #ptx.mma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64, f64
    ptx.st %p, %f#3 {type = #ptx.type<f32>} : i64, f32
    ptx.st %p, %g#1 {type = #ptx.type<f64>} : i64, f64
    ptx.ret
  }
}
