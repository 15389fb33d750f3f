"""Where the LLVM toolchain lives: one setting for the whole project.

`ZMLIR_LLVM_ROOT` names the LLVM/MLIR 22 installation prefix (default: the
Debian packages' `/usr/lib/llvm-22`). The Makefile's `LLVM_ROOT` sets it for
the tests and passes the same prefix to CMake (`-DZMLIR_LLVM_ROOT`); lit's
configuration reads it too. The compiler's targets look their tools up here
(`llc` for SPIR-V, `ld.lld` for AMDGPU and the host)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ENV = "ZMLIR_LLVM_ROOT"
DEFAULT_ROOT = "/usr/lib/llvm-22"
# The LLVM major version the project is built against: Debian also installs
# each tool on PATH with this suffix (llc-22, ld.lld-22).
MAJOR = 22


def llvm_root() -> Path:
    """The LLVM installation prefix: $ZMLIR_LLVM_ROOT, else /usr/lib/llvm-22."""
    return Path(os.environ.get(ENV) or DEFAULT_ROOT)


def llvm_bin() -> Path:
    """The directory of the LLVM tools (llc, ld.lld, FileCheck, …)."""
    return llvm_root() / "bin"


def llvm_tool_candidates(name: str) -> tuple[str, ...]:
    """Where to look for the LLVM tool `name`, in order: the configured
    prefix's bin directory, then the versioned name on PATH (`llc-22`)."""
    return (str(llvm_bin() / name), f"{name}-{MAJOR}")


def llvm_tool(name: str) -> str | None:
    """The path of the LLVM tool `name`, or None when it is not installed."""
    for candidate in llvm_tool_candidates(name):
        path = shutil.which(candidate)
        if path:
            return path
    return None


def find_lld() -> str:
    """ld.lld: $ZMLIR_LLD, else the configured prefix's, else the one on PATH."""
    override = os.environ.get("ZMLIR_LLD")
    tried: list[str] = []
    for candidate in [*([override] if override else []), *llvm_tool_candidates("ld.lld"),
                      "ld.lld"]:
        path = shutil.which(candidate)
        if path:
            return path
        tried.append(candidate)
    raise RuntimeError("ld.lld not found (tried " + ", ".join(tried) + "); install lld-22")


def link_shared(obj: bytes) -> bytes:
    """An object file linked by ld.lld into a shared library (its undefined
    symbols left for the loader)."""
    with tempfile.TemporaryDirectory(prefix="zmlir-lld-") as tmp:
        obj_path = os.path.join(tmp, "code.o")
        out_path = os.path.join(tmp, "code.so")
        with open(obj_path, "wb") as f:
            f.write(obj)
        result = subprocess.run([find_lld(), "-shared", obj_path, "-o", out_path],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"ld.lld failed: {result.stderr.strip()}")
        with open(out_path, "rb") as f:
            return f.read()
