// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv | FileCheck %s --check-prefix=SPV

// .approx is NVIDIA's instruction on NVPTX, a libm function elsewhere.
// CHECK-LABEL: gpu.func @sin_approx
// CHECK: math.sin
// NV-LABEL: gpu.func @sin_approx
// NV: llvm.call_intrinsic "llvm.nvvm.sin.approx.ftz.f"
func.func @sin_approx(%a: f32) attributes {ptx.entry} {
  %0 = ptx.sin %a {type = #ptx.type<f32>, precision = #ptx.precision<approx>, ftz} : f32
  ptx.ret
}

// -----

// rcp.rn is a correctly rounded division.
// CHECK-LABEL: gpu.func @rcp_rn
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
func.func @rcp_rn(%a: f64) attributes {ptx.entry} {
  %0 = ptx.rcp %a {type = #ptx.type<f64>, rnd = #ptx.rnd<rn>} : f64
  ptx.ret
}

// -----

// rcp.approx.ftz.f64 flushes its f64 operand and result (the one f64 .ftz):
// the exponent field is tested on the bits, before and after the division.
// SPV-LABEL: gpu.func @rcp_approx_ftz_f64
// SPV: arith.andi %{{.*}}, %c9218868437227405312_i64 : i64
// SPV: arith.select
// SPV: arith.divf
// SPV: arith.andi %{{.*}}, %c9218868437227405312_i64{{.*}} : i64
// SPV: arith.select
func.func @rcp_approx_ftz_f64(%a: f64) attributes {ptx.entry} {
  %0 = ptx.rcp %a {type = #ptx.type<f64>, precision = #ptx.precision<approx>, ftz} : f64
  ptx.ret
}

// -----

// div.full is NVIDIA's instruction on NVPTX (its 2-ulp result, bit for bit);
// elsewhere a correctly rounded division, within that bound.
// NV-LABEL: gpu.func @div_full_ftz
// NV: llvm.inline_asm "div.full.ftz.f32 $0, $1, $2;", "=f,f,f"
// SPV-LABEL: gpu.func @div_full_ftz
// SPV: arith.divf
func.func @div_full_ftz(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.div %a, %b {type = #ptx.type<f32>, precision = #ptx.precision<full>, ftz} : f32
  ptx.ret
}

// -----

// testp looks at the bits, not at a possibly flushing FPU.
// CHECK-LABEL: gpu.func @testp
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.andi %{{.*}}, %c2139095040_i32
func.func @testp(%a: f32) attributes {ptx.entry} {
  %0 = ptx.testp %a {kind = #ptx.testp<subnormal>, type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// min without .NaN returns the non-NaN operand; -0 orders below +0.
// CHECK-LABEL: gpu.func @fmin
// CHECK: arith.cmpf uno
// CHECK: arith.minimumf
// CHECK: arith.select
// SPIR-V's llvm.minimum is OpenCL fmin: the order is built from compares,
// and equal operands (+-0) OR their bits so -0 wins.
// SPV-LABEL: gpu.func @fmin
// SPV-NOT: arith.minimumf
// SPV: %[[LT:.*]] = arith.cmpf olt, %[[X:.*]], %[[Y:[^ ]*]] : f32
// SPV: arith.select %[[LT]], %[[X]], %[[Y]]
// SPV: arith.ori
// SPV: arith.cmpf oeq
// SPV-NOT: arith.minimumf
// SPV: gpu.return
func.func @fmin(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.min %a, %b {type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// max.NaN: NaN in, NVIDIA's canonical NaN 0x7fffffff out; +-0 AND their
// bits so +0 wins.
// SPV-LABEL: gpu.func @fmax_nan
// SPV: arith.cmpf ogt
// SPV: arith.andi
// SPV: %[[NAN:.*]] = arith.ori
// SPV: arith.select %[[NAN]], %{{.*}}
// SPV: gpu.return
// NV-LABEL: gpu.func @fmax_nan
// NV: llvm.call_intrinsic "llvm.nvvm.fmax.nan.f"
func.func @fmax_nan(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.max %a, %b {type = #ptx.type<f32>, nan} : f32
  ptx.ret
}

// -----

// testp.normal is true for +-0 on NVIDIA hardware: not NaN, infinite or
// subnormal (exponent 0 with a mantissa).
// CHECK-LABEL: gpu.func @testp_normal
// CHECK: %[[EXP:.*]] = arith.andi %{{.*}}, %c2139095040_i32
// CHECK: %[[MANT:.*]] = arith.andi %{{.*}}, %c8388607_i32
// CHECK: %[[EXPZERO:.*]] = arith.cmpi eq, %[[EXP]], %c0_i32
// CHECK: %[[MANTZERO:.*]] = arith.cmpi eq, %[[MANT]], %c0_i32
// CHECK: %[[MANTSET:.*]] = arith.xori %[[MANTZERO]], %true
// CHECK: arith.andi %[[EXPZERO]], %[[MANTSET]]
func.func @testp_normal(%a: f32) attributes {ptx.entry} {
  %0 = ptx.testp %a {kind = #ptx.testp<normal>, type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// sin/cos.approx off NVPTX reduce the angle like the hardware: revolutions
// (x / 2pi in f32), their fraction, then the libm function of 2pi times it.
// CHECK-LABEL: gpu.func @cos_approx
// CHECK: %[[T:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[H:.*]] = arith.addf %[[T]], %cst{{.*}} : f32
// CHECK: %[[W:.*]] = math.floor %[[H]] : f32
// CHECK: arith.subf %[[T]], %[[W]] : f32
// CHECK: math.cos
// NV-LABEL: gpu.func @cos_approx
// NV-NOT: math.floor
// NV: llvm.call_intrinsic "llvm.nvvm.cos.approx.f"
func.func @cos_approx(%a: f32) attributes {ptx.entry} {
  %0 = ptx.cos %a {type = #ptx.type<f32>, precision = #ptx.precision<approx>} : f32
  ptx.ret
}

// -----

// Directed narrowing: round to nearest, compare back, step one ulp.
// CHECK-LABEL: gpu.func @cvt_rz
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.extf %[[R]] : f32 to f64
// CHECK: arith.cmpf ogt
func.func @cvt_rz(%a: f64) attributes {ptx.entry} {
  %0 = ptx.cvt %a {type = #ptx.type<f32>, src_type = #ptx.type<f64>, rnd = #ptx.rnd<rz>} : f64 -> f32
  ptx.ret
}

// -----

// Packing moves put the first element in the low bits.
// CHECK-LABEL: gpu.func @pack
// CHECK: arith.extui %{{.*}} : i32 to i64
// CHECK: arith.shli %{{.*}}, %c32_i64
func.func @pack(%a: i32, %b: i32) attributes {ptx.entry} {
  %0 = ptx.mov_pack %a, %b : i32, i32 -> i64
  ptx.ret
}

// -----

// set writes all ones or zero.
// CHECK-LABEL: gpu.func @set
// CHECK: %[[P:.*]] = arith.cmpf olt
// CHECK: arith.select %[[P]], %c-1_i32, %c0_i32
func.func @set(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.set %a, %b {cmp = #ptx.cmp<lt>, type = #ptx.type<u32>, src_type = #ptx.type<f32>} : f32 -> i32
  ptx.ret
}

// -----

// f32 -> f16 gives NVIDIA's canonical NaN 0x7fff (32767) for every NaN.
// CHECK-LABEL: gpu.func @cvt_f16_nan
// CHECK: %[[H:.*]] = arith.truncf %[[X:.*]] : f32 to f16
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[C:.*]] = arith.bitcast %c32767_i16 : i16 to f16
// CHECK: arith.select %[[NAN]], %[[C]], %[[H]] : f16
func.func @cvt_f16_nan(%a: f32) attributes {ptx.entry} {
  %0 = ptx.cvt %a {type = #ptx.type<f16>, src_type = #ptx.type<f32>, rnd = #ptx.rnd<rn>} : f32 -> i16
  ptx.ret
}

// -----

// .relu: -0 becomes +0 too (ole, not olt).
// CHECK-LABEL: gpu.func @cvt_relu_f16
// CHECK: %[[LE:.*]] = arith.cmpf ole, %[[R:.*]], %[[Z:.*]] : f16
// CHECK: arith.select %[[LE]], %[[Z]], %[[R]] : f16
func.func @cvt_relu_f16(%a: f32) attributes {ptx.entry} {
  %0 = ptx.cvt %a {type = #ptx.type<f16>, src_type = #ptx.type<f32>, rnd = #ptx.rnd<rn>, relu} : f32 -> i16
  ptx.ret
}

// -----

// cvt.rn.relu.f16x2.f32: relu before narrowing, -0 included.
// CHECK-LABEL: gpu.func @cvt_pack_relu
// CHECK: %[[LE:.*]] = arith.cmpf ole, %[[X:.*]], %[[Z:.*]] : f32
// CHECK: arith.select %[[LE]], %[[Z]], %[[X]] : f32
func.func @cvt_pack_relu(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.cvt_pack %a, %b {type = #ptx.type<f16x2>, rnd = #ptx.rnd<rn>, relu} : i32
  ptx.ret
}

// -----

// f32 -> bf16 rounds in integer arithmetic; NaN gives 0x7fff.
// CHECK-LABEL: gpu.func @cvt_pack_bf16
// CHECK: %[[NAN:.*]] = arith.cmpf uno
// CHECK: arith.select %[[NAN]], %c32767_i32{{.*}}, %{{.*}} : i32
func.func @cvt_pack_bf16(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.cvt_pack %a, %b {type = #ptx.type<bf16x2>, rnd = #ptx.rnd<rn>} : i32
  ptx.ret
}

// -----

// div.approx.f32 is a * (1/b) with the reciprocal flushed to zero (the
// H200 gives 1 / FLT_MAX = 0); a subnormal b first scales a and b by 2^24.
// On NVPTX it is NVIDIA's instruction.
// CHECK-LABEL: gpu.func @div_approx
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
// CHECK: %[[SA:.*]] = arith.mulf %[[A]], %[[S]] : f32
// CHECK: %[[SB:.*]] = arith.mulf %[[B]], %[[S]] : f32
// CHECK: %[[R:.*]] = arith.divf %{{.*}}, %[[SB]] : f32
// CHECK: %[[FR:.*]] = arith.select %{{.*}}, %{{.*}}, %[[R]] : f32
// CHECK: arith.mulf %[[SA]], %[[FR]] : f32
// NV-LABEL: gpu.func @div_approx
// NV: llvm.call_intrinsic "llvm.nvvm.div.approx.f"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
func.func @div_approx(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.div %a, %b {type = #ptx.type<f32>, precision = #ptx.precision<approx>} : f32
  ptx.ret
}

// -----

// div.approx.ftz.f32 flushes a, b, 1/b and the product (0 / subnormal is
// 0 * inf = NaN, as on the H200).
// SPV-LABEL: gpu.func @div_approx_ftz
// SPV-NOT: arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
// SPV: %[[R:.*]] = arith.divf
// SPV: %[[D:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// SPV: arith.bitcast %[[D]] : f32 to i32
// NV-LABEL: gpu.func @div_approx_ftz
// NV: llvm.call_intrinsic "llvm.nvvm.div.approx.ftz.f"
func.func @div_approx_ftz(%a: f32, %b: f32) attributes {ptx.entry} {
  %0 = ptx.div %a, %b {type = #ptx.type<f32>, precision = #ptx.precision<approx>, ftz} : f32
  ptx.ret
}

// -----

// fma.rm.f32 off NVPTX: the target's fma rounded to nearest, stepped one ulp
// down where the exact value's f64 residual (s - r) + e says it overshot; an
// exact zero (the f64 sum s is 0) takes .rm's sign from a*b and c.
// SPV-LABEL: gpu.func @fma_rm_f32
// SPV: %[[R:.*]] = math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// SPV: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f64
// SPV: %[[S:.*]] = arith.addf %[[P]], %{{.*}} : f64
// SPV: %[[RW:.*]] = arith.extf %[[R]] : f32 to f64
// SPV: %[[D:.*]] = arith.subf %[[S]], %[[RW]] : f64
// SPV: %[[T:.*]] = arith.addf %[[D]], %{{.*}} : f64
// SPV: %[[OVER:.*]] = arith.cmpf olt, %[[T]], %{{.*}} : f64
// SPV: %[[DOWN:.*]] = arith.select %[[OVER]], %{{.*}}, %[[R]] : f32
// SPV: %[[ZERO:.*]] = arith.cmpf oeq, %[[S]], %{{.*}} : f64
// SPV: arith.select %[[ZERO]], %{{.*}}, %[[DOWN]] : f32
// SPV-NOT: arith.truncf
// NV-LABEL: gpu.func @fma_rm_f32
// NV: llvm.call_intrinsic "llvm.nvvm.fma.rm.f"
func.func @fma_rm_f32(%a: f32, %b: f32, %c: f32) attributes {ptx.entry} {
  %0 = ptx.fma %a, %b, %c {type = #ptx.type<f32>, rnd = #ptx.rnd<rm>} : f32
  ptx.ret
}

// -----

// fma.rp.f32 steps up where r is below the exact value; rounding to nearest
// already gives .rp's zero sign, so no zero select.
// SPV-LABEL: gpu.func @fma_rp_f32
// SPV: %[[R:.*]] = math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// SPV: %[[UNDER:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f64
// SPV: arith.select %[[UNDER]], %{{.*}}, %[[R]] : f32
// SPV-NEXT: gpu.return
func.func @fma_rp_f32(%a: f32, %b: f32, %c: f32) attributes {ptx.entry} {
  %0 = ptx.fma %a, %b, %c {type = #ptx.type<f32>, rnd = #ptx.rnd<rp>} : f32
  ptx.ret
}

// -----

// fma.rm.ftz.f32 keeps the f64 round-to-odd path (its tiny results flush
// after rounding): no f32 fma.
// SPV-LABEL: gpu.func @fma_rm_ftz_f32
// SPV-NOT: math.fma
// SPV: arith.truncf %{{.*}} : f64 to f32
func.func @fma_rm_ftz_f32(%a: f32, %b: f32, %c: f32) attributes {ptx.entry} {
  %0 = ptx.fma %a, %b, %c {type = #ptx.type<f32>, rnd = #ptx.rnd<rm>, ftz} : f32
  ptx.ret
}

// -----

// nvcc's expf rounds with fma.rm(cvt.sat(x), 252, 12582913): the exact
// value lies in [2^23, 2^24), where the floats are the integers, so .rm is
// c + floor(a*b), built in f32 (floor of the rounded product, one fma to
// step it back where it rounded up); no f64.
// SPV-LABEL: gpu.func @fma_rm_integral
// SPV-NOT: f64
// SPV: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// SPV: %[[F:.*]] = math.floor %[[P]] : f32
// SPV: %[[NF:.*]] = arith.negf %[[F]] : f32
// SPV: %[[E:.*]] = math.fma %{{.*}}, %{{.*}}, %[[NF]] : f32
// SPV: %[[OVER:.*]] = arith.cmpf olt, %[[E]], %{{.*}} : f32
// SPV: %[[LESS:.*]] = arith.subf %[[F]], %{{.*}} : f32
// SPV: %[[FLOOR:.*]] = arith.select %[[OVER]], %[[LESS]], %[[F]] : f32
// SPV: arith.addf %{{.*}}, %[[FLOOR]] : f32
// SPV-NOT: f64
// SPV: gpu.return
func.func @fma_rm_integral(%x: f32) attributes {ptx.entry} {
  %s = ptx.cvt %x {sat, src_type = #ptx.type<f32>, type = #ptx.type<f32>} : f32 -> f32
  %b = arith.constant 2.520000e+02 : f32
  %c = arith.constant 0x4B400001 : f32
  %0 = ptx.fma %s, %b, %c {type = #ptx.type<f32>, rnd = #ptx.rnd<rm>} : f32
  ptx.ret
}

// -----

// The same with c = 2^22: the result's binade is not fixed, so the f64
// residual path.
// SPV-LABEL: gpu.func @fma_rm_integral_out_of_binade
// SPV-NOT: math.floor
// SPV: arith.mulf %{{.*}}, %{{.*}} : f64
// SPV-NOT: math.floor
// SPV: gpu.return
func.func @fma_rm_integral_out_of_binade(%x: f32) attributes {ptx.entry} {
  %s = ptx.cvt %x {sat, src_type = #ptx.type<f32>, type = #ptx.type<f32>} : f32 -> f32
  %b = arith.constant 2.520000e+02 : f32
  %c = arith.constant 4.194304e+06 : f32
  %0 = ptx.fma %s, %b, %c {type = #ptx.type<f32>, rnd = #ptx.rnd<rm>} : f32
  ptx.ret
}
