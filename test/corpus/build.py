"""Compiles the CUDA corpus in this directory to PTX with nvcc, with a cache.

Used by test/frontend/test_corpus.py, test/frontend/test_fuzz.py and the benchmarks in bench/.
Each `.cu` file may say `// corpus-min-arch: NN` when it can't build below
sm_NN; every other file builds for every arch in ARCHS.

PTX is cached in build/corpus-ptx/ (ignored by git), keyed by the source
text, the arch and nvcc's version, so a second test run doesn't pay for nvcc.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent
REPO = CORPUS_DIR.parents[1]
CACHE_DIR = REPO / "build" / "corpus-ptx"
ARCHS = ("sm_75", "sm_80", "sm_90", "sm_100")
NVCC = shutil.which("nvcc") or "/usr/local/bin/nvcc"

_MIN_ARCH = re.compile(r"^// corpus-min-arch: (\d+)$", re.MULTILINE)


@dataclass(frozen=True)
class Case:
    """One (source, arch) pair; `skip` says why it can't be built, if so."""

    source: Path
    arch: str
    skip: str | None = None

    @property
    def name(self) -> str:
        return f"{self.source.stem}-{self.arch}"


def have_nvcc() -> bool:
    return Path(NVCC).exists()


def sources() -> list[Path]:
    return sorted(CORPUS_DIR.glob("*.cu"))


def cases() -> list[Case]:
    out = []
    for src in sources():
        m = _MIN_ARCH.search(src.read_text())
        min_arch = int(m.group(1)) if m else 0
        for arch in ARCHS:
            skip = None
            if int(arch[3:]) < min_arch:
                skip = f"{src.name} needs sm_{min_arch} or newer (corpus-min-arch)"
            out.append(Case(src, arch, skip))
    return out


@functools.lru_cache(maxsize=1)
def _nvcc_version() -> str:
    return subprocess.run([NVCC, "--version"], capture_output=True, text=True, check=True).stdout


def compile_case(case: Case) -> str:
    """The PTX nvcc makes of `case`, from the cache when it has it."""
    text = case.source.read_text()
    key = hashlib.sha256(f"{_nvcc_version()}\0{case.arch}\0{text}".encode()).hexdigest()[:24]
    cached = CACHE_DIR / f"{case.name}-{key}.ptx"
    if cached.exists():
        return cached.read_text()
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(f".{os.getpid()}.tmp")
    proc = subprocess.run(
        [NVCC, "-ptx", f"-arch={case.arch}", str(case.source), "-o", str(tmp)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"nvcc failed on {case.name}:\n{proc.stderr}")
    tmp.replace(cached)  # atomic: a concurrent run never reads half a file
    return cached.read_text()


def compile_all(jobs: int | None = None) -> dict[Case, str]:
    """PTX of every buildable case; nvcc runs in parallel (it is the slow part)."""
    todo = [c for c in cases() if c.skip is None]
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        return dict(zip(todo, pool.map(compile_case, todo), strict=True))
