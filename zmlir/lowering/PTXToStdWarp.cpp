//===- PTXToStdWarp.cpp - Warp-level ops, fences, calls, local memory -----===//
//
// Warp shuffles, votes, reductions, matches and elections, barriers, fences
// with scopes, atomics without a native form, direct and indirect device
// function calls and `.local` variables.
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

LLVM::LLVMFuncOp zmlir::declareFunction(OpBuilder &b, Operation *user, StringRef name,
                                        LLVM::LLVMFunctionType type) {
  auto module = user->getParentOfType<gpu::GPUModuleOp>();
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, user->getLoc(), name, type);
}

//===----------------------------------------------------------------------===//
// Atomics without a native form
//===----------------------------------------------------------------------===//

namespace {

/// `x + y` of two f16 or bf16 values given as i16 bits, rounded to nearest
/// even: the f32 sum of two 11- (8-) bit significands rounded once more to
/// 11 (8) bits is the correctly rounded sum (24 >= 2p + 2), subnormals
/// included. A NaN sum is NVIDIA's canonical NaN, 0x7fff.
Value halfAdd(OpBuilder &b, Location loc, Value x, Value y, bool bf16) {
  mlir::Type i16 = b.getI16Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
  auto widen = [&](Value bits) -> Value {
    if (bf16)
      return arith::BitcastOp::create(
          b, loc, f32,
          arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, bits),
                                intConst(b, loc, i32, 16)));
    Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
    return arith::ExtFOp::create(b, loc, f32, half);
  };
  Value sum = arith::AddFOp::create(b, loc, widen(x), widen(y));
  mlir::Type half = bf16 ? mlir::Type(b.getBF16Type()) : mlir::Type(b.getF16Type());
  Value r = asInteger(b, loc, narrowFloat(b, loc, sum, half, Rounding::RN));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, sum, sum);
  return arith::SelectOp::create(b, loc, isNaN, intConst(b, loc, i16, 0x7fff), r);
}

} // namespace

