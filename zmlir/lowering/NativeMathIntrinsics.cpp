//===- NativeMathIntrinsics.cpp - Keep native LLVM math intrinsics --------===//
//
// convert-gpu-to-nvvm and convert-gpu-to-rocdl mark some LLVM math intrinsic
// ops illegal (llvm.intr.fabs, llvm.intr.floor, llvm.intr.ceil, ...): they
// want the math dialect lowered to libdevice (__nv_*) or OCML (__ocml_*)
// calls, which zmlir does not link. The NVPTX and AMDGPU backends lower
// these intrinsics to exact native instructions (abs, cvt.rmi, cvt.rpi,
// v_floor, ...), so this pass, run after convert-math-to-llvm and before the
// GPU conversion, rewrites each into the generic `llvm.call_intrinsic` of
// the same intrinsic (same operands, same fast-math flags), which those
// conversions keep. Intrinsics that the backends would expand into library
// calls or approximations (sin, cos, exp, log, pow, frem) are left alone, so
// the conversion still reports them.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace zmlir {
#define GEN_PASS_DEF_NATIVEMATHINTRINSICS
#include "zmlir/lowering/Passes.h.inc"
} // namespace zmlir

using namespace mlir;

namespace {

/// The LLVM intrinsic (without its type suffix, which the translation adds
/// from the operands) that `op` stands for, or "" if it is not one we keep.
StringRef nativeIntrinsicName(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringRef>(op)
      .Case([](LLVM::FAbsOp) { return "llvm.fabs"; })
      .Case([](LLVM::FFloorOp) { return "llvm.floor"; })
      .Case([](LLVM::FCeilOp) { return "llvm.ceil"; })
      .Case([](LLVM::RoundEvenOp) { return "llvm.roundeven"; })
      .Case([](LLVM::RoundOp) { return "llvm.round"; })
      .Case([](LLVM::SqrtOp) { return "llvm.sqrt"; })
      .Case([](LLVM::CopySignOp) { return "llvm.copysign"; })
      .Default([](Operation *) { return ""; });
}

struct NativeMathIntrinsicsPass : zmlir::impl::NativeMathIntrinsicsBase<NativeMathIntrinsicsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (!nativeIntrinsicName(op).empty())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      auto flags = cast<LLVM::FastmathFlagsInterface>(op).getFastmathAttr();
      auto call = LLVM::CallIntrinsicOp::create(
          b, op->getLoc(), op->getResultTypes(), b.getStringAttr(nativeIntrinsicName(op)),
          op->getOperands(), flags, {}, ArrayAttr(), ArrayAttr(), ArrayAttr());
      op->replaceAllUsesWith(call->getResults());
      op->erase();
    }
  }
};

} // namespace
