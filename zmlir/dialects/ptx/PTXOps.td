//===- PTXOps.td - PTX instructions as ops -----------------*- tablegen -*-===//
//
// One op per PTX instruction. Modifiers are attributes; defaults are elided
// when printing. Links point at the PTX ISA 9.0 section of each instruction.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_OPS
#define ZMLIR_DIALECT_PTX_OPS

include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "zmlir/dialects/ptx/PTXDialect.td"
include "zmlir/dialects/ptx/PTXEnums.td"

def PTX_Reg : AnyTypeOf<[I1, I8, I16, I32, I64, F16, BF16, F32, F64]>;
def PTX_Address : AnyTypeOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Integer and float arithmetic (PTX ISA 9.7.1 - 9.7.4)
//===----------------------------------------------------------------------===//

// Arithmetic modifiers shared by the whole family.
class PTX_ArithOp<string mnemonic, list<Trait> traits = []>
    : PTX_Op<mnemonic, !listconcat([Pure], traits)> {
  dag modifiers = (ins PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_RoundingAttr,
                                     "::zmlir::ptx::Rounding::None">:$rnd,
                   UnitAttr:$ftz, UnitAttr:$sat);
}

class PTX_BinaryOp<string mnemonic, string isaSection>
    : PTX_ArithOp<mnemonic, [AllTypesMatch<["a", "b", "res"]>]> {
  let summary = "PTX `" # mnemonic # "`";
  let description = [{
    `d = a } # mnemonic # [{ b` with the instruction's type and modifiers.
    See PTX ISA section }] # isaSection # [{.
  }];
  // `xorsign`: min/max `.xorsign.abs` (|a| vs |b|, sign a ^ b; f16/bf16).
  let arguments = !con((ins PTX_Reg:$a, PTX_Reg:$b), modifiers,
                       (ins UnitAttr:$relu, UnitAttr:$nan, UnitAttr:$xorsign));
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($res)";
}

def PTX_AddOp : PTX_BinaryOp<"add", "9.7.1.1 / 9.7.3.1">;
def PTX_SubOp : PTX_BinaryOp<"sub", "9.7.1.2 / 9.7.3.2">;
def PTX_MinOp : PTX_BinaryOp<"min", "9.7.1.10 / 9.7.3.10">;
def PTX_MaxOp : PTX_BinaryOp<"max", "9.7.1.11 / 9.7.3.11">;
def PTX_RemOp : PTX_BinaryOp<"rem", "9.7.1.8">;
def PTX_AndOp : PTX_BinaryOp<"and", "9.7.8.1">;
def PTX_OrOp : PTX_BinaryOp<"or", "9.7.8.2">;
def PTX_XorOp : PTX_BinaryOp<"xor", "9.7.8.3">;
def PTX_CopysignOp : PTX_BinaryOp<"copysign", "9.7.3.4 (d = |b| with the sign of a)">;

def PTX_DivOp : PTX_ArithOp<"div", [AllTypesMatch<["a", "b", "res"]>]> {
  let summary = "PTX `div`";
  let description = [{
    Integer or float division; float division carries `.approx`, `.full` or
    a rounding mode. PTX ISA 9.7.1.7 / 9.7.3.8.
    Example: `%q = ptx.div %a, %b {type = #ptx.type<f32>, rnd = #ptx.rnd<rn>} : f32`
  }];
  let arguments = !con((ins PTX_Reg:$a, PTX_Reg:$b), modifiers,
      (ins DefaultValuedAttr<PTX_PrecisionAttr,
                             "::zmlir::ptx::Precision::None">:$precision));
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($res)";
}

def PTX_MulOp : PTX_ArithOp<"mul", [AllTypesMatch<["a", "b"]>]> {
  let summary = "PTX `mul` (.lo/.hi/.wide for integers)";
  let description = [{
    `mul.wide` produces a result twice the operand width. PTX ISA 9.7.1.3.
    Example: `%d = ptx.mul %a, %b {type = #ptx.type<s32>, mode = #ptx.mode<wide>} : i32 -> i64`
  }];
  let arguments = !con((ins PTX_Reg:$a, PTX_Reg:$b), modifiers,
      (ins DefaultValuedAttr<PTX_MulModeAttr, "::zmlir::ptx::MulMode::None">:$mode));
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($a) `->` type($res)";
  let hasVerifier = 1;
}

