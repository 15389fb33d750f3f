//===- SPIRVTargetInfo.cpp - The ptx lowering's SPIR-V facts ----*- C++ -*-===//
//
// SPIR-V kernels for OpenCL and Level Zero, through LLVM's SPIR-V backend:
// OpenCL built-ins for sub-groups and clocks, the launch's shared window size
// as the global work offset, traps as a module word the runtime reads, and
// %globaltimer as the device clock in a calibration the runtime writes.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/KernelBodyCopy.h"
#include "zmlir/lowering/LocalStack.h"
#include "zmlir/lowering/PTXLowering.h"
#include "zmlir/targets/spirv/SPIRVNames.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

/// The module's trap word's values (SPIRVNames.h).
using zmlir::spirv::kTrapWordName;
constexpr int64_t kTrapped = 1, kAsserted = 2, kNarrowWarps = 3, kStackOverflow = 4;

/// `get_global_offset(dim)`. The launcher passes values there, as nothing
/// else reads global ids or offsets (%tid and %ctaid are local and group
/// ids): in x the shared window's size in bytes; in y and z CUDA's
/// %ntid.x and %ntid.y where it launches a block as a one-dimensional
/// work-group (finishWarps), else 0.
Value globalOffset(OpBuilder &b, Operation *user, int64_t dim) {
  Location loc = user->getLoc();
  mlir::Type i32 = b.getI32Type();
  auto fn = declareFunction(b, user, "_Z17get_global_offsetj",
                            LLVM::LLVMFunctionType::get(b.getI64Type(), {i32}));
  return LLVM::CallOp::create(b, loc, fn, ValueRange{intConst(b, loc, i32, dim)}).getResult();
}

/// CUDA's %tid and %ntid where the launcher runs a block as a
/// one-dimensional work-group: get_local_id(0) is the thread's linear id
/// and get_local_size(0) the block's size, and the global offsets in y and
/// z are %ntid.x and %ntid.y.
struct LinearBlock {
  Value tid[3], ntid[3];

  LinearBlock(OpBuilder &b, Operation *user) {
    Location loc = user->getLoc();
    mlir::Type index = b.getIndexType();
    IntegerAttr bound = b.getIndexAttr(1024); // CUDA's limit, as SpecialRegisters.cpp's
    Value linear = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x, bound);
    Value size = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x, bound);
    // At least 1: a device function computes these where the block runs as
    // it is too (the offsets 0), and a division by 0 would be undefined.
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value x = arith::MaxUIOp::create(
        b, loc, arith::IndexCastUIOp::create(b, loc, index, globalOffset(b, user, 1)), one);
    Value y = arith::MaxUIOp::create(
        b, loc, arith::IndexCastUIOp::create(b, loc, index, globalOffset(b, user, 2)), one);
    Value row = arith::MulIOp::create(b, loc, x, y);
    Value above = arith::DivUIOp::create(b, loc, linear, x);
    tid[0] = arith::RemUIOp::create(b, loc, linear, x);
    tid[1] = arith::RemUIOp::create(b, loc, above, y);
    tid[2] = arith::DivUIOp::create(b, loc, linear, row);
    ntid[0] = x;
    ntid[1] = y;
    ntid[2] = arith::DivUIOp::create(b, loc, size, row);
  }

  Value of(Operation *read) const {
    if (auto id = dyn_cast<gpu::ThreadIdOp>(read))
      return tid[static_cast<int>(id.getDimension())];
    return ntid[static_cast<int>(cast<gpu::BlockDimOp>(read).getDimension())];
  }
};

/// Whether the launcher runs the block as a one-dimensional work-group.
Value launchedLinear(OpBuilder &b, Operation *user) {
  Location loc = user->getLoc();
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, globalOffset(b, user, 1),
                               intConst(b, loc, b.getI64Type(), 0));
}

/// The reads of %tid and %ntid in `blocks`.
SmallVector<Operation *> blockShapeReads(ArrayRef<Block *> blocks) {
  SmallVector<Operation *> reads;
  for (Block *block : blocks)
    block->walk([&](Operation *op) {
      if (isa<gpu::ThreadIdOp, gpu::BlockDimOp>(op))
        reads.push_back(op);
    });
  return reads;
}

