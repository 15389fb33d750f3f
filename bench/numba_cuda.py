#!/usr/bin/env python3
"""numba-cuda's own test suite under `zmlir run`, module by module.

  .venv/bin/python bench/numba_cuda.py --python /path/to/venv/bin/python
      [--modules test_atomics,test_reduction,...] [--timeout 900]
      [--out bench/results/numba_cuda.md]

The venv must have `numba-cuda[cu13]`, `pytest` and `filecheck` installed
(the suite ships in numba-cuda's wheel; nothing is fetched here). Each
module runs as `zmlir run -- PYTHON -m numba.runtests -v
numba.cuda.tests.cudapy.MODULE` under `timeout`, with numba's default
settings; the table gives the tests run, passed, failed, errored and
skipped, and the first causes of the failures (the last line of each
traceback, most frequent first). A module that did not finish (timeout,
crash before the summary) counts the tests whose results were printed.
The process's exit status is listed but not counted: the tests' results
are what unittest printed.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODULES = (
    "test_atomics", "test_reduction", "test_sm", "test_localmem", "test_warp_ops",
    "test_intrinsics", "test_math", "test_laplace", "test_blackscholes", "test_device_func",
    "test_array", "test_fastmath", "test_idiv", "test_print", "test_exception",
    "test_random", "test_vectorize", "test_gufunc", "test_complex", "test_casting",
    "test_record_dtype", "test_dispatcher", "test_cooperative_groups",
)
KNOWN = {
    "test_cooperative_groups": "grid groups (`cg.this_grid().sync()`) link NVIDIA's "
    "libcudadevrt.a, machine code only: unsupported, said so at link time (a grid-wide barrier "
    "also needs every block resident at once, which the CPU runtime does not promise).",
    "test_print": "`print()` of a string: numba passes the string's address with "
    "`cvta.const`, and .const variables have no generic address off NVPTX (Memory.cpp's "
    "CvtaOpLowering): `unsupported 'cvta' for state space 'const'`.",
    "test_dispatcher": "kernel properties: cuFuncGetAttribute's CONST_SIZE_BYTES and "
    "LOCAL_SIZE_BYTES answer 0 (4 tests), and a launch over `.maxntid` (numba's "
    "launch_bounds) is not refused with CUDA_ERROR_INVALID_VALUE (3 tests).",
}
RESULT = re.compile(r"^(test\w*) \(([\w.]+)\)[^\n]*? \.\.\. (.*)$", re.M)
SUMMARY = re.compile(r"^Ran (\d+) tests? in ([\d.]+)s", re.M)
ERROR_BLOCK = re.compile(r"^(ERROR|FAIL): (\w+) \(([\w.]+)\)[^\n]*\n-+\n(.*?)(?=^=+$|^-+\nRan )",
                         re.M | re.S)


def _cause(traceback: str) -> str:
    lines = [line.strip() for line in traceback.strip().splitlines() if line.strip()]
    # The exception's line: the last one that is not a source line or a frame.
    for k in range(len(lines) - 1, -1, -1):
        line = lines[k]
        if line.startswith("nvJitLink error log:") and k > 0:
            return f"{lines[k - 1]} {line}"[:300]  # the linker's own words
        if re.match(r"^[\w.]+(Error|Exception|Failure|Warning)\b|^[\w.]+: ", line):
            return line[:240]
    return (lines[-1] if lines else "?")[:200]


def run_module(python: str, module: str, timeout: int) -> dict[str, object]:
    name = f"numba.cuda.tests.cudapy.{module}"
    command = ["timeout", str(timeout), sys.executable, "-m", "zmlir.cli", "run", "--",
               python, "-m", "numba.runtests", "-v", name]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    counts = collections.Counter()
    for _test, _cls, verdict in RESULT.findall(out):
        if verdict.startswith("ok"):
            counts["passed"] += 1
        elif verdict.startswith("skipped") or verdict.startswith("expected failure"):
            counts["skipped"] += 1
        elif verdict.startswith("FAIL"):
            counts["failed"] += 1
        elif verdict.startswith("ERROR"):
            counts["errors"] += 1
        else:
            counts["other"] += 1
    summary = SUMMARY.search(out)
    if summary:  # unittest's own counts, once it finished
        status = re.compile(r"^(OK|FAILED)(?: \((.*)\))?$", re.M).search(out, summary.end())
        fields = dict(re.findall(r"([\w ]+)=(\d+)", status.group(2) or "")) if status else {}
        get = {k.strip(): int(v) for k, v in fields.items()}.get
        counts = collections.Counter(
            failed=get("failures", 0), errors=get("errors", 0),
            skipped=get("skipped", 0) + get("expected failures", 0))
        counts["passed"] = int(summary.group(1)) - sum(counts.values())
    causes = collections.Counter(_cause(body) for _kind, _test, _cls, body
                                 in ERROR_BLOCK.findall(out))
    finished = summary is not None
    if not finished and not causes:  # it crashed, or did not load: its last words
        causes[_cause(out[-4000:])] += 1
    return {
        "module": module, "ran": int(summary.group(1)) if summary else sum(counts.values()),
        "passed": counts["passed"], "failed": counts["failed"], "errors": counts["errors"],
        "skipped": counts["skipped"], "finished": finished, "rc": proc.returncode,
        "wall": wall, "causes": causes.most_common(4),
    }


def write_table(results: list[dict[str, object]], python: str, out: Path) -> None:
    version = subprocess.run([python, "-c", "import importlib.metadata as m; "
                              "print(m.version('numba-cuda'))"],
                             capture_output=True, text=True).stdout.strip() or "?"
    lines = [
        "# numba-cuda's test suite under `zmlir run` (CPU, OpenCL)",
        "",
        f"numba-cuda {version}, default settings; written by `bench/numba_cuda.py` "
        f"({time.strftime('%Y-%m-%d', time.gmtime())}). Passed counts tests unittest "
        "reported ok; rc is the process's exit status. The H200 column (NVIDIA's driver) "
        "is not measured yet.",
        "",
        "| module | ran | passed | failed | errors | skipped | finished | rc | wall s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| {r['module']} | {r['ran']} | {r['passed']} | {r['failed']} | "
                     f"{r['errors']} | {r['skipped']} | {'yes' if r['finished'] else 'no'} | "
                     f"{r['rc']} | {r['wall']:.0f} |")
    total = {k: sum(int(r[k]) for r in results)  # type: ignore[call-overload]
             for k in ("ran", "passed", "failed", "errors", "skipped")}
    lines.append(f"| **total** | {total['ran']} | {total['passed']} | {total['failed']} | "
                 f"{total['errors']} | {total['skipped']} | | | |")
    lines += ["", "## First causes of failures", ""]
    for r in results:
        causes = r["causes"]
        if not causes:
            continue
        lines.append(f"- **{r['module']}**:")
        for cause, n in causes:  # type: ignore[attr-defined]
            lines.append(f"  - {n} x `{cause}`")
    lines += ["", "## Known causes (classified by hand; re-check when the counts change)", ""]
    lines += [f"- **{module}**: {why}" for module, why in KNOWN.items()
              if any(r["module"] == module and not _passed_all(r) for r in results)]
    out.write_text("\n".join(lines) + "\n")


def _passed_all(result: dict[str, object]) -> bool:
    return bool(result["finished"]) and not result["failed"] and not result["errors"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="the venv's python with numba-cuda")
    parser.add_argument("--modules", default=",".join(DEFAULT_MODULES))
    parser.add_argument("--timeout", type=int, default=900, help="seconds per module")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/numba_cuda.md")
    args = parser.parse_args()
    results = []
    for module in args.modules.split(","):
        result = run_module(args.python, module, args.timeout)
        print(f"{module}: {result['passed']}/{result['ran']} passed, {result['failed']} failed, "
              f"{result['errors']} errors, {result['skipped']} skipped "
              f"({result['wall']:.0f} s, rc {result['rc']})", flush=True)
        results.append(result)
        write_table(results, args.python, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
