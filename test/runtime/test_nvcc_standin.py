"""`zmlir run`'s nvcc stand-in (runtime/cuda/nvcc_standin.py): a cubin
request gives a fatbin of PTX, everything else reaches NVIDIA's nvcc."""

from __future__ import annotations

import os
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


def test_zmlir_run_nvcc_sits_in_a_view_of_the_toolkit(tmp_path: Path) -> None:
    # A toolkit whose nvcc prints its arguments: found from nvcc's place on
    # PATH, its include/ and lib64/ are the toolkit's (pycuda's libcudadevrt.a,
    # CuPy's CUDA_PATH), its other tools too; only nvcc is ours.
    toolkit = tmp_path / "cuda"
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "include").mkdir()
    (toolkit / "include" / "cuda.h").write_text("/* the toolkit's */\n")
    (toolkit / "lib64").mkdir()
    for tool_name, text in (("nvcc", 'echo "real nvcc: $*"'), ("ptxas", "echo ptxas")):
        (toolkit / "bin" / tool_name).write_text(f"#!/bin/sh\n{text}\n")
        (toolkit / "bin" / tool_name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "ZMLIR_REAL_NVCC"}
    env.update(PATH=f"{toolkit / 'bin'}{os.pathsep}{env['PATH']}",
               ZMLIR_CACHE_DIR=str(tmp_path / "cache"))
    script = ('bin=$(dirname "$(command -v nvcc)"); echo "$bin"; cat "$bin/../include/cuda.h";'
              ' ls "$bin/../lib64" >/dev/null && echo lib64; "$bin/ptxas";'
              ' nvcc --cubin -arch sm_80 k.cu; nvcc -c k.cu')
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", "sh", "-c", script],
                            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(str(tmp_path / "cache" / "nvcc"))
    assert lines[1:] == ["/* the toolkit's */", "lib64", "ptxas",
                         "real nvcc: --fatbin -arch=compute_80 k.cu -o k.cubin",
                         "real nvcc: -c k.cu"]