/// Whether `fn` reads %tid or %ntid in y or z.
bool readsRowsOrPlanes(Operation *fn) {
  return fn
      ->walk([](Operation *op) {
        auto id = dyn_cast<gpu::ThreadIdOp>(op);
        auto dim = dyn_cast<gpu::BlockDimOp>(op);
        gpu::Dimension d = id ? id.getDimension() : dim ? dim.getDimension() : gpu::Dimension::x;
        return d == gpu::Dimension::x ? WalkResult::advance() : WalkResult::interrupt();
      })
      .wasInterrupted();
}

/// Intel's CPU runtime makes sub-groups of 32 consecutive work-items in x,
/// whatever the block's shape; CUDA's warps are 32 consecutive linear
/// thread ids. They differ in a block of more than one row whose %ntid.x is
/// no multiple of 32 (in a 16x2 block a sub-group is a row: lane 16 is no
/// thread's), so the launcher runs such a block of a kernel that needs
/// 32-wide sub-groups as a one-dimensional work-group (opencl/device.py,
/// fastpath.c: `work_group`). Such a kernel that reads %tid or %ntid in y or
/// z, itself or through the functions it calls (one written for blocks of
/// rows), gets a copy of its body reading them from the linear id, which its
/// entry runs for those launches (a uniform branch: the usual copy keeps the
/// reads Intel's vectorizer sees consecutive), and `zmlir.linear_blocks`;
/// the module's device functions pick between the two at each read. The
/// copy doubles the kernel's build in Intel's runtime, so a kernel that
/// reads x alone has none: the launcher refuses it such blocks
/// (CUDA_ERROR_NOT_SUPPORTED).
void readBlockShapeOfLinearLaunches(gpu::GPUModuleOp module,
                                    const DenseSet<Operation *> &subGroupUsers) {
  auto callees = definedCallees(module);
  bool anyCopy = false;
  for (Operation *fn : subGroupUsers) {
    auto kernel = dyn_cast<gpu::GPUFuncOp>(fn);
    if (!kernel || !kernel.isKernel())
      continue;
    DenseSet<Operation *> reached = reachedFunctions(kernel, callees);
    reached.insert(kernel);
    if (llvm::none_of(reached, readsRowsOrPlanes))
      continue;
    anyCopy = true;
    kernel->setAttr("zmlir.linear_blocks", OpBuilder(kernel).getI64IntegerAttr(1));
    KernelBodyCopy copied = copyKernelBody(kernel);
    SmallVector<Operation *> reads = blockShapeReads(copied.copyBlocks);
    OpBuilder b = OpBuilder::atBlockBegin(copied.copy);
    LinearBlock linear(b, kernel);
    for (Operation *read : reads) {
      read->getResult(0).replaceAllUsesWith(linear.of(read));
      read->erase();
    }
    b.setInsertionPointToEnd(copied.entry);
    cf::CondBranchOp::create(b, kernel.getLoc(), launchedLinear(b, kernel), copied.copy,
                             ValueRange{}, copied.original, ValueRange{});
  }
  if (!anyCopy)
    return;
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
    if (fn.isExternal())
      continue;
    auto blocks = llvm::map_to_vector(fn.getBody(), [](Block &block) { return &block; });
    SmallVector<Operation *> reads = blockShapeReads(blocks);
    if (reads.empty())
      continue;
    // Computed once at the entry, whose own reads are the work-group's.
    OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
    LinearBlock linear(b, fn);
    Value isLinear = launchedLinear(b, fn);
    for (Operation *read : reads) {
      b.setInsertionPointAfter(read);
      Value picked = arith::SelectOp::create(b, read->getLoc(), isLinear, linear.of(read),
                                             read->getResult(0));
      read->getResult(0).replaceAllUsesExcept(picked, picked.getDefiningOp());
    }
  }
}

/// The address of the module's trap word, the global created on first use.
Value trapWordAddress(OpBuilder &b, Location loc, gpu::GPUModuleOp module,
                      const PTXLoweringState &state) {
  auto word = module.lookupSymbol<LLVM::GlobalOp>(kTrapWordName);
  if (!word) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    word = LLVM::GlobalOp::create(b, loc, b.getI32Type(), /*isConstant=*/false,
                                  LLVM::Linkage::External, kTrapWordName, b.getI32IntegerAttr(0),
                                  /*alignment=*/4, state.addressSpaces.global);
  }
  return LLVM::AddressOfOp::create(b, loc, word);
}

