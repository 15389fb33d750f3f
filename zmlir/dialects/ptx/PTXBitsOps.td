//===- PTXBitsOps.td - Integer bit manipulation ------------*- tablegen -*-===//
//
// Shifts, bit counts and fields, permutes, 24-bit and dot-product
// arithmetic, and extended-precision (carry) arithmetic. Lowered by
// zmlir/lowering/Bits.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_BITSOPS
#define ZMLIR_DIALECT_PTX_BITSOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Shifts (PTX ISA 9.7.8.8 - 9.7.8.9)
//===----------------------------------------------------------------------===//

class PTX_ShiftOp<string mnemonic, string isaSection>
    : PTX_ArithOp<mnemonic, [AllTypesMatch<["a", "res"]>]> {
  let summary = "PTX `" # mnemonic # "`";
  let description = [{
    The shift amount is always a 32-bit register; amounts at or above the
    operand width are clamped. PTX ISA section }] # isaSection # [{.
  }];
  let arguments = !con((ins PTX_Reg:$a, I32:$b), modifiers);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($res)";
}

def PTX_ShlOp : PTX_ShiftOp<"shl", "9.7.8.8">;
def PTX_ShrOp : PTX_ShiftOp<"shr", "9.7.8.9">;

//===----------------------------------------------------------------------===//
// Integer bit manipulation (PTX ISA 9.7.1.13 - 9.7.1.25, 9.7.8.5 - 9.7.8.7)
//===----------------------------------------------------------------------===//

class PTX_BitCountOp<string mnemonic, string what, string isaSection>
    : PTX_Op<mnemonic, [Pure]> {
  let summary = "PTX `" # mnemonic # "`: " # what;
  let description = [{
    Counts over the `.b32`/`.b64` operand; the result is always `.u32`.
    Example: `%n = ptx.}] # mnemonic # [{ %a {type = #ptx.type<b64>} : i64 -> i32`.
    PTX ISA section }] # isaSection # [{.
  }];
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, PTX_TypeAttr:$type);
  let results = (outs I32:$res);
  let assemblyFormat = "$a attr-dict `:` type($a) `->` type($res)";
}

def PTX_PopcOp : PTX_BitCountOp<"popc", "population count", "9.7.1.15">;
def PTX_ClzOp : PTX_BitCountOp<"clz", "count leading zeros", "9.7.1.16">;

def PTX_BfindOp : PTX_Op<"bfind", [Pure]> {
  let summary = "PTX `bfind`: position of the most significant non-sign bit";
  let description = [{
    For `.u32/.u64` the most significant 1 bit, for `.s32/.s64` the most
    significant bit that differs from the sign bit; `0xffffffff` when there
    is none. `.shiftamt` returns the left shift that moves the found bit to
    the top instead. PTX ISA 9.7.1.17.
    Example: `%p = ptx.bfind %a {shiftamt, type = #ptx.type<s32>} : i32 -> i32`
  }];
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, PTX_TypeAttr:$type, UnitAttr:$shiftamt);
  let results = (outs I32:$res);
  let assemblyFormat = "$a attr-dict `:` type($a) `->` type($res)";
}

def PTX_BrevOp : PTX_Op<"brev", [Pure, AllTypesMatch<["a", "res"]>]> {
  let summary = "PTX `brev`: bit reverse";
  let description = "PTX ISA 9.7.1.19. Example: `%r = ptx.brev %a {type = #ptx.type<b32>} : i32`";
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, PTX_TypeAttr:$type);
  let results = (outs AnyTypeOf<[I32, I64]>:$res);
  let assemblyFormat = "$a attr-dict `:` type($res)";
}

