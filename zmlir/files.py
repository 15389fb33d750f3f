"""Small file helpers shared by the compiler and the runtime."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: str | Path, data: bytes) -> None:
    """Writes all of `data` or nothing: a failure leaves no partial file.

    Only regular files are replaced by renaming; a device or pipe (`-o
    /dev/null`, `-o /dev/stdout`) is written in place, never replaced."""
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "wb") as f:
            f.write(data)
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".zmlir-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def cache_enabled() -> bool:
    """Whether zmlir keeps caches on disk (ZMLIR_CACHE=0 turns them off)."""
    return os.environ.get("ZMLIR_CACHE", "1") not in ("0", "off", "false", "no")


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/zmlir, or ZMLIR_CACHE_DIR."""
    if "ZMLIR_CACHE_DIR" in os.environ:
        return Path(os.environ["ZMLIR_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "zmlir"
