#!/usr/bin/env python3
"""Parse and import speed and memory of the PTX frontend, against ptxas.

On the nvcc corpus (test/corpus, all archs) and on a generated
multi-function module of at least 20 MB (copies of the sm_80 corpus and the
test/cuda kernels, their module-level names renamed per copy), each in a
fresh process:

- parse alone (parse_ptx, the whole module at once);
- parse + import + MLIR verify (zmlir.compiler.import_ptx: what a compile
  does before lowering): the whole module at once (the path small modules
  take), then one function batch at a time (zmlir/frontend/stream.py, the
  path of modules from 1 MB) in 1, 2, ... worker processes;
- the same streamed, printed too (`zmlir compile --emit=ptx-mlir`);
- `ptxas -O3` compiling the same files in the same run (the big file under
  a time cap: ptxas takes a very long time on it; a capped run is reported
  as "ptxas > N s", and its ratio as a bound).

Each measurement is the least CPU time of --repeat runs (a shared machine
only ever adds time). It reports MB/s per core (per CPU-second; and per wall
second and core), the scaling over workers (wall time of 1 worker over N;
and the CPU-time bound), peak RSS over the interpreter's own (measured
after reading the input) divided by the input size, and the ratio against
ptxas. Writes bench/results/parse.json. Not a test: run it as
`.venv/bin/python bench/parse_bench.py [--size-mb 20] [--ptxas-cap 300]`.

On a machine with many cores but no MLIR (the H200 host), `--scaling-only
--no-verify --big FILE --jobs 1,2,4,8,16` measures the scaling of parse +
import alone; it needs only lark and zmlir's Python sources.
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
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test"))
sys.path.insert(0, str(REPO))

from zmlir.diagnostics import CompileError  # noqa: E402
from zmlir.frontend import parse_ptx  # noqa: E402
from zmlir.frontend.ast import VarDecl  # noqa: E402

# The corpus and MLIR (zmlir.compiler) are imported where used: the
# scaling-only run has neither.

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
    from zmlir import compile_module

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

def usage():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

def main():
    text = open({path!r}).read()
    mode, jobs = {mode!r}, {jobs!r}
    if mode not in ("parse", "stream-noverify"):
        from zmlir.compiler import compile_module, import_ptx  # loads MLIR
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # The resident set now, which may be below the high-water mark so far.
    now = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() // 1024
    cpu0 = usage()
    t0 = time.perf_counter()
    if mode == "parse":
        parse_ptx(text, "big.ptx")
    elif mode == "whole":  # to a verified MLIR module (kept, not printed)
        import_ptx(text, "big.ptx", stream_min=1 << 62)
    elif mode == "stream":  # batches verified where imported; the importer's text kept
        import_ptx(text, "big.ptx", jobs=jobs, stream_min=0)
    elif mode == "stream-print":  # `zmlir compile --emit=ptx-mlir`: printed, too
        compile_module(text, emit="ptx-mlir", filename="big.ptx", jobs=jobs, stream_min=0)
    else:  # stream-noverify: parse and import only (where there is no MLIR)
        from zmlir.frontend.stream import import_streamed
        assert import_streamed(text, "big.ptx", jobs=jobs) is not None
    dt = time.perf_counter() - t0
    # Workers are the forkserver's children: their CPU time counts here once
    # it has reaped them and been reaped.
    from multiprocessing import forkserver
    forkserver._forkserver._stop()
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
    WORK.mkdir(parents=True, exist_ok=True)
    script = WORK / f"child_{mode}.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.splitlines()[-1])


def measure_big(path: Path, mode: str, what: str, jobs: int = 1, repeat: int = 1) -> Measure:
    """The run of least CPU time of `repeat` fresh processes (a shared machine
    only ever adds time); its own peak RSS."""
    runs = [in_child(path, mode, jobs) for _ in range(repeat)]
    r = min(runs, key=lambda x: x["cpu"])
    mb = path.stat().st_size / 1e6
    peak = r["peak_kb"] / 1024
    streamed = mode.startswith("stream")
    # ru_maxrss of the children is the largest worker's; all `jobs` peak alike.
    workers = r["kids_kb"] / 1024 * jobs if streamed and jobs > 1 else 0.0
    return Measure(what, mb, r["seconds"], r["cpu"], jobs if streamed else 1, peak,
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
    from zmlir.compiler import import_ptx

    texts = list(corpus.values())
    mbytes = sum(len(t) for t in texts) / 1e6
    for t in texts:  # warm-up: grammar tables, caches
        parse_ptx(t)
    parse = Measure("corpus parse", mbytes, *_best(repeat, parse_ptx, texts))
    ok = []
    for t in texts:
        try:
            import_ptx(t)
            ok.append(t)
        except CompileError:
            pass
    ok_mb = sum(len(t) for t in ok) / 1e6
    full = Measure(f"corpus parse+import+verify ({len(ok)}/{len(texts)} import)", ok_mb,
                   *_best(repeat, import_ptx, ok))
    return parse, full


def _best(repeat: int, run: Callable[[str], object], texts: list[str]) -> tuple[float, float]:
    """The least wall and CPU seconds of `repeat` passes of `run` over `texts`."""
    best = best_cpu = float("inf")
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        for t in texts:
            run(t)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu


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
    ap.add_argument("--jobs", default="",
                    help="worker counts to measure, e.g. 1,2,4 (default: 1 to the core count)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", type=Path, help="measure this module instead of generating one")
    ap.add_argument("--scaling-only", action="store_true",
                    help="only the streamed runs over worker counts (no corpus, no ptxas)")
    ap.add_argument("--no-verify", action="store_true",
                    help="parse and import without MLIR's verification (where MLIR is absent)")
    ap.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON results")
    args = ap.parse_args()
    jobs_list = ([int(j) for j in args.jobs.split(",")] if args.jobs
                 else list(range(1, (os.cpu_count() or 1) + 1)))

    results: list[Measure] = []
    corpus_ptxas = big_ptxas = None
    parts: list[str] = []
    if not args.scaling_only:
        from corpus.build import compile_all

        corpus = {c.name: p for c, p in compile_all().items()}
        corpus_parse, corpus_full = time_corpus(corpus, args.repeat)
        results += [corpus_parse, corpus_full]
        if not args.no_ptxas:
            corpus_ptxas = ptxas_corpus(corpus)
            results.append(corpus_ptxas)
    if args.big is not None:
        big = args.big
    else:
        from corpus.build import compile_all

        big, parts = generate_big(args.size_mb, {c.name: p for c, p in compile_all().items()})
    mb = big.stat().st_size / 1e6
    print(f"big module: {big} ({mb:.1f} MB)", flush=True)

    whole = None
    if not args.scaling_only:
        results.append(measure_big(big, "parse", "big parse (whole module)", repeat=args.repeat))
        whole = measure_big(big, "whole", "big parse+import+verify, whole module",
                            repeat=args.repeat)
        results.append(whole)
    streamed: dict[int, Measure] = {}
    mode, label = (("stream-noverify", "parse+import (no verify)") if args.no_verify
                   else ("stream", "parse+import+verify"))
    for jobs in jobs_list:
        m = measure_big(big, mode, f"big {label}, per function, {jobs} proc", jobs,
                        repeat=args.repeat)
        streamed[jobs] = m
        results.append(m)
        print(f"  {m.what}: {m.seconds:.2f} s", flush=True)
    if not args.scaling_only:
        results.append(measure_big(big, "stream-print",
                                   "big ... and printed (emit=ptx-mlir), per function, 1 proc",
                                   repeat=args.repeat))
        if not args.no_ptxas:
            wall, cpu, capped = ptxas(big, "sm_80", args.ptxas_cap)
            big_ptxas = Measure("big ptxas -O3 -arch=sm_80" + (" (capped)" if capped else ""),
                                mb, wall, cpu, capped=capped)
            results.append(big_ptxas)

    print(f"big module: {big} ({mb:.1f} MB{', from ' + ', '.join(parts) if parts else ''})")
    print(f"host: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{'what':60} {'MB':>6} {'wall s':>7} {'CPU s':>7} {'MB/CPU-s':>8} "
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
        print(f"{r.what:60} {r.mbytes:6.2f} {r.seconds:7.1f}{'+' if r.capped else ' '}"
              f"{r.cpu_seconds:7.1f} {r.mb_per_cpu_s:8.2f} {r.mb_per_s_per_core:9.2f} "
              f"{ratio} {_fmt(r.rss_over_input, '.1f', 6)} "
              f"{_fmt(r.rss_over_input_strict, '.1f', 6)} {_fmt(r.peak_rss_mb, '.0f', 8)} "
              f"{_fmt(r.total_rss_mb, '.0f', 7)}")
    one = streamed[min(streamed)]
    scaling = {j: {"wall": one.seconds / m.seconds,
                   "cpu_bound": one.cpu_seconds / (m.cpu_seconds / j)}
               for j, m in streamed.items()}
    for j, sc in scaling.items():
        print(f"scaling, {j} processes: {sc['wall']:.2f}x wall time of 1 "
              f"(CPU time allows {sc['cpu_bound']:.2f}x)")
    ref_rss = whole or one
    print(f"('x ptxas' > 1: faster than ptxas on the same bytes; '>' when ptxas was capped. "
          f"RSS/in: peak RSS of the main process above its {ref_rss.base_rss_mb:.0f} MB peak "
          "before the work, over the input size; strict: above its resident set then, "
          f"{ref_rss.resident_mb:.0f} MB; 'all MB': main + workers)")

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
        "repeat": args.repeat,
    }, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
