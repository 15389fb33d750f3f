//===- PTXLowering.h - Shared pieces of the ptx lowering -------*- C++ -*-===//
//
// Small builders the convert-ptx-to-std patterns (and the targets'
// TargetInfo) share, and the PTXPattern base class. Internal to
// zmlir/lowering and zmlir/targets; the state the patterns read
// (PTXLoweringState) is in Patterns.h.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_PTXLOWERING_H
#define ZMLIR_LOWERING_PTXLOWERING_H

#include "zmlir/dialects/ptx/PTXDialect.h"
#include "zmlir/lowering/Passes.h"
#include "zmlir/lowering/TargetInfo.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace zmlir {

using namespace mlir;
using namespace zmlir::ptx;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

inline Value intConst(OpBuilder &b, Location loc, mlir::Type type, int64_t value) {
  return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
}

inline Value floatConst(OpBuilder &b, Location loc, mlir::Type type, double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

inline unsigned widthOf(mlir::Type type) {
  return type.getIntOrFloatBitWidth();
}

/// Builds integer arith ops at one location, each method named after the op
/// it creates (upstream's ArithBuilder has no shifts, or, min/max or compare
/// predicates).
struct IntArithBuilder {
  OpBuilder &b;
  Location loc;

  Value constant(mlir::Type t, int64_t v) const { return intConst(b, loc, t, v); }
  Value c32(int64_t v) const { return constant(b.getI32Type(), v); }
  Value c64(int64_t v) const { return constant(b.getI64Type(), v); }
  Value addi(Value x, Value y) const { return arith::AddIOp::create(b, loc, x, y); }
  Value subi(Value x, Value y) const { return arith::SubIOp::create(b, loc, x, y); }
  Value muli(Value x, Value y) const { return arith::MulIOp::create(b, loc, x, y); }
  Value remsi(Value x, Value y) const { return arith::RemSIOp::create(b, loc, x, y); }
  Value andi(Value x, Value y) const { return arith::AndIOp::create(b, loc, x, y); }
  Value ori(Value x, Value y) const { return arith::OrIOp::create(b, loc, x, y); }
  Value xori(Value x, Value y) const { return arith::XOrIOp::create(b, loc, x, y); }
  Value shli(Value x, Value n) const { return arith::ShLIOp::create(b, loc, x, n); }
  Value shrui(Value x, Value n) const { return arith::ShRUIOp::create(b, loc, x, n); }
  Value shrsi(Value x, Value n) const { return arith::ShRSIOp::create(b, loc, x, n); }
  Value minsi(Value x, Value y) const { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxsi(Value x, Value y) const { return arith::MaxSIOp::create(b, loc, x, y); }
  Value minui(Value x, Value y) const { return arith::MinUIOp::create(b, loc, x, y); }
  Value maxui(Value x, Value y) const { return arith::MaxUIOp::create(b, loc, x, y); }
  Value cmpi(arith::CmpIPredicate p, Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) const { return arith::SelectOp::create(b, loc, c, x, y); }
  Value trunci(mlir::Type t, Value x) const { return arith::TruncIOp::create(b, loc, t, x); }
  Value extsi(mlir::Type t, Value x) const { return arith::ExtSIOp::create(b, loc, t, x); }
  Value extui(mlir::Type t, Value x) const { return arith::ExtUIOp::create(b, loc, t, x); }
};

/// The MLIR type of memory accessed by a PTX data type.
inline mlir::Type memoryType(MLIRContext *ctx, DataType type) {
  switch (type) {
  case DataType::F16:
    return Float16Type::get(ctx);
  case DataType::BF16:
    return BFloat16Type::get(ctx);
  case DataType::F32:
    return Float32Type::get(ctx);
  case DataType::F64:
    return Float64Type::get(ctx);
  default:
    return IntegerType::get(ctx, getTypeBitWidth(type));
  }
}

/// Reinterprets `value` as an integer of the same width.
inline Value asInteger(OpBuilder &b, Location loc, Value value) {
  mlir::Type type = value.getType();
  if (type.isInteger())
    return value;
  return arith::BitcastOp::create(b, loc, b.getIntegerType(widthOf(type)), value);
}

/// Converts `value` to `target` the way a PTX register move does when the
/// instruction type and the register differ: bitcast at equal width, else
/// truncate or extend (signed when `isSigned`) the bits.
inline Value adjustBits(OpBuilder &b, Location loc, Value value, mlir::Type target, bool isSigned) {
  mlir::Type source = value.getType();
  if (source == target)
    return value;
  unsigned from = widthOf(source), to = widthOf(target);
  if (from == to)
    return arith::BitcastOp::create(b, loc, target, value);
  Value bits = asInteger(b, loc, value);
  mlir::Type intTarget = b.getIntegerType(to);
  if (to < from)
    bits = arith::TruncIOp::create(b, loc, intTarget, bits);
  else if (isSigned)
    bits = arith::ExtSIOp::create(b, loc, intTarget, bits);
  else
    bits = arith::ExtUIOp::create(b, loc, intTarget, bits);
  if (target.isInteger())
    return bits;
  return arith::BitcastOp::create(b, loc, target, bits);
}

/// Flushes a subnormal f32 to a zero of the same sign (PTX `.ftz`).
inline Value flushSubnormal(OpBuilder &b, Location loc, Value value) {
  if (!value.getType().isF32())
    return value;
  mlir::Type i32 = b.getI32Type();
  Value bits = arith::BitcastOp::create(b, loc, i32, value);
  Value exponent = arith::AndIOp::create(b, loc, bits, intConst(b, loc, i32, 0x7f800000));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exponent,
                                            intConst(b, loc, i32, 0));
  Value sign = arith::AndIOp::create(b, loc, bits,
                                     intConst(b, loc, i32, static_cast<int32_t>(0x80000000u)));
  Value zero = arith::BitcastOp::create(b, loc, value.getType(), sign);
  return arith::SelectOp::create(b, loc, isSubnormal, zero, value);
}

/// PTX's `.ftz` of `r`, an f32 result rounded to nearest: a zero of its sign
/// where the result is tiny after rounding with an unbounded exponent, as
/// NVIDIA's GPUs decide (an H100: mul.rn.ftz.f32 of 1 - 2^-24 by 2^-126 is
/// 0, where rounding to the subnormal format gives 2^-126, and 1 - 2^-23 by
/// 2^-126 (1 + 2^-23) is 2^-126). `scaled` is the same operation with its
/// result 2^24 times larger, rounded in the normal range: below 2^-102
/// exactly where the result is tiny.
inline Value flushTinyNearest(OpBuilder &b, Location loc, Value r, Value scaled) {
  mlir::Type i32 = b.getI32Type();
  auto magnitude = [&](Value v) {
    return arith::AndIOp::create(b, loc, arith::BitcastOp::create(b, loc, i32, v),
                                 intConst(b, loc, i32, 0x7fffffff));
  };
  Value atSmallestNormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, magnitude(r),
                                                 intConst(b, loc, i32, 0x00800000));
  Value scaledTiny = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, magnitude(scaled),
                                           intConst(b, loc, i32, 0x0c800000)); // 2^-102
  Value tiny = arith::AndIOp::create(b, loc, atSmallestNormal, scaledTiny);
  Value sign = arith::AndIOp::create(b, loc, arith::BitcastOp::create(b, loc, i32, r),
                                     intConst(b, loc, i32, static_cast<int32_t>(0x80000000u)));
  Value zero = arith::BitcastOp::create(b, loc, r.getType(), sign);
  return arith::SelectOp::create(b, loc, tiny, zero, flushSubnormal(b, loc, r));
}

