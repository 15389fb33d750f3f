#!/usr/bin/env python3
"""Parse and import speed and memory of the PTX frontend, against ptxas.

On the nvcc corpus (test/corpus, all archs) and on a generated
multi-function module of at least 20 MB (copies of the sm_80 corpus and the
test/cuda kernels, their module-level names renamed per copy), each in a
fresh process:

- parse alone (parse_ptx, the whole module at once);
- parse + import + MLIR verify and print (compile_module(emit="ptx-mlir")):
  the whole module at once (the path small modules take), then one function
  at a time (zmlir/frontend/stream.py) in 1, 2, ... worker processes;
- `ptxas -O3` compiling the same files in the same run (the big file under
  a time cap: ptxas takes a very long time on it; a capped run is reported
  as "ptxas > N s", and its ratio as a bound).

It reports MB/s per core (per CPU-second, which a busy machine doesn't
distort; and per wall second and core), the scaling over workers (wall time
of 1 worker over N; and the CPU-time bound), peak RSS over the interpreter's
own (measured after reading the input) divided by the input size, and the
ratio against ptxas. Writes bench/results/parse.json. Not a test: run it as
`.venv/bin/python bench/parse_bench.py [--size-mb 20] [--ptxas-cap 300]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test"))
sys.path.insert(0, str(REPO))

from corpus.build import compile_all  # noqa: E402

from zmlir import compile_module  # noqa: E402
from zmlir.diagnostics import CompileError  # noqa: E402
from zmlir.frontend import parse_ptx  # noqa: E402
from zmlir.frontend.ast import VarDecl  # noqa: E402

WORK = REPO / "build" / "bench"
RESULTS = REPO / "bench" / "results" / "parse.json"
CUDA_DIR = REPO / "test" / "cuda"


@dataclass
class Measure:
    what: str
    mbytes: float
    seconds: float  # wall
    cpu_seconds: float  # all processes of the measurement
    processes: int = 1
    peak_rss_mb: float | None = None  # the largest process
    total_rss_mb: float | None = None  # main + workers (each at its peak)
    base_rss_mb: float | None = None  # the main process's peak before the work
    resident_mb: float | None = None  # the main process's resident set before the work
    capped: bool = False  # stopped at the time cap: `seconds` is a lower bound

    @property
    def mb_per_cpu_s(self) -> float:
        return self.mbytes / self.cpu_seconds if self.cpu_seconds else 0.0

    @property
    def mb_per_s_per_core(self) -> float:
        return self.mbytes / self.seconds / self.processes

    @property
    def rss_over_input(self) -> float | None:
        """Peak RSS of the main process above its peak before the work (the
        interpreter, zmlir and the input text), over the input size."""
        if self.peak_rss_mb is None or self.base_rss_mb is None:
            return None
        return (self.peak_rss_mb - self.base_rss_mb) / self.mbytes

    @property
    def rss_over_input_strict(self) -> float | None:
        """The same above the resident set before the work (often lower than
        the earlier peak: import transients)."""
        if self.peak_rss_mb is None or self.resident_mb is None:
            return None
        return (self.peak_rss_mb - self.resident_mb) / self.mbytes


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def _cuda_tests_ptx() -> list[str]:
    nvcc = shutil.which("nvcc") or "/usr/local/bin/nvcc"
    WORK.mkdir(parents=True, exist_ok=True)
    out = []
    for cu in sorted(CUDA_DIR.glob("*.cu")):
        ptx = WORK / f"{cu.stem}.sm_80.ptx"
        if not ptx.exists() or ptx.stat().st_mtime < cu.stat().st_mtime:
            subprocess.run([nvcc, "-ptx", "-arch=sm_80", str(cu), "-o", str(ptx)], check=True)
        out.append(ptx.read_text())
    return out


_HEADER_END = re.compile(r"^\.address_size \d+\n", re.MULTILINE)


def _renamed_body(ptx: str, suffix: str) -> str:
    """The module's text after its header, every module-level name + suffix."""
    m = parse_ptx(ptx)
    # Not the functions only declared (vprintf, __assertfail): ptxas links those.
    names = {f.name for f in m.functions if f.body is not None} | {v.name for v in m.variables}
    # Function-scope `.shared` variables are module-level symbols for ptxas
    # and the importer too (nvcc mangles them per function: `_ZZ4kernE3buf`).
    names |= {s.name for f in m.functions for s in f.body or () if isinstance(s, VarDecl)
              and s.space != "param"}
    body = ptx[_HEADER_END.search(ptx).end() :]  # type: ignore[union-attr]
    if not names:
        return body
    pattern = re.compile(
        r"(?<![\w$])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        + r")(?![\w$])"
    )
    return pattern.sub(lambda mo: mo.group(1) + suffix, body)


