"""Device memory in whole granules, as NVIDIA's driver hands it out: a kernel
that writes a little past small allocations' ends (numba's own
test_dispatcher_cpointer_arguments does) corrupts nothing of the host's
heap (before: `malloc(): unaligned tcache chunk detected`, an abort)."""

from __future__ import annotations

import subprocess
import sys

from support import CUDA_DIR


def test_writes_past_a_small_allocation_stay_in_its_granule() -> None:
    script = CUDA_DIR / "python" / "overrun_small_allocations.py"
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", sys.executable,
                             str(script)], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.strip()) == (0, "PASS"), result.stderr
