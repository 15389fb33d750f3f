//===- Warp.cpp - shfl, vote, match, redux, elect -------------------------===//
//
// Warp shuffles, votes, reductions, matches and elections, activemask and
// bar.warp.sync.
//
// Warp operations need a ballot, which no upstream dialect offers on all
// three targets, so they use each target's own: `llvm.nvvm.*` intrinsics on
// NVPTX (NVIDIA's instructions, bit-exact), `llvm.amdgcn.ballot` on AMDGPU
// (on wave64 chips the 32 bits of the lane's half-wave: lanes 0-31 and
// 32-63 are two CUDA warps) and OpenCL's `sub_group_ballot` on SPIR-V (the
// kernels require 32-wide sub-groups). shfl.sync, reductions and matches
// elsewhere are shuffles over the 32 lanes (an indexed read of one lane is
// ds_bpermute on AMDGPU, within the half-wave on wave64); like PTX they need
// every lane in `membermask` to execute them, and use the other lanes'
// values only where masked out.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;

/// The lane's index in its 32-lane warp.
Value warpLane(OpBuilder &b, Location loc, const PTXLoweringState &state) {
  Value lane = arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                            gpu::LaneIdOp::create(b, loc, nullptr));
  if (state.target.getWaveSize() > 32)
    lane = arith::AndIOp::create(b, loc, lane, intConst(b, loc, b.getI32Type(), 31));
  return lane;
}

Value shuffle(OpBuilder &b, Location loc, const PTXLoweringState &state, Value v, Value offset,
              gpu::ShuffleMode mode) {
  if (mode == gpu::ShuffleMode::IDX)
    return state.target.readLane(b, loc, v, offset);
  Value width = intConst(b, loc, b.getI32Type(), 32);
  return gpu::ShuffleOp::create(b, loc, v, offset, width, mode).getShuffleResult();
}

/// shfl.sync: NVIDIA's instruction on NVPTX. Elsewhere the PTX ISA's
/// pseudo-code, for any `b` and `c` (constant or not):
///  1. bval = b[4:0], clamp cval = c[4:0], segmask = c[12:8];
///  2. minLane = lane & segmask, maxLane = minLane | (cval & ~segmask);
///  3. the source lane j: up lane - bval, down lane + bval, bfly
///     lane ^ bval, idx minLane | (bval & ~segmask);
///  4. p = j >= maxLane (up, signed: j may be negative) or j <= maxLane
///     (the others); a lane with p false reads its own value;
///  5. d = a of lane j, read with one indexed shuffle (readLane).
/// Like PTX, a source lane outside membermask (or not executing the
/// shfl.sync) gives an unspecified value.
struct ShflSyncOpLowering : PTXPattern<ShflSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(ShflSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type();
    Value a = adaptor.getA(), b = adaptor.getB(), c = adaptor.getC();
    if (succeeded(state.target.lowerNative(op, adaptor, rewriter)))
      return success();
    auto cst = [&](int64_t v) { return intConst(rewriter, loc, i32, v); };
    Value lane = warpLane(rewriter, loc, state);
    Value bval = arith::AndIOp::create(rewriter, loc, b, cst(31));
    Value cval = arith::AndIOp::create(rewriter, loc, c, cst(31));
    Value segmask = arith::AndIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, c, cst(8)), cst(31));
    Value notSegmask = arith::XOrIOp::create(rewriter, loc, segmask, cst(-1));
    Value minLane = arith::AndIOp::create(rewriter, loc, lane, segmask);
    Value maxLane = arith::OrIOp::create(rewriter, loc, minLane,
                                         arith::AndIOp::create(rewriter, loc, cval, notSegmask));
    Value j;
    IP inRange = IP::sle;
    switch (op.getMode()) {
    case ShflMode::Up:
      j = arith::SubIOp::create(rewriter, loc, lane, bval);
      inRange = IP::sge;
      break;
    case ShflMode::Down:
      j = arith::AddIOp::create(rewriter, loc, lane, bval);
      break;
    case ShflMode::Bfly:
      j = arith::XOrIOp::create(rewriter, loc, lane, bval);
      break;
    case ShflMode::Idx:
      j = arith::OrIOp::create(rewriter, loc, minLane,
                               arith::AndIOp::create(rewriter, loc, bval, notSegmask));
      break;
    }
    Value p = arith::CmpIOp::create(rewriter, loc, inRange, j, maxLane);
    Value src = arith::SelectOp::create(rewriter, loc, p, j, lane);
    rewriter.replaceOp(op, {state.target.readLane(rewriter, loc, a, src), p});
    return success();
  }
};

