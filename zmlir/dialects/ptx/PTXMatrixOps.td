//===- PTXMatrixOps.td - wmma, mma.sync, ldmatrix ----------*- tablegen -*-===//
//
// Warp-level matrix multiply-accumulate. Verified in PTXMatrixOps.cpp,
// lowered by zmlir/lowering/MatrixOps.cpp.
//
// mma.sync and ldmatrix, unlike wmma, have fragments whose distribution
// over the lanes PTX specifies (PTX ISA 9.7.14.5.x "Matrix Fragments for
// mma.mMnNkK", 9.7.14.5.15 ldmatrix): code may build or read them lane by
// lane, so every lowering of them keeps that distribution.
//
// A wmma fragment is a list of registers per lane whose distribution over
// the warp PTX leaves unspecified: only wmma.load, wmma.store, wmma.mma and
// element-wise code touch it. The ops keep the registers as PTX has them
// (their count and types fixed by shape, matrix and element type); the
// lowering picks the distribution.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_MATRIXOPS
#define ZMLIR_DIALECT_PTX_MATRIXOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Modifiers
//===----------------------------------------------------------------------===//

// The shape .mMnNkK of the multiply the fragments are for: A is M x K, B is
// K x N, C and D are M x N.
def PTX_WmmaShapeEnum : PTX_Enum<"WmmaShape", "PTX wmma shape", [
  I32EnumAttrCase<"M16N16K16", 0, "m16n16k16">,
  I32EnumAttrCase<"M32N8K16", 1, "m32n8k16">,
  I32EnumAttrCase<"M8N32K16", 2, "m8n32k16">,
  I32EnumAttrCase<"M16N16K8", 3, "m16n16k8">,
  I32EnumAttrCase<"M8N8K4", 4, "m8n8k4">]>;
def PTX_WmmaShapeAttr : PTX_EnumAttr<PTX_WmmaShapeEnum, "wmma_shape">;

// Which matrix a fragment holds (.a, .b, .c; wmma.store writes D).
def PTX_WmmaMatrixEnum : PTX_Enum<"WmmaMatrix", "PTX wmma matrix", [
  I32EnumAttrCase<"A", 0, "a">, I32EnumAttrCase<"B", 1, "b">,
  I32EnumAttrCase<"C", 2, "c">, I32EnumAttrCase<"D", 3, "d">]>;
def PTX_WmmaMatrixAttr : PTX_EnumAttr<PTX_WmmaMatrixEnum, "wmma_matrix">;

// How a matrix is stored in memory (.row, .col).
def PTX_WmmaLayoutEnum : PTX_Enum<"WmmaLayout", "PTX wmma layout", [
  I32EnumAttrCase<"Row", 0, "row">, I32EnumAttrCase<"Col", 1, "col">]>;
def PTX_WmmaLayoutAttr : PTX_EnumAttr<PTX_WmmaLayoutEnum, "wmma_layout">;

// Element types of wmma fragments; .tf32 is not an instruction type
// elsewhere, so these are an enum of their own.
def PTX_WmmaTypeEnum : PTX_Enum<"WmmaType", "PTX wmma element type", [
  I32EnumAttrCase<"F16", 0, "f16">, I32EnumAttrCase<"BF16", 1, "bf16">,
  I32EnumAttrCase<"TF32", 2, "tf32">, I32EnumAttrCase<"F32", 3, "f32">,
  I32EnumAttrCase<"F64", 4, "f64">, I32EnumAttrCase<"S8", 5, "s8">,
  I32EnumAttrCase<"U8", 6, "u8">, I32EnumAttrCase<"S32", 7, "s32">]>;
def PTX_WmmaTypeAttr : PTX_EnumAttr<PTX_WmmaTypeEnum, "wmma_type">;

// The shape .mMnNkK of an mma.sync: A is M x K, B is K x N, C and D are
// M x N.
def PTX_MmaShapeEnum : PTX_Enum<"MmaShape", "PTX mma.sync shape", [
  I32EnumAttrCase<"M16N8K16", 0, "m16n8k16">,
  I32EnumAttrCase<"M16N8K8", 1, "m16n8k8">,
  I32EnumAttrCase<"M8N8K4", 2, "m8n8k4">]>;
def PTX_MmaShapeAttr : PTX_EnumAttr<PTX_MmaShapeEnum, "mma_shape">;

// A fragment register: .b32 (packed f16/bf16/s8/u8, tf32, s32), .f32, .f64.
def PTX_WmmaReg : AnyTypeOf<[I32, F32, F64]>;