/// The module's %globaltimer calibration: four i64 {ticks0, ns0, mult,
/// shift} the driver writes after loading the module
/// (zmlir/runtime/cuda/globaltimer.py), initially the identity {0, 0, 2^31,
/// 31}. OpenCL and SPIR-V have no clock of a known unit: OpReadClockKHR at
/// device scope counts ticks of the device's own (Intel's CPU runtime:
/// CLOCK_MONOTONIC nanoseconds; a GPU: its timestamp counter), and the
/// driver measures its rate against the host's clock.
constexpr const char *kGlobaltimerName = "__zmlir_globaltimer";
/// LLVM's SPIR-V CrossWorkgroup address space, where the variable lives.
constexpr unsigned kCrossWorkgroup = 1;
/// LLVM's SPIR-V Workgroup address space: OpenCL's local memory, the shared
/// window.
constexpr unsigned kWorkgroup = 3;

/// %globaltimer, nanoseconds since the Unix epoch once calibrated: ns0 + d *
/// mult / 2^shift for the device clock's d = ticks - ticks0, where mult <
/// 2^32 and shift <= 32 (LLVM's SPIR-V backend has no i128): d's high and
/// low halves are scaled apart and neither product overflows.
Value globaltimer(OpBuilder &b, Operation *user) {
  Location loc = user->getLoc();
  mlir::Type i64 = b.getI64Type();
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<gpu::GPUModuleOp>();
  auto calibration = module.lookupSymbol<LLVM::GlobalOp>(kGlobaltimerName);
  auto words = LLVM::LLVMArrayType::get(i64, 4);
  if (!calibration) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto identity = DenseElementsAttr::get(RankedTensorType::get({4}, i64),
                                           ArrayRef<int64_t>{0, 0, int64_t(1) << 31, 31});
    calibration = LLVM::GlobalOp::create(b, loc, words, /*isConstant=*/false,
                                         LLVM::Linkage::External, kGlobaltimerName, identity,
                                         /*alignment=*/8, kCrossWorkgroup);
  }
  Value base = LLVM::AddressOfOp::create(b, loc, calibration);
  auto word = [&](int32_t index) -> Value {
    Value address = index ? LLVM::GEPOp::create(b, loc, base.getType(), i64, base,
                                                ArrayRef<LLVM::GEPArg>{index})
                                .getResult()
                          : base;
    return LLVM::LoadOp::create(b, loc, i64, address, /*alignment=*/8);
  };
  Value ticks0 = word(0), ns0 = word(1), mult = word(2), shift = word(3);
  auto fn = declareFunction(b, user, "_Z17clock_read_devicev",
                            LLVM::LLVMFunctionType::get(i64, {}));
  Value ticks = LLVM::CallOp::create(b, loc, fn, ValueRange{}).getResult();
  Value d = arith::SubIOp::create(b, loc, ticks, ticks0);
  Value c32 = intConst(b, loc, i64, 32);
  Value hi = arith::ShRUIOp::create(b, loc, d, c32);
  Value lo = arith::AndIOp::create(b, loc, d, intConst(b, loc, i64, 0xffffffff));
  Value hiNs = arith::ShLIOp::create(b, loc, arith::MulIOp::create(b, loc, hi, mult),
                                     arith::SubIOp::create(b, loc, c32, shift));
  Value loNs = arith::ShRUIOp::create(b, loc, arith::MulIOp::create(b, loc, lo, mult), shift);
  return arith::AddIOp::create(b, loc, ns0, arith::AddIOp::create(b, loc, hiNs, loNs));
}

/// Leaves the function the insertion point is in: gpu.return from a kernel,
/// llvm.return (of poison, when the function returns a value) from a device
/// function.
void emitLeave(OpBuilder &b, Location loc) {
  Operation *fn = b.getInsertionBlock()->getParentOp();
  if (isa<gpu::GPUFuncOp>(fn)) {
    gpu::ReturnOp::create(b, loc);
    return;
  }
  mlir::Type result = cast<LLVM::LLVMFuncOp>(fn).getFunctionType().getReturnType();
  if (isa<LLVM::LLVMVoidType>(result))
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  else
    LLVM::ReturnOp::create(b, loc, LLVM::PoisonOp::create(b, loc, result).getResult());
}

/// Sets the module's trap word to `value` and leaves the function.
void setTrapWord(OpBuilder &b, Location loc, const PTXLoweringState &state, int64_t value) {
  auto module = b.getInsertionBlock()->getParentOp()->getParentOfType<gpu::GPUModuleOp>();
  Value word = intConst(b, loc, b.getI32Type(), value);
  LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::xchg, trapWordAddress(b, loc, module, state),
                            word, LLVM::AtomicOrdering::monotonic);
  emitLeave(b, loc);
}

