"""Threads of a block that wait for each other by polling shared memory on
the CPU backend (the fix-up `spirv-spin-waits`, SPIRVSpinWaits.cpp): the
waits themselves are test/cuda/programs/block_spin_waits.cu, run with the
other programs; here a block that can never get out of its wait fails its
launch instead of hanging the process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import PROGRAMS_DIR, tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

SOURCE = PROGRAMS_DIR.parent / "spin_deadlock.cu"


def test_a_deadlocked_block_fails_its_launch(tmp_path: Path) -> None:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    exe = tmp_path / "spin_deadlock"
    subprocess.run([tool("nvcc"), "-arch=sm_80", f"-I{PROGRAMS_DIR.parent}", str(SOURCE),
                    "-o", str(exe)], check=True, capture_output=True)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["deadlocked block: cudaErrorLaunchFailure", "PASS"]
    # The log names the kernel and says what its threads did.
    assert "kernel _Z12wait_foreverPii deadlocked" in result.stderr
