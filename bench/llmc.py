"""Builds llm.c's dev/cuda kernels with nvcc and runs them on zmlir.

llm.c is not ours and is never committed: pass the path of a checkout
(https://github.com/karpathy/llm.c). Nothing is fetched.

  python bench/llmc.py CHECKOUT OUT --cuda-libs DIR [--arch sm_80] [--timeout 600]
      [--only a,b] [--results bench/results/llmc.md]

Each dev/cuda/*.cu whose kernels need no library call (cuBLAS, cuDNN,
NCCL, MPI) is built as llm.c's Makefile builds it (`-O3 --use_fast_math
-std=c++17`) and run under `zmlir run` with its default arguments. llm.c's
common.h sets cuBLAS up in every program (cublasCreate, cublasLtCreate,
cublasSetMathMode) though these never call it: they link a stand-in
libcublas built here that answers those three and nothing else (the real
one loads hundreds of kernels at cublasCreate; cuBLAS itself is the math
libraries' issue). --cuda-libs names a folder with the nvidia-cublas
wheel's include/ (its headers). Each program
checks every kernel variant against its CPU reference and prints "All
results match." before it benchmarks them; a program passes once it has
printed that (the benchmark, minutes of repetitions on a CPU, is stopped
there); TIMEOUT: it had not within --timeout seconds (llm.c's default
sizes, e.g. 8 x 1024 x 50257 logits, are minutes of work for a CPU). The
table gives the result and the first cause of a failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

MATCH = "All results match"
# Library calls beyond cudart: a program making one is out of scope here.
LIBRARY_CALL = re.compile(r"\b(cublas(?!Check\b)\w*|cudnn\w*|nccl\w*|MPI_\w+)\s*\(")


def needs_library(source: Path) -> str | None:
    calls = sorted({m.group(1) for m in LIBRARY_CALL.finditer(source.read_text())})
    return calls[0] if calls else None


CUBLAS_STAND_IN = r"""
/* The cuBLAS set-up llm.c's common.h makes; any other call is not here. */
static int handle;
int cublasCreate_v2(void **h) { *h = &handle; return 0; }
int cublasLtCreate(void **h) { *h = &handle; return 0; }
int cublasSetMathMode(void *h, int mode) { (void)h; (void)mode; return 0; }
"""


def build_stand_in(out: Path) -> Path:
    folder = out / "cublas-stand-in"
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "cublas.c"
    source.write_text(CUBLAS_STAND_IN)
    for name in ("cublas", "cublasLt"):
        library = folder / f"lib{name}.so.13"
        subprocess.run(["cc", "-shared", "-fPIC", f"-Wl,-soname,{library.name}", str(source),
                        "-o", str(library)], check=True)
        link = folder / f"lib{name}.so"
        link.unlink(missing_ok=True)
        link.symlink_to(library.name)
    return folder


def build(source: Path, out: Path, arch: str, headers: Path, stand_in: Path) -> str | None:
    exe = out / source.stem
    command = ["nvcc", "-O3", "--use_fast_math", "-std=c++17", f"-arch={arch}",
               f"-I{headers}", str(source), "-o", str(exe),
               f"-L{stand_in}", "-lcublas", "-lcublasLt"]
    done = subprocess.run(command, capture_output=True, text=True)
    return None if done.returncode == 0 else done.stderr.strip().splitlines()[-1][:200]


def run(exe: Path, stand_in: Path, timeout: int) -> dict[str, object]:
    env = dict(os.environ, LD_LIBRARY_PATH=str(stand_in))
    command = [sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)]
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env, cwd=exe.parent, start_new_session=True)
    lines: list[str] = []
    result = "FAIL"
    timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, 9))
    timer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip())
            if MATCH in line:
                result = "PASS"
                break
    finally:
        timed_out = not timer.is_alive() and result != "PASS"
        timer.cancel()
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        proc.wait()
    if timed_out:
        result = "TIMEOUT"
    if result == "FAIL" and proc.returncode and proc.returncode < 0:
        result = "CRASH"
    cause = "" if result == "PASS" else _first_cause(lines, proc.returncode)
    return {"result": result, "seconds": round(time.perf_counter() - start, 1), "cause": cause}


def _first_cause(lines: list[str], returncode: int | None) -> str:
    for line in lines:
        if re.search(r"(?i)mismatch|error|failed|unsupported|zmlir:", line):
            return line.strip()[:240]
    return f"exit status {returncode}, last output: {lines[-1][:200] if lines else '(none)'}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--cuda-libs", type=Path, required=True,
                        help="a folder with cuBLAS's include/ (the nvidia-cublas wheel's)")
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--timeout", type=int, default=600, help="seconds to the match line")
    parser.add_argument("--only", default="")
    parser.add_argument("--results", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "llmc.md")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    stand_in = build_stand_in(args.out)
    rows: list[dict[str, object]] = []
    for source in sorted((args.checkout / "dev" / "cuda").glob("*.cu")):
        if only and source.stem not in only:
            continue
        row: dict[str, object] = {"program": source.stem}
        library = needs_library(source)
        if library:
            row.update(result="SKIP", seconds=0, cause=f"calls {library}")
        elif (error := build(source, args.out, args.arch, args.cuda_libs / "include",
                             stand_in)) is not None:
            row.update(result="BUILD", seconds=0, cause=error)
        else:
            row.update(run(args.out / source.stem, stand_in, args.timeout))
        print(f"{row['program']:32s} {row['result']:6s} {row['seconds']:>7}s  {row['cause']}",
              flush=True)
        rows.append(row)
        write(rows, args)  # after each program: a long run's table so far
    return 0 if all(r["result"] in ("PASS", "SKIP") for r in rows) else 1


def write(rows: list[dict[str, object]], args: argparse.Namespace) -> None:
    counts: dict[str, int] = {}
    for r in rows:
        counts[str(r["result"])] = counts.get(str(r["result"]), 0) + 1
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    lines = ["# llm.c's dev/cuda kernels on zmlir (CPU, OpenCL)", "",
             f"Written by `bench/llmc.py` ({time.strftime('%Y-%m-%d', time.gmtime())}), "
             f"built with `nvcc -arch={args.arch}`. PASS: the program printed \"{MATCH}\" "
             "(every kernel variant against its CPU reference); SKIP: it calls a library "
             f"beyond cudart. {summary}.", "",
             "| program | result | seconds | first cause |", "|---|---|---|---|"]
    lines += [f"| {r['program']} | {r['result']} | {r['seconds']} | {r['cause']} |" for r in rows]
    args.results.write_text("\n".join(lines) + "\n")
    args.results.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
