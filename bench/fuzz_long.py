#!/usr/bin/env python3
"""The long fuzzing run: test/frontend/test_fuzz.py's check on many more inputs.

`.venv/bin/python bench/fuzz_long.py [--count 100000] [--seed N]` mutates
corpus PTX, runs each input through `zmlir compile --emit=ptx-mlir` in this
process and counts how each run ended. Misbehaving inputs (tracebacks,
internal errors, bad diagnostics, leftovers, hangs) are saved to
build/fuzz/ with their stderr; a summary goes to stdout and
bench/results/fuzz.json.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test"))
sys.path.insert(0, str(REPO / "test" / "frontend"))
sys.path.insert(0, str(REPO))

from test_fuzz import fuzz, seeds  # noqa: E402


def _kind(stderr: str) -> str:
    """A diagnostic's message with names and numbers blanked, to group them."""
    message = stderr.split(": error: ", 1)[-1].strip()
    message = re.sub(r"'[^']*'", "'…'", message)
    return re.sub(r"\d+", "N", message)[:80]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    out_dir = REPO / "build" / "fuzz"
    out_dir.mkdir(parents=True, exist_ok=True)
    texts = seeds()
    counts: collections.Counter[str] = collections.Counter()
    messages: collections.Counter[str] = collections.Counter()
    problems: collections.Counter[str] = collections.Counter()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for n, (text, outcome) in enumerate(fuzz(args.count, args.seed, Path(tmp), texts), 1):
            if outcome.problem is None:
                counts["accepted" if outcome.code == 0 else "rejected"] += 1
                if outcome.code == 1:
                    messages[_kind(outcome.stderr)] += 1
            else:
                counts["problem"] += 1
                key = f"{outcome.problem} | {_kind(outcome.stderr)}"
                problems[key] += 1
                if problems[key] <= 3:  # a few reproducers of each kind
                    stem = out_dir / f"problem-{counts['problem']:05d}"
                    stem.with_suffix(".ptx").write_text(text, errors="surrogateescape")
                    stem.with_suffix(".txt").write_text(f"{outcome.problem}\n{outcome.stderr}")
            if n % 10_000 == 0:
                print(f"{n} inputs, {time.perf_counter() - t0:.0f} s: {dict(counts)}", flush=True)
    seconds = time.perf_counter() - t0
    summary = {
        "inputs": args.count,
        "seed": args.seed,
        "seconds": round(seconds, 1),
        "counts": dict(counts),
        "problems": dict(problems.most_common()),
        "top_rejections": dict(messages.most_common(25)),
    }
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    results = REPO / "bench" / "results" / "fuzz.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
