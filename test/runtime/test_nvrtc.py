"""NVRTC under `zmlir run`: a program compiling for the device's own
architecture (a cubin) gets PTX our driver runs (runtime/cuda/nvrtc_preload.c)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import CUDA_DIR, tool

SOURCE = CUDA_DIR / "nvrtc" / "nvrtc_real_arch.cpp"


def _nvrtc_root() -> Path:
    # NVIDIA's wheel nvidia-cuda-nvrtc (the test extra) puts it under nvidia/cu13.
    spec = importlib.util.find_spec("nvidia")
    for location in (spec.submodule_search_locations or []) if spec else []:
        root = Path(location) / "cu13"
        if (root / "lib" / "libnvrtc.so.13").exists() and (root / "include" / "nvrtc.h").exists():
            return root
    pytest.skip("NVRTC is not installed (pip install nvidia-cuda-nvrtc)")


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory, libdir: str) -> Path:
    from zmlir.runtime.cuda import build

    root = _nvrtc_root()
    assert (Path(libdir) / build.NVRTC_PRELOAD).exists()
    exe = tmp_path_factory.mktemp("nvrtc") / "nvrtc_real_arch"
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    # nvcc for cuda.h and the host compiler; NVRTC from the wheel (an RPATH,
    # which libnvrtc's own dlopen of its builtins honours); -lcuda: ours.
    subprocess.run([tool("nvcc"), f"-I{root / 'include'}", str(SOURCE), f"-L{libdir}",
                    f"-Xlinker=-rpath={root / 'lib'}", f"-L{root / 'lib'}", "-l:libnvrtc.so.13",
                    "-Xlinker=--disable-new-dtags",
                    "-lcuda", "-o", str(exe)], check=True, capture_output=True)
    return exe


@pytest.mark.parametrize("separate_arch", [False, True])
def test_real_architecture_cubin_runs(program: Path, separate_arch: bool) -> None:
    env = dict(os.environ)
    env.pop("NVRTC_SEPARATE_ARCH", None)
    if separate_arch:
        env["NVRTC_SEPARATE_ARCH"] = "1"
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(program)],
                            capture_output=True, text=True, timeout=300, env=env)
    assert (result.returncode, result.stdout.strip()) == (0, "PASS"), result.stderr


def test_without_the_preload_a_cubin_is_no_binary_for_gpu(program: Path, libdir: str) -> None:
    # Our driver alone cannot run NVIDIA machine code, and says so.
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    env.pop("LD_PRELOAD", None)
    result = subprocess.run([str(program)], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 1
    assert "cuModuleLoadData" in result.stdout and "CUDA_ERROR_NO_BINARY_FOR_GPU" in result.stdout
    # ... and says what to do, once, without ZMLIR_LOG.
    assert result.stderr.count("NVIDIA machine code (cubin), not PTX") == 1, result.stderr
    assert "`zmlir run`" in result.stderr
