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
// elsewhere are indexed reads of other lanes (TargetInfo::readLane; on
// AMDGPU ds_bpermute, within the half-wave on wave64).
//
// Off NVPTX, the lanes a collective hears from are the lanes that execute it
// with the caller: a ballot of true at the collective (`activeLanes`). A lane
// that does not (it took another branch, has exited, or lies past the end of
// a block whose size is not a multiple of 32: the last warp is short) reads
// as 0 in shfl.sync, as the operation's identity in redux.sync, matches
// nothing in match.sync and votes no, and vote.all/uni and match.all ask
// only the lanes of membermask that execute. PTX leaves a read of such a
// lane unspecified; NVIDIA's hardware behaves this way where programs
// depend on it (cuda-samples' reduction reads lanes outside its ballot mask
// and sums them as 0). bar.warp.sync waits for the lanes that execute it.
// Every collective is a convergent call, so no pass moves it across the
// control flow that decides which lanes execute it.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

Value zmlir::warpLane(OpBuilder &b, Location loc, const TargetInfo &target) {
  Value lane = arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                            gpu::LaneIdOp::create(b, loc, nullptr));
  if (target.getWaveSize() > 32)
    lane = arith::AndIOp::create(b, loc, lane, intConst(b, loc, b.getI32Type(), 31));
  return lane;
}

namespace {

using IP = arith::CmpIPredicate;

/// The lanes of the caller's warp executing this collective with it (bit i
/// for lane i): a ballot of true over `membermask`, or null where the target
/// has no ballot (the generic one).
Value activeLanes(OpBuilder &b, Operation *op, const PTXLoweringState &state, Value membermask) {
  return state.target.ballot(b, op, intConst(b, op->getLoc(), b.getI1Type(), 1), membermask);
}

/// Whether bit `lane` of the 32-bit `mask` is set.
Value hasLane(OpBuilder &b, Location loc, Value mask, Value lane) {
  mlir::Type i32 = b.getI32Type();
  Value bit = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, mask, lane),
                                    intConst(b, loc, i32, 1));
  return arith::CmpIOp::create(b, loc, IP::ne, bit, intConst(b, loc, i32, 0));
}

/// `v` of lane `src` (in [0, 32)) where that lane is in `active` (or
/// `active` is null), else `absent`.
Value readActiveLane(OpBuilder &b, Location loc, const PTXLoweringState &state, Value v, Value src,
                     Value active, Value absent) {
  Value value = state.target.readLane(b, loc, v, src);
  if (!active)
    return value;
  return arith::SelectOp::create(b, loc, hasLane(b, loc, active, src), value, absent);
}

/// shfl.sync: NVIDIA's instruction on NVPTX. Elsewhere the PTX ISA's
/// pseudo-code, for any `b` and `c` (constant or not):
///  1. bval = b[4:0], clamp cval = c[4:0], segmask = c[12:8];
///  2. minLane = lane & segmask, maxLane = minLane | (cval & ~segmask);
///  3. the source lane j: up lane - bval, down lane + bval, bfly
///     lane ^ bval, idx minLane | (bval & ~segmask);
///  4. p = j >= maxLane (up, signed: j may be negative) or j <= maxLane
///     (the others); a lane with p false reads its own value;
///  5. d = a of lane j, read with one indexed shuffle (readLane), or 0 if
///     lane j does not execute the shfl.sync (PTX: unspecified).
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
    Value lane = warpLane(rewriter, loc, state.target);
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
    Value active = activeLanes(rewriter, op, state, adaptor.getMembermask());
    Value d = readActiveLane(rewriter, loc, state, a, src, active, cst(0));
    rewriter.replaceOp(op, {d, p});
    return success();
  }
};