/// The depth of recursive calls past which a recursion traps: 2 MiB, a
/// quarter of the 8 MiB a thread of Intel's CPU runtime runs kernels on, in
/// frames of 256 bytes (return address, saved registers, spills: recursive
/// functions have no allocas here). A small frame overflowed the thread
/// between depths 25,000 and 30,000; NVIDIA's H200 ran 10,000 (and answered
/// 10^8 with CUDA_ERROR_ILLEGAL_ADDRESS, as the trap word's 4 does here).
constexpr int64_t kMaxRecursionDepth = (2 << 20) / 256;

/// Gives each function in `recursive` its depth of recursive calls as a
/// last i32 parameter (0 from any other caller, the caller's + 1 from a
/// recursive one) and makes it trap with kStackOverflow at
/// kMaxRecursionDepth.
void boundRecursionDepth(gpu::GPUModuleOp module, const DenseSet<Operation *> &recursive,
                         const PTXLoweringState &state) {
  MLIRContext *ctx = module.getContext();
  mlir::Type i32 = IntegerType::get(ctx, 32);
  DenseMap<Operation *, Value> depths;
  for (Operation *op : recursive) {
    auto fn = cast<LLVM::LLVMFuncOp>(op);
    LLVM::LLVMFunctionType type = fn.getFunctionType();
    SmallVector<mlir::Type> params(type.getParams());
    params.push_back(i32);
    fn.setFunctionTypeAttr(
        TypeAttr::get(LLVM::LLVMFunctionType::get(type.getReturnType(), params, type.isVarArg())));
    if (ArrayAttr argAttrs = fn.getArgAttrsAttr()) {
      SmallVector<Attribute> attrs(argAttrs.begin(), argAttrs.end());
      attrs.push_back(DictionaryAttr::get(ctx));
      fn.setArgAttrsAttr(ArrayAttr::get(ctx, attrs));
    }
    Block *entry = &fn.getBody().front();
    Value depth = entry->addArgument(i32, fn.getLoc());
    depths[fn] = depth;
    Block *body = entry->splitBlock(entry->begin());
    OpBuilder b(ctx);
    Location loc = fn.getLoc();
    Block *overflow = b.createBlock(body);
    setTrapWord(b, loc, state, kStackOverflow);
    b.setInsertionPointToEnd(entry);
    Value deep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, depth,
                                       intConst(b, loc, i32, kMaxRecursionDepth));
    cf::CondBranchOp::create(b, loc, deep, overflow, ValueRange{}, body, ValueRange{});
  }
  module.walk([&](LLVM::CallOp call) {
    std::optional<StringRef> name = call.getCallee();
    Operation *callee = name ? module.lookupSymbol(*name) : nullptr;
    if (!callee || !recursive.contains(callee))
      return;
    OpBuilder b(call);
    Location loc = call.getLoc();
    auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
    auto callerDepth = caller ? depths.find(caller) : depths.end();
    Value depth = callerDepth == depths.end()
                      ? intConst(b, loc, i32, 0)
                      : arith::AddIOp::create(b, loc, callerDepth->second, intConst(b, loc, i32, 1))
                            .getResult();
    call.getCalleeOperandsMutable().append(depth);
    if (ArrayAttr argAttrs = call.getArgAttrsAttr()) {
      SmallVector<Attribute> attrs(argAttrs.begin(), argAttrs.end());
      attrs.push_back(DictionaryAttr::get(call.getContext()));
      call.setArgAttrsAttr(ArrayAttr::get(call.getContext(), attrs));
    }
  });
}

/// A call of the sub-group built-in `name` (an OpenCL C or SPIR-V friendly
/// name LLVM's SPIR-V backend turns into its instruction), returning
/// `result` (none if null). Like upstream's gpu-to-llvm-spv calls, it takes
/// the spir_func convention and is convergent: no pass may make it depend on
/// more control flow (sink it into a branch, unswitch a loop around it).
Value callSubGroupBuiltin(OpBuilder &b, Location loc, StringRef name, mlir::Type result,
                          ValueRange args) {
  mlir::Type returned = result ? result : LLVM::LLVMVoidType::get(b.getContext());
  auto fn = declareFunction(
      b, b.getInsertionBlock()->getParentOp(), name,
      LLVM::LLVMFunctionType::get(returned, llvm::to_vector(args.getTypes())));
  fn.setCConv(LLVM::CConv::SPIR_FUNC);
  fn.setConvergent(true);
  auto call = LLVM::CallOp::create(b, loc, fn, args);
  call.setCConv(LLVM::CConv::SPIR_FUNC);
  call.setConvergent(true);
  return result ? call.getResult() : Value();
}

