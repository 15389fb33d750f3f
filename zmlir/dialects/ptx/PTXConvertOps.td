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
    `type` is the destination type, `src_type` the source; the registers may
    be wider than their types (PTX ISA 9.7.9.21: the low bits are read, the
    result is extended).

    The fp8 pair forms (sm_89, PTX ISA 7.8) convert two values at once:
    `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a` narrows each half
    of `a` (round to nearest even; beyond the largest finite value, infinity
    too, that value; NaN 0x7f; `.relu`: negatives and -0 to +0), and
    `cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a` widens each byte exactly;
    the upper byte goes to the upper half. The pair from two f32 values is
    `ptx.cvt_pack`.

    Example:
    `%d = ptx.cvt %a {rnd = #ptx.rnd<rn>, satfinite, src_type = #ptx.type<f16x2>,
    type = #ptx.type<e4m3x2>} : i32 -> i16`
  }];
  let arguments = (ins PTX_Reg:$src, PTX_TypeAttr:$type, PTX_TypeAttr:$src_type,
                   DefaultValuedAttr<PTX_RoundingAttr, "::zmlir::ptx::Rounding::None">:$rnd,
                   UnitAttr:$ftz, UnitAttr:$sat, UnitAttr:$relu, UnitAttr:$satfinite);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($res)";
  let hasVerifier = 1;
}

def PTX_CvtPackOp : PTX_Op<"cvt_pack", [Pure]> {
  let summary = "PTX `cvt` of two f32 values into a pair: `.f16x2`, `.bf16x2`, fp8";
  let description = [{
    `cvt.frnd{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b` and
    `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b` (sm_89):
    `d = {cvt(a), cvt(b)}` with `a` in the upper and `b` in the lower half
    (fp8: byte). `.relu` clamps negatives to +0, `.satfinite` clamps to the
    largest finite value (fp8 always saturates: 448 for E4M3, 57344 for
    E5M2; NaN gives 0x7f). The result is 32 bits for the 16-bit pairs, at
    least 16 for fp8 (a wider register gets the pair zero-extended).
    PTX ISA 9.7.9.21.

    Example:
    `%d = ptx.cvt_pack %a, %b {rnd = #ptx.rnd<rn>, satfinite, type = #ptx.type<e5m2x2>} : i16`
  }];
  let arguments = (ins F32:$a, F32:$b, PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_RoundingAttr, "::zmlir::ptx::Rounding::None">:$rnd,
                   UnitAttr:$relu, UnitAttr:$satfinite);
  let results = (outs AnyTypeOf<[I16, I32, I64]>:$res);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($res)";
  let hasVerifier = 1;
}

def PTX_CvtPackSatOp : PTX_Op<"cvt_pack_sat", [Pure]> {
  let summary = "PTX `cvt.pack.sat` of two s32 integers into narrow integers";
  let description = [{
    `cvt.pack.sat.{u16,s16}.s32 d, a, b` and
    `cvt.pack.sat.{u8,s8,u4,s4,u2,s2}.s32.b32 d, a, b, c` (sm_72, the
    2- and 4-bit forms sm_75): `a` and `b` saturate to the `width`-bit
    range (signed with `is_signed`) and pack into the low `2 * width` bits
    of `d`, `a` above `b`; the bits above them are `c`'s low bits (CUTLASS
    chains two 8-bit packs through `c` into four bytes). PTX ISA 9.7.9.22.

    Example:
    `%d = ptx.cvt_pack_sat %a, %b, %c {is_signed, width = 8 : i32}`
  }];
  let arguments = (ins I32:$a, I32:$b, Optional<I32>:$c, I32Attr:$width, UnitAttr:$is_signed);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict";
  let hasVerifier = 1;
}

#endif // ZMLIR_DIALECT_PTX_CONVERTOPS