struct VoteSyncOpLowering : PTXPattern<VoteSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(VoteSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mask = adaptor.getMembermask();
    Value bits = state.target.ballot(rewriter, op, adaptor.getPred(), mask);
    if (!bits)
      return unsupported(op, "'vote.sync' for the generic target (no ballot)");
    bits = arith::AndIOp::create(rewriter, loc, bits, mask);
    Value zero = intConst(rewriter, loc, rewriter.getI32Type(), 0);
    Value r;
    switch (op.getMode()) {
    case VoteMode::Ballot:
      r = bits;
      break;
    case VoteMode::Any:
      r = arith::CmpIOp::create(rewriter, loc, IP::ne, bits, zero);
      break;
    case VoteMode::All:
      r = arith::CmpIOp::create(rewriter, loc, IP::eq, bits, mask);
      break;
    case VoteMode::Uni:
      r = arith::OrIOp::create(rewriter, loc,
                               arith::CmpIOp::create(rewriter, loc, IP::eq, bits, zero),
                               arith::CmpIOp::create(rewriter, loc, IP::eq, bits, mask));
      break;
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ActivemaskOpLowering : PTXPattern<ActivemaskOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(ActivemaskOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value r = state.target.nativeActivemask(rewriter, loc);
    if (!r) {
      Value all = intConst(rewriter, loc, rewriter.getI32Type(), -1);
      r = state.target.ballot(rewriter, op, intConst(rewriter, loc, rewriter.getI1Type(), 1), all);
    }
    if (!r)
      return unsupported(op, "'activemask' for the generic target (no ballot)");
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// redux.sync: NVIDIA's instruction on NVPTX; elsewhere a butterfly of
/// five shuffles where lanes outside membermask contribute the identity.
struct ReduxSyncOpLowering : PTXPattern<ReduxSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(ReduxSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type();
    bool isSigned = isSignedType(op.getType());
    Value a = adaptor.getA(), mask = adaptor.getMembermask();
    int64_t identity = 0;
    StringRef name;
    switch (op.getOp()) {
    case AtomicOp::Add:
      name = "add";
      break;
    case AtomicOp::And:
      name = "and";
      identity = -1;
      break;
    case AtomicOp::Or:
      name = "or";
      break;
    case AtomicOp::Xor:
      name = "xor";
      break;
    case AtomicOp::Min:
      name = isSigned ? "min" : "umin";
      identity = isSigned ? INT32_MAX : -1;
      break;
    case AtomicOp::Max:
      name = isSigned ? "max" : "umax";
      identity = isSigned ? INT32_MIN : 0;
      break;
    default:
      return unsupported(op, "redux operation");
    }
    if (Value r = state.target.nativeRedux(rewriter, loc, name, a, mask)) {
      rewriter.replaceOp(op, r);
      return success();
    }
    Value lane = warpLane(rewriter, loc, state);
    Value inMask = arith::CmpIOp::create(
        rewriter, loc, IP::ne,
        arith::AndIOp::create(rewriter, loc, arith::ShRUIOp::create(rewriter, loc, mask, lane),
                              intConst(rewriter, loc, i32, 1)),
        intConst(rewriter, loc, i32, 0));
    Value v = arith::SelectOp::create(rewriter, loc, inMask, a,
                                      intConst(rewriter, loc, i32, identity));
    for (int offset = 16; offset >= 1; offset /= 2) {
      Value other = shuffle(rewriter, loc, state, v, intConst(rewriter, loc, i32, offset),
                            gpu::ShuffleMode::XOR);
      switch (op.getOp()) {
      case AtomicOp::Add:
        v = arith::AddIOp::create(rewriter, loc, v, other);
        break;
      case AtomicOp::And:
        v = arith::AndIOp::create(rewriter, loc, v, other);
        break;
      case AtomicOp::Or:
        v = arith::OrIOp::create(rewriter, loc, v, other);
        break;
      case AtomicOp::Xor:
        v = arith::XOrIOp::create(rewriter, loc, v, other);
        break;
      case AtomicOp::Min:
        v = isSigned ? arith::MinSIOp::create(rewriter, loc, v, other).getResult()
                     : arith::MinUIOp::create(rewriter, loc, v, other).getResult();
        break;
      default:
        v = isSigned ? arith::MaxSIOp::create(rewriter, loc, v, other).getResult()
                     : arith::MaxUIOp::create(rewriter, loc, v, other).getResult();
        break;
      }
    }
    rewriter.replaceOp(op, v);
    return success();
  }
};

/// match.sync: NVIDIA's instruction on NVPTX; elsewhere each lane reads
/// every lane's value with 32 indexed shuffles and sets the bits of equal
/// values inside membermask.
struct MatchSyncOpLowering : PTXPattern<MatchSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(MatchSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type(), i1 = rewriter.getI1Type();
    Value a = adaptor.getA(), mask = adaptor.getMembermask();
    bool wide = a.getType().isInteger(64);
    if (succeeded(state.target.lowerNative(op, adaptor, rewriter)))
      return success();
    Value lo = a, hi;
    if (wide) {
      lo = arith::TruncIOp::create(rewriter, loc, i32, a);
      hi = arith::TruncIOp::create(
          rewriter, loc, i32,
          arith::ShRUIOp::create(rewriter, loc, a, intConst(rewriter, loc, a.getType(), 32)));
    }
    Value bits = intConst(rewriter, loc, i32, 0);
    for (int lane = 0; lane < 32; ++lane) {
      Value index = intConst(rewriter, loc, i32, lane);
      Value eq = arith::CmpIOp::create(
          rewriter, loc, IP::eq, shuffle(rewriter, loc, state, lo, index, gpu::ShuffleMode::IDX),
          lo);
      if (hi)
        eq = arith::AndIOp::create(
            rewriter, loc, eq,
            arith::CmpIOp::create(rewriter, loc, IP::eq,
                                  shuffle(rewriter, loc, state, hi, index, gpu::ShuffleMode::IDX),
                                  hi));
      Value bit = arith::ShLIOp::create(rewriter, loc,
                                        arith::ExtUIOp::create(rewriter, loc, i32, eq), index);
      bits = arith::OrIOp::create(rewriter, loc, bits, bit);
    }
    bits = arith::AndIOp::create(rewriter, loc, bits, mask);
    if (op.getMode() == MatchMode::Any) {
      rewriter.replaceOp(op, {bits, intConst(rewriter, loc, i1, 1)});
      return success();
    }
    Value all = arith::CmpIOp::create(rewriter, loc, IP::eq, bits, mask);
    Value r = arith::SelectOp::create(rewriter, loc, all, mask, intConst(rewriter, loc, i32, 0));
    rewriter.replaceOp(op, {r, all});
    return success();
  }
};

/// bar.warp.sync: NVIDIA's instruction on NVPTX; elsewhere the lanes of a
/// warp run in lock step, so an acquire-release fence over the wavefront
/// (sub-group) gives the memory ordering PTX promises.
struct BarWarpSyncOpLowering : PTXPattern<BarWarpSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BarWarpSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (failed(state.target.emitNativeWarpSync(rewriter, loc, adaptor.getMembermask())))
      LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::acq_rel,
                            state.target.warpFenceScope());
    rewriter.eraseOp(op);
    return success();
  }
};