struct VoteSyncOpLowering : PTXPattern<VoteSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(VoteSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mask = adaptor.getMembermask();
    if (Value r = state.target.nativeVote(rewriter, loc, op.getMode(), adaptor.getPred(), mask)) {
      rewriter.replaceOp(op, r);
      return success();
    }
    Value bits = state.target.ballot(rewriter, op, adaptor.getPred(), mask);
    if (!bits)
      return unsupported(op, "'vote.sync' for the generic target (no ballot)");
    bits = arith::AndIOp::create(rewriter, loc, bits, mask);
    Value zero = intConst(rewriter, loc, rewriter.getI32Type(), 0);
    // all and uni ask the lanes of membermask that execute the vote.
    if (op.getMode() == VoteMode::All || op.getMode() == VoteMode::Uni)
      mask = arith::AndIOp::create(rewriter, loc, mask, activeLanes(rewriter, op, state, mask));
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
    // A ballot of true that waits for no lane: the lanes here now.
    if (!r)
      r = state.target.ballot(rewriter, op, intConst(rewriter, loc, rewriter.getI1Type(), 1),
                              intConst(rewriter, loc, rewriter.getI32Type(), 0));
    if (!r)
      return unsupported(op, "'activemask' for the generic target (no ballot)");
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// redux.sync: NVIDIA's instruction on NVPTX; elsewhere every lane folds
/// the 32 lanes' operands in lane order, lanes outside membermask or not
/// executing the redux.sync contributing the identity.
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
    // Each lane reads all 32: a butterfly would lose what a lane outside
    // the executing ones would have combined for the others.
    Value counted = mask;
    if (Value active = activeLanes(rewriter, op, state, mask))
      counted = arith::AndIOp::create(rewriter, loc, mask, active);
    Value none = intConst(rewriter, loc, i32, identity), v = none;
    for (int lane = 0; lane < 32; ++lane) {
      Value other = readActiveLane(rewriter, loc, state, a, intConst(rewriter, loc, i32, lane),
                                   counted, none);
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
/// values of the lanes of membermask that execute the match.sync; match.all
/// gives those lanes when all of them are equal.
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
    if (Value active = activeLanes(rewriter, op, state, mask))
      mask = arith::AndIOp::create(rewriter, loc, mask, active);
    Value bits = intConst(rewriter, loc, i32, 0);
    for (int lane = 0; lane < 32; ++lane) {
      Value index = intConst(rewriter, loc, i32, lane);
      Value eq = arith::CmpIOp::create(rewriter, loc, IP::eq,
                                       state.target.readLane(rewriter, loc, lo, index), lo);
      if (hi)
        eq = arith::AndIOp::create(
            rewriter, loc, eq,
            arith::CmpIOp::create(rewriter, loc, IP::eq,
                                  state.target.readLane(rewriter, loc, hi, index), hi));
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

/// bar.warp.sync: NVIDIA's instruction on NVPTX, the target's sub-group
/// barrier where it has one (the lanes of a sub-group need not run in lock
/// step: Intel's OpenCL CPU runtime runs those of a short sub-group one
/// after another); else an acquire-release fence over the wavefront, whose
/// lanes run in lock step.
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
    Value elected = arith::CmpIOp::create(rewriter, loc, IP::eq,
                                          warpLane(rewriter, loc, state.target), leader);
    rewriter.replaceOp(op, {leader, elected});
    return success();
  }
};

} // namespace

void zmlir::markCallsConvergent(gpu::GPUModuleOp module) {
  module.walk([&](LLVM::LLVMFuncOp fn) {
    if (!fn.isExternal())
      fn.setConvergent(true);
  });
  module.walk([&](LLVM::CallOp call) {
    std::optional<StringRef> callee = call.getCallee();
    auto fn = callee ? module.lookupSymbol<LLVM::LLVMFuncOp>(*callee) : LLVM::LLVMFuncOp();
    if (fn && !fn.isExternal())
      call.setConvergent(true);
  });
}

llvm::DenseSet<Operation *> zmlir::functionsUsingSubGroups(gpu::GPUModuleOp module) {
  llvm::DenseSet<Operation *> users;
  auto usesSubGroups = [&](Operation *fn) {
    return fn
        ->walk([&](Operation *op) {
          if (isa<gpu::LaneIdOp, gpu::SubgroupIdOp, gpu::SubgroupSizeOp, gpu::NumSubgroupsOp,
                  gpu::ShuffleOp, gpu::SubgroupReduceOp>(op))
            return WalkResult::interrupt();
          // Warp-synchronous code before __syncwarp existed (CUDA's own
          // reductions until CUDA 9): a warp's threads pass values through
          // volatile memory and rely on running in lockstep, which a 32-wide
          // sub-group gives and a narrower one does not.
          auto load = dyn_cast<LLVM::LoadOp>(op);
          auto store = dyn_cast<LLVM::StoreOp>(op);
          if ((load && load.getVolatile_()) || (store && store.getVolatile_()))
            return WalkResult::interrupt();
          auto call = dyn_cast<LLVM::CallOp>(op);
          std::optional<StringRef> callee = call ? call.getCallee() : std::nullopt;
          auto target = callee ? module.lookupSymbol<LLVM::LLVMFuncOp>(*callee)
                               : LLVM::LLVMFuncOp();
          if (target && ((target.isExternal() && call.getConvergent()) || users.count(target)))
            return WalkResult::interrupt();
          return WalkResult::advance();
        })
        .wasInterrupted();
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (Operation &fn : module.getBody()->getOperations())
      if (isa<LLVM::LLVMFuncOp, gpu::GPUFuncOp>(fn) && !users.count(&fn) && usesSubGroups(&fn))
        grew = users.insert(&fn).second;
  }
  return users;
}

void zmlir::populatePTXWarpPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<ShflSyncOpLowering, VoteSyncOpLowering, ActivemaskOpLowering, ReduxSyncOpLowering,
               MatchSyncOpLowering, BarWarpSyncOpLowering, ElectSyncOpLowering>(
      patterns.getContext(), state);
}
