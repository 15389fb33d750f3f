//===- IndexNoWrap.cpp - Overflow flags from integer ranges ---------------===//
//
// PTX integer arithmetic wraps, so the lowering emits it without overflow
// flags. Much of it cannot wrap: address offsets built from %tid (< 1024),
// %ntid and constants. This pass runs MLIR's IntegerRangeAnalysis and
//
// 1. sets `overflow<nuw>` / `overflow<nsw>` on each integer addi, subi, muli
//    and shli whose exact result, over its operands' ranges, fits the type
//    without (unsigned, signed) wrapping;
// 2. where the target asks (TargetInfo::widensNoWrapExtensions), computes an
//    `arith.extui` of such an op in the wide type: extui(a op b) becomes
//    extui(a) op extui(b), recursively, down to constants, narrower values'
//    own extensions and index casts of values that fit the narrow type.
//    Exact in the wide type (the narrow op did not wrap), so nuw and nsw hold
//    there too. Likewise an `arith.extsi` of an nsw op: extsi(a op b) is
//    extsi(a) op extsi(b), exact, so nsw holds there.
// 3. with `grid-variants`, gives each kernel whose widening the grid's size
//    would change a variant for launches of at most kGridVariantX blocks in
//    x (and CUDA's 65535 in y and z): a copy named `<kernel>__zmlir_grid31`
//    whose %ctaid/%nctaid carry those bounds, so that `%ctaid.x * %ntid.x +
//    %tid.x` (below 2^31 there) is nuw and nsw and its extension computed in
//    64 bits. The driver launches it for such grids and the kernel itself for
//    any other, whose index wraps as CUDA's does. The copy carries
//    `zmlir.grid_variant_x`, the largest grid in x it serves.
//
// A flag is a promise to LLVM (poison otherwise), so only the analysis'
// ranges decide; the special registers' bounds come from the lowering.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/Passes.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace zmlir {
#define GEN_PASS_DEF_INDEXNOWRAP
#include "zmlir/lowering/Passes.h.inc"
} // namespace zmlir

using namespace mlir;

namespace {

/// The value's inferred range, if the analysis reached it.
std::optional<ConstantIntRanges> rangeOf(DataFlowSolver &solver, Value v) {
  auto *lattice = solver.lookupState<dataflow::IntegerValueRangeLattice>(v);
  if (!lattice || lattice->getValue().isUninitialized())
    return std::nullopt;
  return lattice->getValue().getValue();
}

/// Whether every a op b over the ranges is exact unsigned (nuw) and signed
/// (nsw) in the operands' width.
std::pair<bool, bool> noWrap(Operation *op, const ConstantIntRanges &a,
                             const ConstantIntRanges &b) {
  bool overflow = false;
  auto none = [&](auto fn, const APInt &x, const APInt &y) {
    overflow = false;
    (void)(x.*fn)(y, overflow);
    return !overflow;
  };
  return llvm::TypeSwitch<Operation *, std::pair<bool, bool>>(op)
      .Case([&](arith::AddIOp) {
        return std::pair{none(&APInt::uadd_ov, a.umax(), b.umax()),
                         none(&APInt::sadd_ov, a.smax(), b.smax()) &&
                             none(&APInt::sadd_ov, a.smin(), b.smin())};
      })
      .Case([&](arith::SubIOp) {
        return std::pair{a.umin().uge(b.umax()), none(&APInt::ssub_ov, a.smax(), b.smin()) &&
                                                     none(&APInt::ssub_ov, a.smin(), b.smax())};
      })
      .Case([&](arith::MulIOp) {
        bool nsw = none(&APInt::smul_ov, a.smin(), b.smin()) &&
                   none(&APInt::smul_ov, a.smin(), b.smax()) &&
                   none(&APInt::smul_ov, a.smax(), b.smin()) &&
                   none(&APInt::smul_ov, a.smax(), b.smax());
        return std::pair{none(&APInt::umul_ov, a.umax(), b.umax()), nsw};
      })
      .Case([&](arith::ShLIOp) {
        unsigned width = a.umax().getBitWidth();
        if (b.umax().uge(width))
          return std::pair{false, false};
        unsigned shift = b.umax().getZExtValue();
        return std::pair{a.umax().countl_zero() >= shift,
                         a.smin().getNumSignBits() > shift && a.smax().getNumSignBits() > shift};
      })
      .Default([](Operation *) { return std::pair{false, false}; });
}

/// Builds wide forms of narrow values, zero- or sign-extended, whose wide form
/// is exact: constants, no-wrap ops of such values (nuw for a zero
/// extension, nsw for a sign extension), extensions and index casts that
/// fit. Each value is widened once per type and kind.
class Widener {
public:
  Widener(llvm::SmallPtrSetImpl<Operation *> &fittingCasts,
          llvm::SmallPtrSetImpl<Operation *> &signedFittingCasts)
      : fittingCasts(fittingCasts), signedFittingCasts(signedFittingCasts) {}