/// `x` times 2^24 (exact below 2^104; flushTinyNearest's scaled operands).
inline Value timesTwoTo24(OpBuilder &b, Location loc, Value x) {
  return arith::MulFOp::create(b, loc, x, floatConst(b, loc, x.getType(), 0x1p24));
}

/// LLVM's function attribute (llvm.func's `denormal_fp_math_f32`) and the
/// value that flushes f32 subnormals in every instruction of the function.
constexpr llvm::StringLiteral kF32DenormalModeAttr = "denormal_fp_math_f32";
constexpr llvm::StringLiteral kF32FlushToZeroMode = "preserve-sign,preserve-sign";

/// Whether `op` is in a function whose f32 instructions the target flushes
/// itself (F32FlushMode.cpp): its `.ftz` needs no flushSubnormal.
inline bool inF32FlushMode(Operation *op) {
  auto fn = op->getParentOfType<FunctionOpInterface>();
  auto mode = fn ? fn->getAttrOfType<StringAttr>(kF32DenormalModeAttr) : StringAttr();
  return mode && mode.getValue() == kF32FlushToZeroMode;
}

/// Whether the target's code for the `.ftz` op `op` flushes f32 subnormals
/// itself: in the flush mode, where the target says its code does
/// (TargetInfo::flushesInF32FlushMode).
inline bool flushedByTarget(Operation *op, const TargetInfo &target) {
  return inF32FlushMode(op) && target.flushesInF32FlushMode(op);
}