def PTX_MadOp : PTX_ArithOp<"mad", [AllTypesMatch<["a", "b"]>,
                                    AllTypesMatch<["c", "res"]>]> {
  let summary = "PTX `mad`: a * b + c";
  let description = [{
    `mad.wide` adds a double-width `c`; float `mad` with a rounding mode is a
    fused multiply-add. PTX ISA 9.7.1.4 / 9.7.3.6.
  }];
  let arguments = !con((ins PTX_Reg:$a, PTX_Reg:$b, PTX_Reg:$c), modifiers,
      (ins DefaultValuedAttr<PTX_MulModeAttr, "::zmlir::ptx::MulMode::None">:$mode));
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($a) `->` type($res)";
  let hasVerifier = 1;
}

def PTX_FmaOp : PTX_ArithOp<"fma", [AllTypesMatch<["a", "b", "c", "res"]>]> {
  let summary = "PTX `fma`: fused a * b + c";
  let description = "PTX ISA 9.7.3.5 / 9.7.4.5 (`.relu` on f16/bf16).";
  let arguments = !con((ins PTX_Reg:$a, PTX_Reg:$b, PTX_Reg:$c), modifiers,
                       (ins UnitAttr:$relu));
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res)";
}

class PTX_UnaryOp<string mnemonic, string isaSection>
    : PTX_ArithOp<mnemonic, [AllTypesMatch<["a", "res"]>]> {
  let summary = "PTX `" # mnemonic # "`";
  let description = "PTX ISA section " # isaSection # ".";
  let arguments = !con((ins PTX_Reg:$a), modifiers);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$a attr-dict `:` type($res)";
}

def PTX_NegOp : PTX_UnaryOp<"neg", "9.7.1.9 / 9.7.3.9">;
def PTX_AbsOp : PTX_UnaryOp<"abs", "9.7.1.12 / 9.7.3.12">;
def PTX_NotOp : PTX_UnaryOp<"not", "9.7.8.4">;

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

//===----------------------------------------------------------------------===//
// Float special functions and classification (PTX ISA 9.7.3)
//===----------------------------------------------------------------------===//

class PTX_FloatUnaryOp<string mnemonic, string what, string isaSection>
    : PTX_Op<mnemonic, [Pure, AllTypesMatch<["a", "res"]>]> {
  let summary = "PTX `" # mnemonic # "`: " # what;
  let description = [{
    `.approx` forms are within NVIDIA's documented bound for the op; `.rn`
    (and the other rounding modes) are correctly rounded.
    Example: `%r = ptx.}] # mnemonic # [{ %a {precision = #ptx.precision<approx>, ftz, type = #ptx.type<f32>} : f32`.
    PTX ISA section }] # isaSection # [{.
  }];
  let arguments = (ins AnyTypeOf<[F16, BF16, F32, F64]>:$a, PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_RoundingAttr, "::zmlir::ptx::Rounding::None">:$rnd,
                   DefaultValuedAttr<PTX_PrecisionAttr, "::zmlir::ptx::Precision::None">:$precision,
                   UnitAttr:$ftz);
  let results = (outs AnyTypeOf<[F16, BF16, F32, F64]>:$res);
  let assemblyFormat = "$a attr-dict `:` type($res)";
}

def PTX_RcpOp : PTX_FloatUnaryOp<"rcp", "reciprocal", "9.7.3.13 / 9.7.3.14">;
def PTX_SqrtOp : PTX_FloatUnaryOp<"sqrt", "square root", "9.7.3.15">;
def PTX_RsqrtOp : PTX_FloatUnaryOp<"rsqrt", "reciprocal square root", "9.7.3.16 / 9.7.3.17">;
def PTX_SinOp : PTX_FloatUnaryOp<"sin", "sine (.approx)", "9.7.3.18">;
def PTX_CosOp : PTX_FloatUnaryOp<"cos", "cosine (.approx)", "9.7.3.19">;
def PTX_Lg2Op : PTX_FloatUnaryOp<"lg2", "base-2 logarithm (.approx)", "9.7.3.20">;
def PTX_Ex2Op : PTX_FloatUnaryOp<"ex2", "base-2 exponential (.approx)", "9.7.3.21">;
def PTX_TanhOp : PTX_FloatUnaryOp<"tanh", "hyperbolic tangent (.approx)", "9.7.3.22">;

def PTX_TestpOp : PTX_Op<"testp", [Pure]> {
  let summary = "PTX `testp`: test a float's class";
  let description = [{
    `.finite .infinite .number .notanumber .normal .subnormal`; zero is
    neither normal nor subnormal. PTX ISA 9.7.3.3.
    Example: `%p = ptx.testp %a {kind = #ptx.testp<subnormal>, type = #ptx.type<f32>} : f32`
  }];
  let arguments = (ins AnyTypeOf<[F32, F64]>:$a, PTX_TestpClassAttr:$kind, PTX_TypeAttr:$type);
  let results = (outs I1:$res);
  let assemblyFormat = "$a attr-dict `:` type($a)";
}