  /// Whether `v`'s definition has a wide form better than extui(v) (extsi(v)
  /// where `isSigned`).
  bool widens(Value v, bool isSigned) const {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (auto cast = dyn_cast<arith::IndexCastUIOp>(def))
      return (isSigned ? signedFittingCasts : fittingCasts).contains(cast);
    if (isa<arith::AddIOp, arith::MulIOp, arith::ShLIOp>(def)) {
      auto flagged = cast<arith::ArithIntegerOverflowFlagsInterface>(def);
      return isSigned ? flagged.hasNoSignedWrap() : flagged.hasNoUnsignedWrap();
    }
    return false;
  }

  /// `v` (an integer narrower than `type`) zero- (sign-) extended to `type`.
  Value widen(Value v, IntegerType type, bool isSigned) {
    auto key = std::make_tuple(v, Type(type), unsigned(isSigned));
    if (Value done = widened.lookup(key))
      return done;
    Value wide = build(v, type, isSigned);
    widened[key] = wide;
    return wide;
  }

private:
  Value build(Value v, IntegerType type, bool isSigned) {
    OpBuilder b(v.getContext());
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    Location loc = v.getLoc();
    APInt constant;
    if (matchPattern(v, m_ConstantInt(&constant)))
      return arith::ConstantOp::create(
          b, loc,
          IntegerAttr::get(type, isSigned ? constant.sext(type.getWidth())
                                          : constant.zext(type.getWidth())));
    if (!widens(v, isSigned)) {
      // An extension of a narrower value, zero-extended: non-negative, so
      // either extension of it is its zero extension.
      if (auto ext = v.getDefiningOp<arith::ExtUIOp>())
        return arith::ExtUIOp::create(b, loc, type, ext.getIn());
      if (auto ext = v.getDefiningOp<arith::ExtSIOp>(); ext && isSigned)
        return arith::ExtSIOp::create(b, loc, type, ext.getIn());
      if (isSigned)
        return arith::ExtSIOp::create(b, loc, type, v);
      return arith::ExtUIOp::create(b, loc, type, v);
    }
    Operation *def = v.getDefiningOp();
    if (auto cast = dyn_cast<arith::IndexCastUIOp>(def))
      return arith::IndexCastUIOp::create(b, loc, type, cast.getIn());
    // The wide operands are built after their own definitions, which
    // dominate `def`: the wide op goes right after `def`. A shift amount is
    // below the width (else the narrow shift gave poison): zero-extended.
    Value lhs = widen(def->getOperand(0), type, isSigned);
    Value rhs = widen(def->getOperand(1), type, isSigned && !isa<arith::ShLIOp>(def));
    auto flags = arith::IntegerOverflowFlagsAttr::get(
        v.getContext(), isSigned
                            ? arith::IntegerOverflowFlags::nsw
                            : arith::IntegerOverflowFlags::nuw | arith::IntegerOverflowFlags::nsw);
    return llvm::TypeSwitch<Operation *, Value>(def)
        .Case([&](arith::AddIOp) { return arith::AddIOp::create(b, loc, lhs, rhs, flags); })
        .Case([&](arith::MulIOp) { return arith::MulIOp::create(b, loc, lhs, rhs, flags); })
        .Case([&](arith::ShLIOp) { return arith::ShLIOp::create(b, loc, lhs, rhs, flags); });
  }

