// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0 generic-address-space=4 shared-window=kernel-arg subgroup-size=32" -verify-diagnostics

// OpenCL's to_global/to_private do not check the address on Intel's CPU
// runtime, so SPIR-V cannot tell a global generic address from a private
// one: rejected, never guessed.
func.func @isspacep_global(%a: i64) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported 'isspacep.global' on target 'spirv' (OpenCL cannot tell global from private generic addresses)}}
  %0 = ptx.isspacep %a {space = #ptx.space<global>} : i64
  ptx.ret
}

// -----

func.func @isspacep_local(%a: i64) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported 'isspacep.local' on target 'spirv'}}
  %0 = ptx.isspacep %a {space = #ptx.space<local>} : i64
  ptx.ret
}

// -----

// .const has no generic window off NVPTX.
func.func @isspacep_const(%a: i64) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported 'isspacep.const' on target 'spirv' (no generic window for it)}}
  %0 = ptx.isspacep %a {space = #ptx.space<const>} : i64
  ptx.ret
}

// -----

// A device function has no shared window.
func.func @isspacep_shared_func(%a: i64) {
  // expected-error @+1 {{unsupported 'isspacep.shared' on target 'spirv' (only kernels have a shared window)}}
  %0 = ptx.isspacep %a {space = #ptx.space<shared>} : i64
  ptx.ret
}
