"""The compilation driver: PTX text -> ptx dialect -> std dialects -> LLVM IR
-> target assembly or binary, stopping at any stage."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass

from zmlir import _native
from zmlir.compiled import CompiledModule, KernelInfo
from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import parse_ptx
from zmlir.frontend.ast import Function, Param
from zmlir.frontend.collector import without_collector
from zmlir.frontend.importer import import_module
from zmlir.frontend.stream import STREAM_MIN_BYTES, import_streamed
from zmlir.targets import Target, get_target
from zmlir.targets.base import IMPORT_STAGE, KERNEL_METADATA_STAGE


def _native_error(err: RuntimeError, filename: str) -> CompileError:
    """The first MLIR diagnostic as a CompileError (file:line:col kept)."""
    first = str(err).splitlines()[0] if str(err) else "compilation failed"
    head, sep, message = first.partition(": error: ")
    if sep:
        parts = head.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            return CompileError(message, parts[0], SourceLoc(int(parts[1]), int(parts[2])))
        return CompileError(message, filename)
    return CompileError(first, filename)


# The buffer name the importer's output is parsed under: a parse error there is
# located in the generated MLIR, never in the user's PTX.
IMPORTED_BUFFER = "<zmlir importer output>"
_LOC = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+):(\d+)\)')


def _importer_error(err: RuntimeError, imported: str, filename: str) -> CompileError | None:
    """A parse error in the importer's output as an internal error (the importer's bug,
    not the user's), at the PTX instruction the offending MLIR line came from if it
    has one; None for any other error."""
    first = str(err).splitlines()[0] if str(err) else ""
    m = re.match(re.escape(IMPORTED_BUFFER) + r":(\d+):(\d+): error: (.*)", first)
    if not m:
        return None
    line, col, message = int(m[1]), int(m[2]), m[3]
    lines = imported.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    ptx = _LOC.search(text)
    code = _LOC.sub("", text).strip()
    return CompileError(
        f"internal error: the importer produced invalid MLIR: {message} "
        f"(line {line}:{col} of its output: `{code}`)",
        filename, SourceLoc(int(ptx[2]), int(ptx[3])) if ptx else None)


def _param_type(param: Param) -> str:
    """A kernel parameter's type for the launcher (KernelInfo.params)."""
    if param.dims:
        count = 1
        for d in param.dims:
            count *= d or 0
        align = f"align {param.align} " if param.align else ""
        return f"{align}{param.type}[{count}]"
    return param.type


@dataclass
class Imported:
    """A PTX module parsed, imported into the ptx dialect and verified by MLIR."""

    text: str | None  # the importer's MLIR text, when kept
    module: _native.Module | None  # the verified module, when kept whole (see import_ptx)
    printed: str | None  # MLIR's print of it (the `ptx-mlir` stage), when asked for
    param_types: dict[str, tuple[str, ...]]  # each kernel's parameter types


@without_collector
def import_ptx(ptx: str, filename: str = "<input>", *, jobs: int = 1,
               stream_min: int = STREAM_MIN_BYTES, printed: bool = False,
               keep_text: bool = True, whole: bool = False) -> Imported:
    """Parse, import and verify; with `printed`, also print the verified
    module; without `keep_text`, keep no importer text (nor module) after.

    A module of `stream_min` bytes or more is imported one function at a
    time (zmlir/frontend/stream.py), in `jobs` processes, each batch verified
    where it is imported, so neither its AST nor its MLIR is ever held
    whole; a smaller one is parsed whole and kept as one verified module.
    With `whole` (and `keep_text`, not `printed`: the lowering's input), a
    streamed import is kept as one verified module too, verified once
    instead of batch by batch.
    """
    if len(ptx) >= stream_min:
        in_batches = not (whole and keep_text and not printed)
        # None for a module with an error: the whole-module path below reports it.
        streamed = import_streamed(ptx, filename, jobs=jobs, verify=in_batches,
                                   keep_text=keep_text, keep_printed=printed,
                                   buffer=IMPORTED_BUFFER)
        if streamed is not None:
            param_types = _param_types(streamed.entries)
            if not in_batches:
                text = streamed.text()
                return Imported(text, _verified(text, filename), None, param_types)
            return Imported(streamed.text() if keep_text else None, None,
                            streamed.printed() if printed else None, param_types)
    parsed = parse_ptx(ptx, filename)
    param_types = _param_types(fn for fn in parsed.functions if fn.kind == "entry")
    imported = import_module(parsed, filename)
    del parsed
    module = _verified(imported, filename)
    text = module.text() if printed else None
    if not keep_text:
        return Imported(None, None, text, param_types)
    return Imported(imported, module, text, param_types)


