"""Make the Intel OpenCL CPU runtime from PyPI visible to the ICD loader of this process.

`pip install intel-opencl-rt intel-cmplr-lib-rt 'tbb==2023.*'` puts `libintelocl.so` and the
libraries it needs into `<sys.prefix>/lib`, which is neither registered with the ICD loader
(no `/etc/OpenCL/vendors/*.icd`) nor on the dynamic linker's path. `ensure_icd()` fixes both
from inside the process, so that `import zmlir.runtime` works without a wrapper script:

1. find `libintelocl.so` (`ZMLIR_OPENCL_ICD` overrides the fixed search order);
2. pre-load its dependencies with RTLD_GLOBAL, dependencies first. The runtime's own DT_NEEDED
   entries would resolve through its `$ORIGIN` RUNPATH, but libraries loaded later by soname
   (TBB's allocator and thread-composability manager, for instance) would not, and
   LD_LIBRARY_PATH is read only at process start;
3. write an ICD vendors directory holding `intel.icd` (the absolute library path) and point
   `OCL_ICD_VENDORS` at it. Both ocl-icd and the Khronos loader read the variable when they
   first enumerate platforms, i.e. after this ran, as long as nobody called OpenCL before.

The loader dlopen()s the library every `*.icd` file of that directory names, so the directory
must be one no other user can write: `<cache>/icd/<key>` (files.private_dir checks each level:
ours, no group or other write, no foreign symlink), else a fresh `mkdtemp` directory of this
process (removed at exit), never a fixed name in /tmp that another user could create first.
What is read back is not trusted: an `intel.icd` that is not exactly the line we would write
(damaged, a directory, a symlink) is rewritten, and any other `*.icd` there is removed.

Pointing OCL_ICD_VENDORS at our directory hides the system's ICDs (e.g. PoCL) from this
process; the launcher still selects the platform by SPIR-V support rather than trusting order.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import shutil
import site
import stat
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from zmlir.files import cache_dir, private_dir

RUNTIME_LIBRARY = "libintelocl.so"

# Dependencies before dependants. TBB dlopen()s its thread-composability manager `libtcm.so.1`
# by soname while it initialises and, without it on the search path, silently runs without it;
# loading libtcm (and its libhwloc) first makes that dlopen find the already-loaded copy.
# (soname, required): a missing optional one is skipped.
_PRELOAD_ORDER: tuple[tuple[str, bool], ...] = (
    ("libhwloc.so.15", False),
    ("libtcm.so.1", False),
    ("libintlc.so.5", True),
    ("libimf.so", True),
    ("libsvml.so", True),
    ("libirng.so", True),
    ("libtbb.so.12", True),
    ("libtbbmalloc.so.2", False),
)
_COMMON_CLANG_PREFIX = "libcommon_clang.so."


class IntelRuntimeNotFound(RuntimeError):
    """The Intel OpenCL CPU runtime is not installed where we look."""


@dataclass(frozen=True)
class IntelRuntime:
    library: Path  # absolute path of libintelocl.so
    icd_dir: Path  # the directory OCL_ICD_VENDORS points at

    @property
    def lib_dir(self) -> Path:
        return self.library.parent


def candidate_paths() -> list[Path]:
    """Where `libintelocl.so` is looked for, in order (the override alone when it is set)."""
    override = os.environ.get("ZMLIR_OPENCL_ICD")
    if override:
        return [Path(override)]
    prefixes = [sys.prefix, sys.base_prefix, site.getuserbase()]
    paths: list[Path] = []
    for prefix in prefixes:
        path = Path(prefix) / "lib" / RUNTIME_LIBRARY
        if path not in paths:
            paths.append(path)
    return paths


def find_runtime_library() -> Path:
    tried = candidate_paths()
    for path in tried:
        if path.is_file():
            return path.resolve()
    listing = "\n".join(f"  {path}" for path in tried)
    raise IntelRuntimeNotFound(
        f"Intel OpenCL CPU runtime ({RUNTIME_LIBRARY}) not found; install it with "
        "`pip install intel-opencl-rt intel-cmplr-lib-rt 'tbb==2023.*'` or set "
        f"ZMLIR_OPENCL_ICD to its path. Tried:\n{listing}"
    )


def _preload_mode() -> int:
    """RTLD_GLOBAL, but where glibc cannot add to the global scope: in the
    link-map namespace our libcuda.so.1 loads its implementation into inside
    a Python host (runtime/cuda/shim.c; glibc before 2.37 crashes on it there).
    Loaded objects are still found by soname, which is what the preload is for."""
    return ctypes.RTLD_LOCAL if os.environ.get("ZMLIR_LINK_NAMESPACE") else ctypes.RTLD_GLOBAL


def _preload_dependencies(lib_dir: Path) -> None:
    mode = _preload_mode()
    for soname, required in _PRELOAD_ORDER:
        path = lib_dir / soname
        if not path.exists():
            if required:
                raise IntelRuntimeNotFound(
                    f"{path} is missing: the Intel runtime needs it (reinstall "
                    "intel-cmplr-lib-rt and tbb==2023.* into this environment)"
                )
            continue
        ctypes.CDLL(str(path), mode=mode)
    # libcommon_clang (the SPIR-V/OpenCL C front end) carries the runtime's version in its
    # soname, so match it rather than hard-coding a release.
    for path in sorted(lib_dir.glob(_COMMON_CLANG_PREFIX + "*")):
        ctypes.CDLL(str(path), mode=mode)


def _icd_base_dir() -> Path:
    return cache_dir() / "icd"


def _read_small(path: Path, limit: int = 1 << 16) -> bytes | None:
    """The bytes of a regular file at `path` (no symlink followed), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > limit:
            return None
        return os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _fill_vendors_dir(directory: Path, content: bytes) -> None:
    """Makes `intel.icd` (holding `content`) the only ICD file of `directory`."""
    icd_file = directory / "intel.icd"
    for entry in os.scandir(directory):
        if entry.name.endswith(".icd") and entry.name != "intel.icd":
            os.unlink(entry.path)  # a loader would load it too
    if _read_small(icd_file) == content:
        return
    if icd_file.is_dir() and not icd_file.is_symlink():
        os.rmdir(icd_file)  # an empty one; OSError otherwise
    # Write then rename, so a concurrent process never reads a half-written file.
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".intel.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.replace(tmp, icd_file)
    except BaseException:
        os.unlink(tmp)
        raise