def PTX_CnotOp : PTX_Op<"cnot", [Pure, AllTypesMatch<["a", "res"]>]> {
  let summary = "PTX `cnot`: C logical not, d = (a == 0) ? 1 : 0";
  let description = "PTX ISA 9.7.8.5. Example: `%r = ptx.cnot %a {type = #ptx.type<b16>} : i16`";
  let arguments = (ins AnyTypeOf<[I16, I32, I64]>:$a, PTX_TypeAttr:$type);
  let results = (outs AnyTypeOf<[I16, I32, I64]>:$res);
  let assemblyFormat = "$a attr-dict `:` type($res)";
}

def PTX_BfeOp : PTX_Op<"bfe", [Pure, AllTypesMatch<["a", "res"]>]> {
  let summary = "PTX `bfe`: bit field extract";
  let description = [{
    Extracts `len = c & 0xff` bits of `a` starting at `pos = b & 0xff`, zero-
    or (for `.s32/.s64`) sign-extended from the field's last bit inside `a`.
    PTX ISA 9.7.1.20. For 64-bit `a` NVIDIA hardware does not mask: `pos`
    and `len` are `b` and `c` whole (verified on an H200).
    Example: `%r = ptx.bfe %a, %pos, %len {type = #ptx.type<s32>} : i32`
  }];
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, I32:$b, I32:$c, PTX_TypeAttr:$type);
  let results = (outs AnyTypeOf<[I32, I64]>:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res)";
}

def PTX_BfiOp : PTX_Op<"bfi", [Pure, AllTypesMatch<["a", "b", "res"]>]> {
  let summary = "PTX `bfi`: bit field insert";
  let description = [{
    Inserts the low `len = d & 0xff` bits of `a` into `b` at `pos = c & 0xff`;
    bits past the top of `b` are dropped. PTX ISA 9.7.1.21.
    Example: `%r = ptx.bfi %a, %b, %pos, %len {type = #ptx.type<b32>} : i32`
  }];
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, AnyTypeOf<[I32, I64]>:$b, I32:$c, I32:$d,
                   PTX_TypeAttr:$type);
  let results = (outs AnyTypeOf<[I32, I64]>:$res);
  let assemblyFormat = "$a `,` $b `,` $c `,` $d attr-dict `:` type($res)";
}

def PTX_PrmtOp : PTX_Op<"prmt", [Pure]> {
  let summary = "PTX `prmt`: byte permute of a register pair";
  let description = [{
    Picks four of the eight bytes of `{b, a}` by the selector `c` (generic
    form: four nibbles, bit 3 of each replicating the byte's sign) or by the
    two low bits of `c` and a `mode` (`.f4e .b4e .rc8 .ecl .ecr .rc16`).
    PTX ISA 9.7.9.7.
    Example: `%r = ptx.prmt %a, %b, %c {mode = #ptx.prmt<b4e>} : i32`
  }];
  let arguments = (ins I32:$a, I32:$b, I32:$c,
                   DefaultValuedAttr<PTX_PrmtModeAttr, "::zmlir::ptx::PrmtMode::None">:$mode);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res)";
}

def PTX_Lop3Op : PTX_Op<"lop3", [Pure]> {
  let summary = "PTX `lop3`: arbitrary three-input logic function";
  let description = [{
    Bit `i` of the result is bit `(a_i << 2) | (b_i << 1) | c_i` of `lut`
    (PTX: `F(0xF0, 0xCC, 0xAA)`). PTX ISA 9.7.8.6.
    Example: `%r = ptx.lop3 %a, %b, %c {lut = 150 : i32} : i32`
  }];
  let arguments = (ins I32:$a, I32:$b, I32:$c, I32Attr:$lut);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res)";
  let hasVerifier = 1;
}

