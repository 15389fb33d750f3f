//===- Passes.td - zmlir lowering passes -------------------*- tablegen -*-===//

#ifndef ZMLIR_LOWERING_PASSES
#define ZMLIR_LOWERING_PASSES

include "mlir/Pass/PassBase.td"

def ConvertPTXToStd : Pass<"convert-ptx-to-std", "::mlir::ModuleOp"> {
  let summary = "Lower the ptx dialect to gpu/arith/math/cf/llvm";
  let description = [{
    Moves every `.entry` into a `gpu.module` as a `gpu.func` kernel and
    lowers each ptx op to upstream dialects with explicit address spaces.

    Shared memory is one window per block: the `.shared` variables a kernel
    uses are laid out in it at fixed offsets, dynamic (`.extern`) shared memory
    follows them. `shared-window=kernel-arg` passes the window as a trailing
    `!llvm.ptr<3>` kernel argument (OpenCL's `__local` argument);
    `shared-window=global` uses one external zero-sized `addrspace(3)` array
    (CUDA and HIP dynamic shared memory). Either way the launcher asks for
    `zmlir.static_shared_bytes` plus the dynamic size.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect"];
  let options = [
    Option<"genericAddressSpace", "generic-address-space", "unsigned", "0",
           "LLVM address space of generic pointers (SPIR-V: 4)">,
    Option<"globalAddressSpace", "global-address-space", "unsigned", "1",
           "LLVM address space of .global">,
    Option<"sharedAddressSpace", "shared-address-space", "unsigned", "3",
           "LLVM address space of .shared">,
    Option<"constAddressSpace", "const-address-space", "unsigned", "4",
           "LLVM address space of .const (SPIR-V: 2)">,
    Option<"localAddressSpace", "local-address-space", "unsigned", "5",
           "LLVM address space of .local (SPIR-V: 0, Function)">,
    Option<"target", "target", "::zmlir::LoweringTarget", "::zmlir::LoweringTarget::Generic",
           "backend of the result: its TargetInfo (zmlir/lowering/TargetInfo.h) "
           "answers what differs between backends",
           [{::zmlir::loweringTargetValues()}]>,
    Option<"waveSize", "wave-size", "unsigned", "32",
           "hardware lanes per wavefront (64 on AMD gfx9); warps stay 32">,
    Option<"sharedWindow", "shared-window", "std::string", "\"global\"",
           "how kernels reach shared memory: 'global' or 'kernel-arg'">,
    Option<"subgroupSize", "subgroup-size", "unsigned", "0",
           "sub-group size to require of every kernel that uses sub-groups "
           "(SPIR-V), 0 for none">,
    Option<"nativeTextures", "native-textures", "bool", "false",
           "texture and surface handles are the vendor's objects: the "
           "instructions are the target's own (TargetInfo::nativeTexture), "
           "not reads of zmlir's descriptors (docs/textures.md)">,
  ];
}

def NativeMathIntrinsics : Pass<"zmlir-native-math-intrinsics"> {
  let summary = "Keep exact native LLVM math intrinsics through the GPU-to-NVVM/ROCDL conversions";
  let description = [{
    Rewrites `llvm.intr.fabs`, `floor`, `ceil`, `roundeven`, `round`, `sqrt`
    and `copysign` into `llvm.call_intrinsic` of the same intrinsic. The NVVM
    and ROCDL conversions mark these ops illegal (they want libdevice or OCML
    calls, which zmlir does not link); the NVPTX and AMDGPU backends lower
    the intrinsics to exact native instructions. Run it after
    `convert-math-to-llvm`, before `convert-gpu-to-nvvm`/`convert-gpu-to-rocdl`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def IndexNoWrap : Pass<"zmlir-index-no-wrap"> {
  let summary = "Mark integer arithmetic that provably does not wrap; widen it where the target asks";
  let description = [{
    PTX integer arithmetic wraps, so the importer emits `arith.addi`,
    `muli`, `shli` and `subi` without overflow flags, and a 32-bit address
    offset reaches LLVM as `zext i32 (add i32 ...)`. From the integer ranges
    `IntegerRangeAnalysis` infers (the lowering bounds the special registers:
    `%tid.*` < 1024, `%ntid.*` in [1, 1024], CUDA's limit on a block, which
    the driver checks at every launch), this pass sets `overflow<nuw>` and `overflow<nsw>` on the ops
    whose exact result always fits; an op that may wrap (one fed by a kernel
    parameter, `%ctaid.x * %ntid.x`) keeps none. Each function is analysed
    on its own, its callees first: its arguments may be any value, and a
    call's results take the ranges its callee returns (one analysis of the
    whole module revisited every call site of a function at each new one).

    Where the target's TargetInfo answers `widensNoWrapExtensions` (SPIR-V:
    Intel's CPU vectorizer sees consecutive addresses in 64-bit math, not
    through `zext i32`), an `arith.extui` of such an op is computed in the
    wide type instead: `extui(a + b)` is `extui(a) + extui(b)` when the
    narrow add does not wrap, and `extui(index_castui(x))` is
    `index_castui(x)` when `x` fits the narrow type; an `arith.extsi` of an
    nsw op likewise.

    With `grid-variants`, the ranges alone leave CUDA's global index
    `%ctaid.x * %ntid.x + %tid.x` unproven (%ctaid.x may reach 2^31 - 2).
    Each kernel whose widening would change under a grid of at most
    2^21 - 1 blocks in x (and CUDA's 65535 in y and z) then gets a copy
    after it, `<kernel>__zmlir_grid31`, whose `gpu.block_id`/`gpu.grid_dim`
    carry those bounds and which carries `zmlir.grid_variant_x`, the largest
    grid in x it serves. The driver launches the copy for such grids and the
    kernel for the others, where the index wraps as on NVIDIA's hardware.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let options = [
    Option<"target", "target", "::zmlir::LoweringTarget", "::zmlir::LoweringTarget::Generic",
           "backend of the result: its TargetInfo says whether to widen",
           [{::zmlir::loweringTargetValues()}]>,
    Option<"gridVariants", "grid-variants", "bool", "false",
           "where the target widens: give a kernel whose widening a grid of "
           "fewer than 2^21 blocks in x changes a variant for such grids "
           "(`<kernel>__zmlir_grid31`, attribute `zmlir.grid_variant_x`)">,
  ];
}

def WarpUniformConditions : Pass<"zmlir-warp-uniform-conditions"> {
  let summary = "Make a kernel's tests of its warp visibly uniform across a sub-group";
  let description = [{
    A test of `%tid.x` that reads only `%tid.x & ~31` (`x < 32`, `x >= 64`,
    `x > 95`, `x >> 5`, `x / 64`, `x & -32`) has one answer per warp, but a
    SPIR-V consumer sees a value that differs across the sub-group: Intel's
    CPU vectorizer runs a branch on it under a mask, emulating the warp's
    shuffles there one lane at a time. On `w = (x - lane) & 992` (`lane` the
    sub-group lane) the test gives the same answer wherever `lane == x mod
    32`, and the vectorizer sees it uniform.

    In each kernel that requires 32-wide sub-groups (`intel_reqd_sub_group_size`
    32) and branches on such a test, the tests are on `w`: such a kernel is
    launched only where `lane == x mod 32` holds, a block that is not
    one-dimensional and whose `%ntid.x` is no multiple of 32 running as a
    one-dimensional work-group (zmlir/targets/spirv's `work_group`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::gpu::GPUDialect"];
}

#endif // ZMLIR_LOWERING_PASSES
