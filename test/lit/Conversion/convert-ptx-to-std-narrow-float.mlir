// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV

// cvt.rna.tf32.f32: add half of the 13 dropped bits and clear them; a NaN
// keeps its upper bits (the quiet bit if none of its payload is left).
// NVPTX: NVIDIA's own instruction, as inline PTX.
// CHECK-LABEL: gpu.func @tf32
// NV-LABEL: gpu.func @tf32(
// NV-NOT: arith.addi
// NV: llvm.inline_asm "cvt.rna.tf32.f32 $0, $1;", "=r,f" %{{.*}} : (f32) -> i32
// NV-NOT: arith.addi
// NV: gpu.return
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[UP:.*]] = arith.addi %[[BITS]], %c4096_i32
// CHECK: %[[RND:.*]] = arith.andi %[[UP]], %c-8192_i32
// CHECK: %[[TRUNC:.*]] = arith.andi %[[BITS]], %c-8192_i32
// CHECK: %[[NAN:.*]] = arith.cmpi ugt, %{{.*}}, %c2139095040_i32
// CHECK: %[[Q:.*]] = arith.select %{{.*}}, %{{.*}}, %[[TRUNC]]
// CHECK: arith.select %[[NAN]], %[[Q]], %[[RND]]
func.func @tf32(%a: f32) attributes {ptx.entry} {
  %0 = ptx.inst "cvt" [".rna", ".tf32", ".f32"](%a) {operand_kinds = ["d", "r"]} : (f32) -> i32
  ptx.ret
}

// -----

// A .b32 source register (cuBLAS's tf32 GEMMs write `cvt.rn.tf32.f32 %r, %r`)
// is the f32 of its bits: the rounding works on them directly.
// CHECK-LABEL: gpu.func @tf32_b32_source
// CHECK-SAME: (%[[A:.*]]: i32)
// CHECK: %[[F:.*]] = arith.bitcast %[[A]] : i32 to f32
// CHECK: %[[BITS:.*]] = arith.bitcast %[[F]] : f32 to i32
// CHECK: arith.shrui %[[BITS]], %c13_i32
// CHECK: arith.andi %{{.*}}, %c-8192_i32
// NV-LABEL: gpu.func @tf32_b32_source(
// NV: %[[F:.*]] = arith.bitcast %{{.*}} : i32 to f32
// NV: llvm.inline_asm "cvt.rn.tf32.f32 $0, $1;", "=r,f" %[[F]] : (f32) -> i32
func.func @tf32_b32_source(%a: i32) attributes {ptx.entry} {
  %0 = ptx.inst "cvt" [".rn", ".tf32", ".f32"](%a) {operand_kinds = ["d", "r"]} : (i32) -> i32
  ptx.ret
}

// -----

