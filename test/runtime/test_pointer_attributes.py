"""cuPointerGetAttributes, cudart's cudaPointerGetAttributes (CuPy's first
cupy.asarray asks it whether the host array is page-locked; before, it was
CUDA_ERROR_NOT_SUPPORTED and asarray raised)."""

from __future__ import annotations

import subprocess
import sys

from support import CUDA_DIR


def test_pointer_attributes_of_device_host_and_unknown_memory() -> None:
    script = CUDA_DIR / "python" / "pointer_attributes.py"
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", sys.executable,
                             str(script)], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.strip()) == (0, "PASS"), result.stderr


def test_mapped_host_memory_is_a_device_pointer() -> None:
    script = CUDA_DIR / "python" / "mapped_host_memory.py"
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", sys.executable,
                             str(script)], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.strip()) == (0, "PASS"), result.stderr