  llvm::SmallPtrSetImpl<Operation *> &fittingCasts, &signedFittingCasts;
  llvm::DenseMap<std::tuple<Value, Type, unsigned>, Value> widened;
};

/// A grid variant serves launches of at most this many blocks in x: then
/// %ctaid.x * %ntid.x + %tid.x <= (2^21 - 2) * 1024 + 1023 and %nctaid.x *
/// %ntid.x <= 2^31 - 1024 fit an i32. In y and z, CUDA's limit.
constexpr int64_t kGridVariantX = (int64_t(1) << 21) - 1;
constexpr int64_t kGridVariantYZ = 65535;
constexpr llvm::StringLiteral kGridVariantSuffix = "__zmlir_grid31";
constexpr llvm::StringLiteral kGridVariantAttr = "zmlir.grid_variant_x";

/// A copy of `kernel` after it whose %ctaid and %nctaid carry the grid
/// variant's bounds.
gpu::GPUFuncOp gridVariant(gpu::GPUFuncOp kernel) {
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  auto variant = cast<gpu::GPUFuncOp>(b.clone(*kernel));
  variant.setName((kernel.getName() + kGridVariantSuffix).str());
  variant->setAttr(kGridVariantAttr, b.getI64IntegerAttr(kGridVariantX));
  auto bound = [&](gpu::Dimension dim) {
    return b.getIndexAttr(dim == gpu::Dimension::x ? kGridVariantX : kGridVariantYZ);
  };
  variant.walk([&](Operation *op) {
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      id.setUpperBoundAttr(bound(id.getDimension()));
    else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
      dim.setUpperBoundAttr(bound(dim.getDimension()));
  });
  return variant;
}

/// Whether `kernel` reads %ctaid or %nctaid, the only values whose ranges
/// its grid variant changes (its callees are analysed on their own).
bool readsGrid(gpu::GPUFuncOp kernel) {
  return kernel
      .walk([](Operation *op) {
        return isa<gpu::BlockIdOp, gpu::GridDimOp>(op) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
      })
      .wasInterrupted();
}

/// How many extensions of `fn` have a better wide form.
unsigned widenedExtensions(Operation *fn, const Widener &widener) {
  unsigned count = 0;
  fn->walk([&](Operation *op) {
    if (isa<arith::ExtUIOp, arith::ExtSIOp>(op) && isa<IntegerType>(op->getResult(0).getType()) &&
        widener.widens(op->getOperand(0), isa<arith::ExtSIOp>(op)))
      ++count;
  });
  return count;
}

/// IntegerRangeAnalysis of one function, which does not follow its calls: a
/// call's results take the ranges its callee, analysed before, returns (any
/// value where it was not: a declaration, a recursive call).
class CalleeRangeAnalysis : public dataflow::IntegerRangeAnalysis {
public:
  CalleeRangeAnalysis(DataFlowSolver &solver,
                      const llvm::DenseMap<Value, IntegerValueRange> &callResults)
      : IntegerRangeAnalysis(solver), callResults(callResults) {}

  void setToEntryState(dataflow::IntegerValueRangeLattice *lattice) override {
    auto it = callResults.find(lattice->getAnchor());
    if (it == callResults.end())
      return IntegerRangeAnalysis::setToEntryState(lattice);
    propagateIfChanged(lattice, lattice->join(it->second));
  }

private:
  const llvm::DenseMap<Value, IntegerValueRange> &callResults;
};

/// Analyses the integer ranges of each function on its own, its callees
/// first, its arguments at their widest; sets the overflow flags they prove
/// on its addi, subi, muli and shli and collects its index casts whose
/// operand fits the result (`signedFittingCasts`: with its sign bit clear).
///
/// One solver for a whole module followed calls, but each call site it
/// found revisited all those of the callee: dmmaTensorCoreGemm's 12298
/// calls of one emulated wmma.mma took 71 s. Analysed alone, a function
/// loses the ranges of its arguments where all its callers are visible (a
/// private one; the lowering emits none) and keeps those of its calls'
/// results.
class NoWrapMarker {
public:
  llvm::SmallPtrSet<Operation *, 16> fittingCasts, signedFittingCasts;

