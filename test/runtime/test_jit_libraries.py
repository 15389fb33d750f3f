"""NVIDIA's JIT libraries loaded with dlopen, under `zmlir run`: a program
that asks NVRTC or nvJitLink, through dlsym on the library's handle (as
cuda.bindings, numba-cuda and CuPy do), for a cubin of the device's
architecture gets PTX our driver runs (runtime/cuda/dlsym_preload.c,
nvjitlink_preload.c, nvrtc_preload.c).

They need only a C compiler and, for NVRTC, the test extra's
nvidia-cuda-nvrtc (numba-cuda itself: test/clients/test_numba_cuda.py)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import CUDA_DIR

HERE = CUDA_DIR / "jit_libraries"
CLIENT = HERE / "client.py"


def _zmlir_run(*command: str, env: dict[str, str] | None = None,
               timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", *command],
                          capture_output=True, text=True, timeout=timeout, env=env)


def _without_zmlir_run(libdir: str, *command: str) -> subprocess.CompletedProcess[str]:
    # Our driver, but not the preload: what a program gets without it.
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    env.pop("LD_PRELOAD", None)
    return subprocess.run(list(command), capture_output=True, text=True, timeout=300, env=env)


@pytest.fixture(scope="module")
def fake_nvjitlink(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    library = tmp_path_factory.mktemp("nvjitlink") / "libnvJitLink.so.13"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library),
                    str(HERE / "fake_nvjitlink.c")], check=True)
    return library


def test_dlopened_nvjitlink_links_ptx_through_our_driver(fake_nvjitlink: Path,
                                                         libdir: str) -> None:
    result = _zmlir_run(sys.executable, str(CLIENT), "nvjitlink", str(fake_nvjitlink))
    assert (result.returncode, result.stdout.strip()) == (0, "PASS"), result.stderr
    # The library's own cubin, which the client gets without the preload,
    # is nothing our driver loads.
    alone = _without_zmlir_run(libdir, sys.executable, str(CLIENT), "nvjitlink", str(fake_nvjitlink))
    assert alone.stdout.strip() == "cuModuleLoadData failed: 209", alone.stderr


def _nvrtc_library() -> Path:
    spec = importlib.util.find_spec("nvidia")
    for location in (spec.submodule_search_locations or []) if spec else []:
        library = Path(location) / "cu13" / "lib" / "libnvrtc.so.13"
        if library.exists():
            return library
    pytest.skip("NVRTC is not installed (pip install nvidia-cuda-nvrtc)")


def test_dlopened_nvrtc_compiles_for_a_real_architecture(libdir: str) -> None:
    library = _nvrtc_library()
    result = _zmlir_run(sys.executable, str(CLIENT), "nvrtc", str(library))
    assert (result.returncode, result.stdout.strip()) == (0, "PASS"), result.stderr
    alone = _without_zmlir_run(libdir, sys.executable, str(CLIENT), "nvrtc", str(library))
    assert alone.stdout.strip() == "cuModuleLoadData failed: 209", alone.stderr
