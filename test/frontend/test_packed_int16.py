"""add/sub/min/max{.relu} on .u16x2/.s16x2, lane by lane (CCCL's reductions
use them: CuPy's CUB module did not compile, `unsupported instruction
'min.s16x2'`), run on the CPU and checked against numpy, edge lanes included."""

from __future__ import annotations

import subprocess
import sys

from support import CUDA_DIR


def test_packed_16_bit_integer_lanes() -> None:
    script = CUDA_DIR / "python" / "packed_int16_simd.py"
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", sys.executable,
                             str(script)], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.strip()) == (0, "PASS"), result.stderr
