"""Builds CUTLASS's CuTe tutorials (examples/cute/tutorial) with nvcc and runs
them on zmlir, each GEMM checked against the host.

CUTLASS is not ours and is never committed: pass the path of a checkout
(https://github.com/NVIDIA/cutlass). The GEMM tutorials only time their
kernel; the build appends a check of its own to a copy of each (C against
a double-precision host product, after the timed runs), so a run says PASS
or FAIL. tiled_copy and tiled_copy_if check themselves.

  .venv/bin/python bench/cute_tutorials.py CHECKOUT OUT [--arch sm_80]
      [--backend opencl] [--revision COMMIT] [--results bench/results/cute_tutorials.md]

Each tutorial is built into OUT, then run under `zmlir run` (--backend
native: on NVIDIA's driver, without zmlir) with small problems (the
defaults are 5120 x 5120 x 4096, minutes a GEMM on a CPU), transposes NT
and TN where the tutorial takes both (sgemm_sm80's f16 GEMM has TN only).
Writes a Markdown table and a JSON file beside it; exit status 1 if any run
failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# tutorial -> the argument lists it runs with (m n k transA transB).
RUNS: dict[str, list[list[str]]] = {
    "sgemm_1": [["256", "256", "64", "N", "T"], ["256", "256", "64", "T", "N"]],
    "sgemm_2": [["256", "256", "64", "N", "T"], ["256", "256", "64", "T", "N"]],
    "sgemm_sm70": [["256", "256", "64", "N", "T"], ["256", "256", "64", "T", "N"]],
    "sgemm_sm80": [["256", "256", "64", "T", "N"]],
    "tiled_copy": [[]],
    "tiled_copy_if": [[]],
}

TIMING_LINE = ('  printf("CUTE_GEMM:     [%6.1f]GFlop/s  (%6.4f)ms\\n", gflops / cute_time, '
               'cute_time*1000);\n')
# Appended after the timing line: the element-wise error of C against the
# host's product (A is m x k, B n x k, C m x n column-major; T: row-major).
CHECK = r"""  {
    thrust::host_vector<TC> got = d_C;
    double worst = 0; int bad = 0;
    bool f16 = sizeof(TC) == 2;
    for (int i = 0; i < m; ++i) for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int kk = 0; kk < k; ++kk) {
        double a = transA == 'T' ? double(h_A[i * ldA + kk]) : double(h_A[i + kk * ldA]);
        double b = transB == 'N' ? double(h_B[j * ldB + kk]) : double(h_B[j + kk * ldB]);
        want += a * b;
      }
      double err = fabs(double(got[i + j * ldC]) - want);
      worst = err > worst ? err : worst;
      bad += err > (f16 ? 0.02 + 0.01 * fabs(want) : 1e-3 + 1e-4 * fabs(want));
    }
    printf("CHECK: max abs err %g, %d of %d outside tolerance: %s\n", worst, bad, m * n,
           bad ? "FAIL" : "PASS");
  }
"""


def nvcc() -> str:
    return shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def build(checkout: Path, out: Path, arch: str) -> dict[str, str]:
    """Each tutorial's executable in `out`; the errors of those that did not build."""
    out.mkdir(parents=True, exist_ok=True)
    tutorial = checkout / "examples/cute/tutorial"
    errors = {}
    for name in RUNS:
        source = (tutorial / f"{name}.cu").read_text()
        if name.startswith("sgemm"):
            if TIMING_LINE not in source:
                errors[name] = "its timing line moved: no place for the check"
                continue
            source = source.replace(TIMING_LINE, TIMING_LINE + CHECK)
        copy = out / f"{name}.cu"
        copy.write_text(source)
        result = subprocess.run(
            [nvcc(), "-std=c++17", "-O3", f"-arch={arch}", "--expt-relaxed-constexpr",
             "-I", str(checkout / "include"), "-I", str(checkout / "tools/util/include"),
             "-I", str(tutorial), str(copy), "-o", str(out / name)],
            capture_output=True, text=True)
        if result.returncode:
            errors[name] = (result.stderr.strip().splitlines() or ["nvcc failed"])[-1]
    return errors


def run_one(exe: Path, args: list[str], backend: str, timeout: int) -> dict[str, object]:
    command = ([str(exe), *args] if backend == "native" else
               [sys.executable, "-m", "zmlir.cli", "run", "--", str(exe), *args])
    env = None if backend == "native" else {**os.environ, "ZMLIR_BACKEND": backend}
    start = time.perf_counter()
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                cwd=REPO, env=env)
    except subprocess.TimeoutExpired:
        return {"result": "TIMEOUT", "seconds": timeout, "cause": f"over {timeout} s"}
    seconds = round(time.perf_counter() - start, 1)
    output = result.stdout + result.stderr
    checks = re.findall(r"CHECK: .*: (PASS|FAIL)", output)
    ms = re.search(r"\(\s*([0-9.]+)\)ms", output)
    passed = result.returncode == 0 and "FAIL" not in checks and (
        bool(checks) or "Success." in output)
    lines = [line for line in output.splitlines() if line.strip()]
    cause = "" if passed else next(
        (line for line in lines if "error" in line.lower() or "FAIL" in line), lines[-1:] or "")
    return {"result": "PASS" if passed else "FAIL", "seconds": seconds,
            "gemm_ms": float(ms.group(1)) if ms else None, "cause": str(cause)[:200]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--backend", default="opencl")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--revision", help="CUTLASS's commit, where CHECKOUT is no git checkout")
    parser.add_argument("--results", type=Path,
                        default=REPO / "bench/results/cute_tutorials.md")
    options = parser.parse_args(argv)
    errors = build(options.checkout, options.out, options.arch)
    commit = subprocess.run(["git", "-C", str(options.checkout), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or options.revision
    rows = []
    for name, arg_lists in RUNS.items():
        for args in arg_lists:
            row = {"tutorial": name, "args": " ".join(args)}
            if name in errors:
                row.update(result="BUILD", cause=errors[name])
            else:
                row.update(run_one(options.out / name, args, options.backend, options.timeout))
            print(f"{name} {row['args']}: {row['result']} {row.get('cause', '')}", flush=True)
            rows.append(row)
    lines = [
        "# CuTe's tutorials on zmlir (bench/cute_tutorials.py)", "",
        f"CUTLASS {commit}, built `nvcc -arch={options.arch}`, run with backend "
        f"`{options.backend}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
        "The GEMMs are checked against the host (a check the bench appends to each "
        "tutorial's copy); seconds are the whole run's, with the JIT cache as the run "
        "found it.", "",
        "| tutorial | m n k A B | result | GEMM ms | run s | first cause |",
        "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['tutorial']} | {row['args']} | {row['result']} | "
                     f"{row.get('gemm_ms') or ''} | {row.get('seconds', '')} | "
                     f"{row.get('cause', '')} |")
    options.results.write_text("\n".join(lines) + "\n")
    options.results.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(row["result"] == "PASS" for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
