// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv -verify-diagnostics

// A format that is not a constant string (here a kernel parameter): its
// record's layout is unknown at compile time.
func.func @format_param(%f: i64, %args: i64) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported printf format: not a constant string (the address of an initialized .global or .const variable)}}
  %0 = ptx.call @vprintf(%f, %args) : (i64, i64) -> i32
  ptx.ret
}

// -----

// Two different strings meeting at a block argument.
ptx.var @one {space = #ptx.space<global>, type = #ptx.type<b8>, count = 2, align = 1, init = array<i8: 49>}
ptx.var @two {space = #ptx.space<global>, type = #ptx.type<b8>, count = 2, align = 1, init = array<i8: 50>}
func.func @two_formats(%p: i1, %args: i64) attributes {ptx.entry} {
  %a = ptx.addr_of @one : i64
  %b = ptx.addr_of @two : i64
  ptx.cond_bra %p, ^join(%a : i64), ^join(%b : i64)
^join(%f: i64):
  // expected-error @+1 {{unsupported printf format: not a constant string}}
  %0 = ptx.call @vprintf(%f, %args) : (i64, i64) -> i32
  ptx.ret
}

// -----

// CUDA's printf passes no long double.
ptx.var @long_double_format {space = #ptx.space<global>, type = #ptx.type<b8>, count = 4, align = 1, init = array<i8: 37, 76, 102>}
func.func @long_double(%args: i64) attributes {ptx.entry} {
  %a = ptx.addr_of @long_double_format : i64
  // expected-error @+1 {{unsupported printf conversion '%Lf' (CUDA's printf passes no long double or wide characters)}}
  %0 = ptx.call @vprintf(%a, %args) : (i64, i64) -> i32
  ptx.ret
}

// -----

// A vprintf of another signature is not CUDA's.
func.func @other_vprintf(%a: i32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported call of 'vprintf' with a signature other than (.b64 format, .b64 args) -> .b32}}
  %0 = ptx.call @vprintf(%a) : (i32) -> i32
  ptx.ret
}