Value zmlir::emitAtomicCasLoop(ConversionPatternRewriter &rewriter, Location loc,
                               const PTXLoweringState &state, Value word, Value shift,
                               AtomicOp op, DataType type, Value b, Value c,
                               LLVM::AtomicOrdering ordering, StringRef scope,
                               bool flushF32) {
  // 1. Load the word; 2. in the loop, compute the new value of the operand's
  // bits from the word last seen and try to swap it in; 3. a failed swap
  // returns the word that is there now, and the loop tries again with it.
  mlir::Type i16 = rewriter.getI16Type(), i32 = rewriter.getI32Type();
  bool bf16 = type == DataType::BF16 || type == DataType::BF16x2;
  unsigned width = getTypeBitWidth(type) == 64 ? 64 : 32;
  mlir::Type wordType = rewriter.getIntegerType(width);
  Value initial = LLVM::LoadOp::create(rewriter, loc, wordType, word, /*alignment=*/width / 8,
                                       /*isVolatile=*/false, /*isNonTemporal=*/false,
                                       /*isInvariant=*/false, /*isInvariantGroup=*/false,
                                       LLVM::AtomicOrdering::monotonic, scope);
  Block *entry = rewriter.getInsertionBlock();
  Block *exit = rewriter.splitBlock(entry, rewriter.getInsertionPoint());
  Block *loop = rewriter.createBlock(exit, TypeRange{wordType}, {loc});
  Value seen = loop->getArgument(0);
  Value old = shift ? arith::TruncIOp::create(rewriter, loc, i16,
                                              arith::ShRUIOp::create(rewriter, loc, seen, shift))
                          .getResult()
                    : seen;
  Value updated;
  using IP = arith::CmpIPredicate;
  if (op == AtomicOp::Add && (type == DataType::F32 || type == DataType::F64)) {
    mlir::Type f = type == DataType::F32 ? mlir::Type(rewriter.getF32Type())
                                         : mlir::Type(rewriter.getF64Type());
    auto flush = [&](Value v) { return flushF32 ? flushSubnormal(rewriter, loc, v) : v; };
    Value x = flush(arith::BitcastOp::create(rewriter, loc, f, old));
    Value y = flush(arith::BitcastOp::create(rewriter, loc, f, b));
    Value sum = flush(arith::AddFOp::create(rewriter, loc, x, y));
    updated = arith::BitcastOp::create(rewriter, loc, wordType, sum);
  } else if (op == AtomicOp::Inc || op == AtomicOp::Dec) {
    // inc: old >= b ? 0 : old + 1; dec: old == 0 || old > b ? b : old - 1.
    Value zero = intConst(rewriter, loc, wordType, 0), one = intConst(rewriter, loc, wordType, 1);
    if (op == AtomicOp::Inc) {
      Value wrap = arith::CmpIOp::create(rewriter, loc, IP::uge, old, b);
      updated = arith::SelectOp::create(rewriter, loc, wrap, zero,
                                        arith::AddIOp::create(rewriter, loc, old, one));
    } else {
      Value wrap = arith::OrIOp::create(rewriter, loc,
                                        arith::CmpIOp::create(rewriter, loc, IP::eq, old, zero),
                                        arith::CmpIOp::create(rewriter, loc, IP::ugt, old, b));
      updated = arith::SelectOp::create(rewriter, loc, wrap, b,
                                        arith::SubIOp::create(rewriter, loc, old, one));
    }
  } else if (op == AtomicOp::Add && shift) {
    updated = halfAdd(rewriter, loc, old, b, bf16);
  } else if (op == AtomicOp::Add) {
    // Packed pairs: each half separately.
    auto part = [&](Value v, int64_t at) -> Value {
      return arith::TruncIOp::create(
          rewriter, loc, i16, arith::ShRUIOp::create(rewriter, loc, v, intConst(rewriter, loc, i32, at)));
    };
    Value lo = halfAdd(rewriter, loc, part(old, 0), part(b, 0), bf16);
    Value hi = halfAdd(rewriter, loc, part(old, 16), part(b, 16), bf16);
    updated = arith::OrIOp::create(
        rewriter, loc, arith::ExtUIOp::create(rewriter, loc, i32, lo),
        arith::ShLIOp::create(rewriter, loc, arith::ExtUIOp::create(rewriter, loc, i32, hi),
                              intConst(rewriter, loc, i32, 16)));
  } else if (op == AtomicOp::Cas) {
    Value equal = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, old, b);
    updated = arith::SelectOp::create(rewriter, loc, equal, c, old);
  } else {
    updated = b; // exch
  }
  Value next = updated;
  if (shift) {
    Value mask = arith::ShLIOp::create(rewriter, loc, intConst(rewriter, loc, i32, 0xffff), shift);
    Value rest = arith::AndIOp::create(
        rewriter, loc, seen, arith::XOrIOp::create(rewriter, loc, mask, intConst(rewriter, loc, i32, -1)));
    next = arith::OrIOp::create(
        rewriter, loc, rest,
        arith::ShLIOp::create(rewriter, loc, arith::ExtUIOp::create(rewriter, loc, i32, updated), shift));
  }
  LLVM::AtomicOrdering failure = ordering == LLVM::AtomicOrdering::acq_rel ||
                                         ordering == LLVM::AtomicOrdering::acquire
                                     ? LLVM::AtomicOrdering::acquire
                                     : LLVM::AtomicOrdering::monotonic;
  Value pair = LLVM::AtomicCmpXchgOp::create(rewriter, loc, word, seen, next, ordering, failure, scope);
  Value now = LLVM::ExtractValueOp::create(rewriter, loc, pair, ArrayRef<int64_t>{0});
  Value swapped = LLVM::ExtractValueOp::create(rewriter, loc, pair, ArrayRef<int64_t>{1});
  cf::CondBranchOp::create(rewriter, loc, swapped, exit, ValueRange{}, loop, ValueRange{now});
  rewriter.setInsertionPointToEnd(entry);
  cf::BranchOp::create(rewriter, loc, loop, ValueRange{initial});
  rewriter.setInsertionPointToStart(exit);
  return old;
}

//===----------------------------------------------------------------------===//
// Function addresses and indirect calls
//===----------------------------------------------------------------------===//

