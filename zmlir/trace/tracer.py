"""Driver API call tracing: ZMLIR_TRACE=file.jsonl writes one JSON line per
call into the driver (our libcuda.so.1, whose driver.bind installs a Tracer,
or NVIDIA's through the interposer in interposer.py, which uses this same
Tracer).

The first line is a header ({"trace": "zmlir", ...}); every other line is one
call:

    {"seq": 12, "tid": 4711, "t": 1834.2, "dur": 3.1, "api": "cuMemAlloc_v2",
     "args": {"*dptr": "0x7f3a00000000", "bytesize": 4096},
     "result": 0, "result_name": "CUDA_SUCCESS"}

seq is the order calls were entered (from 1); t the start in microseconds
since the tracer started and dur the call's duration in microseconds; tid the
OS thread id. Arguments are named and decoded from the C declarations in
api.py: handles and pointers as hex strings, sizes and flags as integers,
char* as strings; an output parameter `p` is written as "*p" with the value
the driver stored (successful calls only). cuLaunchKernel gets "kernel",
"grid" and "block". Export-table slots are traced as
"export_table:<TABLE>:<slot>".

Each line is written with one write(2) on an O_APPEND descriptor, so a
process that crashes or calls _exit() loses nothing: there is no buffer to
flush, and the file is complete at every moment. Nothing here imports the
compiler or the runtime (only the API declarations, zmlir/runtime/cuda/api.py):
the interposer loads this module without our toolchain.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import threading
import time
import uuid as _uuid
from collections.abc import Callable
from typing import Any

from zmlir.runtime.cuda import api

FORMAT_VERSION = 1

# CUresult names of CUDA 12/13's cuda.h (more than our driver returns: the
# interposer records NVIDIA's codes too).
RESULT_NAMES = {
    0: "SUCCESS", 1: "INVALID_VALUE", 2: "OUT_OF_MEMORY", 3: "NOT_INITIALIZED",
    4: "DEINITIALIZED", 5: "PROFILER_DISABLED", 6: "PROFILER_NOT_INITIALIZED",
    7: "PROFILER_ALREADY_STARTED", 8: "PROFILER_ALREADY_STOPPED", 34: "STUB_LIBRARY",
    46: "DEVICE_UNAVAILABLE", 100: "NO_DEVICE", 101: "INVALID_DEVICE",
    102: "DEVICE_NOT_LICENSED", 200: "INVALID_IMAGE", 201: "INVALID_CONTEXT",
    202: "CONTEXT_ALREADY_CURRENT", 205: "MAP_FAILED", 206: "UNMAP_FAILED",
    207: "ARRAY_IS_MAPPED", 208: "ALREADY_MAPPED", 209: "NO_BINARY_FOR_GPU",
    210: "ALREADY_ACQUIRED", 211: "NOT_MAPPED", 212: "NOT_MAPPED_AS_ARRAY",
    213: "NOT_MAPPED_AS_POINTER", 214: "ECC_UNCORRECTABLE", 215: "UNSUPPORTED_LIMIT",
    216: "CONTEXT_ALREADY_IN_USE", 217: "PEER_ACCESS_UNSUPPORTED", 218: "INVALID_PTX",
    219: "INVALID_GRAPHICS_CONTEXT", 220: "NVLINK_UNCORRECTABLE",
    221: "JIT_COMPILER_NOT_FOUND", 222: "UNSUPPORTED_PTX_VERSION",
    223: "JIT_COMPILATION_DISABLED", 224: "UNSUPPORTED_EXEC_AFFINITY",
    225: "UNSUPPORTED_DEVSIDE_SYNC", 300: "INVALID_SOURCE", 301: "FILE_NOT_FOUND",
    302: "SHARED_OBJECT_SYMBOL_NOT_FOUND", 303: "SHARED_OBJECT_INIT_FAILED",
    304: "OPERATING_SYSTEM", 400: "INVALID_HANDLE", 401: "ILLEGAL_STATE",
    402: "LOSSY_QUERY", 500: "NOT_FOUND", 600: "NOT_READY", 700: "ILLEGAL_ADDRESS",
    701: "LAUNCH_OUT_OF_RESOURCES", 702: "LAUNCH_TIMEOUT",
    703: "LAUNCH_INCOMPATIBLE_TEXTURING", 704: "PEER_ACCESS_ALREADY_ENABLED",
    705: "PEER_ACCESS_NOT_ENABLED", 708: "PRIMARY_CONTEXT_ACTIVE",
    709: "CONTEXT_IS_DESTROYED", 710: "ASSERT", 711: "TOO_MANY_PEERS",
    712: "HOST_MEMORY_ALREADY_REGISTERED", 713: "HOST_MEMORY_NOT_REGISTERED",
    714: "HARDWARE_STACK_ERROR", 715: "ILLEGAL_INSTRUCTION", 716: "MISALIGNED_ADDRESS",
    717: "INVALID_ADDRESS_SPACE", 718: "INVALID_PC", 719: "LAUNCH_FAILED",
    720: "COOPERATIVE_LAUNCH_TOO_LARGE", 800: "NOT_PERMITTED", 801: "NOT_SUPPORTED",
    802: "SYSTEM_NOT_READY", 803: "SYSTEM_DRIVER_MISMATCH",
    804: "COMPAT_NOT_SUPPORTED_ON_DEVICE", 805: "MPS_CONNECTION_FAILED",
    806: "MPS_RPC_FAILURE", 807: "MPS_SERVER_NOT_READY", 808: "MPS_MAX_CLIENTS_REACHED",
    809: "MPS_MAX_CONNECTIONS_REACHED", 810: "MPS_CLIENT_TERMINATED",
    811: "CDP_NOT_SUPPORTED", 812: "CDP_VERSION_MISMATCH",
    900: "STREAM_CAPTURE_UNSUPPORTED", 901: "STREAM_CAPTURE_INVALIDATED",
    902: "STREAM_CAPTURE_MERGE", 903: "STREAM_CAPTURE_UNMATCHED",
    904: "STREAM_CAPTURE_UNJOINED", 905: "STREAM_CAPTURE_ISOLATION",
    906: "STREAM_CAPTURE_IMPLICIT", 907: "CAPTURED_EVENT",
    908: "STREAM_CAPTURE_WRONG_THREAD", 909: "TIMEOUT", 910: "GRAPH_EXEC_UPDATE_FAILURE",
    911: "EXTERNAL_DEVICE", 912: "INVALID_CLUSTER_SIZE", 913: "FUNCTION_NOT_LOADED",
    914: "INVALID_RESOURCE_TYPE", 915: "INVALID_RESOURCE_CONFIGURATION", 999: "UNKNOWN",
}


def result_name(code: int | None) -> str | None:
    if code is None:
        return None
    name = RESULT_NAMES.get(code)
    return f"CUDA_ERROR_{name}" if name and code else ("CUDA_SUCCESS" if code == 0
                                                        else f"CUresult({code})")


# -- signatures -------------------------------------------------------------------

_SCALARS = {"int", "unsigned int", "CUdevice", "CUresult", "size_t", "unsigned long long",
            "unsigned char", "unsigned short", "long", "unsigned long", "long long"}
_HANDLES = {"CUcontext", "CUmodule", "CUfunction", "CUstream", "CUevent", "CUlibrary",
            "CUkernel", "void *", "CUhostFn", "CUstreamCallback"}
# Pointer parameters that are arrays or opaque buffers, never dereferenced.
_OPAQUE_NAMES = {"kernelParams", "extra", "options", "optionValues", "jitOptions",
                 "jitOptionsValues", "libraryOptions", "libraryOptionValues", "image",
                 "code", "fatCubin", "params", "data", "luid"}


def _split_params(text: str) -> list[tuple[str, str]]:
    """'const char *symbol, void **pfn' -> [('char *', 'symbol'), ('void **', 'pfn')].

    Unnamed parameters (export-table signatures) are named arg0, arg1, ...
    """
    text = text.strip()
    if text in ("", "void"):
        return []
    out = []
    for i, part in enumerate(p.strip() for p in text.split(",")):
        const = part.startswith("const ")
        if const:
            part = part[len("const "):]
        m = re.fullmatch(r"(.*?[\s*])(\w+)", part)
        if m and m.group(1).strip() and m.group(2) not in _SCALARS | {"void", "CUuuid"} \
                and not m.group(2).startswith("CU"):
            ctype, name = m.group(1), m.group(2)
        else:
            ctype, name = part, f"arg{i}"
        ctype = re.sub(r"\s*\*", " *", ctype.strip()).replace("* *", "**").strip()
        ctype = re.sub(r"\s+", " ", ctype)
        out.append(("const " + ctype if const else ctype, name))
    return out


def parse_functions(text: str) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """The declarations in api.FUNCTIONS: name -> (return type, [(type, name)])."""
    out = {}
    for ret, name, params in re.findall(r"(\w[\w ]*?)\s+(\w+)\(([^)]*)\);", text):
        out[name] = (ret.strip(), _split_params(params))
    return out


def parse_signature(signature: str) -> tuple[str, list[tuple[str, str]]]:
    """A cffi function type 'CUresult(CUcontext *, CUdevice)' -> (ret, params)."""
    m = re.fullmatch(r"\s*([\w ]+?)\s*\((.*)\)\s*", signature)
    if m is None:
        raise ValueError(f"not a function type: {signature!r}")
    return m.group(1), _split_params(m.group(2))


SIGNATURES = parse_functions(api.FUNCTIONS)


def base_name(symbol: str) -> str:
    """cuMemcpyAsync_v2_ptsz -> cuMemcpyAsync_v2 (the per-thread variants share signatures)."""
    for suffix in ("_ptds", "_ptsz"):
        if symbol.endswith(suffix):
            return symbol[: -len(suffix)]
    return symbol


# -- argument decoding ----------------------------------------------------------------


class _Decoder:
    """Per-signature decoding plan, built once per API."""

    def __init__(self, ffi: Any, params: list[tuple[str, str]]) -> None:
        self.ffi = ffi
        self.plan: list[tuple[int, str, Callable[[Any, bool], Any] | None, bool]] = []
        names = [n for _, n in params]
        for i, (ctype, name) in enumerate(params):
            out, fn = self._kind(ctype, name, names)
            self.plan.append((i, name, fn, out))

    def _hex(self, value: Any, ok: bool) -> str:
        return hex(int(self.ffi.cast("uintptr_t", value)))

    def _kind(self, ctype: str, name: str, names: list[str]) -> tuple[bool, Any]:
        """(is an output parameter, decoder)"""
        ffi = self.ffi
        const = ctype.startswith("const ")
        bare = ctype[6:] if const else ctype
        if bare in _SCALARS:
            return False, None  # already a Python int
        if bare == "CUdeviceptr":
            return False, lambda v, ok: hex(v)
        if bare == "float":
            return False, None
        if bare in _HANDLES or name in _OPAQUE_NAMES:
            return False, self._hex
        if bare == "char *":
            if const:
                return False, lambda v, ok: (None if v == ffi.NULL
                                             else ffi.string(v, 4096).decode("utf-8", "replace"))
            limit = 256
            return True, lambda v, ok: (ffi.string(v, limit).decode("utf-8", "replace")
                                        if ok and v != ffi.NULL else None)
        if bare == "char **":
            return True, lambda v, ok: (ffi.string(v[0], 4096).decode("utf-8", "replace")
                                        if ok and v != ffi.NULL and v[0] != ffi.NULL else None)
        if bare == "CUuuid *":
            def uuid_of(v: Any, ok: bool) -> str | None:
                if v == ffi.NULL or (not const and not ok):
                    return None
                return str(_uuid.UUID(bytes=bytes(ffi.buffer(v, 16))))
            return not const, uuid_of
        if bare == "CUlaunchConfig *":
            def config(v: Any, ok: bool) -> dict[str, Any] | None:
                if v == ffi.NULL:
                    return None
                c = v[0]
                attrs = ffi.cast("CUlaunchAttribute *", c.attrs)
                # Each attribute's id and first three words (a cluster's
                # dimensions, a priority, a flag): which launches stay in C.
                words = [ffi.cast("unsigned int *", attrs[i].value)
                         for i in range(c.numAttrs if attrs != ffi.NULL else 0)]
                return {"grid": [c.gridDimX, c.gridDimY, c.gridDimZ],
                        "block": [c.blockDimX, c.blockDimY, c.blockDimZ],
                        "sharedMemBytes": c.sharedMemBytes, "hStream": self._hex(c.hStream, ok),
                        "numAttrs": c.numAttrs,
                        "attrs": [[attrs[i].id, *w[0:3]] for i, w in enumerate(words)]}
            return False, config
        if bare.endswith("*") and not const:
            pointee = bare[:-1].strip()
            cast = ffi.typeof(bare) if pointee not in ("void",) else None
            if cast is None:
                return False, self._hex
            if pointee == "CUdeviceptr":
                fmt: Callable[[Any], Any] = hex
            elif pointee in _HANDLES or pointee.endswith("*"):
                fmt = lambda x: hex(int(ffi.cast("uintptr_t", x)))  # noqa: E731
            else:
                fmt = lambda x: x  # noqa: E731

            def deref(v: Any, ok: bool) -> Any:
                if not ok or v == ffi.NULL:
                    return None
                return fmt(ffi.cast(cast, v)[0])
            return True, deref
        return False, self._hex

    def decode(self, args: tuple[Any, ...], ok: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, name, fn, is_out in self.plan:
            if i >= len(args):
                break
            value = args[i]
            if is_out:
                decoded = fn(value, ok) if fn else value
                if decoded is None:
                    out[name] = None if value == self.ffi.NULL else hex(
                        int(self.ffi.cast("uintptr_t", value)))
                else:
                    out["*" + name] = decoded
            else:
                out[name] = fn(value, ok) if fn else value
        return out


# -- the tracer ----------------------------------------------------------------------

_NAME_SOURCES = {  # API -> (output parameter with the handle, parameter with the name)
    "cuModuleGetFunction": ("*hfunc", "name"),
    "cuLibraryGetKernel": ("*pKernel", "name"),
}


class Tracer:
    """Writes one JSON line per call. Thread-safe; costs nothing when not installed."""

    def __init__(self, path: str, ffi: Any, *, driver: str = "zmlir",
                 kernel_name: Callable[[int], str | None] | None = None,
                 signatures: dict[str, tuple[str, list[tuple[str, str]]]] | None = None) -> None:
        path = path.replace("%p", str(os.getpid()))
        self.path = path
        self.ffi = ffi
        self.signatures = signatures if signatures is not None else SIGNATURES
        self.kernel_name = kernel_name
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._decoders: dict[str, _Decoder] = {}
        self._names: dict[int, str] = {}
        self._epoch = time.perf_counter_ns()
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o644)
        self._write({"trace": "zmlir", "version": FORMAT_VERSION, "driver": driver,
                     "pid": os.getpid(), "argv": _argv(), "start_unix": time.time()})

    def _write(self, record: dict[str, Any]) -> None:
        data = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            os.write(self._fd, data)

    def _decoder(self, api_name: str, signature: str | None) -> _Decoder:
        key = signature or api_name
        dec = self._decoders.get(key)
        if dec is None:
            if signature is not None:
                params = parse_signature(signature)[1]
            else:
                params = self.signatures.get(base_name(api_name), ("", []))[1]
            dec = self._decoders[key] = _Decoder(self.ffi, params)
        return dec

    def call(self, name: str, args: tuple[Any, ...], invoke: Callable[..., Any], *,
             signature: str | None = None) -> Any:
        """Runs invoke(*args) and logs it as API `name` (signature: for export slots)."""
        seq = next(self._seq)
        t0 = time.perf_counter_ns()
        error = None
        result: Any = None
        try:
            result = invoke(*args)
            return result
        except BaseException as err:
            error = f"{type(err).__name__}: {err}"
            raise
        finally:
            t1 = time.perf_counter_ns()
            self._record(seq, name, args, result, error, signature, t0, t1)

    def _record(self, seq: int, name: str, args: tuple[Any, ...], result: Any, error: str | None,
                signature: str | None, t0: int, t1: int) -> None:
        code = int(result) if isinstance(result, int) else None
        if signature is not None and not signature.startswith("CUresult"):
            code = None  # an export slot answering something else (a count): "returned"
        try:
            decoded = self._decoder(name, signature).decode(args, code in (0, None))
            self.annotate(name, decoded, code)
        except Exception as err:  # a decoding bug must never break the application
            decoded = {"decode_error": f"{type(err).__name__}: {err}"}
        record: dict[str, Any] = {
            "seq": seq, "tid": threading.get_native_id(),
            "t": round((t0 - self._epoch) / 1000, 3), "dur": round((t1 - t0) / 1000, 3),
            "api": name, "args": decoded, "result": code, "result_name": result_name(code)}
        if error is not None:
            record["exception"] = error
        if result is not None and code is None:
            record["returned"] = repr(result)
        self._write(record)

    def annotate(self, name: str, args: dict[str, Any], code: int | None) -> None:
        """Adds what a call's arguments imply: kernel names, launch geometry."""
        base = base_name(name)
        source = _NAME_SOURCES.get(base)
        if source is not None and code == 0 and isinstance(args.get(source[0]), str):
            self._names[int(args[source[0]], 16)] = args.get(source[1])
        elif base == "cuKernelGetFunction" and code == 0 and "*pFunc" in args:
            kernel = self._names.get(int(args["kernel"], 16))
            if kernel is not None:
                self._names[int(args["*pFunc"], 16)] = kernel
        elif base == "cuLaunchKernel":
            geometry = [args.pop(k, None) for k in ("gridDimX", "gridDimY", "gridDimZ",
                                                    "blockDimX", "blockDimY", "blockDimZ")]
            args["grid"], args["block"] = geometry[:3], geometry[3:]
            args["kernel"] = self._kernel(args.get("f"))
        elif base == "cuLaunchKernelEx":
            args["kernel"] = self._kernel(args.get("f"))

    def _kernel(self, handle: str | None) -> str | None:
        if handle is None:
            return None
        h = int(handle, 16)
        name = self._names.get(h)
        if name is None and self.kernel_name is not None:
            try:
                name = self.kernel_name(h)
            except Exception:
                name = None
            if name is not None:
                self._names[h] = name
        return name

    def entry(self, name: str, args: dict[str, Any]) -> None:
        """A call seen only on entry (the interposer's trampolines): no result, no duration."""
        self._write({"seq": next(self._seq), "tid": threading.get_native_id(),
                     "t": round((time.perf_counter_ns() - self._epoch) / 1000, 3), "dur": 0.0,
                     "api": name, "args": args, "result": None, "result_name": None,
                     "entry_only": True})

    def event(self, kind: str, **fields: Any) -> None:
        """A line that is not a call (e.g. the interposer's notes)."""
        self._write({"event": kind, "tid": threading.get_native_id(),
                     "t": round((time.perf_counter_ns() - self._epoch) / 1000, 3), **fields})


def _argv() -> list[str]:
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return list(sys.argv)
