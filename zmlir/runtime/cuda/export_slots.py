"""cuGetExportTable: our implementation of the slots of the tables in
export_tables.py, and the C arrays handed to the runtime.

Each slot body is BODIES[slot.name], called with the driver first; it uses
the driver's public API only. Slots we do not implement get a stub that
logs "export table <name> slot <n>" and returns CUDA_ERROR_NOT_SUPPORTED,
so an unexpected call is visible, not a crash. Every slot goes through the
driver's tracer when one is installed ("export_table:<TABLE>:<slot>").
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

from zmlir.runtime.cuda import integrity
from zmlir.runtime.cuda.constants import DRIVER_VERSION
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.export_tables import BY_NAME, BY_UUID, TABLES, Slot, Table
from zmlir.runtime.cuda.state import log

E = CUresult

# -- slot bodies ------------------------------------------------------------------


def _module_from_wrapper(d: Any, pmodule: Any, wrapper: Any) -> int:
    handle = d.load_module(wrapper)
    pmodule[0] = d.handle_ptr(handle)
    return E.CUDA_SUCCESS


def _get_module_from_cubin(d: Any, pmodule: Any, wrapper: Any) -> None:
    try:
        _module_from_wrapper(d, pmodule, wrapper)
    except CudaError as err:
        log(f"loading a registered fatbin failed: {err}")
        pmodule[0] = d.ffi.NULL


def _get_module_from_cubin_ext1(d: Any, pmodule: Any, wrapper: Any, a3: Any, a4: Any,
                                a5: int) -> int:
    return _module_from_wrapper(d, pmodule, wrapper)


def _get_module_from_cubin_ext2(d: Any, header: Any, pmodule: Any, a3: Any, a4: Any,
                                a5: int) -> int:
    return _module_from_wrapper(d, pmodule, header)


def _primary_context(d: Any, pctx: Any, dev: int) -> int:
    return d.cuDevicePrimaryCtxRetain(pctx, dev)


def _fn7(d: Any, arg: int) -> int:
    return E.CUDA_SUCCESS


def _cudart_start_check(d: Any) -> int:
    # What it checks is unknown; NVIDIA's driver lets the runtime start
    # (CUDA_8b3537d1=dc6ffd77 in the environment makes cudart skip the call).
    return E.CUDA_SUCCESS


def _unknown_buffer(d: Any, pptr: Any, psize: Any) -> None:
    # The runtime asks for a zeroed scratch buffer it owns for the process.
    buffer = d.ffi.new("char[]", 1024)
    d.keepalive.append(buffer)
    pptr[0] = buffer
    psize[0] = 1024


def _current_context(d: Any, pctx: Any) -> int:
    # The calling thread's context: NVIDIA's cuBLAS runs no GEMM without it.
    code = d.cuCtxGetCurrent(pctx)
    if code == E.CUDA_SUCCESS and pctx[0] == d.ffi.NULL:
        return E.CUDA_ERROR_INVALID_CONTEXT
    return code


def _cls_put(d: Any, ctx: Any, key: Any, value: Any, dtor: Any) -> int:
    return d.local_storage_put(ctx, key, value, dtor)


def _cls_delete(d: Any, key: Any, value: Any) -> int:
    return d.local_storage_delete(key)


def _cls_get(d: Any, pvalue: Any, ctx: Any, key: Any) -> int:
    return d.local_storage_get(pvalue, ctx, key)


def _ctx_create_bypass(d: Any, pctx: Any, flags: int, dev: int) -> int:
    return d.cuCtxCreate_v2(pctx, flags, dev)


def _heap_alloc(d: Any, precord: Any, a2: int, a3: int) -> int:
    return E.CUDA_ERROR_NOT_SUPPORTED


def _heap_free(d: Any, record: Any, a2: Any) -> int:
    return E.CUDA_ERROR_NOT_SUPPORTED


def _device_attribute_ext(d: Any, dev: int, attrib: int, unknown: int, result: Any) -> int:
    value = d.ffi.new("int *")
    code = d.cuDeviceGetAttribute(value, attrib, dev)
    if code == E.CUDA_SUCCESS:
        out = d.ffi.cast("unsigned long long *", result)
        out[0] = value[0]
        out[1] = 0
    return code


def _device_something(d: Any, result: Any, dev: int) -> int:
    result[0] = 0
    return E.CUDA_SUCCESS


def _integrity_check(d: Any, version: int, seconds: int, result: Any) -> int:
    digest = integrity.fixed_answer(version)
    if digest is None:
        cudart = table_address(d, "CUDART_INTERFACE")
        check = table_address(d, "INTEGRITY_CHECK")
        check_fn = int(d.ffi.cast("uintptr_t", table_array(d, "INTEGRITY_CHECK")[1]))
        digest = integrity.answer(DRIVER_VERSION, version, cudart, check, check_fn, seconds,
                                  d.device_hash_info())
    result[0] = digest[0]
    result[1] = digest[1]
    return E.CUDA_SUCCESS


def _context_check(d: Any, ctx: Any, result1: Any, result2: Any) -> int:
    result1[0] = 0
    result2[0] = d.ffi.NULL
    return E.CUDA_SUCCESS


def _check_fn3(d: Any) -> int:
    return 0


def _context_id(d: Any, ctx: Any, result: Any) -> int:
    # Under the passthrough NVIDIA's libraries ask it of our contexts
    # (cuFFT: cuCtxGetCurrent's) and of NVIDIA's (cuBLAS: TOOLS_TLS's, the
    # vendor's table): those the vendor's slot answers.
    # Such a context is remembered in C (fastpath.c), which hands it to the
    # vendor's slot itself from then on (cuBLASLt asks in every GEMM).
    vendor = _BUILT.vendor_slots.get(("TOOLS_CONTEXT", 4))
    handle = d.ptr(ctx)
    if vendor is not None and handle and d.handles.find(handle) is None \
            and handle not in d.destroyed_contexts:
        d.fast.vendor_context(handle)
        slot = d.ffi.cast("CUresult (*)(CUcontext, unsigned long long *)", vendor)
        return int(slot(ctx, result))
    return d.cuCtxGetId(ctx, result)


def _stream_object(d: Any, ctx: Any, stream: Any, pobject: Any, per_thread: int) -> int:
    # Our streams are their handles; the NULL stream is the legacy or the
    # per-thread default one, as the caller compiled with.
    handle = d.ptr(stream) or (2 if per_thread else 1)  # CU_STREAM_PER_THREAD, _LEGACY
    pobject[0] = d.ffi.cast("void *", handle)
    return E.CUDA_SUCCESS


def _stream_id(d: Any, ctx: Any, obj: Any, result: Any) -> int:
    result[0] = d.ptr(obj)
    return E.CUDA_SUCCESS


def _module_functions(d: Any, ctx: Any, hmod: Any, callback: Any, user: Any) -> int:
    """Calls callback(user, function) for each function of module `hmod`;
    answers how many (0 for a module we do not know)."""
    try:
        handles = d.module_function_handles(hmod)
    except Exception as err:  # its count is the answer: no error code to give
        log(f"export table MODULE_FUNCTIONS slot 7: {type(err).__name__}: {err}")
        return 0
    each = d.ffi.cast("void (*)(void *, CUfunction)", callback)
    for handle in handles:
        each(user, d.handle_ptr(handle))
    return len(handles)


def _string_out(d: Any, buffer: Any, size: int, text: bytes) -> int:
    """`text` and its NUL into a caller's buffer of `size` bytes."""
    if size > 0:
        d.ffi.memmove(buffer, text + b"\0", len(text) + 1)
    return E.CUDA_SUCCESS


