//===- Memory.cpp - Loads, stores, addresses, .local ----------------------===//
//
// Addresses (of variables, cvta, isspacep), prefetch, `.param` loads and
// stores (kernel parameters, call arguments and results, aggregates), ld and
// st in every state space with PTX's memory-model qualifiers, and `.local`
// variables. Shared memory is the kernel's window (PTXModuleLayout).
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

struct AddrOfOpLowering : PTXPattern<AddrOfOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(AddrOfOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type type = op.getRes().getType();
    StringAttr name = op.getSymAttr().getAttr();
    VarOp var = state.variables.lookup(name);
    if (!var)
      return unsupported(op, Twine("address of '") + name.getValue() + "' (not a variable)");
    if (var.getSpace() == StateSpace::Shared) {
      auto func = op->getParentOfType<gpu::GPUFuncOp>();
      int64_t offset = state.sharedOffsets.lookup({func, name});
      rewriter.replaceOp(op, intConst(rewriter, loc, type, offset));
      return success();
    }
    unsigned as = var.getSpace() == StateSpace::Const ? state.addressSpaces.constant
                                                      : state.addressSpaces.global;
    Value ptr = LLVM::AddressOfOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext(), as), name.getValue());
    rewriter.replaceOpWithNewOp<LLVM::PtrToIntOp>(op, type, ptr);
    return success();
  }
};

struct CvtaOpLowering : PTXPattern<CvtaOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CvtaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type type = op.getRes().getType();
    Value src = adaptor.getSrc();
    switch (op.getSpace()) {
    case StateSpace::Global:
      // Global and generic addresses of global memory are the same number.
      rewriter.replaceOp(op, adjustBits(rewriter, loc, src, type, false));
      return success();
    case StateSpace::Shared: {
      MLIRContext *ctx = rewriter.getContext();
      Value window = sharedWindow(op);
      auto genericPtr = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic);
      mlir::Type i64 = rewriter.getI64Type();
      if (op.getTo()) {
        // generic -> offset in the window.
        Value base = LLVM::AddrSpaceCastOp::create(rewriter, loc, genericPtr, window);
        Value baseInt = LLVM::PtrToIntOp::create(rewriter, loc, i64, base);
        Value wide = adjustBits(rewriter, loc, src, i64, false);
        Value offset = arith::SubIOp::create(rewriter, loc, wide, baseInt);
        rewriter.replaceOp(op, adjustBits(rewriter, loc, offset, type, false));
        return success();
      }
      Value wide = adjustBits(rewriter, loc, src, i64, false);
      Value ptr = LLVM::GEPOp::create(rewriter, loc, window.getType(), rewriter.getI8Type(), window,
                                      ValueRange{wide});
      Value generic = LLVM::AddrSpaceCastOp::create(rewriter, loc, genericPtr, ptr);
      Value asInt = LLVM::PtrToIntOp::create(rewriter, loc, i64, generic);
      rewriter.replaceOp(op, adjustBits(rewriter, loc, asInt, type, false));
      return success();
    }
    case StateSpace::Local:
    case StateSpace::Param: {
      // Local addresses are private-space pointers as integers; a
      // parameter's is its copy's there (ptx.param_addr).
      MLIRContext *ctx = rewriter.getContext();
      auto localPtr = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.local);
      auto genericPtr = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic);
      mlir::Type i64 = rewriter.getI64Type();
      Value wide = adjustBits(rewriter, loc, src, i64, false);
      Value result;
      if (localPtr == genericPtr) {
        result = wide;
      } else if (op.getTo()) {
        Value p = LLVM::IntToPtrOp::create(rewriter, loc, genericPtr, wide);
        Value q = LLVM::AddrSpaceCastOp::create(rewriter, loc, localPtr, p);
        result = LLVM::PtrToIntOp::create(rewriter, loc, i64, q);
      } else {
        Value p = LLVM::IntToPtrOp::create(rewriter, loc, localPtr, wide);
        Value q = LLVM::AddrSpaceCastOp::create(rewriter, loc, genericPtr, p);
        result = LLVM::PtrToIntOp::create(rewriter, loc, i64, q);
      }
      rewriter.replaceOp(op, adjustBits(rewriter, loc, result, type, false));
      return success();
    }
    case StateSpace::Const: {
      // Where `.const` variables live in global memory (SPIR-V, the host),
      // their generic address is the same number, as for `.global`; else
      // (AMDGPU's constant space) the cast is a real one.
      if (state.addressSpaces.constant == state.addressSpaces.global) {
        rewriter.replaceOp(op, adjustBits(rewriter, loc, src, type, false));
        return success();
      }
      MLIRContext *ctx = rewriter.getContext();
      auto constPtr = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.constant);
      auto genericPtr = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic);
      mlir::Type i64 = rewriter.getI64Type();
      Value wide = adjustBits(rewriter, loc, src, i64, false);
      auto [from, to] = op.getTo() ? std::pair(genericPtr, constPtr)
                                   : std::pair(constPtr, genericPtr);
      Value p = LLVM::IntToPtrOp::create(rewriter, loc, from, wide);
      Value q = LLVM::AddrSpaceCastOp::create(rewriter, loc, to, p);
      Value result = LLVM::PtrToIntOp::create(rewriter, loc, i64, q);
      rewriter.replaceOp(op, adjustBits(rewriter, loc, result, type, false));
      return success();
    }
    default:
      return unsupported(op, Twine("'cvta' for state space '") +
                                 stringifyStateSpace(op.getSpace()) + "'");
    }
  }
};

