"""cuGetProcAddress: name + CUDA version -> the entry point.

The runtime asks by base name ("cuMemAlloc") and the CUDA version it was
built for; the driver answers with the newest ABI version of that function
(cuMemAlloc_v2). Per-thread-default-stream variants (_ptds/_ptsz) share our
implementation: all our work is ordered on one queue.
"""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda import api
from zmlir.runtime.cuda.errors import CUresult

_SYMBOL_FOUND = 0
_SYMBOL_NOT_FOUND = 1
_EXPORTED = set(api.function_names())


def resolve(name: str) -> str | None:
    """The exported symbol serving `name`, or None."""
    for suffix in ("_ptds", "_ptsz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for version in range(4, 1, -1):
        candidate = f"{name}_v{version}"
        if candidate in _EXPORTED:
            return candidate
    return name if name in _EXPORTED else None


def get_proc_address(driver: Any, symbol: Any, pfn: Any, version: int, flags: int,
                     status: Any) -> int:
    ffi = driver.ffi
    if symbol == ffi.NULL or pfn == ffi.NULL:
        return CUresult.CUDA_ERROR_INVALID_VALUE
    name = ffi.string(symbol).decode()
    target = resolve(name)
    if target is None:
        pfn[0] = ffi.NULL
        if status is not None and status != ffi.NULL:
            status[0] = _SYMBOL_NOT_FOUND
        return CUresult.CUDA_ERROR_NOT_FOUND
    if target in api.C_FAST_PATH:  # C functions: their exported address, not cffi's wrapper
        pfn[0] = ffi.cast("void *", driver.lib.zmlir_fast_address(target.encode()))
    else:
        pfn[0] = ffi.cast("void *", ffi.addressof(driver.lib, target))
    if status is not None and status != ffi.NULL:
        status[0] = _SYMBOL_FOUND
    return CUresult.CUDA_SUCCESS
