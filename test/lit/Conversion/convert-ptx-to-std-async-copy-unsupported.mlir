// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std -verify-diagnostics

// The copy's destination is in the kernel's shared window, which a device
// function does not have.
func.func @cp_async_in_func(%d: i32, %s: i64) {
  // expected-error @+1 {{unsupported shared memory access in a '.func' (only kernels have a shared window)}}
  ptx.cp_async %d, %s {cache = #ptx.cache<cg>, size = 16 : i64} : i32, i64
  ptx.ret
}
