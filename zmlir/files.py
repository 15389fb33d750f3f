"""Small file helpers shared by the compiler and the runtime."""

from __future__ import annotations

import contextlib
import os
import stat
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


class UnsafePath(OSError):
    """A path zmlir would read code or cached data from that another user
    could have written (or that is not what zmlir put there)."""


def _check_owned(st: os.stat_result, path: Path, kind: str) -> None:
    if st.st_uid != os.geteuid():
        raise UnsafePath(f"{path} is owned by uid {st.st_uid}, not by this user "
                         f"(uid {os.geteuid()})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafePath(f"{path}: other users may write this {kind} "
                         f"(mode {stat.S_IMODE(st.st_mode):o}; `chmod go-w` it)")


def private_dir(path: str | Path) -> Path:
    """Creates `path` (mode 0700, its missing parents too) unless it exists,
    then checks that only this user can change what is in it: a directory
    owned by the effective uid without group or other write permission.

    A symlink is followed only if this user owns it (another user's link in
    /tmp, say, is refused: O_NOFOLLOW). The checks run on the opened
    directory (fstat), so nothing can be swapped in between. Raises OSError
    (UnsafePath for a directory that exists but is not private)."""
    path = Path(path)
    with contextlib.suppress(FileExistsError):
        if not path.parent.exists():
            os.makedirs(path.parent, 0o700, exist_ok=True)
        os.mkdir(path, 0o700)
    flags = os.O_RDONLY | os.O_DIRECTORY
    link = os.lstat(path)
    if stat.S_ISLNK(link.st_mode):
        _check_owned(link, path, "symlink")
    else:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except NotADirectoryError:
        raise NotADirectoryError(f"{path} is not a directory") from None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    _check_owned(st, path, "directory")
    return path


def check_private_file(path: str | Path) -> bool:
    """Whether `path` exists, checked like private_dir's directories: False
    when it does not exist; a regular file (not a symlink) owned by this
    user that others cannot write: True; anything else raises OSError."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePath(f"{path} is not a regular file")
    _check_owned(st, path, "file")
    return True
