// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s

// ex2.approx.f16 without a native instruction: widened exactly to f32,
// math.exp2 there, rounded to nearest even, NaN the canonical 0x7fff.
// CHECK-LABEL: gpu.func @ex2_f16
// CHECK: %[[X:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[E:.*]] = math.exp2 %[[X]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[E]], %[[E]] : f32
// CHECK: arith.select %[[NAN]], %{{.*}}, %[[R]] : f16
func.func @ex2_f16(%a: f16) attributes {ptx.entry} {
  %0 = ptx.ex2 %a {precision = #ptx.precision<approx>, type = #ptx.type<f16>} : f16
  ptx.ret
}

// -----

// ex2.approx.ftz.bf16: a subnormal bf16 result is flushed to zero.
// CHECK-LABEL: gpu.func @ex2_ftz_bf16
// CHECK: math.exp2 %{{.*}} : f32
// CHECK: %[[B:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK: %[[EXP:.*]] = arith.andi %[[B]], %c32640_i16 : i16
// CHECK: %[[SUB:.*]] = arith.cmpi eq, %[[EXP]], %c0_i16 : i16
// CHECK: arith.select %[[SUB]], %{{.*}}, %[[B]] : i16
func.func @ex2_ftz_bf16(%a: bf16) attributes {ptx.entry} {
  %0 = ptx.ex2 %a {ftz, precision = #ptx.precision<approx>, type = #ptx.type<bf16>} : bf16
  ptx.ret
}

// -----

// tanh.approx.bf16x2: each lane of the i32 (low half first) as the top half
// of an f32; tanh from exp2 with its cubic term below 2^-5; the lanes
// rounded to bf16 and packed again.
// CHECK-LABEL: gpu.func @tanh_bf16x2
// CHECK: arith.trunci %arg0 : i32 to i16
// CHECK: math.exp2
// CHECK: arith.constant -0.333333343 : f32
// CHECK: arith.shrui %arg0, %{{.*}} : i32
// CHECK: math.exp2
// CHECK: %[[H:.*]] = arith.shli %{{.*}}, %{{.*}} : i32
// CHECK: arith.ori %[[H]], %{{.*}} : i32
func.func @tanh_bf16x2(%a: i32) attributes {ptx.entry} {
  %0 = ptx.tanh %a {precision = #ptx.precision<approx>, type = #ptx.type<bf16x2>} : i32
  ptx.ret
}

// -----

// setp.lt.ftz.f16: subnormal f16 operands flushed on their bits (f16's own
// subnormal range) before the exact comparison in f32.
// CHECK-LABEL: gpu.func @setp_lt_ftz_f16
// CHECK: %[[EA:.*]] = arith.andi %arg0, %c31744_i16 : i16
// CHECK: %[[SA:.*]] = arith.cmpi eq, %[[EA]], %c0_i16 : i16
// CHECK: %[[FA:.*]] = arith.select %[[SA]], %{{.*}}, %arg0 : i16
// CHECK: %[[FB:.*]] = arith.select %{{.*}}, %{{.*}}, %arg1 : i16
// CHECK: arith.bitcast %[[FA]] : i16 to f16
// CHECK: arith.bitcast %[[FB]] : i16 to f16
// CHECK: arith.cmpf olt
func.func @setp_lt_ftz_f16(%a: i16, %b: i16) attributes {ptx.entry} {
  %p, %q = ptx.setp %a, %b {cmp = #ptx.cmp<lt>, ftz, type = #ptx.type<f16>} : i16
  ptx.ret
}

// -----

// setp.gt.bf16x2 p|q: p compares the low halves, q the high halves (not
// p's complement).
// CHECK-LABEL: gpu.func @setp_gt_bf16x2
// CHECK: arith.trunci %arg0 : i32 to i16
// CHECK: arith.trunci %arg1 : i32 to i16
// CHECK: arith.cmpf ogt
// CHECK: arith.shrui %arg0
// CHECK: arith.shrui %arg1
// CHECK: arith.cmpf ogt
// CHECK-NOT: arith.xori
// CHECK: gpu.return
func.func @setp_gt_bf16x2(%a: i32, %b: i32) attributes {ptx.entry} {
  %p, %q = ptx.setp %a, %b {cmp = #ptx.cmp<gt>, type = #ptx.type<bf16x2>} : i32
  ptx.ret
}
