// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv -verify-diagnostics

// malloc takes and returns a 64-bit value: a 32-bit size is no CUDA malloc.
func.func @narrow_malloc(%n: i32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported call of 'malloc' with a signature other than (.b64) -> .b64}}
  %p = ptx.call @malloc(%n) : (i32) -> i64
  ptx.ret
}

// -----

// free returns nothing.
func.func @free_result(%p: i64) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported call of 'free' with a signature other than (.b64)}}
  %r = ptx.call @free(%p) : (i64) -> i64
  ptx.ret
}
