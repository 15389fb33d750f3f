#!/usr/bin/env python3
"""numba-cuda's own test suite under `zmlir run`, module by module.

  .venv/bin/python bench/numba_cuda.py --python /path/to/venv/bin/python
      [--modules test_atomics,test_reduction,...] [--timeout 900] [--jobs N]
      [--out bench/results/numba_cuda.md] [--json bench/results/numba_cuda.json]
      [--compare bench/results/h200/numba_cuda_nvidia.json] [--merge RESULTS.json]

  python3 bench/numba_cuda.py --real-driver --python python3 --json FILE
      The same modules on NVIDIA's driver (the H200; stdlib only), for the
      comparison column: --compare FILE adds it to the table, with each
      module's pass count as a share of the H200's.

The venv must have `numba-cuda[cu13]`, `pytest` and `filecheck` installed
(the suite ships in numba-cuda's wheel). The packages some modules import
or skip without (SUITE_PACKAGES: ml_dtypes, CuPy >= 14, NVIDIA's libcurand
and its headers, cffi) are installed into it from the package index where
missing, except with --real-driver (the H200 has no network). Each
module runs as `zmlir run -- PYTHON -m numba.runtests -v
numba.cuda.tests.cudapy.MODULE` (one of plain test functions, in
PYTEST_MODULES, under pytest) under `timeout`, with numba's default
settings; the table gives the tests run, passed, failed, errored and
skipped, and the first causes of the failures (the last line of each
traceback, most frequent first). A module that did not finish (timeout,
crash before the summary) counts the tests whose results were printed.
The process's exit status is listed but not counted: the tests' results
are what unittest printed. --merge FILE takes an earlier --json's results
and replaces only the modules run now (the table and --json keep all).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
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
    "test_cooperative_groups": "test_sync_at_matrix_row launches 32 blocks whatever "
    "max_cooperative_grid_blocks says (its unittest.skip is not raised): the CPU device holds "
    "one block per core, and a larger grid is refused (cuda.core's ValueError: \"The specified "
    "grid size (32 * 1 * 1) exceeds the limit (2)\", 2026-12-03). Kept so by decision: 2 is the "
    "device's real resident limit, and a GPU holding fewer than 32 such blocks fails the test "
    "the same way (docs/driver-differences.md, cooperative launches). Grid groups link "
    "NVIDIA's libcudadevrt.a as our PTX stand-in (runtime/cuda/devrt.py).",
    "test_caching": "the two CPU+CUDA shared-cache tests fail on the H200 too.",
    "test_ipc": "every test errors on the H200 too, before any driver call: numba-cuda "
                "0.30.4 reads `CUipcMemHandle.reserved`, which cuda-bindings 13 does not "
                "have (CUDA IPC itself runs on the CPU backend: test/runtime/test_ipc.py).",
    "cudadrv.test_linker": "NUM_REGS is a constant 32 (NVIDIA's comes from ptxas; the test "
    "wants more than 57 for an unbounded kernel).",
    "test_dispatcher": "test_launch_bounds_with_max_cluster_rank is skipped here, run on the "
    "H200: it needs compute capability 9.0 (clusters); we present 8.9. With numba told the "
    "device is 9.0 it passes here too (2026-12-03).",
    "cudadrv.test_cuda_driver": "test_device_arch_specific is skipped here (needs compute "
    "capability 9.0; we present 8.9); as a 9.0 device it would fail: its sm_90a "
    "`tensormap.replace` (a TMA descriptor's field) is not lowered.",
}
# What test modules import or skip without, beyond numba-cuda's own
# dependencies: ml_dtypes (test_bfloat16), CuPy >= 14 (test_cuda_array_interface,
# cudadrv.test_cuda_ndarray, test_datetime, test_cupy_bfloat16_interop),
# libcurand with curand_kernel.h (cupy.random; test_device_func), and cffi
# (test_inspect, test_cooperative_groups, cudadrv.test_cuda_driver import it).
SUITE_PACKAGES = {"ml_dtypes": "ml_dtypes", "cupy-cuda13x": "cupy-cuda13x==14.2.0",
                  "nvidia-curand": "nvidia-curand==10.4.5.25", "cffi": "cffi"}
# Modules of plain test functions, no TestCase: numba.runtests given one
# discovers numba's whole CPU suite instead (12695 tests where numba.tests
# is installed), so pytest runs them.
PYTEST_MODULES = {"test_matmul"}
PYTEST_RESULT = re.compile(r"^\S*::\w+ (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b", re.M)
PYTEST_SUMMARY = re.compile(r"^=+ .*\bin [\d.]+s\b.* =+$", re.M)
PYTEST_CAUSE = re.compile(r"^(?:FAILED|ERROR) \S* - (.{1,240})", re.M)
RESULT = re.compile(r"^(test\w*) \(([\w.]+)\)[^\n]*? \.\.\. (.*)$", re.M)
SUMMARY = re.compile(r"^Ran (\d+) tests? in ([\d.]+)s", re.M)
STARTED = re.compile(r"^(test\w*) \(([\w.]+)\)", re.M)  # a test's first line, verbose
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


def missing_packages(python: str) -> list[str]:
    """The SUITE_PACKAGES requirements `python`'s environment lacks."""
    probe = ("import importlib.metadata as m, sys\n"
             "for name in sys.argv[1:]:\n"
             "    try: m.version(name)\n"
             "    except m.PackageNotFoundError: print(name)\n")
    found = subprocess.run([python, "-c", probe, *SUITE_PACKAGES], capture_output=True,
                           text=True, check=True).stdout.split()
    return [SUITE_PACKAGES[name] for name in found]


