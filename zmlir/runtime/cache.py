"""The JIT cache: compiled modules on disk, in one SQLite file under
$XDG_CACHE_HOME/zmlir (ZMLIR_CACHE=0 turns it off, ZMLIR_CACHE_DIR moves it).

The key is a hash of the PTX, the target (its options and LLVM version) and a
fingerprint of the compiler itself (the native core and the Python sources
that shape the output), so a changed compiler never serves stale code. Each
entry carries a checksum of its payload: a corrupt or truncated entry is
deleted and recompiled, and so is a database file that is not one. SQLite's
transactions make writes atomic, and its locking (WAL, a busy timeout) lets
processes share the file.

A cache that cannot be used (its directory is a file or unwritable, HOME is
read-only, `jit.sqlite` is a directory, SQLite cannot open or write it) never
fails a compile: the process compiles without it and says so once, one
`zmlir: warning:` line on stderr (ZMLIR_CACHE=0 silences it). Compiled code
is code this process runs, so the cache is used only where no other user can
write (files.private_dir): a directory or file another user owns or may
write is such a cache too.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

from zmlir.files import cache_dir, cache_enabled, check_private_file, private_dir

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


def fingerprint_compiler() -> None:
    """Takes the fingerprint now, before the process imports any of the
    compiler: taken after, a process whose compiler files changed in between
    (an edit, a rebuild) would store code of the old files under the new
    files' key."""
    with contextlib.suppress(OSError):  # no compiler here: precompiled modules only
        compiler_fingerprint()


def _checksum(kernels: str, binary: bytes) -> str:
    return hashlib.sha256(kernels.encode() + b"\0" + binary).hexdigest()


class BlobCache:
    """A second table of the same file for the backends' own binaries (what
    an OpenCL driver builds from our SPIR-V), keyed by the input's hash and
    the device."""

    def __init__(self, cache: JITCache) -> None:
        self.cache = cache

    def get(self, key: str) -> bytes | None:
        row = self.cache._query("SELECT checksum, data FROM blobs WHERE key = ?", (key,))
        if row is None or not isinstance(row[1], bytes) \
                or hashlib.sha256(row[1]).hexdigest() != row[0]:
            return None
        return row[1]

    def put(self, key: str, data: bytes) -> None:
        self.cache._write("INSERT OR REPLACE INTO blobs VALUES (?, ?, ?)",
                          (key, hashlib.sha256(data).hexdigest(), data))


class JITCache:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or cache_dir()
        self._local = threading.local()
        self.unusable: str | None = None  # why, once the cache failed

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            private_dir(self.directory)
            path = self.directory / "jit.sqlite"
            check_private_file(path)
            db = sqlite3.connect(path, timeout=30)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
                db.commit()
            except BaseException:
                db.close()
                raise
            self._local.db = db
        return db

    def _run(self, action: Any) -> Any:
        """action(db) on the database; a damaged file is replaced once, any
        other failure turns the cache off for this process. None when the
        cache is off."""
        for attempt in (0, 1):
            if self.unusable is not None:
                return None
            try:
                return action(self._db())
            except (OSError, sqlite3.Error) as err:
                # Damage is a plain DatabaseError ("file is not a database",
                # "database disk image is malformed"); its subclasses (cannot
                # open, read-only, locked: OperationalError) are not.
                if type(err) is sqlite3.DatabaseError and not attempt:
                    self._reset()
                else:
                    self._disable(err)
        return None

    def _query(self, sql: str, args: tuple[Any, ...]) -> Any:
        return self._run(lambda db: db.execute(sql, args).fetchone())

    def _write(self, sql: str, args: tuple[Any, ...]) -> None:
        def write(db: sqlite3.Connection) -> None:
            with db:
                db.execute(sql, args)

        self._run(write)

    @staticmethod
    def key(ptx: str, target: Any) -> str:
        text = f"{compiler_fingerprint()}|{target.cache_key()}|"
        return hashlib.sha256(text.encode() + ptx.encode()).hexdigest()

    def get(self, key: str) -> tuple[bytes, list[dict[str, Any]]] | None:
        row = self._query("SELECT checksum, kernels, binary FROM modules WHERE key = ?", (key,))
        if row is None:
            return None
        checksum, kernels, binary = row
        if not isinstance(kernels, str) or not isinstance(binary, bytes) \
                or _checksum(kernels, binary) != checksum:
            self.delete(key)  # corrupt or truncated: recompile
            return None
        try:
            return binary, json.loads(kernels)
        except json.JSONDecodeError:
            self.delete(key)
            return None

    def put(self, key: str, binary: bytes, kernels: list[dict[str, Any]]) -> None:
        text = json.dumps(kernels, sort_keys=True)
        self._write("INSERT OR REPLACE INTO modules VALUES (?, ?, ?, ?)",
                    (key, _checksum(text, binary), text, binary))

    def delete(self, key: str) -> None:
        self._write("DELETE FROM modules WHERE key = ?", (key,))

    def _close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    def _reset(self) -> None:
        """A database file that is not one (damaged on disk): start over."""
        self._close()
        for suffix in ("", "-wal", "-shm"):
            path = self.directory / f"jit.sqlite{suffix}"
            try:
                if check_private_file(path):
                    path.unlink()
            except OSError as err:
                self._disable(err)
                return

    def _disable(self, err: BaseException) -> None:
        """Compiles go on without the cache; the first cache of the process
        to fail says so, once."""
        self._close()
        self.unusable = str(err) or type(err).__name__
        global _WARNED
        if not _WARNED:
            _WARNED = True
            print(f"zmlir: warning: JIT cache {self.directory} is unusable ({self.unusable}); "
                  "compiling without it (set ZMLIR_CACHE_DIR to a directory of yours, or "
                  "ZMLIR_CACHE=0)", file=sys.stderr, flush=True)


_WARNED = False
_SHARED: dict[Path, JITCache] = {}


def shared_cache() -> JITCache:
    """The process's cache for the current cache directory (one SQLite
    connection per thread, kept open)."""
    directory = cache_dir()
    if directory not in _SHARED:
        _SHARED[directory] = JITCache(directory)
    return _SHARED[directory]


def cached_partition(ptx: str, filename: str) -> Any:
    """The index of `ptx` to compile it a part at a time
    (frontend.partition), its declarations checked (Partition.check): from
    the cache where an earlier load made it (a big module's takes seconds).
    None where the module cannot be parted; a CompileError where the check
    fails."""
    from zmlir.frontend.partition import Partition, partition

    blobs = BlobCache(shared_cache()) if cache_enabled() else None
    key = hashlib.sha256(f"{compiler_fingerprint()}|partition|".encode()
                         + ptx.encode()).hexdigest()
    data = blobs.get(key) if blobs is not None else None
    if data is not None:
        try:  # what the disk holds is checked, never trusted
            return Partition.from_json(ptx, data.decode())
        except (ValueError, KeyError, TypeError):
            pass
    index = partition(ptx)
    if index is None:
        return None
    index.check(filename)
    if blobs is not None:
        blobs.put(key, index.to_json().encode())
    return index


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
        try:  # what the disk holds is checked, never trusted
            module.kernels = {k["name"]: KernelInfo(**{**k, "params": tuple(k["params"])})
                              for k in kernels}
        except (TypeError, KeyError, ValueError):
            cache.delete(key)
        else:
            return module
    from zmlir.compiler import compile_module

    module = compile_module(ptx, target, filename=filename)
    cache.put(key, module.binary, [dataclasses.asdict(k) for k in module.kernels.values()])
    return module