def PTX_ShfOp : PTX_Op<"shf", [Pure]> {
  let summary = "PTX `shf`: funnel shift";
  let description = [{
    Shifts the 64-bit `{b, a}` left (`.l`, keeping the high word) or right
    (`.r`, keeping the low word) by `c`, clamped to 32 (`.clamp`) or taken
    modulo 32 (`.wrap`). `.s32` right shifts fill with b's sign.
    PTX ISA 9.7.8.7.
    Example: `%r = ptx.shf %a, %b, %c {dir = #ptx.dir<l>, mode = #ptx.clampmode<wrap>, type = #ptx.type<b32>} : i32`
  }];
  let arguments = (ins I32:$a, I32:$b, I32:$c, PTX_ShfDirAttr:$dir,
                   PTX_ClampModeAttr:$mode, PTX_TypeAttr:$type);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res)";
}

def PTX_Mul24Op : PTX_Op<"mul24", [Pure]> {
  let summary = "PTX `mul24`: multiply the low 24 bits";
  let description = [{
    The 48-bit product of the low 24 bits of `a` and `b` (sign-extended for
    `.s32`); `.lo` keeps bits 0..31, `.hi` bits 16..47. PTX ISA 9.7.1.5.
  }];
  let arguments = (ins I32:$a, I32:$b, PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_MulModeAttr, "::zmlir::ptx::MulMode::None">:$mode);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($res)";
}

def PTX_Mad24Op : PTX_Op<"mad24", [Pure]> {
  let summary = "PTX `mad24`: mul24 plus c";
  let description = [{
    `mul24` then a 32-bit add of `c`; `.sat` (with `.hi.s32`) clamps the sum.
    PTX ISA 9.7.1.6.
  }];
  let arguments = (ins I32:$a, I32:$b, I32:$c, PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_MulModeAttr, "::zmlir::ptx::MulMode::None">:$mode,
                   UnitAttr:$sat);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res)";
}

def PTX_SadOp : PTX_Op<"sad", [Pure, AllTypesMatch<["a", "b", "c", "res"]>]> {
  let summary = "PTX `sad`: sum of absolute difference, d = c + |a - b|";
  let description = "PTX ISA 9.7.1.9.";
  let arguments = (ins AnyTypeOf<[I16, I32, I64]>:$a, AnyTypeOf<[I16, I32, I64]>:$b,
                   AnyTypeOf<[I16, I32, I64]>:$c, PTX_TypeAttr:$type);
  let results = (outs AnyTypeOf<[I16, I32, I64]>:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res)";
}

def PTX_Dp4aOp : PTX_Op<"dp4a", [Pure]> {
  let summary = "PTX `dp4a`: four-way byte dot product accumulate";
  let description = [{
    `d = c + sum(a.byte[i] * b.byte[i])`, bytes signed or unsigned by
    `a_type`/`b_type`; wraps in 32 bits. PTX ISA 9.7.1.23.
  }];
  let arguments = (ins I32:$a, I32:$b, I32:$c, PTX_TypeAttr:$a_type, PTX_TypeAttr:$b_type);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res)";
}

def PTX_Dp2aOp : PTX_Op<"dp2a", [Pure]> {
  let summary = "PTX `dp2a`: two-way 16x8-bit dot product accumulate";
  let description = [{
    `d = c + a.half[0] * b.byte[k] + a.half[1] * b.byte[k+1]` with `k = 0`
    (`.lo`) or `k = 2` (`.hi`). PTX ISA 9.7.1.24.
  }];
  let arguments = (ins I32:$a, I32:$b, I32:$c, PTX_TypeAttr:$a_type, PTX_TypeAttr:$b_type,
                   UnitAttr:$hi);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res)";
}

def PTX_SzextOp : PTX_Op<"szext", [Pure]> {
  let summary = "PTX `szext`: sign- or zero-extend the low N bits";
  let description = [{
    Extends the low `N = b` bits of `a` (`.wrap`: `b mod 32`; `.clamp`:
    values of 32 and up keep `a`); `N = 0` gives 0. PTX ISA 9.7.1.26.
  }];
  let arguments = (ins I32:$a, I32:$b, PTX_ClampModeAttr:$mode, PTX_TypeAttr:$type);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($res)";
}