def install_missing(python: str) -> None:
    missing = missing_packages(python)
    if missing:
        print(f"installing {' '.join(missing)} into {python}'s environment", flush=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        *missing], check=True)


def run_module(python: str, module: str, timeout: int,
               real_driver: bool = False) -> dict[str, object]:
    name = f"numba.cuda.tests.{module}" if "." in module else f"numba.cuda.tests.cudapy.{module}"
    zmlir_run = [] if real_driver else [sys.executable, "-m", "zmlir.cli", "run", "--"]
    if module in PYTEST_MODULES:
        return _run_pytest_module(module, name, ["timeout", str(timeout), *zmlir_run, python])
    command = ["timeout", str(timeout), *zmlir_run, python, "-m", "numba.runtests", "-v", name]
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
    ran = len(set(STARTED.findall(out)))
    if summary:  # unittest's own counts, once it finished
        # Python 3.12.1's "Ran N" leaves out some skipped tests (those of a
        # skip decorator): the tests it printed are the run.
        ran = max(ran, int(summary.group(1)))
        # "NO TESTS RAN (skipped=18)": every test skipped (test_fp8_bindings below 8.9).
        status = re.compile(r"^(OK|FAILED|NO TESTS RAN)(?: \((.*)\))?$",
                            re.M).search(out, summary.end())
        fields = dict(re.findall(r"([\w ]+)=(\d+)", status.group(2) or "")) if status else {}
        get = {k.strip(): int(v) for k, v in fields.items()}.get
        counts = collections.Counter(
            failed=get("failures", 0), errors=get("errors", 0),
            skipped=get("skipped", 0) + get("expected failures", 0))
        # Errors of a class set-up count tests unittest did not run: never below 0.
        counts["passed"] = max(0, ran - sum(counts.values()))
    causes = collections.Counter(_cause(body) for _kind, _test, _cls, body
                                 in ERROR_BLOCK.findall(out))
    finished = summary is not None
    if not finished and not causes:  # it crashed, or did not load: its last words
        causes[_cause(out[-4000:])] += 1
    return {
        "module": module, "ran": ran if summary else sum(counts.values()),
        "passed": counts["passed"], "failed": counts["failed"], "errors": counts["errors"],
        "skipped": counts["skipped"], "finished": finished, "rc": proc.returncode,
        "wall": wall, "causes": causes.most_common(4),
    }


def _run_pytest_module(module: str, name: str, runner: list[str]) -> dict[str, object]:
    """A module of plain test functions, run by pytest (PYTEST_MODULES)."""
    command = [*runner, "-m", "pytest", "-vv", "-rfE", "-p", "no:cacheprovider",
               "--import-mode=importlib", "--pyargs", name]
    start = time.perf_counter()
    # Not from ROOT: pytest would take our test/conftest.py for the suite's.
    proc = subprocess.run(command, capture_output=True, text=True, cwd="/")
    wall = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    verdicts = collections.Counter(PYTEST_RESULT.findall(out))
    finished = PYTEST_SUMMARY.search(out) is not None
    causes = collections.Counter(cause for cause in PYTEST_CAUSE.findall(out))
    if not finished and not causes:
        causes[_cause(out[-4000:])] += 1
    return {
        "module": module, "ran": sum(verdicts.values()), "passed": verdicts["PASSED"],
        "failed": verdicts["FAILED"], "errors": verdicts["ERROR"],
        "skipped": verdicts["SKIPPED"] + verdicts["XFAIL"], "finished": finished,
        "rc": proc.returncode, "wall": wall, "causes": causes.most_common(4),
    }


def _share(passed: int, reference: int | None) -> str:
    if reference is None:
        return "-"
    return f"{100 * passed / reference:.0f}%" if reference else "n/a"


