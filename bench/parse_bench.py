#!/usr/bin/env python3
"""Parse and import speed of the PTX frontend, against ptxas.

Times, on the nvcc corpus (test/corpus, all archs) and on a generated
multi-function module of at least 20 MB (copies of the importable sm_80
corpus and test/cuda kernels with their module-level names renamed):

- parse (parse_ptx) on one core, and with per-function parallelism over
  all cores (parse_ptx(..., jobs=N) where the parser supports it);
- parse + import (compile_module(emit="ptx-mlir")) on one core;
- `ptxas -O3 -arch=sm_80` compiling the same big file, in the same run;
- peak RSS of each, each measured in a fresh process.

Prints a table and writes bench/results/parse.json. Not a test: run it as
`.venv/bin/python bench/parse_bench.py [--size-mb 20] [--no-ptxas]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
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
    seconds: float
    cores: int
    peak_rss_mb: float | None = None

    @property
    def mb_per_s_per_core(self) -> float:
        return self.mbytes / self.seconds / self.cores


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
    names = {f.name for f in m.functions} | {v.name for v in m.variables}
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
text = open({path!r}).read()
mode, jobs = {mode!r}, {jobs!r}
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if mode == "parse":
    parse_ptx(text, "big.ptx", **({{"jobs": jobs}} if jobs > 1 else {{}}))
else:
    compile_module(text, emit="ptx-mlir", filename="big.ptx")
dt = time.perf_counter() - t0
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, kids)
print(json.dumps({{"seconds": dt, "peak_kb": peak, "base_kb": base}}))
"""


def in_child(path: Path, mode: str, jobs: int = 1) -> tuple[float, float, float]:
    code = _CHILD.format(repo=str(REPO), path=str(path), mode=mode, jobs=jobs)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    r = json.loads(out.stdout.splitlines()[-1])
    return r["seconds"], r["peak_kb"] / 1024, r["base_kb"] / 1024


def ptxas(path: Path) -> tuple[float, float]:
    exe = shutil.which("ptxas") or "/usr/local/bin/ptxas"
    code = (
        "import resource, subprocess, sys, time\n"
        "t0 = time.perf_counter()\n"
        f"subprocess.run([{exe!r}, '-O3', '-arch=sm_80', {str(path)!r}, '-o', '/dev/null'],"
        " check=True)\n"
        "print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, kb = out.stdout.split()
    return float(seconds), float(kb) / 1024


def time_corpus(corpus: dict[str, str], repeat: int) -> tuple[Measure, Measure]:
    texts = list(corpus.values())
    mbytes = sum(len(t) for t in texts) / 1e6
    for t in texts:  # warm-up: grammar tables, caches
        parse_ptx(t)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for t in texts:
            parse_ptx(t)
        best = min(best, time.perf_counter() - t0)
    parse = Measure("corpus parse", mbytes, best, 1)
    ok = []
    for t in texts:
        try:
            compile_module(t, emit="ptx-mlir")
            ok.append(t)
        except CompileError:
            pass
    ok_mb = sum(len(t) for t in ok) / 1e6
    t0 = time.perf_counter()
    for t in ok:
        compile_module(t, emit="ptx-mlir")
    full = Measure(f"corpus parse+import ({len(ok)}/{len(texts)} importable)", ok_mb,
                   time.perf_counter() - t0, 1)
    return parse, full


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=20.0)
    ap.add_argument("--no-ptxas", action="store_true", help="skip the ptxas comparison")
    ap.add_argument("--no-import", action="store_true", help="skip parse+import of the big file")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON results")
    args = ap.parse_args()

    corpus = {c.name: p for c, p in compile_all().items()}
    results: list[Measure] = list(time_corpus(corpus, args.repeat))
    big, parts = generate_big(args.size_mb, corpus)
    mb = big.stat().st_size / 1e6
    cores = os.cpu_count() or 1

    print(f"generated {big} ({mb:.1f} MB)", flush=True)
    seconds, peak, base = in_child(big, "parse")
    results.append(Measure("big parse, 1 process", mb, seconds, 1, peak))
    parse_base = base
    if cores > 1:
        try:
            seconds, peak, _ = in_child(big, "parse", jobs=cores)
            results.append(Measure(f"big parse, {cores} processes", mb, seconds, cores, peak))
        except RuntimeError as e:
            print(f"(parallel parse not available: {str(e).strip().splitlines()[-1]})")
    if not args.no_import:
        seconds, peak, _ = in_child(big, "import")
        results.append(Measure("big parse+import, 1 process", mb, seconds, 1, peak))
    ptxas_s = ptxas_rss = None
    if not args.no_ptxas:
        ptxas_s, ptxas_rss = ptxas(big)
        results.append(Measure("big ptxas -O3 -arch=sm_80", mb, ptxas_s, 1, ptxas_rss))

    print(f"big module: {big} ({mb:.1f} MB, from {', '.join(parts)})")
    print(f"{'what':44} {'MB':>7} {'s':>8} {'MB/s/core':>10} {'x ptxas':>8} {'peak RSS MB':>12}")
    for r in results:
        vs = f"{ptxas_s / r.seconds * r.mbytes / mb:8.2f}" if ptxas_s else f"{'-':>8}"
        rss = f"{r.peak_rss_mb:12.0f}" if r.peak_rss_mb is not None else f"{'-':>12}"
        print(f"{r.what:44} {r.mbytes:7.2f} {r.seconds:8.2f} {r.mb_per_s_per_core:10.2f} {vs} {rss}")
    print(f"(interpreter + zmlir before parsing: {parse_base:.0f} MB RSS; "
          "'x ptxas' > 1 means faster than ptxas on the same bytes)")

    out = args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "host": {"machine": platform.machine(), "cpus": cores, "python": platform.python_version()},
        "big_module": {"bytes": big.stat().st_size, "parts": parts},
        "baseline_rss_mb": parse_base,
        "results": [asdict(r) | {"mb_per_s_per_core": r.mb_per_s_per_core} for r in results],
        "ptxas_seconds": ptxas_s,
        "ptxas_peak_rss_mb": ptxas_rss,
        "resource_limits": resource.getrlimit(resource.RLIMIT_AS),
    }, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
