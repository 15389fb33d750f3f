"""The JIT cache: compiled modules on disk, in one SQLite file under
$XDG_CACHE_HOME/zmlir (ZMLIR_CACHE=0 turns it off, ZMLIR_CACHE_DIR moves it).

The key is a hash of the PTX, the target (its options and LLVM version) and a
fingerprint of the compiler itself (the native core and the Python sources
that shape the output), so a changed compiler never serves stale code. Each
entry carries a checksum of its payload: a corrupt or truncated entry is
deleted and recompiled. SQLite's transactions make writes atomic, and its
locking (WAL, a busy timeout) lets processes share the file.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from zmlir.files import cache_dir, cache_enabled

_SCHEMA = """
CREATE TABLE IF NOT EXISTS modules (
    key TEXT PRIMARY KEY,
    checksum TEXT NOT NULL,
    kernels TEXT NOT NULL,
    binary BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS blobs (
    key TEXT PRIMARY KEY,
    checksum TEXT NOT NULL,
    data BLOB NOT NULL
)
"""


@functools.cache
def compiler_fingerprint() -> str:
    """Identifies the compiler: version, and the size and modification time
    of the native core and of the Python frontend and targets (cheap to read,
    and any rebuild or edit changes them)."""
    import importlib.util

    import zmlir

    root = Path(zmlir.__file__).parent
    digest = hashlib.sha256(zmlir.__version__.encode())
    spec = importlib.util.find_spec("zmlir._native")
    files = [Path(spec.origin)] if spec and spec.origin else []
    files.append(root / "compiler.py")
    for folder in ("frontend", "targets"):
        files += sorted((root / folder).rglob("*.py")) + sorted((root / folder).rglob("*.lark"))
    for path in files:
        stat = path.stat()
        digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _checksum(kernels: str, binary: bytes) -> str:
    return hashlib.sha256(kernels.encode() + b"\0" + binary).hexdigest()


class BlobCache:
    """A second table of the same file for the backends' own binaries (what
    an OpenCL driver builds from our SPIR-V), keyed by the input's hash and
    the device."""

    def __init__(self, cache: JITCache) -> None:
        self.cache = cache

    def get(self, key: str) -> bytes | None:
        try:
            row = self.cache._db().execute(
                "SELECT checksum, data FROM blobs WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError:
            self.cache._reset()
            return None
        if row is None or hashlib.sha256(bytes(row[1])).hexdigest() != row[0]:
            return None
        return bytes(row[1])

    def put(self, key: str, data: bytes) -> None:
        try:
            with self.cache._db() as db:
                db.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?, ?)",
                           (key, hashlib.sha256(data).hexdigest(), data))
        except sqlite3.DatabaseError:
            self.cache._reset()


class JITCache:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or cache_dir()
        self._local = threading.local()

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.directory / "jit.sqlite", timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            db.commit()
            self._local.db = db
        return db

    @staticmethod
    def key(ptx: str, target: Any) -> str:
        text = f"{compiler_fingerprint()}|{target.cache_key()}|"
        return hashlib.sha256(text.encode() + ptx.encode()).hexdigest()

    def get(self, key: str) -> tuple[bytes, list[dict[str, Any]]] | None:
        try:
            row = self._db().execute(
                "SELECT checksum, kernels, binary FROM modules WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError:
            self._reset()
            return None
        if row is None:
            return None
        checksum, kernels, binary = row
        if _checksum(kernels, bytes(binary)) != checksum:
            self.delete(key)  # corrupt or truncated: recompile
            return None
        try:
            return bytes(binary), json.loads(kernels)
        except json.JSONDecodeError:
            self.delete(key)
            return None

    def put(self, key: str, binary: bytes, kernels: list[dict[str, Any]]) -> None:
        text = json.dumps(kernels, sort_keys=True)
        try:
            with self._db() as db:
                db.execute("INSERT OR REPLACE INTO modules VALUES (?, ?, ?, ?)",
                           (key, _checksum(text, binary), text, binary))
        except sqlite3.DatabaseError:
            self._reset()

    def delete(self, key: str) -> None:
        try:
            with self._db() as db:
                db.execute("DELETE FROM modules WHERE key = ?", (key,))
        except sqlite3.DatabaseError:
            self._reset()

    def _reset(self) -> None:
        """A database file that is not one (damaged on disk): start over."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
        for suffix in ("", "-wal", "-shm"):
            path = self.directory / f"jit.sqlite{suffix}"
            if path.exists():
                path.unlink()


_SHARED: dict[Path, JITCache] = {}


def shared_cache() -> JITCache:
    """The process's cache for the current cache directory (one SQLite
    connection per thread, kept open)."""
    directory = cache_dir()
    if directory not in _SHARED:
        _SHARED[directory] = JITCache(directory)
    return _SHARED[directory]


def compile_cached(ptx: str, target_spec: str, filename: str) -> Any:
    """zmlir.compile_module through the cache; returns a CompiledModule."""
    import dataclasses

    from zmlir.compiled import CompiledModule, KernelInfo
    from zmlir.targets import get_target

    target = get_target(target_spec)
    # A dump (ZMLIR_DUMP_DIR) wants every stage: compile even on a hit.
    if not cache_enabled() or os.environ.get("ZMLIR_DUMP_DIR"):
        from zmlir.compiler import compile_module

        return compile_module(ptx, target, filename=filename)
    cache = shared_cache()
    key = cache.key(ptx, target)
    hit = cache.get(key)
    if hit is not None:
        binary, kernels = hit
        module = CompiledModule(target)
        module.stages["bin"] = binary
        module.kernels = {k["name"]: KernelInfo(**{**k, "params": tuple(k["params"])})
                          for k in kernels}
        return module
    from zmlir.compiler import compile_module

    module = compile_module(ptx, target, filename=filename)
    cache.put(key, module.binary, [dataclasses.asdict(k) for k in module.kernels.values()])
    return module