/// Whether the target flushes f32 subnormals for the whole program made of
/// `ptxModule` (F32FlushScope::Program): each function's f32 instructions
/// are `.ftz` or independent of the mode, one at least is `.ftz`, and no
/// f64 instruction depends on subnormals (F32FlushMode.cpp).
bool programFlushesF32(ModuleOp ptxModule, const TargetInfo &target);

/// Sets `fn`'s (a gpu.func or llvm.func) f32 denormal mode from the PTX
/// function `ptxFunc` it is made of, where the target has such a mode: per
/// function, flush-to-zero if every f32 instruction of it is `.ftz`, LLVM's
/// `dynamic` (compatible with any caller) if none depends on the mode; per
/// program, flush-to-zero if `programFlushes` (programFlushesF32).
void setF32DenormalMode(Operation *fn, Operation *ptxFunc, const TargetInfo &target,
                        bool programFlushes);

/// Clamps a float to [+0, 1] with NaN going to +0 (PTX `.sat` on floats);
/// -0 gives +0 as well, as on the H200. Compares and selects, not
/// maxnum/minnum: those may return either zero, and on NVPTX become calls
/// of libdevice's __nv_fmaxf, which ptxas cannot resolve.
inline Value saturateFloat(OpBuilder &b, Location loc, Value value) {
  using P = arith::CmpFPredicate;
  mlir::Type type = value.getType();
  Value zero = floatConst(b, loc, type, 0.0), one = floatConst(b, loc, type, 1.0);
  Value positive = arith::CmpFOp::create(b, loc, P::OGT, value, zero);
  Value r = arith::SelectOp::create(b, loc, positive, value, zero);
  Value above = arith::CmpFOp::create(b, loc, P::OGT, r, one);
  return arith::SelectOp::create(b, loc, above, one, r);
}

inline LLVM::AtomicOrdering orderingFor(Semantics sem) {
  switch (sem) {
  case Semantics::Acquire:
    return LLVM::AtomicOrdering::acquire;
  case Semantics::Release:
    return LLVM::AtomicOrdering::release;
  case Semantics::AcqRel:
    return LLVM::AtomicOrdering::acq_rel;
  default:
    return LLVM::AtomicOrdering::monotonic;
  }
}

/// Base class of the ptx lowering patterns: gives access to the shared state
/// and a uniform way to reject what is not supported yet.
template <typename OpTy>
struct PTXPattern : OpConversionPattern<OpTy> {
  PTXPattern(MLIRContext *ctx, const PTXLoweringState &state, PatternBenefit benefit = 1)
      : OpConversionPattern<OpTy>(ctx, benefit), state(state) {}

  LogicalResult unsupported(OpTy op, const Twine &what) const {
    op->emitError("unsupported ") << what;
    return failure();
  }

