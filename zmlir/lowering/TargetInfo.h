//===- TargetInfo.h - What the ptx lowering asks of a target ---*- C++ -*-===//
//
// convert-ptx-to-std emits the std dialects for one backend. Where backends
// differ (warp collectives, clocks, memory scopes, traps, the shared window's
// size, NVIDIA's own instructions) the lowering asks a TargetInfo instead of
// testing a target's name. Each target implements it in its own folder,
// zmlir/targets/<name>/<Name>TargetInfo.cpp; the pass picks one from its
// `target` option (createTargetInfo).
//
// The base class is the `generic` target: no target intrinsics, so what needs
// one is rejected and everything else takes the portable sequence. A hook
// that builds IR returns a null Value (or failure) where the target has no
// native form, and the lowering then emits its own.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_TARGETINFO_H
#define ZMLIR_LOWERING_TARGETINFO_H

#include "zmlir/dialects/ptx/PTXDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/CommandLine.h"

#include <memory>
#include <optional>
#include <string>

namespace zmlir {

struct PTXLoweringState;

/// The backends convert-ptx-to-std lowers for: the pass's `target` option
/// (zmlir/targets/Targets.def).
enum class LoweringTarget {
#define ZMLIR_TARGET(Enumerator, Name, Factory) Enumerator,
#include "zmlir/targets/Targets.def"
};

/// Where a target can flush f32 subnormals as PTX's `.ftz` does without
/// flushing each value in software (F32FlushMode.cpp).
enum class F32FlushScope {
  /// Nowhere: every `.ftz` flushes in software.
  None,
  /// A function at a time, by its denormal mode (NVPTX emits the `.ftz`
  /// forms, AMDGPU sets the function's FP32 denormal mode).
  Function,
  /// The whole program or nothing, f64 subnormals with it: the runtime
  /// builds the program so (OpenCL's `-cl-denorms-are-zero`, which Intel's
  /// CPU runtime honours with the MXCSR's DAZ and FTZ).
  Program,
};

class TargetInfo {
public:
  explicit TargetInfo(unsigned waveSize = 32) : waveSize(waveSize) {}
  virtual ~TargetInfo();

  /// The name diagnostics use ("on target 'spirv'").
  virtual llvm::StringRef getName() const { return "generic"; }
  /// Hardware lanes per wavefront; CUDA warps stay 32 lanes.
  unsigned getWaveSize() const { return waveSize; }
  /// The largest module variable, in bytes, the backend represents: a
  /// larger one is "unsupported", never truncated.
  virtual uint64_t maxVariableBytes() const { return INT64_MAX; }

  //===--- Integers and floats ---------------------------------------------===//

