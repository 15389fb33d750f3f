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
