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
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

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

} // namespace

void zmlir::populatePTXAsyncCopyPatterns(RewritePatternSet &patterns,
                                         const PTXLoweringState &state) {
  patterns.add<CpAsyncOpLowering, CpAsyncCommitGroupOpLowering, CpAsyncWaitGroupOpLowering>(
      patterns.getContext(), state);
}
