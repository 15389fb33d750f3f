// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s

// setp.ltu.f16 on .b16 registers: the bits as f16, widened exactly to f32,
// compared there (unordered: NaN gives true).
// CHECK-LABEL: gpu.func @setp_ltu_f16
// CHECK: %[[A:.*]] = arith.bitcast %arg0 : i16 to f16
// CHECK: %[[AW:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK: %[[B:.*]] = arith.bitcast %arg1 : i16 to f16
// CHECK: %[[BW:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK: arith.cmpf ult, %[[AW]], %[[BW]] : f32
func.func @setp_ltu_f16(%a: i16, %b: i16) attributes {ptx.entry} {
  %p, %q = ptx.setp %a, %b {cmp = #ptx.cmp<ltu>, type = #ptx.type<f16>} : i16
  ptx.ret
}

// -----

// set.le.u32.bf16: the bits widened as the top half of an f32 (no bf16
// type on SPIR-V), exactly, then compared there.
// CHECK-LABEL: gpu.func @set_le_bf16
// CHECK: %[[A:.*]] = arith.extui %arg0 : i16 to i32
// CHECK: %[[SH:.*]] = arith.shli %[[A]], %{{.*}} : i32
// CHECK: arith.bitcast %[[SH]] : i32 to f32
// CHECK: %[[P:.*]] = arith.cmpf ole, %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %[[P]], %{{.*}}, %{{.*}} : i32
func.func @set_le_bf16(%a: i16, %b: i16) attributes {ptx.entry} {
  %0 = ptx.set %a, %b {cmp = #ptx.cmp<le>, type = #ptx.type<u32>, src_type = #ptx.type<bf16>} : i16 -> i32
  ptx.ret
}
