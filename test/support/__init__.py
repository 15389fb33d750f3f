"""Helpers shared by the tests, importable as `support` (pyproject.toml's pytest
`pythonpath` puts test/ on sys.path, and the repository root for `tools`).

- `support` itself: the test tree's paths and `tool()`, the lookup of
  external tools (nvcc, ptxas, spirv-val, LLVM's);
- `support.cuda_cases`: the CUDA kernels of test/cuda/ with their launches
  and numpy references (also used by examples/demo.py and tools/);
- `support.programs`: the test programs of test/cuda/programs and how nvcc
  builds each (standard library only, also used by examples/demo.py and tools/);
- `support.fidelity`: running a fidelity case (test/ptx/) as SPIR-V on the
  CPU, its results file, and the cases each target is expected to reject.

The data folders next to it are packages too: `ptx.spec` (the fidelity cases)
and `corpus.build` (the nvcc corpus)."""

from __future__ import annotations

import shutil
from pathlib import Path

TEST_DIR = Path(__file__).resolve().parent.parent
REPO = TEST_DIR.parent
CUDA_DIR = TEST_DIR / "cuda"
PROGRAMS_DIR = CUDA_DIR / "programs"
LIT_INPUTS = TEST_DIR / "lit" / "Inputs"


def tool(name: str) -> str | None:
    """A tool from PATH or LLVM 22's bin directory ($ZMLIR_LLVM_ROOT/bin)."""
    # Imported here: tools/ scripts load support.cuda_cases where zmlir is not installed.
    from zmlir.toolchain import llvm_tool

    return shutil.which(name) or llvm_tool(name)