//===----------------------------------------------------------------------===//
// set and slct (PTX ISA 9.7.4.1, 9.7.4.5)
//===----------------------------------------------------------------------===//

def PTX_SetOp : PTX_Op<"set", [Pure, AllTypesMatch<["a", "b"]>]> {
  let summary = "PTX `set`: compare and write a boolean as an integer or float";
  let description = [{
    `set.CmpOp{.BoolOp}.dtype.stype d, a, b{, {!}c}`: true is `0xffffffff`
    for integer `type` and `1.0` for `.f32`, false is 0. PTX ISA 9.7.4.1.
    Example: `%d = ptx.set %a, %b {cmp = #ptx.cmp<lt>, type = #ptx.type<u32>, src_type = #ptx.type<f32>} : f32 -> i32`
  }];
  let arguments = (ins PTX_Reg:$a, PTX_Reg:$b, Optional<I1>:$c, PTX_CmpAttr:$cmp,
                   PTX_TypeAttr:$type, PTX_TypeAttr:$src_type,
                   DefaultValuedAttr<PTX_BoolOpAttr, "::zmlir::ptx::BoolOp::None">:$boolop,
                   UnitAttr:$negate_c, UnitAttr:$ftz);
  let results = (outs AnyTypeOf<[I32, F32]>:$res);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` type($a) `->` type($res)";
  let hasVerifier = 1;
}

def PTX_SlctOp : PTX_Op<"slct", [Pure, AllTypesMatch<["a", "b", "res"]>]> {
  let summary = "PTX `slct`: d = (c >= 0) ? a : b";
  let description = [{
    `c` is `.s32` or `.f32` (`c_type`); `-0.0` counts as `>= 0`.
    PTX ISA 9.7.4.5.
  }];
  let arguments = (ins PTX_Reg:$a, PTX_Reg:$b, AnyTypeOf<[I32, F32]>:$c,
                   PTX_TypeAttr:$type, PTX_TypeAttr:$c_type, UnitAttr:$ftz);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($res) `,` type($c)";
}

//===----------------------------------------------------------------------===//
// Comparison and selection (PTX ISA 9.7.4)
//===----------------------------------------------------------------------===//

def PTX_SetpOp : PTX_Op<"setp", [Pure, AllTypesMatch<["a", "b"]>]> {
  let summary = "PTX `setp`: compare and set predicates";
  let description = [{
    Produces `p` and its complement `q` (the `%p|%q` form), each combined with
    the optional predicate `c` by `boolop`; `negate_c` is a `!c` operand.
    PTX ISA 9.7.4.2.
    Example: `%p, %q = ptx.setp %a, %b {cmp = #ptx.cmp<lt>, type = #ptx.type<s32>} : i32`
  }];
  let arguments = (ins PTX_Reg:$a, PTX_Reg:$b, Optional<I1>:$c,
                   PTX_CmpAttr:$cmp, PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_BoolOpAttr, "::zmlir::ptx::BoolOp::None">:$boolop,
                   UnitAttr:$negate_c, UnitAttr:$ftz);
  let results = (outs I1:$p, I1:$q);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` type($a)";
  let hasVerifier = 1;
}

def PTX_SelpOp : PTX_Op<"selp", [Pure, AllTypesMatch<["a", "b", "res"]>]> {
  let summary = "PTX `selp`: d = p ? a : b";
  let description = "PTX ISA 9.7.4.4.";
  let arguments = (ins PTX_Reg:$a, PTX_Reg:$b, I1:$p, PTX_TypeAttr:$type);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$a `,` $b `,` $p attr-dict `:` type($res)";
}

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

def PTX_SregOp : PTX_Op<"sreg"> {
  let summary = "PTX `mov` from a special register (%tid.x, %laneid, ...)";
  let description = [{
    Reads a special register. Not `Pure`: %clock and friends change.
    PTX ISA 10. Example: `%t = ptx.sreg <tid.x> : i32`
  }];
  let arguments = (ins PTX_SpecialRegAttr:$reg);
  let results = (outs AnyTypeOf<[I32, I64]>:$res);
  let assemblyFormat = "$reg attr-dict `:` type($res)";
}

def PTX_AddrOfOp : PTX_Op<"addr_of", [Pure]> {
  let summary = "the address of a variable (`mov.u64 %rd, sym`)";
  let description = [{
    The address of a `ptx.var` in its own state space: a generic or global
    address for `.global`/`.const`, an offset in the block's shared window for
    `.shared`. PTX ISA 9.7.9.1.
  }];
  let arguments = (ins FlatSymbolRefAttr:$sym);
  let results = (outs PTX_Address:$res);
  let assemblyFormat = "$sym attr-dict `:` type($res)";
}

def PTX_CvtaOp : PTX_Op<"cvta", [Pure]> {
  let summary = "PTX `cvta`: convert between a state space and generic addresses";
  let description = [{
    `cvta.global` maps a global address to generic, `cvta.to.global` back.
    PTX ISA 9.7.9.17.
  }];
  let arguments = (ins PTX_Address:$src, PTX_StateSpaceAttr:$space, UnitAttr:$to,
                   PTX_TypeAttr:$type);
  let results = (outs PTX_Address:$res);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($res)";
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

def PTX_LocalVarOp : PTX_Op<"local_var"> {
  let summary = "a function's `.local` variable (`__local_depot`)";
  let description = [{
    `size` bytes of per-thread memory aligned to `align`; the result is its
    address in the `.local` state space (what `mov.u64 %r, __local_depot0`
    gives). PTX ISA 5.1.5.
    Example: `%d = ptx.local_var {size = 40, align = 8} : i64`
  }];
  let arguments = (ins I64Attr:$size, DefaultValuedAttr<I64Attr, "1">:$align,
                   OptionalAttr<StrAttr>:$name);
  let results = (outs PTX_Address:$res);
  let assemblyFormat = "attr-dict `:` type($res)";
}

def PTX_LdParamOp : PTX_Op<"ld_param", [Pure]> {
  let summary = "PTX `ld.param` from a function parameter";
  let description = [{
    Reads `size(type)` bytes at `offset` of a `.param` argument (the block
    argument of the function). PTX ISA 9.7.9.8.
  }];
  let arguments = (ins AnyType:$param, PTX_TypeAttr:$type,
                   DefaultValuedAttr<I64Attr, "0">:$offset);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "$param attr-dict `:` type($param) `->` type($res)";
}

// Memory operand modifiers shared by ld and st.
class PTX_MemOp<string mnemonic, list<Trait> traits = []>
    : PTX_Op<mnemonic, traits> {
  dag memModifiers = (ins
      DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space,
      PTX_TypeAttr:$type,
      DefaultValuedAttr<I64Attr, "0">:$offset,
      DefaultValuedAttr<I64Attr, "1">:$vec,
      DefaultValuedAttr<PTX_CacheOpAttr, "::zmlir::ptx::CacheOp::None">:$cache,
      DefaultValuedAttr<PTX_SemanticsAttr, "::zmlir::ptx::Semantics::None">:$sem,
      DefaultValuedAttr<PTX_ScopeAttr, "::zmlir::ptx::Scope::None">:$scope,
      UnitAttr:$nc);
}

def PTX_StParamOp : PTX_Op<"st_param", [Pure, AllTypesMatch<["param", "res"]>]> {
  let summary = "PTX `st.param` into an aggregate call or return parameter";
  let description = [{
    An aggregate `.param` (`.param .align 8 .b8 p[16]`) of a call or of a
    `.func`'s return is an SSA value of type `!llvm.array<N x i8>`, like an
    aggregate kernel parameter; `st.param.type [p+offset], value` gives the
    aggregate with the `size(type)` bytes at `offset` replaced by `value`,
    and `ptx.ld_param` reads it back. PTX ISA 9.7.9.10.
    Example: `%p1 = ptx.st_param %p0, %x {offset = 8 : i64, type = #ptx.type<f64>} : !llvm.array<16 x i8>, f64`
  }];
  let arguments = (ins AnyType:$param, PTX_Reg:$value, PTX_TypeAttr:$type,
                   DefaultValuedAttr<I64Attr, "0">:$offset);
  let results = (outs AnyType:$res);
  let assemblyFormat = "$param `,` $value attr-dict `:` type($param) `,` type($value)";
  let hasVerifier = 1;
}