LogicalResult zmlir::expandIndirectCalls(gpu::GPUModuleOp module, const PTXLoweringState &state) {
  // 1. The address-taken functions, sorted by name: the index is the
  //    address (after kFuncAddressBase), the same in every compile of the
  //    module.
  SmallVector<FuncAddrOp> addrs;
  module.walk([&](FuncAddrOp op) { addrs.push_back(op); });
  SmallVector<CallIndirectOp> calls;
  module.walk([&](CallIndirectOp op) { calls.push_back(op); });
  if (addrs.empty() && calls.empty())
    return success();
  std::vector<std::string> names;
  for (FuncAddrOp op : addrs) {
    StringRef name = op.getCallee();
    if (!module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return op.emitError("unsupported address of '")
             << name << "' (not a .func defined in this module)";
    names.push_back(name.str());
  }
  llvm::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (FuncAddrOp op : addrs) {
    OpBuilder b(op);
    uint64_t index = llvm::lower_bound(names, op.getCallee().str()) - names.begin();
    auto encoding = static_cast<int64_t>(kFuncAddressBase + index);
    // In a variable's initializer (buildAddressInitializer) it must be an
    // LLVM constant; in code an arith one like every other.
    Value address =
        op->getParentOfType<LLVM::GlobalOp>()
            ? LLVM::ConstantOp::create(b, op.getLoc(), b.getI64Type(), encoding).getResult()
            : intConst(b, op.getLoc(), b.getI64Type(), encoding);
    op.getResult().replaceAllUsesWith(address);
    op.erase();
  }
  // 2. Each indirect call: a switch over the functions of its signature,
  //    each case a direct call; the default case traps, like a call through
  //    a bad pointer on NVIDIA's GPUs.
  for (CallIndirectOp call : calls) {
    if (call.getNumResults() > 1)
      return call.emitError("unsupported indirect call with more than one return value");
    Location loc = call.getLoc();
    Block *before = call->getBlock();
    Block *after = before->splitBlock(call);
    SmallVector<Location> locs(call.getNumResults(), loc);
    after->addArguments(call.getResultTypes(), locs);
    Region *region = before->getParent();
    OpBuilder b(call.getContext());
    SmallVector<APInt> values;
    SmallVector<Block *> cases;
    for (auto [index, name] : llvm::enumerate(names)) {
      auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      LLVM::LLVMFunctionType type = fn.getFunctionType();
      bool resultMatches = call.getNumResults() == 0
                               ? isa<LLVM::LLVMVoidType>(type.getReturnType())
                               : type.getReturnType() == call.getResult(0).getType();
      if (!resultMatches || type.getParams() != ArrayRef<mlir::Type>(llvm::to_vector(call.getArgs().getTypes())))
        continue;
      Block *block = b.createBlock(region, Region::iterator(after));
      auto direct = CallOp::create(b, loc, call.getResultTypes(), name, call.getArgs(),
                                   call.getUni());
      cf::BranchOp::create(b, loc, after, direct.getResults());
      values.push_back(APInt(64, kFuncAddressBase + index));
      cases.push_back(block);
    }
    Block *bad = b.createBlock(region, Region::iterator(after));
    state.target.emitTrap(b, loc, state);
    b.setInsertionPointToEnd(before);
    SmallVector<ValueRange> noOperands(cases.size(), ValueRange{});
    cf::SwitchOp::create(b, loc, call.getCallee(), bad, ValueRange{}, values, cases, noOperands);
    call.replaceAllUsesWith(after->getArguments());
    call.erase();
  }
  return success();
}

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

Value shuffle(OpBuilder &b, Location loc, const PTXLoweringState &state, Value v,
              Value offset, gpu::ShuffleMode mode) {
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

  LogicalResult
  matchAndRewrite(ShflSyncOp op, OpAdaptor adaptor,
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

  LogicalResult
  matchAndRewrite(VoteSyncOp op, OpAdaptor adaptor,
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

  LogicalResult
  matchAndRewrite(ActivemaskOp op, OpAdaptor,
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
    Value v = arith::SelectOp::create(rewriter, loc, inMask, a, intConst(rewriter, loc, i32, identity));
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

  LogicalResult
  matchAndRewrite(MatchSyncOp op, OpAdaptor adaptor,
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
          rewriter, loc, IP::eq, shuffle(rewriter, loc, state, lo, index, gpu::ShuffleMode::IDX), lo);
      if (hi)
        eq = arith::AndIOp::create(
            rewriter, loc, eq,
            arith::CmpIOp::create(rewriter, loc, IP::eq,
                                  shuffle(rewriter, loc, state, hi, index, gpu::ShuffleMode::IDX), hi));
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
    if (failed(state.target.emitNativeWarpSync(rewriter, loc, adaptor.getMembermask())))
      LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::acq_rel,
                            state.target.warpFenceScope());
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
    LLVM::FenceOp::create(rewriter, op.getLoc(), ordering, state.target.syncScopeName(op.getScope()));
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

/// The number of threads in the CTA, as an i32.
Value blockThreads(OpBuilder &b, Location loc) {
  Value n = arith::MulIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, gpu::BlockDimOp::create(b, loc, gpu::Dimension::x),
                            gpu::BlockDimOp::create(b, loc, gpu::Dimension::y)),
      gpu::BlockDimOp::create(b, loc, gpu::Dimension::z));
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), n);
}

