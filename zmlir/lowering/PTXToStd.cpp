//===- PTXToStd.cpp - The convert-ptx-to-std pass -------------------------===//
//
// The pass's module-level jobs: PTX kernels become `gpu.func` kernels in one
// `gpu.module` (each with its shared window laid out), device functions
// internal llvm.funcs, module variables llvm.globals (with initializers that
// hold addresses); function addresses and indirect calls are expanded
// (Calls.cpp), and so are device printf and assert (DeviceServices.cpp).
// Then each ptx op is rewritten by the patterns of its family (Patterns.h) to
// arith/math/cf/gpu/llvm ops with PTX's exact semantics where LLVM's differ.
// Anything not handled yet is an `unsupported ...` error at the op's PTX
// source location.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/DeviceHeap.h"
#include "zmlir/lowering/DeviceServices.h"
#include "zmlir/lowering/PTXLowering.h"

#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace zmlir {
#define GEN_PASS_DEF_CONVERTPTXTOSTD
#include "zmlir/lowering/Passes.h.inc"
} // namespace zmlir

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

std::optional<int64_t> zmlir::maxBlockThreads(Operation *fn) {
  for (StringRef bound : {"ptx.maxntid", "ptx.reqntid"}) {
    auto dims = fn->getAttrOfType<DenseI64ArrayAttr>(bound);
    if (!dims || dims.empty())
      continue;
    int64_t threads = 1;
    for (int64_t d : dims.asArrayRef())
      threads *= d;
    return threads;
  }
  return std::nullopt;
}

namespace {

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// What cuFuncGetAttribute reports of a kernel: its `.local` bytes per
/// thread (LOCAL_SIZE_BYTES), the `.const` variables it refers to
/// (CONST_SIZE_BYTES), the most threads a block of it may have, from
/// `.maxntid` or `.reqntid` (MAX_THREADS_PER_BLOCK; a launch above is refused),
/// and its register ceiling, from `.maxnreg` (NUM_REGS is at most that).
void setKernelResourceAttrs(gpu::GPUFuncOp kernel, func::FuncOp func, PTXLoweringState &state) {
  Builder b(kernel.getContext());
  int64_t localBytes = 0;
  kernel.walk([&](LocalVarOp local) {
    localBytes = llvm::alignTo(localBytes, std::max<int64_t>(local.getAlign(), 1)) +
                 local.getSize();
  });
  llvm::SetVector<StringAttr> constants;
  kernel.walk([&](AddrOfOp addr) {
    StringAttr name = addr.getSymAttr().getAttr();
    VarOp var = state.variables.lookup(name);
    if (var && var.getSpace() == StateSpace::Const)
      constants.insert(name);
  });
  int64_t constBytes = 0;
  for (StringAttr name : constants) {
    VarOp var = state.variables.lookup(name);
    constBytes += var.getCount() * var.getElementSize();
  }
  kernel->setAttr("zmlir.local_bytes", b.getI64IntegerAttr(localBytes));
  kernel->setAttr("zmlir.const_bytes", b.getI64IntegerAttr(constBytes));
  if (std::optional<int64_t> threads = maxBlockThreads(func))
    kernel->setAttr("zmlir.max_threads", b.getI64IntegerAttr(*threads));
  auto maxnreg = func->getAttrOfType<DenseI64ArrayAttr>("ptx.maxnreg");
  if (maxnreg && maxnreg.size() == 1)
    kernel->setAttr("zmlir.max_registers", b.getI64IntegerAttr(maxnreg[0]));
}

/// The alignment a shared window's base is declared with (the global window
/// of NVPTX and AMDGPU) or assumed to have (a kernel argument's, given by the
/// runtime: SPIR-V's, the host's).
constexpr int64_t kSharedWindowAlign = 16;

/// Lays out the `.shared` variables `kernel` refers to and returns the size
/// of the static part, and in `maxAlign` the strictest alignment among them.
/// Unsized (`.extern`) arrays all start where the static ones end, aligned
/// to the strictest of them.
int64_t layoutSharedWindow(gpu::GPUFuncOp kernel, PTXLoweringState &state, int64_t &maxAlign) {
  llvm::SetVector<StringAttr> used;
  kernel.walk([&](AddrOfOp addr) {
    StringAttr name = addr.getSymAttr().getAttr();
    VarOp var = state.variables.lookup(name);
    if (var && var.getSpace() == StateSpace::Shared)
      used.insert(name);
  });
  int64_t offset = 0, dynamicAlign = 1;
  bool barRed = kernel.walk([](BarRedOp) { return WalkResult::interrupt(); }).wasInterrupted();
  if (barRed && !state.target.hasNativeBarrierReduction()) {
    state.barrierCounters.insert(kernel);
    offset = kBarrierCounterBytes;
  }
  offset = reserveWmmaScratch(kernel, offset, state);
  bool reserved = kernel
                      .walk([](SregOp op) {
                        return isReservedSmemRegister(op.getReg()) ? WalkResult::interrupt()
                                                                   : WalkResult::advance();
                      })
                      .wasInterrupted();
  if (reserved) {
    offset = llvm::alignTo(offset, kSharedWindowAlign);
    state.reservedSmem[kernel] = offset;
    offset += kReservedSmemBytes;
  }
  SmallVector<StringAttr> dynamic;
  for (StringAttr name : used) {
    VarOp var = state.variables.lookup(name);
    int64_t align = std::max<int64_t>(var.getAlign(), var.getElementSize());
    maxAlign = std::max(maxAlign, align);
    if (var.getCount() == 0) {
      dynamic.push_back(name);
      dynamicAlign = std::max(dynamicAlign, align);
      continue;
    }
    offset = llvm::alignTo(offset, align);
    state.sharedOffsets[{kernel, name}] = offset;
    offset += var.getCount() * var.getElementSize();
  }
  int64_t staticEnd = offset;
  int64_t dynamicStart = llvm::alignTo(staticEnd, dynamicAlign);
  for (StringAttr name : dynamic)
    state.sharedOffsets[{kernel, name}] = dynamicStart;
  // The runtime adds the dynamic size to this; keep the padding before the
  // dynamic part inside the static size.
  return dynamic.empty() ? staticEnd : dynamicStart;
}

struct ConvertPTXToStdPass : zmlir::impl::ConvertPTXToStdBase<ConvertPTXToStdPass> {
  using ConvertPTXToStdBase::ConvertPTXToStdBase;