// cvt.rn.satfinite.relu.e4m3x2.f32 (ptx.cvt_pack): integer rounding of
// each f32 (normal and subnormal results), clamped to 448 (0x7e), negative
// to +0, NaN 0x7f; the first source goes to the upper byte.
// CHECK-LABEL: gpu.func @e4m3x2
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK: arith.bitcast %[[A]] : f32 to i32
// CHECK: arith.minui %{{.*}}, %c126_i32{{.*}} : i32
// CHECK: %[[HI:.*]] = arith.select %{{.*}}, %c127_i32{{.*}}, %{{.*}} : i32
// CHECK: arith.bitcast %[[B]] : f32 to i32
// CHECK: arith.minui %{{.*}}, %c126_i32{{.*}} : i32
// CHECK: %[[LO:.*]] = arith.select %{{.*}}, %c127_i32{{.*}}, %{{.*}} : i32
// CHECK: %[[SHL:.*]] = arith.shli %[[HI]], %c8_i32
// CHECK: %[[PAIR:.*]] = arith.ori %[[SHL]], %[[LO]]
// CHECK: arith.trunci %[[PAIR]] : i32 to i16
// CHECK-NOT: f8E4M3
func.func @e4m3x2(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.cvt_pack %a, %b {rnd = #ptx.rnd<rn>, satfinite, relu, type = #ptx.type<e4m3x2>} : i16
  ptx.ret
}

// -----

// cvt.rn.satfinite.e5m2x2.f32 into a 32-bit register: clamped to 57344
// (0x7b), the pair zero-extended.
// CHECK-LABEL: gpu.func @e5m2x2_wide
// CHECK: arith.minui %{{.*}}, %c123_i32{{.*}} : i32
// CHECK: arith.minui %{{.*}}, %c123_i32{{.*}} : i32
// CHECK: %[[PAIR:.*]] = arith.ori %{{.*}}, %{{.*}} : i32
// CHECK-NOT: arith.trunci
// CHECK: gpu.return
func.func @e5m2x2_wide(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.cvt_pack %a, %b {rnd = #ptx.rnd<rn>, satfinite, type = #ptx.type<e5m2x2>} : i32
  ptx.ret
}

// -----

// cvt.rn.satfinite.e5m2x2.f16x2: each f16 half extended exactly to f32,
// clamped to 57344 (0x7b); the upper half to the upper byte.
// CHECK-LABEL: gpu.func @e5m2x2_from_f16x2
// CHECK: %[[UPPER:.*]] = arith.shrui %{{.*}}, %c16_i32
// CHECK: arith.trunci %[[UPPER]] : i32 to i16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.minui %{{.*}}, %c123_i32{{.*}} : i32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.minui %{{.*}}, %c123_i32{{.*}} : i32
func.func @e5m2x2_from_f16x2(%a: i32) attributes {ptx.entry} {
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rn>, satfinite, src_type = #ptx.type<f16x2>, type = #ptx.type<e5m2x2>} : i32 -> i16
  ptx.ret
}

// -----

// cvt.rn.satfinite.relu.e4m3x2.f16x2: .relu reaches the f32-to-fp8 step
// (a set sign bit gives 0) for both halves.
// CHECK-LABEL: gpu.func @e4m3x2_relu_from_f16x2
// CHECK: %[[HIGH:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[HBITS:.*]] = arith.bitcast %[[HIGH]] : f32 to i32
// CHECK: %[[HSIGN:.*]] = arith.shrui %[[HBITS]], %c31_i32
// CHECK: %[[HNEG:.*]] = arith.cmpi ne, %[[HSIGN]], %c0_i32{{.*}} : i32
// CHECK: arith.select %[[HNEG]], %c0_i32{{.*}}, %{{.*}} : i32
// CHECK: %[[LOW:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[LBITS:.*]] = arith.bitcast %[[LOW]] : f32 to i32
// CHECK: %[[LSIGN:.*]] = arith.shrui %[[LBITS]], %c31_i32
// CHECK: %[[LNEG:.*]] = arith.cmpi ne, %[[LSIGN]], %c0_i32{{.*}} : i32
// CHECK: arith.select %[[LNEG]], %c0_i32{{.*}}, %{{.*}} : i32
func.func @e4m3x2_relu_from_f16x2(%a: i32) attributes {ptx.entry} {
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rn>, satfinite, relu, src_type = #ptx.type<f16x2>, type = #ptx.type<e4m3x2>} : i32 -> i16
  ptx.ret
}

// -----

// cvt.rn.f16x2.e5m2x2: each byte is the upper byte of its f16, NaNs 0x7fff;
// the upper byte goes to the upper half.
// CHECK-LABEL: gpu.func @f16x2_from_e5m2x2
// CHECK: %[[PAIR:.*]] = arith.extui %{{.*}} : i16 to i32
// CHECK: %[[HI:.*]] = arith.shrui %[[PAIR]], %c8_i32
// CHECK: arith.cmpi ugt, %{{.*}}, %c124_i32
// CHECK: arith.select %{{.*}}, %c32767_i32
// CHECK: %[[LO:.*]] = arith.andi %[[PAIR]], %c255_i32
// CHECK: arith.shli %{{.*}}, %c16_i32
func.func @f16x2_from_e5m2x2(%a: i16) attributes {ptx.entry} {
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rn>, src_type = #ptx.type<e5m2x2>, type = #ptx.type<f16x2>} : i16 -> i32
  ptx.ret
}

// -----

// cvt.rn.f16x2.e4m3x2: normals rebiased, subnormals m * 2^-9 through f32.
// CHECK-LABEL: gpu.func @f16x2_from_e4m3x2
// CHECK: arith.uitofp %{{.*}} : i32 to f32
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.cmpi eq, %{{.*}}, %c127_i32
func.func @f16x2_from_e4m3x2(%a: i16) attributes {ptx.entry} {
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rn>, src_type = #ptx.type<e4m3x2>, type = #ptx.type<f16x2>} : i16 -> i32
  ptx.ret
}

// -----

// cvt.rn.relu.f16x2.e4m3x2 from a 32-bit register: its low 16 bits; a set
// sign bit gives +0 (-0 too), NaN stays 0x7fff (the NaN select comes last).
// CHECK-LABEL: gpu.func @f16x2_relu_from_e4m3x2_wide
// CHECK: %[[LOW:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.extui %[[LOW]] : i16 to i32
// CHECK: %[[NEG:.*]] = arith.cmpi ne, %{{.*}}, %c0_i32{{.*}} : i32
// CHECK: %[[RELU:.*]] = arith.select %[[NEG]], %c0_i32{{.*}}, %{{.*}} : i32
// CHECK: arith.select %{{.*}}, %c32767_i32{{.*}}, %[[RELU]] : i32
func.func @f16x2_relu_from_e4m3x2_wide(%a: i32) attributes {ptx.entry} {
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rn>, relu, src_type = #ptx.type<e4m3x2>, type = #ptx.type<f16x2>} : i32 -> i32
  ptx.ret
}

// -----

// cvt.rz.relu.tf32.f32: .rz adds nothing before clearing the 13 low bits;
// .relu makes a negative result +0; a NaN is tf32's canonical 0x7fffe000,
// as the H200 gives it.
// NVPTX: the instruction with its modifiers.
// CHECK-LABEL: gpu.func @tf32_rz_relu
// NV-LABEL: gpu.func @tf32_rz_relu(
// NV: llvm.inline_asm "cvt.rz.relu.tf32.f32 $0, $1;", "=r,f" %{{.*}} : (f32) -> i32
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[UP:.*]] = arith.addi %[[BITS]], %c0_i32
// CHECK: %[[RND:.*]] = arith.andi %[[UP]], %c-8192_i32
// CHECK: %[[NEG:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i32
// CHECK: %[[RELU:.*]] = arith.select %[[NEG]], %{{.*}}, %[[RND]]
// CHECK: %[[NAN:.*]] = arith.cmpi ugt, %{{.*}}, %c2139095040_i32
// CHECK: arith.select %[[NAN]], %c2147475456_i32{{.*}}, %[[RELU]]
func.func @tf32_rz_relu(%a: f32) attributes {ptx.entry} {
  %0 = ptx.inst "cvt" [".rz", ".relu", ".tf32", ".f32"](%a) {operand_kinds = ["d", "r"]} : (f32) -> i32
  ptx.ret
}

// -----

// cvt.rn.satfinite.tf32.f32 (sm_100): to nearest even (0xfff plus the lowest
// kept bit), an infinite result the largest finite tf32 with the sign.
// CHECK-LABEL: gpu.func @tf32_rn_satfinite
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[ODD:.*]] = arith.andi %{{.*}}, %c1_i32
// CHECK: %[[INC:.*]] = arith.addi %c4095_i32, %[[ODD]]
// CHECK: %[[UP:.*]] = arith.addi %[[BITS]], %[[INC]]
// CHECK: %[[RND:.*]] = arith.andi %[[UP]], %c-8192_i32
// CHECK: %[[MAX:.*]] = arith.ori %{{.*}}, %c2139086848_i32
// CHECK: arith.select %{{.*}}, %[[MAX]], %[[RND]]
func.func @tf32_rn_satfinite(%a: f32) attributes {ptx.entry} {
  %0 = ptx.inst "cvt" [".rn", ".satfinite", ".tf32", ".f32"](%a) {operand_kinds = ["d", "r"]} : (f32) -> i32
  ptx.ret
}