/// elect.sync: the lowest set bit of the ballot of the lanes of membermask
/// that execute it, on every target. (NVPTX too: LLVM selects
/// llvm.nvvm.elect.sync only for PTX ISA 8.0, and writes 7.8 for sm_90;
/// inline `elect.sync` made ptxas reject the module on the H200.)
struct ElectSyncOpLowering : PTXPattern<ElectSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(ElectSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mask = adaptor.getMembermask();
    Value bits = state.target.ballot(rewriter, op, intConst(rewriter, loc, rewriter.getI1Type(), 1),
                                     mask);
    if (!bits)
      return unsupported(op, "'elect.sync' for the generic target (no ballot)");
    bits = arith::AndIOp::create(rewriter, loc, bits, mask);
    Value leader = math::CountTrailingZerosOp::create(rewriter, loc, bits);
    Value elected = arith::CmpIOp::create(rewriter, loc, IP::eq, warpLane(rewriter, loc, state),
                                          leader);
    rewriter.replaceOp(op, {leader, elected});
    return success();
  }
};

} // namespace

void zmlir::populatePTXWarpPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<ShflSyncOpLowering, VoteSyncOpLowering, ActivemaskOpLowering, ReduxSyncOpLowering,
               MatchSyncOpLowering, BarWarpSyncOpLowering, ElectSyncOpLowering>(
      patterns.getContext(), state);
}