/// Off NVPTX a barrier is the work-group barrier, which waits for every
/// thread of the CTA: the PTX barrier is that one when it has no thread
/// count (all threads, whatever the barrier id) or a count equal to the
/// CTA's size. OpenCL and AMDGPU have no named or partial barriers, so
///  1. a constant count that differs from a `.reqntid` block size is a
///     compile-time error;
///  2. any other count is compared with the CTA size at run time, and a
///     barrier over part of the CTA traps (never a full barrier where a
///     partial one was asked for, which could deadlock or reorder).
LogicalResult emitFullBarrier(Operation *op, Value count, ConversionPatternRewriter &rewriter,
                              const PTXLoweringState &state) {
  Location loc = op->getLoc();
  if (count) {
    std::optional<int64_t> c = constantInt(count);
    auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
    auto reqntid = kernel ? kernel->getAttrOfType<DenseI64ArrayAttr>("ptx.reqntid")
                          : DenseI64ArrayAttr();
    if (c && reqntid) {
      int64_t threads = 1;
      for (int64_t d : reqntid.asArrayRef())
        threads *= d;
      if (*c != threads)
        return op->emitError("unsupported barrier over ")
               << *c << " of the CTA's " << threads << " threads on target '" << state.target.getName()
               << "' (only whole-CTA barriers)";
      count = Value();
    }
  }
  if (count) {
    Value whole = arith::CmpIOp::create(rewriter, loc, IP::eq, count, blockThreads(rewriter, loc));
    Block *block = rewriter.getInsertionBlock();
    Block *cont = rewriter.splitBlock(block, rewriter.getInsertionPoint());
    Block *partial = rewriter.createBlock(cont);
    state.target.emitTrap(rewriter, loc, state);
    rewriter.setInsertionPointToEnd(block);
    cf::CondBranchOp::create(rewriter, loc, whole, cont, ValueRange{}, partial, ValueRange{});
    rewriter.setInsertionPointToStart(cont);
  }
  gpu::BarrierOp::create(rewriter, loc);
  return success();
}

