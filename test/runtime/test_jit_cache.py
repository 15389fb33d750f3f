"""The JIT cache: hits return the same module, corruption is detected and
recompiled, concurrent processes share the file, ZMLIR_CACHE=0 disables it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support import LIT_INPUTS

from zmlir.runtime import cache
from zmlir.runtime.cuda import build as cuda_build

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


# -- a cache that cannot be used: compiles go on without it, one warning -------------------


@pytest.fixture
def fresh_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "_WARNED", False)
    monkeypatch.setattr(cache, "_SHARED", {})


def _compiles_twice_with_one_warning(capsys: pytest.CaptureFixture[str], reason: str) -> None:
    first = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    second = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    assert first.binary and second.binary == first.binary
    assert "std-mlir" in second.stages  # compiled again: no cache
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("zmlir: warning: JIT cache ") and reason in lines[0], lines


def test_cache_dir_that_is_a_file(cache_dir: Path, fresh_warning: None,
                                  capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (cache_dir / "file").write_text("not a directory")
    monkeypatch.setenv("ZMLIR_CACHE_DIR", str(cache_dir / "file"))
    _compiles_twice_with_one_warning(capsys, "is not a directory")


def test_cache_dir_below_a_file(tmp_path: Path, fresh_warning: None,
                                capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    # HOME unusable and XDG_CACHE_HOME unset (a container run with --user):
    # a file where HOME should be blocks even root.
    (tmp_path / "home").write_text("")
    monkeypatch.delenv("ZMLIR_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("ZMLIR_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _compiles_twice_with_one_warning(capsys, "Not a directory")


@pytest.mark.skipif(os.geteuid() == 0, reason="root is not stopped by mode 000")
def test_cache_dir_without_permissions(cache_dir: Path, fresh_warning: None,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    cache_dir.chmod(0)
    try:
        _compiles_twice_with_one_warning(capsys, "Permission denied")
    finally:
        cache_dir.chmod(0o700)


def test_database_that_is_a_directory(cache_dir: Path, fresh_warning: None,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    (cache_dir / "jit.sqlite").mkdir()
    _compiles_twice_with_one_warning(capsys, "jit.sqlite is not a regular file")
    assert (cache_dir / "jit.sqlite").is_dir()  # left alone


def test_corrupt_database_is_replaced_quietly(cache_dir: Path, fresh_warning: None,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (cache_dir / "jit.sqlite").write_bytes(b"SQLite format 3\0" + b"\xff" * 4096)
    module = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    assert "std-mlir" not in cache.compile_cached(VADD, "spirv", "vadd.ptx").stages
    assert module.binary and _rows(cache_dir) == 1
    assert capsys.readouterr().err == ""


def test_entry_with_bad_kernel_records_is_recompiled(cache_dir: Path) -> None:
    good = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    kernels = '[{"bogus": 1}]'
    with sqlite3.connect(cache_dir / "jit.sqlite") as db:
        binary = db.execute("SELECT binary FROM modules").fetchone()[0]
        db.execute("UPDATE modules SET kernels = ?, checksum = ?",
                   (kernels, cache._checksum(kernels, binary)))
    again = cache.compile_cached(VADD, "spirv", "vadd.ptx")
    assert again.kernels == good.kernels
    assert "std-mlir" in again.stages


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_directory_of_another_user_is_not_used(tmp_path: Path, fresh_warning: None,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Compiled modules are code this process runs: never read from a place
    # another user made (here, one who created the directory first).
    planted = tmp_path / "zmlir"
    planted.mkdir(mode=0o755)
    os.chown(planted, 12345, 12345)
    monkeypatch.setenv("ZMLIR_CACHE_DIR", str(planted))
    _compiles_twice_with_one_warning(capsys, "is owned by uid 12345")
    assert list(planted.iterdir()) == []


def test_directory_others_may_write_is_not_used(cache_dir: Path, fresh_warning: None,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    cache_dir.chmod(0o777)
    _compiles_twice_with_one_warning(capsys, "other users may write")
    assert not (cache_dir / "jit.sqlite").exists()


_SPY = """
import sys

class Spy:
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("zmlir.frontend", "zmlir.targets")):
            cache = sys.modules.get("zmlir.runtime.cache")
            taken = bool(cache and cache.compiler_fingerprint.cache_info().currsize)
            with open(OUT, "w") as out:
                out.write(f"{name} {taken}")
            sys.meta_path.remove(self)
        return None

sys.meta_path.insert(0, Spy())
"""


def test_fingerprint_is_taken_before_the_driver_imports_the_compiler(tmp_path: Path) -> None:
    # Taken after, a process whose compiler files changed meanwhile (an edit,
    # a rebuild) would store code of the old files under the new files' key.
    # The spy: a sitecustomize of the host's Python, which the driver shares
    # (ZMLIR_LINK_NAMESPACE_MODE=shared).
    out = tmp_path / "first_import.txt"
    (tmp_path / "sitecustomize.py").write_text(f"OUT = {str(out)!r}\n" + _SPY)
    library = cuda_build.library_dir() / "libcuda.so.1"
    load = f"import ctypes; ctypes.CDLL({str(library)!r}).cuInit(0)"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "ZMLIR_LINK_NAMESPACE_MODE": "shared"}
    subprocess.run([sys.executable, "-c", load], env=env, timeout=120, check=True)
    first, taken = out.read_text().split()
    assert taken == "True", f"{first} was imported before the fingerprint was taken"