def _libraries_backend(d: Any, name: Any, size: int) -> int:
    """The backend our libraries route their calls by (zmlir/libraries/common/route.c)."""
    d.require_init()
    return _string_out(d, name, size, d.device.name.encode()[:max(size - 1, 0)])


def _libraries_vendor_library(d: Any, soname: Any, path: Any, size: int) -> int:
    """Where NVIDIA's own library `soname` is, for our library of that name
    to hand its calls to (the passthrough); "" where ours answers."""
    d.require_init()
    found = (d.device.vendor_library(d.ffi.string(soname).decode()) or "").encode()
    # A path cut short would open something else: none rather than part of one.
    return _string_out(d, path, size, found if len(found) < size else b"")


def _libraries_native_handles(d: Any, handles: Any, count: int) -> int:
    """The backend's native handles (Backend.native_handles), as many as fit
    in `count`; CUDA_ERROR_NOT_SUPPORTED on a backend that has none."""
    d.require_init()
    native = d.device.native_handles()
    if not native:
        return E.CUDA_ERROR_NOT_SUPPORTED
    for i, value in enumerate(native[:count]):
        handles[i] = d.ffi.cast("void *", value)
    return E.CUDA_SUCCESS


BODIES: dict[str, Callable[..., Any]] = {
    "get_module_from_cubin": _get_module_from_cubin,
    "primary_context": _primary_context,
    "get_module_from_cubin_ext1": _get_module_from_cubin_ext1,
    "cudart_interface_fn7": _fn7,
    "get_module_from_cubin_ext2": _get_module_from_cubin_ext2,
    "cudart_start_check": _cudart_start_check,
    "unknown_buffer": _unknown_buffer,
    "current_context": _current_context,
    "context_local_storage_put": _cls_put,
    "context_local_storage_delete": _cls_delete,
    "context_local_storage_get": _cls_get,
    "ctx_create_bypass": _ctx_create_bypass,
    "heap_alloc": _heap_alloc,
    "heap_free": _heap_free,
    "device_attribute_ext": _device_attribute_ext,
    "device_something": _device_something,
    "integrity_check": _integrity_check,
    "context_check": _context_check,
    "check_fn3": _check_fn3,
    "context_id": _context_id,
    "stream_object": _stream_object,
    "stream_id": _stream_id,
    "module_functions": _module_functions,
    "libraries_backend": _libraries_backend,
    "libraries_vendor_library": _libraries_vendor_library,
    "libraries_native_handles": _libraries_native_handles,
}
_MISSING = {s.name for t in TABLES for s in t.slots.values()} ^ set(BODIES)
assert not _MISSING, f"export table slots without a body, or bodies without a slot: {_MISSING}"