def generate_big(size_mb: float, corpus: dict[str, str]) -> tuple[Path, list[str]]:
    """A module of >= size_mb MB made of importable nvcc modules, renamed per copy."""
    candidates = dict(sorted((k, v) for k, v in corpus.items() if k.endswith("sm_80")))
    candidates.update({f"cuda/{i}": p for i, p in enumerate(_cuda_tests_ptx())})
    parts = {}
    for name, ptx in candidates.items():
        try:
            compile_module(ptx, emit="ptx-mlir")
        except CompileError:
            continue  # the importer can't take it yet: leave it out
        parts[name] = ptx
    header = ".version 9.0\n.target sm_80\n.address_size 64\n"
    chunks = [header]
    size = len(header)
    copy = 0
    while size < size_mb * 1e6:
        for ptx in parts.values():
            body = _renamed_body(ptx, f"_g{copy}")
            chunks.append(body)
            size += len(body)
        copy += 1
    path = WORK / f"big_{size_mb:g}mb.ptx"
    path.write_text("".join(chunks))
    return path, sorted(parts)


# ---------------------------------------------------------------------------
# Measurements, each in a fresh process for an honest peak RSS
# ---------------------------------------------------------------------------

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from zmlir.frontend import parse_ptx
from zmlir import compile_module

def usage():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

def main():
    text = open({path!r}).read()
    mode, jobs = {mode!r}, {jobs!r}
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # The resident set now, which may be below the high-water mark so far.
    now = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() // 1024
    cpu0 = usage()
    t0 = time.perf_counter()
    if mode == "parse":
        parse_ptx(text, "big.ptx")
    elif mode == "whole":
        compile_module(text, emit="ptx-mlir", filename="big.ptx", stream_min=1 << 62)
    else:
        compile_module(text, emit="ptx-mlir", filename="big.ptx", jobs=jobs, stream_min=0)
    dt = time.perf_counter() - t0
    cpu = usage() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({{"seconds": dt, "cpu": cpu, "peak_kb": peak, "kids_kb": kids,
                      "base_kb": base, "now_kb": now}}))

if __name__ == "__main__":  # the workers (spawned) import this file too
    main()
