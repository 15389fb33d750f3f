//===- PTXOpBase.td - Shared pieces of the PTX ops ---------*- tablegen -*-===//
//
// The register and address type constraints and the op classes that more
// than one instruction family's file uses. `PTX_Op` itself is defined with
// the dialect in PTXDialect.td.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_OPBASE
#define ZMLIR_DIALECT_PTX_OPBASE

include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "zmlir/dialects/ptx/PTXDialect.td"
include "zmlir/dialects/ptx/PTXEnums.td"

def PTX_Reg : AnyTypeOf<[I1, I8, I16, I32, I64, F16, BF16, F32, F64]>;
def PTX_Address : AnyTypeOf<[I32, I64]>;

// Arithmetic modifiers shared by the whole family (PTXArithOps.td) and the
// shifts (PTXBitsOps.td).
class PTX_ArithOp<string mnemonic, list<Trait> traits = []>
    : PTX_Op<mnemonic, !listconcat([Pure], traits)> {
  dag modifiers = (ins PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_RoundingAttr,
                                     "::zmlir::ptx::Rounding::None">:$rnd,
                   UnitAttr:$ftz, UnitAttr:$sat);
}

#endif // ZMLIR_DIALECT_PTX_OPBASE
