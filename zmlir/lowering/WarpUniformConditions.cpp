//===- WarpUniformConditions.cpp - Thread-id tests a warp shares ---------===//
//
// CUDA code branches on the warp a thread is in: `if (threadIdx.x < 32)`
// around a warp's shuffles, `if (threadIdx.x / 32 == 1)`. Such a test has one
// answer for all 32 lanes of a warp, but a SPIR-V consumer sees a test of
// get_local_id(0), which differs across a sub-group's work-items: Intel's CPU
// vectorizer runs the branch's body under a mask and emulates each shuffle
// there one lane at a time (bench/results/cpu_kernels.md: reduce).
//
// A value of x = %tid.x that depends only on x & ~31 is the same for
// w = x - lane, where lane is the work-item's sub-group lane, whenever
// lane == x mod 32 (then w == x & ~31); and w, a consecutive value less
// another (masked with 992, as x < 1024), is visibly uniform across the
// sub-group. This pass rewrites, on w:
//   x < C, x >= C (C a multiple of 32), x > C, x <= C (C one below one),
//   signed or unsigned, and either way round;
//   x >> k (k >= 5), x / d (d a multiple of 32), x & m (m's low 5 bits clear).
//
// lane == x mod 32 holds where sub-groups are 32 consecutive linear ids
// (CUDA's warps) and the block is one-dimensional or %ntid.x is a multiple
// of 32 (Intel's CPU runtime forms them along x, which agrees there). A
// kernel that requires 32-wide sub-groups (`intel_reqd_sub_group_size` 32,
// the SPIR-V lowering's mark of a kernel whose warps are sub-groups) is
// launched only so: its launcher runs any other block as a one-dimensional
// work-group (zmlir/targets/spirv's work_group; the SPIR-V lowering reads
// CUDA's %tid from the linear id there, not x). So in such a kernel that
// branches on such a test, the tests are on w.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

namespace zmlir {
#define GEN_PASS_DEF_WARPUNIFORMCONDITIONS
#include "zmlir/lowering/Passes.h.inc"
} // namespace zmlir

using namespace mlir;

namespace {

using IP = arith::CmpIPredicate;

/// CUDA's limit on %ntid.x, which the driver checks at each launch: %tid.x <
/// 1024 (the lowering's bound on gpu.thread_id).
constexpr int64_t kMaxThreadsX = 1024;

/// Whether `v` is %tid.x: gpu.thread_id x, or an index cast or extension of
/// it, each of a type that holds x < 1024 exactly (index or at least 16
/// bits), so that `v` is x itself and not x modulo a narrow type.
bool isThreadIdX(Value v) {
  if (auto type = dyn_cast<IntegerType>(v.getType()); type && type.getWidth() < 16)
    return false;
  Operation *def = v.getDefiningOp();
  if (auto id = dyn_cast_or_null<gpu::ThreadIdOp>(def))
    return id.getDimension() == gpu::Dimension::x;
  if (isa_and_nonnull<arith::IndexCastUIOp, arith::IndexCastOp, arith::ExtUIOp, arith::ExtSIOp>(
          def))
    return isThreadIdX(def->getOperand(0));
  return false;
}

/// `p` with its operands swapped: C p x is x swap(p) C.
IP swapped(IP p) {
  switch (p) {
  case IP::ult:
    return IP::ugt;
  case IP::ule:
    return IP::uge;
  case IP::ugt:
    return IP::ult;
  case IP::uge:
    return IP::ule;
  case IP::slt:
    return IP::sgt;
  case IP::sle:
    return IP::sge;
  case IP::sgt:
    return IP::slt;
  case IP::sge:
    return IP::sle;
  default:
    return p;
  }
}

/// The operand of `op` that is %tid.x and may be replaced by x & ~31 without
/// changing the result, or -1. x is below 1024, so a test against any
/// constant C reads only x & ~31 when the boundary between its answers lies
/// at a multiple of 32: below C for `<` and `>=`, above it for `>` and `<=`.
int alignedOperand(Operation *op) {
  APInt c;
  auto lowBits = [&](const APInt &v) { return v.getLoBits(5).getZExtValue(); };
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    int x = -1;
    IP pred = cmp.getPredicate();
    if (isThreadIdX(cmp.getLhs()) && matchPattern(cmp.getRhs(), m_ConstantInt(&c))) {
      x = 0;
    } else if (isThreadIdX(cmp.getRhs()) && matchPattern(cmp.getLhs(), m_ConstantInt(&c))) {
      x = 1;
      pred = swapped(pred);
    } else {
      return -1;
    }
    switch (pred) {
    case IP::ult:
    case IP::uge:
    case IP::slt:
    case IP::sge:
      return lowBits(c) == 0 ? x : -1;
    case IP::ugt:
    case IP::ule:
    case IP::sgt:
    case IP::sle:
      return lowBits(c) == 31 ? x : -1;
    default:
      return -1;
    }
  }
  if (isa<arith::ShRUIOp, arith::DivUIOp>(op) && isThreadIdX(op->getOperand(0)) &&
      matchPattern(op->getOperand(1), m_ConstantInt(&c))) {
    if (isa<arith::ShRUIOp>(op))
      return c.uge(5) && c.ult(c.getBitWidth()) ? 0 : -1;
    return !c.isZero() && lowBits(c) == 0 ? 0 : -1;
  }
  if (auto andOp = dyn_cast<arith::AndIOp>(op)) {
    for (int x : {0, 1})
      if (isThreadIdX(op->getOperand(x)) &&
          matchPattern(op->getOperand(1 - x), m_ConstantInt(&c)) && lowBits(c) == 0)
        return x;
  }
  return -1;
}