//===----------------------------------------------------------------------===//
// Ops (PTX ISA 9.7.14.4 - 9.7.14.5)
//===----------------------------------------------------------------------===//

def PTX_WmmaLoadOp : PTX_Op<"wmma_load"> {
  let summary = "PTX `wmma.load`: load a matrix fragment collectively";
  let description = [{
    `wmma.load.{a,b,c}.sync.aligned.layout.shape{.ss}.type r, [p]{, stride}`:
    every lane of the warp gets its registers of the `matrix` (A, B or C) of
    a `shape` multiply, stored at `[p+offset]` with `layout` (`.row`: rows
    `stride` elements apart, `.col`: columns), `stride` defaulting to the
    length of the leading dimension. The number and types of the results are
    the fragment's (PTX ISA 9.7.14.4.1): e.g. eight `.b32` registers of
    packed f16 for A of m16n16k16. All lanes must execute it with the same
    address and stride. PTX ISA 9.7.14.4.2.
    Example: `%r:8 = ptx.wmma_load %p, %ld {layout = #ptx.wmma_layout<row>,
    matrix = #ptx.wmma_matrix<a>, shape = #ptx.wmma_shape<m16n16k16>,
    type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32, i32, i32, i32, i32`
  }];
  let arguments = (ins PTX_Address:$addr, Optional<I32>:$stride,
      PTX_WmmaMatrixAttr:$matrix, PTX_WmmaLayoutAttr:$layout, PTX_WmmaShapeAttr:$shape,
      PTX_WmmaTypeAttr:$type,
      DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space,
      DefaultValuedAttr<I64Attr, "0">:$offset);
  let results = (outs Variadic<PTX_WmmaReg>:$fragment);
  let assemblyFormat = "$addr (`,` $stride^)? attr-dict `:` type($addr) `->` type($fragment)";
  let hasVerifier = 1;
}

def PTX_WmmaStoreOp : PTX_Op<"wmma_store", [AttrSizedOperandSegments]> {
  let summary = "PTX `wmma.store`: store a D fragment collectively";
  let description = [{
    `wmma.store.d.sync.aligned.layout.shape{.ss}.type [p], r{, stride}`:
    the inverse of `ptx.wmma_load` for the result matrix D (M x N) of a
    `shape` multiply. PTX ISA 9.7.14.4.3.
    Example: `ptx.wmma_store %p, %d0, ..., %d7, %ld {layout = #ptx.wmma_layout<row>,
    shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f32>} : i64, f32, ...`
  }];
  let arguments = (ins PTX_Address:$addr, Variadic<PTX_WmmaReg>:$fragment,
      Optional<I32>:$stride, PTX_WmmaLayoutAttr:$layout, PTX_WmmaShapeAttr:$shape,
      PTX_WmmaTypeAttr:$type,
      DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space,
      DefaultValuedAttr<I64Attr, "0">:$offset);
  let assemblyFormat = [{
    $addr `,` $fragment (`stride` $stride^)? attr-dict `:` type($addr) `,` type($fragment)
  }];
  let hasVerifier = 1;
}

