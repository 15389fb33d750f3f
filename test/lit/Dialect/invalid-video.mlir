// RUN: zmlir-opt %s -split-input-file -verify-diagnostics

// Video operands are .u32 or .s32.
func.func @video_type(%a: i32, %b: i32) {
  // expected-error @+1 {{takes .u32 or .s32 operand types}}
  %0 = ptx.vop <add> %a, %b {atype = #ptx.type<b32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>}
  ptx.ret
}

// -----

// A scalar selector is a byte or a half-word.
func.func @video_part(%a: i32, %b: i32) {
  // expected-error @+1 {{selects .b0-.b3, .h0 or .h1}}
  %0 = ptx.vop <add> %a, %b {asel = "b4", atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>}
  ptx.ret
}

// -----

// Shifts say how they treat large amounts.
func.func @video_shift_mode(%a: i32, %b: i32) {
  // expected-error @+1 {{shift needs .clamp or .wrap}}
  %0 = ptx.vop <shl> %a, %b {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>}
  ptx.ret
}

// -----

// set compares; nothing else does.
func.func @video_set_cmp(%a: i32, %b: i32, %c: i32) {
  // expected-error @+1 {{set needs a comparison}}
  %0 = ptx.vop4 <set> %a, %b, %c {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>}
  ptx.ret
}

// -----

// The SIMD accumulate takes no .sat.
func.func @video_sat_add(%a: i32, %b: i32, %c: i32) {
  // expected-error @+1 {{takes no .sat with the .add accumulate}}
  %0 = ptx.vop2 <add> %a, %b, %c {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>, sat, secondary = #ptx.vop2nd<add>}
  ptx.ret
}

// -----

// Four-way lane selectors name bytes 0-7 of {b, a}.
func.func @video_lane_select(%a: i32, %b: i32, %c: i32) {
  // expected-error @+1 {{takes lane selectors .bxyzw (0-7)}}
  %0 = ptx.vop4 <add> %a, %b, %c {asel = "b8210", atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>}
  ptx.ret
}

// -----

// A mask names lanes from the highest down.
func.func @video_mask(%a: i32, %b: i32, %c: i32) {
  // expected-error @+1 {{takes a mask of distinct lanes from the highest down}}
  %0 = ptx.vop4 <add> %a, %b, %c {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dtype = #ptx.type<u32>, mask = "b02"}
  ptx.ret
}

// -----

// A destination merge needs c and excludes a secondary operation.
func.func @video_merge(%a: i32, %b: i32, %c: i32) {
  // expected-error @+1 {{merges into c at its destination selector, with no secondary operation}}
  %0 = ptx.vop <add> %a, %b, %c {atype = #ptx.type<u32>, btype = #ptx.type<u32>, dsel = "h0", dtype = #ptx.type<u32>, secondary = #ptx.vop2nd<min>}
  ptx.ret
}