def _param_types(entries: Iterable[Function]) -> dict[str, tuple[str, ...]]:
    """Each kernel's parameter types."""
    return {fn.name: tuple(_param_type(p) for p in fn.params) for fn in entries}


def _verified(imported: str, filename: str) -> _native.Module:
    """The importer's text parsed and verified by MLIR."""
    try:
        return _native.Module(imported, IMPORTED_BUFFER)
    except RuntimeError as err:
        raise _importer_error(err, imported, filename) or _native_error(err, filename) from None


def compile_module(ptx: str, target: str | Target = "spirv", *, emit: str = "bin",
                   filename: str = "<input>", jobs: int = 1,
                   stream_min: int = STREAM_MIN_BYTES) -> CompiledModule:
    """Compiles PTX for `target` up to stage `emit` (one of the target's
    stage_names(): the import, then the target's own stages).

    `jobs` > 1 parses and imports a big module's functions in that many
    worker processes (forked from a server process, so only where starting
    processes is safe: not from inside an application that loaded our
    libcuda); `stream_min` is the size from which a module is imported one
    function at a time.
    """
    tgt = get_target(target) if isinstance(target, str) else target
    names = tgt.stage_names()
    if emit not in names:
        raise ValueError(f"unknown stage '{emit}' for target '{tgt.name}' "
                         f"(expected one of {', '.join(names)})")
    out = CompiledModule(tgt)
    if (refused := tgt.refuses_ptx_arch(_ptx_arch(ptx))) is not None:
        raise CompileError(refused, filename)
    dumping = bool(os.environ.get("ZMLIR_DUMP_DIR"))
    importing_only = emit == IMPORT_STAGE
    try:
        started = time.perf_counter()
        imported = import_ptx(ptx, filename, jobs=jobs, stream_min=stream_min,
                              printed=importing_only or dumping, keep_text=not importing_only,
                              whole=not importing_only)
        out.seconds[IMPORT_STAGE] = time.perf_counter() - started
        if imported.printed is not None:
            out.stages[IMPORT_STAGE] = imported.printed
        if importing_only:
            return out
        carried: object = imported.module
        if carried is None:
            assert imported.text is not None
            carried = _verified(imported.text, filename)
        for stage in tgt.stages():
            if stage.goal_only and stage.name != emit:
                continue
            started = time.perf_counter()
            carried, out.stages[stage.name] = stage.run(carried)
            out.seconds[stage.name] = time.perf_counter() - started
            if stage.name == KERNEL_METADATA_STAGE:
                out.kernels = _kernels(out.stages[stage.name], imported.param_types,
                                       _ptx_arch(ptx))
            if stage.name == emit:
                break
        return out
    except RuntimeError as err:
        raise _native_error(err, filename) from None
    finally:
        if dumping:  # every compiled module written out
            from zmlir.dump import dump_module

            dump_module(os.environ["ZMLIR_DUMP_DIR"], ptx, out, filename, sys.exc_info()[1])


def _kernels(std: str | bytes, param_types: dict[str, tuple[str, ...]],
             ptx_arch: int) -> dict[str, KernelInfo]:
    """The kernels' metadata, from the lowering's attributes on them."""
    assert isinstance(std, str)
    kernels = {}
    for name, attrs in _native.kernel_attributes(std):
        values = dict(attrs)
        if "grid_variant_x" in values:
            continue  # another form of a kernel, which the backend picks at launch
        kernels[name] = KernelInfo(name, values.get("param_count", 0),
                                   values.get("static_shared_bytes", 0),
                                   param_types.get(name, ()), ptx_arch,
                                   local_bytes=values.get("local_bytes", 0),
                                   const_bytes=values.get("const_bytes", 0),
                                   max_threads=values.get("max_threads", 0),
                                   max_registers=values.get("max_registers", 0),
                                   linear_blocks=bool(values.get("linear_blocks", 0)))
    return kernels


_TARGET = re.compile(r"^[ \t]*\.target[ \t]+sm_(\d+)", re.MULTILINE)


def _ptx_arch(ptx: str) -> int:
    """The architecture of the module's `.target sm_XX` directive (0: none)."""
    match = _TARGET.search(ptx)
    return int(match.group(1)) if match else 0


def compile(ptx: str, target: str = "spirv", *, filename: str = "<input>") -> bytes:
    """PTX text -> the target's binary (SPIR-V, HSACO, or PTX for NVPTX)."""
    return compile_module(ptx, target, filename=filename).binary
