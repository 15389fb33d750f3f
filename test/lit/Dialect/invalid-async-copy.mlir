// RUN: zmlir-opt %s -split-input-file -verify-diagnostics

// cp.async copies 4, 8 or 16 bytes.
func.func @size(%d: i32, %s: i64) {
  // expected-error @+1 {{copies 4, 8 or 16 bytes, not 2}}
  ptx.cp_async %d, %s {cache = #ptx.cache<ca>, size = 2 : i64} : i32, i64
  ptx.ret
}

// -----

// .cg copies 16 bytes only.
func.func @cg_size(%d: i32, %s: i64) {
  // expected-error @+1 {{with .cg copies 16 bytes}}
  ptx.cp_async %d, %s {cache = #ptx.cache<cg>, size = 8 : i64} : i32, i64
  ptx.ret
}

// -----

// Only .ca and .cg exist.
func.func @cache(%d: i32, %s: i64) {
  // expected-error @+1 {{takes the cache operator .ca or .cg}}
  ptx.cp_async %d, %s {cache = #ptx.cache<cs>, size = 16 : i64} : i32, i64
  ptx.ret
}

// -----

// A source size or an ignore-src predicate, not both.
func.func @both(%d: i32, %s: i64, %n: i32, %p: i1) {
  // expected-error @+1 {{takes a source size or an ignore-src predicate, not both}}
  ptx.cp_async %d, %s src_size %n ignore_src %p {cache = #ptx.cache<ca>, size = 4 : i64} : i32, i64
  ptx.ret
}

// -----

// wait_all has no count.
func.func @wait_all_count() {
  // expected-error @+1 {{waits for all groups or for a count of them, not both}}
  ptx.cp_async_wait_group {all, pending = 2 : i64}
  ptx.ret
}

// -----

func.func @wait_negative() {
  // expected-error @+1 {{expects a count of pending groups of at least 0, got -1}}
  ptx.cp_async_wait_group {pending = -1 : i64}
  ptx.ret
}

// -----

// A bulk copy goes from global to shared, shared to shared::cluster or
// shared to global memory.
func.func @bulk_spaces(%d: i64, %s: i64, %n: i32, %b: i32) {
  // expected-error @+1 {{copies global to shared, shared to shared::cluster or shared to global memory, not global to global}}
  ptx.cp_async_bulk %d, %s, %n mbarrier %b {dst_space = #ptx.space<global>, src_space = #ptx.space<global>} : i64, i64, i32
  ptx.ret
}

// -----

// One into shared memory completes on an mbarrier.
func.func @bulk_no_mbarrier(%d: i32, %s: i64, %n: i32) {
  // expected-error @+1 {{into shared memory completes on an mbarrier}}
  ptx.cp_async_bulk %d, %s, %n {dst_space = #ptx.space<shared>, src_space = #ptx.space<global>} : i32, i64
  ptx.ret
}

// -----

// One to global memory completes by its bulk async-group.
func.func @bulk_global_mbarrier(%d: i64, %s: i32, %n: i32, %b: i32) {
  // expected-error @+1 {{to global memory completes by its bulk async-group, not an mbarrier}}
  ptx.cp_async_bulk %d, %s, %n mbarrier %b {dst_space = #ptx.space<global>, src_space = #ptx.space<shared>} : i64, i32, i32
  ptx.ret
}

// -----

func.func @bulk_wait_negative() {
  // expected-error @+1 {{expects a count of pending groups of at least 0, got -1}}
  ptx.cp_async_bulk_wait_group {pending = -1 : i64}
  ptx.ret
}

// -----

// fence.proxy.async orders global or shared memory.
func.func @proxy_local() {
  // expected-error @+1 {{orders global or shared memory, not local}}
  ptx.fence_proxy_async {space = #ptx.space<local>}
  ptx.ret
}
