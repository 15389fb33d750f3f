// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s

// popc and clz count with math ops and return 32 bits.
// CHECK-LABEL: gpu.func @counts
// CHECK: %[[POP:.*]] = math.ctpop %{{.*}} : i64
// CHECK: arith.trunci %[[POP]] : i64 to i32
// CHECK: math.ctlz %{{.*}} : i32
func.func @counts(%a: i64, %b: i32) attributes {ptx.entry} {
  %0 = ptx.popc %a {type = #ptx.type<b64>} : i64 -> i32
  %1 = ptx.clz %b {type = #ptx.type<b32>} : i32 -> i32
  ptx.ret
}

// -----

// bfind.s32 complements negative inputs and answers -1 for no bit found.
// CHECK-LABEL: gpu.func @bfind
// CHECK: arith.cmpi slt
// CHECK: math.ctlz
// CHECK: arith.select %{{.*}}, %c-1_i32
func.func @bfind(%a: i32) attributes {ptx.entry} {
  %0 = ptx.bfind %a {type = #ptx.type<s32>} : i32 -> i32
  ptx.ret
}

// -----

// brev is written with masks and shifts (llvm.bitreverse needs the Shader
// capability in SPIR-V).
// CHECK-LABEL: gpu.func @brev
// CHECK-NOT: bitreverse
// CHECK: arith.constant 1431655765 : i32
func.func @brev(%a: i32) attributes {ptx.entry} {
  %0 = ptx.brev %a {type = #ptx.type<b32>} : i32
  ptx.ret
}

// -----

// bfe clamps every shift amount below the width.
// CHECK-LABEL: gpu.func @bfe
// CHECK: arith.minui
// CHECK: arith.shrsi
func.func @bfe(%a: i32, %p: i32, %l: i32) attributes {ptx.entry} {
  %0 = ptx.bfe %a, %p, %l {type = #ptx.type<s32>} : i32
  ptx.ret
}

// -----

// bfe.s32 masks position and length to 8 bits (PTX ISA).
// CHECK-LABEL: gpu.func @bfe_mask32
// CHECK: arith.andi %{{.*}}, %c255_i32
// CHECK: arith.andi %{{.*}}, %c255_i32
func.func @bfe_mask32(%a: i32, %p: i32, %l: i32) attributes {ptx.entry} {
  %0 = ptx.bfe %a, %p, %l {type = #ptx.type<s32>} : i32
  ptx.ret
}

// -----

// bfe.s64 takes position and length whole, as the H200 does.
// CHECK-LABEL: gpu.func @bfe_s64
// CHECK-NOT: %c255_i32
// CHECK: arith.extui %{{.*}} : i32 to i64
// CHECK: arith.extui %{{.*}} : i32 to i64
// CHECK-NOT: %c255_i32
// CHECK: gpu.return
func.func @bfe_s64(%a: i64, %p: i32, %l: i32) attributes {ptx.entry} {
  %0 = ptx.bfe %a, %p, %l {type = #ptx.type<s64>} : i64
  ptx.ret
}

// -----

// prmt with a mode selects one of four constant selector words by c & 3.
// CHECK-LABEL: gpu.func @prmt_b4e
// CHECK: arith.andi %{{.*}}, %c3_i32
// CHECK: arith.constant 22128 : i32
func.func @prmt_b4e(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.prmt %a, %b, %c {mode = #ptx.prmt<b4e>} : i32
  ptx.ret
}

// -----

// shf.l.wrap is a 64-bit shift of {b, a} by c & 31.
// CHECK-LABEL: gpu.func @shf
// CHECK: arith.andi %{{.*}}, %c31_i32
// CHECK: arith.shli %{{.*}} : i64
func.func @shf(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.shf %a, %b, %c {dir = #ptx.dir<l>, mode = #ptx.clampmode<wrap>, type = #ptx.type<b32>} : i32
  ptx.ret
}

// -----

// The carry flag is an i1 value: add.cc produces it, addc consumes it.
// CHECK-LABEL: gpu.func @carry
// CHECK: %[[S:.*]] = arith.addi
// CHECK: %[[C:.*]] = arith.cmpi ult, %[[S]]
// CHECK: arith.extui %[[C]] : i1 to i32
func.func @carry(%a: i32, %b: i32) attributes {ptx.entry} {
  %lo, %cf = ptx.add_cc %a, %b {type = #ptx.type<u32>} : i32
  %hi, %cf2 = ptx.add_cc %a, %b, %cf {type = #ptx.type<u32>} : i32
  ptx.ret
}

// -----

// add.sat.s32 computes exactly in 64 bits and clamps.
// CHECK-LABEL: gpu.func @add_sat
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: arith.maxsi
// CHECK: arith.minsi
func.func @add_sat(%a: i32, %b: i32) attributes {ptx.entry} {
  %0 = ptx.add %a, %b {type = #ptx.type<s32>, sat} : i32
  ptx.ret
}

// -----

// dp4a multiplies sign-extended bytes (shift pairs, no i8 arithmetic).
// CHECK-LABEL: gpu.func @dp4a
// CHECK-COUNT-4: arith.muli
func.func @dp4a(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  %0 = ptx.dp4a %a, %b, %c {a_type = #ptx.type<s32>, b_type = #ptx.type<u32>} : i32
  ptx.ret
}

// -----

// fns finds the n-th set bit without a loop: a popcount of the masked bits
// and a five-step binary search (widths 16 down to 1).
// CHECK-LABEL: gpu.func @fns
// CHECK-COUNT-6: math.ctpop
// CHECK: arith.select
func.func @fns(%m: i32, %b: i32, %o: i32) attributes {ptx.entry} {
  %0 = ptx.fns %m, %b, %o : i32
  ptx.ret
}
