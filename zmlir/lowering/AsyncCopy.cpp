//===- AsyncCopy.cpp - cp.async -------------------------------------------===//
//
// Where the target has asynchronous copies of its own
// (TargetInfo::hasNativeAsyncCopy: NVPTX), cp.async and its groups are
// those. Elsewhere cp.async copies synchronously: a copy complete when it is
// issued is one PTX allows (it only promises completion by the
// cp.async.wait_group of its group), and the copy is then an ordinary load
// and store of the thread, which bar.sync makes visible to the block like
// any other. So the group instructions have nothing left to do, and
// neither has cp.async.mbarrier.arrive without .noinc (Mbarrier.cpp).
//
// Bulk copies (cp.async.bulk) likewise: the target's own where it has them
// (TargetInfo::emitNativeBulkCopy), else a synchronous copy, then the
// complete_tx of its bytes on its mbarrier (Mbarrier.h); the bulk groups
// and fence.proxy.async have nothing left to do. A .shared::cluster address is the executing
// CTA's shared address there: the driver launches no cluster of more than
// one CTA on those targets.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/Mbarrier.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

/// cp.async: `size` bytes from global to shared memory, of which those from
/// `src_size` on (or all, with `ignore_src`) are zeros:
///  0. where the target has its own, that, given the source size unless it
///     is a constant of at least `size`; else
///  1. without a source size, or with a constant one of at least `size`, one
///     load and store of 32-bit words (i32, <2 x i32>, <4 x i32>): a vector
///     of bytes would cost Intel's CPU vectorizer a byte shuffle per lane
///     (globalToShmemAsyncCopy's sm_90 kernel ran 2x slower than the same
///     copy as ld.global.v4.u32, st.shared.v4.u32);
///  2. otherwise, if the source size is 0, the zeros, without touching the
///     source (which need not be valid then); else the source's `size`
///     bytes, those from the source size on replaced by zeros. The source
///     is aligned to `size` (PTX requires it), so that load stays within
///     the page of its first byte.
struct CpAsyncOpLowering : PTXPattern<CpAsyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CpAsyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t size = op.getSize();
    mlir::Type i32 = rewriter.getI32Type(), i8 = rewriter.getI8Type();
    FailureOr<Value> dst = pointerTo(op, rewriter, adaptor.getDst(), op.getDstOffset(),
                                     StateSpace::Shared);
    if (failed(dst))
      return failure();
    FailureOr<Value> src = pointerTo(op, rewriter, adaptor.getSrc(), op.getSrcOffset(),
                                     StateSpace::Global);
    if (failed(src))
      return failure();
    auto bytesType = VectorType::get({size}, i8);
    Value srcSize = adaptor.getSrcSize();
    if (Value ignore = adaptor.getIgnoreSrc())
      srcSize = arith::SelectOp::create(rewriter, loc, ignore, intConst(rewriter, loc, i32, 0),
                                        intConst(rewriter, loc, i32, size));
    std::optional<int64_t> constantSize = srcSize ? constantInt(srcSize) : std::optional(size);
    if (state.target.hasNativeAsyncCopy()) {
      state.target.emitAsyncCopy(rewriter, loc, *dst, *src, size, op.getCache(),
                                 constantSize && *constantSize >= size ? Value() : srcSize);
      rewriter.eraseOp(op);
      return success();
    }
    // 1.
    if (constantSize && *constantSize >= size) {
      mlir::Type words = size == 4 ? i32 : VectorType::get({size / 4}, i32);
      Value value = LLVM::LoadOp::create(rewriter, loc, words, *src, size);
      LLVM::StoreOp::create(rewriter, loc, value, *dst, size);
      rewriter.eraseOp(op);
      return success();
    }
    // 2.
    auto splat = [&](VectorType type, ArrayRef<int64_t> values) -> Value {
      SmallVector<Attribute> attrs;
      for (int64_t v : values)
        attrs.push_back(rewriter.getIntegerAttr(type.getElementType(), v));
      return arith::ConstantOp::create(rewriter, loc, type, DenseElementsAttr::get(type, attrs));
    };
    Value zeros = splat(bytesType, SmallVector<int64_t>(size, 0));
    Block *entry = rewriter.getInsertionBlock();
    Block *store = rewriter.splitBlock(entry, rewriter.getInsertionPoint());
    store->addArgument(bytesType, loc);
    Block *load = rewriter.createBlock(store);
    auto indexType = VectorType::get({size}, i32);
    SmallVector<int64_t> iota(size);
    for (int64_t i = 0; i < size; ++i)
      iota[i] = i;
    Value loaded = LLVM::LoadOp::create(rewriter, loc, bytesType, *src, size);
    Value limit = splatVector(rewriter, loc, srcSize, size);
    Value keep = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                       splat(indexType, iota), limit);
    Value bytes = arith::SelectOp::create(rewriter, loc, keep, loaded, zeros);
    cf::BranchOp::create(rewriter, loc, store, ValueRange{bytes});
    rewriter.setInsertionPointToEnd(entry);
    Value any = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, srcSize,
                                      intConst(rewriter, loc, i32, 0));
    cf::CondBranchOp::create(rewriter, loc, any, load, ValueRange{}, store, ValueRange{zeros});
    rewriter.setInsertionPointToStart(store);
    LLVM::StoreOp::create(rewriter, loc, store->getArgument(0), *dst, size);
    rewriter.eraseOp(op);
    return success();
  }
};

