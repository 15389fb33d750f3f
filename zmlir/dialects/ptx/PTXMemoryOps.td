//===- PTXMemoryOps.td - Loads, stores, variables ----------*- tablegen -*-===//
//
// Addresses, ld/st and their .param forms, prefetch, isspacep, and
// module-scope and local variables. Lowered by zmlir/lowering/Memory.cpp
// (variables: PTXToStd.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_MEMORYOPS
#define ZMLIR_DIALECT_PTX_MEMORYOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Addresses, loads and stores (PTX ISA 9.7.9)
//===----------------------------------------------------------------------===//

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

def PTX_ParamAddrOp : PTX_Op<"param_addr", [Pure]> {
  let summary = "the address of a parameter (`mov.u64 %rd, param`)";
  let description = [{
    The `.param` state space address of a function's parameter (the block
    argument), which `ptx.ld` from `.param` reads through: nvcc takes it to
    index a big by-value struct. It is the address of the thread's copy of
    the parameter in `.local`. PTX ISA 9.7.9.1 (mov), 5.1.6.1.
    Example: `%a = ptx.param_addr %arg0 : !llvm.array<400 x i8> -> i64`
  }];
  let arguments = (ins AnyType:$param);
  let results = (outs PTX_Address:$res);
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

#endif // ZMLIR_DIALECT_PTX_MEMORYOPS
