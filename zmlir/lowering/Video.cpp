//===- Video.cpp - The video instructions ---------------------------------===//
//
// Lowers the scalar video instructions (ptx.vop: vadd ... vset) and the SIMD
// ones (ptx.vop2, ptx.vop4) to the target's own instructions where it has
// them (TargetInfo::nativeVideo: NVPTX), else to plain arith on i32 and i64,
// the same code on every other target. The scalar forms follow what NVIDIA GPUs compute (sm_70 and
// later emulate them in SASS; measured on an H200 with tools/video_probe.py,
// see docs/video-instructions.md), not the PTX ISA 9.0 pseudo-code:
//
//  scalar: 1. ta, tb: the selected byte, half-word or word of a and b,
//             sign- or zero-extended to i64 per atype/btype;
//          2. the operation, exact in i64 (shift amounts clamped to 32 or
//             wrapped modulo 32 first);
//          3. .sat: to a byte or half-word destination, the exact result
//             read as unsigned (a negative one is huge) and capped at the
//             part's maximum, signed or unsigned per dtype; to a word, s32
//             clamps, u32 only raises a negative result to 0 (a sum past
//             2^32 wraps). vshl/vshr .sat: rejected by the importer;
//          4. .min/.max with c: vadd and vsub compare their result as a
//             signed 32-bit value, the others their exact result; dtype
//             (vset: atype) picks a signed compare with c sign-extended or
//             an unsigned one with c zero-extended; .add wraps;
//          5. a destination selector merges the result's low bits into c
//             at b0..b3 or h0; at h1 it keeps the result's own bits 31:16.
//  SIMD:   1. each lane's operand: a byte (half-word) of the pair {b, a}
//             chosen by the selector, extended to i32 per atype/btype;
//          2. the lane operation, exact in i32; .sat clamps to the lane's
//             range per dtype;
//          3. accumulate: c plus the masked lanes' results; otherwise each
//             lane of d is the result where the mask has it, c's elsewhere.
//
//===----------------------------------------------------------------------===//

#include "zmlir/dialects/ptx/PTXVideo.h"
#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using P = arith::CmpIPredicate;

/// The video instructions' integer building blocks.
struct VideoBuilder : IntArithBuilder {
  Value extend(mlir::Type t, Value v, bool isSigned) const {
    return isSigned ? extsi(t, v) : extui(t, v);
  }

  /// `bits` of `word` from bit `shift`, extended to `t`.
  Value field(mlir::Type t, Value word, unsigned shift, unsigned bits, bool isSigned) const {
    mlir::Type wordType = word.getType();
    Value shifted = shift ? shrui(word, constant(wordType, shift)) : word;
    Value part = bits == widthOf(wordType) ? shifted : trunci(b.getIntegerType(bits), shifted);
    return part.getType() == t ? part : extend(t, part, isSigned);
  }

  /// `v` clamped to the range of a `bits`-wide signed or unsigned integer.
  Value saturate(Value v, unsigned bits, bool isSigned) const {
    mlir::Type t = v.getType();
    int64_t lo = isSigned ? -(int64_t(1) << (bits - 1)) : 0;
    int64_t hi = isSigned ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
    return minsi(maxsi(v, constant(t, lo)), constant(t, hi));
  }

  /// The primary operation on exact (sign-correct) operands of one type.
  Value apply(VideoOp op, std::optional<Cmp> cmpOp, Value x, Value y) const {
    mlir::Type t = x.getType();
    switch (op) {
    case VideoOp::Add:
      return addi(x, y);
    case VideoOp::Sub:
      return subi(x, y);
    case VideoOp::Absdiff: {
      Value d = subi(x, y);
      return select(cmpi(P::slt, d, constant(t, 0)), subi(constant(t, 0), d), d);
    }
    case VideoOp::Min:
      return minsi(x, y);
    case VideoOp::Max:
      return maxsi(x, y);
    case VideoOp::Avrg: {
      // Rounds half away from zero's upper side: (s + 1) >> 1 for s >= 0.
      Value s = addi(x, y);
      Value up = select(cmpi(P::sge, s, constant(t, 0)), constant(t, 1), constant(t, 0));
      return shrsi(addi(s, up), constant(t, 1));
    }
    case VideoOp::Set: {
      static const P preds[] = {P::eq, P::ne, P::slt, P::sle, P::sgt, P::sge};
      Value c = cmpi(preds[static_cast<unsigned>(*cmpOp)], x, y);
      return extui(t, c);
    }
    case VideoOp::Shl:
    case VideoOp::Shr:
      break;
    }
    llvm_unreachable("shifts are lowered by the scalar pattern");
  }
};

