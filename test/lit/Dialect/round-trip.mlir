// RUN: zmlir-opt %s | zmlir-opt | FileCheck %s
// RUN: zmlir-opt %s -mlir-print-op-generic | zmlir-opt | FileCheck %s

// Module variables keep space, type, count, alignment and initializer.
// CHECK: ptx.var @tile {align = 16 : i64, count = 256 : i64, space = #ptx.space<shared>, type = #ptx.type<f32>}
ptx.var @tile {space = #ptx.space<shared>, type = #ptx.type<f32>, count = 256, align = 16}
// CHECK: ptx.var @table {init = array<i8: 1, 0, 0, 0>, space = #ptx.space<const>, type = #ptx.type<u32>}
ptx.var @table {space = #ptx.space<const>, type = #ptx.type<u32>, init = array<i8: 1, 0, 0, 0>}

// CHECK-LABEL: func.func @arith
func.func @arith(%a: i32, %b: i32, %f: f32, %g: f32) attributes {ptx.entry} {
  // Default modifiers are elided, the others print back.
  // CHECK: ptx.add %{{.*}}, %{{.*}} {type = #ptx.type<s32>} : i32
  %0 = ptx.add %a, %b {type = #ptx.type<s32>} : i32
  // CHECK: ptx.add %{{.*}}, %{{.*}} {ftz, rnd = #ptx.rnd<rz>, sat, type = #ptx.type<f32>} : f32
  %1 = ptx.add %f, %g {type = #ptx.type<f32>, rnd = #ptx.rnd<rz>, ftz, sat} : f32
  // CHECK: ptx.mul %{{.*}}, %{{.*}} {mode = #ptx.mode<wide>, type = #ptx.type<u32>} : i32 -> i64
  %2 = ptx.mul %a, %b {type = #ptx.type<u32>, mode = #ptx.mode<wide>} : i32 -> i64
  // CHECK: ptx.mad %{{.*}}, %{{.*}}, %{{.*}} {mode = #ptx.mode<hi>, type = #ptx.type<s32>} : i32 -> i32
  %3 = ptx.mad %a, %b, %0 {type = #ptx.type<s32>, mode = #ptx.mode<hi>} : i32 -> i32
  // CHECK: ptx.fma %{{.*}}, %{{.*}}, %{{.*}} {rnd = #ptx.rnd<rn>, type = #ptx.type<f32>} : f32
  %4 = ptx.fma %f, %g, %1 {type = #ptx.type<f32>, rnd = #ptx.rnd<rn>} : f32
  // CHECK: ptx.div %{{.*}}, %{{.*}} {precision = #ptx.precision<approx>, type = #ptx.type<f32>} : f32
  %5 = ptx.div %f, %g {type = #ptx.type<f32>, precision = #ptx.precision<approx>} : f32
  // CHECK: ptx.shr %{{.*}}, %{{.*}} {type = #ptx.type<s64>} : i64
  %6 = ptx.shr %2, %a {type = #ptx.type<s64>} : i64
  // CHECK: ptx.not %{{.*}} {type = #ptx.type<b32>} : i32
  %7 = ptx.not %a {type = #ptx.type<b32>} : i32
  ptx.ret
}

// CHECK-LABEL: func.func @compare_and_convert
func.func @compare_and_convert(%a: i32, %f: f32, %c: i1) attributes {ptx.entry} {
  // CHECK: %[[P:.*]], %{{.*}} = ptx.setp %{{.*}}, %{{.*}}, %{{.*}} {boolop = #ptx.boolop<and>, cmp = #ptx.cmp<ltu>, negate_c, type = #ptx.type<f32>} : f32
  %p, %q = ptx.setp %f, %f, %c {cmp = #ptx.cmp<ltu>, type = #ptx.type<f32>, boolop = #ptx.boolop<and>, negate_c} : f32
  // CHECK: ptx.selp %{{.*}}, %{{.*}}, %[[P]] {type = #ptx.type<b32>} : i32
  %0 = ptx.selp %a, %a, %p {type = #ptx.type<b32>} : i32
  // CHECK: ptx.cvt %{{.*}} {rnd = #ptx.rnd<rzi>, src_type = #ptx.type<f32>, type = #ptx.type<s32>} : f32 -> i32
  %1 = ptx.cvt %f {type = #ptx.type<s32>, src_type = #ptx.type<f32>, rnd = #ptx.rnd<rzi>} : f32 -> i32
  // CHECK: ptx.mov %{{.*}} {type = #ptx.type<b32>} : i32 -> f32
  %2 = ptx.mov %a {type = #ptx.type<b32>} : i32 -> f32
  ptx.ret
}

// CHECK-LABEL: func.func @memory
func.func @memory(%p: i64, %s: i32) attributes {ptx.entry} {
  // CHECK: ptx.sreg <tid.x> : i32
  %t = ptx.sreg <tid.x> : i32
  // CHECK: ptx.addr_of @tile : i32
  %base = ptx.addr_of @tile : i32
  // CHECK: ptx.ld %{{.*}} {cache = #ptx.cache<cg>, nc, offset = 16 : i64, space = #ptx.space<global>, type = #ptx.type<f32>, vec = 4 : i64} : i64 -> f32, f32, f32, f32
  %v:4 = ptx.ld %p {space = #ptx.space<global>, type = #ptx.type<f32>, vec = 4, offset = 16, cache = #ptx.cache<cg>, nc} : i64 -> f32, f32, f32, f32
  // CHECK: ptx.st %{{.*}}, %{{.*}}, %{{.*}} {space = #ptx.space<shared>, type = #ptx.type<f32>, vec = 2 : i64} : i32, f32, f32
  ptx.st %base, %v#0, %v#1 {space = #ptx.space<shared>, type = #ptx.type<f32>, vec = 2} : i32, f32, f32
  // CHECK: ptx.atom %{{.*}}, %{{.*}}, %{{.*}} {op = #ptx.atomop<cas>, scope = #ptx.scope<gpu>, sem = #ptx.sem<acq_rel>, space = #ptx.space<global>, type = #ptx.type<b32>} : (i64, i32, i32) -> i32
  %old = ptx.atom %p, %s, %t {op = #ptx.atomop<cas>, type = #ptx.type<b32>, space = #ptx.space<global>, sem = #ptx.sem<acq_rel>, scope = #ptx.scope<gpu>} : (i64, i32, i32) -> i32
  // CHECK: ptx.cvta %{{.*}} {space = #ptx.space<global>, to, type = #ptx.type<u64>} : i64 -> i64
  %g = ptx.cvta %p {space = #ptx.space<global>, to, type = #ptx.type<u64>} : i64 -> i64
  ptx.ret
}

// CHECK-LABEL: func.func @control
func.func @control(%p: i1, %a: i32) attributes {ptx.entry} {
  %c0 = arith.constant 0 : i32
  // CHECK: ptx.bar_sync %{{.*}} {aligned}
  ptx.bar_sync %c0 {aligned}
  // CHECK: %{{.*}}, %{{.*}} = ptx.shfl_sync %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {mode = #ptx.shfl<bfly>} : i32
  %d, %ok = ptx.shfl_sync %a, %a, %a, %a {mode = #ptx.shfl<bfly>} : i32
  // CHECK: ptx.cond_bra %{{.*}}, ^[[T:.*]](%{{.*}} : i32), ^[[F:.*]] {negated}
  ptx.cond_bra %p, ^taken(%a : i32), ^fall {negated}
^taken(%x: i32):
  // CHECK: ptx.bra ^{{.*}} {uni}
  ptx.bra ^fall {uni}
^fall:
  // CHECK: ptx.ret
  ptx.ret
}