def _write_vendors_dir(library: Path) -> Path:
    """A directory with one `intel.icd`; keyed by the library path so venvs do not clash."""
    key = hashlib.sha256(str(library).encode()).hexdigest()[:16]
    content = f"{library}\n".encode()
    directory = _icd_base_dir() / key
    try:
        for level in (cache_dir(), _icd_base_dir(), directory):
            private_dir(level)
        _fill_vendors_dir(directory, content)
        return directory
    except OSError as err:
        cache_error = err  # unwritable or foreign cache (read-only home, say)
    try:
        directory = Path(tempfile.mkdtemp(prefix="zmlir-icd-"))  # 0700, a fresh name
    except OSError as err:
        raise IntelRuntimeNotFound(
            f"could not write an ICD vendors directory under {_icd_base_dir()} "
            f"({cache_error}) or the temp dir ({err})") from None
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    _fill_vendors_dir(directory, content)
    return directory


@cache
def ensure_icd() -> IntelRuntime:
    """Register the Intel CPU runtime for this process (idempotent); see the module docstring."""
    library = find_runtime_library()
    _preload_dependencies(library.parent)
    # RTLD_LOCAL: fail early with a clear error, but keep its cl* symbols from interposing on
    # the ICD loader's own exports.
    ctypes.CDLL(str(library), mode=ctypes.RTLD_LOCAL)
    icd_dir = _write_vendors_dir(library)
    os.environ["OCL_ICD_VENDORS"] = str(icd_dir)
    # ocl-icd would otherwise also load the libraries named here, outside our control.
    os.environ.pop("OCL_ICD_FILENAMES", None)
    return IntelRuntime(library=library, icd_dir=icd_dir)
