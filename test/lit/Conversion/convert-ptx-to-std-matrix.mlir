// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefix=SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefix=GFX9
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=host | FileCheck %s --check-prefix=HOST

// A fragment stored .row is one vector load of the lane's E consecutive
// elements (lane L's: row L*E/16, from column L*E%16), packed two f16 to a
// register; f16 A's registers 4..7 repeat 0..3.
// SPV-LABEL: gpu.func @load_row
// SPV: gpu.lane_id
// SPV: %[[LANE:.*]] = arith.extui %{{.*}} : i32 to i64
// SPV: %[[FIRST:.*]] = arith.muli %[[LANE]], %c8_i64
// SPV: %[[ROW:.*]] = arith.divui %[[FIRST]], %c16_i64
// SPV: %[[COL:.*]] = arith.remui %[[FIRST]], %c16_i64
// SPV: %[[AT:.*]] = arith.muli %[[ROW]], %{{.*}} : i64
// SPV: %[[EL:.*]] = arith.addi %[[AT]], %[[COL]]
// SPV: %[[V:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<4xi32>
// SPV: %[[R0:.*]] = llvm.extractelement %[[V]][%c0_i32 : i32]
// SPV: llvm.store %[[R0]]
// SPV: llvm.store %[[R0]]
func.func @load_row(%p: i64, %s: i32) attributes {ptx.entry} {
  %a:8 = ptx.wmma_load %p, %s {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<a>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32, i32, i32, i32, i32
  ptx.st %p, %a#0 {type = #ptx.type<b32>} : i64, i32
  ptx.st %p, %a#4 {type = #ptx.type<b32>} : i64, i32
  ptx.ret
}

// -----

// Stored .col, each element is a load of its own (element (r, c) at
// c*stride + r, the default stride the 16 rows), packed from the lowest bits.
// SPV-LABEL: gpu.func @load_col
// SPV-COUNT-8: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> i16
// SPV: %[[LO:.*]] = arith.extui %{{.*}} : i16 to i32
// SPV: %[[HI:.*]] = arith.extui %{{.*}} : i16 to i32
// SPV: %[[SH:.*]] = arith.shli %[[HI]], %c16_i32
// SPV: arith.ori %[[LO]], %[[SH]] : i32
func.func @load_col(%p: i64) attributes {ptx.entry} {
  %b:8 = ptx.wmma_load %p {layout = #ptx.wmma_layout<col>, matrix = #ptx.wmma_matrix<b>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32, i32, i32, i32, i32
  ptx.st %p, %b#0 {type = #ptx.type<b32>} : i64, i32
  ptx.ret
}

// -----

// wmma.mma: each lane writes its registers of A and B to its warp's part of
// the exchange area at the start of the shared window (32 warps of 1 KiB
// here), the warp synchronizes, each lane calls the form's function with
// the area and its C, and the warp synchronizes again. The function reads
// row r of A and, for each k, B[k][c0 .. c0+7], and accumulates with
// vector fma in k order.
// SPV: llvm.func internal @__zmlir_wmma_mma_m16n16k16_f32_f16_f16_f32(%[[AREA:.*]]: !llvm.ptr<3>, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32) -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// SPV-SAME: no_inline
// SPV: gpu.lane_id
// SPV: %[[AROW:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<3> -> vector<16xf16>
// SPV: %[[A:.*]] = arith.extf %[[AROW]] : vector<16xf16> to vector<16xf32>
// SPV: %[[B0:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<3> -> vector<8xf16>
// SPV: %[[B0F:.*]] = arith.extf %[[B0]] : vector<8xf16> to vector<8xf32>
// SPV: %[[A0:.*]] = llvm.extractelement %[[A]][%c0_i32{{.*}} : i32] : vector<16xf32>
// SPV: %[[A0S:.*]] = llvm.shufflevector
// SPV: %[[ACC:.*]] = math.fma %[[A0S]], %[[B0F]], %{{.*}} : vector<8xf32>
// SPV-COUNT-15: math.fma
// SPV: llvm.return
// SPV-LABEL: gpu.func @mma(
// SPV-SAME: zmlir.static_shared_bytes = 32768 : i64
// SPV: %[[WARP:.*]] = llvm.call spir_funccc @_Z16get_sub_group_idv() {convergent} : () -> i32
// SPV: %[[W64:.*]] = arith.extui %[[WARP]] : i32 to i64
// SPV: %[[OFF:.*]] = arith.muli %[[W64]], %c1024_i64
// SPV: %[[WIN:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// SPV: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xi32>, !llvm.ptr<3>
// SPV: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xi32>, !llvm.ptr<3>
// SPV: llvm.call spir_funccc @_Z22__spirv_ControlBarrieriii
// SPV: llvm.call @__zmlir_wmma_mma_m16n16k16_f32_f16_f16_f32(%[[WIN]],
// SPV: llvm.call spir_funccc @_Z22__spirv_ControlBarrieriii
// NV-LABEL: gpu.func @mma
// NV: llvm.call_intrinsic "llvm.nvvm.bar.warp.sync"
// NV: llvm.call @__zmlir_wmma_mma_m16n16k16_f32_f16_f16_f32
// NV: llvm.call_intrinsic "llvm.nvvm.bar.warp.sync"
// GFX9-LABEL: gpu.func @mma
// GFX9: llvm.fence syncscope("wavefront") acq_rel
// GFX9: llvm.call @__zmlir_wmma_mma_m16n16k16_f32_f16_f16_f32
// GFX9: llvm.fence syncscope("wavefront") acq_rel
// HOST-LABEL: gpu.func @mma
// HOST: llvm.call notail @zmlir_host_warp_sync
// HOST: llvm.call @__zmlir_wmma_mma_m16n16k16_f32_f16_f16_f32
// HOST: llvm.call notail @zmlir_host_warp_sync
func.func @mma(%a: i32, %b: i32, %c: f32, %p: i64) attributes {ptx.entry} {
  %d:8 = ptx.wmma_mma a(%a, %a, %a, %a, %a, %a, %a, %a) b(%b, %b, %b, %b, %b, %b, %b, %b) c(%c, %c, %c, %c, %c, %c, %c, %c) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<f16>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<f16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32, i32, i32, i32, i32), (f32, f32, f32, f32, f32, f32, f32, f32) -> f32, f32, f32, f32, f32, f32, f32, f32
  ptx.st %p, %d#7 {type = #ptx.type<f32>} : i64, f32
  ptx.ret
}

// -----

// s8 x u8 with .satfinite: the products are summed in s32 apart from C,
// which is added in s64 and clamped to the s32 range.
// SPV-LABEL: llvm.func internal @__zmlir_wmma_mma_m16n16k16_s32_s8_u8_s32_satfinite
// SPV: %[[AROW:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> vector<16xi8>
// SPV: arith.extsi %[[AROW]] : vector<16xi8> to vector<16xi32>
// SPV: %[[BROW:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> vector<8xi8>
// SPV: arith.extui %[[BROW]] : vector<8xi8> to vector<8xi32>
// SPV: arith.muli %{{.*}} : vector<8xi32>
// SPV: arith.addi %{{.*}} : vector<8xi32>
// SPV: %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<8xi64>
// SPV: %[[LO:.*]] = arith.maxsi %[[SUM]], %{{.*}} : vector<8xi64>
// SPV: %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : vector<8xi64>
// SPV: arith.trunci %[[HI]] : vector<8xi64> to vector<8xi32>
func.func @mma_s8(%a: i32, %c: i32, %p: i64) attributes {ptx.entry} {
  %d:8 = ptx.wmma_mma a(%a, %a) b(%a, %a) c(%c, %c, %c, %c, %c, %c, %c, %c) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<s8>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<u8>, ctype = #ptx.wmma_type<s32>, dtype = #ptx.wmma_type<s32>, satfinite, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32), (i32, i32), (i32, i32, i32, i32, i32, i32, i32, i32) -> i32, i32, i32, i32, i32, i32, i32, i32
  ptx.st %p, %d#0 {type = #ptx.type<b32>} : i64, i32
  ptx.ret
}

// -----

// An f16 accumulator with .satfinite: D rounds to f16, ±Inf becomes
// ±65504 and NaN +0, and two f16 go into each register.
// SPV-LABEL: llvm.func internal @__zmlir_wmma_mma_m16n16k16_f16_f16_f16_f16_satfinite
// SPV: %[[H:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// SPV: %[[NAN:.*]] = arith.cmpf uno, %[[H]], %[[H]] : vector<8xf16>
// SPV: arith.cmpf ogt, %[[H]], %{{.*}} : vector<8xf16>
// SPV: arith.select %[[NAN]], %{{.*}} : vector<8xi1>, vector<8xf16>
// SPV: llvm.bitcast %{{.*}} : vector<8xf16> to vector<4xi32>
func.func @mma_f16_satfinite(%a: i32, %p: i64) attributes {ptx.entry} {
  %d:4 = ptx.wmma_mma a(%a, %a, %a, %a, %a, %a, %a, %a) b(%a, %a, %a, %a, %a, %a, %a, %a) c(%a, %a, %a, %a) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<f16>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<f16>, ctype = #ptx.wmma_type<f16>, dtype = #ptx.wmma_type<f16>, satfinite, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32) -> i32, i32, i32, i32
  ptx.st %p, %d#0 {type = #ptx.type<b32>} : i64, i32
  ptx.ret
}

// -----

// A D fragment stored .row is one vector store.
// SPV-LABEL: gpu.func @store_row
// SPV: %[[V:.*]] = llvm.insertelement %arg1, %{{.*}} : vector<2xf64>
// SPV: %[[W:.*]] = llvm.insertelement %arg1, %[[V]][%c1_i32 : i32] : vector<2xf64>
// SPV: llvm.store %[[W]], %{{.*}} {alignment = 8 : i64} : vector<2xf64>, !llvm.ptr
func.func @store_row(%p: i64, %d: f64) attributes {ptx.entry} {
  ptx.wmma_store %p, %d, %d {layout = #ptx.wmma_layout<row>, shape = #ptx.wmma_shape<m8n8k4>, type = #ptx.wmma_type<f64>} : i64, f64, f64
  ptx.ret
}
