"""NVIDIA's CUDALibrarySamples (cuBLAS, cuBLASLt, cuFFT, cuRAND) on zmlir,
their output compared with the same programs' output on an NVIDIA GPU.

The samples are not ours and never committed: pass the path of a checkout
(https://github.com/NVIDIA/CUDALibrarySamples). Nothing is fetched.

  python bench/library_samples.py build CHECKOUT OUT [--arch sm_80] [--only a,b] [--jobs N] [--at LIB=COMMIT]
      [-I DIR ...] [-L DIR ...]
  python bench/library_samples.py run OUT --golden JSON [JSON ...] [--only a,b] [--timeout 120]
      [--results bench/results/library_samples.md] [--launcher "zmlir run --"] [--jobs N]

`build` compiles each sample as its CMakeLists.txt does (a folder with a
main.cpp is one program of all its sources; elsewhere each source with a
main() is one), with nvcc, linked with its library by soname.
By default the headers and libraries are NVIDIA's wheels' that zmlir's
environment has, with our libcublas and libcufft first; on a machine with
the CUDA toolkit give nothing (`-I`/`-L` empty: nvcc's own). `run` runs each
program (under `zmlir run` by default; `--launcher ""` runs it as it is, as
on the GPU that made the golden outputs) and compares its output with the
golden one: every number within a relative 1e-5 (printed to 2-6 digits, so
in practice equal), the text around them equal. The samples print their
results and check little themselves; NVIDIA's output on an H200 is the
reference (bench/results/h200/library_samples_nvidia.json, each program's
output, made by `run` with `--launcher "" --save JSON` on the H200 after
`build CHECKOUT OUT --arch sm_90 --at cuBLASLt=6b3fa10^` there: nvcc 13.0 and
the toolkit's cuBLAS 13.1, cuFFT 12.0, cuRAND 10; the programs that fail
there, NVIDIA's own std::logic_error of LtIgemmTensor, LtMxfp8Matmul and
LtNvfp4Matmul, left out). A second golden file may follow: the first file
that has a program's output is its reference
(bench/results/library_samples_nvidia_cufft_cpu.json: the cuFFT samples with
NVIDIA's libcufft on our driver on the CPU, made with
LD_LIBRARY_PATH=<the nvidia-cufft wheel's lib>:<zmlir libdir> and
`--launcher ""`, from before the H200 built them; the H200's file has them now).
`--jobs N` runs N programs at a time (on the H200: 8 to 14).

Results: PASS (same output), DIFF (first differing line), FAIL (non-zero
exit; first error line), TIMEOUT, BUILD (did not compile), NOREF (no golden).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.results_table import write_results

LIBRARIES = ("cuBLAS", "cuBLASLt", "cuFFT", "cuRAND")
SOURCE_SUFFIXES = (".cu", ".cpp")
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)", re.I)
RELATIVE_TOLERANCE = 1e-5
# A line that reports a time: its numbers are not compared.
TIMING = re.compile(r"(?i)\btim(e|ing)\b|\d\s*ms\b|gflops?\b")
# Each library's samples link it by soname (NVIDIA's wheels have no unversioned .so).
LINK = {"cuBLAS": ["-l:libcublas.so.13", "-l:libcublasLt.so.13"],
        "cuBLASLt": ["-l:libcublasLt.so.13"], "cuFFT": ["-l:libcufft.so.12"],
        "cuRAND": ["-l:libcurand.so.10"]}


def programs(checkout: Path, only: set[str],
             roots: dict[str, Path] | None = None) -> dict[str, list[Path]]:
    """Each program's name (its folder, or folder/source stem) and its sources;
    a library's sources from roots[library] in place of the checkout's."""
    found: dict[str, list[Path]] = {}
    for library in LIBRARIES:
        root = (roots or {}).get(library, checkout)
        for folder in sorted((root / library).rglob("*")):
            if not folder.is_dir() or "utils" in folder.parts or "Common" in folder.parts:
                continue
            sources = sorted(p for p in folder.iterdir() if p.suffix in SOURCE_SUFFIXES)
            if not sources:
                continue
            rel = folder.relative_to(root).as_posix()
            if any(p.stem == "main" for p in sources):
                groups = {rel: sources}
            else:
                groups = {f"{rel}/{p.stem}": [p] for p in sources
                          if re.search(r"\bint\s+main\s*\(", p.read_text(errors="replace"))}
            for name, group in groups.items():
                if not only or any(o in name for o in only):
                    found[name] = group
    return found


def exe_name(name: str) -> str:
    return name.replace("/", "__")


def default_dirs() -> tuple[list[Path], list[Path]]:
    """NVIDIA's wheels' headers and libraries, with our libraries' folder first."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from zmlir.libraries.build import nvidia_wheel_dir

    wheel = nvidia_wheel_dir()
    if wheel is None:
        sys.exit("no nvidia-cublas wheel installed: give -I and -L")
    ours = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], check=True,
                          capture_output=True, text=True).stdout.strip()
    return [wheel / "include"], [Path(ours), wheel / "lib"]