def PTX_LdOp : PTX_MemOp<"ld"> {
  let summary = "PTX `ld`: load from a state space";
  let description = [{
    `ld{.weak,.volatile,.relaxed.scope,.acquire.scope}{.ss}{.cop}{.vec}.type`
    from `[addr+offset]`; `.v2`/`.v4` give 2 or 4 results. PTX ISA 9.7.9.8.
    Example: `%v = ptx.ld %a {space = #ptx.space<global>, type = #ptx.type<f32>} : i64 -> f32`
  }];
  let arguments = !con((ins PTX_Address:$addr), memModifiers);
  let results = (outs Variadic<PTX_Reg>:$results);
  let assemblyFormat = "$addr attr-dict `:` type($addr) `->` type($results)";
  let hasVerifier = 1;
}

def PTX_StOp : PTX_MemOp<"st"> {
  let summary = "PTX `st`: store to a state space";
  let description = "See `ptx.ld`. PTX ISA 9.7.9.10.";
  let arguments = !con((ins PTX_Address:$addr, Variadic<PTX_Reg>:$values), memModifiers);
  let assemblyFormat = "$addr `,` $values attr-dict `:` type($addr) `,` type($values)";
  let hasVerifier = 1;
}

def PTX_PrefetchOp : PTX_Op<"prefetch"> {
  let summary = "PTX `prefetch`/`prefetchu`: bring a line into a cache level";
  let description = [{
    `prefetch{.global,.local}.level [addr+offset]` with level `.L1`, `.L2`,
    `.L2::evict_last` or `.L2::evict_normal` (those two `.global` only);
    `uniform` is `prefetchu.L1` (generic addresses). No effect on results.
    PTX ISA 9.7.9.15.
    Example: `ptx.prefetch %a {space = #ptx.space<global>, level = #ptx.level<L2>} : i64`
  }];
  let arguments = (ins PTX_Address:$addr, DefaultValuedAttr<I64Attr, "0">:$offset,
                   DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space,
                   PTX_CacheLevelAttr:$level, UnitAttr:$uniform);
  let assemblyFormat = "$addr attr-dict `:` type($addr)";
  let hasVerifier = 1;
}