/// isspacep, in agreement with cvta (generic addresses are the numbers of
/// generic-space pointers: global ones unchanged, the shared window and
/// .local allocas cast to the generic space):
///  - NVPTX: NVIDIA's instruction (llvm.nvvm.isspacep.*);
///  - AMDGPU: llvm.amdgcn.is.shared / is.private on the flat pointer, and
///    global is neither (flat addresses outside LDS and scratch are global);
///  - SPIR-V: the shared window, and the C library's stack of the thread
///    running the work-group, where Intel's CPU runtime keeps private memory
///    (SPIRVTargetInfo.cpp);
///  - host: the runtime's answer (the shared window, the fiber's stack,
///    else global).
/// .const and .param have no generic window off NVPTX (their variables'
/// addresses never become generic ones there): rejected.
struct IsspacepOpLowering : PTXPattern<IsspacepOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(IsspacepOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    mlir::Type i64 = rewriter.getI64Type();
    const AddressSpaceMap &as = state.addressSpaces;
    StateSpace space = op.getSpace();
    Value wide = adjustBits(rewriter, loc, adaptor.getAddr(), i64, false);
    Value ptr = LLVM::IntToPtrOp::create(rewriter, loc, LLVM::LLVMPointerType::get(ctx, as.generic),
                                         wide);
    std::string whyNot;
    Value r = state.target.isSpace(rewriter, op, ptr, wide, space, sharedWindow(op), whyNot);
    if (!r)
      return unsupported(op, Twine("'isspacep.") + stringifyStateSpace(space) + "' on target '" +
                                 state.target.getName() + "' (" + whyNot + ")");
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// prefetch/prefetchu: NVIDIA's instruction on NVPTX; nothing elsewhere (a
/// prefetch has no effect on results).
struct PrefetchOpLowering : PTXPattern<PrefetchOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(PrefetchOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    state.target.emitPrefetch(rewriter, op, adaptor.getAddr());
    rewriter.eraseOp(op);
    return success();
  }
};

