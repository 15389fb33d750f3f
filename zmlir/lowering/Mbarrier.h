//===- Mbarrier.h - The mbarrier word, for other lowerings -----*- C++ -*-===//
//
// What the other lowerings ask of an mbarrier kept in its 64-bit word
// (Mbarrier.cpp, off the targets with mbarriers of their own): the
// complete_tx a bulk copy performs once its bytes are written
// (AsyncCopy.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_MBARRIER_H
#define ZMLIR_LOWERING_MBARRIER_H

#include "zmlir/lowering/PTXLowering.h"

namespace zmlir {

/// `mbarrier.complete_tx` of `bytes` (an i32) on the barrier word at `ptr`:
/// its tx-count lowered by `bytes`, which completes the phase when neither
/// arrivals nor transactions are left pending.
void emitMbarrierCompleteTx(mlir::ConversionPatternRewriter &b, mlir::Location loc,
                            const PTXLoweringState &state, mlir::Value ptr, mlir::Value bytes);

} // namespace zmlir

#endif // ZMLIR_LOWERING_MBARRIER_H
