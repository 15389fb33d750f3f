// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s

// A four-way SIMD op reads its lanes from the pair {b, a} and merges the
// masked-out lanes from c; plain arith on every target.
// CHECK-LABEL: gpu.func @simd_merge
// CHECK: arith.shli %{{.*}}, %c32_i64 : i64
// CHECK-COUNT-8: arith.trunci %{{.*}} : i64 to i8
// CHECK: arith.andi %{{.*}}, %c-16777216_i32
// CHECK-NOT: ptx.
func.func @simd_merge(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.vop4 <absdiff> %a, %b, %c {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>, mask = "b210"}
  ptx.ret
}

// -----

// The accumulate form adds the lanes' results to c; signed lanes are
// sign-extended, .sat is not allowed there.
// CHECK-LABEL: gpu.func @simd_accumulate
// CHECK: arith.extsi %{{.*}} : i16 to i32
// CHECK: arith.addi
// CHECK: arith.addi
// CHECK-NOT: ptx.
func.func @simd_accumulate(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.vop2 <sub> %a, %b, %c {atype = #ptx.type<s32>, btype = #ptx.type<s32>, dtype = #ptx.type<s32>, secondary = #ptx.vop2nd<add>}
  ptx.ret
}

// -----

// A scalar op computes exactly in i64, saturates to the destination's byte
// and merges it into c.
// CHECK-LABEL: gpu.func @scalar_merge
// CHECK: arith.extsi %{{.*}} : i8 to i64
// CHECK: arith.maxsi %{{.*}}, %c-128_i64
// CHECK: arith.minsi %{{.*}}, %c127_i64
// CHECK: arith.andi %{{.*}}, %c-16711681_i32
func.func @scalar_merge(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.vop <add> %a, %b, %c {asel = "b0", atype = #ptx.type<s32>, bsel = "b3", btype = #ptx.type<s32>, dsel = "b2", dtype = #ptx.type<s32>, sat}
  ptx.ret
}

// -----

// vshl.clamp caps the amount at 32.
// CHECK-LABEL: gpu.func @scalar_shift
// CHECK: arith.minui %{{.*}}, %c32_i64
// CHECK: arith.shli
func.func @scalar_shift(%a: i32, %b: i32) attributes {ptx.entry} {
  %0 = ptx.vop <shl> %a, %b {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>, mode = #ptx.clampmode<clamp>}
  ptx.ret
}
