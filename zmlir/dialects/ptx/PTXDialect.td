//===- PTXDialect.td - The ptx dialect ---------------------*- tablegen -*-===//
//
// A faithful 1:1 image of PTX: one op per instruction, every modifier an
// attribute. Registers are SSA values of builtin types (i1 for .pred, iN for
// .bN/.uN/.sN, f16/bf16/f32/f64 for float registers); the instruction type
// modifier (.s32, .u64, .f32, ...) is the `type` attribute.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_DIALECT
#define ZMLIR_DIALECT_PTX_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def PTX_Dialect : Dialect {
  let name = "ptx";
  let cppNamespace = "::zmlir::ptx";
  let summary = "NVIDIA PTX as written, before any lowering";
  let description = [{
    Each op mirrors one PTX instruction (PTX ISA 9.0) with its modifiers kept
    as enum or unit attributes, so the module prints back what the PTX said.
    Module directives are attributes of the enclosing `builtin.module`
    (`ptx.version`, `ptx.target`, `ptx.address_size`); functions are
    `func.func` ops marked `ptx.entry` (kernels) or plain (`.func`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::ub::UBDialect"];
}

class PTX_Op<string mnemonic, list<Trait> traits = []>
    : Op<PTX_Dialect, mnemonic, traits>;

#endif // ZMLIR_DIALECT_PTX_DIALECT
