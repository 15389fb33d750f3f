"""Shared pytest fixtures: nvcc-compiled PTX of our CUDA sources, the SPIR-V device,
a stand-in for NVIDIA's driver."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest
from support import CUDA_DIR, tool


@functools.cache
def _nvcc_ptx(source: Path, arch: str, cache_dir: Path) -> str:
    out = cache_dir / f"{source.stem}.{arch}.ptx"
    subprocess.run([tool("nvcc") or "nvcc", "-ptx", f"-arch={arch}", str(source), "-o",
                    str(out)], check=True, capture_output=True, text=True)
    return out.read_text()


@pytest.fixture(scope="session")
def nvcc_ptx(tmp_path_factory: pytest.TempPathFactory):
    """nvcc_ptx("vector_add.cu", arch="sm_80") -> the PTX nvcc emits for it."""
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    cache_dir = tmp_path_factory.mktemp("ptx")

    def compile_ptx(name: str, arch: str = "sm_80") -> str:
        return _nvcc_ptx(CUDA_DIR / name, arch, cache_dir)

    return compile_ptx


@pytest.fixture(scope="session")
def libdir() -> str:
    """The folder of our libcuda.so.1 (`zmlir libdir`), which programs link with -lcuda."""
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def device():
    """The OpenCL device SPIR-V kernels run on."""
    launcher = pytest.importorskip("zmlir.runtime.backends.opencl.device")
    try:
        dev = launcher.Device.open()
    except Exception as err:  # no OpenCL runtime with SPIR-V on this machine
        pytest.skip(f"no SPIR-V capable OpenCL device: {err}")
    yield dev
    dev.close()


@pytest.fixture(scope="session")
def fake_nvidia_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stand-in for NVIDIA's libcuda.so.1 (test/cuda/driver_api/fake_nvidia_driver.c)."""
    cc = tool("cc") or tool("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("fake_driver") / "libcuda.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out),
                    str(CUDA_DIR / "driver_api" / "fake_nvidia_driver.c")],
                   check=True, capture_output=True)
    return out
