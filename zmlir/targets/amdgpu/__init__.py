"""AMDGPU: HSACO code objects for HIP, through LLVM's AMDGPU backend and lld.

gfx10 and newer run wave32, so a wavefront is a CUDA warp. gfx9 data-centre
chips (gfx90a, gfx942) run wave64 and we emulate 32-lane warps: each half
of a wavefront is one CUDA warp. Shuffles over 32 lanes are two 32-lane
segments (the ROCDL lowering of `gpu.shuffle` with width 32), `%laneid` is
the lane modulo 32, and ballots (vote, activemask) take the 32 bits of the
lane's half of the 64-bit wavefront ballot."""

from __future__ import annotations

import re

from zmlir.targets.base import LoweringOptions, Target, register
from zmlir.toolchain import link_shared


@register
class AMDGPUTarget(Target):
    name = "amdgpu"
    default_arch = "gfx1100"
    triple = "amdgcn-amd-amdhsa"
    binary_suffix = ".hsaco"

    @classmethod
    def validate_arch(cls, arch: str) -> None:
        if not re.fullmatch(r"gfx[0-9a-f]{3,4}", arch):
            raise ValueError(f"bad AMDGPU architecture '{arch}' (expected gfxNNN)")

    @property
    def wave_size(self) -> int:
        return 64 if self.arch.startswith("gfx9") else 32

    def lowering_options(self) -> LoweringOptions:
        # AMDGPU: 0 flat (generic), 1 global, 3 LDS, 4 constant, 5 private.
        return LoweringOptions(local_address_space=5, target="amdgpu",
                               wave_size=self.wave_size)

    def llvm_pipeline(self) -> str:
        # The ROCDL lowering marks llvm.intr.floor/ceil illegal (it wants
        # OCML calls, which we do not link): zmlir-native-math-intrinsics
        # keeps them as llvm.call_intrinsic, native on AMDGPU.
        return ("builtin.module(gpu.module(convert-math-to-llvm, "
                "zmlir-native-math-intrinsics, "
                f"convert-gpu-to-rocdl{{chipset={self.arch} index-bitwidth=64 runtime=HIP}}, "
                "convert-ub-to-llvm), reconcile-unrealized-casts)")

    def emit_binary(self, llvm_ir: str) -> bytes:
        from zmlir import _native

        # An HSA code object is a shared library.
        return link_shared(_native.emit(llvm_ir, self.triple, self.cpu, self.features, "obj", 2))
