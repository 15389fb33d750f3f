//===- PTXAtomicsOps.td - atom and red ---------------------*- tablegen -*-===//
//
// Atomic read-modify-write and reductions. Lowered by
// zmlir/lowering/Atomics.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_ATOMICSOPS
#define ZMLIR_DIALECT_PTX_ATOMICSOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Atomics (PTX ISA 9.7.13.5 - 9.7.13.6)
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

#endif // ZMLIR_DIALECT_PTX_ATOMICSOPS
