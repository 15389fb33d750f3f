// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std -verify-diagnostics

// Directed rounding of float arithmetic is rejected, not silently rounded
// to nearest.
func.func @directed_rounding(%a: f32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported rounding modifier '.rz' on 'add'}}
  %0 = ptx.add %a, %a {type = #ptx.type<f32>, rnd = #ptx.rnd<rz>} : f32
  ptx.ret
}

// -----

func.func @named_barrier() attributes {ptx.entry} {
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{unsupported 'bar.sync' on a barrier other than 0}}
  ptx.bar_sync %c1 {aligned}
  ptx.ret
}

// -----

func.func @partial_warp_shuffle(%a: i32) attributes {ptx.entry} {
  %c = arith.constant 7199 : i32
  // expected-error @+1 {{unsupported 'shfl.sync' over a segment narrower than the warp}}
  %d, %p = ptx.shfl_sync %a, %a, %c, %a {mode = #ptx.shfl<down>} : i32
  ptx.ret
}

// -----

// expected-error @+1 {{unsupported device function 'helper'}}
func.func @helper() {
  ptx.ret
}

// -----

func.func @clock() attributes {ptx.entry} {
  // expected-error @+1 {{unsupported special register '%clock64'}}
  %0 = ptx.sreg <clock64> : i64
  ptx.ret
}