/// Whether some op of `ops` decides a branch: its value reaches a
/// cf.cond_br's condition.
bool decidesBranch(ArrayRef<Operation *> ops) {
  for (Operation *op : ops) {
    SetVector<Operation *> slice;
    getForwardSlice(op, &slice);
    slice.insert(op);
    for (Operation *user : slice) {
      auto br = dyn_cast<cf::CondBranchOp>(user);
      if (br && slice.contains(br.getCondition().getDefiningOp()))
        return true;
    }
  }
  return false;
}

/// The ops of `region` with an aligned operand.
SmallVector<Operation *> alignedTests(Region &region) {
  SmallVector<Operation *> ops;
  region.walk([&](Operation *op) {
    if (alignedOperand(op) >= 0)
      ops.push_back(op);
  });
  return ops;
}

/// Puts `kernel`'s aligned tests on w, which its entry computes.
void testOnW(gpu::GPUFuncOp kernel) {
  Location loc = kernel.getLoc();
  SmallVector<Operation *> tests = alignedTests(kernel.getBody());
  // w = (x - lane) & 992: x & ~31 where lane == x mod 32 (x < 1024); the mask
  // only tells the integer range analysis that it lies in [0, 992] (a max
  // would too, but Intel's vectorizer takes llvm.smax of a uniform value for
  // a varying one).
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  // %tid.x as the lowering reads it (with its bound, for the range analysis).
  gpu::ThreadIdOp tid;
  kernel.getBody().walk([&](gpu::ThreadIdOp id) {
    if (!tid && id.getDimension() == gpu::Dimension::x)
      tid = id;
  });
  Value x = tid ? Value(b.clone(*tid)->getResult(0))
                : Value(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value lane = gpu::LaneIdOp::create(b, loc, /*upperBound=*/nullptr);
  Value w = arith::AndIOp::create(b, loc, arith::SubIOp::create(b, loc, x, lane),
                                  index(kMaxThreadsX - 32));
  llvm::DenseMap<Type, Value> wOfType{{w.getType(), w}};
  auto wAs = [&](Type type) {
    Value &v = wOfType[type];
    if (!v)
      v = arith::IndexCastUIOp::create(b, loc, type, w);
    return v;
  };
  for (Operation *op : tests) {
    int operand = alignedOperand(op);
    op->setOperand(operand, wAs(op->getOperand(operand).getType()));
  }
}

struct WarpUniformConditionsPass
    : zmlir::impl::WarpUniformConditionsBase<WarpUniformConditionsPass> {
  void runOnOperation() override {
    getOperation()->walk([](gpu::GPUFuncOp kernel) {
      auto width = kernel->getAttrOfType<IntegerAttr>("intel_reqd_sub_group_size");
      if (!kernel.isKernel() || !width || width.getInt() != 32)
        return;
      if (decidesBranch(alignedTests(kernel.getBody())))
        testOnW(kernel);
    });
  }
};

} // namespace
