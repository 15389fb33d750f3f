"""NVIDIA's cuda-python (cuda.core 1.x on cuda-bindings 13) on our driver:
the scripts beside this file under `zmlir run`, in a client virtualenv of
their own (support.clients)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.clients import client_venv, zmlir_run

from zmlir.trace import report

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def python() -> Path:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    # The documented install (cuda-bindings 13, NVRTC and the rest of the
    # CUDA 13 wheels cuda.core uses), at the versions measured: a later
    # cuda-bindings looks up a later CUDA's entry points.
    return client_venv("cuda-core[cu13]==1.2.2", "cuda-bindings==13.5.0", "cuda-toolkit==13.5.0")


def _clean(result: subprocess.CompletedProcess[str]) -> None:
    """Exited 0 with no Python error, driver bug or crash on the way out."""
    assert result.returncode == 0, result.stdout + result.stderr
    for bad in ("Traceback", "internal error", "Segmentation", "Aborted", "Exception ignored"):
        assert bad not in result.stderr, result.stderr


def test_cuda_core(python: Path, tmp_path: Path) -> None:
    trace = tmp_path / "core.jsonl"
    result = zmlir_run(python, HERE / "cuda_python_core.py",
                       env=dict(os.environ, ZMLIR_TRACE=str(trace)))
    _clean(result)
    assert result.stdout.splitlines() == [
        "device 8 True",
        "cubin saxpy True timed True",
        "ptx saxpy True timed True",
        "graph True",
        "ManagedMemoryResource True True",
        "PinnedMemoryResource False True",
        "fill<int> True",
        "fill<double> True",
        "arguments 3 max threads 1024",
        "end of script"]
    s = report.summarize(report.load(trace))
    # cuda.bindings resolves every entry point of CUDA 13 at import: all found.
    lookups = s.per_api["cuGetProcAddress_v2"]["count"]
    assert lookups > 500 and s.not_found == []
    assert s.first_failure is None, s.first_failure
    # The objects left alive were destroyed at exit, through the driver.
    assert s.per_api["cuStreamDestroy_v2"]["count"] >= 1
    assert s.per_api["cuMemFreeAsync"]["count"] >= 1


def test_cuda_bindings_driver_and_runtime(python: Path) -> None:
    result = zmlir_run(python, HERE / "cuda_python_driver.py")
    _clean(result)
    assert result.stdout.splitlines() == [
        "scale True",
        "device pointer 2 0 False 24000 True",  # CU_MEMORYTYPE_DEVICE, device 0
        "host pointer 1",  # CU_MEMORYTYPE_HOST
        "runtime devices 1",
        "runtime round trip True",
        "done"]
