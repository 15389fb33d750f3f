// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0 generic-address-space=4 shared-window=kernel-arg subgroup-size=32" -verify-diagnostics

// .const has no generic window off NVPTX.
func.func @isspacep_const(%a: i64) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported 'isspacep.const' on target 'spirv' (no generic window for it)}}
  %0 = ptx.isspacep %a {space = #ptx.space<const>} : i64
  ptx.ret
}
