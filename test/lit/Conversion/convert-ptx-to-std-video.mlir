// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV

// A four-way SIMD op reads its lanes from the pair {b, a} and merges the
// masked-out lanes from c; plain arith on every target but NVPTX, where it
// is NVIDIA's instruction as inline PTX with the mask on d.
// CHECK-LABEL: gpu.func @simd_merge
// NV-LABEL: gpu.func @simd_merge(
// NV-NOT: arith.trunci
// NV: llvm.inline_asm "vabsdiff4.u32.u32.u32 $0.b210, $1, $2, $3;", "=r,r,r,r" %{{.*}}, %{{.*}}, %{{.*}} : (i32, i32, i32) -> i32
// NV-NOT: arith.trunci
// NV: gpu.return
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

// A scalar op computes exactly in i64; .sat to a byte reads the result as
// unsigned (a negative one is past the cap, as on an H200) and caps it at
// the byte's signed maximum; the result is placed at byte 2 of c.
// CHECK-LABEL: gpu.func @scalar_merge
// CHECK: arith.extsi %{{.*}} : i8 to i64
// CHECK: arith.minui %{{.*}}, %c127_i64
// CHECK-NOT: arith.maxsi
// CHECK: arith.shli %{{.*}}, %c16_i32
// CHECK: arith.andi %{{.*}}, %c-16711681_i32
func.func @scalar_merge(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.vop <add> %a, %b, %c {asel = "b0", atype = #ptx.type<s32>, bsel = "b3", btype = #ptx.type<s32>, dsel = "b2", dtype = #ptx.type<s32>, sat}
  ptx.ret
}

// -----

// At .h1 NVIDIA keeps the result's own bits 31:16: masked in, not shifted.
// CHECK-LABEL: gpu.func @scalar_merge_h1
// CHECK-NOT: arith.shli
// CHECK: arith.andi %{{.*}}, %c65535_i32
// CHECK: arith.andi %{{.*}}, %c-65536_i32
// CHECK: arith.ori
func.func @scalar_merge_h1(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.vop <sub> %a, %b, %c {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dsel = "h1", dtype = #ptx.type<u32>}
  ptx.ret
}

// -----

// .sat to a u32 word only raises a negative result to 0 (past 2^32 wraps).
// CHECK-LABEL: gpu.func @scalar_sat_u32
// CHECK: arith.maxsi %{{.*}}, %c0_i64
// CHECK-NOT: arith.minsi
// CHECK: arith.trunci %{{.*}} : i64 to i32
func.func @scalar_sat_u32(%a: i32, %b: i32) attributes {ptx.entry} {
  %0 = ptx.vop <add> %a, %b {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>, sat}
  ptx.ret
}

// -----

// vsub.min compares its 32-bit result, signed, with c (sign-extended for
// an s32 dtype); c wins where it is less.
// CHECK-LABEL: gpu.func @scalar_sub_min
// CHECK: arith.subi %{{.*}} : i64
// CHECK: %[[T:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[S:.*]] = arith.extsi %[[T]] : i32 to i64
// CHECK: %[[C:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[C]], %[[S]] : i64
// CHECK: arith.select %[[LT]], %[[C]], %{{.*}} : i64
func.func @scalar_sub_min(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.vop <sub> %a, %b, %c {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<s32>, secondary = #ptx.vop2nd<min>}
  ptx.ret
}

// -----

// vmax.max with a u32 dtype compares its exact result unsigned with c
// zero-extended: a negative result is past any c.
// CHECK-LABEL: gpu.func @scalar_max_max_unsigned
// CHECK: %[[M:.*]] = arith.maxsi %{{.*}} : i64
// CHECK: %[[C:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: %[[LT:.*]] = arith.cmpi ult, %[[M]], %[[C]] : i64
// CHECK: arith.select %[[LT]], %[[C]], %[[M]] : i64
func.func @scalar_max_max_unsigned(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.vop <max> %a, %b, %c {atype = #ptx.type<s32>, btype = #ptx.type<s32>, dtype = #ptx.type<u32>, secondary = #ptx.vop2nd<max>}
  ptx.ret
}

// -----

// vshl.clamp caps the amount at 32. NVPTX: the mode follows .sat's place.
// CHECK-LABEL: gpu.func @scalar_shift
// NV-LABEL: gpu.func @scalar_shift(
// NV: llvm.inline_asm "vshl.u32.u32.u32.clamp $0, $1, $2;", "=r,r,r" %{{.*}}, %{{.*}} : (i32, i32) -> i32
// CHECK: arith.minui %{{.*}}, %c32_i64
// CHECK: arith.shli
func.func @scalar_shift(%a: i32, %b: i32) attributes {ptx.entry} {
  %0 = ptx.vop <shl> %a, %b {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>, mode = #ptx.clampmode<clamp>}
  ptx.ret
}
