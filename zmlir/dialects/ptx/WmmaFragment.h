//===- WmmaFragment.h - The registers of a wmma fragment --------*- C++ -*-===//
//
// What PTX fixes of a wmma fragment (PTX ISA 9.7.14.4.1): the matrix it
// holds and the registers each lane holds it in. The verifiers of the
// ptx.wmma_* ops (PTXMatrixOps.cpp) and their lowering
// (zmlir/lowering/MatrixOps.cpp) share it.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECTS_PTX_WMMAFRAGMENT_H
#define ZMLIR_DIALECTS_PTX_WMMAFRAGMENT_H

#include "zmlir/dialects/ptx/PTXDialect.h"

#include <optional>

namespace zmlir::ptx {

/// M, N and K of a wmma shape (.mMnNkK).
struct WmmaDims {
  unsigned m, n, k;
};
WmmaDims getWmmaDims(WmmaShape shape);

/// The fragment of one matrix of a wmma multiply.
struct WmmaFragment {
  /// The matrix: A is M x K, B is K x N, C and D are M x N.
  unsigned rows, cols;
  /// Bits of one element (16 for f16 and bf16, 32 for tf32, ...).
  unsigned elementBits;
  /// Registers per lane, and their type (i32 for .b32, f32, f64).
  unsigned registers;
  mlir::Type registerType;

  unsigned registerBits() const { return registerType.getIntOrFloatBitWidth(); }
  /// Elements in one register: 2 packed f16, 4 packed s8, 1 f32, ...
  unsigned elementsPerRegister() const { return registerBits() / elementBits; }
  /// Elements of the matrix per lane, rows * cols / 32.
  unsigned elementsPerLane() const { return rows * cols / 32; }
  /// Registers that hold distinct elements: f16 A and B fragments have
  /// more registers than their elements fill (8 for m16n16k16's 256).
  unsigned distinctRegisters() const { return elementsPerLane() / elementsPerRegister(); }
};

/// The fragment of `matrix` with elements of `type` in a `shape` multiply,
/// or none (with the reason in `whyNot`) where PTX has no such fragment.
std::optional<WmmaFragment> getWmmaFragment(mlir::MLIRContext *ctx, WmmaShape shape,
                                            WmmaMatrix matrix, WmmaType type,
                                            std::string *whyNot = nullptr);

/// Bits of an element of `type`.
unsigned getWmmaTypeBitWidth(WmmaType type);

} // namespace zmlir::ptx

#endif // ZMLIR_DIALECTS_PTX_WMMAFRAGMENT_H