  /// Whether `op`'s `.ftz` flushes f32 values in software (flushSubnormal):
  /// not in a function whose f32 instructions the target flushes itself,
  /// unless its code for `op` does not (flushesInF32FlushMode) or LLVM may
  /// fold the instruction away, flushing nothing, whatever the function's
  /// denormal mode: x * 1, x / 1, x + 0, x - 0, fma(x, 1, 0).
  bool softwareFtz(OpTy op) const {
    if (!op.getFtz())
      return false;
    if (!flushedByTarget(op, state.target))
      return true;
    auto one = [](Value v) { return isConstantMagnitude(v, 1.0); };
    auto zero = [](Value v) { return isConstantMagnitude(v, 0.0); };
    if constexpr (llvm::is_one_of<OpTy, MulOp, DivOp>::value)
      return llvm::any_of(op->getOperands(), one);
    if constexpr (llvm::is_one_of<OpTy, AddOp, SubOp>::value)
      return llvm::any_of(op->getOperands(), zero);
    if constexpr (llvm::is_one_of<OpTy, FmaOp, MadOp>::value)
      return zero(op.getC()) && (one(op.getA()) || one(op.getB()));
    return false;
  }

  /// Whether `v` is a float constant of magnitude `x`.
  static bool isConstantMagnitude(Value v, double x) {
    FloatAttr constant;
    return matchPattern(v, m_Constant(&constant)) && std::abs(constant.getValueAsDouble()) == x;
  }

  /// The shared window base of the kernel containing `op`.
  Value sharedWindow(Operation *op) const {
    auto func = op->template getParentOfType<gpu::GPUFuncOp>();
    return func ? state.sharedWindows.lookup(func) : Value();
  }

  /// The base pointer of `op`'s access when the target may keep its cache
  /// operator (`.cs`, `.cg`, `.lu` on a global load or store that is neither
  /// atomic nor volatile); a null Value otherwise.
  FailureOr<Value> cacheOperatorBase(OpTy op, OpBuilder &b, Value address, bool atomic,
                                     bool isVolatile) const {
    if (op.getCache() == CacheOp::None || op.getSpace() != StateSpace::Global || atomic ||
        isVolatile)
      return Value();
    return pointerTo(op, b, address, /*offset=*/0, op.getSpace());
  }

  /// A pointer to `[address + offset]` in `space`.
  FailureOr<Value> pointerTo(OpTy op, OpBuilder &b, Value address, int64_t offset,
                             StateSpace space) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    mlir::Type i64 = b.getI64Type();
    // `[r+imm]` of a 32-bit register is a 32-bit address: the sum wraps
    // (NVIDIA's cuBLAS reads shared memory at [As - 120 + 128], which is
    // As + 8). zmlir-index-no-wrap computes the extension in 64 bits where
    // the sum cannot wrap.
    if (offset != 0)
      address = arith::AddIOp::create(b, loc, address, intConst(b, loc, address.getType(), offset));
    Value wide = address.getType() == i64
                     ? address
                     : arith::ExtUIOp::create(b, loc, i64, address).getResult();
    const AddressSpaceMap &as = state.addressSpaces;
    switch (space) {
    case StateSpace::None:
      return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, as.generic), wide)
          .getResult();
    case StateSpace::Global:
      return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, as.global), wide)
          .getResult();
    case StateSpace::Const:
      return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, as.constant), wide)
          .getResult();
    case StateSpace::Local:
    case StateSpace::Param: // a parameter's address is its copy's (ptx.param_addr)
      return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, as.local), wide)
          .getResult();
    case StateSpace::Shared: {
      // Shared addresses are offsets into the block's window.
      Value window = sharedWindow(op);
      if (!window) {
        (void)unsupported(op, "shared memory access in a '.func' (only kernels "
                              "have a shared window)");
        return failure();
      }
      return LLVM::GEPOp::create(b, loc, window.getType(), b.getI8Type(), window, ValueRange{wide})
          .getResult();
    }
    default:
      (void)unsupported(op,
                        Twine("state space '") + stringifyStateSpace(space) + "' in memory access");
      return failure();
    }
  }

  const PTXLoweringState &state;
};