"""


def in_child(path: Path, mode: str, jobs: int = 1) -> dict[str, float]:
    code = _CHILD.format(repo=str(REPO), path=str(path), mode=mode, jobs=jobs)
    script = WORK / f"child_{mode}.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.splitlines()[-1])


def measure_big(path: Path, mode: str, what: str, jobs: int = 1) -> Measure:
    r = in_child(path, mode, jobs)
    mb = path.stat().st_size / 1e6
    peak = r["peak_kb"] / 1024
    # ru_maxrss of the children is the largest worker's; all `jobs` peak alike.
    workers = r["kids_kb"] / 1024 * jobs if mode == "stream" and jobs > 1 else 0.0
    return Measure(what, mb, r["seconds"], r["cpu"], jobs if mode == "stream" else 1, peak,
                   peak + workers, r["base_kb"] / 1024, r["now_kb"] / 1024)


def _ptxas_exe() -> str:
    return shutil.which("ptxas") or "/usr/local/bin/ptxas"


def ptxas(path: Path, arch: str, cap: float | None) -> tuple[float, float, bool]:
    """Wall and CPU seconds of `ptxas -O3`; capped=True if killed at `cap`."""
    before = os.times()
    t0 = time.perf_counter()
    try:
        subprocess.run([_ptxas_exe(), "-O3", f"-arch={arch}", str(path), "-o", os.devnull],
                       check=True, capture_output=True, timeout=cap)
        capped = False
    except subprocess.TimeoutExpired:
        capped = True
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system
                                                          - before.children_system)
    return wall, cpu, capped


def time_corpus(corpus: dict[str, str], repeat: int) -> tuple[Measure, Measure]:
    texts = list(corpus.values())
    mbytes = sum(len(t) for t in texts) / 1e6
    for t in texts:  # warm-up: grammar tables, caches
        parse_ptx(t)
    best = best_cpu = float("inf")
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        for t in texts:
            parse_ptx(t)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    parse = Measure("corpus parse", mbytes, best, best_cpu)
    ok = []
    for t in texts:
        try:
            compile_module(t, emit="ptx-mlir")
            ok.append(t)
        except CompileError:
            pass
    ok_mb = sum(len(t) for t in ok) / 1e6
    c0, t0 = time.process_time(), time.perf_counter()
    for t in ok:
        compile_module(t, emit="ptx-mlir")
    full = Measure(f"corpus parse+import+verify ({len(ok)}/{len(texts)} import)", ok_mb,
                   time.perf_counter() - t0, time.process_time() - c0)
    return parse, full


def ptxas_corpus(corpus: dict[str, str]) -> Measure:
    """ptxas -O3 on every corpus file, for its own arch."""
    WORK.mkdir(parents=True, exist_ok=True)
    wall = cpu = 0.0
    for name, text in corpus.items():
        path = WORK / f"corpus_{name}.ptx"
        path.write_text(text)
        w, c, _ = ptxas(path, name.rsplit("-", 1)[1], None)
        wall += w
        cpu += c
    mbytes = sum(len(t) for t in corpus.values()) / 1e6
    return Measure("corpus ptxas -O3", mbytes, wall, cpu)


def _fmt(x: float | None, spec: str, width: int) -> str:
    return f"{x:{width}{spec}}" if x is not None else f"{'-':>{width}}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=20.0)
    ap.add_argument("--no-ptxas", action="store_true", help="skip the ptxas comparison")
    ap.add_argument("--ptxas-cap", type=float, default=300.0,
                    help="seconds after which ptxas on the big file is stopped")
    ap.add_argument("--max-jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON results")
    args = ap.parse_args()

    corpus = {c.name: p for c, p in compile_all().items()}
    corpus_parse, corpus_full = time_corpus(corpus, args.repeat)
    results: list[Measure] = [corpus_parse, corpus_full]
    corpus_ptxas = None
    if not args.no_ptxas:
        corpus_ptxas = ptxas_corpus(corpus)
        results.append(corpus_ptxas)
    big, parts = generate_big(args.size_mb, corpus)
    mb = big.stat().st_size / 1e6
    print(f"generated {big} ({mb:.1f} MB)", flush=True)

    results.append(measure_big(big, "parse", "big parse (whole module)"))
    whole = measure_big(big, "whole", "big parse+import+verify, whole module")
    results.append(whole)
    streamed: dict[int, Measure] = {}
    for jobs in range(1, max(1, args.max_jobs) + 1):
        m = measure_big(big, "stream", f"big parse+import+verify, per function, {jobs} proc",
                        jobs)
        streamed[jobs] = m
        results.append(m)
        print(f"  {m.what}: {m.seconds:.1f} s", flush=True)
    big_ptxas = None
    if not args.no_ptxas:
        wall, cpu, capped = ptxas(big, "sm_80", args.ptxas_cap)
        big_ptxas = Measure("big ptxas -O3 -arch=sm_80" + (" (capped)" if capped else ""), mb,
                            wall, cpu, capped=capped)
        results.append(big_ptxas)

    print(f"big module: {big} ({mb:.1f} MB, from {', '.join(parts)})")
    print(f"host: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{'what':52} {'MB':>6} {'wall s':>7} {'CPU s':>7} {'MB/CPU-s':>8} "
          f"{'MB/s/core':>9} {'x ptxas':>8} {'RSS/in':>6} {'strict':>6} {'peak MB':>8} "
          f"{'all MB':>7}")
    for r in results:
        ref = corpus_ptxas if r.what.startswith("corpus") else big_ptxas
        vs = None
        if ref is not None and r is not ref:
            vs = ref.seconds / r.seconds * r.mbytes / ref.mbytes
        ratio = _fmt(vs, ".2f", 8)
        if ref is not None and ref.capped and vs is not None:
            ratio = f"{'>' + format(vs, '.1f'):>8}"
        print(f"{r.what:52} {r.mbytes:6.2f} {r.seconds:7.1f}{'+' if r.capped else ' '}"
              f"{r.cpu_seconds:7.1f} {r.mb_per_cpu_s:8.2f} {r.mb_per_s_per_core:9.2f} "
              f"{ratio} {_fmt(r.rss_over_input, '.1f', 6)} "
              f"{_fmt(r.rss_over_input_strict, '.1f', 6)} {_fmt(r.peak_rss_mb, '.0f', 8)} "
              f"{_fmt(r.total_rss_mb, '.0f', 7)}")
    one = streamed[1]
    scaling = {j: {"wall": one.seconds / m.seconds,
                   "cpu_bound": one.cpu_seconds / (m.cpu_seconds / j)}
               for j, m in streamed.items()}
    for j, sc in scaling.items():
        print(f"scaling, {j} processes: {sc['wall']:.2f}x wall time of 1 "
              f"(CPU time allows {sc['cpu_bound']:.2f}x)")
    print(f"('x ptxas' > 1: faster than ptxas on the same bytes; '>' when ptxas was capped. "
          f"RSS/in: peak RSS of the main process above its {whole.base_rss_mb:.0f} MB peak "
          "before the work, over the input size; strict: above its resident set then, "
          f"{whole.resident_mb:.0f} MB; 'all MB': main + workers)")

    out = args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "host": {"machine": platform.machine(), "cpus": os.cpu_count(),
                 "python": platform.python_version(), "load_average": os.getloadavg()},
        "big_module": {"bytes": big.stat().st_size, "parts": parts},
        "results": [asdict(r) | {"mb_per_cpu_s": r.mb_per_cpu_s,
                                 "mb_per_s_per_core": r.mb_per_s_per_core,
                                 "rss_over_input": r.rss_over_input,
                                 "rss_over_input_strict": r.rss_over_input_strict}
                    for r in results],
        "scaling": scaling,
        "ptxas_cap_seconds": args.ptxas_cap,
    }, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