/// cp.async.commit_group: the target's own, or nothing (every copy is
/// complete when issued).
struct CpAsyncCommitGroupOpLowering : PTXPattern<CpAsyncCommitGroupOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CpAsyncCommitGroupOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (state.target.hasNativeAsyncCopy())
      state.target.emitAsyncCopyCommit(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

/// cp.async.wait_group and cp.async.wait_all: the target's own, or nothing.
struct CpAsyncWaitGroupOpLowering : PTXPattern<CpAsyncWaitGroupOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CpAsyncWaitGroupOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (state.target.hasNativeAsyncCopy())
      state.target.emitAsyncCopyWait(rewriter, op.getLoc(), op.getPending(), op.getAll());
    rewriter.eraseOp(op);
    return success();
  }
};

/// cp.async.bulk: the target's own, or
///  1. the pointers, a .shared::cluster one in the shared window;
///  2. the copy, 16 bytes (a <4 x i32>) at a time, as PTX requires a size
///     that is a multiple of 16 and addresses aligned to 16: unrolled for a
///     constant size of up to kUnrolledBulkBytes, else a loop of size / 16
///     steps (a size of 0 copies nothing);
///  3. with an mbarrier, the complete_tx of `size` bytes on it, now that
///     they are written.
struct CpAsyncBulkOpLowering : PTXPattern<CpAsyncBulkOp> {
  using PTXPattern::PTXPattern;
  static constexpr int64_t kUnrolledBulkBytes = 128;

