// RUN: zmlir-opt %s | zmlir-opt | FileCheck %s
// RUN: zmlir-opt %s -mlir-print-op-generic | zmlir-opt | FileCheck %s

// tex with float and integer coordinates, and an array layer.
// CHECK-LABEL: func.func @tex
func.func @tex(%h: i64, %x: f32, %y: f32, %i: i32) attributes {ptx.entry} {
  // CHECK: ptx.tex <d2> %{{.*}}, %{{.*}}, %{{.*}} : f32, f32 -> f32, f32, f32, f32
  %0:4 = ptx.tex <d2> %h, %x, %y : f32, f32 -> f32, f32, f32, f32
  // CHECK: ptx.tex <d1> %{{.*}}, %{{.*}} : i32 -> i32, i32, i32, i32
  %1:4 = ptx.tex <d1> %h, %i : i32 -> i32, i32, i32, i32
  // CHECK: ptx.tex <a2d> %{{.*}} layer %{{.*}}, %{{.*}}, %{{.*}} : f32, f32 -> f32, f32, f32, f32
  %2:4 = ptx.tex <a2d> %h layer %i, %x, %y : f32, f32 -> f32, f32, f32, f32
  // CHECK: ptx.tex <cube> %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32 -> f32, f32, f32, f32
  %3:4 = ptx.tex <cube> %h, %x, %y, %x : f32, f32, f32 -> f32, f32, f32, f32
  ptx.ret
}

// An independent-mode sampler operand, before the layer.
// CHECK-LABEL: func.func @sampled
func.func @sampled(%h: i64, %s: i64, %x: f32, %y: f32, %i: i32) attributes {ptx.entry} {
  // CHECK: ptx.tex <d2> %{{.*}} sampler %{{.*}}, %{{.*}}, %{{.*}} : f32, f32 -> f32, f32, f32, f32
  %0:4 = ptx.tex <d2> %h sampler %s, %x, %y : f32, f32 -> f32, f32, f32, f32
  // CHECK: ptx.tex <a2d> %{{.*}} sampler %{{.*}} layer %{{.*}}, %{{.*}}, %{{.*}} : f32, f32 -> f32, f32, f32, f32
  %1:4 = ptx.tex <a2d> %h sampler %s layer %i, %x, %y : f32, f32 -> f32, f32, f32, f32
  // CHECK: ptx.tld4 <r> <d2> %{{.*}} sampler %{{.*}}, %{{.*}}, %{{.*}} : f32, f32 -> f32, f32, f32, f32
  %2:4 = ptx.tld4 <r> <d2> %h sampler %s, %x, %y : f32, f32 -> f32, f32, f32, f32
  ptx.ret
}

// tld4 names its component; txq and suq their attribute.
// CHECK-LABEL: func.func @gather_and_queries
func.func @gather_and_queries(%h: i64, %x: f32, %y: f32) attributes {ptx.entry} {
  // CHECK: ptx.tld4 <g> <d2> %{{.*}}, %{{.*}}, %{{.*}} : f32, f32 -> i32, i32, i32, i32
  %0:4 = ptx.tld4 <g> <d2> %h, %x, %y : f32, f32 -> i32, i32, i32, i32
  // CHECK: ptx.txq <addr_mode_1> %{{.*}} : i32
  %1 = ptx.txq <addr_mode_1> %h : i32
  // CHECK: ptx.suq <memory_layout> %{{.*}} : i32
  %2 = ptx.suq <memory_layout> %h : i32
  ptx.ret
}

// suld and sust: the element type, the clamp mode (.trap by default).
// CHECK-LABEL: func.func @surfaces
func.func @surfaces(%h: i64, %x: i32, %y: i32, %v: i16) attributes {ptx.entry} {
  // CHECK: ptx.suld <d2> %{{.*}}, %{{.*}}, %{{.*}} {type = #ptx.type<b8>} : i32, i32 -> i16, i16
  %0:2 = ptx.suld <d2> %h, %x, %y {type = #ptx.type<b8>} : i32, i32 -> i16, i16
  // CHECK: ptx.sust <a1d> %{{.*}} layer %{{.*}}, %{{.*}} values %{{.*}} {clamp = #ptx.clamp<zero>, type = #ptx.type<b16>} : (i32), (i16)
  ptx.sust <a1d> %h layer %y, %x values %v {clamp = #ptx.clamp<zero>, type = #ptx.type<b16>} : (i32), (i16)
  ptx.ret
}

// tex.level and tex.grad: the instruction's operands and, as a region, the
// expansion on zmlir's descriptors that targets without native textures use.
// CHECK-LABEL: func.func @mipmap
func.func @mipmap(%h: i64, %x: f32, %y: f32, %i: i32) attributes {ptx.entry} {
  // CHECK: ptx.tex_mipmap <a2d> %{{.*}} layer %{{.*}}, %{{.*}}, %{{.*}} lod %{{.*}} -> f32, f32, f32, f32 {
  // CHECK: ptx.tex_yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32, f32
  %0:4 = ptx.tex_mipmap <a2d> %h layer %i, %x, %y lod %x -> f32, f32, f32, f32 {
    %1:4 = ptx.tex <a2d> %h layer %i, %x, %y : f32, f32 -> f32, f32, f32, f32
    ptx.tex_yield %1#0, %1#1, %1#2, %1#3 : f32, f32, f32, f32
  }
  // CHECK: ptx.tex_mipmap <d2> %{{.*}}, %{{.*}}, %{{.*}} grad(%{{.*}}, %{{.*}}) (%{{.*}}, %{{.*}}) {signed} -> i32, i32, i32, i32 {
  %2:4 = ptx.tex_mipmap <d2> %h, %x, %y grad(%x, %y) (%y, %x) {signed} -> i32, i32, i32, i32 {
    %3:4 = ptx.tex <d2> %h, %x, %y : f32, f32 -> i32, i32, i32, i32
    ptx.tex_yield %3#0, %3#1, %3#2, %3#3 : i32, i32, i32, i32
  }
  ptx.ret
}
