"""`zmlir run`'s nvcc stand-in (runtime/cuda/nvcc_standin.py): a cubin
request gives a fatbin of PTX, everything else reaches NVIDIA's nvcc."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import tool

from zmlir.runtime.cuda import fatbin
from zmlir.runtime.cuda.nvcc_standin import VERSION_NOTE, rewrite


@pytest.mark.parametrize(("args", "want"), [
    # pycuda's SourceModule: the cubin goes where nvcc would put it.
    (["--cubin", "-arch", "sm_80", "-I/x", "kernel.cu"],
     ["--fatbin", "-arch=compute_80", "-I/x", "kernel.cu", "-o", "kernel.cubin"]),
    (["-cubin", "--gpu-architecture=sm_90a", "-code", "sm_90a", "-o", "out.bin", "a.cu"],
     ["--fatbin", "-arch=compute_90a", "-o", "out.bin", "a.cu"]),
    (["--cubin", "-gencode", "arch=compute_75,code=sm_75", "-Xcompiler", "-O2", "k.cu"],
     ["--fatbin", "-gencode=arch=compute_75,code=compute_75", "-Xcompiler", "-O2", "k.cu",
      "-o", "k.cubin"]),
    # Not a cubin: unchanged.
    (["--ptx", "-arch", "sm_80", "k.cu"], ["--ptx", "-arch", "sm_80", "k.cu"]),
    (["--preprocess", "-arch", "sm_80", "k.cu"], ["--preprocess", "-arch", "sm_80", "k.cu"]),
])
def test_rewrite(args: list[str], want: list[str]) -> None:
    assert rewrite(args) == want


def test_zmlir_run_nvcc_cubin_is_ptx(tmp_path: Path) -> None:
    if tool("nvcc") is None:
        pytest.skip("no nvcc")
    (tmp_path / "k.cu").write_text(
        'extern "C" __global__ void twice(float *x) { x[threadIdx.x] *= 2; }\n')
    run = [sys.executable, "-m", "zmlir.cli", "run", "--", "nvcc"]
    built = subprocess.run([*run, "--cubin", "-arch", "sm_80", "k.cu"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    entries = fatbin.parse((tmp_path / "k.cubin").read_bytes())
    assert [(e.kind, e.sm) for e in entries] == [(fatbin.KIND_PTX, 80)]
    assert ".entry twice" in entries[0].ptx_text()
    version = subprocess.run([*run, "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and "release" in version.stdout
    assert version.stdout.rstrip().endswith(VERSION_NOTE)
