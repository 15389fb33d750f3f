//===- SpecialRegisters.cpp - sreg, %envreg, %pm, ptx.inst ----------------===//
//
// Special registers (ptx.sreg): thread and block ids, lanes and lane masks,
// clocks, and the launch and machine registers, each read the target's way
// (TargetInfo). And the instructions imported without a dedicated op
// (ptx.inst): reads of %envreg and %pm, the tf32 conversions
// (Convert.cpp), and a diagnostic naming any other.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

constexpr const char *kGridWorkspaceName = "__zmlir_grid_workspace";

struct SregOpLowering : PTXPattern<SregOp> {
  using PTXPattern::PTXPattern;

  /// The registers that describe the launch and the machine rather than the
  /// thread. NVPTX reads NVIDIA's; elsewhere:
  ///  - %nwarpid is the number of warps of the CTA (so %warpid < %nwarpid;
  ///    NVIDIA's is the SM's warp slots);
  ///  - %smid is 0 and %nsmid 1: neither OpenCL nor our AMDGPU code reads
  ///    the compute unit a work-group runs on;
  ///  - %gridid is 0 (NVIDIA's is a launch sequence number);
  ///  - on AMDGPU, %total_smem_size is the dispatch packet's group segment
  ///    size (the launcher passes the window, static + dynamic, there) and
  ///    %dynamic_smem_size that minus the kernel's static window (so on
  ///    NVPTX, whose launches also size the whole window as dynamic shared
  ///    memory); SPIR-V kernels cannot read the size of their __local window
  ///    argument, so the launcher passes the window as the global work
  ///    offset in x, read with get_global_offset(0) (nothing else reads
  ///    global ids or offsets: %tid and %ctaid are local and group ids).
  FailureOr<Value> launchRegister(SregOp op, OpBuilder &b, SpecialReg reg) const {
    Location loc = op.getLoc();
    mlir::Type i32 = b.getI32Type(), i64 = b.getI64Type();
    if (Value r = state.target.nativeLaunchRegister(b, loc, reg)) {
      if (reg != SpecialReg::DynamicSmemSize)
        return r;
      // The kernel's .shared variables are in the window too, which the
      // launch sizes as dynamic shared memory.
      return lessStaticWindow(op, b, r);
    }
    switch (reg) {
    case SpecialReg::Nwarpid: {
      Value n = arith::MulIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, gpu::BlockDimOp::create(b, loc, gpu::Dimension::x),
                                gpu::BlockDimOp::create(b, loc, gpu::Dimension::y)),
          gpu::BlockDimOp::create(b, loc, gpu::Dimension::z));
      Value warps = arith::DivUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, n, arith::ConstantIndexOp::create(b, loc, 31)),
          arith::ConstantIndexOp::create(b, loc, 32));
      return arith::IndexCastUIOp::create(b, loc, i32, warps).getResult();
    }
    case SpecialReg::Smid:
    case SpecialReg::Gridid:
      return intConst(b, loc, reg == SpecialReg::Gridid ? i64 : i32, 0);
    case SpecialReg::Nsmid:
      return intConst(b, loc, i32, 1);
    default:
      break;
    }
    Value total = state.target.sharedWindowBytes(b, op);
    if (!total) {
      (void)unsupported(op, Twine("special register '%") + stringifySpecialReg(reg) +
                                "' on target '" + state.target.getName() + "'");
      return failure();
    }
    // The CTA's shared memory as the launch sized it: with no clusters and
    // no reserved area of the driver's, the aggregate is the total.
    if (reg == SpecialReg::TotalSmemSize || reg == SpecialReg::AggrSmemSize)
      return inAllocationUnits(b, loc, total);
    return lessStaticWindow(op, b, total);
  }

  /// NVIDIA's %total_smem_size is the CTA's shared memory in whole allocation
  /// units of 128 bytes (the H200 reads 1152 for a 1028-byte window).
  static Value inAllocationUnits(OpBuilder &b, Location loc, Value bytes) {
    mlir::Type i32 = b.getI32Type();
    Value rounded = arith::AddIOp::create(b, loc, bytes, intConst(b, loc, i32, 127));
    return arith::AndIOp::create(b, loc, rounded, intConst(b, loc, i32, ~127));
  }

  /// `window` (the launch's shared-memory size) less the kernel's static
  /// .shared variables, which the window also holds.
  FailureOr<Value> lessStaticWindow(SregOp op, OpBuilder &b, Value window) const {
    auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
    auto staticBytes = kernel ? kernel->getAttrOfType<IntegerAttr>("zmlir.static_shared_bytes")
                              : IntegerAttr();
    if (!staticBytes) {
      (void)unsupported(op, "'%dynamic_smem_size' outside a kernel");
      return failure();
    }
    return arith::SubIOp::create(b, op.getLoc(), window,
                                 intConst(b, op.getLoc(), b.getI32Type(), staticBytes.getInt()))
        .getResult();
  }

  /// A block has at most 1024 threads (CUDA's limit, which the driver checks
  /// at every launch, device-side ones too): %ntid.* is at most that, %tid.*
  /// less. It bounds the ranges zmlir-index-no-wrap infers. (%ntid.z <= 64
  /// holds too, but a device-side launch is not checked for it.)
  static IntegerAttr blockBound(OpBuilder &b) { return b.getIndexAttr(1024); }

  /// %laneid: the sub-group (SPIR-V) or wavefront lane, modulo 32 on wave64
  /// AMD chips, whose wavefronts hold two CUDA warps.
  Value laneInWarp(OpBuilder &b, Location loc, mlir::Type type) const {
    Value lane = arith::IndexCastUIOp::create(b, loc, type, gpu::LaneIdOp::create(b, loc, nullptr));
    if (state.target.getWaveSize() > 32)
      lane = arith::AndIOp::create(b, loc, lane, intConst(b, loc, type, 31));
    return lane;
  }

  /// %reserved_smem_offset_*: shared-window addresses in the kernel's
  /// reserved area (convert-ptx-to-std lays it out, kReservedSmemBytes):
  /// _begin and _0 its start, _1 its middle (the two halves do not overlap,
  /// whatever each user keeps there), _end its end, _cap its size.
  LogicalResult reservedSmem(SregOp op, ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
    auto area = kernel ? state.reservedSmem.find(kernel) : state.reservedSmem.end();
    if (area == state.reservedSmem.end())
      return unsupported(op, Twine("special register '%") + stringifySpecialReg(op.getReg()) +
                                 "' outside a kernel (only kernels have a shared window)");
    int64_t begin = area->second, value = begin;
    switch (op.getReg()) {
    case SpecialReg::ReservedSmemOffsetEnd:
      value = begin + kReservedSmemBytes;
      break;
    case SpecialReg::ReservedSmemOffsetCap:
      value = kReservedSmemBytes;
      break;
    case SpecialReg::ReservedSmemOffset1:
      value = begin + kReservedSmemBytes / 2;
      break;
    default:
      break;
    }
    rewriter.replaceOp(op, intConst(rewriter, loc, op.getRes().getType(), value));
    return success();
  }

  /// A thread-block cluster's registers: the hardware's where the target
  /// reads them (NVPTX); elsewhere no launch has clusters (the driver
  /// reports none), so each CTA is a cluster of one, made implicitly.
  LogicalResult clusterRegister(SregOp op, ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    mlir::Type type = op.getRes().getType();
    SpecialReg reg = op.getReg();
    if (Value r = state.target.nativeLaunchRegister(rewriter, loc, reg)) {
      if (type.isInteger(1))
        r = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, r,
                                  intConst(rewriter, loc, r.getType(), 0));
      rewriter.replaceOp(op, r);
      return success();
    }
    auto dim = [&](SpecialReg x) {
      return static_cast<gpu::Dimension>(static_cast<int>(reg) - static_cast<int>(x));
    };
    Value index;
    switch (reg) {
    case SpecialReg::ClusteridX:
    case SpecialReg::ClusteridY:
    case SpecialReg::ClusteridZ:
      index = gpu::BlockIdOp::create(rewriter, loc, dim(SpecialReg::ClusteridX));
      break;
    case SpecialReg::NclusteridX:
    case SpecialReg::NclusteridY:
    case SpecialReg::NclusteridZ:
      index = gpu::GridDimOp::create(rewriter, loc, dim(SpecialReg::NclusteridX));
      break;
    case SpecialReg::ClusterNctaidX:
    case SpecialReg::ClusterNctaidY:
    case SpecialReg::ClusterNctaidZ:
    case SpecialReg::ClusterNctarank:
      rewriter.replaceOp(op, intConst(rewriter, loc, type, 1));
      return success();
    default: // %cluster_ctaid.*, %cluster_ctarank, %is_explicit_cluster
      rewriter.replaceOp(op, intConst(rewriter, loc, type, 0));
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::IndexCastUIOp>(op, type, index);
    return success();
  }

  LogicalResult matchAndRewrite(SregOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type type = op.getRes().getType();
    auto dim = [](SpecialReg r, SpecialReg x) {
      return static_cast<gpu::Dimension>(static_cast<int>(r) - static_cast<int>(x));
    };
    Value index;
    SpecialReg reg = op.getReg();
    if (isReservedSmemRegister(reg))
      return reservedSmem(op, rewriter);
    if (isClusterRegister(reg))
      return clusterRegister(op, rewriter);
    switch (reg) {
    case SpecialReg::TidX:
    case SpecialReg::TidY:
    case SpecialReg::TidZ:
      index = gpu::ThreadIdOp::create(rewriter, loc, dim(reg, SpecialReg::TidX),
                                      blockBound(rewriter));
      break;
    case SpecialReg::NtidX:
    case SpecialReg::NtidY:
    case SpecialReg::NtidZ:
      index = gpu::BlockDimOp::create(rewriter, loc, dim(reg, SpecialReg::NtidX),
                                      blockBound(rewriter));
      break;
    case SpecialReg::CtaidX:
    case SpecialReg::CtaidY:
    case SpecialReg::CtaidZ:
      index = gpu::BlockIdOp::create(rewriter, loc, dim(reg, SpecialReg::CtaidX));
      break;
    case SpecialReg::NctaidX:
    case SpecialReg::NctaidY:
    case SpecialReg::NctaidZ:
      index = gpu::GridDimOp::create(rewriter, loc, dim(reg, SpecialReg::NctaidX));
      break;
    case SpecialReg::Laneid:
      rewriter.replaceOp(op, laneInWarp(rewriter, loc, type));
      return success();
    case SpecialReg::LanemaskEq:
    case SpecialReg::LanemaskLt:
    case SpecialReg::LanemaskLe:
    case SpecialReg::LanemaskGt:
    case SpecialReg::LanemaskGe: {
      // eq = 1 << lane, lt = eq - 1, le = (2 << lane) - 1, gt = ~le, ge = ~lt
      // (2 << 31 wraps to 0, so le of lane 31 is all ones).
      Value lane = laneInWarp(rewriter, loc, type);
      Value one = intConst(rewriter, loc, type, 1), ones = intConst(rewriter, loc, type, -1);
      Value eq = arith::ShLIOp::create(rewriter, loc, one, lane);
      Value lt = arith::SubIOp::create(rewriter, loc, eq, one);
      Value le = arith::SubIOp::create(
          rewriter, loc,
          arith::ShLIOp::create(rewriter, loc, intConst(rewriter, loc, type, 2), lane), one);
      Value r = reg == SpecialReg::LanemaskEq   ? eq
                : reg == SpecialReg::LanemaskLt ? lt
                : reg == SpecialReg::LanemaskLe ? le
                : reg == SpecialReg::LanemaskGt
                    ? arith::XOrIOp::create(rewriter, loc, le, ones).getResult()
                    : arith::XOrIOp::create(rewriter, loc, lt, ones).getResult();
      rewriter.replaceOp(op, r);
      return success();
    }
    case SpecialReg::Warpid: {
      // The warp's index in its CTA (PTX's %warpid is the hardware slot,
      // which may differ and change; programs use it as an identifier).
      mlir::Type idx = rewriter.getIndexType();
      Value tx = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
      Value ty = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::y);
      Value tz = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::z);
      Value nx = gpu::BlockDimOp::create(rewriter, loc, gpu::Dimension::x);
      Value ny = gpu::BlockDimOp::create(rewriter, loc, gpu::Dimension::y);
      Value linear = arith::AddIOp::create(
          rewriter, loc, tx,
          arith::MulIOp::create(
              rewriter, loc, nx,
              arith::AddIOp::create(rewriter, loc, ty,
                                    arith::MulIOp::create(rewriter, loc, ny, tz))));
      Value warp = arith::DivUIOp::create(rewriter, loc, linear,
                                          arith::ConstantIndexOp::create(rewriter, loc, 32));
      (void)idx;
      rewriter.replaceOpWithNewOp<arith::IndexCastUIOp>(op, type, warp);
      return success();
    }
    case SpecialReg::Clock:
    case SpecialReg::Clock64:
    case SpecialReg::ClockHi:
    case SpecialReg::Globaltimer:
    case SpecialReg::GlobaltimerLo:
    case SpecialReg::GlobaltimerHi: {
      // %globaltimer_lo and _hi are the halves of a read of %globaltimer,
      // %clock_hi the upper half of one of %clock64.
      bool half = reg == SpecialReg::GlobaltimerLo || reg == SpecialReg::GlobaltimerHi;
      SpecialReg read = half                         ? SpecialReg::Globaltimer
                        : reg == SpecialReg::ClockHi ? SpecialReg::Clock64
                                                     : reg;
      Value r = state.target.readClock(rewriter, op, read);
      if (!r)
        return unsupported(op, Twine("special register '%") + stringifySpecialReg(reg) +
                                   "' on target '" + state.target.getName() + "'");
      if (reg == SpecialReg::GlobaltimerHi || reg == SpecialReg::ClockHi)
        r = arith::ShRUIOp::create(rewriter, loc, r, intConst(rewriter, loc, r.getType(), 32));
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, type, false));
      return success();
    }
    case SpecialReg::Nwarpid:
    case SpecialReg::Smid:
    case SpecialReg::Nsmid:
    case SpecialReg::Gridid:
    case SpecialReg::DynamicSmemSize:
    case SpecialReg::TotalSmemSize:
    case SpecialReg::AggrSmemSize: {
      FailureOr<Value> r = launchRegister(op, rewriter, reg);
      if (failed(r))
        return failure();
      rewriter.replaceOp(op, adjustBits(rewriter, loc, *r, type, false));
      return success();
    }
    case SpecialReg::WarpSize:
      rewriter.replaceOp(op, intConst(rewriter, loc, type, 32));
      return success();
    default:
      return unsupported(op, Twine("special register '%") + stringifySpecialReg(reg) + "'");
    }
    rewriter.replaceOpWithNewOp<arith::IndexCastUIOp>(op, type, index);
    return success();
  }
};

