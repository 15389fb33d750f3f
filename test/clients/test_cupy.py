"""CuPy (cupy-cuda13x) with its default settings under `zmlir run`, in a
client virtualenv of its own (support.clients): cupy_basics.py's steps,
each checked against NumPy.

CuPy compiles its kernels with NVRTC (the nvidia-cuda-nvrtc wheel; without
it CuPy's first kernel raises DynamicLibNotFoundError for libnvrtc.so.13,
as on a GPU machine) for the reported sm_80, which `zmlir run`'s NVRTC
stand-in turns into PTX. Its prebuilt CUB (sum, min/max) and Thrust (sort)
modules carry compute_120 PTX only: large modules (21 and 27 MB), whose
kernels compile as they are first launched (runtime/cuda/parted.py), into
zmlir's JIT cache. CuPy's own kernel cache is a fresh directory per run: no
kernel comes from an earlier one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.clients import assert_steps, client_venv, zmlir_run

HERE = Path(__file__).resolve().parent
CUPY = "cupy-cuda13x==14.2.0"
NVRTC = "nvidia-cuda-nvrtc==13.0.*"
STEPS = ["asarray", "arange_zeros", "ufuncs", "float64_and_casts", "broadcast_and_strides",
         "elementwise_kernel", "reduction_kernel", "sum_all", "sum_axis_and_mean",
         "min_max_argmax", "cumsum", "sort", "sort_large_and_axes",
         "unique", "raw_kernel", "raw_module", "fresh_compile"]
# Steps not yet seen to pass, with why: skipped (the script says so).
PENDING: dict[str, str] = {}


@pytest.fixture(scope="module")
def python(libdir: str) -> Path:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    return client_venv(CUPY, NVRTC)


def test_cupy_basics(python: Path, tmp_path: Path) -> None:
    env = dict(os.environ, CUPY_CACHE_DIR=str(tmp_path / "cupy-cache"))
    env.pop("CUPY_ACCELERATORS", None)  # CuPy's default: CUB
    env["CUPY_BASICS_SKIP"] = ",".join(PENDING)
    result = zmlir_run(python, HERE / "cupy_basics.py", env=env, timeout=1800)
    output = result.stdout + result.stderr
    for bad in ("internal error", "unsupported CUDA driver API", "cannot compile"):
        assert bad not in output, output
    assert_steps(result, STEPS, PENDING)
