// RUN: zmlir-opt %s -split-input-file -verify-diagnostics

func.func @mul_wide_result_width(%a: i32) {
  // expected-error @+1 {{result must be 64 bits wide for mode 'wide', got 32}}
  %0 = ptx.mul %a, %a {type = #ptx.type<s32>, mode = #ptx.mode<wide>} : i32 -> i32
  return
}

// -----

func.func @setp_combine_without_boolop(%a: i32, %c: i1) {
  // expected-error @+1 {{a combining predicate operand requires .and/.or/.xor}}
  %p, %q = ptx.setp %a, %a, %c {cmp = #ptx.cmp<lt>, type = #ptx.type<s32>} : i32
  return
}

// -----

func.func @mov_width_mismatch(%a: i32) {
  // expected-error @+1 {{source and result must have the same bit width}}
  %0 = ptx.mov %a {type = #ptx.type<b32>} : i32 -> i64
  return
}

// -----

func.func @ld_vector_results(%p: i64) {
  // expected-error @+1 {{expects 4 values for vector width 4, got 2}}
  %0:2 = ptx.ld %p {type = #ptx.type<f32>, vec = 4} : i64 -> f32, f32
  return
}

// -----

func.func @atom_cas_needs_three_operands(%p: i64, %a: i32) {
  // expected-error @+1 {{the third operand is required by, and only by, 'cas'}}
  %0 = ptx.atom %p, %a {op = #ptx.atomop<cas>, type = #ptx.type<b32>} : (i64, i32) -> i32
  return
}

// -----

// expected-error @+1 {{alignment must be a power of two, got 3}}
ptx.var @v {space = #ptx.space<global>, type = #ptx.type<u32>, align = 3}

// -----

func.func @lop3_table(%a: i32) {
  // expected-error @+1 {{lookup table must be in [0, 255], got 300}}
  %0 = ptx.lop3 %a, %a, %a {lut = 300 : i32} : i32
  ptx.ret
}

// -----

func.func @ballot_type(%p: i1, %m: i32) {
  // expected-error @+1 {{'ballot' and only 'ballot' produces an i32}}
  %0 = ptx.vote_sync %p, %m {mode = #ptx.vote<ballot>} : i1
  ptx.ret
}

// -----

func.func @red_exch(%a: i64, %b: i32) {
  // expected-error @+1 {{'exch' has no reduction form}}
  ptx.red %a, %b {op = #ptx.atomop<exch>, type = #ptx.type<b32>} : i64, i32
  ptx.ret
}

// -----

func.func @prefetch_evict_generic(%a: i64) {
  // expected-error @+1 {{an L2 eviction priority needs '.global'}}
  ptx.prefetch %a {level = #ptx.level<L2_evict_last>} : i64
  ptx.ret
}

// -----

func.func @prefetchu_l2(%a: i64) {
  // expected-error @+1 {{'prefetchu' is '.L1' on generic addresses only}}
  ptx.prefetch %a {level = #ptx.level<L2>, uniform} : i64
  ptx.ret
}

// -----

func.func @prefetch_shared(%a: i32) {
  // expected-error @+1 {{prefetches from generic, global or local addresses, not 'shared'}}
  ptx.prefetch %a {space = #ptx.space<shared>, level = #ptx.level<L1>} : i32
  ptx.ret
}


// -----

func.func @ex2_i32_f32(%a: i32) {
  // expected-error @+1 {{type '.f32' does not match its operand 'i32'}}
  %0 = ptx.ex2 %a {precision = #ptx.precision<approx>, type = #ptx.type<f32>} : i32
  ptx.ret
}

// -----

func.func @tanh_f16x2_f16(%a: f16) {
  // expected-error @+1 {{type '.f16x2' does not match its operand 'f16'}}
  %0 = ptx.tanh %a {precision = #ptx.precision<approx>, type = #ptx.type<f16x2>} : f16
  ptx.ret
}

// -----

// fp8 pairs round to nearest even only.
func.func @cvt_pack_fp8_rz(%a: f32) {
  // expected-error @+1 {{an fp8 conversion rounds '.rn', not '.rz'}}
  %0 = ptx.cvt_pack %a, %a {rnd = #ptx.rnd<rz>, satfinite, type = #ptx.type<e4m3x2>} : i16
  ptx.ret
}

// -----

// Narrowing to fp8 always saturates: PTX spells it.
func.func @cvt_pack_fp8_no_satfinite(%a: f32) {
  // expected-error @+1 {{a conversion to fp8 needs '.satfinite'}}
  %0 = ptx.cvt_pack %a, %a {rnd = #ptx.rnd<rn>, type = #ptx.type<e5m2x2>} : i16
  ptx.ret
}

// -----

func.func @cvt_pack_sat_width(%a: i32) {
  // expected-error @+1 {{packs into 2, 4, 8 or 16 bits, not 3}}
  %0 = ptx.cvt_pack_sat %a, %a, %a {width = 3 : i32}
  ptx.ret
}

// -----

func.func @cvt_pack_sat_8_without_c(%a: i32) {
  // expected-error @+1 {{of values narrower than 16 bits takes a third operand}}
  %0 = ptx.cvt_pack_sat %a, %a {is_signed, width = 8 : i32}
  ptx.ret
}

// -----

func.func @cvt_pack_sat_16_with_c(%a: i32) {
  // expected-error @+1 {{of 16-bit values takes no third operand}}
  %0 = ptx.cvt_pack_sat %a, %a, %a {width = 16 : i32}
  ptx.ret
}

// -----

func.func @cvt_pack_f16x2_i16(%a: f32) {
  // expected-error @+1 {{a '.f16x2' pair is 32 bits wide}}
  %0 = ptx.cvt_pack %a, %a {rnd = #ptx.rnd<rn>, type = #ptx.type<f16x2>} : i16
  ptx.ret
}

// -----

func.func @cvt_pack_f32(%a: f32) {
  // expected-error @+1 {{packs into '.f16x2', '.bf16x2', '.e4m3x2' or '.e5m2x2', not '.f32'}}
  %0 = ptx.cvt_pack %a, %a {rnd = #ptx.rnd<rn>, type = #ptx.type<f32>} : i32
  ptx.ret
}

// -----

// Widening from fp8 is exact: no .satfinite.
func.func @cvt_from_fp8_satfinite(%a: i16) {
  // expected-error @+1 {{'.satfinite' applies to conversions to fp8 only}}
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rn>, satfinite, src_type = #ptx.type<e4m3x2>, type = #ptx.type<f16x2>} : i16 -> i32
  ptx.ret
}

// -----

// fp8 pairs convert from and to .f16x2 only (from two f32: ptx.cvt_pack).
func.func @cvt_fp8_from_f32(%a: f32) {
  // expected-error @+1 {{converts fp8 pairs from and to '.f16x2' (from '.f32': 'ptx.cvt_pack'), not '.e4m3x2.f32'}}
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rn>, satfinite, src_type = #ptx.type<f32>, type = #ptx.type<e4m3x2>} : f32 -> i16
  ptx.ret
}

// -----

func.func @cvt_fp8_ftz(%a: i32) {
  // expected-error @+1 {{an fp8 conversion takes neither '.ftz' nor '.sat'}}
  %0 = ptx.cvt %a {ftz, rnd = #ptx.rnd<rn>, satfinite, src_type = #ptx.type<f16x2>, type = #ptx.type<e4m3x2>} : i32 -> i16
  ptx.ret
}

// -----

func.func @cvt_f16x2_from_fp8_narrow(%a: i16) {
  // expected-error @+1 {{registers narrower than the conversion's types}}
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rn>, src_type = #ptx.type<e5m2x2>, type = #ptx.type<f16x2>} : i16 -> i16
  ptx.ret
}

// -----

func.func @cvt_satfinite_integer(%a: f32) {
  // expected-error @+1 {{'.satfinite' converts to floating-point types only}}
  %0 = ptx.cvt %a {rnd = #ptx.rnd<rni>, satfinite, src_type = #ptx.type<f32>, type = #ptx.type<s32>} : f32 -> i32
  ptx.ret
}
