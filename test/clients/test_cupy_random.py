"""cupy.random (cupy-cuda13x) under `zmlir run`: its RandomState calls
NVIDIA's libcurand.so.10 (the nvidia-curand wheel, which zmlir's bootstrap
installs; CuPy's curand module links it by name), whose kernels load as PTX
because `zmlir run` tells libcurand an architecture it has no SASS for
(runtime/cuda/arch_preload.c). cupy_random.py checks each distribution's
statistics and that a seed repeats."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.clients import assert_steps, client_venv, zmlir_run
from test_cupy import CUPY, NVRTC

HERE = Path(__file__).resolve().parent
STEPS = ["random_sample_float64", "uniform_float32", "standard_normal_float64",
         "normal_float32", "lognormal_float64", "tomaxint"]


@pytest.fixture(scope="module")
def python(libdir: str) -> Path:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    return client_venv(CUPY, NVRTC)


@pytest.fixture(scope="module")
def curand_lib() -> Path:
    from zmlir.libraries import build

    wheel = build.nvidia_wheel_dir("curand.h")
    if wheel is None or not (wheel / "lib" / "libcurand.so.10").exists():
        pytest.skip("NVIDIA's libcurand is not installed (the nvidia-curand wheel)")
    return wheel / "lib"


def test_cupy_random_through_nvidias_curand(python: Path, curand_lib: Path,
                                            tmp_path: Path) -> None:
    library_path = os.pathsep.join(p for p in (str(curand_lib),
                                               os.environ.get("LD_LIBRARY_PATH", "")) if p)
    env = dict(os.environ, CUPY_CACHE_DIR=str(tmp_path / "cupy-cache"),
               LD_LIBRARY_PATH=library_path)
    result = zmlir_run(python, HERE / "cupy_random.py", env=env, timeout=1800)
    assert_steps(result, STEPS)
