"""The passthrough backend's cffi declarations, parsed once by the build
(backends/cuda_ffi.py: write_ffi_module) instead of at each process's cuInit."""

from __future__ import annotations

import time
from pathlib import Path

import cffi
import pytest

from zmlir.runtime.backends import cuda_ffi


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A module path of our own and no FFI made yet."""
    path = tmp_path / "_cuda_backend_ffi.py"
    monkeypatch.setattr(cuda_ffi, "FFI_MODULE", path)
    monkeypatch.setattr(cuda_ffi, "_ffi", None)
    return path


def test_prebuilt_module_is_used(fresh: Path) -> None:
    assert cuda_ffi.write_ffi_module() == fresh
    ffi = cuda_ffi.get_ffi()
    assert not isinstance(ffi, cffi.FFI)  # the out-of-line one (_cffi_backend.FFI)
    assert ffi.sizeof("CUDA_KERNEL_NODE_PARAMS") == 56  # NVIDIA's layout
    # Types named by strings resolve without pycparser: a graph's first
    # launch names several (jacobiCudaGraphs: 5 ms of its timed region).
    started = time.perf_counter()
    for name in ("CUgraphNode *", "CUgraphExec *", "CUDA_MEMSET_NODE_PARAMS *",
                 "CUDA_HOST_NODE_PARAMS *"):
        ffi.typeof(name)
    assert time.perf_counter() - started < 1e-3  # pycparser: ~0.5 ms each


def test_stale_or_missing_module_falls_back(fresh: Path) -> None:
    path = cuda_ffi.write_ffi_module()
    path.write_text(path.read_text().replace("CDEF_DIGEST = '", "CDEF_DIGEST = 'stale"))
    assert isinstance(cuda_ffi.get_ffi(), cffi.FFI)
    cuda_ffi._ffi = None
    path.unlink()
    ffi = cuda_ffi.get_ffi()
    assert isinstance(ffi, cffi.FFI)
    assert ffi.sizeof("CUDA_KERNEL_NODE_PARAMS") == 56
