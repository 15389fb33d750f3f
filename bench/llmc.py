"""Builds llm.c's dev/cuda kernels with nvcc and runs them on zmlir.

llm.c is not ours and is never committed: pass the path of a checkout
(https://github.com/karpathy/llm.c). Nothing is fetched.

  python bench/llmc.py CHECKOUT OUT [--cuda-libs DIR] [--arch sm_80] [--timeout 600]
      [--only a,b] [--args NAME=ARGS ...] [--results bench/results/llmc.md]

Each dev/cuda/*.cu that calls no library but cuBLAS/cuBLASLt (cuDNN, NCCL,
MPI are out of scope) is built as llm.c's Makefile builds it (`-O3
--use_fast_math -std=c++17`, `-lcublas -lcublasLt`) against NVIDIA's cuBLAS
headers (--cuda-libs: a folder with the nvidia-cublas wheel's include/; by
default the wheel zmlir's environment has) and run under `zmlir run`, which
loads our libcublas (zmlir/libraries/) in place of NVIDIA's; with OpenMP
where llm.c's Makefile builds it so (its CPU reference then runs on every
core). A program runs with its default arguments, or with each argument list
RUNS gives it (the kernels that call cuBLAS, where the default is a kernel of
llm.c's own; a kernel in place of a default too slow for a CPU); --args
NAME=ARGS runs NAME with ARGS instead, once per --args.
Each program checks every kernel variant against its CPU reference and
prints "All results match." before it benchmarks them; a program passes once
it has printed that (the benchmark, minutes of repetitions on a CPU, is
stopped there; the program's output is a terminal, so that stdio writes the
line when it is printed); TIMEOUT: it had not within --timeout seconds
(llm.c's default sizes, e.g. 8 x 1024 x 50257 logits, are minutes of work
for a CPU). The table gives the result and the first cause of a failure.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import subprocess
import sys
import time
import tty
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.results_table import write_results

MATCH = "All results match"
# Library calls beyond cudart and cuBLAS: a program making one is out of scope here.
LIBRARY_CALL = re.compile(r"\b(cudnn\w*|nccl\w*|MPI_\w+)\s*\(")
# The argument lists a program runs with instead of its defaults alone (its first
# argument is the kernel it checks).
RUNS: dict[str, list[list[str]]] = {
    # 1 (the default): llm.c's naive kernel; 2: cublasSgemm; 3: cublasLtMatmul with
    # a bias epilogue.
    "matmul_forward": [[], ["2"], ["3"]],
    # 1 (the default): llm.c's naive kernel; 0: cublasSgemmStridedBatched.
    "trimat_forward": [[], ["0"]],
    # The default, 1, repeats the whole softmax backward (B*NH*T^3/3 steps) in each of
    # its B*NH block rows: 8e11 steps, an hour on 2 cores. 7 computes the same in
    # O(T^2) per row; both around cublasSgemmStridedBatched.
    "attention_backward": [["7"]],
    # 1 (the default): llm.c's naive kernels; 3 and 4: cublasSgemmStridedBatched around
    # its softmax kernels; 5: cublasGemmStridedBatchedEx in floatX.
    "attention_forward": [[], ["3"], ["4"], ["5"]],
}


def needs_library(source: Path) -> str | None:
    text = without_optional_features(source.read_text())
    calls = sorted({m.group(1) for m in LIBRARY_CALL.finditer(text)})
    return calls[0] if calls else None


def without_optional_features(text: str) -> str:
    """The source as built without -DENABLE_*: the lines inside `#ifdef ENABLE_X`
    (up to its #else or #endif) dropped. attention_forward calls cuDNN only so
    (`-DENABLE_CUDNN`); built as it comes, it needs cuBLAS alone."""
    kept: list[str] = []
    # One entry per open #if: whether its lines are dropped.
    dropped: list[bool] = []
    for line in text.splitlines():
        directive = line.strip()
        if re.match(r"#\s*if", directive):
            dropped.append(bool(re.match(r"#\s*ifdef\s+ENABLE_\w+", directive)))
            continue
        if re.match(r"#\s*(else|elif)", directive) and dropped:
            dropped[-1] = False
            continue
        if re.match(r"#\s*endif", directive) and dropped:
            dropped.pop()
            continue
        if not any(dropped):
            kept.append(line)
    return "\n".join(kept)


def our_libdir() -> Path:
    """Our libcuda.so.1's folder, where our libcublas.so.13 and libcublasLt.so.13 are."""
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], check=True,
                         capture_output=True, text=True)
    return Path(out.stdout.strip())


def openmp(source: Path) -> list[str]:
    """-Xcompiler -fopenmp where llm.c's dev/cuda/Makefile builds the program with it."""
    makefile = source.parent / "Makefile"
    rule = re.search(rf"^{re.escape(source.stem)}:.*\n\t(.*)$",
                     makefile.read_text() if makefile.exists() else "", re.M)
    return ["-Xcompiler", "-fopenmp"] if rule and "-fopenmp" in rule.group(1) else []


