//===- FloatRounding.h - Exact float rounding builders ----------*- C++ -*-===//
//
// Builders of float operations with PTX's exact rounding, shared by the
// families that round (Arith, Convert, FloatArith, FloatFunctions, Atomics);
// defined in FloatRounding.cpp. Internal to zmlir/lowering.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_FLOATROUNDING_H
#define ZMLIR_LOWERING_FLOATROUNDING_H

#include "zmlir/lowering/Patterns.h"

#include "mlir/IR/Builders.h"

#include <optional>
#include <utility>

namespace zmlir {

/// The bits of the float `f`, as an integer of its width.
mlir::Value bitsOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value f);
/// |x| by clearing the sign bit (llvm.fabs is not legal in every GPU
/// lowering: NVPTX's wants libdevice).
mlir::Value absFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// Whether `x` is finite (neither infinite nor NaN), as an i1.
mlir::Value isFiniteFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// |magnitude| with the sign bit of `sign`, in integer arithmetic (exact for
/// NaNs, and llvm.copysign is not legal for every GPU lowering).
mlir::Value copySign(mlir::OpBuilder &b, mlir::Location loc, mlir::Value magnitude,
                     mlir::Value sign);
/// Round half to even without llvm.roundeven (not legal for every GPU
/// lowering).
mlir::Value roundEven(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// f32 -> bf16 round to nearest even, in integer arithmetic; NaN gives
/// NVIDIA's canonical NaN 0x7fff. The result is the i16 bits.
mlir::Value f32ToBf16Bits(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// Narrows the float `x` to `target` with rounding `rnd` (.rn, .rz, .rm,
/// .rp).
mlir::Value narrowFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Type target,
                        ptx::Rounding rnd);
/// Converts the integer `x` to the float `target` with rounding `rnd`.
mlir::Value integerToFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, bool isSigned,
                           mlir::Type target, ptx::Rounding rnd);

/// The rounding error of `s = x + y` (TwoSum: exact in binary floating
/// point, with or without subnormals, unless `s` overflows; NaN then).
mlir::Value twoSumError(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y,
                        mlir::Value s);
/// Makes the round-to-nearest result `r` round-to-odd: when the exact value
/// lies above or below it (`rIsAbove`, `rIsBelow`) and r's last bit is even,
/// step one ulp towards the exact value.
mlir::Value roundToOdd(mlir::OpBuilder &b, mlir::Location loc, mlir::Value r, mlir::Value rIsAbove,
                       mlir::Value rIsBelow);
/// Whether `rnd` is a directed rounding: .rz, .rm or .rp.
bool isDirected(ptx::Rounding rnd);
/// The closed range [first, second] a float operand is known to lie in.
using FloatRange = std::optional<std::pair<double, double>>;
/// `name` (add, sub, mul, fma, div, rcp, sqrt) of f32/f64 operands with the
/// directed rounding `rnd`, bit-exact: the target's own instruction where it
/// has one, else built from round-to-nearest operations. `.ftz` flushes f32
/// operands and the result. `ranges`, where given, bounds each operand
/// (fma of f32 takes a shorter path where they fix the result's binade).
mlir::Value directedRounding(mlir::OpBuilder &b, mlir::Location loc, const PTXLoweringState &state,
                             llvm::StringRef name, llvm::SmallVector<mlir::Value> x,
                             ptx::Rounding rnd, bool ftz, llvm::ArrayRef<FloatRange> ranges = {});

} // namespace zmlir

#endif // ZMLIR_LOWERING_FLOATROUNDING_H