  LogicalResult matchAndRewrite(CpAsyncBulkOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // 1.
    auto space = [](StateSpace s) {
      return s == StateSpace::SharedCluster ? StateSpace::Shared : s;
    };
    FailureOr<Value> dst = pointerTo(op, rewriter, adaptor.getDst(), op.getDstOffset(),
                                     space(op.getDstSpace()));
    if (failed(dst))
      return failure();
    FailureOr<Value> src = pointerTo(op, rewriter, adaptor.getSrc(), op.getSrcOffset(),
                                     space(op.getSrcSpace()));
    if (failed(src))
      return failure();
    SmallVector<Value> args{*dst, *src, adaptor.getSize()};
    if (Value mbar = adaptor.getMbar()) {
      FailureOr<Value> ptr = pointerTo(op, rewriter, mbar, op.getMbarOffset(), StateSpace::Shared);
      if (failed(ptr))
        return failure();
      args.push_back(*ptr);
    }
    if (succeeded(state.target.emitNativeBulkCopy(rewriter, op, args))) {
      rewriter.eraseOp(op);
      return success();
    }
    std::optional<int64_t> constantSize = constantInt(adaptor.getSize());
    if (constantSize && *constantSize % 16 != 0)
      return unsupported(op, Twine("cp.async.bulk of ") + Twine(*constantSize) +
                                 " bytes (a multiple of 16)");
    // 2.
    mlir::Type i64 = rewriter.getI64Type(), i8 = rewriter.getI8Type();
    auto chunk = VectorType::get({4}, rewriter.getI32Type());
    auto copyAt = [&](Value offset) {
      auto at = [&](Value ptr) {
        return LLVM::GEPOp::create(rewriter, loc, ptr.getType(), i8, ptr, ValueRange{offset});
      };
      Value v = LLVM::LoadOp::create(rewriter, loc, chunk, at(*src), /*alignment=*/16);
      LLVM::StoreOp::create(rewriter, loc, v, at(*dst), /*alignment=*/16);
    };
    if (constantSize && *constantSize <= kUnrolledBulkBytes) {
      for (int64_t offset = 0; offset < *constantSize; offset += 16)
        copyAt(intConst(rewriter, loc, i64, offset));
    } else {
      Value zero = intConst(rewriter, loc, i64, 0);
      Value steps = arith::ShRUIOp::create(
          rewriter, loc, arith::ExtUIOp::create(rewriter, loc, i64, adaptor.getSize()),
          intConst(rewriter, loc, i64, 4));
      Block *entry = rewriter.getInsertionBlock();
      Block *exit = rewriter.splitBlock(entry, rewriter.getInsertionPoint());
      Block *loop = rewriter.createBlock(exit, {i64}, {loc});
      Value step = loop->getArgument(0);
      copyAt(arith::ShLIOp::create(rewriter, loc, step, intConst(rewriter, loc, i64, 4)));
      Value next = arith::AddIOp::create(rewriter, loc, step, intConst(rewriter, loc, i64, 1));
      Value more = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, next, steps);
      cf::CondBranchOp::create(rewriter, loc, more, loop, ValueRange{next}, exit, ValueRange{});
      rewriter.setInsertionPointToEnd(entry);
      Value any = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, steps, zero);
      cf::CondBranchOp::create(rewriter, loc, any, loop, ValueRange{zero}, exit, ValueRange{});
      rewriter.setInsertionPointToStart(exit);
    }
    // 3.
    if (args.size() == 4)
      emitMbarrierCompleteTx(rewriter, loc, state, args[3], adaptor.getSize());
    rewriter.eraseOp(op);
    return success();
  }
};

/// cp.async.bulk.commit_group and cp.async.bulk.wait_group: the target's
/// own, or nothing (every bulk copy is complete when issued).
template <typename OpTy>
struct CpAsyncBulkGroupOpLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    (void)this->state.target.emitNativeBulkCopy(rewriter, op, {});
    rewriter.eraseOp(op);
    return success();
  }
};

/// fence.proxy.async: the target's own, or nothing: without a copy engine
/// of its own, a bulk copy is the thread's ordinary loads and stores, which
/// the generic proxy's order already covers.
struct FenceProxyAsyncOpLowering : PTXPattern<FenceProxyAsyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(FenceProxyAsyncOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    (void)state.target.emitNativeBulkCopy(rewriter, op, {});
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void zmlir::populatePTXAsyncCopyPatterns(RewritePatternSet &patterns,
                                         const PTXLoweringState &state) {
  patterns.add<CpAsyncOpLowering, CpAsyncCommitGroupOpLowering, CpAsyncWaitGroupOpLowering,
               CpAsyncBulkOpLowering, CpAsyncBulkGroupOpLowering<CpAsyncBulkCommitGroupOp>,
               CpAsyncBulkGroupOpLowering<CpAsyncBulkWaitGroupOp>, FenceProxyAsyncOpLowering>(
      patterns.getContext(), state);
}
