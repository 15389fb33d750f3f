//===- PTXFloatOps.td - Float special functions ------------*- tablegen -*-===//
//
// rcp sqrt rsqrt sin cos lg2 ex2 tanh and testp. Lowered by
// zmlir/lowering/FloatFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_FLOATOPS
#define ZMLIR_DIALECT_PTX_FLOATOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Float special functions and classification (PTX ISA 9.7.3)
//===----------------------------------------------------------------------===//

class PTX_FloatUnaryOp<string mnemonic, string what, string isaSection>
    : PTX_Op<mnemonic, [Pure, AllTypesMatch<["a", "res"]>]> {
  let summary = "PTX `" # mnemonic # "`: " # what;
  let description = [{
    `.approx` forms are within NVIDIA's documented bound for the op; `.rn`
    (and the other rounding modes) are correctly rounded. A packed `.f16x2`
    or `.bf16x2` operand is its `i32` register, two lanes, low half first.
    Example: `%r = ptx.}] # mnemonic # [{ %a {precision = #ptx.precision<approx>, ftz, type = #ptx.type<f32>} : f32`.
    PTX ISA section }] # isaSection # [{.
  }];
  let arguments = (ins AnyTypeOf<[F16, BF16, F32, F64, I32]>:$a, PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_RoundingAttr, "::zmlir::ptx::Rounding::None">:$rnd,
                   DefaultValuedAttr<PTX_PrecisionAttr, "::zmlir::ptx::Precision::None">:$precision,
                   UnitAttr:$ftz);
  let results = (outs AnyTypeOf<[F16, BF16, F32, F64, I32]>:$res);
  let assemblyFormat = "$a attr-dict `:` type($res)";
  let hasVerifier = 1;
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

#endif // ZMLIR_DIALECT_PTX_FLOATOPS
