// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv | FileCheck %s --check-prefix=SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=amdgpu | FileCheck %s --check-prefix=AMD

// A kernel whose f32 instructions are all .ftz flushes in the function's
// denormal mode: no subnormal test (the exponent mask 0x7f800000) is left.
// On SPIR-V the mode is the program's (a module of this one kernel).
// NV-LABEL: gpu.func @all_ftz
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV-NOT: 2139095040
// NV: math.fma
// NV-NOT: 2139095040
// NV: arith.cmpf olt
// NV-NOT: 2139095040
// SPV-LABEL: gpu.func @all_ftz
// SPV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// SPV-NOT: 2139095040
// SPV: math.fma
// SPV-NOT: 2139095040
// SPV: gpu.return
// AMDGPU's mode flushes its adds, multiplies and fmas; the comparison
// keeps its software flush.
// AMD-LABEL: gpu.func @all_ftz
// AMD-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// AMD-NOT: 2139095040
// AMD: math.fma
// AMD: arith.constant 2139095040 : i32
// AMD: arith.cmpf olt
func.func @all_ftz(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.add %a, %b {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.mul %0, %b {type = #ptx.type<f32>, ftz} : f32 -> f32
  %2 = ptx.fma %1, %a, %b {type = #ptx.type<f32>, rnd = #ptx.rnd<rn>, ftz} : f32
  %p, %q = ptx.setp %2, %a {cmp = #ptx.cmp<lt>, type = #ptx.type<f32>, ftz} : f32
  ptx.ret
}

// -----

// A plain f32 mul beside an add.ftz: the function keeps IEEE subnormals and
// the add is flushed in software.
// NV-LABEL: gpu.func @mixed
// NV-NOT: denormal_fp_math_f32
// NV: arith.constant 2139095040 : i32
// NV: arith.addf
// SPV-LABEL: gpu.func @mixed
// SPV-NOT: denormal_fp_math_f32
// SPV: arith.constant 2139095040 : i32
// SPV: arith.addf
func.func @mixed(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.add %a, %b {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.mul %0, %b {type = #ptx.type<f32>} : f32 -> f32
  ptx.ret
}

// -----

// On SPIR-V one function that could not flush keeps the whole program in
// IEEE mode, the all-.ftz kernel beside it included.
// NV-LABEL: gpu.func @all_ftz_beside_mixed
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// SPV-LABEL: gpu.func @all_ftz_beside_mixed
// SPV-NOT: denormal_fp_math_f32
// SPV: arith.constant 2139095040 : i32
// SPV-LABEL: gpu.func @mixed_beside_all_ftz
func.func @all_ftz_beside_mixed(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.add %a, %b {type = #ptx.type<f32>, ftz} : f32
  ptx.ret
}
func.func @mixed_beside_all_ftz(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.add %a, %b {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.mul %0, %b {type = #ptx.type<f32>} : f32 -> f32
  ptx.ret
}

// -----

// The CPU negates and takes magnitudes on the bits, which the SPIR-V
// program's mode (the MXCSR's) does not flush: neg.ftz and abs.ftz flush in
// software there, and not on NVPTX (neg.ftz.f32, abs.ftz.f32).
// NV-LABEL: gpu.func @neg_abs_ftz
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV-NOT: 2139095040
// NV: gpu.return
// SPV-LABEL: gpu.func @neg_abs_ftz
// SPV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// SPV: arith.constant 2139095040 : i32
// SPV: arith.negf
// SPV: math.absf
// SPV: arith.constant 2139095040 : i32
func.func @neg_abs_ftz(%a: f32) attributes {ptx.entry} {
  %0 = ptx.neg %a {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.abs %0 {type = #ptx.type<f32>, ftz} : f32
  ptx.ret
}

// -----

// tanh.approx.f32 has no .ftz form but is NVIDIA's own instruction either
// way, and so are cvt.f32.bf16 and cvt.rn.bf16.f32 (inline PTX, not LLVM's
// fpext, which the flush mode would make cvt.ftz.f32.bf16): none depends on
// the mode (llm.c's gelu_forward).
// NV-LABEL: gpu.func @gelu_like
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV: llvm.inline_asm "cvt.f32.bf16 $0, $1;", "=f,h" %{{.*}} : (i16) -> f32
// NV: llvm.inline_asm "tanh.approx.f32 $0, $1;"
// NV: llvm.inline_asm "cvt.rn.bf16.f32 $0, $1;", "=h,f"
// NV-NOT: 2139095040
// On SPIR-V tanh.approx.f32 passes a small argument through by a compare
// and a select, in either mode.
// SPV-LABEL: gpu.func @gelu_like
// SPV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
func.func @gelu_like(%h: i16) attributes {ptx.entry} {
  %x = ptx.cvt %h {type = #ptx.type<f32>, src_type = #ptx.type<bf16>} : i16 -> f32
  %0 = ptx.mul %x, %x {type = #ptx.type<f32>, ftz} : f32 -> f32
  %1 = ptx.tanh %0 {precision = #ptx.precision<approx>, type = #ptx.type<f32>} : f32
  %2 = ptx.cvt %1 {type = #ptx.type<bf16>, src_type = #ptx.type<f32>, rnd = #ptx.rnd<rn>} : f32 -> i16
  ptx.ret
}

// -----

// max.ftz.f32 is NVIDIA's instruction (exact on NaN and -0), not
// llvm.maximum with NaN selects.
// NV-LABEL: gpu.func @max_ftz
// NV: llvm.call_intrinsic "llvm.nvvm.fmax.ftz.f"
// NV-NOT: arith.maximumf
// NV: llvm.call_intrinsic "llvm.nvvm.fmin.nan.f"
func.func @max_ftz(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.max %a, %b {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.min %0, %b {type = #ptx.type<f32>, nan} : f32
  ptx.ret
}

// -----

// A device function with no f32 arithmetic suits any caller's mode
// (LLVM inlines only between functions of compatible modes).
// NV-LABEL: llvm.func internal @no_floats
// NV-SAME: denormal_fp_math_f32 = "dynamic,dynamic"
func.func @no_floats(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = ptx.add %a, %c1 {type = #ptx.type<s32>} : i32
  ptx.ret %0 : i32
}
func.func @calls_no_floats(%a: i32) attributes {ptx.entry} {
  %0 = ptx.call @no_floats(%a) : (i32) -> i32
  ptx.ret
}

// -----

// LLVM folds x * 1.0 to x whatever the denormal mode: that .ftz is still
// flushed in software, a mul by another constant is not.
// NV-LABEL: gpu.func @mul_by_one
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV-NOT: 2139095040
// NV: arith.mulf
// NV: arith.constant 2139095040 : i32
// NV: arith.mulf
// NV: arith.constant 2139095040 : i32
func.func @mul_by_one(%a: f32) attributes {ptx.entry} {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %0 = ptx.mul %a, %half {type = #ptx.type<f32>, ftz} : f32 -> f32
  %1 = ptx.mul %0, %one {type = #ptx.type<f32>, ftz} : f32 -> f32
  ptx.ret
}

// -----

// cvt.rn.satfinite.e4m3x2.f32 has no .ftz form but rounds on the bits, where
// an f32 subnormal gives a zero of its sign either way: a kernel of .ftz
// arithmetic packing its results into fp8 keeps the function's flush mode.
// NV-LABEL: gpu.func @ftz_to_fp8
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV: arith.mulf
// NV: arith.minui %{{.*}}, %c126_i32
func.func @ftz_to_fp8(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.mul %a, %b {type = #ptx.type<f32>, ftz} : f32 -> f32
  %1 = ptx.cvt_pack %0, %b {rnd = #ptx.rnd<rn>, satfinite, type = #ptx.type<e4m3x2>} : i16
  ptx.ret
}

// -----

// nvcc's fast-math expf (llm.c's gelu_backward): cvt.rzi.f32.f32 and
// copysign with a constant magnitude give the same results on flushed
// inputs; the kernel is all .ftz otherwise and runs in the flush mode.
// NV-LABEL: gpu.func @fast_expf_clamp
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV-NOT: 2139095040
// NV: math.trunc
func.func @fast_expf_clamp(%a: f32) attributes {ptx.entry} {
  %c = arith.constant 1.260000e+02 : f32
  %0 = ptx.mul %a, %a {type = #ptx.type<f32>, rnd = #ptx.rnd<rn>, ftz} : f32 -> f32
  %1 = ptx.cvt %0 {rnd = #ptx.rnd<rzi>, src_type = #ptx.type<f32>, type = #ptx.type<f32>} : f32 -> f32
  %2 = ptx.copysign %1, %c {type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// copysign's magnitude (its second operand) may be subnormal, and
// cvt.rmi.f32.f32 floors a negative subnormal to -1 where its flushed value
// gives -0: each keeps the function in IEEE mode.
// NV-LABEL: gpu.func @copysign_variable
// NV-NOT: denormal_fp_math_f32
// NV-LABEL: gpu.func @cvt_rmi
// NV-NOT: denormal_fp_math_f32
func.func @copysign_variable(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.mul %a, %a {type = #ptx.type<f32>, rnd = #ptx.rnd<rn>, ftz} : f32 -> f32
  %1 = ptx.copysign %0, %b {type = #ptx.type<f32>} : f32
  ptx.ret
}
func.func @cvt_rmi(%a: f32) attributes {ptx.entry} {
  %0 = ptx.mul %a, %a {type = #ptx.type<f32>, rnd = #ptx.rnd<rn>, ftz} : f32 -> f32
  %1 = ptx.cvt %0 {rnd = #ptx.rnd<rmi>, src_type = #ptx.type<f32>, type = #ptx.type<f32>} : f32 -> f32
  ptx.ret
}

// -----

// SPIR-V's copysign works on the bits, a subnormal magnitude kept in either
// mode.
// SPV-LABEL: gpu.func @copysign_variable_spirv
// SPV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
func.func @copysign_variable_spirv(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.mul %a, %a {type = #ptx.type<f32>, rnd = #ptx.rnd<rn>, ftz} : f32 -> f32
  %1 = ptx.copysign %0, %b {type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// atom.add.f32 and red.add.f32 have no .ftz form: on NVPTX they are NVIDIA's
// own instructions in either mode (flushing adds to global memory, not to
// shared memory), so a kernel of .ftz arithmetic adding its sums atomically
// (llm.c's matmul_backward_bias kernel8) keeps the flush mode. SPIR-V adds
// in a compare-and-swap loop, flushing in software outside shared memory:
// there the program's mode would flush what the H200 keeps.
// NV-LABEL: gpu.func @ftz_atomic_add
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV-NOT: 2139095040
// NV: llvm.atomicrmw fadd
// NV-NOT: 2139095040
// NV: llvm.atomicrmw fadd
// SPV-LABEL: gpu.func @ftz_atomic_add
// SPV-NOT: denormal_fp_math_f32
func.func @ftz_atomic_add(%p: i64, %a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.add %a, %b {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.atom %p, %0 {op = #ptx.atomop<add>, type = #ptx.type<f32>, space = #ptx.space<global>} : (i64, f32) -> f32
  ptx.red %p, %1 {op = #ptx.atomop<add>, type = #ptx.type<f32>, space = #ptx.space<shared>} : i64, f32
  ptx.ret
}

// -----

// SPIR-V: f32 atomic adds to global memory flush either way.
// SPV-LABEL: gpu.func @ftz_atomic_add_global
// SPV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
func.func @ftz_atomic_add_global(%p: i64, %a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.add %a, %b {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.atom %p, %0 {op = #ptx.atomop<add>, type = #ptx.type<f32>, space = #ptx.space<global>} : (i64, f32) -> f32
  ptx.ret
}

// -----

// cvt.ftz.f64.f32 in the flush mode widens with arith.extf, which the
// target flushes itself (cvt.ftz.f64.f32): no software flush of the source
// (llm.c's matmul_backward_bias_kernel_naive sums floats in double). The
// narrowing back keeps its software flush of the result, so LLVM folding
// fptrunc(fpext x) to x still gives the flushed x.
// NV-LABEL: gpu.func @ftz_widen_narrow
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV-NOT: 2139095040
// NV: arith.extf
// NV: arith.truncf
// NV: arith.constant 2139095040 : i32
// The SPIR-V program's mode would flush the f64 add's subnormals too.
// SPV-LABEL: gpu.func @ftz_widen_narrow
// SPV-NOT: denormal_fp_math_f32
func.func @ftz_widen_narrow(%a: f32, %d: f64) attributes {ptx.entry} {
  %0 = ptx.add %a, %a {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.cvt %0 {src_type = #ptx.type<f32>, type = #ptx.type<f64>, ftz} : f32 -> f64
  %2 = ptx.add %1, %d {type = #ptx.type<f64>, rnd = #ptx.rnd<rn>} : f64
  %3 = ptx.cvt %2 {rnd = #ptx.rnd<rn>, src_type = #ptx.type<f64>, type = #ptx.type<f32>, ftz} : f64 -> f32
  ptx.ret
}

// -----

// atom.add.noftz.bf16x2 is NVIDIA's own instruction on NVPTX, keeping
// subnormals in either mode: a kernel of .ftz arithmetic adding bf16 pairs
// atomically (llm.c's layernorm_backward_kernel3) keeps the flush mode.
// NV-LABEL: gpu.func @ftz_atomic_add_bf16x2
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV-NOT: 2139095040
// NV: llvm.inline_asm {{.*}}atom{{.*}}.add.noftz.bf16x2
func.func @ftz_atomic_add_bf16x2(%p: i64, %a: f32, %b: i32) attributes {ptx.entry} {
  %0 = ptx.add %a, %a {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.atom %p, %b {op = #ptx.atomop<add>, type = #ptx.type<bf16x2>, space = #ptx.space<global>} : (i64, i32) -> i32
  ptx.ret
}

// -----

// In IEEE mode (a plain add.f32 mixes the modes) cvt.f32.bf16 stays the
// bits shifted into an f32's top half, on which LLVM tests the software
// flush of the .ftz multiply that follows.
// NV-LABEL: gpu.func @bf16_widen_ieee
// NV-NOT: denormal_fp_math_f32
// NV-NOT: cvt.f32.bf16
// NV: arith.shli %{{.*}}, %{{.*}} : i32
// NV-NOT: cvt.f32.bf16
// NV: gpu.return
func.func @bf16_widen_ieee(%h: i16, %y: f32) attributes {ptx.entry} {
  %x = ptx.cvt %h {type = #ptx.type<f32>, src_type = #ptx.type<bf16>} : i16 -> f32
  %0 = ptx.mul %x, %x {type = #ptx.type<f32>, ftz} : f32 -> f32
  %1 = ptx.add %y, %y {type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// add.bf16x2 is NVIDIA's own instruction on NVPTX, not an f32 add (which
// the mode would flush): a kernel of .ftz arithmetic adding bf16 pairs
// (llm.c's layernorm_backward_kernel4, cuda_bf16.h's __hadd2) keeps the
// flush mode.
// NV-LABEL: gpu.func @ftz_add_bf16x2
// NV-SAME: denormal_fp_math_f32 = "preserve-sign,preserve-sign"
// NV-NOT: 2139095040
// NV: llvm.inline_asm "add.bf16x2 $0, $1, $2;"
func.func @ftz_add_bf16x2(%a: f32, %p: i32) attributes {ptx.entry} {
  %0 = ptx.add %a, %a {type = #ptx.type<f32>, ftz} : f32
  %1 = ptx.add %p, %p {type = #ptx.type<bf16x2>} : i32
  ptx.ret
}
