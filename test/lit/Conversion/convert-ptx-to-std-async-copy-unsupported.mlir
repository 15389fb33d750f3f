// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std -verify-diagnostics

// The copy's destination is in the kernel's shared window, which a device
// function does not have.
func.func @cp_async_in_func(%d: i32, %s: i64) {
  // expected-error @+1 {{unsupported shared memory access in a '.func' (only kernels have a shared window)}}
  ptx.cp_async %d, %s {cache = #ptx.cache<cg>, size = 16 : i64} : i32, i64
  ptx.ret
}

// -----

// A bulk copy's size is a multiple of 16 bytes.
func.func @bulk_odd_size(%d: i32, %s: i64, %b: i32) attributes {ptx.entry} {
  %c24 = arith.constant 24 : i32
  // expected-error @+1 {{unsupported cp.async.bulk of 24 bytes (a multiple of 16)}}
  ptx.cp_async_bulk %d, %s, %c24 mbarrier %b {dst_space = #ptx.space<shared>, src_space = #ptx.space<global>} : i32, i64, i32
  ptx.ret
}
