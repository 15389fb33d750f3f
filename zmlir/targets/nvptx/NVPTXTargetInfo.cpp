//===- NVPTXTargetInfo.cpp - The ptx lowering's NVPTX facts -----*- C++ -*-===//
//
// NVPTX has NVIDIA's own instruction for almost everything PTX says: the
// lowering's hooks return NVVM intrinsics, or inline PTX where LLVM 22 has
// no intrinsic or would weaken the instruction.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

/// Inline PTX with one result of `type` and the given operands.
Value inlinePTX(OpBuilder &b, Location loc, mlir::Type type, StringRef text, StringRef constraints,
                bool sideEffects, ValueRange operands = {}) {
  return LLVM::InlineAsmOp::create(b, loc, type, operands, text, constraints, sideEffects,
                                   /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
                                   LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

/// The registers of a cached access's elements of type `elem` (inline PTX):
/// integers of its width, 16, 32 or 64 bits.
struct CachedRegisters {
  mlir::Type type;
  const char *constraint;
  const char *suffix;
};
std::optional<CachedRegisters> cachedRegisters(OpBuilder &b, mlir::Type elem) {
  if (!elem.isIntOrFloat())
    return std::nullopt;
  switch (elem.getIntOrFloatBitWidth()) {
  case 16:
    return CachedRegisters{b.getI16Type(), "h", ".b16"};
  case 32:
    return CachedRegisters{b.getI32Type(), "r", ".b32"};
  case 64:
    return CachedRegisters{b.getI64Type(), "l", ".b64"};
  default:
    return std::nullopt;
  }
}

/// `.v2`, `.v4`, ... for a vector access of `vec` elements.
std::string vectorSuffix(int64_t vec) {
  return vec > 1 ? ".v" + std::to_string(vec) : "";
}

/// `[$n+offset]`: the address operand `n` (after the `vec` outputs of a load,
/// first in a store) and the instruction's own offset.
std::string cachedAddress(int64_t n, int64_t offset) {
  std::string r = "[$" + std::to_string(n);
  if (offset)
    r += "+" + std::to_string(offset);
  return r + "]";
}

/// The `.sem.scope.space` of an mbarrier instruction as the op says them,
/// but for the semantics the instruction has anyway (`implied`: arrivals
/// release, waits acquire) with the .cta scope: those need PTX 8.0, and
/// LLVM 22 writes 7.8 for sm_90.
/// `.shared::cta` where a semantics or scope is left.
std::string mbarrierModifiers(Semantics sem, Scope scope, StateSpace space,
                              Semantics implied = Semantics::None) {
  std::string r;
  if (sem != Semantics::None && sem != implied)
    r += ("." + stringifySemantics(sem)).str();
  if (scope != Scope::None && (scope != Scope::CTA || !r.empty()))
    r += ("." + stringifyScope(scope)).str();
  if (space == StateSpace::Shared)
    r += r.empty() ? ".shared" : ".shared::cta";
  return r + ".b64";
}

/// The name of NVIDIA's barrier intrinsic: `llvm.nvvm.barrier.cta.<what>`
/// with `.aligned` and `.count` (b given) or `.all`.
std::string nvvmBarrier(StringRef what, bool aligned, bool counted) {
  return ("llvm.nvvm.barrier.cta." + what + (aligned ? ".aligned" : "") +
          (counted ? ".count" : ".all"))
      .str();
}

/// Whether LLVM 22's NVPTX backend, given an LLVM atomic for NVPTX
/// `atom`/`red` `op` on `type` with `sem` at `scope`, emits exactly that
/// instruction's semantics and scope. cmpxchg on 32 and 64 bits keeps both;
/// atomicrmw is always emitted relaxed at .gpu scope (its ordering and
/// syncscope are dropped, so `.sys` would come out as `.gpu` and `.acquire`
/// as relaxed), i16 cmpxchg is a 32-bit loop, and the packed half pairs have
/// no atomicrmw at all.
bool llvmAtomicIsExact(AtomicOp op, DataType type, Semantics sem, Scope scope) {
  if (type == DataType::F16x2 || type == DataType::BF16x2)
    return false;
  unsigned width = getTypeBitWidth(type);
  if (op == AtomicOp::Cas)
    return width == 32 || width == 64;
  return (sem == Semantics::None || sem == Semantics::Relaxed) &&
         (scope == Scope::None || scope == Scope::GPU);
}

/// The lowest sm_XX with wmma on `type` elements (of a fragment, or of
/// an mma's multiplicands) for `shape`: f16 sm_70, s8/u8 sm_72, bf16, tf32
/// and f64 sm_80 (PTX ISA 9.7.14.4; LLVM 22's instruction patterns ask the
/// same).
unsigned wmmaMinSm(WmmaShape shape, WmmaType type) {
  if (shape == WmmaShape::M16N16K8 || shape == WmmaShape::M8N8K4 || type == WmmaType::BF16)
    return 80;
  if (type == WmmaType::S8 || type == WmmaType::U8 || type == WmmaType::S32)
    return 72;
  return 70;
}

/// A fragment register as the wmma intrinsics take it: packed f16 pairs as
/// <2 x half>, the rest as PTX has them (i32, f32, f64).
mlir::Type wmmaIntrinsicType(OpBuilder &b, WmmaType type, mlir::Type reg) {
  return type == WmmaType::F16 ? mlir::Type(VectorType::get({2}, b.getF16Type())) : reg;
}

/// `values` bitcast to `type` where they differ from it.
SmallVector<Value> castAll(OpBuilder &b, Location loc, ValueRange values, mlir::Type type) {
  SmallVector<Value> r;
  for (Value v : values)
    r.push_back(v.getType() == type ? v : LLVM::BitcastOp::create(b, loc, type, v).getResult());
  return r;
}

class NVPTXTargetInfo final : public TargetInfo {
public:
  using TargetInfo::TargetInfo;

  StringRef getName() const override { return "nvptx"; }

  /// wmma.load, wmma.store and wmma.mma are LLVM's llvm.nvvm.wmma.*
  /// intrinsics (the tensor cores), for every form they have: all of PTX's
  /// wmma on f16, bf16, tf32, s8, u8 and f64 but an mma of s8 by u8
  /// multiplicands, where the PTX's architecture has the form (an older one
  /// keeps the emulation rather than fail instruction selection). MLIR's
  /// nvvm.wmma.* ops would not do: they have no bf16 or f64 forms. ldmatrix
  /// and mma.sync are llvm.nvvm.ldmatrix.* and llvm.nvvm.mma.* likewise,
  /// the same intrinsics nvvm.ldmatrix and nvvm.mma.sync become.
  bool hasNativeWmma(Operation *op, unsigned sm) const override {
    // ldmatrix from sm_75, mma.sync's f16, bf16, tf32 and f64 forms from sm_80.
    if (isa<LdmatrixOp>(op))
      return sm >= 75;
    if (isa<MmaSyncOp>(op))
      return sm >= 80;
    if (auto mma = dyn_cast<WmmaMmaOp>(op))
      return mma.getAtype() == mma.getBtype() && sm >= wmmaMinSm(mma.getShape(), mma.getAtype());
    if (auto load = dyn_cast<WmmaLoadOp>(op))
      return sm >= wmmaMinSm(load.getShape(), load.getType());
    if (auto store = dyn_cast<WmmaStoreOp>(op))
      return sm >= wmmaMinSm(store.getShape(), store.getType());
    return false;
  }

  /// The intrinsics' names (LLVM's IntrinsicsNVVM.td, WMMA_NAME_LDST and
  /// WMMA_NAME): llvm.nvvm.wmma.<shape>.load.<a|b|c>.<layout>[.stride].<type>,
  /// ...store.d.<layout>[.stride].<type>, and
  /// ...mma.<alayout>.<blayout>[.<rnd>].<signature>[.satfinite], where the
  /// signature is .<dtype>.<ctype> for f16 multiplicands, else .<atype>.
  FailureOr<SmallVector<Value>> emitNativeWmma(OpBuilder &b, Operation *op, Value ptr,
                                               ValueRange args) const override {
    Location loc = op->getLoc();
    MLIRContext *ctx = b.getContext();
    // Several registers come back as a struct, one as itself.
    auto call = [&](TypeRange results, StringRef name, ValueRange operands) {
      mlir::Type result = results.size() > 1 ? LLVM::LLVMStructType::getLiteral(
                                                   ctx, SmallVector<mlir::Type>(results))
                          : results.empty()  ? mlir::Type()
                                             : results.front();
      return callIntrinsic(b, loc, result, name, operands);
    };
    // The registers of an intrinsic's result, as PTX has them.
    auto unpack = [&](Value result, TypeRange types) {
      SmallVector<Value> regs;
      for (auto [i, type] : llvm::enumerate(types)) {
        Value v = types.size() > 1 ? LLVM::ExtractValueOp::create(b, loc, result, i) : result;
        regs.push_back(v.getType() == type ? v : LLVM::BitcastOp::create(b, loc, type, v));
      }
      return regs;
    };
    // ldmatrix: llvm.nvvm.ldmatrix.sync.aligned.m8n8.x<N>[.trans].b16.
    if (auto ld = dyn_cast<LdmatrixOp>(op)) {
      TypeRange types = ld.getD().getTypes();
      std::string name = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x" + std::to_string(types.size()) +
                         (ld.getTrans() ? ".trans" : "") + ".b16";
      return unpack(call(types, name, ptr), types);
    }
    // mma.sync: llvm.nvvm.mma.<shape>.row.col<signature>, the signature as
    // wmma's (.f32.f32 for f16 multiplicands, else .<atype>).
    if (auto mma = dyn_cast<MmaSyncOp>(op)) {
      WmmaType atype = mma.getAtype();
      std::string signature = atype == WmmaType::F16 ? ("." + stringifyWmmaType(mma.getDtype()) +
                                                        "." + stringifyWmmaType(mma.getCtype()))
                                                           .str()
                                                     : ("." + stringifyWmmaType(atype)).str();
      std::string name = "llvm.nvvm.mma." + stringifyMmaShape(mma.getShape()).str() + ".row.col" +
                         signature;
      size_t nab = mma.getA().size() + mma.getB().size();
      SmallVector<Value> operands = castAll(b, loc, args.take_front(nab),
                                            wmmaIntrinsicType(b, atype, args.front().getType()));
      ValueRange c = args.drop_front(nab);
      llvm::append_range(
          operands, castAll(b, loc, c, wmmaIntrinsicType(b, mma.getCtype(), c.front().getType())));
      TypeRange types = mma.getD().getTypes();
      SmallVector<mlir::Type> intrinsicTypes(types.size(),
                                             wmmaIntrinsicType(b, mma.getDtype(), types.front()));
      return unpack(call(intrinsicTypes, name, operands), types);
    }
    std::string prefix = "llvm.nvvm.wmma.";
    if (auto load = dyn_cast<WmmaLoadOp>(op)) {
      TypeRange types = load.getFragment().getTypes();
      SmallVector<mlir::Type> intrinsicTypes(types.size(),
                                             wmmaIntrinsicType(b, load.getType(), types.front()));
      std::string name = prefix + stringifyWmmaShape(load.getShape()).str() + ".load." +
                         stringifyWmmaMatrix(load.getMatrix()).str() + "." +
                         stringifyWmmaLayout(load.getLayout()).str() +
                         (args.empty() ? "" : ".stride") + "." +
                         stringifyWmmaType(load.getType()).str();
      SmallVector<Value> operands{ptr};
      llvm::append_range(operands, args);
      return unpack(call(intrinsicTypes, name, operands), types);
    }
    if (auto store = dyn_cast<WmmaStoreOp>(op)) {
      size_t registers = store.getFragment().size();
      std::string name = prefix + stringifyWmmaShape(store.getShape()).str() + ".store.d." +
                         stringifyWmmaLayout(store.getLayout()).str() +
                         (args.size() > registers ? ".stride" : "") + "." +
                         stringifyWmmaType(store.getType()).str();
      SmallVector<Value> operands{ptr};
      llvm::append_range(operands,
                         castAll(b, loc, args.take_front(registers),
                                 wmmaIntrinsicType(b, store.getType(), args.front().getType())));
      llvm::append_range(operands, args.drop_front(registers));
      call({}, name, operands);
      return SmallVector<Value>();
    }
    auto mma = cast<WmmaMmaOp>(op);
    WmmaType atype = mma.getAtype();
    std::string signature = atype == WmmaType::F16 ? ("." + stringifyWmmaType(mma.getDtype()) +
                                                      "." + stringifyWmmaType(mma.getCtype()))
                                                         .str()
                                                   : ("." + stringifyWmmaType(atype)).str();
    Rounding rnd = mma.getRnd();
    std::string name = prefix + stringifyWmmaShape(mma.getShape()).str() + ".mma." +
                       stringifyWmmaLayout(mma.getAlayout()).str() + "." +
                       stringifyWmmaLayout(mma.getBlayout()).str() +
                       (rnd == Rounding::None ? "" : ("." + stringifyRounding(rnd)).str()) +
                       signature + (mma.getSatfinite() ? ".satfinite" : "");
    size_t na = mma.getA().size(), nb = mma.getB().size();
    SmallVector<Value> operands = castAll(b, loc, args.take_front(na + nb),
                                          wmmaIntrinsicType(b, atype, args.front().getType()));
    llvm::append_range(operands,
                       castAll(b, loc, args.drop_front(na + nb),
                               wmmaIntrinsicType(b, mma.getCtype(), mma.getC().front().getType())));
    TypeRange types = mma.getD().getTypes();
    SmallVector<mlir::Type> intrinsicTypes(types.size(),
                                           wmmaIntrinsicType(b, mma.getDtype(), types.front()));
    return unpack(call(intrinsicTypes, name, operands), types);
  }

  /// NVIDIA's driver links vprintf and __assertfail into the module.
  bool hasNativePrintf() const override { return true; }
  bool hasNativeMalloc() const override { return true; }

  Value nativeDirectedArith(OpBuilder &b, Location loc, StringRef name, ArrayRef<Value> operands,
                            Rounding rnd, bool ftz) const override {
    SmallVector<Value> x(operands);
    mlir::Type t = x[0].getType();
    bool f64 = t.isF64();
    StringRef op = name;
    if (name == "sub") {
      op = "add";
      x[1] = arith::NegFOp::create(b, loc, x[1]);
    }
    std::string intrinsic = ("llvm.nvvm." + op + "." + stringifyRounding(rnd) +
                             (ftz && !f64 ? ".ftz" : "") + (f64 ? ".d" : ".f"))
                                .str();
    return callIntrinsic(b, loc, t, intrinsic, x);
  }

  /// The NVVM lowering only takes its own square-root intrinsic.
  Value nativeSqrt(OpBuilder &b, Location loc, Value a) const override {
    return callIntrinsic(b, loc, a.getType(),
                         a.getType().isF64() ? "llvm.nvvm.sqrt.rn.d" : "llvm.nvvm.sqrt.rn.f", a);
  }

  /// max{.ftz}{.NaN}.f32 and max.f64 (and min) are NVIDIA's intrinsics.
  Value nativeMinMax(OpBuilder &b, Location loc, bool isMin, Value x, Value y, bool nan,
                     bool ftz) const override {
    bool f64 = x.getType().isF64();
    if (f64 && nan)
      return Value();
    std::string name = std::string("llvm.nvvm.f") + (isMin ? "min" : "max") +
                       (ftz && !f64 ? ".ftz" : "") + (nan ? ".nan" : "") + (f64 ? ".d" : ".f");
    return callIntrinsic(b, loc, x.getType(), name, ValueRange{x, y});
  }

  /// LLVM emits a `contract` fadd/fsub/fmul as `add.f32`, `sub.f32`,
  /// `mul.f32` (no `.rn`), so ptxas may fuse them as in nvcc's PTX; `.rn`
  /// kept them apart (softmax_autoregressive_backward_kernel5: 730 SASS
  /// instructions to 618, nvcc's 902).
  bool contractsUnroundedFloatArith() const override { return true; }

  /// NVPTX keeps `bitcast <2 x i16> to i32` as nvcc's `mov.b32 %r, {%rs1,
  /// %rs2}` (v2i16 and v4i8 are its 32-bit registers); zext/shl/or stayed
  /// four instructions (cvt, cvt, shl, or), more SASS than nvcc's, in every
  /// bf16 pair of llm.c's x128 stores. Wider vectors are no registers of
  /// its own (sm_90): LLVM splits them into shifts and ors again.
  bool packsRegistersAsVector(unsigned elementBits, unsigned count) const override {
    return elementBits * count == 32;
  }

  /// NVPTX selects an invariant load from the global space as
  /// ld.global.nc (NVPTXISelDAGToDAG's LDG), vectors too.
  bool hasNonCoherentLoads() const override { return true; }
  /// As clang's CUDA: `ptr byval(...) align N` is `.param .align N .b8
  /// p[K]`, read by ld.param as wide as its alignment allows. As a `[K x i8]`
  /// value, LLVM declared it 1-aligned and read it byte by byte
  /// (DeviceScanInitKernel: 42 SASS instructions, nvcc's 22).
  bool passesKernelAggregatesByVal() const override { return true; }

  /// ld.global with `.cg`, `.cs`, `.lu` or `.cv` (llm.c's __ldcs, 128-bit
  /// `ld.global.cs.v4` included) as that instruction in inline PTX: LLVM's
  /// NVPTX has no form of them (`!nontemporal` is dropped). nvcc's PTX has
  /// them vectorized already. With side effects: the asm's memory effects
  /// cannot be said, and without them MLIR would merge two loads of one
  /// address across a store.
  SmallVector<Value> emitCachedLoad(OpBuilder &b, Location loc, CacheOp cache, bool nc, Value ptr,
                                    int64_t offset, mlir::Type elem, int64_t vec) const override {
    if (cache != CacheOp::CG && cache != CacheOp::CS && cache != CacheOp::LU &&
        cache != CacheOp::CV)
      return {};
    std::optional<CachedRegisters> regs = cachedRegisters(b, elem);
    if (!regs || (nc && cache == CacheOp::LU) || (nc && cache == CacheOp::CV))
      return {};
    std::string text = ("ld.global." + stringifyCacheOp(cache) + (nc ? ".nc" : "")).str();
    std::string outputs, constraints;
    for (int64_t i = 0; i < vec; ++i) {
      outputs += (i ? ", $" : "$") + std::to_string(i);
      constraints += std::string(i ? "," : "") + "=" + regs->constraint;
    }
    text += vectorSuffix(vec) + regs->suffix + " " + (vec > 1 ? "{" + outputs + "}" : outputs) +
            ", " + cachedAddress(vec, offset) + ";";
    constraints += ",l";
    mlir::Type resultType = vec == 1
                                ? regs->type
                                : LLVM::LLVMStructType::getLiteral(
                                      b.getContext(), SmallVector<mlir::Type>(vec, regs->type));
    Value r = LLVM::InlineAsmOp::create(b, loc, resultType, ValueRange{ptr}, text, constraints,
                                        /*has_side_effects=*/true, /*is_align_stack=*/false,
                                        LLVM::tailcallkind::TailCallKind::None,
                                        LLVM::AsmDialectAttr(), ArrayAttr())
                  .getResult(0);
    SmallVector<Value> values;
    for (int64_t i = 0; i < vec; ++i) {
      Value v = vec == 1 ? r : LLVM::ExtractValueOp::create(b, loc, r, i).getResult();
      values.push_back(v.getType() == elem ? v : LLVM::BitcastOp::create(b, loc, elem, v));
    }
    return values;
  }

  /// st.global with `.cg`, `.cs` or `.wt` likewise (__stcs, llm.c's x128
  /// stores).
  bool emitCachedStore(OpBuilder &b, Location loc, CacheOp cache, Value ptr, int64_t offset,
                       ValueRange values) const override {
    if (cache != CacheOp::CG && cache != CacheOp::CS && cache != CacheOp::WT)
      return false;
    std::optional<CachedRegisters> regs = cachedRegisters(b, values.front().getType());
    if (!regs)
      return false;
    int64_t vec = static_cast<int64_t>(values.size());
    std::string inputs, constraints = "l";
    SmallVector<Value> operands{ptr};
    for (int64_t i = 0; i < vec; ++i) {
      inputs += (i ? ", $" : "$") + std::to_string(i + 1);
      constraints += std::string(",") + regs->constraint;
      Value v = values[i];
      operands.push_back(
          v.getType() == regs->type ? v : LLVM::BitcastOp::create(b, loc, regs->type, v));
    }
    std::string text = ("st.global." + stringifyCacheOp(cache)).str() + vectorSuffix(vec) +
                       regs->suffix + " " + cachedAddress(0, offset) + ", " +
                       (vec > 1 ? "{" + inputs + "}" : inputs) + ";";
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, operands, text, constraints,
                              /*has_side_effects=*/true, /*is_align_stack=*/false,
                              LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                              ArrayAttr());
    return true;
  }

  /// The backend emits every f32 instruction of a function in
  /// `preserve-sign` mode as its `.ftz` form (add, sub, mul, fma, div, sqrt,
  /// setp, cvt, neg, abs, min, max).
  F32FlushScope f32FlushScope() const override { return F32FlushScope::Function; }

  /// The instructions this target emits as NVIDIA's intrinsics or inline
  /// PTX with their own `.ftz` (or none): min and max (nativeMinMax), the
  /// .approx functions but rcp (nativeApprox), div.approx and div.full; and
  /// the atomics, NVIDIA's own atom/red whatever the mode (atomicrmw, which
  /// LLVM selects as the instruction on the GPUs whose PTX has it, or
  /// inline PTX): .f32 adds flush subnormals to global memory and not to
  /// shared memory, .noftz.bf16/.bf16x2 keep them (llm.c's atomicAdd of
  /// float sums, matmul_backward_bias kernel7 and kernel8, and of bf16
  /// pairs, layernorm_backward_kernel3).
  bool ignoresF32FlushMode(Operation *op) const override {
    if (isa<AtomOp, RedOp>(op) || plainHalfArith(op))
      return true;
    if (isa<MinOp, MaxOp>(op))
      return !op->hasAttr("xorsign");
    if (auto div = dyn_cast<DivOp>(op))
      return div.getPrecision() != Precision::None && div.getRnd() == Rounding::None &&
             !div.getSat();
    auto approx = [](auto unary) { return unary.getPrecision() == Precision::Approx; };
    return TypeSwitch<Operation *, bool>(op)
        .Case<SinOp, CosOp, Lg2Op, Ex2Op, TanhOp, SqrtOp, RsqrtOp>(approx)
        .Default(false);
  }

  Value nativeApprox(OpBuilder &b, Location loc, StringRef name, Value a, bool ftz) const override {
    mlir::Type t = a.getType();
    if (Value half = nativeHalfApprox(b, loc, name, a))
      return half;
    std::string suffix = t.isF64() ? "d" : "f";
    if (name == "tanh") {
      if (!t.isF32())
        return Value();
      auto asmOp = LLVM::InlineAsmOp::create(
          b, loc, t, ValueRange{a}, "tanh.approx.f32 $0, $1;", "=f,f",
          /*has_side_effects=*/false, /*is_align_stack=*/false, LLVM::TailCallKind::None,
          LLVM::AsmDialectAttr(), ArrayAttr());
      return asmOp.getResult(0);
    }
    if (name == "ex2") {
      if (!t.isF32())
        return Value();
      return callIntrinsic(b, loc, t,
                           ftz ? "llvm.nvvm.ex2.approx.ftz.f32" : "llvm.nvvm.ex2.approx.f32", a);
    }
    // rcp.approx exists only with .ftz; f64 .approx only for rcp and rsqrt.
    if (name == "rcp" && !ftz)
      return Value();
    if (t.isF64() && name != "rcp" && name != "rsqrt")
      return Value();
    std::string intrinsic = ("llvm.nvvm." + name + ".approx." + (ftz ? "ftz." : "") + suffix).str();
    return callIntrinsic(b, loc, t, intrinsic, a);
  }

  /// `brkpt` itself (llvm.debugtrap); without a debugger the launch fails.
  void emitBreakpoint(OpBuilder &b, Location loc, const PTXLoweringState &) const override {
    callIntrinsic(b, loc, mlir::Type(), "llvm.debugtrap", {});
    LLVM::UnreachableOp::create(b, loc);
  }

  /// cvt.rn.bf16.f32 as inline PTX, as nvcc's cuda_bf16.h writes it (one
  /// F2FP on sm_90 where the integer rounding is six instructions), not
  /// LLVM's fptrunc to bfloat: LLVM folds that on constants keeping a
  /// NaN's payload (NVIDIA's is 0x7fff). An older GPU than sm_80 has no
  /// such PTX to run, and ptxas would reject it with a message.
  Value nativeBf16Cvt(OpBuilder &b, Location loc, Value x) const override {
    return inlinePTX(b, loc, b.getI16Type(), "cvt.rn.bf16.f32 $0, $1;", "=h,f",
                     /*sideEffects=*/false, ValueRange{x});
  }

  /// add, sub, mul and fma of f16, f16x2, bf16 and bf16x2 (rounding to
  /// nearest, no .ftz, .sat or .relu), and min and max (.NaN or not, no
  /// .xorsign.abs), as inline PTX, NVIDIA's own instruction as the PTX
  /// spells it (cuda_bf16.h's __hadd2 is `add.bf16x2`, sm_90; cuda_fp16.h's
  /// __hmul `mul.f16`): not computed or compared in f32,
  /// - whose subnormals a function in the f32 flush mode would flush where
  ///   bf16's are kept. That kept such functions (llm.c's
  ///   layernorm_backward_kernel4) out of the mode, and made min.bf16 of two
  ///   subnormals in the mode the OR of their bits (setp.eq.ftz.f32 took
  ///   them for zeros);
  /// - and whose widening, rounding and NaN checks ptxas cannot pair or
  ///   fuse: a `mul.f16` then `add.f16` (no .rn) are one HFMA2 of nvcc's,
  ///   ten instructions of ours (CuTe's sgemm_sm80 epilogue: 3480 SASS
  ///   instructions against nvcc's 1592).
  /// An older GPU than the instruction's has no such PTX to run, and ptxas
  /// would reject it with a message.
  static bool plainHalfArith(Operation *op) {
    bool minMax = isa<MinOp, MaxOp>(op);
    if (!minMax && !isa<AddOp, SubOp, MulOp, FmaOp>(op))
      return false;
    auto type = op->getAttrOfType<DataTypeAttr>("type");
    if (!type ||
        !llvm::is_contained({DataType::F16, DataType::F16x2, DataType::BF16, DataType::BF16x2},
                            type.getValue()))
      return false;
    auto rnd = op->getAttrOfType<RoundingAttr>("rnd");
    if (rnd && rnd.getValue() != Rounding::None && rnd.getValue() != Rounding::RN)
      return false;
    if (auto mode = op->getAttrOfType<MulModeAttr>("mode");
        mode && mode.getValue() != MulMode::None)
      return false;
    if (!minMax && op->hasAttr("nan"))
      return false;
    return llvm::none_of(std::initializer_list<StringRef>{"ftz", "sat", "relu", "xorsign"},
                         [&](StringRef flag) { return op->hasAttr(flag); });
  }

  Value nativeHalfArith(OpBuilder &b, Operation *op, ValueRange operands) const override {
    if (!plainHalfArith(op))
      return Value();
    DataType type = op->getAttrOfType<DataTypeAttr>("type").getValue();
    bool packed = type == DataType::F16x2 || type == DataType::BF16x2;
    auto rnd = op->getAttrOfType<RoundingAttr>("rnd");
    std::string text = op->getName().stripDialect().str();
    if (rnd && rnd.getValue() == Rounding::RN)
      text += ".rn";
    if (op->hasAttr("nan"))
      text += ".NaN";
    text += ("." + stringifyDataType(type) + " $0").str();
    std::string constraints = packed ? "=r" : "=h";
    for (unsigned i = 0; i < operands.size(); ++i) {
      text += ", $" + std::to_string(i + 1);
      constraints += packed ? ",r" : ",h";
    }
    text += ";";
    mlir::Type resultType = packed ? b.getI32Type() : b.getI16Type();
    return inlinePTX(b, op->getLoc(), resultType, text, constraints, /*sideEffects=*/false,
                     operands);
  }

  /// cvt.f32.bf16 as inline PTX, as cuda_bf16.h writes it: ptxas makes a
  /// bf16 from half a register one instruction, where zero-extending the
  /// half and shifting it take two. Not LLVM's fpext of a bfloat, which a
  /// function in the f32 flush mode gets as cvt.ftz.f32.bf16 (flushing
  /// subnormals that cvt.f32.bf16 keeps).
  Value nativeBf16Widen(OpBuilder &b, Location loc, Value bits) const override {
    return inlinePTX(b, loc, b.getF32Type(), "cvt.f32.bf16 $0, $1;", "=f,h",
                     /*sideEffects=*/false, ValueRange{bits});
  }

  /// div and rem of integers as inline PTX, as nvcc wrote them: ptxas
  /// expands them as it does nvcc's, and x / 0, x % 0 and INT_MIN / -1 are
  /// NVIDIA's by definition. LLVM's sdiv/udiv would make those undefined
  /// behaviour, and guarding them (DivRemLowering) costs each division of
  /// llm.c's index math a compare, a max and three selects.
  Value nativeIntegerDivRem(OpBuilder &b, Location loc, bool isDiv, bool isSigned, Value x,
                            Value y) const override {
    auto type = dyn_cast<IntegerType>(x.getType());
    if (!type || y.getType() != type)
      return {};
    StringRef constraint;
    switch (type.getWidth()) {
    case 16:
      constraint = "h";
      break;
    case 32:
      constraint = "r";
      break;
    case 64:
      constraint = "l";
      break;
    default:
      return {};
    }
    std::string text = (Twine(isDiv ? "div" : "rem") + (isSigned ? ".s" : ".u") +
                        Twine(type.getWidth()) + " $0, $1, $2;")
                           .str();
    std::string constraints = ("=" + constraint + "," + constraint + "," + constraint).str();
    return inlinePTX(b, loc, type, text, constraints, /*sideEffects=*/false, ValueRange{x, y});
  }

  /// cvt{.rn,.rz,.rna}{.relu}{.satfinite}.tf32.f32 as inline PTX: LLVM's
  /// llvm.nvvm.f2tf32.* abort instruction selection below sm_80 (.rna),
  /// sm_90 (.rn, .rz) and sm_100 (.satfinite), and the lowering does not
  /// know the architecture; ptxas rejects an older one with a message.
  Value nativeTf32Cvt(OpBuilder &b, Location loc, Value x, StringRef rnd, bool relu,
                      bool satfinite) const override {
    std::string text = ("cvt" + rnd + (relu ? ".relu" : "") + (satfinite ? ".satfinite" : "") +
                        ".tf32.f32 $0, $1;")
                           .str();
    return inlinePTX(b, loc, b.getI32Type(), text, "=r,f", /*sideEffects=*/false, ValueRange{x});
  }

  /// The video instructions as inline PTX: NVIDIA's results by
  /// definition (ptxas expands them into SASS, VABSDIFF4 and the like on
  /// sm_90), where the generic lowering's arithmetic is several times longer.
  Value nativeVideo(OpBuilder &b, Location loc, StringRef ptx, ValueRange operands) const override {
    std::string constraints = "=r";
    for (size_t i = 0; i < operands.size(); ++i)
      constraints += ",r";
    return inlinePTX(b, loc, b.getI32Type(), ptx, constraints, /*sideEffects=*/false, operands);
  }

  /// Texture and surface instructions as inline PTX on NVIDIA's objects
  /// (the runtime's vendor textures, docs/textures.md): ptxas makes them
  /// TEX, TLD4, TXQ, SULD, SUST of the texture units.
  std::optional<SmallVector<Value>> nativeTexture(OpBuilder &b, Location loc, StringRef ptx,
                                                  TypeRange results, ValueRange operands,
                                                  bool sideEffects) const override {
    auto constraint = [](mlir::Type t) -> StringRef {
      if (t.isF32())
        return "f";
      if (t.isF64())
        return "d";
      switch (t.getIntOrFloatBitWidth()) {
      case 16:
        return "h";
      case 32:
        return "r";
      default:
        return "l";
      }
    };
    std::string constraints;
    for (mlir::Type t : results)
      constraints += (constraints.empty() ? "=" : ",=") + constraint(t).str();
    for (Value v : operands)
      constraints += (constraints.empty() ? "" : ",") + constraint(v.getType()).str();
    mlir::Type resultType;
    if (results.size() == 1)
      resultType = results.front();
    else if (results.size() > 1)
      resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                    SmallVector<mlir::Type>(results));
    auto asmOp = LLVM::InlineAsmOp::create(b, loc, resultType ? TypeRange{resultType} : TypeRange{},
                                           operands, ptx, constraints, sideEffects,
                                           /*is_align_stack=*/false, LLVM::TailCallKind::None,
                                           LLVM::AsmDialectAttr(), ArrayAttr());
    SmallVector<Value> r;
    if (results.size() == 1)
      r.push_back(asmOp.getResult(0));
    else
      for (size_t i = 0; i < results.size(); ++i)
        r.push_back(LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), i));
    return r;
  }

  /// ex2.approx and tanh.approx of f16, bf16 (`ex2` only as .ftz.bf16)
  /// and their pairs (vector<2 x f16/bf16>), on the bits in .b16/.b32
  /// registers, as inline PTX: LLVM has no tanh intrinsic, and its
  /// llvm.nvvm.ex2.approx.{f16,bf16} abort instruction selection below
  /// sm_75/sm_90 (the lowering does not know the architecture); inline PTX
  /// leaves that to ptxas, which rejects the module with a message.
  Value nativeHalfApprox(OpBuilder &b, Location loc, StringRef name, Value a) const {
    mlir::Type t = a.getType();
    auto vector = dyn_cast<VectorType>(t);
    mlir::Type elem = vector ? vector.getElementType() : t;
    if ((!elem.isF16() && !elem.isBF16()) || (name != "ex2" && name != "tanh"))
      return Value();
    std::string type = (elem.isF16() ? "f16" : "bf16") + std::string(vector ? "x2" : "");
    bool ftz = name == "ex2" && elem.isBF16();
    mlir::Type bits = b.getIntegerType(vector ? 32 : 16);
    Value x = LLVM::BitcastOp::create(b, loc, bits, a);
    auto asmOp = LLVM::InlineAsmOp::create(
        b, loc, bits, ValueRange{x},
        (name + ".approx" + (ftz ? ".ftz." : ".") + type + " $0, $1;").str(),
        vector ? "=r,r" : "=h,h",
        /*has_side_effects=*/false, /*is_align_stack=*/false, LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
    return LLVM::BitcastOp::create(b, loc, t, asmOp.getResult(0));
  }

  Value nativeDivFull(OpBuilder &b, Location loc, Value x, Value y, bool ftz) const override {
    auto asmOp = LLVM::InlineAsmOp::create(
        b, loc, x.getType(), ValueRange{x, y},
        ftz ? "div.full.ftz.f32 $0, $1, $2;" : "div.full.f32 $0, $1, $2;", "=f,f,f",
        /*has_side_effects=*/false, /*is_align_stack=*/false, LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
    return asmOp.getResult(0);
  }

  Value nativeDivApprox(OpBuilder &b, Location loc, Value x, Value y, bool ftz) const override {
    return callIntrinsic(b, loc, x.getType(),
                         ftz ? "llvm.nvvm.div.approx.ftz.f" : "llvm.nvvm.div.approx.f",
                         ValueRange{x, y});
  }

  std::string syncScopeName(Scope scope) const override {
    switch (scope) {
    case Scope::CTA:
      return "block";
    case Scope::Cluster:
      return "cluster";
    case Scope::GPU:
      return "device";
    default:
      return "";
    }
  }

  /// An atom or red without a scope is .gpu scope (PTX ISA 9.7.13.5), not
  /// LLVM's default system scope; NVPTX keeps a cmpxchg's scope.
  Scope unscopedAtomicScope() const override { return Scope::GPU; }

  /// NVPTX has every atomic natively (atomicrmw on half and bfloat selects
  /// atom.add.noftz.{f16,bf16}; atom.cas.b16, the packed pairs and every
  /// ordered or non-.gpu form are inline PTX, see emitNativeAtomic).
  bool needsAtomicCasLoop(AtomicOp op, DataType type) const override { return false; }

  bool hasNativeAtomic(AtomicOp op, DataType type, Semantics sem, Scope scope) const override {
    bool packedHalf = type == DataType::F16x2 || type == DataType::BF16x2;
    return (!packedHalf || op == AtomicOp::Add) && type != DataType::B128 &&
           !llvmAtomicIsExact(op, type, sem, scope);
  }

  /// `atom{.sem}{.scope}{.space}.op.type` (`red` when not `withResult`) as
  /// inline PTX with the instruction's own semantics, scope and state space.
  Value emitNativeAtomic(OpBuilder &b, Location loc, Value ptr, StateSpace space, AtomicOp op,
                         DataType type, Semantics sem, Scope scope, Value value, Value compare,
                         bool withResult) const override {
    // 1. The instruction: atom{.sem}{.scope}{.space}.op{.noftz}.type, every
    //    qualifier as the PTX wrote it (none given stays none: PTX's own
    //    defaults, .relaxed and .gpu, then apply).
    std::string inst = withResult ? "atom" : "red";
    switch (sem) {
    case Semantics::Relaxed:
    case Semantics::Acquire:
    case Semantics::Release:
    case Semantics::AcqRel:
      inst += "." + stringifySemantics(sem).str();
      break;
    default:
      break;
    }
    if (scope != Scope::None)
      inst += "." + stringifyScope(scope).str();
    if (space != StateSpace::None)
      inst += "." + stringifyStateSpace(space).str();
    inst += "." + stringifyAtomicOp(op).str();
    bool half = type == DataType::F16 || type == DataType::BF16 || type == DataType::F16x2 ||
                type == DataType::BF16x2;
    if (op == AtomicOp::Add && half)
      inst += ".noftz";
    inst += "." + stringifyDataType(type).str();
    // 2. Operands: the address as a 64-bit integer in its own state space
    //    (ptrtoint of an addrspace(3) pointer is the .shared address), the
    //    values as .b16/.b32/.b64 registers (h, r, l).
    unsigned width = getTypeBitWidth(type);
    StringRef reg = width == 16 ? "h" : width == 32 ? "r" : "l";
    Value address = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), ptr);
    SmallVector<Value> operands{address, value};
    if (compare)
      operands.push_back(compare);
    std::string constraints, operandText;
    unsigned next = 0;
    if (withResult) {
      constraints = ("=" + reg + ",").str();
      operandText = "$0, ";
      next = 1;
    }
    constraints += "l";
    operandText += "[$" + std::to_string(next++) + "]";
    for (size_t i = 1; i < operands.size(); ++i) {
      constraints += ("," + reg).str();
      operandText += ", $" + std::to_string(next++);
    }
    // 3. A side effect and a memory clobber: LLVM moves no memory access
    //    across it, so the ordering PTX gives it is all there is.
    constraints += ",~{memory}";
    mlir::Type resultType = b.getIntegerType(width);
    TypeRange results = withResult ? TypeRange(resultType) : TypeRange();
    auto asmOp = LLVM::InlineAsmOp::create(
        b, loc, results, operands, inst + " " + operandText + ";", constraints,
        /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
    return withResult ? asmOp.getResult(0) : Value();
  }

  /// cp.async as NVIDIA's own (sm_80+): llvm.nvvm.cp.async.* (`.s` with a
  /// source size), pointers in the shared (3) and global (1) spaces.
  bool hasNativeAsyncCopy() const override { return true; }

  void emitAsyncCopy(OpBuilder &b, Location loc, Value dst, Value src, int64_t size, CacheOp cache,
                     Value srcSize) const override {
    std::string name = ("llvm.nvvm.cp.async." + stringifyCacheOp(cache) + ".shared.global." +
                        Twine(size) + (srcSize ? ".s" : ""))
                           .str();
    SmallVector<Value> args{dst, src};
    if (srcSize)
      args.push_back(srcSize);
    callIntrinsic(b, loc, mlir::Type(), name, args);
  }

  void emitAsyncCopyCommit(OpBuilder &b, Location loc) const override {
    callIntrinsic(b, loc, mlir::Type(), "llvm.nvvm.cp.async.commit.group", {});
  }

  /// cp.async.wait_group as inline PTX with its count in the text: the
  /// intrinsic's count is an immarg, and as an SSA constant the canonicalizer
  /// merged two waits of different counts into one of a block argument (a
  /// phi), which LLVM's verifier refuses (globalToShmemAsyncCopy at sm_90).
  void emitAsyncCopyWait(OpBuilder &b, Location loc, int64_t pending, bool all) const override {
    if (all) {
      callIntrinsic(b, loc, mlir::Type(), "llvm.nvvm.cp.async.wait.all", {});
      return;
    }
    LLVM::InlineAsmOp::create(b, loc, TypeRange(), ValueRange(),
                              ("cp.async.wait_group " + Twine(pending) + ";").str(), "~{memory}",
                              /*has_side_effects=*/true, /*is_align_stack=*/false,
                              LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                              ArrayAttr());
  }

  /// cp.async.bulk, its groups and fence.proxy.async as NVIDIA's own,
  /// inline PTX (sm_90, PTX ISA 8.0) with the addresses as 64-bit operands.
  /// A copy from global memory is always the `.shared::cluster` form
  /// (`.shared::cta` needs PTX 8.6): the executing CTA's shared addresses
  /// are shared::cluster ones.
  LogicalResult emitNativeBulkCopy(OpBuilder &b, Operation *op, ValueRange args) const override {
    Location loc = op->getLoc();
    std::string text, constraints;
    SmallVector<Value> operands;
    if (auto copy = dyn_cast<CpAsyncBulkOp>(op)) {
      for (Value v : args)
        operands.push_back(isa<LLVM::LLVMPointerType>(v.getType())
                               ? LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), v).getResult()
                               : v);
      if (copy.getDstSpace() == StateSpace::Global) {
        text = "cp.async.bulk.global.shared::cta.bulk_group [$0], [$1], $2;";
        constraints = "l,l,r";
      } else {
        text = std::string("cp.async.bulk.shared::cluster.") +
               (copy.getSrcSpace() == StateSpace::Global ? "global" : "shared::cta") +
               ".mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];";
        constraints = "l,l,r,l";
      }
    } else if (auto fence = dyn_cast<FenceProxyAsyncOp>(op)) {
      StateSpace space = fence.getSpace();
      text = std::string("fence.proxy.async") +
             (space == StateSpace::Global          ? ".global"
              : space == StateSpace::Shared        ? ".shared::cta"
              : space == StateSpace::SharedCluster ? ".shared::cluster"
                                                   : "") +
             ";";
    } else if (isa<CpAsyncBulkCommitGroupOp>(op)) {
      text = "cp.async.bulk.commit_group;";
    } else if (auto wait = dyn_cast<CpAsyncBulkWaitGroupOp>(op)) {
      text = (Twine("cp.async.bulk.wait_group") + (wait.getRead() ? ".read " : " ") +
              Twine(static_cast<int64_t>(wait.getPending())) + ";")
                 .str();
    } else {
      return failure();
    }
    constraints += constraints.empty() ? "~{memory}" : ",~{memory}";
    LLVM::InlineAsmOp::create(b, loc, TypeRange(), operands, text, constraints,
                              /*has_side_effects=*/true, /*is_align_stack=*/false,
                              LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                              ArrayAttr());
    return success();
  }

  Value nativeLaunchRegister(OpBuilder &b, Location loc, SpecialReg reg) const override {
    // %gridid is 64 bits wide; llvm.nvvm.read.ptx.sreg.gridid reads 32.
    if (reg == SpecialReg::Gridid)
      return inlinePTX(b, loc, b.getI64Type(), "mov.u64 $0, %gridid;", "=l",
                       /*sideEffects=*/false);
    // Thread-block clusters' registers (sm_90): NVIDIA's, the passthrough
    // launches clusters.
    if (reg == SpecialReg::IsExplicitCluster)
      return inlinePTX(b, loc, b.getI32Type(),
                       "{ .reg .pred p; mov.pred p, %is_explicit_cluster; selp.u32 $0, 1, 0, p; }",
                       "=r", /*sideEffects=*/false);
    if (isClusterRegister(reg) || reg == SpecialReg::AggrSmemSize)
      return inlinePTX(b, loc, b.getI32Type(),
                       ("mov.u32 $0, %" + stringifySpecialReg(reg) + ";").str(), "=r",
                       /*sideEffects=*/false);
    std::string name = ("llvm.nvvm.read.ptx.sreg." + stringifySpecialReg(reg)).str();
    return callIntrinsic(b, loc, b.getI32Type(), name, {});
  }

  Value readClock(OpBuilder &b, Operation *user, SpecialReg reg) const override {
    Location loc = user->getLoc();
    bool timer = reg == SpecialReg::Globaltimer;
    return callIntrinsic(b, loc, reg == SpecialReg::Clock ? b.getI32Type() : b.getI64Type(),
                         timer                      ? "llvm.nvvm.read.ptx.sreg.globaltimer"
                         : reg == SpecialReg::Clock ? "llvm.nvvm.read.ptx.sreg.clock"
                                                    : "llvm.nvvm.read.ptx.sreg.clock64",
                         {});
  }

  Value readMachineRegister(OpBuilder &b, Location loc, StringRef reg) const override {
    bool wide = reg.ends_with("_64");
    return inlinePTX(b, loc, wide ? b.getI64Type() : b.getI32Type(),
                     (Twine("mov.b") + (wide ? "64" : "32") + " $0, " + reg + ";").str(),
                     wide ? "=l" : "=r", /*sideEffects=*/true);
  }

  Value isSpace(OpBuilder &b, Operation *user, Value ptr, Value address, StateSpace space,
                Value window, std::string &whyNot) const override {
    StringRef name;
    switch (space) {
    case StateSpace::Global:
      name = "llvm.nvvm.isspacep.global";
      break;
    case StateSpace::Shared:
      name = "llvm.nvvm.isspacep.shared";
      break;
    case StateSpace::SharedCluster:
      name = "llvm.nvvm.isspacep.shared.cluster";
      break;
    case StateSpace::Local:
      name = "llvm.nvvm.isspacep.local";
      break;
    case StateSpace::Const:
      name = "llvm.nvvm.isspacep.const";
      break;
    default:
      whyNot = "no NVVM intrinsic";
      return Value();
    }
    return callIntrinsic(b, user->getLoc(), b.getI1Type(), name, ptr);
  }

  /// Inline PTX: LLVM selects llvm.nvvm.prefetch.* only for PTX ISA 8.0,
  /// and writes 7.8 for sm_90 (llc aborted with "cannot select"). The
  /// operand is the PTX address itself, in the op's state space.
  void emitPrefetch(OpBuilder &b, PrefetchOp op, Value address) const override {
    std::string inst = op.getUniform() ? "prefetchu" : "prefetch";
    if (op.getSpace() != StateSpace::None)
      inst += "." + stringifyStateSpace(op.getSpace()).str();
    switch (op.getLevel()) {
    case CacheLevel::L1:
      inst += ".L1";
      break;
    case CacheLevel::L2:
      inst += ".L2";
      break;
    case CacheLevel::L2EvictLast:
      inst += ".L2::evict_last";
      break;
    case CacheLevel::L2EvictNormal:
      inst += ".L2::evict_normal";
      break;
    }
    Location loc = op.getLoc();
    mlir::Type i64 = b.getI64Type();
    address = adjustBits(b, loc, address, i64, false);
    if (op.getOffset() != 0)
      address = arith::AddIOp::create(b, loc, address, intConst(b, loc, i64, op.getOffset()));
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{address}, inst + " [$0];",
                              "l,~{memory}", /*has_side_effects=*/true,
                              /*is_align_stack=*/false, LLVM::TailCallKind::None,
                              LLVM::AsmDialectAttr(), ArrayAttr());
  }

  bool allocatesLocalInGeneric() const override { return true; }
  /// NVPTX prints a cast to the generic space as `generic(sym)+8`.
  bool castsGenericInitializers() const override { return true; }

  Value ballot(OpBuilder &b, Operation *user, Value pred, Value mask) const override {
    return callIntrinsic(b, user->getLoc(), b.getI32Type(), "llvm.nvvm.vote.ballot.sync",
                         ValueRange{mask, pred});
  }

  LogicalResult lowerNative(ShflSyncOp op, ShflSyncOp::Adaptor adaptor,
                            ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type();
    StringRef mode = stringifyShflMode(op.getMode());
    auto pair = LLVM::LLVMStructType::getLiteral(rewriter.getContext(),
                                                 {i32, rewriter.getI1Type()});
    Value r = callIntrinsic(
        rewriter, loc, pair, ("llvm.nvvm.shfl.sync." + mode + ".i32p").str(),
        ValueRange{adaptor.getMembermask(), adaptor.getA(), adaptor.getB(), adaptor.getC()});
    rewriter.replaceOp(op, {LLVM::ExtractValueOp::create(rewriter, loc, r, 0),
                            LLVM::ExtractValueOp::create(rewriter, loc, r, 1)});
    return success();
  }

  LogicalResult lowerNative(MatchSyncOp op, MatchSyncOp::Adaptor adaptor,
                            ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type(), i1 = rewriter.getI1Type();
    Value a = adaptor.getA(), mask = adaptor.getMembermask();
    std::string suffix = a.getType().isInteger(64) ? "i64" : "i32";
    if (op.getMode() == MatchMode::Any) {
      Value r = callIntrinsic(rewriter, loc, i32, "llvm.nvvm.match.any.sync." + suffix,
                              ValueRange{mask, a});
      rewriter.replaceOp(op, {r, intConst(rewriter, loc, i1, 1)});
      return success();
    }
    auto pair = LLVM::LLVMStructType::getLiteral(rewriter.getContext(), {i32, i1});
    Value r = callIntrinsic(rewriter, loc, pair, "llvm.nvvm.match.all.sync." + suffix + "p",
                            ValueRange{mask, a});
    rewriter.replaceOp(op, {LLVM::ExtractValueOp::create(rewriter, loc, r, 0),
                            LLVM::ExtractValueOp::create(rewriter, loc, r, 1)});
    return success();
  }

  Value nativeActivemask(OpBuilder &b, Location loc) const override {
    return callIntrinsic(b, loc, b.getI32Type(), "llvm.nvvm.activemask", {});
  }

  Value nativeVote(OpBuilder &b, Location loc, VoteMode mode, Value pred,
                   Value mask) const override {
    if (mode == VoteMode::Ballot)
      return Value();
    return callIntrinsic(b, loc, b.getI1Type(),
                         ("llvm.nvvm.vote." + stringifyVoteMode(mode) + ".sync").str(),
                         ValueRange{mask, pred});
  }

  Value nativeRedux(OpBuilder &b, Location loc, StringRef name, Value a,
                    Value mask) const override {
    return callIntrinsic(b, loc, b.getI32Type(), ("llvm.nvvm.redux.sync." + name).str(),
                         ValueRange{a, mask});
  }

  LogicalResult emitNativeWarpSync(OpBuilder &b, Location loc, Value mask) const override {
    callIntrinsic(b, loc, mlir::Type(), "llvm.nvvm.bar.warp.sync", mask);
    return success();
  }

  /// Named and counted barriers are NVIDIA's; `bar.sync 0` over the whole
  /// CTA stays the portable barrier.
  LogicalResult lowerNative(BarSyncOp op, BarSyncOp::Adaptor adaptor,
                            ConversionPatternRewriter &rewriter) const override {
    Value id = adaptor.getBarrier(), count = adaptor.getCount();
    std::optional<int64_t> constId = constantInt(id);
    if (constId && *constId == 0 && !count && op.getAligned())
      return failure();
    SmallVector<Value> args{id};
    if (count)
      args.push_back(count);
    callIntrinsic(rewriter, op.getLoc(), mlir::Type(),
                  nvvmBarrier("sync", op.getAligned(), !!count), args);
    rewriter.eraseOp(op);
    return success();
  }

  LogicalResult lowerNative(BarArriveOp op, BarArriveOp::Adaptor adaptor,
                            ConversionPatternRewriter &rewriter) const override {
    callIntrinsic(rewriter, op.getLoc(), mlir::Type(), nvvmBarrier("arrive", op.getAligned(), true),
                  ValueRange{adaptor.getBarrier(), adaptor.getCount()});
    rewriter.eraseOp(op);
    return success();
  }

  LogicalResult lowerNative(BarRedOp op, BarRedOp::Adaptor adaptor,
                            ConversionPatternRewriter &rewriter) const override {
    StringRef mode = stringifyBarRedMode(op.getMode());
    Value count = adaptor.getCount();
    SmallVector<Value> args{adaptor.getBarrier()};
    if (count)
      args.push_back(count);
    args.push_back(adaptor.getPred());
    rewriter.replaceOp(
        op, callIntrinsic(rewriter, op.getLoc(), op.getRes().getType(),
                          nvvmBarrier(("red." + mode).str(), op.getAligned(), !!count), args));
    return success();
  }

  bool hasNativeBarrierReduction() const override { return true; }

  /// The instruction itself, as inline PTX with the barrier's address as a
  /// 64-bit operand (LLVM 22's intrinsics lack the PTX 8.0 semantics and
  /// scopes, and take no arrival count on mbarrier.arrive).
  FailureOr<Value> emitNativeMbarrier(OpBuilder &b, Operation *op, Value ptr,
                                      ValueRange args) const override {
    Location loc = op->getLoc();
    mlir::Type i32 = b.getI32Type(), i64 = b.getI64Type();
    SmallVector<Value> operands;
    if (ptr)
      operands.push_back(LLVM::PtrToIntOp::create(b, loc, i64, ptr));
    llvm::append_range(operands, args);
    auto asmOf = [&](mlir::Type result, const std::string &text, const std::string &constraints,
                     bool sideEffects = true) -> Value {
      auto inlineAsm = LLVM::InlineAsmOp::create(
          b, loc, result, operands, text, sideEffects ? constraints + ",~{memory}" : constraints,
          sideEffects, /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
          LLVM::AsmDialectAttr(), ArrayAttr());
      return result ? inlineAsm.getResult(0) : Value();
    };
    auto argConstraints = [&](size_t from) {
      std::string r;
      for (Value v : ValueRange(operands).drop_front(from))
        r += v.getType() == i64 ? ",l" : ",r";
      return r;
    };
    auto argList = [&](size_t from, size_t first) {
      std::string r;
      for (size_t i = from; i < operands.size(); ++i)
        r += ", $" + std::to_string(first + i - from);
      return r;
    };
    if (auto init = dyn_cast<MbarrierInitOp>(op)) {
      asmOf({}, "mbarrier.init" + mbarrierModifiers({}, {}, init.getSpace()) + " [$0], $1;", "l,r");
      return Value();
    }
    if (auto inval = dyn_cast<MbarrierInvalOp>(op)) {
      asmOf({}, "mbarrier.inval" + mbarrierModifiers({}, {}, inval.getSpace()) + " [$0];", "l");
      return Value();
    }
    if (auto tx = dyn_cast<MbarrierTxOp>(op)) {
      asmOf({},
            std::string("mbarrier.") + (tx.getComplete() ? "complete_tx" : "expect_tx") +
                mbarrierModifiers(tx.getSem(), tx.getScope(), tx.getSpace()) + " [$0], $1;",
            "l,r");
      return Value();
    }
    if (auto arrive = dyn_cast<MbarrierArriveOp>(op)) {
      std::string text = std::string("mbarrier.") + (arrive.getDrop() ? "arrive_drop" : "arrive") +
                         (arrive.getTxCount() ? ".expect_tx" : "") +
                         (arrive.getNoComplete() ? ".noComplete" : "") +
                         mbarrierModifiers(arrive.getSem(), arrive.getScope(), arrive.getSpace(),
                                           Semantics::Release) +
                         " $0, [$1]" + argList(1, 2) + ";";
      return asmOf(i64, text, "=l,l" + argConstraints(1));
    }
    if (auto wait = dyn_cast<MbarrierTestWaitOp>(op)) {
      std::string text = std::string("{\n\t.reg .pred p;\n\tmbarrier.") +
                         (wait.getTryWait() ? "try_wait" : "test_wait") +
                         (wait.getParity() ? ".parity" : "") +
                         mbarrierModifiers(wait.getSem(), wait.getScope(), wait.getSpace(),
                                           Semantics::Acquire) +
                         " p, [$1]" + argList(1, 2) + ";\n\tselp.u32 $0, 1, 0, p;\n\t}";
      Value r = asmOf(i32, text, "=r,l" + argConstraints(1));
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, intConst(b, loc, i32, 0))
          .getResult();
    }
    if (isa<MbarrierPendingCountOp>(op))
      return asmOf(i32, "mbarrier.pending_count.b64 $0, $1;", "=r,l", /*sideEffects=*/false);
    if (isa<FenceMbarrierInitOp>(op)) {
      LLVM::InlineAsmOp::create(
          b, loc, TypeRange(), ValueRange(), "fence.mbarrier_init.release.cluster;", "~{memory}",
          /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
      return Value();
    }
    if (auto arrive = dyn_cast<CpAsyncMbarrierArriveOp>(op)) {
      asmOf({},
            std::string("cp.async.mbarrier.arrive") + (arrive.getNoinc() ? ".noinc" : "") +
                mbarrierModifiers({}, {}, arrive.getSpace()) + " [$0];",
            "l");
      return Value();
    }
    return failure();
  }
};

} // namespace

std::unique_ptr<TargetInfo> zmlir::createNVPTXTargetInfo(unsigned waveSize) {
  return std::make_unique<NVPTXTargetInfo>(waveSize);
}
