// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV

// .approx is NVIDIA's instruction on NVPTX, a libm function elsewhere.
// CHECK-LABEL: gpu.func @sin_approx
// CHECK: math.sin
// NV-LABEL: gpu.func @sin_approx
// NV: llvm.call_intrinsic "llvm.nvvm.sin.approx.ftz.f"
func.func @sin_approx(%a: f32) attributes {ptx.entry} {
  %0 = ptx.sin %a {type = #ptx.type<f32>, precision = #ptx.precision<approx>, ftz} : f32
  ptx.ret
}

// -----

// rcp.rn is a correctly rounded division.
// CHECK-LABEL: gpu.func @rcp_rn
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
func.func @rcp_rn(%a: f64) attributes {ptx.entry} {
  %0 = ptx.rcp %a {type = #ptx.type<f64>, rnd = #ptx.rnd<rn>} : f64
  ptx.ret
}

// -----

// testp looks at the bits, not at a possibly flushing FPU.
// CHECK-LABEL: gpu.func @testp
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.andi %{{.*}}, %c2139095040_i32
func.func @testp(%a: f32) attributes {ptx.entry} {
  %0 = ptx.testp %a {kind = #ptx.testp<subnormal>, type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// min without .NaN returns the non-NaN operand; -0 orders below +0.
// CHECK-LABEL: gpu.func @fmin
// CHECK: arith.minimumf
// CHECK: arith.cmpf uno
// CHECK: arith.select
func.func @fmin(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.min %a, %b {type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// Directed narrowing: round to nearest, compare back, step one ulp.
// CHECK-LABEL: gpu.func @cvt_rz
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.extf %[[R]] : f32 to f64
// CHECK: arith.cmpf ogt
func.func @cvt_rz(%a: f64) attributes {ptx.entry} {
  %0 = ptx.cvt %a {type = #ptx.type<f32>, src_type = #ptx.type<f64>, rnd = #ptx.rnd<rz>} : f64 -> f32
  ptx.ret
}

// -----

// Packing moves put the first element in the low bits.
// CHECK-LABEL: gpu.func @pack
// CHECK: arith.extui %{{.*}} : i32 to i64
// CHECK: arith.shli %{{.*}}, %c32_i64
func.func @pack(%a: i32, %b: i32) attributes {ptx.entry} {
  %0 = ptx.mov_pack %a, %b : i32, i32 -> i64
  ptx.ret
}

// -----

// set writes all ones or zero.
// CHECK-LABEL: gpu.func @set
// CHECK: %[[P:.*]] = arith.cmpf olt
// CHECK: arith.select %[[P]], %c-1_i32, %c0_i32
func.func @set(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.set %a, %b {cmp = #ptx.cmp<lt>, type = #ptx.type<u32>, src_type = #ptx.type<f32>} : f32 -> i32
  ptx.ret
}