def build(args: argparse.Namespace) -> int:
    only = set(filter(None, args.only.split(",")))
    includes, libdirs = (args.I, args.L) if (args.I or args.L) else default_dirs()
    args.out.mkdir(parents=True, exist_ok=True)
    roots = {}
    for item in args.at:
        library, _, commit = item.partition("=")
        roots[library] = args.out / "src" / commit.replace("^", "-parent")
        roots[library].mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(args.checkout), "archive", commit, library],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "x", "-C", str(roots[library])], input=archive, check=True)

    def compile_one(item: tuple[str, list[Path]]) -> tuple[str, str]:
        name, sources = item
        library = next(p for p in sources[0].parents if p.name == name.split("/")[0])
        extra = [library / "utils", library / "Common", sources[0].parent]
        # -x cu: cuFFT's samples hold kernels in .cpp files (their CMake says CUDA).
        command = ["nvcc", "-O2", "-std=c++17", f"-arch={args.arch}", "-x", "cu",
                   *(f"-I{d}" for d in [*extra, *includes]), *map(str, sources),
                   "-o", str(args.out / exe_name(name)), *(f"-L{d}" for d in libdirs),
                   *LINK[name.split("/")[0]]]
        done = subprocess.run(command, capture_output=True, text=True)
        error = "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["?"])[-1]
        print(f"{name:60s} {'ok' if not error else 'BUILD ' + error}", flush=True)
        return name, error[:200]

    with ThreadPoolExecutor(args.jobs) as pool:
        built = dict(pool.map(compile_one, programs(args.checkout, only, roots).items()))
    (args.out / "built.json").write_text(json.dumps(built, indent=1) + "\n")
    return 0


def numbers_and_text(output: str) -> tuple[list[float], str]:
    """The numbers of the output (but timings') and its text around them."""
    numbers = [float(m) for line in output.splitlines() if not TIMING.search(line)
               for m in NUMBER.findall(line)]
    return numbers, NUMBER.sub("#", output)


def compare(got: str, want: str) -> str:
    """'' when got matches want, else the first difference."""
    got_numbers, got_text = numbers_and_text(got)
    want_numbers, want_text = numbers_and_text(want)
    if got_text != want_text or len(got_numbers) != len(want_numbers):
        for g, w in zip(got.splitlines(), want.splitlines(), strict=False):
            if NUMBER.sub("#", g) != NUMBER.sub("#", w) or (
                    not TIMING.search(w) and len(NUMBER.findall(g)) != len(NUMBER.findall(w))):
                return f"got '{g.strip()[:80]}', want '{w.strip()[:80]}'"
        return f"{len(got.splitlines())} lines, want {len(want.splitlines())}"
    for g, w in zip(got_numbers, want_numbers, strict=True):
        both_nan = g != g and w != w
        if not (both_nan or abs(g - w) <= RELATIVE_TOLERANCE * max(abs(g), abs(w))):
            return f"got {g}, want {w}"
    return ""


