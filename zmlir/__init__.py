"""zmlir: run unmodified CUDA programs on non-NVIDIA GPUs.

PTX is parsed (lark), imported into the MLIR `ptx` dialect and lowered to
AMDGPU, SPIR-V or NVPTX. `zmlir.compile(ptx, target="amdgpu:gfx1100")`
returns the target binary.

The compiler (and with it LLVM) is imported on first use, so the runtime can
run where only precompiled modules are available.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_COMPILER_NAMES = ("CompiledModule", "KernelInfo", "compile", "compile_module")
__all__ = ["CompileError", "CompiledModule", "KernelInfo", "__version__", "compile",
           "compile_module"]

from zmlir.diagnostics import CompileError  # noqa: E402


def __getattr__(name: str) -> Any:
    if name in ("CompiledModule", "KernelInfo"):
        from zmlir import compiled

        return getattr(compiled, name)
    if name in _COMPILER_NAMES:
        from zmlir import compiler

        return getattr(compiler, name)
    raise AttributeError(f"module 'zmlir' has no attribute {name!r}")