struct BarSyncOpLowering : PTXPattern<BarSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(BarSyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (succeeded(state.target.lowerNative(op, adaptor, rewriter)))
      return success();
    if (failed(emitFullBarrier(op, adaptor.getCount(), rewriter, state)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// bar.arrive: on AMDGPU a full barrier when the count is the CTA's size.
/// The arriving threads then also wait, which PTX allows (the barrier
/// completes once every thread has arrived), and they need not meet the
/// waiting ones at the same barrier instruction: s_barrier counts the
/// wavefronts that reach any s_barrier. OpenCL's work-group barrier must be
/// reached by all work-items at the same barrier; Intel's CPU runtime gives
/// wrong results (arrive and sync in two branches) or crashes its compiler
/// otherwise, so SPIR-V rejects bar.arrive.
struct BarArriveOpLowering : PTXPattern<BarArriveOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(BarArriveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (succeeded(state.target.lowerNative(op, adaptor, rewriter)))
      return success();
    if (!state.target.arrivesAtFullBarrier())
      return unsupported(op, Twine("'bar.arrive' on target '") + state.target.getName() +
                                 "' (its work-group barrier must be reached by every thread "
                                 "at the same instruction)");
    if (failed(emitFullBarrier(op, adaptor.getCount(), rewriter, state)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// bar.red: NVIDIA's instruction on NVPTX. Elsewhere a counter at the start
/// of the shared window counts the true predicates:
///  1. each thread reads the counter before the first barrier (no thread
///     adds to it before everyone has passed that barrier, and after the
///     previous bar.red's second barrier no one does until then);
///  2. after the barrier every thread adds its predicate (0 or 1);
///  3. after a second barrier the counter has grown by the popc, read as
///     the difference with step 1 (modulo 2^32, so it is never reset).
/// .and is popc == the number of threads, .or popc != 0.
struct BarRedOpLowering : PTXPattern<BarRedOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(BarRedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type();
    if (succeeded(state.target.lowerNative(op, adaptor, rewriter)))
      return success();
    Value count = adaptor.getCount();
    auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
    Value window = kernel ? state.sharedWindows.lookup(kernel) : Value();
    if (!window || !state.barrierCounters.contains(kernel))
      return unsupported(op, "'bar.red' in a '.func' (its counter is in the kernel's shared "
                             "window)");
    Value before = LLVM::LoadOp::create(rewriter, loc, i32, window, /*alignment=*/4,
                                        /*isVolatile=*/true);
    if (failed(emitFullBarrier(op, count, rewriter, state)))
      return failure();
    Value one = arith::ExtUIOp::create(rewriter, loc, i32, adaptor.getPred());
    LLVM::AtomicRMWOp::create(rewriter, loc, LLVM::AtomicBinOp::add, window, one,
                              LLVM::AtomicOrdering::monotonic, "workgroup");
    gpu::BarrierOp::create(rewriter, loc);
    Value after = LLVM::LoadOp::create(rewriter, loc, i32, window, /*alignment=*/4,
                                       /*isVolatile=*/true);
    Value popc = arith::SubIOp::create(rewriter, loc, after, before);
    Value r;
    switch (op.getMode()) {
    case BarRedMode::Popc:
      r = popc;
      break;
    case BarRedMode::And:
      r = arith::CmpIOp::create(rewriter, loc, IP::eq, popc, blockThreads(rewriter, loc));
      break;
    case BarRedMode::Or:
      r = arith::CmpIOp::create(rewriter, loc, IP::ne, popc, intConst(rewriter, loc, i32, 0));
      break;
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct TrapOpLowering : PTXPattern<TrapOp> {
  using PTXPattern::PTXPattern;

  LogicalResult
  matchAndRewrite(TrapOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    state.target.emitTrap(rewriter, op.getLoc(), state);
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

  LogicalResult
  matchAndRewrite(ElectSyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mask = adaptor.getMembermask();
    Value bits = state.target.ballot(rewriter, op, intConst(rewriter, loc, rewriter.getI1Type(), 1), mask);
    if (!bits)
      return unsupported(op, "'elect.sync' for the generic target (no ballot)");
    bits = arith::AndIOp::create(rewriter, loc, bits, mask);
    Value leader = math::CountTrailingZerosOp::create(rewriter, loc, bits);
    Value elected = arith::CmpIOp::create(rewriter, loc, IP::eq, warpLane(rewriter, loc, state), leader);
    rewriter.replaceOp(op, {leader, elected});
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
    // A `.extern .func` (malloc, vprintf, ...) has no body to call here.
    if (!SymbolTable::lookupNearestSymbolFrom<LLVM::LLVMFuncOp>(op, op.getCalleeAttr()))
      return unsupported(op, Twine("call of '") + op.getCallee() +
                                 "' (not a .func defined in this module)");
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
    auto allocaType = state.target.allocatesLocalInGeneric()
                          ? LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic)
                          : localType;
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
  patterns.add<ShflSyncOpLowering, VoteSyncOpLowering, ActivemaskOpLowering, ReduxSyncOpLowering,
               MatchSyncOpLowering, BarWarpSyncOpLowering, FenceOpLowering, CallOpLowering,
               LocalVarOpLowering, BarSyncOpLowering, BarArriveOpLowering, BarRedOpLowering,
               ElectSyncOpLowering, TrapOpLowering>(patterns.getContext(), state);
}
