// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std -verify-diagnostics

// The lanes exchange fragments in their kernel's shared window, which a
// device function does not have.
func.func @mma_in_func(%a: f64) -> f64 {
  // expected-error @+1 {{unsupported 'wmma.mma' in a '.func' (only kernels have a shared window to exchange fragments in)}}
  %d:2 = ptx.wmma_mma a(%a) b(%a) c(%a, %a) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<f64>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, shape = #ptx.wmma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64, f64
  ptx.ret %d#0 : f64
}

// -----

// mma.sync's lanes exchange A and B the same way.
func.func @mma_sync_in_func(%a: f64) -> f64 {
  // expected-error @+1 {{unsupported 'mma.sync' in a '.func' (only kernels have a shared window to exchange fragments in)}}
  %d:2 = ptx.mma_sync a(%a) b(%a) c(%a, %a) {atype = #ptx.wmma_type<f64>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, shape = #ptx.mma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64, f64
  ptx.ret %d#0 : f64
}