/// Instructions imported without a dedicated op: say which one.
struct InstOpLowering : PTXPattern<InstOp> {
  using PTXPattern::PTXPattern;

  /// The module's grid workspace pointer, `__zmlir_grid_workspace`: one
  /// i64 the driver sets around a cooperative launch to the grid barrier's
  /// workspace (cooperative_groups' `grid_workspace {u32 wsSize; u32
  /// barrier;}`) and keeps 0 otherwise (zmlir/runtime/cuda/cooperative.py).
  Value gridWorkspace(InstOp op, ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    mlir::Type i64 = rewriter.getI64Type();
    auto module = op->getParentOfType<gpu::GPUModuleOp>();
    auto var = module.lookupSymbol<LLVM::GlobalOp>(kGridWorkspaceName);
    if (!var) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      var = LLVM::GlobalOp::create(
          rewriter, loc, i64, /*isConstant=*/false, LLVM::Linkage::External, kGridWorkspaceName,
          rewriter.getI64IntegerAttr(0), /*alignment=*/8, state.addressSpaces.global);
    }
    return LLVM::LoadOp::create(rewriter, loc, i64, LLVM::AddressOfOp::create(rewriter, loc, var),
                                /*alignment=*/8);
  }

  /// `mov` of %envreg<0..31> (set by NVIDIA's driver) or %pm<0..7>{_64}
  /// (performance-monitor counters): NVIDIA's registers on NVPTX. Elsewhere
  /// %envreg1:%envreg2 is the grid workspace's address (high:low words, as
  /// cooperative_groups' get_grid_workspace reads it) and the counters read
  /// 0 (no counters run); any other %envreg is rejected: the H200's driver
  /// sets %envreg0 (58995400 in the fidelity capture), so 0 would be wrong.
  LogicalResult lowerEnvironmentRegister(InstOp op, StringRef reg,
                                         ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    mlir::Type type = op.getResult(0).getType();
    if (Value r = state.target.readMachineRegister(rewriter, loc, reg)) {
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, type, false));
      return success();
    }
    if (reg == "%envreg1" || reg == "%envreg2") {
      Value word = gridWorkspace(op, rewriter);
      if (reg == "%envreg1")
        word = arith::ShRUIOp::create(rewriter, loc, word,
                                      intConst(rewriter, loc, rewriter.getI64Type(), 32));
      Value r = arith::TruncIOp::create(rewriter, loc, rewriter.getI32Type(), word);
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, type, false));
      return success();
    }
    if (reg.starts_with("%envreg"))
      return unsupported(op, Twine("special register '") + reg + "' on target '" +
                                 state.target.getName() + "' (set by NVIDIA's driver)");
    rewriter.replaceOp(op, intConst(rewriter, loc, type, 0));
    return success();
  }

  LogicalResult matchAndRewrite(InstOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (Value r = lowerNarrowFloatCvt(op, adaptor.getOperands(), rewriter, state.target)) {
      rewriter.replaceOp(op, r);
      return success();
    }
    ArrayAttr kinds = op.getOperandKinds();
    if (op.getOpcode() == "mov" && kinds.size() == 2 && op->getNumResults() == 1 &&
        op.getResult(0).getType().isInteger()) {
      StringRef reg = cast<StringAttr>(kinds[1]).getValue();
      unsigned n = 0;
      StringRef pm = reg;
      bool isPm = pm.consume_front("%pm") && (pm.consume_back("_64"), true) &&
                  !pm.getAsInteger(10, n) && n < 8;
      StringRef env = reg;
      bool isEnv = env.consume_front("%envreg") && !env.getAsInteger(10, n) && n < 32;
      if (isPm || isEnv)
        return lowerEnvironmentRegister(op, reg, rewriter);
      // Any other special register the importer kept by name
      // (%current_graph_exec, ...): name it, not the `mov`.
      if (reg.starts_with("%"))
        return unsupported(op, Twine("special register '") + reg + "' on target '" +
                                   state.target.getName() + "'");
    }
    // nanosleep suspends the thread for between 0 and twice the given
    // nanoseconds (PTX ISA 9.7.19.4): no delay at all is one of its answers,
    // on every target.
    if (op.getOpcode() == "nanosleep" && op->getNumResults() == 0) {
      rewriter.eraseOp(op);
      return success();
    }
    // griddepcontrol (programmatic dependent launch, PTX ISA 9.7.13.6):
    // `.wait` waits for the grids this one depends on to complete and their
    // memory to be visible, `.launch_dependents` lets dependents start
    // early. Our driver starts a grid only after the work before it on its
    // stream completed (it runs PROGRAMMATIC_STREAM_SERIALIZATION launches
    // in order, and the passthrough launches without it): there is nothing
    // to wait for and nothing to start early, on every target.
    if (op.getOpcode() == "griddepcontrol" && op->getNumResults() == 0 &&
        op.getModifiers().size() == 1) {
      StringRef mode = cast<StringAttr>(op.getModifiers()[0]).getValue().ltrim('.');
      if (mode == "wait" || mode == "launch_dependents") {
        rewriter.eraseOp(op);
        return success();
      }
    }
    std::string name = op.getOpcode().str();
    for (Attribute mod : op.getModifiers())
      name += "." + cast<StringAttr>(mod).getValue().ltrim('.').str();
    return unsupported(op, Twine("instruction '") + name + "'");
  }
};

} // namespace

void zmlir::populatePTXSpecialRegisterPatterns(RewritePatternSet &patterns,
                                               const PTXLoweringState &state) {
  patterns.add<SregOpLowering, InstOpLowering>(patterns.getContext(), state);
}
