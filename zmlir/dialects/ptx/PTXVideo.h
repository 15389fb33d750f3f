//===- PTXVideo.h - Operand selectors of the video instructions -*- C++ -*-===//
//
// The selectors of the video ops are kept in PTX's spelling ("b1", "h10",
// "b3210"); the verifiers and the lowering decode them here, the one place
// that knows their grammar (PTX ISA 9.0 section 9.7.16).
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECTS_PTX_PTXVIDEO_H
#define ZMLIR_DIALECTS_PTX_PTXVIDEO_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace zmlir::ptx {

/// A scalar video operand's part: `bits` wide (8, 16 or 32) at bit `shift`.
struct VideoPart {
  unsigned bits = 32;
  unsigned shift = 0;
};

/// "" (the whole word), "b0".."b3" or "h0", "h1"; nullopt if malformed.
std::optional<VideoPart> decodeVideoPart(llvm::StringRef sel);

/// A SIMD source selector for `lanes` (2 or 4) lanes: the index, per lane
/// (lane 0 first), of the half-word or byte of the pair {b, a} it reads.
/// "" gives the default (`isB`: b's own lanes, else a's).
std::optional<llvm::SmallVector<unsigned, 4>> decodeVideoLaneSelect(llvm::StringRef sel,
                                                                    unsigned lanes, bool isB);

/// A SIMD destination mask for `lanes` lanes as bits (bit i: lane i is
/// written); "" is every lane.
std::optional<unsigned> decodeVideoMask(llvm::StringRef sel, unsigned lanes);

} // namespace zmlir::ptx

#endif // ZMLIR_DIALECTS_PTX_PTXVIDEO_H