def nvcc_flags(source: Path) -> list[str]:
    """nvcc's options for `source` as llm.c's Makefile compiles it (what
    bench/jit_speed.py builds its PTX with, too)."""
    return ["-O3", "--use_fast_math", "-std=c++17", *openmp(source)]


def build(source: Path, out: Path, arch: str, headers: Path, libdir: Path) -> str | None:
    exe = out / source.stem
    command = ["nvcc", *nvcc_flags(source), f"-arch={arch}",
               f"-I{headers}", str(source), "-o", str(exe),
               f"-L{libdir}", "-lcublas", "-lcublasLt"]
    done = subprocess.run(command, capture_output=True, text=True)
    return None if done.returncode == 0 else done.stderr.strip().splitlines()[-1][:200]


def run(exe: Path, arguments: list[str], timeout: int) -> dict[str, object]:
    command = [sys.executable, "-m", "zmlir.cli", "run", "--", str(exe), *arguments]
    return run_until_match(command, exe.parent, timeout)


def run_until_match(command: list[str], cwd: Path, timeout: int) -> dict[str, object]:
    """Runs command with its output on a terminal until it prints MATCH.

    A terminal, not a pipe: C's stdio buffers a pipe in 4 KiB blocks, and
    llm.c's programs print their few lines (the match line among them) with
    printf and no fflush, so through a pipe the match line would come only
    when the benchmark after it had ended.
    """
    controller, terminal = pty.openpty()
    tty.setraw(terminal)  # no line discipline: the bytes as the program wrote them
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal,
                            cwd=cwd, start_new_session=True)
    os.close(terminal)
    lines: list[str] = []
    result = "FAIL"
    timed_out = False
    pending = b""
    try:
        while True:
            left = timeout - (time.perf_counter() - start)
            if left <= 0:
                timed_out = True
                break
            if not select.select([controller], [], [], min(left, 1.0))[0]:
                continue
            try:
                data = os.read(controller, 65536)
            except OSError:  # EIO: every writer has closed the terminal
                data = b""
            if not data:
                break
            *complete, pending = (pending + data).split(b"\n")
            new = [line.decode(errors="replace").rstrip() for line in complete]
            lines += new
            if any(MATCH in line for line in new):
                result = "PASS"
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        proc.wait()
        os.close(controller)
    if pending and result != "PASS":
        lines.append(pending.decode(errors="replace").rstrip())
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
    parser.add_argument("--cuda-libs", type=Path,
                        help="a folder with cuBLAS's include/ (default: the nvidia-cublas "
                        "wheel installed with zmlir)")
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--timeout", type=int, default=600, help="seconds to the match line")
    parser.add_argument("--only", default="")
    parser.add_argument("--args", action="append", default=[], metavar="NAME=ARGS",
                        help="run NAME with these arguments (space-separated) instead of "
                        "its defaults; repeatable")
    parser.add_argument("--results", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "llmc.md")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    extra: dict[str, list[list[str]]] = {}
    for item in args.args:
        name, _, arguments = item.partition("=")
        extra.setdefault(name, []).append(arguments.split())
    if args.cuda_libs is not None:
        headers = args.cuda_libs / "include"
    else:
        from zmlir.libraries.build import nvidia_wheel_dir

        wheel = nvidia_wheel_dir()
        if wheel is None:
            parser.error("no nvidia-cublas wheel installed: give --cuda-libs")
        headers = wheel / "include"
    libdir = our_libdir()
    rows: list[dict[str, object]] = []
    for source in sorted((args.checkout / "dev" / "cuda").glob("*.cu")):
        if only and source.stem not in only:
            continue
        library = needs_library(source)
        error = None if library else build(source, args.out, args.arch, headers, libdir)
        for arguments in extra.get(source.stem, RUNS.get(source.stem, [[]])):
            row: dict[str, object] = {"program": " ".join([source.stem, *arguments])}
            if library:
                row.update(result="SKIP", seconds=0, cause=f"calls {library}")
            elif error is not None:
                row.update(result="BUILD", seconds=0, cause=error)
            else:
                row.update(run(args.out / source.stem, arguments, args.timeout))
            print(f"{row['program']:32s} {row['result']:6s} {row['seconds']:>7}s  "
                  f"{row['cause']}", flush=True)
            rows.append(row)
            write(rows, args)  # after each program: a long run's table so far
    return 0 if all(r["result"] in ("PASS", "SKIP") for r in rows) else 1


def write(rows: list[dict[str, object]], args: argparse.Namespace) -> None:
    write_results(
        args.results, "llm.c's dev/cuda kernels on zmlir (CPU, OpenCL)",
        f"Written by `bench/llmc.py` ({time.strftime('%Y-%m-%d', time.gmtime())}), "
        f"built with `nvcc -arch={args.arch}`. PASS: the program printed \"{MATCH}\" "
        "(every kernel variant against its CPU reference); SKIP: it calls a library "
        "beyond cudart and cuBLAS (ours, zmlir/libraries/).",
        [("program", "program"), ("result", "result"), ("seconds", "seconds"),
         ("first cause", "cause")], rows)


if __name__ == "__main__":
    sys.exit(main())