# -- the C arrays -------------------------------------------------------------------


class _Built:
    """The C arrays handed out, built once per table and kept alive."""

    def __init__(self) -> None:
        self.arrays: dict[bytes, Any] = {}
        self.callbacks: list[Any] = []
        # The vendor's own functions in the slots of its tables we answer
        # (the passthrough), by table name and slot.
        self.vendor_slots: dict[tuple[str, int], Any] = {}


_BUILT = _Built()


def _traced(driver: Any, table: Table, index: int, body: Callable[..., Any],
            signature: str) -> Callable[..., Any]:
    """`body` (called with the slot's arguments) through the driver's tracer, if any."""
    name = f"export_table:{table.name}:{index}"

    def traced(*args: Any) -> Any:
        tracer = driver.tracer
        if tracer is None:
            return body(*args)
        return tracer.call(name, args, body, signature=signature)

    return traced


def _stub(driver: Any, table: Table, index: int) -> Any:
    def body() -> int:
        if table.optional and not os.environ.get("ZMLIR_LOG"):
            return int(E.CUDA_ERROR_NOT_SUPPORTED)
        return int(driver.unsupported(f"export table {table.name} slot {index}",
                                      "meaning unknown"))

    return driver.ffi.callback("CUresult(void)",
                               _traced(driver, table, index, body, "CUresult(void)"))


def _callback(driver: Any, table: Table, index: int, slot: Slot) -> Any:
    ffi = driver.ffi
    implementation = BODIES[slot.name]
    traced = _traced(driver, table, index, lambda *args: implementation(driver, *args),
                     slot.signature)
    returns_void = slot.signature.startswith("void(")

    def body(*args: Any) -> Any:
        driver.fast.enter()  # counted: the process's exit waits for it (fastpath.c)
        try:
            return traced(*args)
        except CudaError as err:
            return None if returns_void else int(err.code)
        except Exception as err:
            log(f"internal error in export table {table.name} slot {index}: "
                f"{type(err).__name__}: {err}")
            return None if returns_void else int(E.CUDA_ERROR_UNKNOWN)
        finally:
            driver.fast.leave()

    if returns_void:
        return ffi.callback(slot.signature, body)
    return ffi.callback(slot.signature, body, error=int(E.CUDA_ERROR_UNKNOWN))


