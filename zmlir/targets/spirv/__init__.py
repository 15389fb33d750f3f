"""SPIR-V for OpenCL and Level Zero: kernels in the OpenCL execution model,
64-bit physical addressing, generic pointers, 32-wide sub-groups so that a
sub-group is a CUDA warp."""

from __future__ import annotations

from zmlir import _native
from zmlir.targets.base import LoweringOptions, Target, register


@register
class SPIRVTarget(Target):
    name = "spirv"
    default_arch = ""
    triple = "spirv64-unknown-unknown"
    binary_suffix = ".spv"

    @classmethod
    def validate_arch(cls, arch: str) -> None:
        if arch:
            raise ValueError(f"target 'spirv' takes no architecture (got '{arch}')")

    def lowering_options(self) -> LoweringOptions:
        # LLVM's SPIR-V backend: 0 = Function, 1 = CrossWorkgroup,
        # 2 = UniformConstant, 3 = Workgroup, 4 = Generic. The shared window
        # is OpenCL's `__local` kernel argument sized at launch.
        return LoweringOptions(generic_address_space=4, const_address_space=2,
                               shared_window="kernel-arg", subgroup_size=self.warp_size)

    def llvm_pipeline(self) -> str:
        return ("builtin.module(gpu.module(convert-math-to-llvm, "
                "convert-gpu-to-llvm-spv{use-64bit-index=true}, "
                "convert-arith-to-llvm{index-bitwidth=64}, "
                "convert-index-to-llvm{index-bitwidth=64}, convert-ub-to-llvm), "
                "convert-cf-to-llvm, reconcile-unrealized-casts)")

    @property
    def cpu(self) -> str:
        return ""

    def emit_binary(self, llvm_ir: str) -> bytes:
        return _native.emit(llvm_ir, self.triple, "", "", "obj", 2)