def write_table(results: list[dict[str, object]], python: str, out: Path,
                nvidia: dict[str, dict[str, object]] | None = None) -> None:
    version = subprocess.run([python, "-c", "import importlib.metadata as m; "
                              "print(m.version('numba-cuda'))"],
                             capture_output=True, text=True).stdout.strip() or "?"
    h200 = ("The H200 column is the same modules on NVIDIA's driver (`--real-driver`), "
            "and share is our passed count over the H200's." if nvidia else
            "The H200 column (NVIDIA's driver) is not measured.")
    lines = [
        "# numba-cuda's test suite under `zmlir run` (CPU, OpenCL)",
        "",
        f"numba-cuda {version}, default settings; written by `bench/numba_cuda.py` "
        f"({time.strftime('%Y-%m-%d', time.gmtime())}). Passed counts tests unittest "
        f"reported ok; rc is the process's exit status. {h200}",
        "",
        "| module | ran | passed | failed | errors | skipped | finished | rc | wall s "
        "| H200 passed | share |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    nvidia = nvidia or {}
    for r in results:
        theirs = nvidia.get(str(r["module"]))
        reference = int(theirs["passed"]) if theirs else None  # type: ignore[call-overload]
        lines.append(f"| {r['module']} | {r['ran']} | {r['passed']} | {r['failed']} | "
                     f"{r['errors']} | {r['skipped']} | {'yes' if r['finished'] else 'no'} | "
                     f"{r['rc']} | {r['wall']:.0f} | "
                     f"{'-' if reference is None else reference} | "
                     f"{_share(int(r['passed']), reference)} |")  # type: ignore[call-overload]
    total = {k: sum(int(r[k]) for r in results)  # type: ignore[call-overload]
             for k in ("ran", "passed", "failed", "errors", "skipped")}
    compared = [r for r in results if str(r["module"]) in nvidia]
    theirs_total = (sum(int(nvidia[str(r["module"])]["passed"])  # type: ignore[call-overload]
                        for r in compared) if compared else None)
    ours_compared = sum(int(r["passed"]) for r in compared)  # type: ignore[call-overload]
    lines.append(f"| **total** | {total['ran']} | {total['passed']} | {total['failed']} | "
                 f"{total['errors']} | {total['skipped']} | | | | "
                 f"{'-' if theirs_total is None else theirs_total} | "
                 f"{_share(ours_compared, theirs_total)} |")
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
              if any(r["module"] == module and not _passed_all(r, nvidia) for r in results)]
    out.write_text("\n".join(lines) + "\n")


def _passed_all(result: dict[str, object], nvidia: dict[str, dict[str, object]]) -> bool:
    """Finished with no failure or error, and no fewer passed than on the H200."""
    theirs = nvidia.get(str(result["module"]))
    behind = theirs is not None and int(result["passed"]) < int(theirs["passed"])  # type: ignore[call-overload]
    return bool(result["finished"]) and not result["failed"] and not result["errors"] and not behind


def all_modules(python: str) -> list[str]:
    """Every module of the suite's cudapy and cudadrv packages ("cudadrv.test_x")."""
    found = subprocess.run([python, "-c", "import numba.cuda.tests as t, os; "
                            "print(os.path.dirname(t.__file__))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    modules = []
    for package in ("cudapy", "cudadrv"):
        for path in sorted((Path(found) / package).glob("test_*.py")):
            modules.append(path.stem if package == "cudapy" else f"{package}.{path.stem}")
    return modules


def merged(earlier: list[dict[str, object]],
           now: list[dict[str, object]]) -> list[dict[str, object]]:
    """`earlier`'s results in their order, each module run now replaced;
    modules new to it after them."""
    fresh = {r["module"]: r for r in now}
    kept = [fresh.pop(r["module"], r) for r in earlier]
    return kept + [r for r in now if r["module"] in fresh]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="the venv's python with numba-cuda")
    parser.add_argument("--modules", default=",".join(DEFAULT_MODULES),
                        help="test modules of numba.cuda.tests.cudapy (or package.module), "
                        "or 'all'")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per module")
    parser.add_argument("--jobs", type=int, default=1, help="modules run at once")
    parser.add_argument("--real-driver", action="store_true",
                        help="NVIDIA's driver, not zmlir run (writes --json only)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/numba_cuda.md")
    parser.add_argument("--json", type=Path, default=None, help="the results, per module")
    parser.add_argument("--compare", type=Path, default=None,
                        help="a --real-driver --json file: the H200 column")
    parser.add_argument("--merge", type=Path, default=None,
                        help="an earlier --json file: its results, the modules run now replaced")
    args = parser.parse_args()
    nvidia = ({r["module"]: r for r in json.loads(args.compare.read_text())}
              if args.compare else None)

    def one(module: str) -> dict[str, object]:
        result = run_module(args.python, module, args.timeout, args.real_driver)
        print(f"{module}: {result['passed']}/{result['ran']} passed, {result['failed']} failed, "
              f"{result['errors']} errors, {result['skipped']} skipped "
              f"({result['wall']:.0f} s, rc {result['rc']})", flush=True)
        return result

    if args.real_driver:
        for requirement in missing_packages(args.python):
            print(f"warning: {requirement} is not installed: modules that need it "
                  "skip or fail", flush=True)
    else:
        install_missing(args.python)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        modules = (all_modules(args.python) if args.modules == "all"
                   else args.modules.split(","))
        results = list(pool.map(one, modules))
    if args.merge:
        results = merged(json.loads(args.merge.read_text()), results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    if not args.real_driver:
        write_table(results, args.python, args.out, nvidia)
    return 0


if __name__ == "__main__":
    sys.exit(main())