/// The struct a kernel's byval pointer parameter points to (a by-value
/// aggregate, TargetInfo::passesKernelAggregatesByVal), or null.
LLVM::LLVMStructType byValCopyType(Value param) {
  auto arg = dyn_cast<BlockArgument>(param);
  if (!arg || !isa<LLVM::LLVMPointerType>(arg.getType()))
    return {};
  auto kernel = dyn_cast<gpu::GPUFuncOp>(arg.getOwner()->getParentOp());
  if (!kernel || arg.getOwner() != &kernel.getBody().front())
    return {};
  auto copy = kernel.getArgAttrOfType<TypeAttr>(arg.getArgNumber(),
                                                LLVM::LLVMDialect::getByValAttrName());
  return copy ? dyn_cast<LLVM::LLVMStructType>(copy.getValue()) : LLVM::LLVMStructType();
}

/// The alignment of the copy a kernel's byval pointer parameter points to
/// (its PTX `.align`, ConvertPTXToStdPass::convertKernel).
uint64_t byValCopyAlign(Value param) {
  auto arg = cast<BlockArgument>(param);
  auto kernel = cast<gpu::GPUFuncOp>(arg.getOwner()->getParentOp());
  auto align = kernel.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                    LLVM::LLVMDialect::getAlignAttrName());
  return align ? align.getInt() : 1;
}

/// The width in bits of a `ld.param`/`st.param` of `type` at `offset` of
/// the aggregate parameter `param`, or a diagnostic when the access is not
/// whole bytes inside it.
template <typename OpTy>
FailureOr<unsigned> aggregateAccessBits(OpTy op, DataType type, int64_t offset, Value param) {
  auto array = dyn_cast<LLVM::LLVMArrayType>(param.getType());
  if (auto copy = byValCopyType(param))
    array = dyn_cast<LLVM::LLVMArrayType>(copy.getBody().front());
  if (!array || !array.getElementType().isInteger(8))
    return op.emitError("unsupported parameter of type ") << param.getType();
  unsigned bits = getTypeBitWidth(type);
  if (bits % 8 != 0 || bits == 0)
    return op.emitError("unsupported access of type '")
           << stringifyDataType(type) << "' to an aggregate parameter";
  if (offset < 0 || offset + bits / 8 > static_cast<int64_t>(array.getNumElements()))
    return op.emitError("unsupported access at bytes [")
           << offset << ", " << offset + bits / 8 << ") of a " << array.getNumElements()
           << "-byte parameter";
  return bits;
}

struct LdParamOpLowering : PTXPattern<LdParamOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(LdParamOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value param = adaptor.getParam();
    Location loc = op.getLoc();
    bool isSigned = isSignedType(op.getType());
    if (param.getType().isIntOrFloat()) {
      if (op.getOffset() != 0)
        return unsupported(op, "'ld.param' at an offset of a scalar parameter");
      rewriter.replaceOp(op, adjustBits(rewriter, loc, param, op.getRes().getType(), isSigned));
      return success();
    }
    FailureOr<unsigned> bits = aggregateAccessBits(op, op.getType(), op.getOffset(), param);
    if (failed(bits))
      return failure();
    mlir::Type wide = rewriter.getIntegerType(*bits);
    if (isa<LLVM::LLVMPointerType>(param.getType())) {
      // A kernel's by-value aggregate as a pointer to its copy: a load at
      // the offset, as aligned as the copy's `.align` allows.
      Value at = LLVM::GEPOp::create(rewriter, loc, param.getType(), rewriter.getI8Type(), param,
                                     ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(op.getOffset())});
      uint64_t align = std::min<uint64_t>(llvm::MinAlign(byValCopyAlign(param), op.getOffset()),
                                          *bits / 8);
      Value value = LLVM::LoadOp::create(rewriter, loc, wide, at, align);
      rewriter.replaceOp(op, adjustBits(rewriter, loc, value, op.getRes().getType(), isSigned));
      return success();
    }
    // An aggregate call or return parameter (!llvm.array<N x i8>): the
    // little-endian bytes at the offset, assembled into an integer.
    Value value;
    for (unsigned k = 0; k < *bits / 8; ++k) {
      Value byte = LLVM::ExtractValueOp::create(rewriter, loc, param,
                                                ArrayRef<int64_t>{op.getOffset() + k});
      if (*bits > 8) {
        byte = arith::ExtUIOp::create(rewriter, loc, wide, byte);
        if (k != 0)
          byte = arith::ShLIOp::create(rewriter, loc, byte, intConst(rewriter, loc, wide, 8 * k));
      }
      value = k == 0 ? byte : arith::OrIOp::create(rewriter, loc, value, byte).getResult();
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, value, op.getRes().getType(), isSigned));
    return success();
  }
};

