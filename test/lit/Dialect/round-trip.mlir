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
  // CHECK: ptx.prefetch %{{.*}} {level = #ptx.level<L2_evict_last>, offset = 8 : i64, space = #ptx.space<global>} : i64
  ptx.prefetch %p {space = #ptx.space<global>, level = #ptx.level<L2_evict_last>, offset = 8} : i64
  // CHECK: ptx.prefetch %{{.*}} {level = #ptx.level<L1>, uniform} : i64
  ptx.prefetch %p {level = #ptx.level<L1>, uniform} : i64
  // CHECK: %{{.*}} = ptx.isspacep %{{.*}} {space = #ptx.space<shared>} : i64
  %in = ptx.isspacep %p {space = #ptx.space<shared>} : i64
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

// -----
// The instruction families added for fidelity print back as written.
// CHECK-LABEL: func.func @families
func.func @families(%a: i32, %b: i32, %c: i32, %f: f32, %p: i1) attributes {ptx.entry} {
  // CHECK: ptx.bfind %{{.*}} {shiftamt, type = #ptx.type<u32>} : i32 -> i32
  %0 = ptx.bfind %a {type = #ptx.type<u32>, shiftamt} : i32 -> i32
  // CHECK: ptx.prmt %{{.*}}, %{{.*}}, %{{.*}} {mode = #ptx.prmt<rc16>} : i32
  %1 = ptx.prmt %a, %b, %c {mode = #ptx.prmt<rc16>} : i32
  // CHECK: ptx.lop3 %{{.*}}, %{{.*}}, %{{.*}} {lut = 150 : i32} : i32
  %2 = ptx.lop3 %a, %b, %c {lut = 150 : i32} : i32
  // CHECK: ptx.shf %{{.*}}, %{{.*}}, %{{.*}} {dir = #ptx.dir<r>, mode = #ptx.clampmode<clamp>, type = #ptx.type<b32>} : i32
  %3 = ptx.shf %a, %b, %c {dir = #ptx.dir<r>, mode = #ptx.clampmode<clamp>, type = #ptx.type<b32>} : i32
  // CHECK: %{{.*}}, %[[CF:.*]] = ptx.add_cc %{{.*}}, %{{.*}} {type = #ptx.type<u32>} : i32
  // CHECK: ptx.add_cc %{{.*}}, %{{.*}}, %[[CF]] {type = #ptx.type<u32>} : i32
  %4, %cf = ptx.add_cc %a, %b {type = #ptx.type<u32>} : i32
  %5, %cf2 = ptx.add_cc %a, %b, %cf {type = #ptx.type<u32>} : i32
  // CHECK: ptx.ex2 %{{.*}} {ftz, precision = #ptx.precision<approx>, type = #ptx.type<f32>} : f32
  %6 = ptx.ex2 %f {type = #ptx.type<f32>, precision = #ptx.precision<approx>, ftz} : f32
  // CHECK: ptx.testp %{{.*}} {kind = #ptx.testp<notanumber>, type = #ptx.type<f32>} : f32
  %7 = ptx.testp %f {kind = #ptx.testp<notanumber>, type = #ptx.type<f32>} : f32
  // CHECK: ptx.vote_sync %{{.*}}, %{{.*}} {mode = #ptx.vote<any>} : i1
  %8 = ptx.vote_sync %p, %a {mode = #ptx.vote<any>} : i1
  // CHECK: ptx.mov_unpack %{{.*}} : i32 -> i16, i16
  %9:2 = ptx.mov_unpack %a : i32 -> i16, i16
  // CHECK: ptx.cvt_pack %{{.*}}, %{{.*}} {relu, rnd = #ptx.rnd<rn>, type = #ptx.type<f16x2>} : i32
  %10 = ptx.cvt_pack %f, %f {type = #ptx.type<f16x2>, rnd = #ptx.rnd<rn>, relu} : i32
  // cvt.pack.sat's integer forms: 16-bit from two, narrower with c above.
  // CHECK: ptx.cvt_pack_sat %{{.*}}, %{{.*}} {width = 16 : i32}
  %p16 = ptx.cvt_pack_sat %a, %b {width = 16 : i32}
  // CHECK: ptx.cvt_pack_sat %{{.*}}, %{{.*}}, %{{.*}} {is_signed, width = 8 : i32}
  %p8 = ptx.cvt_pack_sat %a, %b, %p16 {is_signed, width = 8 : i32}
  // The fp8 pairs: from two f32, from and to .f16x2.
  // CHECK: ptx.cvt_pack %{{.*}}, %{{.*}} {relu, rnd = #ptx.rnd<rn>, satfinite, type = #ptx.type<e4m3x2>} : i16
  %e0 = ptx.cvt_pack %f, %f {type = #ptx.type<e4m3x2>, rnd = #ptx.rnd<rn>, satfinite, relu} : i16
  // CHECK: ptx.cvt %{{.*}} {rnd = #ptx.rnd<rn>, satfinite, src_type = #ptx.type<f16x2>, type = #ptx.type<e5m2x2>} : i32 -> i16
  %e1 = ptx.cvt %a {type = #ptx.type<e5m2x2>, src_type = #ptx.type<f16x2>, rnd = #ptx.rnd<rn>, satfinite} : i32 -> i16
  // CHECK: ptx.cvt %{{.*}} {relu, rnd = #ptx.rnd<rn>, src_type = #ptx.type<e4m3x2>, type = #ptx.type<f16x2>} : i16 -> i32
  %e2 = ptx.cvt %e0 {type = #ptx.type<f16x2>, src_type = #ptx.type<e4m3x2>, rnd = #ptx.rnd<rn>, relu} : i16 -> i32
  // CHECK: ptx.fence {scope = #ptx.scope<sys>, sem = #ptx.sem<sc>}
  ptx.fence {sem = #ptx.sem<sc>, scope = #ptx.scope<sys>}
  // CHECK: ptx.local_var {align = 4 : i64, size = 8 : i64} : i64
  %11 = ptx.local_var {size = 8, align = 4} : i64
  ptx.ret
}