def PTX_IsspacepOp : PTX_Op<"isspacep", [Pure]> {
  let summary = "PTX `isspacep`: whether a generic address lies in a state space";
  let description = [{
    `isspacep.space p, a` is true iff the generic address `a` is in the
    window of `.global`, `.shared`, `.shared::cluster`, `.local`, `.const`
    or `.param`. PTX ISA 9.7.9.16.
    Example: `%p = ptx.isspacep %a {space = #ptx.space<shared>} : i64`
  }];
  let arguments = (ins PTX_Address:$addr, PTX_StateSpaceAttr:$space);
  let results = (outs I1:$res);
  let assemblyFormat = "$addr attr-dict `:` type($addr)";
}

//===----------------------------------------------------------------------===//
// Module-scope variables (PTX ISA 5.1, 5.4)
//===----------------------------------------------------------------------===//

def PTX_InitAddressAttr : AttrDef<PTX_Dialect, "InitAddress"> {
  let mnemonic = "init_addr";
  let summary = "a symbol's address stored in a variable's initializer";
  let description = [{
    The element at byte `offset` of the variable holds the address of
    `symbol` (a variable or function) plus `addend`: `sym`, `sym+4`,
    `generic(sym)+8` in a PTX initializer. `generic` marks `generic(sym)`,
    the generic address, rather than the address in the symbol's own state
    space. PTX ISA 5.4.4 (initializers).
    Example: `#ptx.init_addr<offset = 8, symbol = @table, addend = 8, generic = true>`
  }];
  let parameters = (ins "int64_t":$offset, "::mlir::FlatSymbolRefAttr":$symbol,
                    DefaultValuedParameter<"int64_t", "0">:$addend,
                    DefaultValuedParameter<"bool", "false">:$generic);
  let assemblyFormat = "`<` struct(params) `>`";
}

def PTX_VarOp : PTX_Op<"var", [Symbol]> {
  let summary = "a variable in .global, .const or .shared";
  let description = [{
    `count` elements of `type`; `count = 0` is an unsized `.extern` array
    (dynamic shared memory). `init` holds the initializer bytes; elements
    that hold addresses of symbols are zero there and listed in
    `init_addresses`. `managed` marks a `.global .attribute(.managed)`
    variable (CUDA's `__managed__`): the host reads and writes it too, at
    the address the driver gives.
    Example: `ptx.var @tile {space = #ptx.space<shared>, type = #ptx.type<b8>, count = 1024, align = 4}`
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, PTX_StateSpaceAttr:$space,
                   PTX_TypeAttr:$type, DefaultValuedAttr<I64Attr, "1">:$count,
                   DefaultValuedAttr<I64Attr, "0">:$align,
                   OptionalAttr<StrAttr>:$linkage, UnitAttr:$managed,
                   OptionalAttr<DenseI8ArrayAttr>:$init,
                   OptionalAttr<TypedArrayAttrBase<PTX_InitAddressAttr,
                                "addresses in an initializer">>:$init_addresses);
  let assemblyFormat = "$sym_name attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Size in bytes of one element of `type`.
    int64_t getElementSize();
  }];
}

//===----------------------------------------------------------------------===//
// Atomics, synchronisation and warp-level ops (PTX ISA 9.7.12, 9.7.13)
//===----------------------------------------------------------------------===//

