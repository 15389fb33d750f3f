// RUN: zmlir-opt %s -split-input-file -verify-diagnostics

// A 2D lookup takes two coordinates.
func.func @tex_coordinates(%h: i64, %x: f32) {
  // expected-error @+1 {{takes 2 coordinates with geometry d2, got 1}}
  %0:4 = ptx.tex <d2> %h, %x : f32 -> f32, f32, f32, f32
  ptx.ret
}

// -----

// An array geometry needs its layer.
func.func @tex_layer(%h: i64, %x: f32, %y: f32) {
  // expected-error @+1 {{needs layer operand with geometry a2d}}
  %0:4 = ptx.tex <a2d> %h, %x, %y : f32, f32 -> f32, f32, f32, f32
  ptx.ret
}

// -----

// A cube map is addressed by a direction of floats.
func.func @cube_integer(%h: i64, %x: i32) {
  // expected-error @+1 {{takes .f32 coordinates with geometry cube}}
  %0:4 = ptx.tex <cube> %h, %x, %x, %x : i32, i32, i32 -> f32, f32, f32, f32
  ptx.ret
}

// -----

// tex gives four values.
func.func @tex_results(%h: i64, %x: f32) {
  // expected-error @+1 {{gives 4 results, got 2}}
  %0:2 = ptx.tex <d1> %h, %x : f32 -> f32, f32
  ptx.ret
}

// -----

// tld4 gathers from 2D textures only.
func.func @tld4_geometry(%h: i64, %x: f32) {
  // expected-error @+1 {{takes geometry d2 or a2d, not d1}}
  %0:4 = ptx.tld4 <r> <d1> %h, %x : f32 -> f32, f32, f32, f32
  ptx.ret
}

// -----

// memory_layout is a surface's attribute.
func.func @txq_memory_layout(%h: i64) {
  // expected-error @+1 {{has no attribute memory_layout (suq has)}}
  %0 = ptx.txq <memory_layout> %h : i32
  ptx.ret
}

// -----

// filter_mode is a texture's attribute.
func.func @suq_filter_mode(%h: i64) {
  // expected-error @+1 {{has no attribute filter_mode (txq has)}}
  %0 = ptx.suq <filter_mode> %h : i32
  ptx.ret
}

// -----

// Surfaces move raw bits.
func.func @suld_type(%h: i64, %x: i32) {
  // expected-error @+1 {{takes the type .b8, .b16, .b32 or .b64, not .f32}}
  %0 = ptx.suld <d1> %h, %x {type = #ptx.type<f32>} : i32 -> f32
  ptx.ret
}

// -----

// No vector of three elements.
func.func @sust_count(%h: i64, %x: i32, %v: i32) {
  // expected-error @+1 {{accesses 1, 2 or 4 elements, not 3}}
  ptx.sust <d1> %h, %x values %v, %v, %v {type = #ptx.type<b32>} : (i32), (i32, i32, i32)
  ptx.ret
}

// -----

// There are no cube-map surfaces instructions (a cube map is an .a2d surface).
func.func @sust_cube(%h: i64, %x: i32, %v: i32) {
  // expected-error @+1 {{takes no geometry cube}}
  ptx.sust <cube> %h, %x, %x, %x values %v {type = #ptx.type<b32>} : (i32, i32, i32), (i32)
  ptx.ret
}
