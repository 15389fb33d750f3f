//===- PTXToStdWarp.cpp - Warp-level ops, fences, calls, local memory -----===//
//
// Warp votes, reductions and matches, fences with scopes, device function
// calls and `.local` variables.
//
// Warp operations need a ballot, which no upstream dialect offers on all
// three targets, so they use each target's own: `llvm.nvvm.*` intrinsics on
// NVPTX (NVIDIA's instructions, bit-exact), `llvm.amdgcn.ballot` on AMDGPU
// (on wave64 chips the 32 bits of the lane's half-wave: lanes 0-31 and
// 32-63 are two CUDA warps) and OpenCL's `sub_group_ballot` on SPIR-V (the
// kernels require 32-wide sub-groups). Reductions and matches elsewhere are
// shuffles over the 32 lanes; like PTX they need every lane in `membermask`
// to execute them, and use the other lanes' values only where masked out.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

std::string zmlir::syncScopeName(const PTXLoweringState &state, Scope scope) {
  bool nvptx = state.target == "nvptx", amdgpu = state.target == "amdgpu";
  switch (scope) {
  case Scope::CTA:
    return nvptx ? "block" : "workgroup";
  case Scope::Cluster:
    return nvptx ? "cluster" : amdgpu ? "agent" : "device";
  case Scope::GPU:
    return nvptx ? "device" : amdgpu ? "agent" : "device";
  default:
    // System scope (and none given) is LLVM's default, cross-device scope.
    return "";
  }
}

namespace {

using IP = arith::CmpIPredicate;

/// The lane's index in its 32-lane warp.
Value warpLane(OpBuilder &b, Location loc, const PTXLoweringState &state) {
  Value lane = arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                            gpu::LaneIdOp::create(b, loc, nullptr));
  if (state.waveSize > 32)
    lane = arith::AndIOp::create(b, loc, lane, intConst(b, loc, b.getI32Type(), 31));
  return lane;
}

/// The declaration of `name` in the enclosing gpu.module, created on first
/// use.
LLVM::LLVMFuncOp declareFunction(OpBuilder &b, Operation *user, StringRef name,
                                 LLVM::LLVMFunctionType type) {
  auto module = user->getParentOfType<gpu::GPUModuleOp>();
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, user->getLoc(), name, type);
}

/// The 32-bit ballot of `pred` over the lane's warp, or null when the target
/// has none. `mask` is the PTX membermask (NVPTX uses it, the others ballot
/// over the active lanes, which include every lane of the mask).
Value ballot(OpBuilder &b, Operation *op, const PTXLoweringState &state, Value pred,
             Value mask) {
  Location loc = op->getLoc();
  mlir::Type i32 = b.getI32Type(), i64 = b.getI64Type();
  if (state.target == "nvptx")
    return callIntrinsic(b, loc, i32, "llvm.nvvm.vote.ballot.sync", ValueRange{mask, pred});
  if (state.target == "amdgpu") {
    if (state.waveSize == 32)
      return callIntrinsic(b, loc, i32, "llvm.amdgcn.ballot.i32", pred);
    Value wave = callIntrinsic(b, loc, i64, "llvm.amdgcn.ballot.i64", pred);
    Value lane = arith::IndexCastUIOp::create(b, loc, i64, gpu::LaneIdOp::create(b, loc, nullptr));
    Value half = arith::AndIOp::create(b, loc, lane, intConst(b, loc, i64, 32));
    return arith::TruncIOp::create(b, loc, i32, arith::ShRUIOp::create(b, loc, wave, half));
  }
  if (state.target == "spirv") {
    auto vec = VectorType::get({4}, i32);
    auto fn = declareFunction(b, op, "_Z16sub_group_balloti",
                              LLVM::LLVMFunctionType::get(vec, {i32}));
    Value arg = arith::ExtUIOp::create(b, loc, i32, pred);
    Value bits = LLVM::CallOp::create(b, loc, fn, ValueRange{arg}).getResult();
    return LLVM::ExtractElementOp::create(b, loc, bits, intConst(b, loc, i32, 0));
  }
  return Value();
}

Value shuffle(OpBuilder &b, Location loc, Value v, Value offset, gpu::ShuffleMode mode) {
  Value width = intConst(b, loc, b.getI32Type(), 32);
  return gpu::ShuffleOp::create(b, loc, v, offset, width, mode).getShuffleResult();
}