/// A vector of `count` copies of the scalar `x` (insertelement, then a
/// shufflevector of lane 0).
inline Value splatVector(OpBuilder &b, Location loc, Value x, int64_t count) {
  auto type = VectorType::get({count}, x.getType());
  Value v = LLVM::PoisonOp::create(b, loc, type);
  v = LLVM::InsertElementOp::create(b, loc, v, x, intConst(b, loc, b.getI32Type(), 0));
  return LLVM::ShuffleVectorOp::create(b, loc, v, v, SmallVector<int32_t>(count, 0));
}

/// The value of a constant integer operand, if it is one.
inline std::optional<int64_t> constantInt(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

/// A call of the LLVM intrinsic `name` (e.g. `llvm.nvvm.sin.approx.f`).
inline Value callIntrinsic(OpBuilder &b, Location loc, mlir::Type result, StringRef name,
                           ValueRange args) {
  TypeRange results = result ? TypeRange(result) : TypeRange();
  auto call = LLVM::CallIntrinsicOp::create(b, loc, results, b.getStringAttr(name), args,
                                            LLVM::FastmathFlagsAttr(), {}, ArrayAttr(), ArrayAttr(),
                                            ArrayAttr());
  return result ? call.getResult(0) : Value();
}

/// The tf32 conversions cvt.{rn,rz,rna}{.relu}{.satfinite}.tf32.f32 (imported as `ptx.inst`),
/// the target's own where it has them (TargetInfo::nativeTf32Cvt): the result, or null if `op`
/// is none of them (Convert.cpp).
Value lowerNarrowFloatCvt(InstOp op, ValueRange operands, OpBuilder &b, const TargetInfo &target);

/// The pointer type of the target's allocas: the private space, or the
/// generic one where the target wants allocas there
/// (TargetInfo::allocatesLocalInGeneric) (Memory.cpp).
LLVM::LLVMPointerType allocaPointerType(MLIRContext *ctx, const PTXLoweringState &state);

/// One `type` in a new alloca in the target's private address space, as a
/// `.local` pointer (Memory.cpp).
Value localAlloca(OpBuilder &b, Location loc, mlir::Type type, int64_t align,
                  const PTXLoweringState &state);

/// The lane's index in its 32-lane warp: on wave64 targets, in its
/// half-wave (Warp.cpp).
Value warpLane(OpBuilder &b, Location loc, const TargetInfo &target);

/// The declaration of `name` in the gpu.module enclosing `user`, created on
/// first use (Calls.cpp).
LLVM::LLVMFuncOp declareFunction(OpBuilder &b, Operation *user, StringRef name,
                                 LLVM::LLVMFunctionType type);

/// Whether every wmma op of `module` (ptx dialect, before conversion) is
/// the target's own instruction in PTX for the module's `.target`
/// (TargetInfo::hasNativeWmma); false where it has none (MatrixOps.cpp).
bool nativeWmmaModule(ModuleOp module, const TargetInfo &target);

/// The most threads a block of `fn` may have, from its `ptx.maxntid` or
/// else `ptx.reqntid` (MAX_THREADS_PER_BLOCK: a larger launch is refused);
/// none where it has neither (PTXToStd.cpp).
std::optional<int64_t> maxBlockThreads(Operation *fn);

/// Reserves the exchange area of `kernel`'s wmma.mma and mma.sync ops in
/// its shared window at `offset` (recorded in state.wmmaScratch), for the
/// warps of its largest block (maxBlockThreads, else 32), and returns the
/// offset after it; `offset` if it has none or they are native
/// (MatrixOps.cpp).
int64_t reserveWmmaScratch(gpu::GPUFuncOp kernel, int64_t offset, PTXLoweringState &state);

/// Bytes at the start of a kernel's shared window that hold the bar.red
/// counter when the kernel is in state.barrierCounters.
constexpr int64_t kBarrierCounterBytes = 16;

/// The CTA's reserved shared memory (%reserved_smem_offset_begin to _end),
/// NVIDIA's size (cudaDevAttrReservedSharedMemoryPerBlock); cooperative
/// groups' multi-warp tiles keep their barrier words and partial results in
/// it (%reserved_smem_offset_1, up to 288 bytes for 32 warps).
constexpr int64_t kReservedSmemBytes = 1024;

/// Whether `reg` is one of a thread-block cluster's: %clusterid.*,
/// %nclusterid.*, %cluster_ctaid.*, %cluster_nctaid.*, %cluster_ctarank,
/// %cluster_nctarank, %is_explicit_cluster.
inline bool isClusterRegister(ptx::SpecialReg reg) {
  return reg >= ptx::SpecialReg::ClusteridX && reg <= ptx::SpecialReg::IsExplicitCluster;
}

/// Whether `reg` is one of %reserved_smem_offset_{begin,end,cap,0,1}.
inline bool isReservedSmemRegister(ptx::SpecialReg reg) {
  return reg >= ptx::SpecialReg::ReservedSmemOffsetBegin &&
         reg <= ptx::SpecialReg::ReservedSmemOffset1;
}

/// The alignment of the `.local` copy the lowering makes of a parameter
/// passed as a value whose address is taken: enough for any `ld.param`
/// element (PTX loads them 8 bytes at most).
constexpr int64_t kParamCopyAlign = 8;

/// Marks the module's device functions, and their calls, convergent: any of
/// them may run a warp collective or a barrier, which LLVM must not make
/// depend on more control flow (as clang assumes of all CUDA device code).
/// Runs after the conversion patterns (Warp.cpp).
void markCallsConvergent(gpu::GPUModuleOp module);

/// The module's functions (kernels and device functions) whose work depends
/// on the width of a warp: those that read the lane (gpu.lane_id and the
/// other sub-group queries), shuffle (gpu.shuffle, gpu.subgroup_reduce),
/// call a target's sub-group built-in (an external convergent call) or
/// access volatile memory (warp-synchronous code that relies on lockstep),
/// and, to a fixpoint, their callers. Runs after the conversion patterns, before
/// markCallsConvergent (Warp.cpp).
llvm::DenseSet<Operation *> functionsUsingSubGroups(gpu::GPUModuleOp module);

/// Each kernel's and defined device function's defined callees (the
/// module's call graph of direct LLVM::CallOps). Runs after the conversion
/// patterns (Calls.cpp).
llvm::DenseMap<Operation *, llvm::SmallVector<Operation *>> definedCallees(gpu::GPUModuleOp module);

/// The functions `fn` reaches through `callees` (itself only where on a
/// cycle).
llvm::DenseSet<Operation *>
reachedFunctions(Operation *fn,
                 const llvm::DenseMap<Operation *, llvm::SmallVector<Operation *>> &callees);

/// The module's device functions on a cycle of calls (each calls itself,
/// directly or through others). Runs after the conversion patterns, when
/// every call is a direct LLVM::CallOp (Calls.cpp).
llvm::DenseSet<Operation *> recursiveFunctions(gpu::GPUModuleOp module);

/// The first call reached from `root`, depth first, that closes a cycle of
/// calls (the call of a function still on the walk's path), or null.
LLVM::CallOp callClosingCycle(gpu::GPUModuleOp module, Operation *root);

/// Replaces `ptx.func_addr` with its encoding (kFuncAddressBase + the
/// function's index among the address-taken ones, sorted by name) and each
/// `ptx.call_indirect` with a switch over the address-taken functions of its
/// signature, whose default traps. Runs before the conversion patterns
/// (Calls.cpp).
LogicalResult expandIndirectCalls(gpu::GPUModuleOp module, const PTXLoweringState &state);
constexpr uint64_t kFuncAddressBase = 0x7a6d000000000000ull;

} // namespace zmlir

#endif // ZMLIR_LOWERING_PTXLOWERING_H