def _build(driver: Any, table: Table) -> Any:
    ffi = driver.ffi
    array = ffi.new("void *[]", table.length)
    for index in range(table.length):
        if index == 0 and table.sized:
            array[0] = ffi.cast("void *", table.length * ffi.sizeof("void *"))
            continue
        slot = table.slots.get(index)
        if slot is None and table.optional and (quiet := driver.fast.quiet_stub()) is not None:
            array[index] = quiet  # C: cudart calls these around every runtime call
            continue
        callback = (_callback(driver, table, index, slot) if slot
                    else _stub(driver, table, index))
        _BUILT.callbacks.append(callback)
        array[index] = ffi.cast("void *", callback)
        if slot is not None and BODIES[slot.name] is _cls_get:
            # Called before every launch: answered in C (fastpath.c) unless traced.
            fast = driver.fast.cls_get_slot(callback)
            if fast is not None:
                array[index] = ffi.cast("void *", fast)
        elif slot is not None and BODIES[slot.name] is _context_id:
            _fast_context_id(driver, array, index, callback)
        elif slot is not None and BODIES[slot.name] is _context_check:
            # Asked in every cudaDeviceSynchronize: answered in C unless traced.
            fast = driver.fast.context_check_slot()
            if fast is not None:
                array[index] = ffi.cast("void *", fast)
    return array


def _fast_context_id(driver: Any, array: Any, index: int, callback: Any) -> None:
    """Slot `index` of `array` (a context's id), answered in C (fastpath.c)
    unless traced, with the vendor's slot for the vendor's contexts."""
    fast = driver.fast.context_id_slot(callback, _BUILT.vendor_slots.get(("TOOLS_CONTEXT", 4)))
    if fast is not None:
        array[index] = driver.ffi.cast("void *", fast)


def _vendor_copy(driver: Any, table: Table, address: int) -> Any:
    """The vendor's table at `address` (its own length, where slot 0 says
    it), with the slots we know ours."""
    key = table.key + b"vendor"
    if key not in _BUILT.arrays:
        ffi = driver.ffi
        vendor = ffi.cast("void **", address)
        length = table.length
        size = int(ffi.cast("uintptr_t", vendor[0])) if table.sized else 0
        if size % ffi.sizeof("void *") == 0 and 0 < size <= 4096:
            length = size // ffi.sizeof("void *")
        array = ffi.new("void *[]", max(length, table.length))
        for index in range(length):
            array[index] = vendor[index]
        for index, slot in table.slots.items():
            if index < length and vendor[index] != ffi.NULL:
                _BUILT.vendor_slots[(table.name, index)] = vendor[index]
                if slot.vendors_first:
                    continue
            callback = _callback(driver, table, index, slot)
            _BUILT.callbacks.append(callback)
            array[index] = ffi.cast("void *", callback)
            if BODIES[slot.name] is _context_id:
                _fast_context_id(driver, array, index, callback)
        _BUILT.arrays[key] = array
    return _BUILT.arrays[key]


def get_export_table(driver: Any, ptable: Any, table_id: Any) -> int:
    ffi = driver.ffi
    if ptable == ffi.NULL or table_id == ffi.NULL:
        return E.CUDA_ERROR_INVALID_VALUE
    key = bytes(ffi.buffer(table_id, 16))
    table = BY_UUID.get(key)
    # A table with no slot of ours known, where the vendor's driver is
    # underneath (the passthrough): the vendor's own. So is a table we do not
    # know at all, as an experiment (ZMLIR_VENDOR_TABLES=1; NVIDIA's cuFFT
    # crashed with one, a7a4ec4; docs/passthrough-libraries.md).
    unknown = table is None and os.environ.get("ZMLIR_VENDOR_TABLES")
    if driver.initialized and ((table is not None and table.vendor_first) or unknown):
        address = driver.device.vendor_export_table(key)
        if address:
            if unknown or os.environ.get("ZMLIR_LOG"):
                log(f"export table {uuid.UUID(bytes=key)}: the vendor's own ({address:#x})")
            ptable[0] = (_vendor_copy(driver, table, address) if table is not None
                         and table.slots else ffi.cast("void *", address))
            return E.CUDA_SUCCESS
    if table is None:
        # cudart probes some tables it can do without: say so only when asked.
        if os.environ.get("ZMLIR_LOG"):
            log(f"unsupported: export table {uuid.UUID(bytes=key)} (returning "
                "CUDA_ERROR_INVALID_VALUE)")
        ptable[0] = ffi.NULL
        return E.CUDA_ERROR_INVALID_VALUE
    ptable[0] = table_array(driver, table.name)
    return E.CUDA_SUCCESS


def table_array(driver: Any, name: str) -> Any:
    """The C array of the table `name`, built on first use."""
    table = BY_NAME[name]
    if table.key not in _BUILT.arrays:
        _BUILT.arrays[table.key] = _build(driver, table)
    return _BUILT.arrays[table.key]


def table_address(driver: Any, name: str) -> int:
    return int(driver.ffi.cast("uintptr_t", table_array(driver, name)))
