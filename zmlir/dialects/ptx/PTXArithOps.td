//===- PTXArithOps.td - Integer and float arithmetic -------*- tablegen -*-===//
//
// Arithmetic (add sub mul mad fma div rem min max neg abs copysign), the
// logic ops (and or xor not), comparisons and selection (set setp selp
// slct). Lowered by zmlir/lowering/Arith.cpp (float forms: FloatArith.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_ARITHOPS
#define ZMLIR_DIALECT_PTX_ARITHOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Integer and float arithmetic (PTX ISA 9.7.1 - 9.7.4)
//===----------------------------------------------------------------------===//

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

#endif // ZMLIR_DIALECT_PTX_ARITHOPS
