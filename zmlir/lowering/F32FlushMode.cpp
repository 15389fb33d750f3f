//===- F32FlushMode.cpp - `.ftz` as a function's f32 denormal mode --------===//
//
// nvcc's fast-math PTX is `.ftz` throughout: add.ftz.f32, fma.rn.ftz.f32,
// setp.lt.ftz.f32, ex2.approx.ftz.f32, ... Flushing each operand and result
// in software doubles such kernels (an integer mask and a select per
// value). Where the target can flush f32 subnormals itself
// (TargetInfo::f32FlushScope), a function whose f32 instructions are all
// `.ftz` gets LLVM's `denormal-fp-math-f32="preserve-sign,preserve-sign"`
// instead, and the patterns flush nothing there (inF32FlushMode). A
// function that mixes `.ftz` and plain f32 instructions keeps IEEE
// subnormals and the software flushing: the mode is the whole function's.
//
// SPIR-V has no such mode on Intel's OpenCL CPU runtime (it rejects
// DenormFlushToZero, SPV_KHR_float_controls' capability 4465), but its
// `-cl-denorms-are-zero` flushes the whole program, f64 with f32 (the
// MXCSR's DAZ and FTZ, as the kernel runs). So there the mode is the
// program's: every function of a module gets it where each could, and no
// f64 instruction depends on subnormals (programFlushesF32); the SPIR-V
// then asks its runtime for the option (targets/spirv/binary.py).
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

bool isF32Like(DataType type) {
  return type == DataType::F32 || type == DataType::BF16 || type == DataType::BF16x2;
}

/// Whether `op` computes on values of a type: a PTX type attribute of it
/// (`isData`) or an operand's or result's type (`isType`).
bool involves(Operation *op, llvm::function_ref<bool(DataType)> isData,
              llvm::function_ref<bool(mlir::Type)> isType) {
  for (NamedAttribute attr : op->getAttrs())
    if (auto type = dyn_cast<DataTypeAttr>(attr.getValue()); type && isData(type.getValue()))
      return true;
  return llvm::any_of(op->getOperandTypes(), isType) || llvm::any_of(op->getResultTypes(), isType);
}

/// Whether `op` computes on f32 values, or on bf16 values (computed in f32).
bool involvesF32(Operation *op) {
  return involves(op, isF32Like, [](mlir::Type t) { return t.isF32() || t.isBF16(); });
}

/// Whether `op` computes on f64 values.
bool involvesF64(Operation *op) {
  return involves(
      op, [](DataType type) { return type == DataType::F64; },
      [](mlir::Type t) { return t.isF64(); });
}

/// Whether an f32 conversion without `.ftz` gives the same result where f32
/// subnormals are flushed: from integers and f16 nothing is subnormal in
/// f32; a subnormal f32 rounds to a zero of f16 to nearest; bf16 and f32
/// convert to nearest on their bits (Convert.cpp, f32ToBf16Bits); an f32
/// subnormal truncated or rounded to the nearest integer is a zero of its
/// sign, as its flushed value is (not so rounded down or up: floor(-x) is
/// -1). nvcc's fast-math expf/coshf round with cvt.rzi.f32.f32.
bool cvtIgnoresSubnormals(CvtOp cvt) {
  DataType src = cvt.getSrcType(), dst = cvt.getType();
  Rounding rnd = cvt.getRnd();
  bool nearest = rnd == Rounding::None || rnd == Rounding::RN;
  return !isFloatType(src) || (src == DataType::F16 && dst == DataType::F32) ||
         (src == DataType::BF16 && dst == DataType::F32 && rnd == Rounding::None) ||
         (src == DataType::F32 && (dst == DataType::F16 || dst == DataType::BF16) && nearest) ||
         (src == DataType::F32 && dst == DataType::F32 &&
          (rnd == Rounding::RZI || rnd == Rounding::RNI));
}

/// Whether `value` is an f32 constant that is not subnormal.
bool isNonSubnormalConstant(Value value) {
  FloatAttr constant;
  return matchPattern(value, m_Constant(&constant)) && !constant.getValue().isDenormal();
}