def PTX_AtomOp : PTX_Op<"atom"> {
  let summary = "PTX `atom`: atomic read-modify-write";
  let description = [{
    `atom{.sem}{.scope}{.space}.op.type d, [a], b{, c}`; `c` only for `cas`.
    PTX ISA 9.7.13.5.
  }];
  let arguments = (ins PTX_Address:$addr, PTX_Reg:$b, Optional<PTX_Reg>:$c,
      PTX_AtomOpAttr:$op, PTX_TypeAttr:$type,
      DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space,
      DefaultValuedAttr<I64Attr, "0">:$offset,
      DefaultValuedAttr<PTX_SemanticsAttr, "::zmlir::ptx::Semantics::None">:$sem,
      DefaultValuedAttr<PTX_ScopeAttr, "::zmlir::ptx::Scope::None">:$scope);
  let results = (outs PTX_Reg:$res);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def PTX_RedOp : PTX_Op<"red"> {
  let summary = "PTX `red`: atomic reduction without a result";
  let description = [{
    `red{.sem}{.scope}{.space}.op.type [a], b`: `ptx.atom` without the old
    value. PTX ISA 9.7.13.6.
  }];
  let arguments = (ins PTX_Address:$addr, PTX_Reg:$b,
      PTX_AtomOpAttr:$op, PTX_TypeAttr:$type,
      DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space,
      DefaultValuedAttr<I64Attr, "0">:$offset,
      DefaultValuedAttr<PTX_SemanticsAttr, "::zmlir::ptx::Semantics::None">:$sem,
      DefaultValuedAttr<PTX_ScopeAttr, "::zmlir::ptx::Scope::None">:$scope);
  let assemblyFormat = "operands attr-dict `:` type(operands)";
  let hasVerifier = 1;
}

def PTX_FenceOp : PTX_Op<"fence"> {
  let summary = "PTX `fence.sc` / `fence.acq_rel` / `membar`";
  let description = [{
    A memory fence at `scope`; `membar.{cta,gl,sys}` is `fence.sc` at
    `cta`/`gpu`/`sys`. PTX ISA 9.7.13.4.
    Example: `ptx.fence {sem = #ptx.sem<acq_rel>, scope = #ptx.scope<gpu>}`
  }];
  let arguments = (ins PTX_SemanticsAttr:$sem, PTX_ScopeAttr:$scope);
  let assemblyFormat = "attr-dict";
}

def PTX_BarSyncOp : PTX_Op<"bar_sync"> {
  let summary = "PTX `bar.sync` / `barrier.sync`";
  let description = [{
    Waits at barrier `barrier` for `count` threads (all of the CTA when
    absent). `bar.sync` is `barrier.sync.aligned`. PTX ISA 9.7.13.1.
  }];
  let arguments = (ins I32:$barrier, Optional<I32>:$count, UnitAttr:$aligned);
  let assemblyFormat = "$barrier (`,` $count^)? attr-dict";
}

def PTX_ShflSyncOp : PTX_Op<"shfl_sync", [AllTypesMatch<["a", "res"]>]> {
  let summary = "PTX `shfl.sync`: exchange a register across the warp";
  let description = [{
    `shfl.sync.mode.b32 d|p, a, b, c, membermask`: `b` is the lane or offset,
    `c` packs the clamp value and segment mask. `p` is true when the source
    lane was in range. PTX ISA 9.7.9.6.
  }];
  let arguments = (ins I32:$a, I32:$b, I32:$c, I32:$membermask, PTX_ShflModeAttr:$mode);
  let results = (outs I32:$res, I1:$p);
  let assemblyFormat = "$a `,` $b `,` $c `,` $membermask attr-dict `:` type($a)";
}

def PTX_BarWarpSyncOp : PTX_Op<"bar_warp_sync"> {
  let summary = "PTX `bar.warp.sync`: converge the lanes in membermask";
  let description = "Also orders their memory accesses. PTX ISA 9.7.13.3.";
  let arguments = (ins I32:$membermask);
  let assemblyFormat = "$membermask attr-dict";
}

def PTX_VoteSyncOp : PTX_Op<"vote_sync"> {
  let summary = "PTX `vote.sync`: warp vote";
  let description = [{
    `.all .any .uni` give a predicate over the lanes in `membermask`,
    `.ballot.b32` the mask of lanes whose `pred` is true. PTX ISA 9.7.13.9.
    Example: `%b = ptx.vote_sync %p, %mask {mode = #ptx.vote<ballot>} : i32`
  }];
  let arguments = (ins I1:$pred, I32:$membermask, PTX_VoteModeAttr:$mode);
  let results = (outs AnyTypeOf<[I1, I32]>:$res);
  let assemblyFormat = "$pred `,` $membermask attr-dict `:` type($res)";
  let hasVerifier = 1;
}

def PTX_ActivemaskOp : PTX_Op<"activemask"> {
  let summary = "PTX `activemask.b32`: the mask of active lanes";
  let description = "PTX ISA 9.7.13.12.";
  let results = (outs I32:$res);
  let assemblyFormat = "attr-dict `:` type($res)";
}

def PTX_ReduxSyncOp : PTX_Op<"redux_sync"> {
  let summary = "PTX `redux.sync`: reduce a register over the lanes in membermask";
  let description = [{
    `.add .min .max` (`.u32/.s32`) and `.and .or .xor` (`.b32`).
    PTX ISA 9.7.13.11.
  }];
  let arguments = (ins I32:$a, I32:$membermask, PTX_AtomOpAttr:$op, PTX_TypeAttr:$type);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $membermask attr-dict `:` type($res)";
  let hasVerifier = 1;
}

def PTX_MatchSyncOp : PTX_Op<"match_sync"> {
  let summary = "PTX `match.sync`: lanes holding the same value";
  let description = [{
    `.any`: the mask of lanes in `membermask` whose `a` equals this lane's;
    `.all`: `membermask` when all of them hold one value (then `p` is true),
    else 0. PTX ISA 9.7.13.10.
  }];
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, I32:$membermask, PTX_MatchModeAttr:$mode);
  let results = (outs I32:$res, I1:$p);
  let assemblyFormat = "$a `,` $membermask attr-dict `:` type($a)";
}