def run(args: argparse.Namespace) -> int:
    built = json.loads((args.out / "built.json").read_text())
    launcher = shlex.split(args.launcher) if args.launcher else []
    if launcher[:2] == ["zmlir", "run"]:
        launcher = [sys.executable, "-m", "zmlir.cli", *launcher[1:]]
    rows = []
    goldens: dict[str, str] | None = None
    for path in args.golden or []:
        goldens = {**json.loads(path.read_text()), **(goldens or {})}  # the first wins
    saved: dict[str, str] = {}
    only = set(filter(None, args.only.split(",")))

    def run_one(item: tuple[str, str]) -> dict[str, object]:
        name, error = item
        row: dict[str, object] = {"program": name, "seconds": 0.0, "detail": ""}
        if error:
            row.update(result="BUILD", detail=error)
            return row
        start = time.perf_counter()
        try:
            done = subprocess.run([*launcher, str(args.out / exe_name(name))],
                                  capture_output=True, text=True, timeout=args.timeout,
                                  cwd=args.out, errors="replace")
            output, code = done.stdout, done.returncode
            row["seconds"] = round(time.perf_counter() - start, 1)
            saved[name] = output
            if code != 0:
                lines = (done.stderr + output).strip().splitlines()
                cause = next((line for line in lines if re.search(
                    r"(?i)error|unsupported|not.supported|failed", line)),
                    lines[-1] if lines else f"exit {code}")
                row.update(result="FAIL", detail=cause.strip()[:200])
            elif goldens is None:
                row.update(result="RAN")
            elif name not in goldens:
                row.update(result="NOREF")
            else:
                difference = compare(output, goldens[name])
                row.update(result="DIFF" if difference else "PASS", detail=difference)
        except subprocess.TimeoutExpired:
            row.update(result="TIMEOUT", seconds=args.timeout)
        return row

    chosen = [(name, error) for name, error in built.items()
              if not only or any(o in name for o in only)]
    # --jobs N: N programs at a time (on a GPU, each its own process), rows in order.
    with ThreadPoolExecutor(args.jobs) as pool:
        for row in pool.map(run_one, chosen):
            print(f"{row['program']:60s} {row['result']:7s} {row['seconds']:>6}s "
                  f"{row['detail']}", flush=True)
            rows.append(row)
    if args.save:
        args.save.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n")
    if args.results:
        write(rows, args)
    return 0 if all(r["result"] in ("PASS", "RAN") for r in rows) else 1


def write(rows: list[dict[str, object]], args: argparse.Namespace) -> None:
    golden = ", ".join(f"`{g}`" for g in args.golden or []) or "nothing"
    write_results(
        args.results, "NVIDIA's CUDALibrarySamples on zmlir",
        f"Written by `bench/library_samples.py` "
        f"({time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC), launcher "
        f"`{args.launcher or '(none)'}`, against {golden}.",
        [("program", "program"), ("result", "result"), ("seconds", "seconds"),
         ("detail", "detail")], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("checkout", type=Path)
    b.add_argument("out", type=Path)
    b.add_argument("--arch", default="sm_80")
    b.add_argument("--only", default="")
    b.add_argument("--jobs", type=int, default=1)
    b.add_argument("--at", action="append", default=[], metavar="LIBRARY=COMMIT",
                   help="LIBRARY's samples as of COMMIT of the checkout (e.g. the last "
                   "that NVIDIA's headers of the installed version compile)")
    b.add_argument("-I", action="append", type=Path, default=[])
    b.add_argument("-L", action="append", type=Path, default=[])
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--golden", type=Path, nargs="+",
                   help="golden outputs: the first file that has a program's wins")
    r.add_argument("--save", type=Path, help="write each program's output to this JSON file")
    r.add_argument("--only", default="", help="comma-separated parts of the programs' names")
    r.add_argument("--timeout", type=int, default=120)
    r.add_argument("--launcher", default="zmlir run --")
    r.add_argument("--jobs", type=int, default=1, help="programs run at a time")
    r.add_argument("--results", type=Path)
    args = parser.parse_args()
    if args.command == "build":
        return build(args)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
