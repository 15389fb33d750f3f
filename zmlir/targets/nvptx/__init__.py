"""NVPTX: PTX for NVIDIA GPUs through LLVM's NVPTX backend. Used to check
the whole compiler against real hardware."""

from __future__ import annotations

import re

from zmlir.targets.base import LoweringOptions, Target, register

# `nvptx:sm_90+native-textures`: texture and surface handles are NVIDIA's
# objects, read by NVIDIA's instructions (the CUDA passthrough's vendor
# textures); without it they are zmlir's descriptors (docs/textures.md).
NATIVE_TEXTURES = "+native-textures"


@register
class NVPTXTarget(Target):
    name = "nvptx"
    default_arch = "sm_80"
    triple = "nvptx64-nvidia-cuda"
    binary_suffix = ".ptx"
    binary_is_text = True
    llvm_fixups = ("nvptx-managed-globals", "nvptx-launch-bounds", "nvptx-check-atomics",
                   "nvptx-no-runtime-unroll")

    def __init__(self, arch: str | None = None) -> None:
        arch = arch or self.default_arch
        self.native_textures = arch.endswith(NATIVE_TEXTURES)
        super().__init__(arch.removesuffix(NATIVE_TEXTURES))

    @property
    def spec(self) -> str:
        return super().spec + (NATIVE_TEXTURES if self.native_textures else "")

    @classmethod
    def validate_arch(cls, arch: str) -> None:
        if not re.fullmatch(r"sm_\d{2,3}[af]?", arch):
            raise ValueError(f"bad NVPTX architecture '{arch}' (expected sm_XX)")

    def refuses_ptx_arch(self, ptx_sm: int) -> str | None:
        # As NVIDIA's driver refuses PTX for a newer GPU: its instructions
        # (bf16 wmma for sm_80, ...) may have no form on the older one.
        number = int(re.match(r"sm_(\d+)", self.arch).group(1))  # type: ignore[union-attr]
        if ptx_sm > number:
            return (f"unsupported: the PTX is for sm_{ptx_sm} (its .target), newer than "
                    f"the target's {self.arch}")
        return None

    @property
    def features(self) -> str:
        # At least PTX ISA 8.1: kernels with up to 32764 bytes of parameters
        # (ptxas takes 4352 before it). LLVM's default for sm_100 and later
        # is newer already, and an older one would be an error there.
        number = int(re.match(r"sm_(\d+)", self.arch).group(1))  # type: ignore[union-attr]
        return "+ptx81" if number < 100 else ""

    def lowering_options(self) -> LoweringOptions:
        # NVPTX: 0 generic, 1 global, 3 shared, 4 const. All shared memory is
        # one dynamic `.extern .shared` window sized by the launcher. `.local`
        # variables are allocas in 5, reached from generic code by cvta.
        return LoweringOptions(local_address_space=5, target="nvptx",
                               native_textures=self.native_textures)

    def llvm_pipeline(self) -> str:
        # Math first, to LLVM intrinsics: the NVVM lowering would otherwise
        # call libdevice, which we do not link. It also marks some of those
        # intrinsics illegal (fabs, floor, ceil, ...): zmlir-native-math-
        # intrinsics keeps them as llvm.call_intrinsic, which NVPTX lowers to
        # native instructions.
        return ("builtin.module(gpu.module(convert-math-to-llvm, "
                "zmlir-native-math-intrinsics, convert-gpu-to-nvvm{index-bitwidth=64}, "
                "convert-ub-to-llvm), "
                "reconcile-unrealized-casts)")

    def emit_binary(self, llvm_ir: str) -> bytes:
        # The "binary" of NVPTX is PTX text, loaded by the CUDA driver.
        return self.emit_asm(llvm_ir)
