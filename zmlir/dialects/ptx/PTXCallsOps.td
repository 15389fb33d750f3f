//===- PTXCallsOps.td - call, func_addr, call_indirect -----*- tablegen -*-===//
//
// Direct and indirect calls. Lowered by zmlir/lowering/Calls.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_CALLSOPS
#define ZMLIR_DIALECT_PTX_CALLSOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Calls (PTX ISA 9.7.10.4)
//===----------------------------------------------------------------------===//

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

#endif // ZMLIR_DIALECT_PTX_CALLSOPS
