"""Precompiled NVPTX for the CUDA passthrough backend (ZMLIR_NVPTX_CACHE=dir).

A machine with an NVIDIA GPU may have no LLVM/MLIR to run zmlir's compiler
on, so modules can be compiled ahead of time elsewhere and shipped as a
directory. An entry is keyed like the driver's module table:

    key = hashlib.sha256(ptx.encode("utf-8")).hexdigest()

where `ptx` is the PTX text the driver extracted from the application's
image (for a fatbin: the selected PTX entry's payload with trailing NULs
stripped, decoded as UTF-8 with errors="replace"). Per key and architecture
there are two files:

    <dir>/<key>.<arch>.ptx    zmlir's NVPTX output (PTX text, what cuModuleLoadData takes)
    <dir>/<key>.<arch>.json   {"target", "kernels": {name: {param_count, static_shared_bytes,
                               params, ptx_arch, local_bytes, const_bytes, max_threads,
                               max_registers}},
                               "source"}

This module imports nothing of the compiler, so it works without LLVM.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zmlir.files import write_atomically

ENV = "ZMLIR_NVPTX_CACHE"
# sm_XX and the target's features (`+native-textures`: nvptx/__init__.py).
_ARCH = re.compile(r"sm_(\d+)((?:\+[a-z-]+)*)")


# An instruction on a texture or surface: a module with one compiles apart for
# NVIDIA's texture instructions (`+native-textures`), the others the same.
_TEXTURE_INSTRUCTION = re.compile(r"\b(?:tex|tld4|txq|suld|sust|suq)\.")


def uses_textures(ptx: str) -> bool:
    """Whether `ptx` has texture or surface instructions."""
    return _TEXTURE_INSTRUCTION.search(ptx) is not None


def targets(ptx: str, arch: str) -> list[str]:
    """The targets a module of `ptx` may be compiled for on `arch` (sm_90):
    what a cache made ahead of time holds, whatever ZMLIR_NATIVE_TEXTURES is."""
    plain = f"nvptx:{arch}"
    return [plain, f"{plain}+native-textures"] if uses_textures(ptx) else [plain]


def ptx_key(ptx: str) -> str:
    """The key of a PTX text: what the driver hashes for its module table."""
    return hashlib.sha256(ptx.encode()).hexdigest()


@dataclass(frozen=True)
class CachedKernel:
    """The fields of zmlir.KernelInfo the driver and backends read."""

    name: str
    param_count: int
    static_shared_bytes: int
    params: tuple[str, ...] = ()
    ptx_arch: int = 0
    local_bytes: int = 0
    const_bytes: int = 0
    max_threads: int = 0
    max_registers: int = 0


@dataclass(frozen=True)
class CachedModule:
    """Stands in for a zmlir.CompiledModule built for an NVPTX target: the
    driver reads `kernels`, the backend `binary`."""

    target: str
    binary: bytes
    kernels: dict[str, CachedKernel] = field(default_factory=dict)
    source: str = ""


def _arch_of(target: str) -> str:
    return target.split(":", 1)[1] if ":" in target else "sm_80"


def store(directory: Path, key: str, compiled: Any, source: str = "") -> Path:
    """Writes a compiled NVPTX module under `key`; returns the .ptx path."""
    target = compiled.target if isinstance(compiled.target, str) else compiled.target.spec
    arch = _arch_of(target)
    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        "target": target,
        "source": source,
        "kernels": {name: {"param_count": k.param_count,
                           "static_shared_bytes": k.static_shared_bytes,
                           "params": list(k.params), "ptx_arch": k.ptx_arch,
                           "local_bytes": k.local_bytes,
                           "const_bytes": k.const_bytes, "max_threads": k.max_threads,
                           "max_registers": k.max_registers}
                    for name, k in compiled.kernels.items()},
    }
    ptx_path = directory / f"{key}.{arch}.ptx"
    write_atomically(ptx_path, compiled.binary)
    # The metadata last: an entry is complete once its .json exists.
    write_atomically(directory / f"{key}.{arch}.json", json.dumps(meta, indent=1).encode())
    return ptx_path


def lookup(directory: Path, key: str, arch: str) -> CachedModule | None:
    """The entry for `key` built for `arch` or, failing that, for the newest
    architecture below it (PTX for an older sm runs on newer GPUs), with the
    same features (`sm_90+native-textures`: NVIDIA's texture instructions)."""
    wanted = _sm_number(arch)
    candidates = []
    for meta_path in directory.glob(f"{key}.sm_*.json"):
        name = meta_path.name[len(key) + 1:-len(".json")]
        have = _sm_number(name)
        if have is not None and wanted is not None and have <= wanted \
                and _features(name) == _features(arch):
            candidates.append((have, meta_path))
    # Newest first; an entry that does not read back whole (damaged,
    # truncated, hand-edited) is skipped as if absent: the module compiles.
    for _, meta_path in sorted(candidates, reverse=True):
        try:
            return _read_entry(meta_path)
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return None


def _read_entry(meta_path: Path) -> CachedModule:
    meta = json.loads(meta_path.read_text())
    kernels = {str(name): CachedKernel(str(name), int(k["param_count"]),
                                       int(k["static_shared_bytes"]),
                                       tuple(str(p) for p in k.get("params", ())),
                                       int(k.get("ptx_arch", 0)),
                                       int(k.get("local_bytes", 0)),
                                       int(k.get("const_bytes", 0)),
                                       int(k.get("max_threads", 0)),
                                       int(k.get("max_registers", 0)))
               for name, k in meta["kernels"].items()}
    source = meta.get("source", "")
    if not isinstance(meta["target"], str) or not isinstance(source, str):
        raise TypeError("target and source are strings")
    return CachedModule(meta["target"], meta_path.with_suffix(".ptx").read_bytes(), kernels,
                        source)


def _sm_number(arch: str) -> int | None:
    match = _ARCH.fullmatch(arch)
    return int(match.group(1)) if match else None


def _features(arch: str) -> str:
    match = _ARCH.fullmatch(arch)
    return match.group(2) if match else ""
