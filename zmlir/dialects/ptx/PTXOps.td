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
  let arguments = !con((ins PTX_Reg:$a, PTX_Reg:$b), modifiers);
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
  let description = "PTX ISA 9.7.3.5.";
  let arguments = !con((ins PTX_Reg:$a, PTX_Reg:$b, PTX_Reg:$c), modifiers);
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

//===----------------------------------------------------------------------===//
// Module-scope variables (PTX ISA 5.1, 5.4)
//===----------------------------------------------------------------------===//

def PTX_VarOp : PTX_Op<"var", [Symbol]> {
  let summary = "a variable in .global, .const or .shared";
  let description = [{
    `count` elements of `type`; `count = 0` is an unsized `.extern` array
    (dynamic shared memory). `init` holds the initializer bytes.
    Example: `ptx.var @tile {space = #ptx.space<shared>, type = #ptx.type<b8>, count = 1024, align = 4}`
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, PTX_StateSpaceAttr:$space,
                   PTX_TypeAttr:$type, DefaultValuedAttr<I64Attr, "1">:$count,
                   DefaultValuedAttr<I64Attr, "0">:$align,
                   OptionalAttr<StrAttr>:$linkage,
                   OptionalAttr<DenseI8ArrayAttr>:$init);
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

def PTX_RetOp : PTX_Op<"ret", [Terminator, ReturnLike]> {
  let summary = "PTX `ret`";
  let description = "Return from a function or kernel. PTX ISA 9.7.10.5.";
  let arguments = (ins UnitAttr:$uni);
  let assemblyFormat = "attr-dict";
}

def PTX_ExitOp : PTX_Op<"exit", [Terminator]> {
  let summary = "PTX `exit`";
  let description = "Terminates the thread. PTX ISA 9.7.10.6.";
  let assemblyFormat = "attr-dict";
}

#endif // ZMLIR_DIALECT_PTX_OPS
