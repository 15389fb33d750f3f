"""The host CPU through LLVM's own x86-64 backend, with no GPU runtime
underneath: each kernel module is a shared library whose CUDA threads run as
fibers of zmlir's host runtime (HostRuntime.cpp; `runner.py` loads and
launches). The lowering is the SPIR-V target's up to the LLVM dialect (its
OpenCL-named work-item and sub-group calls are the runtime's functions),
then the host's calling convention and a signature-free entry per kernel."""

from __future__ import annotations

import re

from zmlir.targets.base import LoweringOptions, Target, register
from zmlir.targets.spirv import SPIRVTarget
from zmlir.toolchain import link_shared


@register
class HostTarget(Target):
    name = "host"
    default_arch = "x86-64"
    triple = "x86_64-unknown-linux-gnu"
    binary_suffix = ".so"
    llvm_fixups = ("host-kernel-entries",)

    @classmethod
    def validate_arch(cls, arch: str) -> None:
        if not re.fullmatch(r"x86-64(-v[234])?", arch):
            raise ValueError(f"bad host architecture '{arch}' (expected x86-64 or "
                             "x86-64-v2/v3/v4)")

    def lowering_options(self) -> LoweringOptions:
        # The SPIR-V numbering (x86-64 treats address spaces below 256 as
        # one flat space, so casts between them are free): the shared window
        # is each block's buffer, passed as the kernel's trailing argument.
        return LoweringOptions(generic_address_space=4, const_address_space=1,
                               local_address_space=0, shared_window="kernel-arg",
                               subgroup_size=self.warp_size, target="host")

    # Up to the LLVM dialect, SPIR-V's lowering: gpu ops become calls of the
    # OpenCL-named work-item and sub-group functions the runtime defines.
    llvm_pipeline = SPIRVTarget.llvm_pipeline

    def emit_binary(self, llvm_ir: str) -> bytes:
        from zmlir import _native

        # The runtime's functions stay undefined: the runner loads the
        # runtime library first, globally.
        return link_shared(_native.emit(llvm_ir, self.triple, self.cpu, self.features, "obj", 2))