class SPIRVTargetInfo final : public TargetInfo {
public:
  using TargetInfo::TargetInfo;

  StringRef getName() const override { return "spirv"; }

  /// LLVM's SPIR-V backend has no 128-bit integers.
  bool hasI128Multiply() const override { return false; }

  /// LLVM's SPIR-V backend lowers llvm.minimum/maximum to OpenCL fmin/fmax,
  /// which ignore NaNs and may return either zero.
  bool hasExactFloatMinMax() const override { return false; }

  /// Intel's OpenCL CPU runtime flushes f32 (and f64) subnormals for a
  /// whole program built with `-cl-denorms-are-zero` (F32FlushMode.cpp).
  F32FlushScope f32FlushScope() const override { return F32FlushScope::Program; }

  /// The CPU negates and takes magnitudes on the bits: the MXCSR's flushing
  /// is the arithmetic's.
  bool flushesInF32FlushMode(Operation *op) const override { return !isa<NegOp, AbsOp>(op); }

  /// Float atomics are compare-and-swap loops whose f32 adds flush in
  /// software outside shared memory, as the H200's do (Atomics.cpp), and
  /// whose exchanges move bits; copysign works on the bits
  /// (FloatRounding.cpp), and tanh.approx.f32 passes an argument below 2^-5
  /// through as it is, by a compare and a select (FloatFunctions.cpp's
  /// tanhFromExp; its other results are normal).
  bool ignoresF32FlushMode(Operation *op) const override {
    auto ignores = [](auto atomic) {
      return atomic.getOp() == AtomicOp::Exch ||
             (atomic.getOp() == AtomicOp::Add && atomic.getType() == DataType::F32 &&
              atomic.getSpace() != StateSpace::Shared);
    };
    return TypeSwitch<Operation *, bool>(op)
        .Case<AtomOp, RedOp>(ignores)
        .Case([](CopysignOp) { return true; })
        .Case([](TanhOp tanh) {
          return tanh.getPrecision() == Precision::Approx && tanh.getType() == DataType::F32;
        })
        .Default(false);
  }

  /// LLVM's SPIR-V backend gives an array type's length as a 32-bit constant
  /// and truncates a longer one (a 5e9-byte variable became 705032704).
  uint64_t maxVariableBytes() const override { return UINT32_MAX; }

  /// Float atomics need SPV_EXT_shader_atomic_float_add (f64 adds too), and
  /// inc/dec wrapping ones have no SPIR-V form.
  bool needsAtomicCasLoop(AtomicOp op, DataType type) const override {
    return TargetInfo::needsAtomicCasLoop(op, type) ||
           (op == AtomicOp::Add && type == DataType::F64) || op == AtomicOp::Inc ||
           op == AtomicOp::Dec;
  }

  /// SPIR-V kernels cannot read the size of their __local window argument.
  Value sharedWindowBytes(OpBuilder &b, Operation *user) const override {
    return arith::TruncIOp::create(b, user->getLoc(), b.getI32Type(), globalOffset(b, user, 0));
  }

  /// cl_khr_kernel_clock's clock_read_work_group: OpReadClockKHR at
  /// work-group scope (capability ShaderClockKHR under Kernel; the SPIR-V
  /// target enables SPV_KHR_shader_clock). A CTA runs on one SM, so the
  /// work-group's counter is the nearest to NVIDIA's per-SM one.
  /// %globaltimer is the device-scope clock in the driver's calibration
  /// (globaltimer).
  Value readClock(OpBuilder &b, Operation *user, SpecialReg reg) const override {
    if (reg == SpecialReg::Globaltimer)
      return globaltimer(b, user);
    auto fn = declareFunction(b, user, "_Z21clock_read_work_groupv",
                              LLVM::LLVMFunctionType::get(b.getI64Type(), {}));
    return LLVM::CallOp::create(b, user->getLoc(), fn, ValueRange{}).getResult();
  }