  /// Whether 128-bit integer products may be emitted (`mul.hi.u64`).
  virtual bool hasI128Multiply() const { return true; }
  /// Whether a zero extension of integer math that provably does not wrap
  /// is better computed in the wide type (zmlir-index-no-wrap): where the
  /// backend's consumer cannot see through `zext i32 (add nuw ...)` to
  /// consecutive addresses, and 64-bit math costs no more than 32-bit.
  virtual bool widensNoWrapExtensions() const { return false; }
  /// Whether f32/f64 `add`, `sub` and `mul` without a rounding modifier
  /// become arith ops with `contract`: PTX lets the code generator fuse
  /// such a mul and add into an fma, and a target that keeps the freedom
  /// (NVPTX: `mul.f32`, not `mul.rn.f32`) lets ptxas fuse as it does in
  /// nvcc's PTX. Directed roundings and `.rn` stay uncontracted.
  virtual bool contractsUnroundedFloatArith() const { return false; }
  /// Whether llvm.minimum/maximum keep their NaN and signed-zero semantics
  /// through the backend.
  virtual bool hasExactFloatMinMax() const { return true; }
  /// PTX's `min`/`max{.ftz}{.NaN}` of f32 or f64 as the target's own
  /// instruction, or null.
  virtual mlir::Value nativeMinMax(mlir::OpBuilder &b, mlir::Location loc, bool isMin,
                                   mlir::Value x, mlir::Value y, bool nan, bool ftz) const {
    return {};
  }
  /// Where the target flushes f32 subnormals as PTX's `.ftz` does, in
  /// every f32 instruction of a function with LLVM's
  /// `denormal-fp-math-f32="preserve-sign,preserve-sign"`; such functions
  /// get no flushing in software (F32FlushMode.cpp).
  virtual F32FlushScope f32FlushScope() const { return F32FlushScope::None; }
  /// Whether the f32 ptx op `op`, without `.ftz`, gives the same result in
  /// the flush mode: the target's own instruction for it, or its lowering,
  /// treats subnormals one way whatever the mode.
  virtual bool ignoresF32FlushMode(mlir::Operation *op) const { return false; }
  /// Whether the target's code for the `.ftz` ptx op `op` flushes f32
  /// subnormals itself in the flush mode; where not, its lowering flushes
  /// them in software there too (softwareFtz).
  virtual bool flushesInF32FlushMode(mlir::Operation *op) const { return true; }
  /// NVIDIA's directed-rounding `add/sub/mul/fma/div/sqrt/rcp` on operands
  /// already flushed when `ftz`, or null.
  virtual mlir::Value nativeDirectedArith(mlir::OpBuilder &b, mlir::Location loc,
                                          llvm::StringRef name, llvm::ArrayRef<mlir::Value> x,
                                          ptx::Rounding rnd, bool ftz) const {
    return {};
  }
  /// A correctly rounded square root the target's own way, or null
  /// (math.sqrt).
  virtual mlir::Value nativeSqrt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a) const {
    return {};
  }
  /// The target's own `name.approx{.ftz}` (sin, cos, lg2, ex2, tanh, rcp,
  /// sqrt, rsqrt), or null.
  virtual mlir::Value nativeApprox(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef name,
                                   mlir::Value a, bool ftz) const {
    return {};
  }
  /// The hardware's own approximate `lg2`, `ex2`, `sin` or `cos` (these two
  /// of an angle in revolutions, see hasRevolutionSinCos), or null (the
  /// math dialect's).
  virtual mlir::Value hardwareApprox(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef name,
                                     mlir::Value x) const {
    return {};
  }
  /// Whether hardwareApprox has sin and cos (of revolutions).
  virtual bool hasRevolutionSinCos() const { return false; }
  /// The target's own `cvt{rnd}{.relu}{.satfinite}.tf32.f32` of the f32
  /// `x` (`rnd` ".rn", ".rz" or ".rna"): the tf32's bits as an i32, or
  /// null (the lowering rounds in integer arithmetic, Convert.cpp).
  virtual mlir::Value nativeTf32Cvt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                                    llvm::StringRef rnd, bool relu, bool satfinite) const {
    return {};
  }
  /// The target's own integer `div` or `rem` (`isDiv`) of the 16, 32 or
  /// 64-bit integers `a` and `b`, whose results for a divisor of 0 (and
  /// INT_MIN / -1) are the hardware's, or null (the lowering guards
  /// LLVM's division from those undefined cases, DivRemLowering).
  virtual mlir::Value nativeIntegerDivRem(mlir::OpBuilder &b, mlir::Location loc, bool isDiv,
                                          bool isSigned, mlir::Value x, mlir::Value y) const {
    return {};
  }
  /// The target's own `cvt.rn.bf16.f32` of the f32 `x` (PTX for sm_80 on,
  /// so the target's GPU has it): the bf16's bits as an i16, or null (the
  /// lowering rounds in integer arithmetic, f32ToBf16Bits).
  virtual mlir::Value nativeBf16Cvt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x) const {
    return {};
  }
  /// The target's own `cvt.f32.bf16` of the bf16 bits `bits` (an i16; PTX
  /// that converts so runs on a GPU that has it): the f32, or null (the
  /// bits shifted into an f32's top half).
  virtual mlir::Value nativeBf16Widen(mlir::OpBuilder &b, mlir::Location loc,
                                      mlir::Value bits) const {
    return {};
  }
  /// The target's own f16/f16x2/bf16/bf16x2 `add`, `sub`, `mul`, `fma`, `min`
  /// or `max` for `op` (operands: the bits, i16, or the pairs', i32), as the
  /// PTX spells it: the result's bits, or null (computed in f32 and rounded,
  /// FloatArith.cpp). Where it answers, ignoresF32FlushMode(op)
  /// answers true too.
  virtual mlir::Value nativeHalfArith(mlir::OpBuilder &b, mlir::Operation *op,
                                      mlir::ValueRange operands) const {
    return {};
  }
  /// The target's own video instruction (vadd ... vset, vadd2 ... vset4),
  /// spelled `ptx` in PTX with `$0` the i32 result and `$1`... the i32
  /// `operands` (a, b, c), selectors appended (`$1.b3210`): the result, or
  /// null (the lowering computes it in integer arithmetic, Video.cpp).
  virtual mlir::Value nativeVideo(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef ptx,
                                  mlir::ValueRange operands) const {
    return {};
  }
  /// The target's own texture or surface instruction (tex, tld4, txq,
  /// suld.b, sust.b, suq on NVIDIA's texture and surface objects) spelled
  /// `ptx` in PTX, `$0`... the `results` (i16, i32, i64, f32 registers) then
  /// the `operands`: the results, or std::nullopt where the target has none
  /// and textures are our descriptors (Texture.cpp). Asked only where the
  /// pass's `native-textures` option is on.
  virtual std::optional<llvm::SmallVector<mlir::Value>>
  nativeTexture(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef ptx,
                mlir::TypeRange results, mlir::ValueRange operands, bool sideEffects) const {
    return std::nullopt;
  }
  /// Whether the approximate transcendentals exist in f64.
  virtual bool hasF64ApproxTranscendentals() const { return true; }
  /// `div.full.f32` (2 ulp) and `div.approx.f32`, or null.
  virtual mlir::Value nativeDivFull(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                                    mlir::Value y, bool ftz) const {
    return {};
  }
  virtual mlir::Value nativeDivApprox(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                                      mlir::Value y, bool ftz) const {
    return {};
  }

  //===--- Memory model and atomics ----------------------------------------===//

  /// The LLVM sync scope of a PTX memory scope ("" is LLVM's system scope).
  virtual std::string syncScopeName(ptx::Scope scope) const;
  /// The scope of an `atom`/`red` that names none.
  virtual ptx::Scope unscopedAtomicScope() const { return ptx::Scope::None; }
  /// The LLVM fence scope `bar.warp.sync` orders memory at.
  virtual llvm::StringRef warpFenceScope() const { return "subgroup"; }
  /// Whether `atom`/`red` `op` on `type` becomes a compare-and-swap loop.
  virtual bool needsAtomicCasLoop(ptx::AtomicOp op, ptx::DataType type) const;
  /// Whether `atom`/`red` `op` on `type` with `sem` at `scope` is the
  /// target's own instruction (emitNativeAtomic) because an LLVM atomic would
  /// lose its semantics or scope.
  virtual bool hasNativeAtomic(ptx::AtomicOp op, ptx::DataType type, ptx::Semantics sem,
                               ptx::Scope scope) const {
    return false;
  }
  /// Such an atomic on `ptr` in `space` (None, Global or Shared); `value` and
  /// `compare` (cas only, else null) are integers of the type's width. The
  /// old value when `withResult`.
  virtual mlir::Value emitNativeAtomic(mlir::OpBuilder &b, mlir::Location loc, mlir::Value ptr,
                                       ptx::StateSpace space, ptx::AtomicOp op, ptx::DataType type,
                                       ptx::Semantics sem, ptx::Scope scope, mlir::Value value,
                                       mlir::Value compare, bool withResult) const {
    return {};
  }

  /// Whether `mov` packing `count` registers of `elementBits` each (`mov.b32
  /// %r, {%h1, %h2}`: 16 and 2) is a vector of them reinterpreted as the
  /// wide integer, which the backend packs in one instruction (NVPTX: the
  /// same mov), rather than shifts and ors. Either is the same bits.
  virtual bool packsRegistersAsVector(unsigned elementBits, unsigned count) const { return false; }

  //===--- Memory -------------------------------------------------------===//

  /// Whether `ld.global.nc` becomes an invariant load (LLVM's
  /// `!invariant.load`: the data is read-only while the kernel runs, as
  /// `.nc` promises), which the backend makes its non-coherent read-only
  /// load (NVPTX: NVIDIA's ld.global.nc, LDG.E.CONSTANT). Elsewhere `.nc`
  /// is a plain load.
  virtual bool hasNonCoherentLoads() const { return false; }
  /// A plain `ld.global` with cache operator `cache` (`.cg`, `.cs`, `.lu`,
  /// `.cv`; `nc` for `.nc`) of `vec` elements of `elem` from
  /// `[ptr+offset]` as the target's own instruction keeping the operator:
  /// the loaded values, or none where it has no such load (then a plain
  /// load, the operator dropped: it changes no result).
  virtual llvm::SmallVector<mlir::Value> emitCachedLoad(mlir::OpBuilder &b, mlir::Location loc,
                                                        ptx::CacheOp cache, bool nc,
                                                        mlir::Value ptr, int64_t offset,
                                                        mlir::Type elem, int64_t vec) const {
    return {};
  }
  /// A plain `st.global` of `values` with cache operator `cache` (`.cg`,
  /// `.cs`, `.wt`) to `[ptr+offset]` likewise; false where the target has
  /// no such store.
  virtual bool emitCachedStore(mlir::OpBuilder &b, mlir::Location loc, ptx::CacheOp cache,
                               mlir::Value ptr, int64_t offset, mlir::ValueRange values) const {
    return false;
  }

  //===--- Asynchronous copies ---------------------------------------------===//

  /// Whether `cp.async` and its groups are the target's own asynchronous
  /// copies (emitAsyncCopy, emitAsyncCopyCommit, emitAsyncCopyWait, all
  /// three); if not, the lowering copies synchronously and drops the groups.
  virtual bool hasNativeAsyncCopy() const { return false; }
  /// `cp.async.cache.shared.global` of `size` bytes from the global pointer
  /// `src` to the shared pointer `dst`, of which the first `srcSize` (an i32;
  /// null: all) come from `src` and the rest are zeros.
  virtual void emitAsyncCopy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value dst,
                             mlir::Value src, int64_t size, ptx::CacheOp cache,
                             mlir::Value srcSize) const {}
  /// `cp.async.commit_group`.
  virtual void emitAsyncCopyCommit(mlir::OpBuilder &b, mlir::Location loc) const {}
  /// `cp.async.wait_group pending`, or `cp.async.wait_all` when `all`.
  virtual void emitAsyncCopyWait(mlir::OpBuilder &b, mlir::Location loc, int64_t pending,
                                 bool all) const {}
  /// The bulk copy instruction `op` (ptx.cp_async_bulk, its group ops,
  /// ptx.fence_proxy_async) as the target's own, with the op's converted
  /// operands `args` in their order (addresses as pointers in their state
  /// spaces, shared::cluster ones in the shared space); failure where the
  /// target has none, and the lowering copies synchronously (AsyncCopy.cpp).
  virtual mlir::LogicalResult emitNativeBulkCopy(mlir::OpBuilder &b, mlir::Operation *op,
                                                 mlir::ValueRange args) const {
    return mlir::failure();
  }

  //===--- Warp matrix multiply-accumulate (wmma) --------------------------===//

  /// Whether `op` (a ptx.wmma_load, ptx.wmma_store, ptx.wmma_mma,
  /// ptx.mma_sync or ptx.ldmatrix) is one of the target's own warp matrix
  /// instructions in PTX for `sm` (the number of its `.target sm_XX`; 0
  /// where it names none). The distribution of a wmma fragment's elements
  /// over the lanes is the target's for those and the lowering's own for
  /// its emulation (MatrixOps.cpp), so a module's wmma ops are either all
  /// native or all emulated; mma.sync's and ldmatrix's are PTX's, and each
  /// such op is asked alone.
  virtual bool hasNativeWmma(mlir::Operation *op, unsigned sm) const { return false; }
  /// `op`, of which hasNativeWmma said yes, as the target's own: `ptr` the
  /// matrix's address as a pointer in the op's state space (null for
  /// wmma.mma and mma.sync), `args` the op's other converted operands in
  /// their order (the fragment's registers and the stride; A, B and C;
  /// none for ldmatrix): the results' registers.
  virtual mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitNativeWmma(mlir::OpBuilder &b, mlir::Operation *op, mlir::Value ptr,
                 mlir::ValueRange args) const {
    return mlir::failure();
  }

  //===--- mbarrier --------------------------------------------------------===//

  /// The mbarrier instruction `op` (a ptx.mbarrier_* op,
  /// ptx.cp_async_mbarrier_arrive or ptx.fence_mbarrier_init) as the
  /// target's own, on the barrier at `ptr` (a pointer in the op's state
  /// space; null for the fence) with the op's other converted
  /// operands `args` in their order: its result (null for none), or failure
  /// where the target has none, and the lowering keeps the barrier in its
  /// 64-bit word with atomics (Mbarrier.cpp).
  virtual mlir::FailureOr<mlir::Value> emitNativeMbarrier(mlir::OpBuilder &b, mlir::Operation *op,
                                                          mlir::Value ptr,
                                                          mlir::ValueRange args) const {
    return mlir::failure();
  }
  /// Emitted before an mbarrier wait reads the barrier, so that the block's
  /// other threads get to arrive where they do not run concurrently with
  /// the waiting one (nothing by default). Returns whether it waited for the
  /// whole block at one barrier: a phase still incomplete after it can then
  /// never complete, and the wait fails the launch instead of hanging.
  virtual bool emitMbarrierWaitTurn(mlir::OpBuilder &b, mlir::Operation *user) const {
    return false;
  }

  //===--- Special registers and the launch --------------------------------===//

  /// Whether a kernel takes a by-value aggregate parameter (`.param .align N
  /// .b8 p[K]`) as a pointer to its own copy of the bytes, `ptr
  /// byval({[K x i8]}) align N` (OpenCL C's and clang CUDA's struct
  /// argument), not as the `[K x i8]` value. The launcher passes the same K
  /// bytes either way.
  virtual bool passesKernelAggregatesByVal() const { return false; }

  /// A launch or SM register (`%gridid`, `%smid`, `%nsmid`, `%nwarpid`,
  /// `%dynamic_smem_size`, `%total_smem_size`, `%aggr_smem_size`, a
  /// cluster's: `%clusterid.*`, `%cluster_ctarank`, ..., as an i32) read from
  /// the hardware, or null. `%dynamic_smem_size` is the whole window as the
  /// launch sized it.
  virtual mlir::Value nativeLaunchRegister(mlir::OpBuilder &b, mlir::Location loc,
                                           ptx::SpecialReg reg) const {
    return {};
  }
  /// The bytes of the launch's shared window (an i32), where a kernel can
  /// read them, else null.
  virtual mlir::Value sharedWindowBytes(mlir::OpBuilder &b, mlir::Operation *user) const {
    return {};
  }
  /// `%clock`, `%clock64` or `%globaltimer` (ns), or null where the target has no
  /// such counter.
  virtual mlir::Value readClock(mlir::OpBuilder &b, mlir::Operation *user,
                                ptx::SpecialReg reg) const {
    return {};
  }
  /// `%envreg<n>` or `%pm<n>{_64}` read from the hardware, or null.
  virtual mlir::Value readMachineRegister(mlir::OpBuilder &b, mlir::Location loc,
                                          llvm::StringRef reg) const {
    return {};
  }
  /// `isspacep.space` of the generic pointer `ptr` (`address` as an i64;
  /// `window` the kernel's shared window or null), or null with `whyNot`.
  virtual mlir::Value isSpace(mlir::OpBuilder &b, mlir::Operation *user, mlir::Value ptr,
                              mlir::Value address, ptx::StateSpace space, mlir::Value window,
                              std::string &whyNot) const;
  /// Emits `prefetch{u}` of `address` (the op's operand, in its state space);
  /// targets without one drop it (it has no effect on results).
  virtual void emitPrefetch(mlir::OpBuilder &b, ptx::PrefetchOp op, mlir::Value address) const {}
  /// Whether `.local` allocas live in the generic space (and are cast).
  virtual bool allocatesLocalInGeneric() const { return false; }
  /// Whether a `generic(sym)` address in a variable's initializer is cast to
  /// the generic space.
  virtual bool castsGenericInitializers() const { return false; }

  //===--- Warps and barriers ----------------------------------------------===//

  /// The 32-bit ballot of `pred` over the lanes of the caller's warp that
  /// execute it, or null. `mask` names the lanes it waits for (the PTX
  /// membermask; 0 for `activemask`).
  virtual mlir::Value ballot(mlir::OpBuilder &b, mlir::Operation *user, mlir::Value pred,
                             mlir::Value mask) const {
    return {};
  }
  /// The value `v` of lane `src` (an i32 in [0, 32)) of the caller's warp.
  virtual mlir::Value readLane(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                               mlir::Value src) const;
  /// NVIDIA's own warp instructions, or failure: the lowering then builds
  /// them from ballots and shuffles.
  virtual mlir::LogicalResult lowerNative(ptx::ShflSyncOp op, ptx::ShflSyncOp::Adaptor adaptor,
                                          mlir::ConversionPatternRewriter &rewriter) const {
    return mlir::failure();
  }
  virtual mlir::LogicalResult lowerNative(ptx::MatchSyncOp op, ptx::MatchSyncOp::Adaptor adaptor,
                                          mlir::ConversionPatternRewriter &rewriter) const {
    return mlir::failure();
  }
  virtual mlir::Value nativeActivemask(mlir::OpBuilder &b, mlir::Location loc) const { return {}; }
  /// `vote.sync.all/any/uni` (a predicate) as the target's own instruction,
  /// or null: the lowering then asks a ballot.
  virtual mlir::Value nativeVote(mlir::OpBuilder &b, mlir::Location loc, ptx::VoteMode mode,
                                 mlir::Value pred, mlir::Value mask) const {
    return {};
  }
  /// `redux.sync.name` (add, and, or, xor, min, umin, max, umax), or null.
  virtual mlir::Value nativeRedux(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef name,
                                  mlir::Value a, mlir::Value mask) const {
    return {};
  }
  /// After conversion: whatever the target needs of the whole module for
  /// its warps to be 32 lanes where kernels depend on it (`subGroupUsers`:
  /// functionsUsingSubGroups).
  virtual void finishWarps(mlir::gpu::GPUModuleOp module,
                           const llvm::DenseSet<mlir::Operation *> &subGroupUsers,
                           const PTXLoweringState &state) const {}
  /// The index of the caller's warp in its block (an i32 below 32: one the
  /// warp's lanes share and no other warp of the block has), or null: the
  /// lowering then divides the linear thread index by 32, reading %tid.y
  /// and .z (wmma's and mma.sync's exchange areas, MatrixOps.cpp).
  virtual mlir::Value warpInBlock(mlir::OpBuilder &b, mlir::Location loc) const { return {}; }
  /// `bar.warp.sync` the target's own way, or failure (a warp fence).
  virtual mlir::LogicalResult emitNativeWarpSync(mlir::OpBuilder &b, mlir::Location loc,
                                                 mlir::Value mask) const {
    return mlir::failure();
  }
  /// `bar{.cta}.sync/arrive/red` as the target's own named barriers, or
  /// failure (a whole-CTA barrier, and bar.red's shared counter).
  virtual mlir::LogicalResult lowerNative(ptx::BarSyncOp op, ptx::BarSyncOp::Adaptor adaptor,
                                          mlir::ConversionPatternRewriter &rewriter) const {
    return mlir::failure();
  }
  virtual mlir::LogicalResult lowerNative(ptx::BarArriveOp op, ptx::BarArriveOp::Adaptor adaptor,
                                          mlir::ConversionPatternRewriter &rewriter) const {
    return mlir::failure();
  }
  virtual mlir::LogicalResult lowerNative(ptx::BarRedOp op, ptx::BarRedOp::Adaptor adaptor,
                                          mlir::ConversionPatternRewriter &rewriter) const {
    return mlir::failure();
  }
  /// Whether bar.red is native (no counter in the shared window).
  virtual bool hasNativeBarrierReduction() const { return false; }
  /// Whether `bar.arrive` may wait like `bar.sync` (a whole-CTA barrier).
  virtual bool arrivesAtFullBarrier() const { return false; }

  //===--- Calls -----------------------------------------------------------===//

  /// After conversion, before finishTraps: what the target does with the
  /// module's recursive device functions (recursiveFunctions) where its
  /// consumer cannot run them as they are: bound their depth, or reject a
  /// cycle with an error at the call that closes it (callClosingCycle).
  /// `subGroupUsers`: functionsUsingSubGroups.
  virtual mlir::LogicalResult
  finishRecursion(mlir::gpu::GPUModuleOp module,
                  const llvm::DenseSet<mlir::Operation *> &subGroupUsers,
                  const PTXLoweringState &state) const {
    return mlir::success();
  }

  //===--- Traps -----------------------------------------------------------===//

  /// Ends the thread the way CUDA's `trap` does (the launch fails),
  /// including the block's terminator.
  virtual void emitTrap(mlir::OpBuilder &b, mlir::Location loc,
                        const PTXLoweringState &state) const;
  /// `brkpt` with no debugger attached, including the block's terminator:
  /// by default what `trap` does, the launch fails (NVIDIA's behaviour is
  /// not measured yet: tools/probe_brkpt.py).
  virtual void emitBreakpoint(mlir::OpBuilder &b, mlir::Location loc,
                              const PTXLoweringState &state) const {
    emitTrap(b, loc, state);
  }
  /// After conversion: whatever the target's trap mechanism needs of the
  /// whole module.
  virtual void finishTraps(mlir::gpu::GPUModuleOp module, const PTXLoweringState &state) const {}
  /// Ends the thread after a failed `assert` (its message is written
  /// already), including the block's terminator: the launch fails with
  /// CUDA_ERROR_ASSERT where the target tells it from a trap; by default a
  /// trap.
  virtual void emitAssertTrap(mlir::OpBuilder &b, mlir::Location loc,
                              const PTXLoweringState &state) const {
    emitTrap(b, loc, state);
  }

  //===--- Device services -------------------------------------------------===//

  /// Whether `vprintf` and `__assertfail` are the target's own functions
  /// (NVIDIA's driver links them); else they write to the driver's printf
  /// buffer (DeviceServices.h).
  virtual bool hasNativePrintf() const { return false; }
  /// Whether `malloc`, `free` and `__cuda_syscall_aligned_malloc` are the
  /// target's own functions (NVIDIA's driver links them); else they are the
  /// module's allocator over the driver's heap (DeviceHeap.h).
  virtual bool hasNativeMalloc() const { return false; }

protected:
  /// Whether a generic address can point into `space` (.global, .shared,
  /// .local: .const and .param have no generic window off NVPTX); if not,
  /// says so in `whyNot`.
  static bool inGenericWindow(ptx::StateSpace space, std::string &whyNot);

  unsigned waveSize;
};

#define ZMLIR_TARGET(Enumerator, Name, Factory)                                                    \
  std::unique_ptr<TargetInfo> Factory(unsigned waveSize);
#include "zmlir/targets/Targets.def"

/// The TargetInfo of `target`.
std::unique_ptr<TargetInfo> createTargetInfo(LoweringTarget target, unsigned waveSize);

/// The values of the pass's `target` option, one per registered target.
inline llvm::cl::ValuesClass loweringTargetValues() {
  return llvm::cl::ValuesClass({
#define ZMLIR_TARGET(Enumerator, Name, Factory)                                                    \
  clEnumValN(LoweringTarget::Enumerator, Name, "zmlir/targets/" Name),
#include "zmlir/targets/Targets.def"
  });
}

} // namespace zmlir

#endif // ZMLIR_LOWERING_TARGETINFO_H