/// An aggregate call or return parameter is an !llvm.array<N x i8> value
/// (passed and returned by value by the lowered functions); `st.param`
/// replaces the `size(type)` bytes at the offset, little-endian.
struct StParamOpLowering : PTXPattern<StParamOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(StParamOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value param = adaptor.getParam();
    Location loc = op.getLoc();
    FailureOr<unsigned> bits = aggregateAccessBits(op, op.getType(), op.getOffset(), param);
    if (failed(bits))
      return failure();
    mlir::Type wide = rewriter.getIntegerType(*bits);
    Value value = adjustBits(rewriter, loc, adaptor.getValue(), wide, false);
    for (unsigned k = 0; k < *bits / 8; ++k) {
      Value byte = value;
      if (k != 0)
        byte = arith::ShRUIOp::create(rewriter, loc, byte, intConst(rewriter, loc, wide, 8 * k));
      if (*bits > 8)
        byte = arith::TruncIOp::create(rewriter, loc, rewriter.getI8Type(), byte);
      param = LLVM::InsertValueOp::create(rewriter, loc, param, byte,
                                          ArrayRef<int64_t>{op.getOffset() + k});
    }
    rewriter.replaceOp(op, param);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Rejects memory-model modifiers we cannot honour yet.
template <typename OpTy>
LogicalResult checkMemorySemantics(OpTy op, const PTXPattern<OpTy> &p) {
  if (op.getSem() == Semantics::MMIO)
    return p.unsupported(op, "'.mmio' memory access");
  return success();
}

/// The elements of vector `v`, `vec` of them.
SmallVector<Value> vectorElements(OpBuilder &b, Location loc, Value v, int64_t vec) {
  SmallVector<Value> elements;
  for (int64_t i = 0; i < vec; ++i)
    elements.push_back(
        LLVM::ExtractElementOp::create(b, loc, v, intConst(b, loc, b.getI32Type(), i)));
  return elements;
}

/// A vector of `values`, each of type `elem`.
Value vectorOf(OpBuilder &b, Location loc, mlir::Type elem, ArrayRef<Value> values) {
  auto vecType = VectorType::get({static_cast<int64_t>(values.size())}, elem);
  Value v = LLVM::PoisonOp::create(b, loc, vecType);
  for (auto [i, value] : llvm::enumerate(values))
    v = LLVM::InsertElementOp::create(b, loc, v, value,
                                      intConst(b, loc, b.getI32Type(), static_cast<int64_t>(i)));
  return v;
}

/// The address of element `i` of a vector access at `ptr`.
Value elementAddress(OpBuilder &b, Location loc, Value ptr, mlir::Type elem, int64_t i) {
  if (i == 0)
    return ptr;
  return LLVM::GEPOp::create(b, loc, ptr.getType(), elem, ptr,
                             ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
}

LLVM::AtomicOrdering accessOrdering(Semantics sem) {
  switch (sem) {
  case Semantics::Relaxed:
    return LLVM::AtomicOrdering::monotonic;
  case Semantics::Acquire:
    return LLVM::AtomicOrdering::acquire;
  case Semantics::Release:
    return LLVM::AtomicOrdering::release;
  default:
    return LLVM::AtomicOrdering::not_atomic;
  }
}

/// The syncscope of an ld/st `.relaxed`/`.acquire`/`.release` at its PTX
/// scope (NVPTX prints syncscope("device") as .gpu; without one it would be
/// .sys); none for a plain access.
template <typename OpTy>
std::string accessSyncScope(const PTXLoweringState &state, OpTy op, LLVM::AtomicOrdering ordering) {
  if (ordering == LLVM::AtomicOrdering::not_atomic)
    return "";
  return state.target.syncScopeName(op.getScope());
}

struct LdOpLowering : PTXPattern<LdOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(LdOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (failed(checkMemorySemantics(op, *this)))
      return failure();
    FailureOr<Value> ptr = pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(),
                                     op.getSpace());
    if (failed(ptr))
      return failure();
    mlir::Type elem = memoryType(rewriter.getContext(), op.getType());
    int64_t vec = op.getVec();
    unsigned bytes = std::max(1u, widthOf(elem) / 8);
    unsigned align = bytes * vec;
    bool isVolatile = op.getSem() == Semantics::Volatile;
    bool isSigned = isSignedType(op.getType());
    SmallVector<Value> results;
    LLVM::AtomicOrdering ordering = accessOrdering(op.getSem());
    bool atomic = ordering != LLVM::AtomicOrdering::not_atomic;
    // `ld.global.nc` (__ldg, const __restrict__ data): read-only while the
    // kernel runs, so an invariant load where the target has such loads.
    bool invariant = op.getNc() && op.getSpace() == StateSpace::Global && !atomic && !isVolatile &&
                     state.target.hasNonCoherentLoads();
    // A cache operator (__ldcs's `.cs`, `.cg`, `.lu`) kept where the target
    // has the instruction; the offset stays the instruction's own.
    FailureOr<Value> cacheBase = cacheOperatorBase(op, rewriter, adaptor.getAddr(), atomic,
                                                   isVolatile);
    if (failed(cacheBase))
      return failure();
    if (*cacheBase)
      results = state.target.emitCachedLoad(rewriter, loc, op.getCache(), op.getNc(), *cacheBase,
                                            op.getOffset(), elem, vec);
    if (!results.empty()) {
      // Kept by the target.
    } else if (vec > 1 && atomic && bytes * vec <= 8) {
      // A vector `.relaxed`/`.acquire` load of at most 8 bytes is one
      // atomic access of the whole: NVIDIA's hardware never tears it and
      // cub's decoupled look-back relies on that ({status, value} pairs
      // read with ld.relaxed.gpu.v2.u32).
      auto whole = rewriter.getIntegerType(bytes * vec * 8);
      Value v = LLVM::LoadOp::create(rewriter, loc, whole, *ptr, align, isVolatile, false, false,
                                     false, ordering, accessSyncScope(state, op, ordering));
      v = LLVM::BitcastOp::create(rewriter, loc, VectorType::get({vec}, elem), v);
      results = vectorElements(rewriter, loc, v, vec);
    } else if (vec == 1 || (atomic && bytes * vec != 16) || invariant) {
      // A wider vector `.relaxed`/`.acquire` load is, in PTX's memory model,
      // one scalar load per element with the same semantics and scope, in
      // an unspecified order (PTX ISA 8.2 "Vector Data-types"): so the
      // elements are loaded one by one in order, each an atomic with the
      // ordering (the last one's acquire orders what follows).
      // An invariant vector load is one per element as well: LLVM's
      // VectorCombine scalarizes a vector load dropping `!invariant.load`,
      // while the backend's load-store vectorizer joins these again into one
      // vector access keeping it (ld.global.nc.v4).
      std::string scope = accessSyncScope(state, op, ordering);
      for (int64_t i = 0; i < vec; ++i) {
        Value at = elementAddress(rewriter, loc, *ptr, elem, i);
        results.push_back(LLVM::LoadOp::create(rewriter, loc, elem, at,
                                               llvm::MinAlign(align, i * bytes), isVolatile, false,
                                               invariant, false, ordering, scope));
      }
    } else {
      // One vector load. A 16-byte `.relaxed`/`.acquire` one (cub's {status,
      // value} pairs of 8-byte values, read with ld.relaxed.gpu.v2.u64): no
      // target has a 128-bit atomic load, but an aligned 16-byte vector
      // access is one access on NVIDIA's and x86's hardware; a volatile one
      // is never split, and an acquire fence after it orders what follows.
      auto vecType = VectorType::get({vec}, elem);
      Value v = LLVM::LoadOp::create(rewriter, loc, vecType, *ptr, align, isVolatile || atomic,
                                     false, invariant);
      if (atomic && ordering != LLVM::AtomicOrdering::monotonic)
        LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::acquire,
                              accessSyncScope(state, op, ordering));
      results = vectorElements(rewriter, loc, v, vec);
    }
    for (auto [value, result] : llvm::zip(results, op.getResults()))
      value = adjustBits(rewriter, loc, value, result.getType(), isSigned);
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct StOpLowering : PTXPattern<StOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(StOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (failed(checkMemorySemantics(op, *this)))
      return failure();
    FailureOr<Value> ptr = pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(),
                                     op.getSpace());
    if (failed(ptr))
      return failure();
    mlir::Type elem = memoryType(rewriter.getContext(), op.getType());
    int64_t vec = op.getVec();
    unsigned bytes = std::max(1u, widthOf(elem) / 8);
    unsigned align = bytes * vec;
    bool isVolatile = op.getSem() == Semantics::Volatile;
    SmallVector<Value> values;
    for (Value v : adaptor.getValues())
      values.push_back(adjustBits(rewriter, loc, v, elem, false));
    LLVM::AtomicOrdering ordering = accessOrdering(op.getSem());
    bool atomic = ordering != LLVM::AtomicOrdering::not_atomic;
    bool cached = false;
    FailureOr<Value> cacheBase = cacheOperatorBase(op, rewriter, adaptor.getAddr(), atomic,
                                                   isVolatile);
    if (failed(cacheBase))
      return failure();
    if (*cacheBase)
      cached = state.target.emitCachedStore(rewriter, loc, op.getCache(), *cacheBase,
                                            op.getOffset(), values);
    if (cached) {
      // Kept by the target (see LdOpLowering).
    } else if (vec > 1 && atomic && bytes * vec <= 8) {
      // One atomic store of the whole (see LdOpLowering).
      Value v = LLVM::BitcastOp::create(rewriter, loc, rewriter.getIntegerType(bytes * vec * 8),
                                        vectorOf(rewriter, loc, elem, values));
      LLVM::StoreOp::create(rewriter, loc, v, *ptr, align, isVolatile, false, false, ordering,
                            accessSyncScope(state, op, ordering));
    } else if (vec == 1 || (atomic && bytes * vec != 16)) {
      // A wider vector `.relaxed`/`.release` store: one scalar atomic store
      // per element, in order (see LdOpLowering); the first one's release
      // orders what came before.
      std::string scope = accessSyncScope(state, op, ordering);
      for (int64_t i = 0; i < vec; ++i) {
        Value at = elementAddress(rewriter, loc, *ptr, elem, i);
        LLVM::StoreOp::create(rewriter, loc, values[i], at, llvm::MinAlign(align, i * bytes),
                              isVolatile, false, false, ordering, scope);
      }
    } else {
      // One vector store; a 16-byte `.relaxed`/`.release` one is volatile,
      // after a release fence (see LdOpLowering).
      if (atomic && ordering != LLVM::AtomicOrdering::monotonic)
        LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::release,
                              accessSyncScope(state, op, ordering));
      LLVM::StoreOp::create(rewriter, loc, vectorOf(rewriter, loc, elem, values), *ptr, align,
                            isVolatile || atomic);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// The address of a parameter is its copy's in `.local`: the kernel's byval
/// pointer where it has one (TargetInfo::passesKernelAggregatesByVal), else
/// an alloca at the function's entry holding the value.
struct ParamAddrOpLowering : PTXPattern<ParamAddrOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(ParamAddrOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value param = adaptor.getParam();
    Value copy = param;
    auto localType = LLVM::LLVMPointerType::get(op.getContext(), state.addressSpaces.local);
    if (byValCopyType(param)) {
      // The byval copy in the allocas' space (generic on NVPTX).
      if (param.getType() != localType)
        copy = LLVM::AddrSpaceCastOp::create(rewriter, loc, localType, param);
    } else {
      auto fn = op->getParentOfType<FunctionOpInterface>();
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&fn.getFunctionBody().front());
      copy = localAlloca(rewriter, loc, param.getType(), kParamCopyAlign, state);
      LLVM::StoreOp::create(rewriter, loc, param, copy);
    }
    rewriter.replaceOpWithNewOp<LLVM::PtrToIntOp>(op, op.getRes().getType(), copy);
    return success();
  }
};

