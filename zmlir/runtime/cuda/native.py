"""NVIDIA machine code run as it is, where the backend runs it (the CUDA
passthrough: SASS for its GPU).

zmlir compiles PTX. An image with no PTX we can load — NVIDIA's libraries
(libcublas keeps PTX only for compute_120, cuFFT none), SASS-only binaries,
PTX that is neither precompiled nor compilable on a machine without LLVM —
still runs on an NVIDIA GPU when it holds SASS for that GPU: NVIDIA's driver
loads it (Backend.load_native), and our driver keeps its own objects in
front of it as for any module: handles, launches in stream order, globals.
A native module's kernels are described by NVIDIA's driver (parameter
layout, attributes), not by our compiler (Backend.native_kernel_info).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zmlir.compiled import KernelInfo


@dataclass
class NativeKernels:
    """The kernels of a native program, described on first use (a module
    of NVIDIA's libraries holds hundreds; a program asks for a few)."""

    device: Any  # the Backend
    program: Any  # its program from load_native
    known: dict[str, KernelInfo | None] = field(default_factory=dict)

    def get(self, name: str) -> KernelInfo | None:
        if name not in self.known:
            self.known[name] = self.device.native_kernel_info(self.program, name)
        return self.known[name]

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def __getitem__(self, name: str) -> KernelInfo:
        info = self.get(name)
        if info is None:
            raise KeyError(name)
        return info


@dataclass
class NativeImage:
    """What stands for a compiled module (zmlir.CompiledModule) in a Module
    whose program is NVIDIA's machine code: it holds no variables of ours
    (no trap word, printf buffer, device heap or grid workspace)."""

    target: str  # "sm_90 machine code"
    kernels: NativeKernels
    binary: bytes = b""


def is_native(module: Any) -> bool:
    return isinstance(module.compiled, NativeImage)
