// RUN: zmlir-opt %s -split-input-file -verify-diagnostics

// An mbarrier lives in shared memory: a global address is no barrier's.
func.func @global_space(%a: i64, %n: i32) {
  // expected-error @+1 {{takes a shared or generic address, not .global}}
  ptx.mbarrier_init %a, %n {space = #ptx.space<global>} : i64, i32
  ptx.ret
}

// -----

// .expect_tx arrives once: no arrival count with it.
func.func @expect_tx_count(%a: i64, %n: i32) {
  // expected-error @+1 {{with .expect_tx takes a transaction count, not an arrival count}}
  %0 = ptx.mbarrier_arrive %a count %n tx %n : i64 -> i64
  ptx.ret
}

// -----

// .noComplete needs its count.
func.func @no_complete_count(%a: i64) {
  // expected-error @+1 {{with .noComplete takes an arrival count}}
  %0 = ptx.mbarrier_arrive %a {no_complete} : i64 -> i64
  ptx.ret
}

// -----

// An arrival releases; it does not acquire.
func.func @arrive_acquire(%a: i64) {
  // expected-error @+1 {{takes the semantics .release or .relaxed}}
  %0 = ptx.mbarrier_arrive %a {sem = #ptx.sem<acquire>} : i64 -> i64
  ptx.ret
}

// -----

// Scopes are .cta and .cluster.
func.func @gpu_scope(%a: i64, %s: i64) {
  // expected-error @+1 {{takes the scope .cta or .cluster, not .gpu}}
  %0 = ptx.mbarrier_test_wait %a, %s {scope = #ptx.scope<gpu>} : i64, i64
  ptx.ret
}

// -----

// .parity waits on a 32-bit parity, the other form on a 64-bit state.
func.func @parity_type(%a: i64, %s: i64) {
  // expected-error @+1 {{with .parity takes an i32 phase parity}}
  %0 = ptx.mbarrier_test_wait %a, %s {parity} : i64, i64
  ptx.ret
}

// -----

// Only try_wait takes a suspend time hint.
func.func @test_wait_hint(%a: i64, %s: i64, %n: i32) {
  // expected-error @+1 {{takes a suspend time hint only as try_wait}}
  %0 = ptx.mbarrier_test_wait %a, %s suspend %n : i64, i64
  ptx.ret
}

// -----

// cp.async.mbarrier.arrive's barrier is in shared memory too.
func.func @cp_async_arrive_local(%a: i64) {
  // expected-error @+1 {{takes a shared or generic address}}
  ptx.cp_async_mbarrier_arrive %a {space = #ptx.space<local>} : i64
  ptx.ret
}
