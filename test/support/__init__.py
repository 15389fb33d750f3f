"""Helpers shared by the tests, importable as `support` (pyproject.toml's pytest
`pythonpath` puts test/ on sys.path, and the repository root for `tools`).

- `support` itself: the test tree's paths, `tool()`, the lookup of
  external tools (nvcc, ptxas, spirv-val, LLVM's), `run_probe()`, a
  driver probe script's JSON answer, and `add_scalar_setup()`, a probe's start
  on our libcuda.so.1;
- `support.cuda_cases`: the CUDA kernels of test/cuda/ with their launches
  and numpy references (also used by examples/demo.py and tools/);
- `support.programs`: the test programs of test/cuda/programs and how nvcc
  builds each (standard library only, also used by examples/demo.py and tools/);
- `support.fidelity`: running a fidelity case (test/ptx/) as SPIR-V on the
  CPU, its results file, and the cases each target is expected to reject.

The data folders next to it are packages too: `ptx.spec` (the fidelity cases)
and `corpus.build` (the nvcc corpus)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

TEST_DIR = Path(__file__).resolve().parent.parent
REPO = TEST_DIR.parent
CUDA_DIR = TEST_DIR / "cuda"
PROGRAMS_DIR = CUDA_DIR / "programs"
LIT_INPUTS = TEST_DIR / "lit" / "Inputs"

# The driver probes' kernel (spliced into their scripts): out[tid] += v.
ADD_SCALAR_PTX = b"""
.version 9.0
.target sm_80
.address_size 64
.visible .entry add_scalar(.param .u64 p, .param .u32 v)
{
  .reg .b32 %r<5>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r3, [%rd3];
  add.s32 %r4, %r3, %r1;
  st.global.u32 [%rd3], %r4;
  ret;
}
"""


def add_scalar_setup(lib: Any, stream_flags: int) -> tuple[Any, Any, Any, Any]:
    """A probe's start on our libcuda.so.1 (`lib`, ctypes): the primary
    context current, a stream of `stream_flags`, ADD_SCALAR_PTX loaded and 128
    bytes of device memory: (context, stream, add_scalar, the memory), ctypes
    values."""
    import ctypes

    ctx, stream, module, fn = (ctypes.c_void_p() for _ in range(4))
    dev = ctypes.c_uint64()
    assert lib.cuInit(0) == 0
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    assert lib.cuStreamCreate(ctypes.byref(stream), stream_flags) == 0
    assert lib.cuModuleLoadData(ctypes.byref(module), ADD_SCALAR_PTX + b"\0") == 0
    assert lib.cuModuleGetFunction(ctypes.byref(fn), module, b"add_scalar") == 0
    assert lib.cuMemAlloc_v2(ctypes.byref(dev), 128) == 0
    return ctx, stream, fn, dev


def tool(name: str) -> str | None:
    """A tool from PATH or LLVM 22's bin directory ($ZMLIR_LLVM_ROOT/bin)."""
    # Imported here: tools/ scripts load support.cuda_cases where zmlir is not installed.
    from zmlir.toolchain import llvm_tool

    return shutil.which(name) or llvm_tool(name)


def cublas_wheel(libdir: str) -> Path:
    """The nvidia-cublas wheel's folder, whose headers build our cuBLAS test
    programs, where our cuBLAS is built in `libdir`; skips the test elsewhere."""
    import pytest

    from zmlir.libraries import build

    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    wheel = build.nvidia_wheel_dir()
    if wheel is None or not build.built(Path(libdir)):
        pytest.skip("our cuBLAS is not built (needs the nvidia-cublas wheel's headers)")
    return wheel


def llvm_function(llvm_ir: str, name: str) -> str:
    """Function `name`'s text in a module's LLVM IR, from `@name(` to its body's end."""
    start = llvm_ir.index(f"@{name}(")
    return llvm_ir[start:llvm_ir.index("\n}\n", start)]


def run_probe(script: str, *args: str, **env: str) -> dict[str, Any]:
    """Runs a probe `script` (python -c, its arguments `args`, the
    environment plus `env`) and returns the JSON of its last line; it must
    exit 0, with no traceback or internal error of ours on stderr."""
    result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                            text=True, timeout=300, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])
