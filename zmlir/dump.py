"""ZMLIR_DUMP_DIR=dir: every module compile_module() compiles is written out.

One directory per module and target, named by the PTX's hash and its first
kernel:

    dir/<sha256[:16]>-<kernel>/
        module.ptx                  the PTX as the driver got it
        <target>.ptx-mlir.mlir      the ptx dialect, as imported
        <target>.std-mlir.mlir      after the ptx-to-std pipeline
        <target>.llvm-mlir.mlir     after the LLVM dialect pipeline
        <target>.ll                 LLVM IR
        <target>.s                  target assembly (when asked for)
        <target><binary suffix>     the binary (.spv, .hsaco, ...)
        <target>.json               kernels (name, parameters, shared bytes),
                                    the source name, the stages written and
                                    the error, if compilation failed

Only modules that are compiled are written: a module the runtime's JIT cache
(zmlir/runtime/cache.py) serves is not compiled again, so run with
ZMLIR_CACHE=0 to dump everything a program loads.

Files are written atomically (a temporary name, then rename), so concurrent
compilations of the same module never leave a half-written file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

_STAGE_FILES = {"ptx-mlir": ".ptx-mlir.mlir", "std-mlir": ".std-mlir.mlir",
                "llvm-mlir": ".llvm-mlir.mlir", "llvm-ir": ".ll", "asm": ".s"}


def module_hash(ptx: str) -> str:
    return hashlib.sha256(ptx.encode()).hexdigest()[:16]


def module_dir_name(ptx: str, kernels: list[str]) -> str:
    if not kernels:
        kernels = re.findall(r"\.entry\s+([\w$.]+)", ptx)
    kernel = kernels[0] if kernels else "module"
    kernel = re.sub(r"[^\w.$-]", "_", kernel)[:80]
    return f"{module_hash(ptx)}-{kernel}"


def _write(path: Path, data: str | bytes) -> None:
    raw = data.encode() if isinstance(data, str) else data
    if path.exists() and path.stat().st_size == len(raw) and path.read_bytes() == raw:
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".dump-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def dump_module(directory: str, ptx: str, compiled: Any, filename: str,
                error: BaseException | None = None) -> Path | None:
    """Writes `compiled` (a CompiledModule, possibly partial) under `directory`.

    Never raises: a dump that cannot be written is reported on stderr.
    """
    try:
        target = compiled.target
        kernels = list(compiled.kernels)
        out = Path(directory) / module_dir_name(ptx, kernels)
        out.mkdir(parents=True, exist_ok=True)
        spec = re.sub(r"[^\w.-]", "_", _spec(target))
        _write(out / "module.ptx", ptx)
        written = []
        for stage, text in compiled.stages.items():
            if stage == "bin":
                name = spec + (target.binary_suffix or ".bin")
            else:
                name = spec + _STAGE_FILES.get(stage, f".{stage}")
            _write(out / name, text)
            written.append(name)
        info = {"source": filename, "target": _spec(target), "hash": module_hash(ptx),
                "stages": written,
                "kernels": {k: asdict(v) for k, v in compiled.kernels.items()},
                "error": None if error is None else str(error)}
        _write(out / f"{spec}.json", json.dumps(info, indent=1, default=str) + "\n")
        return out
    except Exception as err:
        print(f"zmlir: cannot dump module to {directory}: {type(err).__name__}: {err}",
              file=sys.stderr, flush=True)
        return None


def _spec(target: Any) -> str:
    spec = getattr(target, "spec", None) or getattr(target, "name", "target")
    return spec() if callable(spec) else str(spec)
