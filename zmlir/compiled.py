"""What compilation produces, in a module light enough for the runtime to
import without loading the compiler (a JIT cache hit needs only this)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class KernelInfo:
    """What a launcher needs to know about a compiled kernel."""

    name: str
    param_count: int
    # Bytes of the static `.shared` variables; the launcher adds the dynamic
    # shared memory size to this for the kernel's shared window.
    static_shared_bytes: int
    # Each parameter's PTX type ("u64", "f32", ...); an array passed by value
    # is its element type and count, after its alignment if declared
    # ("align 8 b8[24]" for `.param .align 8 .b8 p[24]`).
    params: tuple[str, ...] = ()
    # The architecture of the PTX it was compiled from (75 for `.target
    # sm_75`; 0: unknown), CU_FUNC_ATTRIBUTE_PTX_VERSION: CUB dispatches on
    # it and needs one it was built for.
    ptx_arch: int = 0
    # cuFuncGetAttribute's: `.local` bytes per thread, the bytes of the
    # `.const` variables it refers to, the most threads a block may have
    # from `.maxntid`/`.reqntid` (0: no bound but the device's), and the
    # register ceiling from `.maxnreg` (0: none).
    local_bytes: int = 0
    const_bytes: int = 0
    max_threads: int = 0
    max_registers: int = 0
    # SPIR-V: whether the kernel has a form for blocks its warps are not
    # rows of (targets/spirv's work_group).
    linear_blocks: bool = False


@dataclass
class CompiledModule:
    target: Any  # zmlir.targets.Target
    stages: dict[str, str | bytes] = field(default_factory=dict)
    kernels: dict[str, KernelInfo] = field(default_factory=dict)
    # The wall seconds each stage took in compile_module (the import under
    # its stage name, `ptx-mlir`); empty for a module the JIT cache gave.
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def binary(self) -> bytes:
        out = self.stages["bin"]
        assert isinstance(out, bytes)
        return out
