//===- PTXConvertOps.td - mov and cvt ----------------------*- tablegen -*-===//
//
// Register moves, packs and unpacks, and numeric conversions. Lowered by
// zmlir/lowering/Convert.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_CONVERTOPS
#define ZMLIR_DIALECT_PTX_CONVERTOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Data movement and conversion (PTX ISA 9.7.9)
//===----------------------------------------------------------------------===//

def PTX_MovOp : PTX_Op<"mov", [Pure]> {
  let summary = "PTX `mov` between registers of the same width";
  let description = [{
    A register copy; when the register types differ (`mov.b32 %f1, %r1`) it
    reinterprets the bits. PTX ISA 9.7.9.1.
  }];
  let arguments = (ins PTX_Reg:$src, PTX_TypeAttr:$type);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($res)";
  let hasVerifier = 1;
}

def PTX_MovPackOp : PTX_Op<"mov_pack", [Pure]> {
  let summary = "PTX `mov` packing registers: `mov.b64 %rd, {%r1, %r2}`";
  let description = [{
    Concatenates the elements, the first in the low bits. PTX ISA 9.7.9.1.
    Example: `%d = ptx.mov_pack %lo, %hi : i32, i32 -> i64`
  }];
  let arguments = (ins Variadic<PTX_Reg>:$elems);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$elems attr-dict `:` type($elems) `->` type($res)";
  let hasVerifier = 1;
}

def PTX_MovUnpackOp : PTX_Op<"mov_unpack", [Pure]> {
  let summary = "PTX `mov` unpacking a register: `mov.b32 {%h1, %h2}, %r`";
  let description = [{
    Splits `src` into equal parts, the first result from the low bits.
    PTX ISA 9.7.9.1.
  }];
  let arguments = (ins PTX_Reg:$src);
  let results = (outs Variadic<PTX_Reg>:$elems);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($elems)";
  let hasVerifier = 1;
}

def PTX_CvtOp : PTX_Op<"cvt", [Pure]> {
  let summary = "PTX `cvt`: convert between numeric types";
  let description = [{
    `cvt.frnd2{.relu}{.satfinite}.dtype.atype d, a` and the integer forms.
    `type` is the destination type, `src_type` the source. PTX ISA 9.7.9.21.
  }];
  let arguments = (ins PTX_Reg:$src, PTX_TypeAttr:$type, PTX_TypeAttr:$src_type,
                   DefaultValuedAttr<PTX_RoundingAttr, "::zmlir::ptx::Rounding::None">:$rnd,
                   UnitAttr:$ftz, UnitAttr:$sat, UnitAttr:$relu);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($res)";
  let hasVerifier = 1;
}

def PTX_CvtPackOp : PTX_Op<"cvt_pack", [Pure]> {
  let summary = "PTX `cvt.frnd.f16x2.f32` / `.bf16x2.f32`: convert and pack two floats";
  let description = [{
    `d = {cvt(a), cvt(b)}` with `a` in the upper and `b` in the lower half;
    `.relu` clamps negatives (and NaN) to +0, `.satfinite` clamps to the
    largest finite value. PTX ISA 9.7.9.21.
  }];
  let arguments = (ins F32:$a, F32:$b, PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_RoundingAttr, "::zmlir::ptx::Rounding::None">:$rnd,
                   UnitAttr:$relu, UnitAttr:$satfinite);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($res)";
}

#endif // ZMLIR_DIALECT_PTX_CONVERTOPS