/// A `.local` variable is an alloca in the target's private address space
/// (localAlloca); its PTX address is the pointer as an integer.
struct LocalVarOpLowering : PTXPattern<LocalVarOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(LocalVarOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    // One array-typed element: SPIR-V has no array-sized allocas.
    if (static_cast<uint64_t>(op.getSize()) > state.target.maxVariableBytes())
      return unsupported(op, Twine("'.local' variable of ") + Twine(op.getSize()) +
                                 " bytes on target '" + state.target.getName() + "' (at most " +
                                 Twine(state.target.maxVariableBytes()) + ")");
    auto arrayType = LLVM::LLVMArrayType::get(rewriter.getI8Type(), op.getSize());
    Value ptr = localAlloca(rewriter, op.getLoc(), arrayType, op.getAlign(), state);
    rewriter.replaceOpWithNewOp<LLVM::PtrToIntOp>(op, op.getRes().getType(), ptr);
    return success();
  }
};

} // namespace

/// NVPTX wants allocas in the generic space, cast to the local one (what
/// NVPTXLowerAlloca expects): LLVM 22 selects an addrspace(5) alloca's frame
/// index as the generic %SP, so its "local" address was a generic one and
/// local loads and stores through it faulted (CUDA_ERROR_ILLEGAL_ADDRESS on
/// the H200).
LLVM::LLVMPointerType zmlir::allocaPointerType(MLIRContext *ctx, const PTXLoweringState &state) {
  return LLVM::LLVMPointerType::get(ctx, state.target.allocatesLocalInGeneric()
                                             ? state.addressSpaces.generic
                                             : state.addressSpaces.local);
}

/// One `type` in a new alloca in the target's private address space, as a
/// `.local` pointer.
Value zmlir::localAlloca(OpBuilder &b, Location loc, mlir::Type type, int64_t align,
                         const PTXLoweringState &state) {
  MLIRContext *ctx = b.getContext();
  auto localType = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.local);
  auto allocaType = allocaPointerType(ctx, state);
  Value one = intConst(b, loc, b.getI64Type(), 1);
  Value ptr = LLVM::AllocaOp::create(b, loc, allocaType, type, one, align);
  if (allocaType != localType)
    ptr = LLVM::AddrSpaceCastOp::create(b, loc, localType, ptr);
  return ptr;
}

void zmlir::populatePTXMemoryPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<LocalVarOpLowering, AddrOfOpLowering, CvtaOpLowering, ParamAddrOpLowering,
               LdParamOpLowering, StParamOpLowering, LdOpLowering, StOpLowering, IsspacepOpLowering,
               PrefetchOpLowering>(patterns.getContext(), state);
}
