// RUN: zmlir-opt %s -split-input-file -verify-diagnostics

// A fragment has the registers PTX gives it: eight for f16 A of m16n16k16.
func.func @load_register_count(%p: i64) {
  // expected-error @+1 {{expects 8 registers for the fragment, got 4}}
  %a:4 = ptx.wmma_load %p {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<a>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32
  return
}

// -----

// An f32 accumulator is in .f32 registers.
func.func @load_register_type(%p: i64) {
  // expected-error @+1 {{expects registers of type 'f32' for the fragment, got 'i32'}}
  %c:8 = ptx.wmma_load %p {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<c>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f32>} : i64 -> i32, i32, i32, i32, i32, i32, i32, i32
  return
}

// -----

// tf32 multiplicands exist for m16n16k8 only.
func.func @load_shape_type(%p: i64) {
  // expected-error @+1 {{no '.tf32' fragment of matrix A for shape '.m16n16k16'}}
  %a:4 = ptx.wmma_load %p {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<a>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<tf32>} : i64 -> i32, i32, i32, i32
  return
}

// -----

// wmma.load loads A, B or C; D is stored.
func.func @load_d(%p: i64) {
  // expected-error @+1 {{loads matrix A, B or C, not D}}
  %d:8 = ptx.wmma_load %p {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<d>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f32>} : i64 -> f32, f32, f32, f32, f32, f32, f32, f32
  return
}

// -----

// wmma accesses .global, .shared or generic memory.
func.func @store_space(%p: i64, %d: f64) {
  // expected-error @+1 {{accesses .global, .shared or generic memory only, not '.local'}}
  ptx.wmma_store %p, %d, %d {layout = #ptx.wmma_layout<row>, shape = #ptx.wmma_shape<m8n8k4>, space = #ptx.space<local>, type = #ptx.wmma_type<f64>} : i64, f64, f64
  return
}

// -----

// bf16 multiplicands accumulate in f32 only.
func.func @mma_types(%a: i32, %c: i32) {
  // expected-error @+1 {{has no form with types .f16.(bf16 x bf16) + .f16}}
  %d:4 = ptx.wmma_mma a(%a, %a, %a, %a) b(%a, %a, %a, %a) c(%c, %c, %c, %c) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<bf16>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<bf16>, ctype = #ptx.wmma_type<f16>, dtype = #ptx.wmma_type<f16>, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32, i32, i32), (i32, i32, i32, i32), (i32, i32, i32, i32) -> i32, i32, i32, i32
  return
}

// -----

// .satfinite is for f16 and s8/u8 multiplicands.
func.func @mma_satfinite(%a: f64) {
  // expected-error @+1 {{'.satfinite' applies to f16 and integer multiplicands only}}
  %d:2 = ptx.wmma_mma a(%a) b(%a) c(%a, %a) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<f64>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, satfinite, shape = #ptx.wmma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64, f64
  return
}

// -----

// A rounding modifier belongs to the f64 form.
func.func @mma_rounding(%a: i32, %c: f32) {
  // expected-error @+1 {{takes a rounding modifier (.rn, .rz, .rm, .rp) for f64 only}}
  %d:8 = ptx.wmma_mma a(%a, %a, %a, %a) b(%a, %a, %a, %a) c(%c, %c, %c, %c, %c, %c, %c, %c) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<tf32>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<tf32>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, rnd = #ptx.rnd<rz>, shape = #ptx.wmma_shape<m16n16k8>} : (i32, i32, i32, i32), (i32, i32, i32, i32), (f32, f32, f32, f32, f32, f32, f32, f32) -> f32, f32, f32, f32, f32, f32, f32, f32
  return
}

// -----

// D of m8n8k4 is two f64 registers.
func.func @mma_d_count(%a: f64) {
  // expected-error @+1 {{expects 2 registers for D, got 1}}
  %d = ptx.wmma_mma a(%a) b(%a) c(%a, %a) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<f64>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, shape = #ptx.wmma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64
  return
}

// -----

// mma.sync's m16n8k16 has A in four .b32 registers.
func.func @mma_sync_register_count(%a: i32, %c: f32) {
  // expected-error @+1 {{expects 4 registers for A, got 2}}
  %d:4 = ptx.mma_sync a(%a, %a) b(%a, %a) c(%c, %c, %c, %c) {atype = #ptx.wmma_type<f16>, btype = #ptx.wmma_type<f16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.mma_shape<m16n8k16>} : (i32, i32), (i32, i32), (f32, f32, f32, f32) -> f32, f32, f32, f32
  return
}

// -----

// tf32 is m16n8k8's, not m16n8k16's (zmlir's forms: f16 and bf16 there).
func.func @mma_sync_form(%a: i32, %c: f32) {
  // expected-error @+1 {{has no form .m16n8k16.f32.tf32.tf32.f32}}
  %d:4 = ptx.mma_sync a(%a, %a, %a, %a) b(%a, %a) c(%c, %c, %c, %c) {atype = #ptx.wmma_type<tf32>, btype = #ptx.wmma_type<tf32>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.mma_shape<m16n8k16>} : (i32, i32, i32, i32), (i32, i32), (f32, f32, f32, f32) -> f32, f32, f32, f32
  return
}

// -----

// D of m8n8k4.f64 is two .f64 registers.
func.func @mma_sync_result_type(%x: f64) {
  // expected-error @+1 {{expects registers of type 'f64' for D, got 'f32'}}
  %d:2 = ptx.mma_sync a(%x) b(%x) c(%x, %x) {atype = #ptx.wmma_type<f64>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, shape = #ptx.mma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f32, f32
  return
}

// -----

// ldmatrix loads .x1, .x2 or .x4.
func.func @ldmatrix_count(%p: i32) {
  // expected-error @+1 {{loads 1, 2 or 4 matrices (.x1, .x2, .x4), not 3}}
  %d:3 = ptx.ldmatrix %p {space = #ptx.space<shared>} : i32 -> i32, i32, i32
  return
}

// -----

// ldmatrix reads shared memory.
func.func @ldmatrix_space(%p: i64) {
  // expected-error @+1 {{reads .shared or generic addresses only, not '.global'}}
  %d = ptx.ldmatrix %p {space = #ptx.space<global>} : i64 -> i32
  return
}
