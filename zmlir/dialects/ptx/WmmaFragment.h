//===- WmmaFragment.h - The registers of a wmma fragment --------*- C++ -*-===//
//
// What PTX fixes of a wmma fragment (PTX ISA 9.7.14.4.1): the matrix it
// holds and the registers each lane holds it in; and of an mma.sync form
// (PTX ISA 9.7.14.5), where it fixes each lane's elements too. The verifiers of the
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

/// The registers of an mma.sync form (PTX ISA 9.7.14.5), whose elements
/// each lane holds where PTX says: with g = %laneid / 4, t = %laneid % 4
/// and E = elementsPerRegister(), register i of
///  - A holds row g + 8 * (i % 2), columns E * t + (K / 2) * (i / 2) ...
///    + E - 1 (one register, m8n8k4: row g, column t);
///  - B holds column g, rows E * t + (K / 2) * i ... + E - 1;
///  - C and D hold, in their element i, row g + 8 * (i / 2), column 2 * t +
///    i % 2 (m8n8k4: row g, column 2 * t + i); f32 and f64 elements one a
///    register, f16 ones two (element 2 * j in register j's low half).
struct MmaSyncForm {
  unsigned m, n, k;
  /// Bits of an element of A and B (16 for f16 and bf16, 32 for tf32, 64).
  unsigned elementBits;
  /// Registers per lane of A and B; elements per lane of C and D.
  unsigned aRegisters, bRegisters, accumulators;
  /// The registers' types: i32 or f64 for A and B; f32, f64 or i32 (a
  /// packed pair of f16) for C and D.
  mlir::Type multiplicandType, cType, dType;

  /// Registers of C or D with elements of `type`.
  unsigned accumulatorRegisters(mlir::Type type) const {
    return type.isInteger(32) ? accumulators / 2 : accumulators;
  }
  /// Elements of A or B in one register: 2 packed f16 or bf16, 1 tf32 or f64.
  unsigned elementsPerRegister() const { return elementBits >= 32 ? 1 : 32 / elementBits; }
};

/// The form of `mma.sync.shape.row.col.dtype.atype.btype.ctype`, or none
/// (with the reason in `whyNot`) where zmlir has no such form.
std::optional<MmaSyncForm> getMmaSyncForm(mlir::MLIRContext *ctx, MmaShape shape, WmmaType atype,
                                          WmmaType btype, WmmaType ctype, WmmaType dtype,
                                          std::string *whyNot = nullptr);

} // namespace zmlir::ptx

#endif // ZMLIR_DIALECTS_PTX_WMMAFRAGMENT_H
