"""cuGetExportTable: the undocumented tables the CUDA runtime asks the driver
for, by UUID. Each table is an array of pointers, usually starting with its
own size in bytes. The slot meanings are what public reverse engineering
(ZLUDA) found; each slot here is our own implementation.

A table is one entry of TABLES: its UUID, its length, whether slot 0 is the
size, and the slots we implement with their C signatures. Slots we do not
implement get a stub that logs "export table <name> slot <n>" and returns
CUDA_ERROR_NOT_SUPPORTED, so an unexpected call is visible, not a crash.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.trace import traced_slot, traced_stub

E = CUresult


@dataclass(frozen=True)
class Slot:
    signature: str  # a cffi function type, e.g. "CUresult(CUcontext *, CUdevice)"
    body: Callable[..., Any]


@dataclass
class Table:
    name: str
    uuid: str
    length: int
    sized: bool = True  # slot 0 holds the table's size in bytes
    slots: dict[int, Slot] = field(default_factory=dict)

    @property
    def key(self) -> bytes:
        return uuid.UUID(self.uuid).bytes


def _log(message: str) -> None:
    from zmlir.runtime.cuda.state import log

    log(message)


# -- slot bodies ------------------------------------------------------------------


def _module_from_wrapper(d: Any, pmodule: Any, wrapper: Any) -> int:
    handle = d.load_module(wrapper)
    pmodule[0] = d.handle_ptr(handle)
    return E.CUDA_SUCCESS


def _get_module_from_cubin(d: Any, pmodule: Any, wrapper: Any) -> None:
    try:
        _module_from_wrapper(d, pmodule, wrapper)
    except CudaError as err:
        _log(f"loading a registered fatbin failed: {err}")
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


def _unknown_buffer(d: Any, pptr: Any, psize: Any) -> None:
    # The runtime asks for a zeroed scratch buffer it owns for the process.
    buffer = d.ffi.new("char[]", 1024)
    d.keepalive.append(buffer)
    pptr[0] = buffer
    psize[0] = 1024


def _cls_put(d: Any, ctx: Any, key: Any, value: Any, dtor: Any) -> int:
    context = _context(d, ctx)
    context.local_storage[d.ptr(key)] = (value, dtor)
    d.fast.cls_put(_context_handle(d, ctx), d.ptr(key), d.ptr(value))
    return E.CUDA_SUCCESS


def _cls_delete(d: Any, key: Any, value: Any) -> int:
    k = d.ptr(key)
    for obj in list(d.handles._objects.values()):
        storage = getattr(obj, "local_storage", None)
        if storage is not None and k in storage:
            del storage[k]
    d.fast.cls_forget(0, k)
    return E.CUDA_SUCCESS


def _cls_get(d: Any, pvalue: Any, ctx: Any, key: Any) -> int:
    context = _context(d, ctx)
    entry = context.local_storage.get(d.ptr(key))
    if entry is None:
        return E.CUDA_ERROR_INVALID_HANDLE
    pvalue[0] = entry[0]
    return E.CUDA_SUCCESS


def _context_handle(d: Any, ctx: Any) -> int:
    handle = d.ptr(ctx)
    return handle if handle != 0 else d.primary_context()


def _context(d: Any, ctx: Any) -> Any:
    from zmlir.runtime.cuda.objects import Context

    return d.handles.get(_context_handle(d, ctx), Context)


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
    from zmlir.runtime.cuda.integrity import integrity_check

    digest = integrity_check(d, version, seconds)
    result[0] = digest[0]
    result[1] = digest[1]
    return E.CUDA_SUCCESS


def _context_check(d: Any, ctx: Any, result1: Any, result2: Any) -> int:
    result1[0] = 0
    result2[0] = d.ffi.NULL
    return E.CUDA_SUCCESS


def _check_fn3(d: Any) -> int:
    return 0


TABLES = [
    Table("CUDART_INTERFACE", "6BD5FB6C-5BF4-E74A-8987-D93912FD9DF9", 10, slots={
        1: Slot("void(CUmodule *, void *)", _get_module_from_cubin),
        2: Slot("CUresult(CUcontext *, CUdevice)", _primary_context),
        6: Slot("CUresult(CUmodule *, void *, void *, void *, unsigned int)",
                _get_module_from_cubin_ext1),
        7: Slot("CUresult(size_t)", _fn7),
        8: Slot("CUresult(void *, CUmodule *, void *, void *, unsigned int)",
                _get_module_from_cubin_ext2),
    }),
    Table("TOOLS_TLS", "42D85A81-23F6-CB47-8298-F6E78A3AECDC", 4),
    Table("TOOLS_RUNTIME_CALLBACK_HOOKS", "A094798C-2E74-2E74-93F2-0800200C0A66", 7, slots={
        2: Slot("void(void **, size_t *)", _unknown_buffer),
        6: Slot("void(void **, size_t *)", _unknown_buffer),
    }),
    Table("CONTEXT_LOCAL_STORAGE", "C693336E-1121-DF11-A8C3-68F355D89593", 4, sized=False,
          slots={
              0: Slot("CUresult(CUcontext, void *, void *, void *)", _cls_put),
              1: Slot("CUresult(void *, void **)", _cls_delete),
              2: Slot("CUresult(void **, CUcontext, void *)", _cls_get),
          }),
    Table("CTX_CREATE_BYPASS", "0CA50B8C-1004-929A-89A7-D0DF10E77286", 2, slots={
        1: Slot("CUresult(CUcontext *, unsigned int, CUdevice)", _ctx_create_bypass),
    }),
    Table("HEAP_ACCESS", "195BCBF4-D67D-024A-ACC5-1D29CEA631AE", 3, slots={
        1: Slot("CUresult(void **, size_t, size_t)", _heap_alloc),
        2: Slot("CUresult(void *, size_t *)", _heap_free),
    }),
    Table("DEVICE_EXTENDED_RT", "B10541E1-F7C7-C74A-9F64-F223BE99F1E2", 26, slots={
        5: Slot("CUresult(CUdevice, unsigned int, int, void *)", _device_attribute_ext),
        13: Slot("CUresult(unsigned char *, CUdevice)", _device_something),
    }),
    Table("INTEGRITY_CHECK", "D4082055-BDE6-704B-8D34-BA123C66E1F2", 3, slots={
        1: Slot("CUresult(unsigned int, unsigned long long, unsigned long long *)",
                _integrity_check),
    }),
    Table("UNKNOWN_CHECKS", "263E8860-7CD2-6143-92F6-BBD5006DFA7E", 4, slots={
        2: Slot("CUresult(CUcontext, unsigned int *, void **)", _context_check),
        3: Slot("unsigned int(void)", _check_fn3),
    }),
]
BY_UUID = {t.key: t for t in TABLES}


class _Built:
    """The C arrays handed out, built once per table and kept alive."""

    def __init__(self) -> None:
        self.arrays: dict[bytes, Any] = {}
        self.callbacks: list[Any] = []


_BUILT = _Built()


def _stub(driver: Any, table: Table, index: int) -> Any:
    def body() -> int:
        return int(driver.unsupported(f"export table {table.name} slot {index}",
                                      "meaning unknown"))

    return driver.ffi.callback("CUresult(void)", traced_stub(driver, table, index, body))


def _callback(driver: Any, table: Table, index: int, slot: Slot) -> Any:
    ffi = driver.ffi
    slot = traced_slot(driver, table, index, slot)
    returns_void = slot.signature.startswith("void(")

    def body(*args: Any) -> Any:
        try:
            return slot.body(driver, *args)
        except CudaError as err:
            return None if returns_void else int(err.code)
        except Exception as err:
            _log(f"internal error in export table {table.name} slot {index}: "
                 f"{type(err).__name__}: {err}")
            return None if returns_void else int(E.CUDA_ERROR_UNKNOWN)

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
        callback = (_callback(driver, table, index, slot) if slot
                    else _stub(driver, table, index))
        _BUILT.callbacks.append(callback)
        array[index] = ffi.cast("void *", callback)
        if slot is not None and slot.body is _cls_get:
            # Called before every launch: answered in C (fastpath.c) unless traced.
            fast = driver.fast.cls_get_slot(driver.primary_context(), callback)
            if fast is not None:
                array[index] = ffi.cast("void *", fast)
    return array


def get_export_table(driver: Any, ptable: Any, table_id: Any) -> int:
    ffi = driver.ffi
    if ptable == ffi.NULL or table_id == ffi.NULL:
        return E.CUDA_ERROR_INVALID_VALUE
    key = bytes(ffi.buffer(table_id, 16))
    table = BY_UUID.get(key)
    if table is None:
        # cudart probes some tables it can do without: say so only when asked.
        if os.environ.get("ZMLIR_LOG"):
            _log(f"unsupported: export table {uuid.UUID(bytes=key)} (returning "
                 "CUDA_ERROR_INVALID_VALUE)")
        ptable[0] = ffi.NULL
        return E.CUDA_ERROR_INVALID_VALUE
    ptable[0] = table_array(driver, table.name)
    return E.CUDA_SUCCESS


def table_array(driver: Any, name: str) -> Any:
    """The C array of the table `name`, built on first use."""
    table = next(t for t in TABLES if t.name == name)
    if table.key not in _BUILT.arrays:
        _BUILT.arrays[table.key] = _build(driver, table)
    return _BUILT.arrays[table.key]


def table_address(driver: Any, name: str) -> int:
    return int(driver.ffi.cast("uintptr_t", table_array(driver, name)))
