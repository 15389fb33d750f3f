//===- PTXVideoOps.cpp - The video instructions' selectors and verifiers --===//

#include "zmlir/dialects/ptx/PTXDialect.h"
#include "zmlir/dialects/ptx/PTXVideo.h"

using namespace mlir;
using namespace zmlir::ptx;

std::optional<VideoPart> zmlir::ptx::decodeVideoPart(StringRef sel) {
  if (sel.empty())
    return VideoPart{};
  if (sel.size() != 2 || (sel[0] != 'b' && sel[0] != 'h'))
    return std::nullopt;
  unsigned bits = sel[0] == 'b' ? 8 : 16, count = 32 / bits;
  unsigned index = static_cast<unsigned>(sel[1] - '0');
  if (sel[1] < '0' || index >= count)
    return std::nullopt;
  return VideoPart{bits, index * bits};
}

std::optional<SmallVector<unsigned, 4>>
zmlir::ptx::decodeVideoLaneSelect(StringRef sel, unsigned lanes, bool isB) {
  SmallVector<unsigned, 4> result;
  if (sel.empty()) {
    for (unsigned i = 0; i < lanes; ++i)
      result.push_back(isB ? lanes + i : i);
    return result;
  }
  // `.bxyzw`/`.hxy` name the lanes from the highest down.
  char unit = lanes == 4 ? 'b' : 'h';
  if (sel.size() != lanes + 1 || sel[0] != unit)
    return std::nullopt;
  for (unsigned i = 0; i < lanes; ++i) {
    char digit = sel[lanes - i];
    if (digit < '0' || static_cast<unsigned>(digit - '0') >= 2 * lanes)
      return std::nullopt;
    result.push_back(static_cast<unsigned>(digit - '0'));
  }
  return result;
}

std::optional<unsigned> zmlir::ptx::decodeVideoMask(StringRef sel, unsigned lanes) {
  if (sel.empty())
    return (1u << lanes) - 1;
  char unit = lanes == 4 ? 'b' : 'h';
  if (sel.size() < 2 || sel[0] != unit)
    return std::nullopt;
  // Lanes named from the highest down, each once.
  unsigned mask = 0;
  int previous = static_cast<int>(lanes);
  for (char digit : sel.drop_front()) {
    int lane = digit - '0';
    if (lane < 0 || lane >= previous)
      return std::nullopt;
    mask |= 1u << lane;
    previous = lane;
  }
  return mask;
}

namespace {

bool isVideoType(DataType t) {
  return t == DataType::U32 || t == DataType::S32;
}

/// What the scalar and SIMD forms share: .u32/.s32 operands, a comparison
/// exactly for `set`, .sat not on set nor with the accumulate.
template <typename OpTy>
LogicalResult verifyVideoCommon(OpTy op) {
  if (!isVideoType(op.getDtype()) || !isVideoType(op.getAtype()) || !isVideoType(op.getBtype()))
    return op.emitOpError("takes .u32 or .s32 operand types");
  bool isSet = op.getOp() == VideoOp::Set;
  if (isSet != op.getCmp().has_value())
    return op.emitOpError(isSet ? "set needs a comparison" : "takes a comparison only with set");
  if (op.getCmp() && static_cast<unsigned>(*op.getCmp()) > static_cast<unsigned>(Cmp::GE))
    return op.emitOpError("compares with eq, ne, lt, le, gt or ge only");
  if (isSet && (op.getSat() || op.getDtype() != DataType::U32))
    return op.emitOpError("set gives .u32 without .sat");
  if (op.getSecondary() != VideoSecondary::None && !op.getC())
    return op.emitOpError("needs the c operand for its secondary operation");
  return success();
}

} // namespace

LogicalResult VopOp::verify() {
  if (failed(verifyVideoCommon(*this)))
    return failure();
  if (getOp() == VideoOp::Avrg)
    return emitOpError("has no scalar avrg");
  bool isShift = getOp() == VideoOp::Shl || getOp() == VideoOp::Shr;
  if (isShift != getMode().has_value())
    return emitOpError(isShift ? "shift needs .clamp or .wrap"
                               : "takes .clamp/.wrap only on shifts");
  if (isShift && getBtype() != DataType::U32)
    return emitOpError("shift amount is .u32");
  if (!decodeVideoPart(getAsel()) || !decodeVideoPart(getBsel()) || !decodeVideoPart(getDsel()))
    return emitOpError("selects .b0-.b3, .h0 or .h1");
  bool merges = !getDsel().empty();
  if (merges && (getSecondary() != VideoSecondary::None || !getC()))
    return emitOpError("merges into c at its destination selector, with no secondary operation");
  if (!merges && getSecondary() == VideoSecondary::None && getC())
    return emitOpError("takes c only with a secondary operation or a destination selector");
  return success();
}

namespace {

template <typename OpTy>
LogicalResult verifyVideoSimd(OpTy op, unsigned lanes) {
  if (failed(verifyVideoCommon(op)))
    return failure();
  if (!op.getC())
    return op.emitOpError("needs the c operand");
  VideoOp kind = op.getOp();
  if (kind == VideoOp::Shl || kind == VideoOp::Shr)
    return op.emitOpError("has no SIMD shifts");
  if (op.getSecondary() != VideoSecondary::None && op.getSecondary() != VideoSecondary::Add)
    return op.emitOpError("accumulates with .add only");
  if (op.getSat() && op.getSecondary() == VideoSecondary::Add)
    return op.emitOpError("takes no .sat with the .add accumulate");
  if (!decodeVideoLaneSelect(op.getAsel(), lanes, false) ||
      !decodeVideoLaneSelect(op.getBsel(), lanes, true))
    return op.emitOpError("takes lane selectors ") << (lanes == 4 ? ".bxyzw (0-7)" : ".hxy (0-3)");
  if (!decodeVideoMask(op.getMask(), lanes))
    return op.emitOpError("takes a mask of distinct lanes from the highest down");
  return success();
}

} // namespace

LogicalResult Vop2Op::verify() {
  return verifyVideoSimd(*this, 2);
}
LogicalResult Vop4Op::verify() {
  return verifyVideoSimd(*this, 4);
}
