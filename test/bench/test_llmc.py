"""bench/llmc.py's runner: a program's match line counts when it is printed."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.llmc import run_until_match

# Writes as a C program's printf does: stdio's buffering, chosen by whether
# the output is a terminal (line by line) or not (4 KiB blocks), never flushed.
PRINTS_THEN_BENCHMARKS = """
import time
out = open(1, "w", closefd=False)
out.write("Using kernel 1\\nAll results match. Starting benchmarks.\\n")
time.sleep(60)
"""


def test_match_line_is_seen_before_the_program_ends(tmp_path: Path) -> None:
    # llm.c's programs print the match line, then benchmark for minutes on a
    # CPU: through a pipe the line stayed in the program's buffer and the run
    # timed out with no output at all.
    row = run_until_match([sys.executable, "-c", PRINTS_THEN_BENCHMARKS], tmp_path, 30)
    assert row["result"] == "PASS", row
    assert float(row["seconds"]) < 30


def test_failure_names_its_first_cause(tmp_path: Path) -> None:
    failing = 'print("Mismatch of out at 7: CPU_ref: 1.0 vs GPU: 2.0"); raise SystemExit(1)'
    row = run_until_match([sys.executable, "-c", failing], tmp_path, 30)
    assert row["result"] == "FAIL"
    assert row["cause"] == "Mismatch of out at 7: CPU_ref: 1.0 vs GPU: 2.0"


def test_silent_program_times_out(tmp_path: Path) -> None:
    row = run_until_match([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path, 2)
    assert row["result"] == "TIMEOUT"
    assert float(row["seconds"]) < 10
