"""The JIT cache: hits return the same module, corruption is detected and
recompiled, concurrent processes share the file, ZMLIR_CACHE=0 disables it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support import LIT_INPUTS

from zmlir.runtime import cache

VADD = (LIT_INPUTS / "vadd.ptx").read_text()


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZMLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ZMLIR_CACHE", raising=False)
    return tmp_path


def _rows(directory: Path) -> int:
    with sqlite3.connect(directory / "jit.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM modules").fetchone()[0]


def test_hit_returns_the_same_module(cache_dir: Path) -> None:
    first = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    assert _rows(cache_dir) == 1
    second = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    assert second.binary == first.binary
    assert second.kernels == first.kernels
    assert "std-mlir" not in second.stages  # served from the cache, not recompiled


def test_targets_do_not_share_entries(cache_dir: Path) -> None:
    spirv = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    nvptx = cache.compile_cached(VADD, "nvptx:sm_80", "vadd.ptx")
    assert _rows(cache_dir) == 2
    assert spirv.binary != nvptx.binary


def test_corrupt_entry_is_detected_and_recompiled(cache_dir: Path) -> None:
    good = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    with sqlite3.connect(cache_dir / "jit.sqlite") as db:
        db.execute("UPDATE modules SET binary = substr(binary, 1, 100)")  # truncate
    again = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    assert again.binary == good.binary
    assert "std-mlir" in again.stages  # recompiled


def test_damaged_database_file_is_replaced(cache_dir: Path) -> None:
    cache_dir.mkdir(exist_ok=True)
    (cache_dir / "jit.sqlite").write_bytes(b"this is not a database" * 100)
    module = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    assert module.binary
    assert cache.compile_cached(VADD, "spirv", "vadd.ptx").binary == module.binary


def test_disabled_by_environment(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZMLIR_CACHE", "0")
    cache.compile_cached(VADD, "spirv", "vadd.ptx")
    assert not (cache_dir / "jit.sqlite").exists()


def test_concurrent_processes_share_the_cache(cache_dir: Path) -> None:
    script = ("import sys; from zmlir.runtime import cache; "
              "m = cache.compile_cached(open(sys.argv[1]).read(), 'spirv', 'vadd.ptx'); "
              "print(len(m.binary))")
    src = cache_dir / "vadd.ptx"
    src.write_text(VADD)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(src)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    assert len({out.strip() for out, _ in outputs}) == 1
    assert _rows(cache_dir) == 1
