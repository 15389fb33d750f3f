"""SPIR-V for OpenCL and Level Zero: kernels in the OpenCL execution model,
64-bit physical addressing, generic pointers, 32-wide sub-groups so that a
sub-group is a CUDA warp."""

from __future__ import annotations

import shutil
import subprocess

from zmlir.targets.base import LoweringOptions, Target, register
from zmlir.targets.spirv.binary import fix_constant_byte_addresses, mark_flushing_subnormals
from zmlir.toolchain import llvm_tool_candidates

_LLC_CANDIDATES = llvm_tool_candidates("llc")


def _llc() -> str:
    for candidate in _LLC_CANDIDATES:
        path = shutil.which(candidate)
        if path:
            return path
    raise RuntimeError("llc not found (tried " + ", ".join(_LLC_CANDIDATES) + "); "
                       "install llvm-22")


# A kernel's grid variant (zmlir-index-no-wrap's grid-variants, IndexNoWrap.cpp's
# kGridVariantSuffix and kGridVariantX): `<kernel>__zmlir_grid31`, for grids of at
# most GRID_VARIANT_X blocks in x (and 65535 in y and z).
GRID_VARIANT_SUFFIX = "__zmlir_grid31"
GRID_VARIANT_X = (1 << 21) - 1

# The LLVM IR attribute of every function of a program whose f32 subnormals
# are flushed (F32FlushMode.cpp's program mode); LLVM's SPIR-V backend
# writes nothing of it, so the binary gets its own mark (binary.py).
_FLUSHING_FUNCTION = '"denormal-fp-math-f32"="preserve-sign,preserve-sign"'


def work_group(block: tuple[int, int, int], sub_group_size: int,
               linear_blocks: bool) -> tuple[tuple[int, int, int], tuple[int, int]] | None:
    """The work-group that runs a CUDA block of a kernel requiring sub-groups
    of `sub_group_size` (0: none), and the global work offsets in y and z
    that tell the kernel its block's shape (SPIRVTargetInfo.cpp's
    readBlockShapeOfLinearLaunches); None where the kernel cannot run it.

    A sub-group is a CUDA warp: 32 consecutive linear thread ids. Intel's
    CPU runtime forms sub-groups along x in each row, so a block of more
    than one row whose width is not a multiple of 32 runs as a
    one-dimensional work-group of its threads, its %ntid.x and %ntid.y in
    those offsets, where the kernel reads its block's shape from them
    (`linear_blocks`: it reads %tid or %ntid in y or z); a kernel that reads
    x alone has no such form (None). Any other block runs as it is, the
    offsets 0."""
    x, y, z = block
    if sub_group_size == 32 and x % 32 and y * z > 1:
        return ((x * y * z, 1, 1), (x, y)) if linear_blocks else None
    return block, (0, 0)


def warps_not_rows(name: str, block: tuple[int, int, int]) -> str:
    """Why a block work_group gives no work-group for cannot run."""
    return (f"kernel {name!r} with block {block}: its warp operations need 32 consecutive "
            "threads of the block, and it reads threadIdx.x alone, so zmlir runs it only in "
            "blocks of one row or a multiple of 32 threads wide")