def PTX_BarArriveOp : PTX_Op<"bar_arrive"> {
  let summary = "PTX `bar.arrive` / `barrier.arrive`";
  let description = [{
    Arrives at barrier `barrier`, expecting `count` threads, without waiting
    for them. `bar.arrive` is `barrier.arrive.aligned`. PTX ISA 9.7.13.1.
    Example: `ptx.bar_arrive %id, %count {aligned}`
  }];
  let arguments = (ins I32:$barrier, I32:$count, UnitAttr:$aligned);
  let assemblyFormat = "$barrier `,` $count attr-dict";
}

def PTX_BarRedOp : PTX_Op<"bar_red"> {
  let summary = "PTX `bar.red` / `barrier.red`: a barrier that reduces a predicate";
  let description = [{
    Waits like `bar.sync` and gives every thread the reduction of `pred`
    over the participating threads: `.popc.u32` the number of threads whose
    predicate is true, `.and.pred` / `.or.pred` the conjunction and
    disjunction. `bar.red` is `barrier.red.aligned`. PTX ISA 9.7.13.1.
    Example: `%n = ptx.bar_red %p, %id {mode = #ptx.barred<popc>} : i32`
  }];
  let arguments = (ins I1:$pred, I32:$barrier, Optional<I32>:$count,
                   PTX_BarRedModeAttr:$mode, UnitAttr:$aligned);
  let results = (outs AnyTypeOf<[I1, I32]>:$res);
  let assemblyFormat = "$pred `,` $barrier (`,` $count^)? attr-dict `:` type($res)";
  let hasVerifier = 1;
}

def PTX_ElectSyncOp : PTX_Op<"elect_sync"> {
  let summary = "PTX `elect.sync`: elect one leader lane of membermask";
  let description = [{
    `elect.sync d|p, membermask`: `d` is the lane id of the leader, the
    lowest active lane in `membermask`, and `p` is true in the leader only.
    PTX ISA 9.7.13.8 (sm_90).
    Example: `%d, %p = ptx.elect_sync %mask`
  }];
  let arguments = (ins I32:$membermask);
  let results = (outs I32:$res, I1:$p);
  let assemblyFormat = "$membermask attr-dict";
}

//===----------------------------------------------------------------------===//
// Instructions without a dedicated op yet
//===----------------------------------------------------------------------===//