  /// Intel's OpenCL compiler aborts on a kernel taking an array by value
  /// (its sycl-kernel-prepare-args pass) and takes a byval pointer to an
  /// array for a buffer; a byval struct is what OpenCL C makes of a struct
  /// argument, which every OpenCL and Level Zero consumer takes.
  bool passesKernelAggregatesByVal() const override { return true; }

  /// Intel's CPU runtime vectorizes across work-items; it proves addresses
  /// consecutive in 64-bit math but not through `zext i32`, flags or not
  /// (bench/results/cpu_kernels.md, sgemm).
  bool widensNoWrapExtensions() const override { return true; }

  /// OpenCL C has no recursion, but Intel's CPU runtime runs a recursive
  /// device function where it leaves the kernel unvectorized, as it does one
  /// that reaches recursion and asks for no sub-group size. It faults
  /// compiling one vectorized 32 wide, so a kernel that needs whole warps
  /// (`subGroupUsers`) and reaches a call cycle is refused. That runtime
  /// gives a function's private memory (its allocas) one instance, which
  /// the frames of a recursive function would share (a Fibonacci passing
  /// results through the caller's memory computed 5 for fib(10)): the
  /// local memory of functions on a cycle lives on the driver's software
  /// stacks instead (LocalStack.h), and a frame past a stack's end sets the
  /// trap word to kStackOverflow, CUDA_ERROR_ILLEGAL_ADDRESS as on an H200.
  /// A recursion deeper than the thread's own stack would kill the process
  /// rather than fail the launch: each recursive function takes its depth
  /// of recursive calls, and at kMaxRecursionDepth sets the trap word to
  /// kStackOverflow and returns.
  LogicalResult finishRecursion(gpu::GPUModuleOp module, const DenseSet<Operation *> &subGroupUsers,
                                const PTXLoweringState &state) const override {
    DenseSet<Operation *> recursive = recursiveFunctions(module);
    if (recursive.empty())
      return success();
    for (Operation *fn : subGroupUsers) {
      auto kernel = dyn_cast<gpu::GPUFuncOp>(fn);
      LLVM::CallOp closing = kernel ? callClosingCycle(module, kernel) : LLVM::CallOp();
      if (!closing)
        continue;
      return closing.emitError("unsupported recursive call of '")
             << *closing.getCallee() << "' in kernel '" << kernel.getName() << "' on target '"
             << getName()
             << "': Intel's CPU runtime faults on recursion in a kernel that needs 32-wide "
                "sub-groups (warp operations or volatile memory)";
    }
    auto stackFailure = [&](OpBuilder &b, Location loc, bool) {
      setTrapWord(b, loc, state, kStackOverflow);
    };
    if (failed(placeRecursiveLocalsOnStack(module, recursive, state, stackFailure)))
      return failure();
    boundRecursionDepth(module, recursive, state);
    return success();
  }

