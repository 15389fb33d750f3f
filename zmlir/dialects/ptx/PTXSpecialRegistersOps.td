//===- PTXSpecialRegistersOps.td - sreg, inst --------------*- tablegen -*-===//
//
// Reads of special registers, and instructions kept without a dedicated op
// (ptx.inst). Lowered by zmlir/lowering/SpecialRegisters.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_SPECIALREGISTERSOPS
#define ZMLIR_DIALECT_PTX_SPECIALREGISTERSOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Special registers (PTX ISA 10)
//===----------------------------------------------------------------------===//

def PTX_SregOp : PTX_Op<"sreg"> {
  let summary = "PTX `mov` from a special register (%tid.x, %laneid, ...)";
  let description = [{
    Reads a special register (`%is_explicit_cluster` is a predicate). Not
    `Pure`: %clock and friends change.
    PTX ISA 10. Example: `%t = ptx.sreg <tid.x> : i32`
  }];
  let arguments = (ins PTX_SpecialRegAttr:$reg);
  let results = (outs AnyTypeOf<[I1, I32, I64]>:$res);
  let assemblyFormat = "$reg attr-dict `:` type($res)";
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

#endif // ZMLIR_DIALECT_PTX_SPECIALREGISTERSOPS
