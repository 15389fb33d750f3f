"""numba-cuda on our driver with its default settings: @cuda.jit kernels
linked by NVIDIA's nvJitLink (whose stand-in `zmlir run` preloads gives
PTX), float16 support linked in, dynamic shared memory. The script beside
this file runs under `zmlir run` in a client virtualenv of its own
(support.clients). numba's own suite is bench/numba_cuda.py's."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.clients import client_venv, zmlir_run

HERE = Path(__file__).resolve().parent


def test_numba_cuda_jit_with_default_settings() -> None:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    # numba-cuda 0.30 needs a NumPy with np.row_stack (gone in 2.5).
    python = client_venv("numba-cuda[cu13]==0.30.4", "numba==0.68.1", "numpy==2.4.6")
    result = zmlir_run(python, HERE / "numba_kernels.py", timeout=900)
    assert result.stdout.split("\n") == ["add OK", "fma16 OK", "reverse OK", ""], result.stderr
    assert result.returncode == 0, result.stderr