// -----

// cvt.rn.bf16.f32 (nvcc's __float2bfloat16, llm.c's bf16 kernels): to
// nearest even in integer arithmetic (0x7fff plus the lowest kept bit), NaN
// NVIDIA's 0x7fff. NVPTX: NVIDIA's own instruction, as inline PTX; the
// directed roundings stay integer arithmetic there.
// CHECK-LABEL: gpu.func @bf16_rn
// CHECK: arith.addi %{{.*}}, %c32767_i32
// CHECK: arith.cmpf uno
// CHECK-LABEL: gpu.func @bf16_rz
// NV-LABEL: gpu.func @bf16_rn
// NV-NOT: arith.cmpf uno
// NV: llvm.inline_asm "cvt.rn.bf16.f32 $0, $1;", "=h,f" %{{.*}} : (f32) -> i16
// NV-NOT: arith.cmpf uno
// NV-LABEL: gpu.func @bf16_rz
// NV-NOT: llvm.inline_asm
// NV: arith.cmpf uno
func.func @bf16_rn(%a: f32) attributes {ptx.entry} {
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rn>, src_type = #ptx.type<f32>, type = #ptx.type<bf16>} : f32 -> bf16
  ptx.ret
}
func.func @bf16_rz(%a: f32) attributes {ptx.entry} {
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rz>, src_type = #ptx.type<f32>, type = #ptx.type<bf16>} : f32 -> bf16
  ptx.ret
}