def PTX_InstOp : PTX_Op<"inst"> {
  let summary = "a PTX instruction the dialect has no dedicated op for yet";
  let description = [{
    Keeps the instruction as written: `opcode`, its `modifiers` in order
    (without dots) and its operands. `operand_kinds` says what each PTX
    operand was (`r` register or immediate value, `a` address `[v+offset]`,
    `v<N>` vector of N values, `s` symbol, `_` sink) so the instruction can be
    printed back. Lowering rejects it with "unsupported instruction".
    Example: `%r = ptx.inst "brev" [".b32"] (%a) {operand_kinds = ["r", "r"]} : (i32) -> i32`
  }];
  let arguments = (ins StrAttr:$opcode, StrArrayAttr:$modifiers,
                   Variadic<AnyType>:$args, StrArrayAttr:$operand_kinds,
                   OptionalAttr<ArrayAttr>:$symbols);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $opcode $modifiers `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
}

//===----------------------------------------------------------------------===//
// Control flow (PTX ISA 9.7.10)
//===----------------------------------------------------------------------===//

def PTX_BraOp : PTX_Op<"bra", [Terminator, Pure,
    DeclareOpInterfaceMethods<BranchOpInterface, ["getSuccessorForOperands"]>]> {
  let summary = "PTX `bra`";
  let description = "Unconditional branch; `uni` marks `bra.uni`. PTX ISA 9.7.10.1.";
  let arguments = (ins Variadic<AnyType>:$destOperands, UnitAttr:$uni);
  let successors = (successor AnySuccessor:$dest);
  let assemblyFormat = "$dest (`(` $destOperands^ `:` type($destOperands) `)`)? attr-dict";
}

def PTX_CondBraOp : PTX_Op<"cond_bra", [Terminator, Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<BranchOpInterface, ["getSuccessorForOperands"]>]> {
  let summary = "PTX `@p bra` / `@!p bra`: a guarded branch";
  let description = [{
    Branches to `taken` when the guard holds (`pred`, or `!pred` with
    `negated`), else falls through to `fallthrough`. PTX ISA 9.7.10.1.
  }];
  let arguments = (ins I1:$pred, Variadic<AnyType>:$takenOperands,
                   Variadic<AnyType>:$fallthroughOperands,
                   UnitAttr:$negated, UnitAttr:$uni);
  let successors = (successor AnySuccessor:$taken, AnySuccessor:$fallthrough);
  let assemblyFormat = [{
    $pred `,` $taken (`(` $takenOperands^ `:` type($takenOperands) `)`)? `,`
    $fallthrough (`(` $fallthroughOperands^ `:` type($fallthroughOperands) `)`)?
    attr-dict
  }];
}

def PTX_CallOp : PTX_Op<"call"> {
  let summary = "PTX `call`: a direct call of a `.func`";
  let description = [{
    The `.param` arguments and return values are SSA values: the importer
    turns the caller's `st.param` into call operands and `ld.param` of the
    return parameters into uses of the results. PTX ISA 9.7.10.4.
    Example: `%r = ptx.call @f(%a) {uni} : (i32) -> i32`
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$args, UnitAttr:$uni);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$callee `(` $args `)` attr-dict `:` functional-type($args, $results)";
}

def PTX_FuncAddrOp : PTX_Op<"func_addr", [Pure]> {
  let summary = "the address of a `.func`: `mov.u64 %rd, f`";
  let description = [{
    A function's address as a 64-bit integer, the value `ptx.call_indirect`
    takes as its callee. PTX ISA 9.7.9.2 (mov), 9.7.10.4 (indirect call).
    Example: `%f = ptx.func_addr @f : i64`
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee);
  let results = (outs I64:$res);
  let assemblyFormat = "$callee attr-dict `:` type($res)";
}

def PTX_CallIndirectOp : PTX_Op<"call_indirect"> {
  let summary = "PTX `call` through a register with a `.callprototype`";
  let description = [{
    `call (rets), %fptr, (args), proto;`: calls the function whose
    `ptx.func_addr` is `callee`, with the prototype's parameter and return
    types. A callee that is no function of the module with that signature
    traps. PTX ISA 9.7.10.4.
    Example: `%r = ptx.call_indirect %f(%a) : (i64, i32) -> i32`
  }];
  let arguments = (ins I64:$callee, Variadic<AnyType>:$args, UnitAttr:$uni);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$callee `(` $args `)` attr-dict `:` functional-type(operands, $results)";
}

def PTX_RetOp : PTX_Op<"ret", [Terminator, ReturnLike]> {
  let summary = "PTX `ret`";
  let description = [{
    Return from a function or kernel; a `.func` returns the values its body
    stored to its return parameters. PTX ISA 9.7.10.5.
  }];
  let arguments = (ins Variadic<AnyType>:$values, UnitAttr:$uni);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def PTX_TrapOp : PTX_Op<"trap", [Terminator]> {
  let summary = "PTX `trap`";
  let description = [{
    Aborts the kernel: the launch fails. Also ends `brx.idx` chains, whose
    out-of-range index is undefined in PTX. PTX ISA 9.7.19.1.
  }];
  let assemblyFormat = "attr-dict";
}

def PTX_ExitOp : PTX_Op<"exit", [Terminator]> {
  let summary = "PTX `exit`";
  let description = "Terminates the thread. PTX ISA 9.7.10.6.";
  let assemblyFormat = "attr-dict";
}

#endif // ZMLIR_DIALECT_PTX_OPS
