// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv | FileCheck %s --check-prefix=SPV

// x % 0 is all ones, as on the H200 (like x / 0); the divisor 0 becomes 1.
// CHECK-LABEL: gpu.func @remainder_by_zero
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[B:.*]], %c0_i32
// CHECK: %[[SAFE:.*]] = arith.select %[[ZERO]], %c1_i32, %[[B]]
// CHECK: %[[R:.*]] = arith.remui %{{.*}}, %[[SAFE]]
// CHECK: arith.select %[[ZERO]], %c-1_i32{{.*}}, %[[R]]
// CHECK: %[[RS:.*]] = arith.remsi
// CHECK: %[[RS0:.*]] = arith.select %{{.*}}, %c0_i64, %[[RS]]
// CHECK: arith.select %{{.*}}, %c-1_i64, %[[RS0]]
func.func @remainder_by_zero(%a: i32, %b: i32, %c: i64) attributes {ptx.entry} {
  %0 = ptx.rem %a, %b {type = #ptx.type<u32>} : i32
  %1 = ptx.rem %c, %c {type = #ptx.type<s64>} : i64
  ptx.ret
}

// -----

// Float NaN to integer: 0 from f32 to 32 bits, else the destination's sign
// bit, for unsigned destinations too.
// CHECK-LABEL: gpu.func @nan_to_int
// CHECK: %[[N32:.*]] = arith.cmpf uno
// CHECK: arith.select %[[N32]], %c0_i32
// CHECK: %[[N64:.*]] = arith.cmpf uno
// CHECK: arith.select %[[N64]], %c-9223372036854775808_i64
// CHECK: %[[NU:.*]] = arith.cmpf uno
// CHECK: arith.select %[[NU]], %c-2147483648_i32
// CHECK: %[[N8:.*]] = arith.cmpf uno
// CHECK: arith.select %[[N8]], %c-128_i8
func.func @nan_to_int(%f: f32, %d: f64) attributes {ptx.entry} {
  %0 = ptx.cvt %f {type = #ptx.type<u32>, src_type = #ptx.type<f32>, rnd = #ptx.rnd<rni>} : f32 -> i32
  %1 = ptx.cvt %f {type = #ptx.type<u64>, src_type = #ptx.type<f32>, rnd = #ptx.rnd<rzi>} : f32 -> i64
  %2 = ptx.cvt %d {type = #ptx.type<u32>, src_type = #ptx.type<f64>, rnd = #ptx.rnd<rmi>} : f64 -> i32
  %3 = ptx.cvt %d {type = #ptx.type<u8>, src_type = #ptx.type<f64>, rnd = #ptx.rnd<rni>} : f64 -> i16
  ptx.ret
}

// -----

// u8 from 64 bits: truncated to the register's width and masked (no
// zext of an i8, which the SPIR-V backend turns into a mixed-width and).
// CHECK-LABEL: gpu.func @u8_from_u64
// CHECK: %[[T:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: arith.andi %[[T]], %c255_i32 : i32
// CHECK-NOT: to i8
func.func @u8_from_u64(%a: i64) attributes {ptx.entry} {
  %0 = ptx.cvt %a {type = #ptx.type<u8>, src_type = #ptx.type<u64>} : i64 -> i32
  ptx.ret
}

// -----

// mul.hi.u64 / mad.hi.s64: an i128 product where the target has one; on
// SPIR-V four 32x32->64 products (no i128), the signed one corrected by
// subtracting the other operand for each negative one.
// CHECK-LABEL: gpu.func @mul_hi_64
// CHECK: arith.mului_extended %{{.*}}, %{{.*}} : i64
// CHECK: arith.mulsi_extended %{{.*}}, %{{.*}} : i64
// SPV-LABEL: gpu.func @mul_hi_64
// SPV-NOT: extended
// SPV-NOT: i128
// SPV-COUNT-4: arith.muli %{{.*}}, %{{.*}} : i64
// SPV-COUNT-4: arith.muli %{{.*}}, %{{.*}} : i64
// SPV: arith.cmpi slt
// SPV: arith.subi
// SPV: arith.cmpi slt
// SPV: arith.subi
// SPV: arith.addi
// SPV-NOT: extended
func.func @mul_hi_64(%a: i64, %b: i64) attributes {ptx.entry} {
  %0 = ptx.mul %a, %b {type = #ptx.type<u64>, mode = #ptx.mode<hi>} : i64 -> i64
  %1 = ptx.mad %a, %b, %0 {type = #ptx.type<s64>, mode = #ptx.mode<hi>} : i64 -> i64
  ptx.ret
}

// -----

// mad.hi.sat.s32: the high half plus c in 64 bits, clamped to the s32 range.
// CHECK-LABEL: gpu.func @mad_hi_sat
// SPV-LABEL: gpu.func @mad_hi_sat
// CHECK: %[[LO:.*]], %[[HI:.*]] = arith.mulsi_extended %{{.*}}, %{{.*}} : i32
// CHECK-DAG: %[[WH:.*]] = arith.extsi %[[HI]] : i32 to i64
// CHECK-DAG: %[[WC:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK: %[[SUM:.*]] = arith.addi %[[WH]], %[[WC]] : i64
// CHECK: %[[MAX:.*]] = arith.maxsi %[[SUM]], %c-2147483648_i64
// CHECK: %[[MIN:.*]] = arith.minsi %[[MAX]], %c2147483647_i64
// CHECK: arith.trunci %[[MIN]] : i64 to i32
func.func @mad_hi_sat(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.mad %a, %b, %c {type = #ptx.type<s32>, mode = #ptx.mode<hi>, sat} : i32 -> i32
  ptx.ret
}