/// Whether `op` (f32 or f64, without `.ftz`) would give another result
/// where subnormals are flushed. Ops with a `.ftz` form depend on it, and so
/// does any other op but those that move bits unchanged.
bool dependsOnSubnormals(Operation *op, const TargetInfo &target) {
  if (target.ignoresF32FlushMode(op))
    return false;
  if (auto cvt = dyn_cast<CvtOp>(op))
    return !cvtIgnoresSubnormals(cvt);
  // copysign d, a, b is |b| with a's sign: a flush to zero keeps a's sign,
  // so only a subnormal b would give another result (nvcc's fast-math
  // expf clamps with a constant b).
  if (auto copysign = dyn_cast<CopysignOp>(op))
    return !isNonSubnormalConstant(copysign->getOperand(1));
  // f32 to fp8 works on the bits (Convert.cpp), and an f32 subnormal gives
  // a zero of its sign either way.
  if (auto pack = dyn_cast<CvtPackOp>(op); pack && isFp8PairType(pack.getType()))
    return false;
  ArrayRef<StringAttr> attrs = op->getName().getRegisteredInfo()->getAttributeNames();
  if (llvm::any_of(attrs, [](StringAttr name) { return name.getValue() == "ftz"; }))
    return true;
  return !isa<LdOp, StOp, LdParamOp, StParamOp, MovOp, MovPackOp, MovUnpackOp, SelpOp, BraOp,
              CondBraOp, RetOp, CallOp, ShflSyncOp, TexOp, Tld4Op, SuldOp, SustOp>(op);
}

enum class Mode { Ieee, Flush, Either };

Mode requiredMode(Operation *ptxFunc, const TargetInfo &target) {
  bool anyFtz = false;
  WalkResult walk = ptxFunc->walk([&](Operation *op) {
    if (!isa_and_nonnull<PTXDialect>(op->getDialect()) || !involvesF32(op))
      return WalkResult::advance();
    if (op->hasAttr("ftz")) {
      anyFtz = true;
      return WalkResult::advance();
    }
    return dependsOnSubnormals(op, target) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return Mode::Ieee;
  return anyFtz ? Mode::Flush : Mode::Either;
}

/// Whether no f64 instruction of `ptxModule` depends on subnormals. A
/// `.ftz` one flushes its f32 operand or result (cvt.ftz.f64.f32,
/// cvt.rn.ftz.f32.f64) or its f64 operand (rcp.approx.ftz.f64) either way.
bool f64IgnoresFlushing(Operation *ptxModule, const TargetInfo &target) {
  WalkResult walk = ptxModule->walk([&](Operation *op) {
    bool depends = isa_and_nonnull<PTXDialect>(op->getDialect()) && involvesF64(op) &&
                   !op->hasAttr("ftz") && dependsOnSubnormals(op, target);
    return depends ? WalkResult::interrupt() : WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

} // namespace

bool zmlir::programFlushesF32(ModuleOp ptxModule, const TargetInfo &target) {
  if (target.f32FlushScope() != F32FlushScope::Program)
    return false;
  bool anyFlush = false;
  for (auto func : ptxModule.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    Mode mode = requiredMode(func, target);
    if (mode == Mode::Ieee)
      return false;
    anyFlush |= mode == Mode::Flush;
  }
  return anyFlush && f64IgnoresFlushing(ptxModule, target);
}

void zmlir::setF32DenormalMode(Operation *fn, Operation *ptxFunc, const TargetInfo &target,
                               bool programFlushes) {
  MLIRContext *ctx = fn->getContext();
  switch (target.f32FlushScope()) {
  case F32FlushScope::None:
    return;
  case F32FlushScope::Program:
    if (programFlushes)
      fn->setAttr(kF32DenormalModeAttr, StringAttr::get(ctx, kF32FlushToZeroMode));
    return;
  case F32FlushScope::Function:
    break;
  }
  switch (requiredMode(ptxFunc, target)) {
  case Mode::Ieee:
    return;
  case Mode::Flush:
    fn->setAttr(kF32DenormalModeAttr, StringAttr::get(ctx, kF32FlushToZeroMode));
    return;
  case Mode::Either:
    // A device function any caller may inline (LLVM inlines only between
    // functions of compatible modes); a kernel has no caller.
    if (!isa<gpu::GPUFuncOp>(fn))
      fn->setAttr(kF32DenormalModeAttr, StringAttr::get(ctx, "dynamic,dynamic"));
    return;
  }
}
