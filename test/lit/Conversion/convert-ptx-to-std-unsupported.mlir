// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std -verify-diagnostics

// f16 arithmetic has only .rn: a directed rounding is rejected, not
// silently rounded to nearest.
func.func @directed_rounding(%a: f16) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported rounding modifier '.rz' on 'add'}}
  %0 = ptx.add %a, %a {type = #ptx.type<f16>, rnd = #ptx.rnd<rz>} : f16
  ptx.ret
}

// -----

// Without a ballot there is no elect.sync.
func.func @elect_generic(%m: i32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported 'elect.sync' for the generic target (no ballot)}}
  %d, %p = ptx.elect_sync %m
  ptx.ret
}

// -----

// A device function returns at most one value.
// expected-error @+1 {{unsupported device function 'pair' with more than one return value}}
func.func @pair(%a: i32) -> (i32, i32) {
  ptx.ret %a, %a : i32, i32
}

// -----

// Warp votes need a target ballot; the generic target has none.
func.func @vote_generic(%p: i1, %m: i32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported 'vote.sync' for the generic target (no ballot)}}
  %0 = ptx.vote_sync %p, %m {mode = #ptx.vote<ballot>} : i32
  ptx.ret
}

// -----

// Transcendentals exist only as .approx.
func.func @sin_exact(%a: f32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported 'sin' without '.approx'}}
  %0 = ptx.sin %a {type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// Integer .sat exists only on add/sub.s32.
func.func @sat_u32(%a: i32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported '.sat' on integer 'add' other than .s32}}
  %0 = ptx.add %a, %a {type = #ptx.type<u32>, sat} : i32
  ptx.ret
}

// -----

func.func @clock() attributes {ptx.entry} {
  // expected-error @+1 {{unsupported special register '%clock64' on target 'generic'}}
  %0 = ptx.sreg <clock64> : i64
  ptx.ret
}

// -----

func.func @mad_sat_u32(%a: i32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported '.sat' on integer 'mad' other than 'mad.hi.sat.s32'}}
  %0 = ptx.mad %a, %a, %a {type = #ptx.type<u32>, mode = #ptx.mode<hi>, sat} : i32 -> i32
  ptx.ret
}

// -----

// PTX has no .relu on cvt.rna.tf32.
func.func @tf32_rna_relu(%a: f32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported instruction 'cvt.rna.relu.tf32.f32'}}
  %0 = ptx.inst "cvt" [".rna", ".relu", ".tf32", ".f32"](%a) {operand_kinds = ["d", "r"]} : (f32) -> i32
  ptx.ret
}

// -----

func.func @e4m3x2_rz(%a: f32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported instruction 'cvt.rz.satfinite.e4m3x2.f32'}}
  %0 = ptx.inst "cvt" [".rz", ".satfinite", ".e4m3x2", ".f32"](%a, %a) {operand_kinds = ["d", "r", "r"]} : (f32, f32) -> i16
  ptx.ret
}

// -----

// ld.param past the end of an aggregate parameter.
func.func @ld_param_past_end(%p: !llvm.array<4 x i8>) -> i32 {
  // expected-error @+1 {{unsupported access at bytes [2, 6) of a 4-byte parameter}}
  %v = ptx.ld_param %p {offset = 2 : i64, type = #ptx.type<b32>} : !llvm.array<4 x i8> -> i32
  ptx.ret %v : i32
}

// -----

// A .shared variable has no address before a kernel runs.
ptx.var @tile {space = #ptx.space<shared>, type = #ptx.type<b8>, count = 64, align = 4}
// expected-error @+1 {{unsupported address of 'tile' in state space 'shared' in the initializer of 'tile_ptr'}}
ptx.var @tile_ptr {space = #ptx.space<global>, type = #ptx.type<u64>, count = 1, align = 8, init = array<i8: 0, 0, 0, 0, 0, 0, 0, 0>, init_addresses = [#ptx.init_addr<offset = 0, symbol = @tile>]}

// -----

// A function's address plus an offset is no function.
// expected-error @+1 {{unsupported address of function 'f' plus 8 in the initializer of 'fn_plus'}}
ptx.var @fn_plus {space = #ptx.space<global>, type = #ptx.type<u64>, count = 1, align = 8, init = array<i8: 0, 0, 0, 0, 0, 0, 0, 0>, init_addresses = [#ptx.init_addr<offset = 0, symbol = @f, addend = 8>]}
func.func @f() {
  ptx.ret
}

// -----

// A call of a .extern .func no one provides (one another unit defines,
// linked without it) has no body to call. (malloc and free are the device
// heap's: convert-ptx-to-std-device-heap.mlir.)
func.func private @defined_elsewhere(i64) -> i64
func.func @calls_extern(%n: i64) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported call of 'defined_elsewhere' (not a .func defined in this module)}}
  %p = ptx.call @defined_elsewhere(%n) : (i64) -> i64
  ptx.ret
}

// -----

// .ftz on bf16 compares is not PTX (NVIDIA's JIT rejects it).
func.func @setp_ftz_bf16(%a: i16, %b: i16) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported comparison '.lt.ftz.bf16'}}
  %p, %q = ptx.setp %a, %b {cmp = #ptx.cmp<lt>, type = #ptx.type<bf16>, ftz} : i16
  ptx.ret
}

// -----

// Nor on bf16x2 compares.
func.func @setp_ftz_bf16x2(%a: i32, %b: i32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported comparison '.lt.ftz.bf16x2'}}
  %p, %q = ptx.setp %a, %b {cmp = #ptx.cmp<lt>, type = #ptx.type<bf16x2>, ftz} : i32
  ptx.ret
}

// -----

// Of the 16-bit special functions only ex2 and tanh .approx exist.
func.func @rcp_f16x2(%a: i32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported type '.f16x2' on 'rcp'}}
  %0 = ptx.rcp %a {precision = #ptx.precision<approx>, type = #ptx.type<f16x2>} : i32
  ptx.ret
}

// -----

func.func @ex2_f16_not_approx(%a: f16) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported type '.f16' on 'ex2'}}
  %0 = ptx.ex2 %a {type = #ptx.type<f16>} : f16
  ptx.ret
}
