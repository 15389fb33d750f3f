"""The passthrough backend's cffi declarations, parsed once by the build
(backends/cuda.py: write_ffi_module) instead of at each process's cuInit."""

from __future__ import annotations

import time
from pathlib import Path

import cffi
import pytest

from zmlir.runtime.backends import cuda as cuda_backend


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A library folder of our own and no FFI made yet."""
    monkeypatch.setattr("zmlir.runtime.cuda.build.library_dir", lambda: tmp_path)
    monkeypatch.setattr(cuda_backend, "_ffi", None)
    return tmp_path


def test_prebuilt_module_is_used(fresh: Path) -> None:
    cuda_backend.write_ffi_module(fresh)
    ffi = cuda_backend._get_ffi()
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
    path = cuda_backend.write_ffi_module(fresh)
    path.write_text(path.read_text().replace("CDEF_DIGEST = '", "CDEF_DIGEST = 'stale"))
    assert isinstance(cuda_backend._get_ffi(), cffi.FFI)
    cuda_backend._ffi = None
    path.unlink()
    ffi = cuda_backend._get_ffi()
    assert isinstance(ffi, cffi.FFI)
    assert ffi.sizeof("CUDA_KERNEL_NODE_PARAMS") == 56
