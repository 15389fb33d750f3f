// RUN: zmlir-opt %s | zmlir-opt | FileCheck %s
// RUN: zmlir-opt %s -mlir-print-op-generic | zmlir-opt | FileCheck %s

// The scalar and SIMD video ops with selectors, secondaries and modes.
// CHECK-LABEL: func.func @video
func.func @video(%a: i32, %b: i32, %c: i32) attributes {ptx.entry} {
  // CHECK: ptx.vop <add> %{{.*}}, %{{.*}}, %{{.*}} {asel = "b1", atype = #ptx.type<u32>, btype = #ptx.type<s32>, dtype = #ptx.type<s32>, sat, secondary = #ptx.vop2nd<add>}
  %0 = ptx.vop <add> %a, %b, %c {asel = "b1", atype = #ptx.type<u32>, btype = #ptx.type<s32>, dtype = #ptx.type<s32>, sat, secondary = #ptx.vop2nd<add>}
  // CHECK: ptx.vop <shr> %{{.*}}, %{{.*}} {atype = #ptx.type<s32>, btype = #ptx.type<u32>, dtype = #ptx.type<s32>, mode = #ptx.clampmode<wrap>}
  %1 = ptx.vop <shr> %a, %b {atype = #ptx.type<s32>, btype = #ptx.type<u32>, dtype = #ptx.type<s32>, mode = #ptx.clampmode<wrap>}
  // CHECK: ptx.vop4 <set> %{{.*}}, %{{.*}}, %{{.*}} {atype = #ptx.type<u32>, bsel = "b0213", btype = #ptx.type<u32>, cmp = #ptx.cmp<ge>, dtype = #ptx.type<u32>, mask = "b31"}
  %2 = ptx.vop4 <set> %a, %b, %c {atype = #ptx.type<u32>, bsel = "b0213", btype = #ptx.type<u32>, cmp = #ptx.cmp<ge>, dtype = #ptx.type<u32>, mask = "b31"}
  // CHECK: ptx.vop2 <min> %{{.*}}, %{{.*}}, %{{.*}} {atype = #ptx.type<s32>, btype = #ptx.type<s32>, dtype = #ptx.type<s32>, secondary = #ptx.vop2nd<add>}
  %3 = ptx.vop2 <min> %a, %b, %c {atype = #ptx.type<s32>, btype = #ptx.type<s32>, dtype = #ptx.type<s32>, secondary = #ptx.vop2nd<add>}
  ptx.ret
}