  /// isspacep. OpenCL's to_local/to_private/to_global
  /// (OpGenericCastToPtrExplicit) do not check the address on Intel's CPU
  /// runtime (each gave the pointer back for a global, a local and a private
  /// one) and get_fence (OpGenericPtrMemSemantics) gave 0 for all three. But
  /// that runtime keeps a work-item's private memory (allocas, by-value
  /// argument copies: PTX's .local) and its work-group's local memory (the
  /// shared window) on the stack of the thread running the work-group, and
  /// nothing else there is addressable by a kernel; so:
  ///   shared: in [window, window + the launch's window size);
  ///   local:  on the calling thread's stack, and not shared;
  ///   global: neither (as on NVIDIA, every other address).
  /// The stack is the C library's answer (SPIRVNames.h), which ties
  /// .local and .global to a CPU runtime; a device function asks for its
  /// kernel's window, which the fix-up resolves by inlining.
  Value isSpace(OpBuilder &b, Operation *user, Value ptr, Value address, StateSpace space,
                Value window, std::string &whyNot) const override {
    if (!inGenericWindow(space, whyNot))
      return Value();
    Location loc = user->getLoc();
    mlir::Type i64 = b.getI64Type();
    mlir::Type i1 = b.getI1Type();
    if (!window) {
      auto windowType = LLVM::LLVMPointerType::get(b.getContext(), kWorkgroup);
      auto fn = declareFunction(b, user, zmlir::spirv::kSharedWindowName,
                                LLVM::LLVMFunctionType::get(windowType, {}));
      window = LLVM::CallOp::create(b, loc, fn, ValueRange{}).getResult();
    }
    Value base = LLVM::PtrToIntOp::create(
        b, loc, i64, LLVM::AddrSpaceCastOp::create(b, loc, ptr.getType(), window));
    Value size = arith::AndIOp::create(b, loc, globalOffset(b, user, 0),
                                       intConst(b, loc, i64, 0xffffffff));
    Value shared = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         arith::SubIOp::create(b, loc, address, base), size);
    if (space == StateSpace::Shared)
      return shared;
    auto onStackFn = declareFunction(b, user, zmlir::spirv::kOnStackName,
                                     LLVM::LLVMFunctionType::get(i1, {i64}));
    Value onStack = LLVM::CallOp::create(b, loc, onStackFn, ValueRange{address}).getResult();
    Value notShared = arith::XOrIOp::create(b, loc, shared, intConst(b, loc, i1, 1));
    if (space == StateSpace::Local)
      return arith::AndIOp::create(b, loc, onStack, notShared);
    Value notOnStack = arith::XOrIOp::create(b, loc, onStack, intConst(b, loc, i1, 1));
    return arith::AndIOp::create(b, loc, notOnStack, notShared);
  }

  /// The OR over the sub-group's executing work-items of `pred` shifted to
  /// the work-item's lane (sub_group_non_uniform_reduce_or), not OpenCL's
  /// sub_group_ballot: Intel's CPU runtime aborts the process ("Scalar
  /// sub_group_ballot execution breaks subgroup semantics") when it runs a
  /// kernel with a ballot unvectorized, as it does one that spins on an
  /// atomic load through a generic pointer.
  Value ballot(OpBuilder &b, Operation *user, Value pred, Value mask) const override {
    Location loc = user->getLoc();
    mlir::Type i32 = b.getI32Type();
    Value lane = arith::IndexCastUIOp::create(b, loc, i32, gpu::LaneIdOp::create(b, loc, nullptr));
    Value bit = arith::ShLIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, pred), lane);
    return callSubGroupBuiltin(b, loc, "_Z31sub_group_non_uniform_reduce_orj", i32, {bit});
  }

  /// OpenCL's get_sub_group_id(): a kernel that asks has 32-wide sub-groups,
  /// its warps. The linear thread index would read %tid.y and .z, and a
  /// kernel that reads them gets a second copy of its body for blocks run
  /// as one-dimensional work-groups (readBlockShapeOfLinearLaunches), which
  /// doubles Intel's build of cuBLAS's tensor-op GEMMs.
  Value warpInBlock(OpBuilder &b, Location loc) const override {
    return callSubGroupBuiltin(b, loc, "_Z16get_sub_group_idv", b.getI32Type(), {});
  }

  /// OpenCL's sub_group_shuffle of an i32 (upstream's gpu.shuffle is a pure
  /// op, and converts only inside a gpu.func, not in a device function).
  Value readLane(OpBuilder &b, Location loc, Value v, Value src) const override {
    return callSubGroupBuiltin(b, loc, "_Z17sub_group_shuffleij", b.getI32Type(), {v, src});
  }

  /// A work-group barrier: Intel's CPU runtime runs a work-group's
  /// work-items one after another between barriers (a work-item spinning
  /// on another's arrival never sees it), so a waiting work-item lets the
  /// others run to the same barrier; the waits must then be the whole
  /// block's, as in cuda::barrier's arrive_and_wait.
  bool emitMbarrierWaitTurn(OpBuilder &b, Operation *user) const override {
    gpu::BarrierOp::create(b, user->getLoc());
    return true;
  }

  /// OpControlBarrier at sub-group scope, ordering workgroup and global
  /// memory (acquire-release): Intel's CPU runtime does not run every
  /// sub-group's work-items in lock step (those of a short last sub-group
  /// run one after another), so a fence alone would not wait for the others.
  LogicalResult emitNativeWarpSync(OpBuilder &b, Location loc, Value mask) const override {
    mlir::Type i32 = b.getI32Type();
    constexpr int64_t kSubgroupScope = 3, kAcqRelWorkgroupAndGlobal = 0x8 | 0x100 | 0x200;
    callSubGroupBuiltin(b, loc, "_Z22__spirv_ControlBarrieriii", mlir::Type(),
                        {intConst(b, loc, i32, kSubgroupScope),
                         intConst(b, loc, i32, kSubgroupScope),
                         intConst(b, loc, i32, kAcqRelWorkgroupAndGlobal)});
    return success();
  }

  /// LLVM turns llvm.trap into OpUnreachable (undefined behaviour, and a
  /// fault would end the whole process): an atomic store of 1 to the
  /// module's trap word and a return from the function instead.
  void emitTrap(OpBuilder &b, Location loc, const PTXLoweringState &state) const override {
    setTrapWord(b, loc, state, kTrapped);
  }

  /// The same with the word's assert value: the runtime reports
  /// CUDA_ERROR_ASSERT.
  void emitAssertTrap(OpBuilder &b, Location loc, const PTXLoweringState &state) const override {
    setTrapWord(b, loc, state, kAsserted);
  }

  /// Each call of one of the module's functions is followed by a check of
  /// the trap word that returns from the caller once it is set (the callee,
  /// or another thread, trapped), so a trap in a device function ends the
  /// thread.
  void finishTraps(gpu::GPUModuleOp module, const PTXLoweringState &state) const override {
    if (!module.lookupSymbol<LLVM::GlobalOp>(kTrapWordName))
      return;
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      auto callee = call.getCallee();
      auto fn = callee ? module.lookupSymbol<LLVM::LLVMFuncOp>(*callee) : LLVM::LLVMFuncOp();
      if (fn && !fn.isExternal())
        calls.push_back(call);
    });
    for (LLVM::CallOp call : calls) {
      Location loc = call.getLoc();
      OpBuilder b(call->getContext());
      Block *block = call->getBlock();
      Block *cont = block->splitBlock(std::next(Block::iterator(call)));
      Block *leave = b.createBlock(cont);
      emitLeave(b, loc);
      b.setInsertionPointToEnd(block);
      Value word = LLVM::LoadOp::create(b, loc, b.getI32Type(),
                                        trapWordAddress(b, loc, module, state), /*alignment=*/4);
      Value trapped = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, word,
                                            intConst(b, loc, b.getI32Type(), 0));
      cf::CondBranchOp::create(b, loc, trapped, leave, ValueRange{}, cont, ValueRange{});
    }
  }

  /// Intel's CPU runtime runs a kernel it cannot vectorize (one spinning on
  /// an atomic load through a generic pointer, say) with one-work-item
  /// sub-groups, whatever size the kernel requires: every shuffle would read
  /// the lane's own value and every ballot hold one bit. So a kernel that
  /// uses sub-groups (warp collectives, %laneid), itself or through the
  /// device functions it calls, first checks get_max_sub_group_size(); below
  /// 32 each work-item sets the trap word to kNarrowWarps and returns, and
  /// the launch fails instead of computing garbage.
  void finishWarps(gpu::GPUModuleOp module, const DenseSet<Operation *> &subGroupUsers,
                   const PTXLoweringState &state) const override {
    readBlockShapeOfLinearLaunches(module, subGroupUsers);
    // A kernel that depends on the warp's width fails rather than run in
    // narrower sub-groups.
    for (Operation *fn : subGroupUsers) {
      auto kernel = dyn_cast<gpu::GPUFuncOp>(fn);
      if (!kernel)
        continue;
      Location loc = kernel.getLoc();
      Block *entry = &kernel.getBody().front();
      OpBuilder b(kernel.getContext());
      b.setInsertionPointToStart(entry);
      mlir::Type i32 = b.getI32Type();
      auto fnType = LLVM::LLVMFunctionType::get(i32, {});
      auto widest = declareFunction(b, kernel, "_Z22get_max_sub_group_sizev", fnType);
      widest.setCConv(LLVM::CConv::SPIR_FUNC);
      auto call = LLVM::CallOp::create(b, loc, widest, ValueRange{});
      call.setCConv(LLVM::CConv::SPIR_FUNC);
      Value narrow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, call.getResult(),
                                           intConst(b, loc, i32, 32));
      Block *rest = entry->splitBlock(b.getInsertionPoint());
      Block *leave = b.createBlock(rest);
      setTrapWord(b, loc, state, kNarrowWarps);
      b.setInsertionPointToEnd(entry);
      cf::CondBranchOp::create(b, loc, narrow, leave, ValueRange{}, rest, ValueRange{});
    }
  }
};

} // namespace

std::unique_ptr<TargetInfo> zmlir::createSPIRVTargetInfo(unsigned waveSize) {
  return std::make_unique<SPIRVTargetInfo>(waveSize);
}