  LogicalResult mark(FunctionOpInterface fn) {
    if (!started.insert(fn).second)
      return success();
    llvm::DenseMap<Value, IntegerValueRange> callResults;
    SmallVector<CallOpInterface> calls;
    fn.walk([&](CallOpInterface call) { calls.push_back(call); });
    for (CallOpInterface call : calls) {
      auto callee = dyn_cast_if_present<FunctionOpInterface>(call.resolveCallableInTable(&symbols));
      if (!callee || callee.isExternal())
        continue;
      if (failed(mark(callee)))
        return failure();
      auto it = returned.find(callee);
      if (it == returned.end())
        continue; // a recursive call
      for (auto [result, range] : llvm::zip(call->getResults(), it->second))
        if (!range.isUninitialized())
          callResults[result] = range;
    }

    DataFlowSolver solver;
    // IntegerRangeAnalysis needs the dead-code analysis, which needs the
    // constant propagation: without it, sgemm's loop preheader (behind a
    // branch on a parameter) counted as dead and got no ranges.
    solver.load<dataflow::DeadCodeAnalysis>();
    solver.load<dataflow::SparseConstantPropagation>();
    solver.load<CalleeRangeAnalysis>(callResults);
    if (failed(solver.initializeAndRun(fn)))
      return failure();
    markOps(solver, fn);

    // What `fn` returns: the join over its live returns.
    SmallVector<IntegerValueRange> ranges(fn.getResultTypes().size());
    for (Block &block : fn.getFunctionBody()) {
      if (block.empty() || !block.back().hasTrait<OpTrait::ReturnLike>())
        continue;
      for (auto [range, value] : llvm::zip(ranges, block.back().getOperands())) {
        auto *lattice = solver.lookupState<dataflow::IntegerValueRangeLattice>(value);
        if (lattice && !lattice->getValue().isUninitialized())
          range = IntegerValueRange::join(range, lattice->getValue());
      }
    }
    returned[fn] = std::move(ranges);
    return success();
  }

private:
  void markOps(DataFlowSolver &solver, Operation *fn) {
    fn->walk([&](Operation *op) {
      if (auto cast = dyn_cast<arith::IndexCastUIOp>(op)) {
        auto type = dyn_cast<IntegerType>(cast.getType());
        std::optional<ConstantIntRanges> in = rangeOf(solver, cast.getIn());
        if (type && in && in->umax().getActiveBits() <= type.getWidth())
          fittingCasts.insert(cast);
        if (type && in && in->umax().getActiveBits() < type.getWidth())
          signedFittingCasts.insert(cast);
        return;
      }
      if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::ShLIOp>(op) ||
          !isa<IntegerType>(op->getResult(0).getType()))
        return;
      std::optional<ConstantIntRanges> a = rangeOf(solver, op->getOperand(0));
      std::optional<ConstantIntRanges> b = rangeOf(solver, op->getOperand(1));
      if (!a || !b)
        return;
      auto [nuw, nsw] = noWrap(op, *a, *b);
      auto flagged = cast<arith::ArithIntegerOverflowFlagsInterface>(op);
      arith::IntegerOverflowFlags flags = flagged.getOverflowAttr().getValue();
      if (nuw)
        flags = flags | arith::IntegerOverflowFlags::nuw;
      if (nsw)
        flags = flags | arith::IntegerOverflowFlags::nsw;
      op->setAttr(flagged.getIntegerOverflowAttrName(),
                  arith::IntegerOverflowFlagsAttr::get(op->getContext(), flags));
    });
  }

  SymbolTableCollection symbols;
  llvm::DenseSet<Operation *> started;
  /// Each analysed function's returned ranges, one per result.
  llvm::DenseMap<Operation *, SmallVector<IntegerValueRange>> returned;
};

struct IndexNoWrapPass : zmlir::impl::IndexNoWrapBase<IndexNoWrapPass> {
  using IndexNoWrapBase::IndexNoWrapBase;

  void runOnOperation() override {
    std::unique_ptr<zmlir::TargetInfo> targetInfo = zmlir::createTargetInfo(target, 32);
    bool widen = targetInfo->widensNoWrapExtensions();
    // Each kernel's grid variant, analysed like any function; kept below
    // only where it widens more than its kernel.
    llvm::SmallVector<std::pair<gpu::GPUFuncOp, gpu::GPUFuncOp>> variants;
    if (gridVariants && widen) {
      llvm::SmallVector<gpu::GPUFuncOp> kernels;
      getOperation()->walk([&](gpu::GPUFuncOp fn) {
        if (fn.isKernel() && !fn->hasAttr(kGridVariantAttr) && readsGrid(fn))
          kernels.push_back(fn);
      });
      for (gpu::GPUFuncOp kernel : kernels)
        variants.emplace_back(kernel, gridVariant(kernel));
    }

    NoWrapMarker marker;
    SmallVector<FunctionOpInterface> functions;
    getOperation()->walk<WalkOrder::PreOrder>([&](FunctionOpInterface fn) {
      if (!fn.isExternal())
        functions.push_back(fn);
      return WalkResult::skip();
    });
    for (FunctionOpInterface fn : functions)
      if (failed(marker.mark(fn)))
        return signalPassFailure();
    llvm::SmallPtrSetImpl<Operation *> &fittingCasts = marker.fittingCasts;
    llvm::SmallPtrSetImpl<Operation *> &signedFittingCasts = marker.signedFittingCasts;

    if (!widen)
      return;
    Widener widener(fittingCasts, signedFittingCasts);
    for (auto [kernel, variant] : variants) {
      if (widenedExtensions(variant, widener) > widenedExtensions(kernel, widener))
        continue;
      variant.walk([&](Operation *op) {
        fittingCasts.erase(op);
        signedFittingCasts.erase(op);
      });
      variant.erase(); // the grid's size changes nothing there
    }
    SmallVector<Operation *> extensions;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::ExtUIOp, arith::ExtSIOp>(op) && isa<IntegerType>(op->getResult(0).getType()) &&
          widener.widens(op->getOperand(0), isa<arith::ExtSIOp>(op)))
        extensions.push_back(op);
    });
    for (Operation *ext : extensions) {
      Value wide = widener.widen(ext->getOperand(0), cast<IntegerType>(ext->getResult(0).getType()),
                                 isa<arith::ExtSIOp>(ext));
      ext->getResult(0).replaceAllUsesWith(wide);
      ext->erase();
    }
  }
};

} // namespace
