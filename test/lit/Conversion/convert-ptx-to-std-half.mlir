// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv | FileCheck %s --check-prefix=SPV

// add.f16 is computed in f32 (exact inputs, innocuous double rounding) and
// rounded back once; a NaN sum becomes the canonical NaN 0x7fff.
// CHECK-LABEL: gpu.func @add_f16
// CHECK: %[[A:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[B:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK: arith.truncf %[[S]] : f32 to f16
// CHECK: arith.cmpf uno, %[[S]], %[[S]] : f32
// CHECK: arith.constant 32767 : i16
func.func @add_f16(%a: f16, %b: f16) attributes {ptx.entry} {
  %0 = ptx.add %a, %b {type = #ptx.type<f16>} : f16
  ptx.ret
}

// -----

// mul.bf16 widens by a shift and rounds in integer arithmetic: no bf16
// float reaches SPIR-V (it would need SPV_KHR_bfloat16).
// SPV-LABEL: gpu.func @mul_bf16
// SPV: arith.shli %{{.*}}, %c16_i32 : i32
// SPV: arith.mulf %{{.*}}, %{{.*}} : f32
// SPV-NOT: arith.truncf
// SPV-NOT: arith.extf {{.*}} bf16
// SPV: gpu.return
func.func @mul_bf16(%a: bf16, %b: bf16) attributes {ptx.entry} {
  %0 = ptx.mul %a, %b {type = #ptx.type<bf16>, rnd = #ptx.rnd<rn>} : bf16 -> bf16
  ptx.ret
}

// -----

// fma.rn.f16x2: each lane's exact f32 product plus c, TwoSum's error, the
// sum made round-to-odd, then one rounding to f16; the lanes are repacked.
// CHECK-LABEL: gpu.func @fma_f16x2
// CHECK: arith.shrui %{{.*}}, %c16_i32
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[S:.*]] = arith.addf %[[P]], %[[C:.*]] : f32
// CHECK: %[[BB:.*]] = arith.subf %[[S]], %[[P]] : f32
// CHECK: arith.subf %[[S]], %[[BB]] : f32
// CHECK: arith.andi %{{.*}}, %c1_i32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.shli %{{.*}}, %c16_i32
// CHECK: arith.ori
func.func @fma_f16x2(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.fma %a, %b, %c {type = #ptx.type<f16x2>, rnd = #ptx.rnd<rn>} : i32
  ptx.ret
}

// -----

// fma.rn.relu.bf16 sums in f64 (the bf16 product is exact there), rounds to
// odd in f64 and f32, then to bf16; .relu clamps negative results to +0.
// CHECK-LABEL: gpu.func @fma_relu_bf16
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK: arith.addf %[[P]], %{{.*}} : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.cmpi slt, %{{.*}}, %c0_i16
func.func @fma_relu_bf16(%a: bf16, %b: bf16, %c: bf16) attributes {ptx.entry} {
  %0 = ptx.fma %a, %b, %c {type = #ptx.type<bf16>, rnd = #ptx.rnd<rn>, relu} : bf16
  ptx.ret
}

// -----

// max.xorsign.abs.f16 orders the magnitudes and ORs in the XOR of the signs.
// CHECK-LABEL: gpu.func @max_xorsign_f16
// CHECK: %[[MA:.*]] = arith.andi %{{.*}}, %c32767_i16
// CHECK: arith.cmpf ogt
// CHECK: %[[X:.*]] = arith.xori %{{.*}}, %{{.*}} : i16
// CHECK: arith.andi %[[X]], %c-32768_i16
// CHECK: arith.ori
func.func @max_xorsign_f16(%a: f16, %b: f16) attributes {ptx.entry} {
  %0 = ptx.max %a, %b {type = #ptx.type<f16>, xorsign} : f16
  ptx.ret
}

// -----

// neg.bf16 flips the sign bit, NaNs included.
// CHECK-LABEL: gpu.func @neg_bf16
// CHECK: arith.xori %{{.*}}, %c-32768_i16 : i16
// CHECK-NOT: arith.negf
func.func @neg_bf16(%a: bf16) attributes {ptx.entry} {
  %0 = ptx.neg %a {type = #ptx.type<bf16>} : bf16
  ptx.ret
}

// -----

// add.rz.f32: NVIDIA's own instruction on NVPTX; elsewhere the sum in f64,
// made round-to-odd from TwoSum's error, narrowed with .rz.
// CHECK-LABEL: gpu.func @add_rz_f32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %{{.*}} : f64
// CHECK: arith.subf %[[S]], %{{.*}} : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// NV-LABEL: gpu.func @add_rz_f32
// NV: llvm.call_intrinsic "llvm.nvvm.add.rz.f"
func.func @add_rz_f32(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.add %a, %b {type = #ptx.type<f32>, rnd = #ptx.rnd<rz>} : f32
  ptx.ret
}

// -----

// sub.rm.f64 is add.rm of -b on NVPTX.
// NV-LABEL: gpu.func @sub_rm_f64
// NV: %[[NB:.*]] = arith.negf %arg1 : f64
// NV: llvm.call_intrinsic "llvm.nvvm.add.rm.d"(%arg0, %[[NB]])
func.func @sub_rm_f64(%a: f64, %b: f64) attributes {ptx.entry} {
  %0 = ptx.sub %a, %b {type = #ptx.type<f64>, rnd = #ptx.rnd<rm>} : f64
  ptx.ret
}

// -----

// mul.rp.f64 takes the error's sign from fma(a', b', -r'), scaled by 2^1100
// (two steps of 2^550) when the product is tiny.
// CHECK-LABEL: gpu.func @mul_rp_f64
// CHECK: %[[R:.*]] = arith.mulf %arg0, %arg1 : f64
// CHECK: arith.constant 2.0041683600089728E-292 : f64
// CHECK: arith.constant 3.6855101804897865E+165 : f64
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f64
func.func @mul_rp_f64(%a: f64, %b: f64) attributes {ptx.entry} {
  %0 = ptx.mul %a, %b {type = #ptx.type<f64>, rnd = #ptx.rnd<rp>} : f64 -> f64
  ptx.ret
}

// -----

// div.rz.f64: the remainder's sign on the normalized operands.
// CHECK-LABEL: gpu.func @div_rz_f64
// CHECK: arith.divf %arg0, %arg1 : f64
// CHECK: arith.shrui %{{.*}}, %c52_i64 : i64
// CHECK: math.fma
// NV-LABEL: gpu.func @div_rz_f64
// NV: llvm.call_intrinsic "llvm.nvvm.div.rz.d"
func.func @div_rz_f64(%a: f64, %b: f64) attributes {ptx.entry} {
  %0 = ptx.div %a, %b {type = #ptx.type<f64>, rnd = #ptx.rnd<rz>} : f64
  ptx.ret
}

// -----

// sqrt.rp.f32: the f64 root made round-to-odd from fma(-s, s, a).
// CHECK-LABEL: gpu.func @sqrt_rp_f32
// CHECK: %[[S:.*]] = math.sqrt %{{.*}} : f64
// CHECK: math.fma %{{.*}}, %[[S]], %{{.*}} : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// NV-LABEL: gpu.func @sqrt_rp_f32
// NV: llvm.call_intrinsic "llvm.nvvm.sqrt.rp.f"
func.func @sqrt_rp_f32(%a: f32) attributes {ptx.entry} {
  %0 = ptx.sqrt %a {type = #ptx.type<f32>, rnd = #ptx.rnd<rp>} : f32
  ptx.ret
}

// -----

// rcp.rm.ftz.f32 on NVPTX is the .ftz intrinsic.
// NV-LABEL: gpu.func @rcp_rm_ftz_f32
// NV: llvm.call_intrinsic "llvm.nvvm.rcp.rm.ftz.f"
func.func @rcp_rm_ftz_f32(%a: f32) attributes {ptx.entry} {
  %0 = ptx.rcp %a {type = #ptx.type<f32>, rnd = #ptx.rnd<rm>, ftz} : f32
  ptx.ret
}


// -----

// fma.rz.f64: NVIDIA's instruction on NVPTX; elsewhere the exact error's sign
// from a TwoProd and a four-term TwoSum expansion (fmaErrorSignF64).
// CHECK-LABEL: gpu.func @fma_rz_f64
// CHECK: %[[R:.*]] = math.fma %arg0, %arg1, %arg2 : f64
// CHECK: arith.cmpf oeq, %[[R]], %arg2 : f64
// CHECK: arith.constant 2.0041683600089728E-292 : f64
// CHECK: %[[NPH:.*]] = arith.negf %{{.*}} : f64
// CHECK: math.fma %{{.*}}, %{{.*}}, %[[NPH]] : f64
// NV-LABEL: gpu.func @fma_rz_f64
// NV: llvm.call_intrinsic "llvm.nvvm.fma.rz.d"
func.func @fma_rz_f64(%a: f64, %b: f64, %c: f64) attributes {ptx.entry} {
  %0 = ptx.fma %a, %b, %c {type = #ptx.type<f64>, rnd = #ptx.rnd<rz>} : f64
  ptx.ret
}

// -----

// min.xorsign.abs.f32 works on the bits too: magnitudes ordered, signs XORed.
// CHECK-LABEL: gpu.func @min_xorsign_f32
// CHECK: arith.andi %{{.*}}, %c2147483647_i32 : i32
// CHECK: arith.cmpf olt
// CHECK: arith.andi %{{.*}}, %c-2147483648_i32 : i32
// CHECK: arith.bitcast %{{.*}} : i32 to f32
func.func @min_xorsign_f32(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.min %a, %b {type = #ptx.type<f32>, xorsign} : f32
  ptx.ret
}