  void runOnOperation() override;

private:
  LogicalResult convertDeviceFunction(func::FuncOp func, gpu::GPUModuleOp gpuModule,
                                      const TargetInfo &target);
  LogicalResult convertVariables(ModuleOp module, gpu::GPUModuleOp gpuModule,
                                 PTXLoweringState &state);
  FailureOr<gpu::GPUFuncOp> convertKernel(func::FuncOp func, gpu::GPUModuleOp gpuModule,
                                          PTXLoweringState &state);

  /// The strictest alignment of the kernels' shared variables: the global
  /// window's own alignment.
  int64_t windowAlign = kSharedWindowAlign;
  /// Whether the target flushes f32 subnormals for the whole module
  /// (programFlushesF32): every function gets the flush mode.
  bool programFlushes = false;
};

/// A variable whose initializer holds addresses of symbols
/// (`.u64 t[2] = {generic(a), f}`) gets an initializer region building a
/// packed struct: the initializer's bytes between the addresses, and at each
/// address's offset
///  - for a `.global`/`.const` variable, its address plus the addend (a
///    constant GEP, as a pointer field or ptrtoint; generic and global addresses are
///    the same number, as for `mov` and `cvta.global`);
///  - for a `.func`, `ptx.func_addr`, which expandIndirectCalls replaces
///    with the function's encoding (kFuncAddressBase + its index) and adds
///    to the switch of each indirect call.
/// Each address is truncated to the element's width (4 or 8 bytes).
static LogicalResult buildAddressInitializer(VarOp var, LLVM::GlobalOp global,
                                             ArrayRef<int8_t> bytes, ModuleOp module,
                                             const PTXLoweringState &state) {
  MLIRContext *ctx = var.getContext();
  Location loc = var.getLoc();
  int64_t width = var.getElementSize();
  if (width != 4 && width != 8)
    return var.emitError("unsupported address in an initializer of ")
           << width << "-byte elements in '" << var.getSymName() << "'";
  mlir::Type i8 = IntegerType::get(ctx, 8), i64 = IntegerType::get(ctx, 64);
  mlir::Type element = IntegerType::get(ctx, 8 * width);
  OpBuilder b(ctx);
  Block *body = b.createBlock(&global.getInitializerRegion());
  SmallVector<mlir::Type> fields;
  SmallVector<Value> values;
  auto addBytes = [&](int64_t from, int64_t to) {
    if (from >= to)
      return;
    auto type = LLVM::LLVMArrayType::get(i8, to - from);
    auto data = DenseElementsAttr::get(RankedTensorType::get({to - from}, i8),
                                       bytes.slice(from, to - from));
    fields.push_back(type);
    values.push_back(LLVM::ConstantOp::create(b, loc, type, data));
  };
  SmallVector<InitAddressAttr> addresses(var.getInitAddresses()->getAsRange<InitAddressAttr>());
  llvm::sort(addresses,
             [](InitAddressAttr x, InitAddressAttr y) { return x.getOffset() < y.getOffset(); });
  int64_t at = 0;
  for (InitAddressAttr address : addresses) {
    int64_t offset = address.getOffset();
    if (offset < at || offset % width != 0 || offset + width > static_cast<int64_t>(bytes.size()))
      return var.emitError("unsupported address at byte ")
             << offset << " of the initializer of '" << var.getSymName() << "'";
    addBytes(at, offset);
    StringRef name = address.getSymbol().getValue();
    Value value;
    if (VarOp target = state.variables.lookup(address.getSymbol().getAttr())) {
      if (target.getSpace() != StateSpace::Global && target.getSpace() != StateSpace::Const)
        return var.emitError("unsupported address of '")
               << name << "' in state space '" << stringifyStateSpace(target.getSpace())
               << "' in the initializer of '" << var.getSymName() << "'";
      unsigned as = target.getSpace() == StateSpace::Const ? state.addressSpaces.constant
                                                           : state.addressSpaces.global;
      auto ptrType = LLVM::LLVMPointerType::get(ctx, as);
      Value ptr = LLVM::AddressOfOp::create(b, loc, ptrType, name);
      if (address.getAddend() != 0)
        ptr = LLVM::GEPOp::create(b, loc, ptrType, i8, ptr,
                                  ArrayRef<LLVM::GEPArg>{address.getAddend()});
      // A 64-bit element stays a pointer field: LLVM 22's SPIR-V backend
      // emits an undefined id for ptrtoint of a constant GEP or add
      // (spirv-val rejects both).
      if (width == 8) {
        if (address.getGeneric() && state.target.castsGenericInitializers()) {
          ptrType = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic);
          ptr = LLVM::AddrSpaceCastOp::create(b, loc, ptrType, ptr);
        }
        fields.push_back(ptrType);
        values.push_back(ptr);
        at = offset + width;
        continue;
      }
      value = LLVM::PtrToIntOp::create(b, loc, i64, ptr);
    } else if (auto fn = module.lookupSymbol<func::FuncOp>(name); fn && !fn->hasAttr("ptx.entry")) {
      if (address.getAddend() != 0)
        return var.emitError("unsupported address of function '")
               << name << "' plus " << address.getAddend() << " in the initializer of '"
               << var.getSymName() << "'";
      value = FuncAddrOp::create(b, loc, i64, address.getSymbol());
    } else {
      return var.emitError("unsupported address of '")
             << name << "' (neither a variable nor a .func) in the initializer of '"
             << var.getSymName() << "'";
    }
    if (width != 8)
      value = LLVM::TruncOp::create(b, loc, element, value);
    fields.push_back(element);
    values.push_back(value);
    at = offset + width;
  }
  addBytes(at, bytes.size());
  auto type = LLVM::LLVMStructType::getLiteral(ctx, fields, /*isPacked=*/true);
  Value result = LLVM::UndefOp::create(b, loc, type);
  for (auto [index, value] : llvm::enumerate(values))
    result = LLVM::InsertValueOp::create(b, loc, result, value,
                                         ArrayRef<int64_t>{static_cast<int64_t>(index)});
  LLVM::ReturnOp::create(b, loc, result);
  global.setGlobalTypeAttr(TypeAttr::get(type));
  return success();
}

