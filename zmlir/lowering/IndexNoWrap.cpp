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
//    there too.
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
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
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

/// Builds wide (zero-extended) forms of narrow values whose wide form is
/// exact: constants, no-wrap ops of such values, extensions and index casts
/// that fit. Each value is widened once per type.
class Widener {
public:
  explicit Widener(llvm::SmallPtrSetImpl<Operation *> &fittingCasts) : fittingCasts(fittingCasts) {}

  /// Whether `v`'s definition has a wide form better than extui(v).
  bool widens(Value v) const {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (auto cast = dyn_cast<arith::IndexCastUIOp>(def))
      return fittingCasts.contains(cast);
    if (isa<arith::AddIOp, arith::MulIOp, arith::ShLIOp>(def))
      return cast<arith::ArithIntegerOverflowFlagsInterface>(def).hasNoUnsignedWrap();
    return false;
  }

  /// `v` (an integer narrower than `type`) zero-extended to `type`.
  Value widen(Value v, IntegerType type) {
    auto key = std::make_pair(v, type);
    if (Value done = widened.lookup(key))
      return done;
    Value wide = build(v, type);
    widened[key] = wide;
    return wide;
  }

private:
  Value build(Value v, IntegerType type) {
    OpBuilder b(v.getContext());
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    Location loc = v.getLoc();
    APInt constant;
    if (matchPattern(v, m_ConstantInt(&constant)))
      return arith::ConstantOp::create(b, loc,
                                       IntegerAttr::get(type, constant.zext(type.getWidth())));
    if (!widens(v)) {
      if (auto ext = v.getDefiningOp<arith::ExtUIOp>())
        return arith::ExtUIOp::create(b, loc, type, ext.getIn());
      return arith::ExtUIOp::create(b, loc, type, v);
    }
    Operation *def = v.getDefiningOp();
    if (auto cast = dyn_cast<arith::IndexCastUIOp>(def))
      return arith::IndexCastUIOp::create(b, loc, type, cast.getIn());
    // The wide operands are built after their own definitions, which
    // dominate `def`: the wide op goes right after `def`.
    Value lhs = widen(def->getOperand(0), type), rhs = widen(def->getOperand(1), type);
    auto flags = arith::IntegerOverflowFlagsAttr::get(
        v.getContext(), arith::IntegerOverflowFlags::nuw | arith::IntegerOverflowFlags::nsw);
    return llvm::TypeSwitch<Operation *, Value>(def)
        .Case([&](arith::AddIOp) { return arith::AddIOp::create(b, loc, lhs, rhs, flags); })
        .Case([&](arith::MulIOp) { return arith::MulIOp::create(b, loc, lhs, rhs, flags); })
        .Case([&](arith::ShLIOp) { return arith::ShLIOp::create(b, loc, lhs, rhs, flags); });
  }

  llvm::SmallPtrSetImpl<Operation *> &fittingCasts;
  llvm::DenseMap<std::pair<Value, Type>, Value> widened;
};

struct IndexNoWrapPass : zmlir::impl::IndexNoWrapBase<IndexNoWrapPass> {
  using IndexNoWrapBase::IndexNoWrapBase;

  void runOnOperation() override {
    DataFlowSolver solver;
    // IntegerRangeAnalysis needs the dead-code analysis, which needs the
    // constant propagation: without it, sgemm's loop preheader (behind a
    // branch on a parameter) counted as dead and got no ranges.
    solver.load<dataflow::DeadCodeAnalysis>();
    solver.load<dataflow::SparseConstantPropagation>();
    solver.load<dataflow::IntegerRangeAnalysis>();
    if (failed(solver.initializeAndRun(getOperation())))
      return signalPassFailure();

    llvm::SmallPtrSet<Operation *, 16> fittingCasts;
    getOperation()->walk([&](Operation *op) {
      if (auto cast = dyn_cast<arith::IndexCastUIOp>(op)) {
        auto type = dyn_cast<IntegerType>(cast.getType());
        std::optional<ConstantIntRanges> in = rangeOf(solver, cast.getIn());
        if (type && in && in->umax().getActiveBits() <= type.getWidth())
          fittingCasts.insert(cast);
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

    std::unique_ptr<zmlir::TargetInfo> targetInfo = zmlir::createTargetInfo(target, 32);
    if (!targetInfo->widensNoWrapExtensions())
      return;
    Widener widener(fittingCasts);
    SmallVector<arith::ExtUIOp> extensions;
    getOperation()->walk([&](arith::ExtUIOp ext) {
      if (isa<IntegerType>(ext.getType()) && widener.widens(ext.getIn()))
        extensions.push_back(ext);
    });
    for (arith::ExtUIOp ext : extensions) {
      ext.replaceAllUsesWith(widener.widen(ext.getIn(), cast<IntegerType>(ext.getType())));
      ext.erase();
    }
  }
};

} // namespace