def PTX_WmmaMmaOp : PTX_Op<"wmma_mma", [AttrSizedOperandSegments]> {
  let summary = "PTX `wmma.mma`: warp-level D = A * B + C";
  let description = [{
    `wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype d, a, b, c` (f16
    A and B), `.shape.s32.atype.btype.s32{.satfinite}` (s8/u8),
    `.shape.f32.bf16.bf16.f32`, `.m16n16k8.f32.tf32.tf32.f32` and
    `.m8n8k4.f64.f64.f64.f64.rn`: the fragments of A, B and C (as loaded with
    the same shape and layouts) give D's. `satfinite` clamps integer results
    to the s32 range and float ones to finite values (NaN to +0). PTX ISA
    9.7.14.4.4.
    Example: `%d:8 = ptx.wmma_mma %a0, ..., %b0, ..., %c0, ... {alayout = ...,
    atype = #ptx.wmma_type<f16>, ...} : (i32, ...) -> f32, ...`
  }];
  let arguments = (ins Variadic<PTX_WmmaReg>:$a, Variadic<PTX_WmmaReg>:$b,
      Variadic<PTX_WmmaReg>:$c,
      PTX_WmmaLayoutAttr:$alayout, PTX_WmmaLayoutAttr:$blayout, PTX_WmmaShapeAttr:$shape,
      PTX_WmmaTypeAttr:$atype, PTX_WmmaTypeAttr:$btype, PTX_WmmaTypeAttr:$ctype,
      PTX_WmmaTypeAttr:$dtype, UnitAttr:$satfinite,
      DefaultValuedAttr<PTX_RoundingAttr, "::zmlir::ptx::Rounding::None">:$rnd);
  let results = (outs Variadic<PTX_WmmaReg>:$d);
  let assemblyFormat = [{
    `a` `(` $a `)` `b` `(` $b `)` `c` `(` $c `)` attr-dict `:`
    `(` type($a) `)` `,` `(` type($b) `)` `,` `(` type($c) `)` `->` type($d)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mma.sync and ldmatrix (PTX ISA 9.7.14.5)
//===----------------------------------------------------------------------===//

def PTX_MmaSyncOp : PTX_Op<"mma_sync", [AttrSizedOperandSegments]> {
  let summary = "PTX `mma.sync`: warp-level D = A * B + C, fragments specified per lane";
  let description = [{
    `mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype d, a, b, c`: the
    warp's lanes together hold A (M x K, row-major), B (K x N, column-major),
    C and D (M x N), each lane the elements PTX ISA 9.7.14.5 assigns it
    (with groupID = %laneid / 4 and threadID_in_group = %laneid % 4); D is
    A * B + C. The forms: `.m16n8k16.f32.f16.f16.f32`,
    `.m16n8k16.f16.f16.f16.f16` and `.m16n8k16.f32.bf16.bf16.f32` (A: four
    .b32 of packed pairs, B: two, C and D: four .f32, or two .b32 of packed
    f16 pairs), `.m16n8k8.f32.tf32.tf32.f32` (A: four .b32, B: two,
    C and D: four .f32) and `.m8n8k4.f64.f64.f64.f64{.rn}` (A and B: one
    .f64, C and D: two). Every form is `.row.col`. PTX ISA 9.7.14.5.14.
    Example: `%d:4 = ptx.mma_sync a(%a0, %a1, %a2, %a3) b(%b0, %b1)
    c(%c0, %c1, %c2, %c3) {atype = #ptx.wmma_type<f16>, ...,
    shape = #ptx.mma_shape<m16n8k16>} : (i32, i32, i32, i32), (i32, i32),
    (f32, f32, f32, f32) -> f32, f32, f32, f32`
  }];
  let arguments = (ins Variadic<PTX_WmmaReg>:$a, Variadic<PTX_WmmaReg>:$b,
      Variadic<PTX_WmmaReg>:$c, PTX_MmaShapeAttr:$shape,
      PTX_WmmaTypeAttr:$atype, PTX_WmmaTypeAttr:$btype, PTX_WmmaTypeAttr:$ctype,
      PTX_WmmaTypeAttr:$dtype);
  let results = (outs Variadic<PTX_WmmaReg>:$d);
  let assemblyFormat = [{
    `a` `(` $a `)` `b` `(` $b `)` `c` `(` $c `)` attr-dict `:`
    `(` type($a) `)` `,` `(` type($b) `)` `,` `(` type($c) `)` `->` type($d)
  }];
  let hasVerifier = 1;
}

def PTX_LdmatrixOp : PTX_Op<"ldmatrix"> {
  let summary = "PTX `ldmatrix`: load 8x8 b16 matrices from shared memory collectively";
  let description = [{
    `ldmatrix.sync.aligned.m8n8.num{.trans}{.ss}.b16 d, [p]`: loads one,
    two or four (`.x1`, `.x2`, `.x4`: the number of results) 8 x 8 matrices
    of 16-bit elements, row r of matrix i at the address lane 8 * i + r
    gives (`[p+offset]`, 16 bytes). Lane t receives in its register i the
    elements (t / 4, 2 * (t % 4)) and (t / 4, 2 * (t % 4) + 1) of matrix i,
    the first in the low half; with `trans` the elements (2 * (t % 4), t / 4)
    and (2 * (t % 4) + 1, t / 4). The addresses are `.shared` or generic
    ones of shared memory. PTX ISA 9.7.14.5.15.
    Example: `%d:4 = ptx.ldmatrix %p {space = #ptx.space<shared>} : i32 -> i32, i32, i32, i32`
  }];
  let arguments = (ins PTX_Address:$addr, UnitAttr:$trans,
      DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space,
      DefaultValuedAttr<I64Attr, "0">:$offset);
  let results = (outs Variadic<I32>:$d);
  let assemblyFormat = "$addr attr-dict `:` type($addr) `->` type($d)";
  let hasVerifier = 1;
}

#endif // ZMLIR_DIALECT_PTX_MATRIXOPS