LogicalResult ConvertPTXToStdPass::convertVariables(ModuleOp module, gpu::GPUModuleOp gpuModule,
                                                    PTXLoweringState &state) {
  OpBuilder b(gpuModule.getBodyRegion());
  // Every variable first: an initializer may hold the address of a later one.
  for (VarOp var : module.getOps<VarOp>())
    state.variables[var.getSymNameAttr()] = var;
  for (VarOp var : llvm::make_early_inc_range(module.getOps<VarOp>())) {
    if (var.getSpace() == StateSpace::Shared)
      continue;
    if (var.getSpace() != StateSpace::Global && var.getSpace() != StateSpace::Const)
      return var.emitError("unsupported module variable in state space '")
             << stringifyStateSpace(var.getSpace()) << "'";
    if (var.getCount() == 0)
      return var.emitError("unsupported unsized variable outside .shared");
    int64_t size = var.getCount() * var.getElementSize();
    if (static_cast<uint64_t>(size) > state.target.maxVariableBytes())
      return var.emitError("unsupported variable '")
             << var.getSymName() << "' of " << size << " bytes on target '"
             << state.target.getName() << "' (at most " << state.target.maxVariableBytes() << ")";
    mlir::Type type = LLVM::LLVMArrayType::get(b.getI8Type(), size);
    Attribute init;
    bool isExtern = var.getLinkage() && *var.getLinkage() == "extern";
    // The bytes are materialized only for an initializer (its size bounds
    // them by the PTX text's); zeros are a splat, however large the variable.
    SmallVector<int8_t> bytes;
    if (!isExtern) {
      auto tensor = RankedTensorType::get({size}, b.getI8Type());
      int8_t zero = 0;
      if (auto data = var.getInit()) {
        bytes.assign(size, 0);
        llvm::copy(*data, bytes.begin());
      }
      if (!var.getInitAddresses())
        init = DenseElementsAttr::get(tensor, bytes.empty() ? ArrayRef<int8_t>(zero)
                                                            : ArrayRef<int8_t>(bytes));
    }
    bool isConst = var.getSpace() == StateSpace::Const;
    unsigned as = isConst ? state.addressSpaces.constant : state.addressSpaces.global;
    auto global = LLVM::GlobalOp::create(
        b, var.getLoc(), type, /*isConstant=*/false,
        isExtern ? LLVM::Linkage::External : LLVM::Linkage::External, var.getSymName(), init,
        std::max<int64_t>(var.getAlign(), 1), as);
    if (var.getInitAddresses() &&
        failed(buildAddressInitializer(var, global, bytes, module, state)))
      return failure();
    // __managed__: code emission tells the target (NVPTX prints
    // `.attribute(.managed)`); other targets' globals are plain memory.
    if (var.getManaged())
      global->setAttr("ptx.managed", b.getUnitAttr());
  }
  return success();
}