def PTX_BmskOp : PTX_Op<"bmsk", [Pure]> {
  let summary = "PTX `bmsk`: bit mask of width b starting at bit a";
  let description = "PTX ISA 9.7.1.25. `.clamp` or `.wrap` out-of-range positions and widths.";
  let arguments = (ins I32:$a, I32:$b, PTX_ClampModeAttr:$mode);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($res)";
}

def PTX_FnsOp : PTX_Op<"fns", [Pure]> {
  let summary = "PTX `fns`: position of the n-th set bit of mask from base";
  let description = [{
    Scans `mask` from bit `base` up (`offset` > 0) or down (`offset` < 0) for
    the |offset|-th set bit; with `offset` = 0, `base` itself if it is set.
    0xffffffff when there is none. `base` must be at most 31 (undefined
    otherwise). PTX ISA 9.7.1.26.

    ```mlir
    %d = ptx.fns %mask, %base, %offset : i32
    ```
  }];
  let arguments = (ins I32:$mask, I32:$base, I32:$offset);
  let results = (outs I32:$res);
  let assemblyFormat = "$mask `,` $base `,` $offset attr-dict `:` type($res)";
}

//===----------------------------------------------------------------------===//
// Extended-precision arithmetic (PTX ISA 9.7.2)
//===----------------------------------------------------------------------===//

// The condition code register CC.CF is an explicit i1 SSA value: the
// importer keeps it as a hidden predicate register, so `add.cc` defines it
// (`carry_out`) and `addc` uses it (`carry_in`) like any other register.
class PTX_CarryOp<string mnemonic, string what, string isaSection,
                  list<string> sameTyped = ["a", "b", "res"]>
    : PTX_Op<mnemonic, [Pure, AllTypesMatch<sameTyped>]> {
  let summary = "PTX `" # mnemonic # "`: " # what;
  let description = [{
    Without `carry_in` this is the `.cc` form that only sets the flag;
    with it, the `c` form (addc/subc/madc) that consumes CC.CF. `carry_out`
    is the new CC.CF (a borrow for subtraction); the importer drops it when
    the instruction has no `.cc`. PTX ISA section }] # isaSection # [{.
  }];
}

def PTX_AddCcOp : PTX_CarryOp<"add_cc", "add with carry-in/out", "9.7.2.1 - 9.7.2.2"> {
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, AnyTypeOf<[I32, I64]>:$b,
                   Optional<I1>:$carry_in, PTX_TypeAttr:$type);
  let results = (outs AnyTypeOf<[I32, I64]>:$res, I1:$carry_out);
  let assemblyFormat = "$a `,` $b (`,` $carry_in^)? attr-dict `:` type($res)";
}

def PTX_SubCcOp : PTX_CarryOp<"sub_cc", "subtract with borrow-in/out", "9.7.2.3 - 9.7.2.4"> {
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, AnyTypeOf<[I32, I64]>:$b,
                   Optional<I1>:$carry_in, PTX_TypeAttr:$type);
  let results = (outs AnyTypeOf<[I32, I64]>:$res, I1:$carry_out);
  let assemblyFormat = "$a `,` $b (`,` $carry_in^)? attr-dict `:` type($res)";
}

def PTX_MadCcOp : PTX_CarryOp<"mad_cc", "multiply-add with carry-in/out", "9.7.2.5 - 9.7.2.6",
                              ["a", "b", "c", "res"]> {
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, AnyTypeOf<[I32, I64]>:$b,
                   AnyTypeOf<[I32, I64]>:$c, Optional<I1>:$carry_in, PTX_TypeAttr:$type,
                   PTX_MulModeAttr:$mode);
  let results = (outs AnyTypeOf<[I32, I64]>:$res, I1:$carry_out);
  let assemblyFormat = "$a `,` $b `,` $c (`,` $carry_in^)? attr-dict `:` type($res)";
}

#endif // ZMLIR_DIALECT_PTX_BITSOPS