bool isSigned(DataType t) {
  return t == DataType::S32;
}

/// `.x` for a non-empty `x`.
std::string dotted(StringRef x) {
  return x.empty() ? std::string() : ("." + x).str();
}

/// A video op in PTX's spelling for TargetInfo::nativeVideo: `$0` the
/// result, `$1`... a, b, c, each with its selector.
template <typename OpTy>
std::string videoPtx(OpTy op, StringRef name, StringRef dsel, std::optional<ClampMode> mode) {
  std::string text = ("v" + stringifyVideoOp(op.getOp()) + name).str();
  if (op.getOp() != VideoOp::Set)
    text += dotted(stringifyDataType(op.getDtype()));
  text += dotted(stringifyDataType(op.getAtype())) + dotted(stringifyDataType(op.getBtype()));
  if (op.getCmp())
    text += dotted(stringifyCmp(*op.getCmp()));
  if (op.getSat())
    text += ".sat";
  if (mode)
    text += dotted(stringifyClampMode(*mode));
  if (op.getSecondary() != VideoSecondary::None)
    text += dotted(stringifyVideoSecondary(op.getSecondary()));
  text += " $0" + dotted(dsel) + ", $1" + dotted(op.getAsel()) + ", $2" + dotted(op.getBsel());
  if (op.getC())
    text += ", $3";
  return text + ";";
}