/// A `.func` becomes an internal llvm.func in the gpu.module with the same
/// blocks; its `.param` arguments and return value are plain values.
LogicalResult ConvertPTXToStdPass::convertDeviceFunction(func::FuncOp func,
                                                         gpu::GPUModuleOp gpuModule,
                                                         const TargetInfo &target) {
  MLIRContext *ctx = func.getContext();
  FunctionType type = func.getFunctionType();
  if (type.getNumResults() > 1)
    return func.emitError("unsupported device function '")
           << func.getName() << "' with more than one return value";
  mlir::Type result = type.getNumResults() ? type.getResult(0) : LLVM::LLVMVoidType::get(ctx);
  auto fnType = LLVM::LLVMFunctionType::get(result, type.getInputs());
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(gpuModule.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, func.getLoc(), func.getName(), fnType,
                                     LLVM::Linkage::Internal);
  setF32DenormalMode(fn, func, target, programFlushes);
  fn.getBody().getBlocks().splice(fn.getBody().end(), func.getBody().getBlocks());
  func.erase();
  return success();
}

FailureOr<gpu::GPUFuncOp> ConvertPTXToStdPass::convertKernel(func::FuncOp func,
                                                             gpu::GPUModuleOp gpuModule,
                                                             PTXLoweringState &state) {
  MLIRContext *ctx = func.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(gpuModule.getBody());
  SmallVector<mlir::Type> inputs(func.getArgumentTypes());
  bool windowArg = sharedWindow == "kernel-arg";
  auto windowType = LLVM::LLVMPointerType::get(ctx, state.addressSpaces.shared);
  if (windowArg)
    inputs.push_back(windowType);
  auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                       FunctionType::get(ctx, inputs, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  setF32DenormalMode(kernel, func, state.target, programFlushes);
  // Replace the builder's empty body with the PTX function's blocks.
  Region &body = kernel.getBody();
  body.front().erase();
  body.getBlocks().splice(body.end(), func.getBody().getBlocks());
  Block &entry = body.front();
  if (state.target.passesKernelAggregatesByVal()) {
    // By-value aggregates become pointers to the kernel's copy of the bytes,
    // a byval struct aligned as the PTX declares it (ld.param reads them
    // through it, Memory.cpp), in the space of the target's allocas: a
    // byval argument is the caller's stack copy. Upstream's gpu.func lowering
    // drops `llvm.byval` and `llvm.align`: `zmlir.byval` keeps each
    // parameter's type and `zmlir.align` its alignment (unit where none) for
    // code emission to restore.
    auto copyType = allocaPointerType(ctx, state);
    SmallVector<Attribute> byVal(entry.getNumArguments(), b.getUnitAttr());
    SmallVector<Attribute> aligns(entry.getNumArguments(), b.getUnitAttr());
    bool anyByVal = false;
    for (BlockArgument arg : entry.getArguments()) {
      auto bytes = dyn_cast<LLVM::LLVMArrayType>(arg.getType());
      if (!bytes)
        continue;
      unsigned index = arg.getArgNumber();
      auto align = func.getArgAttrOfType<IntegerAttr>(index, "ptx.align");
      arg.setType(copyType);
      inputs[index] = copyType;
      byVal[index] = TypeAttr::get(LLVM::LLVMStructType::getLiteral(ctx, {bytes}));
      aligns[index] = align ? align : b.getI64IntegerAttr(1);
      anyByVal = true;
    }
    if (anyByVal) {
      kernel.setFunctionType(FunctionType::get(ctx, inputs, {}));
      for (auto [index, type] : llvm::enumerate(byVal)) {
        if (!isa<TypeAttr>(type))
          continue;
        kernel.setArgAttr(index, LLVM::LLVMDialect::getByValAttrName(), type);
        kernel.setArgAttr(index, LLVM::LLVMDialect::getAlignAttrName(), aligns[index]);
      }
      kernel->setAttr("zmlir.byval", b.getArrayAttr(byVal));
      kernel->setAttr("zmlir.align", b.getArrayAttr(aligns));
    }
  }
  Value window;
  if (windowArg) {
    window = entry.addArgument(windowType, func.getLoc());
  } else {
    b.setInsertionPointToStart(&entry);
    window = LLVM::AddressOfOp::create(b, func.getLoc(), windowType, "__zmlir_shared_window");
  }
  // The performance directives, for a target whose code keeps them
  // (NVPTX: `.maxntid` and `.minnctapersm` bound ptxas's registers), and for
  // the shared window's layout (the exchange area is for the largest block).
  for (StringRef directive : {"ptx.reqntid", "ptx.maxntid", "ptx.minnctapersm", "ptx.maxnreg"})
    if (Attribute value = func->getAttr(directive))
      kernel->setAttr(directive, value);
  int64_t maxAlign = kSharedWindowAlign;
  int64_t staticBytes = layoutSharedWindow(kernel, state, maxAlign);
  if (windowArg && maxAlign > kSharedWindowAlign) {
    // A variable aligned more strictly than the runtime's window (numba's
    // `cuda.shared.array(alignment=256)`): the window is over-allocated by
    // maxAlign - 1 bytes and its base rounded up to maxAlign, so that every
    // offset laid out above is aligned as declared.
    Location loc = func.getLoc();
    mlir::Type i64 = b.getI64Type();
    b.setInsertionPointToStart(&entry);
    Value address = LLVM::PtrToIntOp::create(b, loc, i64, window);
    Value negated = LLVM::SubOp::create(b, loc, intConst(b, loc, i64, 0), address);
    Value pad = LLVM::AndOp::create(b, loc, negated, intConst(b, loc, i64, maxAlign - 1));
    window = LLVM::GEPOp::create(b, loc, windowType, b.getI8Type(), window, ValueRange{pad});
    staticBytes += maxAlign - 1;
  }
  windowAlign = std::max(windowAlign, maxAlign);
  state.sharedWindows[kernel] = window;
  kernel->setAttr("zmlir.static_shared_bytes", b.getI64IntegerAttr(staticBytes));
  kernel->setAttr("zmlir.param_count", b.getI64IntegerAttr(func.getNumArguments()));
  setKernelResourceAttrs(kernel, func, state);
  func.erase();
  return kernel;
}

void ConvertPTXToStdPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  if (sharedWindow != "global" && sharedWindow != "kernel-arg") {
    module.emitError("invalid shared-window '")
        << sharedWindow << "': expected 'global' or 'kernel-arg'";
    return signalPassFailure();
  }
  if (waveSize != 32 && waveSize != 64) {
    module.emitError("invalid wave-size ") << waveSize << ": expected 32 or 64";
    return signalPassFailure();
  }
  std::unique_ptr<TargetInfo> targetInfo = createTargetInfo(target, waveSize);
  AddressSpaceMap addressSpaces{genericAddressSpace, globalAddressSpace, sharedAddressSpace,
                                constAddressSpace, localAddressSpace};
  PTXLoweringState state(PTXLoweringOptions{*targetInfo, addressSpaces, nativeTextures});
  state.nativeWmma = nativeWmmaModule(module, *targetInfo);

  if (nativeTextures) {
    // A `.texref`, `.surfref` or `.samplerref` is one of our descriptors
    // (frontend/importer/module.py), which the target's own texture
    // instructions cannot read.
    bool refused = false;
    for (VarOp var : module.getOps<VarOp>())
      for (StringRef prefix : {"__zmlir_texref_", "__zmlir_surfref_", "__zmlir_samplerref_"})
        if (var.getSymName().starts_with(prefix)) {
          var.emitError("unsupported ")
              << "'." << prefix.drop_front(8).drop_back(1) << "' variable '"
              << var.getSymName().drop_front(prefix.size()) << "' with native textures";
          refused = true;
        }
    if (refused)
      return signalPassFailure();
  }

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "ptx");
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());

  if (failed(convertVariables(module, gpuModule, state)))
    return signalPassFailure();

  programFlushes = programFlushesF32(module, *targetInfo);
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  bool failedAny = false;
  for (func::FuncOp func : funcs) {
    if (func.isExternal()) {
      func.erase();
      continue;
    }
    if (!func->hasAttr("ptx.entry")) {
      if (failed(convertDeviceFunction(func, gpuModule, *targetInfo)))
        failedAny = true;
      continue;
    }
    if (failed(convertKernel(func, gpuModule, state)))
      failedAny = true;
  }
  if (failedAny)
    return signalPassFailure();

  if (sharedWindow == "global") {
    OpBuilder gb(gpuModule.getBodyRegion());
    LLVM::GlobalOp::create(gb, module.getLoc(), LLVM::LLVMArrayType::get(gb.getI8Type(), 0),
                           /*isConstant=*/false, LLVM::Linkage::External, "__zmlir_shared_window",
                           Attribute(), windowAlign, state.addressSpaces.shared);
  }

  if (failed(expandIndirectCalls(gpuModule, state)) ||
      failed(expandDeviceServices(gpuModule, state)) || failed(expandDeviceHeap(gpuModule, state)))
    return signalPassFailure();

  ConversionTarget target(*ctx);
  configurePTXToStdConversionLegality(target);
  RewritePatternSet patterns(ctx);
  populatePTXToStdConversionPatterns(patterns, state);
  // A pattern that rejects an op says why ("unsupported ..."); the driver's
  // own "failed to legalize" follow-up would only repeat it.
  bool reportedUnsupported = false;
  ScopedDiagnosticHandler dropFollowUps(ctx, [&](Diagnostic &diag) {
    std::string message = diag.str();
    if (StringRef(message).starts_with("unsupported "))
      reportedUnsupported = true;
    else if (reportedUnsupported && StringRef(message).starts_with("failed to legalize"))
      return success();
    return failure();
  });
  if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
    return signalPassFailure();
  // Only a kernel whose work depends on the warp's width asks for 32-wide
  // sub-groups: forced on one that does not, Intel's CPU runtime vectorizes
  // it 32 wide instead of at its own width (a shared-memory tiled SGEMM
  // runs 4.6x slower; bench/results/cpu_kernels.md).
  DenseSet<Operation *> subGroupUsers = functionsUsingSubGroups(gpuModule);
  if (subgroupSize != 0)
    for (Operation *fn : subGroupUsers)
      if (auto kernel = dyn_cast<gpu::GPUFuncOp>(fn))
        kernel->setAttr("intel_reqd_sub_group_size",
                        IntegerAttr::get(IntegerType::get(ctx, 32), subgroupSize));
  if (failed(state.target.finishRecursion(gpuModule, subGroupUsers, state)))
    return signalPassFailure();
  state.target.finishTraps(gpuModule, state);
  state.target.finishWarps(gpuModule, subGroupUsers, state);
  markCallsConvergent(gpuModule);

  for (VarOp var : llvm::make_early_inc_range(module.getOps<VarOp>()))
    var.erase();
}

} // namespace