@register
class SPIRVTarget(Target):
    name = "spirv"
    default_arch = ""
    triple = "spirv64-unknown-unknown"
    binary_suffix = ".spv"
    trap_word = "__zmlir_trap"  # kTrapWordName of SPIRVTargetInfo.cpp
    globaltimer_word = "__zmlir_globaltimer"  # kGlobaltimerName of SPIRVTargetInfo.cpp
    # spirv-bfloat-as-bits: Intel's OpenCL CPU runtime lacks SPV_KHR_bfloat16;
    # spirv-opaque-negations: Intel's CPU compiler keeps an fneg live across a
    # barrier once per work-group, not per work-item (SPIRVFixups.cpp);
    # spirv-kernelless-variables: LLVM 22 writes no variable of a module
    # without a function;
    # spirv-realign-allocas: LLVM 22 writes an alloca's alignment above 64 wrong;
    # spirv-state-space: isspacep's shared window and stack test, and
    # spirv-inline-private-escapes: calls given private addresses (both before
    # the realignment, as they inline functions with their allocas);
    # spirv-spin-waits: a block's spin loops take turns (SPIRVSpinWaits.cpp;
    # it finds polls by their atomic loads, so before the next one);
    # spirv-opaque-loop-conditions: Intel's CPU compiler miscompiles a loop with
    # a barrier that branches on a value the same in every iteration, made
    # before the loop or from values made before it (after spin-waits, whose
    # turns are such loops, and whose polls a volatile load would be);
    # spirv-volatile-atomic-accesses: LLVM 22 writes atomic loads and stores
    # as plain ones (after bfloat-as-bits, which rebuilds loads and stores);
    # spirv-address-geps: integer addresses as GEPs off their base pointer,
    # and spirv-typed-element-geps: byte-offset accesses as element GEPs, both
    # of which Intel's vectorizer needs to see accesses consecutive (last:
    # after every rebuilt access).
    llvm_fixups = ("spirv-bfloat-as-bits", "spirv-opaque-negations",
                   "spirv-split-long-initializers", "spirv-kernelless-variables",
                   "spirv-narrow-zext-of-trunc", "spirv-state-space",
                   "spirv-inline-private-escapes", "spirv-realign-allocas",
                   "spirv-spin-waits", "spirv-opaque-loop-conditions",
                   "spirv-volatile-atomic-accesses",
                   "spirv-address-geps", "spirv-typed-element-geps")

    # CUDA's `%ctaid.x * %ntid.x + %tid.x` may wrap; under a grid of fewer
    # than 2^21 blocks in x it cannot, and computed in 64 bits Intel's
    # vectorizer sees the work-items' addresses consecutive. The OpenCL
    # backend launches such grids on that variant.
    grid_variants = True

    # `if (threadIdx.x < 32)` around a warp's shuffles: on get_local_id(0)
    # Intel's vectorizer masks the branch and emulates each shuffle lane by
    # lane; on get_local_id(0) - get_sub_group_local_id() it sees one answer
    # per sub-group (bench/results/cpu_kernels.md, reduce).
    uniform_warp_conditions = True

    @classmethod
    def validate_arch(cls, arch: str) -> None:
        if arch:
            raise ValueError(f"target 'spirv' takes no architecture (got '{arch}')")

    def lowering_options(self) -> LoweringOptions:
        # LLVM's SPIR-V backend: 0 = Function, 1 = CrossWorkgroup,
        # 2 = UniformConstant, 3 = Workgroup, 4 = Generic. `.const` lives in
        # CrossWorkgroup: the host writes __constant__ memory after loading
        # (cudaMemcpyToSymbol), so it must not be a compile-time constant.
        # The shared window is OpenCL's `__local` kernel argument.
        # `.local` is Function storage (0).
        return LoweringOptions(generic_address_space=4, const_address_space=1,
                               local_address_space=0, shared_window="kernel-arg",
                               subgroup_size=self.warp_size, target="spirv")

    def llvm_pipeline(self) -> str:
        return ("builtin.module(gpu.module(convert-math-to-llvm, "
                "convert-gpu-to-llvm-spv{use-64bit-index=true}, "
                "convert-arith-to-llvm{index-bitwidth=64}, "
                "convert-index-to-llvm{index-bitwidth=64}, convert-ub-to-llvm), "
                "convert-cf-to-llvm, reconcile-unrealized-casts)")

    @property
    def cpu(self) -> str:
        return ""

    def _run_llc(self, llvm_ir: str, filetype: str) -> bytes:
        # LLVM 22's SPIR-V backend keeps pointer-keyed state between modules
        # compiled in one process: a second module can come out with
        # duplicate ids (seen: 19 of 120 in-process compiles failed
        # spirv-val, 0 of 30 fresh llc runs). So each module gets a fresh
        # llc process.
        # SPV_KHR_shader_clock: %clock/%clock64 (OpReadClockKHR, cl_khr_kernel_clock); a
        # module that reads no clock does not declare it.
        # -disable-lsr: loop strength reduction shapes loops for a machine's
        # addressing modes, which a SPIR-V consumer chooses itself; and its
        # expansions include zext(trunc(x to i1)), which LLVM 22's SPIR-V
        # backend emits as an OpBitwiseAnd of mismatched widths (llm.c's
        # trimat_forward: Intel's runtime rejected the module).
        result = subprocess.run([_llc(), "-O2", "-disable-lsr", f"-mtriple={self.triple}",
                                 "--spirv-ext=+SPV_KHR_shader_clock",
                                 f"-filetype={filetype}", "-o", "-"],
                                input=llvm_ir.encode(), capture_output=True)
        if result.returncode != 0:
            raise RuntimeError(f"llc failed: {result.stderr.decode(errors='replace').strip()}")
        return result.stdout

    def emit_asm(self, llvm_ir: str) -> bytes:
        return self._run_llc(llvm_ir, "asm")

    def emit_binary(self, llvm_ir: str) -> bytes:
        binary = fix_constant_byte_addresses(self._run_llc(llvm_ir, "obj"))
        if _FLUSHING_FUNCTION in llvm_ir:
            binary = mark_flushing_subnormals(binary)
        return binary