struct VopOpLowering : PTXPattern<VopOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(VopOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (Value r = state.target.nativeVideo(rewriter, op.getLoc(),
                                           videoPtx(op, "", op.getDsel(), op.getMode()),
                                           adaptor.getOperands())) {
      rewriter.replaceOp(op, r);
      return success();
    }
    VideoBuilder ib{{rewriter, op.getLoc()}};
    mlir::Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    VideoPart asel = *decodeVideoPart(op.getAsel()), bsel = *decodeVideoPart(op.getBsel());
    VideoPart dsel = *decodeVideoPart(op.getDsel());
    bool dSigned = isSigned(op.getDtype());
    // 1. The selected parts, exact in i64.
    Value ta = ib.field(i64, adaptor.getA(), asel.shift, asel.bits, isSigned(op.getAtype()));
    Value tb = ib.field(i64, adaptor.getB(), bsel.shift, bsel.bits, isSigned(op.getBtype()));
    // 2. The operation.
    Value tmp;
    VideoOp kind = op.getOp();
    bool shift = kind == VideoOp::Shl || kind == VideoOp::Shr;
    if (shift && op.getSat())
      return rewriter.notifyMatchFailure(op, "vshl/vshr .sat is not modelled");
    // What .min/.max compare with c: the exact result, but vshl's capped so
    // that shifting a word past bit 63 keeps its sign (it is past c either way).
    Value compared;
    if (shift) {
      Value amount = *op.getMode() == ClampMode::Clamp ? ib.minui(tb, ib.c64(32))
                                                       : ib.andi(tb, ib.c64(31));
      if (kind == VideoOp::Shl) {
        tmp = ib.shli(ta, amount);
        Value wide = ib.andi(ib.cmpi(P::eq, amount, ib.c64(32)),
                             ib.cmpi(P::sgt, ta, ib.c64(INT32_MAX)));
        compared = ib.shli(ta, ib.select(wide, ib.c64(31), amount));
      } else {
        tmp = isSigned(op.getAtype()) ? ib.shrsi(ta, amount) : ib.shrui(ta, amount);
      }
    } else {
      tmp = ib.apply(kind, op.getCmp(), ta, tb);
    }
    // 3. Saturation to the destination (part).
    if (op.getSat()) {
      if (dsel.bits < 32) {
        int64_t hi = dSigned ? (int64_t(1) << (dsel.bits - 1)) - 1 : (int64_t(1) << dsel.bits) - 1;
        tmp = ib.minui(tmp, ib.c64(hi));
      } else if (dSigned) {
        tmp = ib.saturate(tmp, 32, true);
      } else {
        tmp = ib.maxsi(tmp, ib.c64(0));
      }
    }
    if (!compared)
      compared = tmp;
    // 4. The secondary operation, or the merge into c.
    Value c = adaptor.getC();
    VideoSecondary secondary = op.getSecondary();
    if (secondary == VideoSecondary::Add) {
      tmp = ib.addi(tmp, ib.extend(i64, c, false));
    } else if (secondary != VideoSecondary::None) {
      if (kind == VideoOp::Add || kind == VideoOp::Sub)
        compared = ib.extend(i64, ib.trunci(i32, tmp), true);
      bool signedCompare = isSigned(kind == VideoOp::Set ? op.getAtype() : op.getDtype());
      Value wideC = ib.extend(i64, c, signedCompare);
      P less = signedCompare ? P::slt : P::ult;
      Value cWins = secondary == VideoSecondary::Min ? ib.cmpi(less, wideC, compared)
                                                     : ib.cmpi(less, compared, wideC);
      tmp = ib.select(cWins, wideC, tmp);
    }
    Value result = ib.trunci(i32, tmp);
    if (dsel.bits < 32) {
      uint32_t partMask = ((1u << dsel.bits) - 1) << dsel.shift;
      // NVIDIA places the result at a byte or h0, but masks it in at h1.
      Value placed = dsel.shift && dsel.bits == 8 ? ib.shli(result, ib.c32(dsel.shift)) : result;
      result = ib.ori(ib.andi(placed, ib.c32(static_cast<int32_t>(partMask))),
                      ib.andi(c, ib.c32(static_cast<int32_t>(~partMask))));
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <typename OpTy, unsigned Lanes>
struct VideoSimdLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (Value r = this->state.target.nativeVideo(
            rewriter, op.getLoc(), videoPtx(op, Lanes == 2 ? "2" : "4", op.getMask(), std::nullopt),
            adaptor.getOperands())) {
      rewriter.replaceOp(op, r);
      return success();
    }
    VideoBuilder ib{{rewriter, op.getLoc()}};
    mlir::Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    constexpr unsigned bits = 32 / Lanes;
    auto asel = *decodeVideoLaneSelect(op.getAsel(), Lanes, false);
    auto bsel = *decodeVideoLaneSelect(op.getBsel(), Lanes, true);
    unsigned mask = *decodeVideoMask(op.getMask(), Lanes);
    // 1. The lanes read from the pair {b, a}.
    Value pair = ib.ori(ib.shli(ib.extend(i64, adaptor.getB(), false), ib.c64(32)),
                        ib.extend(i64, adaptor.getA(), false));
    Value c = adaptor.getC();
    Value accumulated = c;
    Value merged = ib.c32(0);
    for (unsigned lane = 0; lane < Lanes; ++lane) {
      Value x = ib.field(i32, pair, asel[lane] * bits, bits, isSigned(op.getAtype()));
      Value y = ib.field(i32, pair, bsel[lane] * bits, bits, isSigned(op.getBtype()));
      // 2. The lane's result.
      Value t = ib.apply(op.getOp(), op.getCmp(), x, y);
      if (op.getSat())
        t = ib.saturate(t, bits, isSigned(op.getDtype()));
      // 3. Accumulated, or merged with c's lane.
      unsigned shift = lane * bits;
      int64_t laneMask = static_cast<int32_t>(((1u << bits) - 1) << shift);
      if (mask & (1u << lane)) {
        accumulated = ib.addi(accumulated, t);
        Value placed = shift ? ib.shli(t, ib.c32(shift)) : t;
        merged = ib.ori(merged, ib.andi(placed, ib.c32(laneMask)));
      } else {
        merged = ib.ori(merged, ib.andi(c, ib.c32(laneMask)));
      }
    }
    rewriter.replaceOp(op, op.getSecondary() == VideoSecondary::Add ? accumulated : merged);
    return success();
  }
};

} // namespace

void zmlir::populatePTXVideoPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<VopOpLowering, VideoSimdLowering<Vop2Op, 2>, VideoSimdLowering<Vop4Op, 4>>(
      patterns.getContext(), state);
}