struct VoteSyncOpLowering : PTXPattern<VoteSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(VoteSyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mask = adaptor.getMembermask();
    Value bits = ballot(rewriter, op, state, adaptor.getPred(), mask);
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

  LogicalResult
  matchAndRewrite(ActivemaskOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value r;
    if (state.target == "nvptx") {
      r = callIntrinsic(rewriter, loc, rewriter.getI32Type(), "llvm.nvvm.activemask", {});
    } else {
      Value all = intConst(rewriter, loc, rewriter.getI32Type(), -1);
      r = ballot(rewriter, op, state, intConst(rewriter, loc, rewriter.getI1Type(), 1), all);
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

  LogicalResult
  matchAndRewrite(ReduxSyncOp op, OpAdaptor adaptor,
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
    if (state.target == "nvptx") {
      rewriter.replaceOp(op, callIntrinsic(rewriter, loc, i32,
                                           ("llvm.nvvm.redux.sync." + name).str(),
                                           ValueRange{a, mask}));
      return success();
    }
    Value lane = warpLane(rewriter, loc, state);
    Value inMask = arith::CmpIOp::create(
        rewriter, loc, IP::ne,
        arith::AndIOp::create(rewriter, loc, arith::ShRUIOp::create(rewriter, loc, mask, lane),
                              intConst(rewriter, loc, i32, 1)),
        intConst(rewriter, loc, i32, 0));
    Value v = arith::SelectOp::create(rewriter, loc, inMask, a, intConst(rewriter, loc, i32, identity));
    for (int offset = 16; offset >= 1; offset /= 2) {
      Value other = shuffle(rewriter, loc, v, intConst(rewriter, loc, i32, offset),
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

  LogicalResult
  matchAndRewrite(MatchSyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type(), i1 = rewriter.getI1Type();
    Value a = adaptor.getA(), mask = adaptor.getMembermask();
    bool wide = a.getType().isInteger(64);
    if (state.target == "nvptx") {
      std::string suffix = wide ? "i64" : "i32";
      if (op.getMode() == MatchMode::Any) {
        Value r = callIntrinsic(rewriter, loc, i32, "llvm.nvvm.match.any.sync." + suffix,
                                ValueRange{mask, a});
        rewriter.replaceOp(op, {r, intConst(rewriter, loc, i1, 1)});
        return success();
      }
      auto pair = LLVM::LLVMStructType::getLiteral(rewriter.getContext(), {i32, i1});
      Value r = callIntrinsic(rewriter, loc, pair, "llvm.nvvm.match.all.sync." + suffix + "p",
                              ValueRange{mask, a});
      rewriter.replaceOp(op, {LLVM::ExtractValueOp::create(rewriter, loc, r, 0),
                              LLVM::ExtractValueOp::create(rewriter, loc, r, 1)});
      return success();
    }
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
          rewriter, loc, IP::eq, shuffle(rewriter, loc, lo, index, gpu::ShuffleMode::IDX), lo);
      if (hi)
        eq = arith::AndIOp::create(
            rewriter, loc, eq,
            arith::CmpIOp::create(rewriter, loc, IP::eq,
                                  shuffle(rewriter, loc, hi, index, gpu::ShuffleMode::IDX), hi));
      Value bit = arith::ShLIOp::create(rewriter, loc, arith::ExtUIOp::create(rewriter, loc, i32, eq),
                                        index);
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

  LogicalResult
  matchAndRewrite(BarWarpSyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (state.target == "nvptx") {
      callIntrinsic(rewriter, loc, mlir::Type(), "llvm.nvvm.bar.warp.sync",
                    adaptor.getMembermask());
    } else {
      StringRef scope = state.target == "amdgpu" ? "wavefront" : "subgroup";
      LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::acq_rel, scope);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct FenceOpLowering : PTXPattern<FenceOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(FenceOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    LLVM::AtomicOrdering ordering = op.getSem() == Semantics::SC
                                        ? LLVM::AtomicOrdering::seq_cst
                                        : LLVM::AtomicOrdering::acq_rel;
    LLVM::FenceOp::create(rewriter, op.getLoc(), ordering, syncScopeName(state, op.getScope()));
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Calls and local memory
//===----------------------------------------------------------------------===//

struct CallOpLowering : PTXPattern<CallOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(CallOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getNumResults() > 1)
      return unsupported(op, "call with more than one return value");
    auto call = LLVM::CallOp::create(rewriter, op.getLoc(), op.getResultTypes(),
                                     op.getCalleeAttr(), adaptor.getArgs());
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

/// A `.local` variable is an alloca in the target's private address space;
/// its PTX address is the pointer as an integer.
///
/// NVPTX wants allocas in the generic space, cast to the local one (what
/// NVPTXLowerAlloca expects): LLVM 22 selects an addrspace(5) alloca's frame
/// index as the generic %SP, so its "local" address was a generic one and
/// local loads and stores through it faulted (CUDA_ERROR_ILLEGAL_ADDRESS on
/// the H200).
struct LocalVarOpLowering : PTXPattern<LocalVarOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(LocalVarOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto localType = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.local);
    bool nvptx = state.target == "nvptx";
    auto allocaType =
        nvptx ? LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic) : localType;
    // One array-typed element: SPIR-V has no array-sized allocas.
    auto arrayType = LLVM::LLVMArrayType::get(rewriter.getI8Type(), op.getSize());
    Value one = intConst(rewriter, loc, rewriter.getI64Type(), 1);
    Value ptr = LLVM::AllocaOp::create(rewriter, loc, allocaType, arrayType, one, op.getAlign());
    if (allocaType != localType)
      ptr = LLVM::AddrSpaceCastOp::create(rewriter, loc, localType, ptr);
    rewriter.replaceOpWithNewOp<LLVM::PtrToIntOp>(op, op.getRes().getType(), ptr);
    return success();
  }
};

} // namespace

void zmlir::populatePTXWarpPatterns(RewritePatternSet &patterns,
                                    const PTXLoweringState &state) {
  patterns.add<VoteSyncOpLowering, ActivemaskOpLowering, ReduxSyncOpLowering,
               MatchSyncOpLowering, BarWarpSyncOpLowering, FenceOpLowering, CallOpLowering,
               LocalVarOpLowering>(patterns.getContext(), state);
}
