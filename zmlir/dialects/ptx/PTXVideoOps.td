//===- PTXVideoOps.td - Video instructions -----------------*- tablegen -*-===//
//
// The scalar video instructions (vadd ... vset) and the SIMD ones on two
// half-words or four bytes of a 32-bit register (vadd2 ... vset4). Lowered
// by zmlir/lowering/Video.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_VIDEOOPS
#define ZMLIR_DIALECT_PTX_VIDEOOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

// The primary operation of a video instruction (`vadd` is `add`, `vset4`
// is `set`).
def PTX_VideoOpEnum : PTX_Enum<"VideoOp", "PTX video operation", [
  I32EnumAttrCase<"Add", 0, "add">, I32EnumAttrCase<"Sub", 1, "sub">,
  I32EnumAttrCase<"Avrg", 2, "avrg">, I32EnumAttrCase<"Absdiff", 3, "absdiff">,
  I32EnumAttrCase<"Min", 4, "min">, I32EnumAttrCase<"Max", 5, "max">,
  I32EnumAttrCase<"Set", 6, "set">, I32EnumAttrCase<"Shl", 7, "shl">,
  I32EnumAttrCase<"Shr", 8, "shr">]>;
def PTX_VideoOpAttr : PTX_EnumAttr<PTX_VideoOpEnum, "vop">;

// The secondary operation with `c`: scalar `.add/.min/.max`, SIMD `.add`
// (the accumulate form).
def PTX_VideoSecondaryEnum : PTX_Enum<"VideoSecondary", "PTX video secondary operation", [
  I32EnumAttrCase<"None", 0, "none">, I32EnumAttrCase<"Add", 1, "add">,
  I32EnumAttrCase<"Min", 2, "min">, I32EnumAttrCase<"Max", 3, "max">]>;
def PTX_VideoSecondaryAttr : PTX_EnumAttr<PTX_VideoSecondaryEnum, "vop2nd">;

class PTX_VideoBase<string mnemonic> : PTX_Op<mnemonic, [Pure]> {
  let results = (outs I32:$res);
  let assemblyFormat = "$op $a `,` $b (`,` $c^)? attr-dict";
  let hasVerifier = 1;
}

def PTX_VopOp : PTX_VideoBase<"vop"> {
  let summary = "PTX scalar video instructions: vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr, vset";
  let description = [{
    `ta`/`tb` are the selected byte (`b0`-`b3`), half-word (`h0`, `h1`) or
    the whole word of `a`/`b`, sign- or zero-extended per `atype`/`btype`;
    the operation is exact (wider than 32 bits), `.sat` clamps it to `dtype`
    (or to the byte/half-word `dsel` writes), then the secondary operation
    with `c` (`.add/.min/.max`) or the merge into `c` at `dsel`. `vshl` and
    `vshr` take `mode` (`.clamp` at 32 or `.wrap` modulo 32); `vset` gives
    1 or 0 by `cmp` and has no `.sat`. PTX ISA 9.0 section 9.7.16.1 (vmad is
    not here). Example:
    `%d = ptx.vop <add> %a, %b, %c {asel = "b1", atype = #ptx.type<u32>,
    btype = #ptx.type<s32>, dtype = #ptx.type<s32>, sat, secondary = #ptx.vop2nd<add>}`
  }];
  let arguments = (ins PTX_VideoOpAttr:$op, I32:$a, I32:$b, Optional<I32>:$c,
                   PTX_TypeAttr:$dtype, PTX_TypeAttr:$atype, PTX_TypeAttr:$btype,
                   OptionalAttr<PTX_CmpAttr>:$cmp, OptionalAttr<PTX_ClampModeAttr>:$mode,
                   UnitAttr:$sat,
                   DefaultValuedAttr<PTX_VideoSecondaryAttr,
                                     "::zmlir::ptx::VideoSecondary::None">:$secondary,
                   DefaultValuedStrAttr<StrAttr, "">:$asel,
                   DefaultValuedStrAttr<StrAttr, "">:$bsel,
                   DefaultValuedStrAttr<StrAttr, "">:$dsel);
}

class PTX_VideoSimdOp<string mnemonic, string lanes, string unit, string defaults>
    : PTX_VideoBase<mnemonic> {
  let summary = "PTX " # lanes # "-way SIMD video instructions (" # mnemonic # ")";
  let description = [{
    Each of the }] # lanes # [{ lanes of `a` and `b` is a }] # unit # [{ chosen by `asel`/`bsel`
    from the eight bytes (four half-words) of the pair `{b, a}`, sign- or
    zero-extended per `atype`/`btype`; each lane's result (`.sat`: clamped
    to the lane's range per `dtype`) goes to `d` where `mask` selects it and
    the lane of `c` elsewhere, or (secondary `.add`) `d` is `c` plus the sum
    of the masked lanes' results. `vset` compares (1 or 0 per lane).
    Selectors are PTX's spelling; an empty one is the default (}] # defaults # [{).
    PTX ISA 9.0 sections 9.7.16.2 and 9.7.16.3. Example:
    `%d = ptx.}] # mnemonic # [{ <absdiff> %a, %b, %c {atype = #ptx.type<u32>,
    btype = #ptx.type<u32>, dtype = #ptx.type<u32>, secondary = #ptx.vop2nd<add>}`
  }];
  let arguments = (ins PTX_VideoOpAttr:$op, I32:$a, I32:$b, Optional<I32>:$c,
                   PTX_TypeAttr:$dtype, PTX_TypeAttr:$atype, PTX_TypeAttr:$btype,
                   OptionalAttr<PTX_CmpAttr>:$cmp, UnitAttr:$sat,
                   DefaultValuedAttr<PTX_VideoSecondaryAttr,
                                     "::zmlir::ptx::VideoSecondary::None">:$secondary,
                   DefaultValuedStrAttr<StrAttr, "">:$asel,
                   DefaultValuedStrAttr<StrAttr, "">:$bsel,
                   DefaultValuedStrAttr<StrAttr, "">:$mask);
}

def PTX_Vop2Op : PTX_VideoSimdOp<"vop2", "2", "half-word", "asel h10, bsel h32, mask h10">;
def PTX_Vop4Op : PTX_VideoSimdOp<"vop4", "4", "byte", "asel b3210, bsel b7654, mask b3210">;

#endif // ZMLIR_DIALECT_PTX_VIDEOOPS
