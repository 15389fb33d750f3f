"""The ICD vendors directory the OpenCL backend writes (icd.py): the loader
dlopen()s what its files name, so it must live where no other user can
write, and whatever is found there is checked, never trusted."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from zmlir.runtime.backends.opencl import icd

LIBRARY = Path("/opt/example/lib/libintelocl.so")
CONTENT = f"{LIBRARY}\n"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZMLIR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _is_private(directory: Path) -> bool:
    st = directory.lstat()
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() \
        and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _only_ours(directory: Path) -> None:
    assert _is_private(directory)
    assert sorted(p.name for p in directory.glob("*.icd")) == ["intel.icd"]
    assert (directory / "intel.icd").read_text() == CONTENT


def test_written_under_the_cache(cache: Path) -> None:
    directory = icd._write_vendors_dir(LIBRARY)
    assert directory.parent == cache / "icd"
    _only_ours(directory)
    assert icd._write_vendors_dir(LIBRARY) == directory


def test_damaged_file_is_rewritten(cache: Path) -> None:
    directory = icd._write_vendors_dir(LIBRARY)
    (directory / "intel.icd").write_bytes(b"\xff\xfe\0 garbage")  # once: UnicodeDecodeError
    (directory / "stray.icd").write_text("/tmp/libstray.so\n")
    assert icd._write_vendors_dir(LIBRARY) == directory
    _only_ours(directory)


def test_file_that_is_a_directory_or_symlink_is_replaced(cache: Path, tmp_path: Path) -> None:
    directory = icd._write_vendors_dir(LIBRARY)
    (directory / "intel.icd").unlink()
    (directory / "intel.icd").mkdir()
    assert icd._write_vendors_dir(LIBRARY) == directory
    _only_ours(directory)
    (tmp_path / "elsewhere.icd").write_text(CONTENT)
    (directory / "intel.icd").unlink()
    (directory / "intel.icd").symlink_to(tmp_path / "elsewhere.icd")
    assert icd._write_vendors_dir(LIBRARY) == directory
    assert not (directory / "intel.icd").is_symlink()
    _only_ours(directory)


def test_unusable_cache_gives_a_fresh_private_dir(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("ZMLIR_CACHE_DIR", str(tmp_path / "file"))
    directory = icd._write_vendors_dir(LIBRARY)
    assert directory.parent == Path(tempfile.gettempdir())
    assert directory.name.startswith("zmlir-icd-")
    _only_ours(directory)
    assert icd._write_vendors_dir(LIBRARY) != directory  # never a name chosen in advance


@as_root
def test_planted_directory_of_another_user_is_refused(cache: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Another local user creates the directory first, with their own ICD file
    # (the old fallback, /tmp/zmlir-<uid>-icd/<key>, was such a fixed name).
    key_dir = icd._write_vendors_dir(LIBRARY)
    (key_dir / "intel.icd").write_text("/home/mallory/libevil.so\n")
    os.chown(key_dir / "intel.icd", 12345, 12345)
    os.chown(key_dir, 12345, 12345)
    key_dir.chmod(0o755)
    directory = icd._write_vendors_dir(LIBRARY)
    assert directory != key_dir
    _only_ours(directory)
    assert (key_dir / "intel.icd").read_text() == "/home/mallory/libevil.so\n"  # untouched


def test_directory_others_may_write_is_refused(cache: Path) -> None:
    key_dir = icd._write_vendors_dir(LIBRARY)
    key_dir.chmod(0o777)
    directory = icd._write_vendors_dir(LIBRARY)
    assert directory != key_dir
    _only_ours(directory)
    (cache / "icd").chmod(0o775)  # a level above: it could swap the key directory
    key_dir.chmod(0o700)
    assert icd._write_vendors_dir(LIBRARY) != key_dir


@as_root
def test_symlink_of_another_user_is_refused(cache: Path, tmp_path: Path) -> None:
    key_dir = icd._write_vendors_dir(LIBRARY)
    target = tmp_path / "theirs"
    target.mkdir(mode=0o700)
    key_dir.rename(tmp_path / "moved")
    key_dir.symlink_to(target)
    os.lchown(key_dir, 12345, 12345)
    directory = icd._write_vendors_dir(LIBRARY)
    assert directory != key_dir
    assert list(target.iterdir()) == []
    _only_ours(directory)
