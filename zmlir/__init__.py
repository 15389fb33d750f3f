"""zmlir: run unmodified CUDA programs on non-NVIDIA GPUs.

PTX is parsed (lark), imported into the MLIR `ptx` dialect and lowered to
AMDGPU, SPIR-V or NVPTX. `zmlir.compile(ptx, target="amdgpu:gfx1100")`
returns the target binary.
"""

from zmlir.compiler import CompiledModule, KernelInfo, compile, compile_module
from zmlir.diagnostics import CompileError

__version__ = "0.1.0"

__all__ = ["CompileError", "CompiledModule", "KernelInfo", "__version__", "compile",
           "compile_module"]