void zmlir::configurePTXToStdConversionLegality(ConversionTarget &target) {
  target.addIllegalDialect<PTXDialect>();
  target.addLegalDialect<arith::ArithDialect, cf::ControlFlowDialect, gpu::GPUDialect,
                         LLVM::LLVMDialect, math::MathDialect, ub::UBDialect>();
}

void zmlir::populatePTXToStdConversionPatterns(RewritePatternSet &patterns,
                                               const PTXLoweringState &state) {
  // Between patterns of one op with the same benefit the first added is
  // tried first: FloatArith's directed-rounding div before FloatFunctions'
  // div.approx (both of benefit 2, above Arith's generic ones).
  populatePTXBitsPatterns(patterns, state);
  populatePTXVideoPatterns(patterns, state);
  populatePTXFloatArithPatterns(patterns, state);
  populatePTXFloatFunctionPatterns(patterns, state);
  populatePTXWarpPatterns(patterns, state);
  populatePTXMatrixPatterns(patterns, state);
  populatePTXAsyncCopyPatterns(patterns, state);
  populatePTXMbarrierPatterns(patterns, state);
  populatePTXArithPatterns(patterns, state);
  populatePTXConvertPatterns(patterns, state);
  populatePTXSpecialRegisterPatterns(patterns, state);
  populatePTXMemoryPatterns(patterns, state);
  populatePTXAtomicPatterns(patterns, state);
  populatePTXTexturePatterns(patterns, state);
  populatePTXControlPatterns(patterns, state);
  populatePTXCallPatterns(patterns, state);
}
