"""When the application's runtime loads its modules: as it starts (told
eager by cuModuleGetLoadingMode), not at the first use of a kernel, which
programs often time (a sample timing one launch); the runtimes inside
NVIDIA's libraries, and everything under CUDA_MODULE_LOADING=LAZY, load
lazily (fastpath.c): told eager, NVIDIA's cuBLAS loads its ~2800 images as
cublasCreate starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import tool

_PROGRAM = r"""
#include <cstdio>
__global__ void scale(float *x) { x[threadIdx.x] *= 2.0f; }
int main() {
  float *x;
  if (cudaMalloc(&x, 32 * sizeof(float)) != cudaSuccess) return 1;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  scale<<<1, 32>>>(x);
  cudaEventRecord(stop);
  cudaError_t err = cudaEventSynchronize(stop);
  printf("%s\n", cudaGetErrorString(err));
  return err != cudaSuccess;
}
"""


@pytest.fixture(scope="module")
def timed_first_launch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    nvcc = tool("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    folder = tmp_path_factory.mktemp("loading")
    source = folder / "timed_first_launch.cu"
    source.write_text(_PROGRAM)
    exes = {}
    for cudart in ("static", "shared"):
        exe = folder / f"timed_first_launch.{cudart}"
        subprocess.run([nvcc, "-arch=sm_80", f"-cudart={cudart}", str(source), "-o", str(exe)],
                       check=True, capture_output=True)
        exes[cudart] = exe
    return exes


def _calls(exe: Path, trace: Path, fake_nvidia_driver: Path, **env: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)], capture_output=True,
        text=True, timeout=600,
        env={**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver),
             "ZMLIR_TRACE": str(trace), **env})
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in trace.read_text().splitlines()]
    return [r["api"] for r in rows if "api" in r and r["api"] != "cuGetProcAddress_v2"]


@pytest.mark.parametrize("cudart", ["static", "shared"])
def test_the_applications_modules_load_as_it_starts(timed_first_launch: dict[str, Path],
                                                    cudart: str, tmp_path: Path,
                                                    fake_nvidia_driver: Path) -> None:
    calls = _calls(timed_first_launch[cudart], tmp_path / "eager.jsonl", fake_nvidia_driver)
    assert calls.index("cuLibraryLoadData") < calls.index("cuEventRecord")
    lazy = _calls(timed_first_launch[cudart], tmp_path / "lazy.jsonl", fake_nvidia_driver,
                  CUDA_MODULE_LOADING="LAZY")
    first = lazy.index("cuEventRecord")
    assert "cuLibraryLoadData" not in lazy[:first] and "cuLibraryLoadData" in lazy[first:]


_ASK = textwrap.dedent("""
    import ctypes, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    assert lib.cuInit(0) == 0
    mode = ctypes.c_int(-1)
    assert lib.cuModuleGetLoadingMode(ctypes.byref(mode)) == 0
    print(mode.value)
""")


@pytest.mark.parametrize("backend, expected", [("cuda", 2), ("opencl", 2)])
def test_other_callers_get_the_drivers_answer(libdir: str, fake_nvidia_driver: Path,
                                              backend: str, expected: int) -> None:
    """A caller that is not the application's runtime (here Python's ctypes,
    as NVIDIA's libraries' own runtimes are) gets the Python driver's answer:
    NVIDIA's lazy default, on every backend."""
    result = subprocess.run([sys.executable, "-c", _ASK, libdir], capture_output=True,
                            text=True, timeout=300,
                            env={**os.environ, "ZMLIR_BACKEND": backend,
                                 "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)})
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip().splitlines()[-1]) == expected


def test_a_driver_without_its_compiler_says_so(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # A driver installed without zmlir's native compiler (the NVPTX cache's
    # modules only): a module it cannot compile is NVIDIA's
    # CUDA_ERROR_JIT_COMPILER_NOT_FOUND (cudart: "PTX JIT compiler library
    # not found"), not a PTX error, and the log says which module.
    from types import SimpleNamespace

    from zmlir.runtime import cache
    from zmlir.runtime.cuda.errors import CudaError, CUresult
    from zmlir.runtime.cuda.module import ModuleAPI

    def no_compiler(*args: object) -> None:
        raise ImportError("zmlir._native: cannot open shared object file")

    monkeypatch.setattr(cache, "compile_cached", no_compiler)
    api = object.__new__(ModuleAPI)
    api.device = SimpleNamespace(target_for=lambda ptx: "spirv", native_sm=lambda: 0)
    ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n"
    with pytest.raises(CudaError) as raised:
        api._compile(ptx, "k.ptx", "1234")
    assert raised.value.code == CUresult.CUDA_ERROR_JIT_COMPILER_NOT_FOUND
    assert "module 1234 is not precompiled and zmlir's compiler is unavailable" in \
        capsys.readouterr().err
