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
_SYMBOL_VERSION_NOT_SUFFICIENT = 2
_EXPORTED = set(api.function_names())
_UNIMPLEMENTED = set(api.unimplemented_names())

# Functions whose signature changed between CUDA versions: (the CUDA version
# that introduced it, our symbol of that signature), oldest first; None where
# we do not implement that signature. cudart asks for each by the version
# whose signature it will call (cudaTypedefs.h: PFN_<name>_v<version>).
VERSIONED: dict[str, tuple[tuple[int, str | None], ...]] = {
    "cuCtxCreate": ((2000, "cuCtxCreate_v2"), (11040, None), (12050, "cuCtxCreate_v4")),
    "cuCtxGetDevice": ((2000, "cuCtxGetDevice"), (13000, "cuCtxGetDevice_v2")),
    "cuCtxSynchronize": ((2000, "cuCtxSynchronize"), (13000, "cuCtxSynchronize_v2")),
    "cuStreamGetCtx": ((9020, "cuStreamGetCtx"), (12050, "cuStreamGetCtx_v2")),
    "cuGetProcAddress": ((11030, "cuGetProcAddress"), (12000, "cuGetProcAddress_v2")),
    "cuMemAdvise": ((8000, "cuMemAdvise"), (12020, "cuMemAdvise_v2")),
    "cuMemPrefetchAsync": ((8000, "cuMemPrefetchAsync"), (12020, "cuMemPrefetchAsync_v2")),
    "cuStreamBeginCapture": ((10000, "cuStreamBeginCapture"),
                             (10010, "cuStreamBeginCapture_v2")),
    "cuStreamGetCaptureInfo": ((10010, "cuStreamGetCaptureInfo"),
                               (11030, "cuStreamGetCaptureInfo_v2"),
                               (12030, "cuStreamGetCaptureInfo_v3")),
    "cuStreamUpdateCaptureDependencies": ((11030, "cuStreamUpdateCaptureDependencies"),
                                          (12030, "cuStreamUpdateCaptureDependencies_v2")),
    "cuGraphInstantiate": ((10000, "cuGraphInstantiate"), (11000, "cuGraphInstantiate_v2"),
                           (12000, "cuGraphInstantiateWithFlags")),
    "cuGraphExecUpdate": ((10020, "cuGraphExecUpdate"), (12000, "cuGraphExecUpdate_v2")),
    "cuGraphAddNode": ((12020, "cuGraphAddNode"), (12030, "cuGraphAddNode_v2")),
    **{name: ((since, name), (12000, f"{name}_v2")) for name, since in (
        ("cuGraphAddKernelNode", 10000), ("cuGraphKernelNodeGetParams", 10000),
        ("cuGraphKernelNodeSetParams", 10000), ("cuGraphExecKernelNodeSetParams", 10010))},
    **{name: ((10000, name), (12030, f"{name}_v2")) for name in (
        "cuGraphGetEdges", "cuGraphNodeGetDependencies", "cuGraphNodeGetDependentNodes",
        "cuGraphAddDependencies", "cuGraphRemoveDependencies")},
}


def resolve(name: str, version: int | None = None) -> str | None:
    """The exported symbol serving `name` as CUDA `version` declares it
    (None: the newest), or None. One we implement if there is one, else the
    newest of NVIDIA's (a stub returning CUDA_ERROR_NOT_SUPPORTED)."""
    return _resolve(name, version, _EXPORTED) or _resolve(name, None, _UNIMPLEMENTED)


def _resolve(name: str, version: int | None, exported: set[str]) -> str | None:
    for suffix in ("_ptds", "_ptsz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    versions = VERSIONED.get(name)
    if versions is not None and exported is _EXPORTED:
        chosen = [symbol for since, symbol in versions if version is None or since <= version]
        return chosen[-1] if chosen else None
    for version_suffix in range(4, 1, -1):
        candidate = f"{name}_v{version_suffix}"
        if candidate in exported:
            return candidate
    return name if name in exported else None


def get_proc_address(driver: Any, symbol: Any, pfn: Any, version: int, flags: int,
                     status: Any) -> int:
    ffi = driver.ffi
    if symbol == ffi.NULL or pfn == ffi.NULL:
        return CUresult.CUDA_ERROR_INVALID_VALUE
    name = ffi.string(symbol).decode()
    target = resolve(name, version)
    if target is None:
        pfn[0] = ffi.NULL
        if status is not None and status != ffi.NULL:
            base = name.removesuffix("_ptds").removesuffix("_ptsz")
            oldest = VERSIONED.get(base, ((0, None),))[0][0]
            status[0] = _SYMBOL_VERSION_NOT_SUFFICIENT if version < oldest else _SYMBOL_NOT_FOUND
        return CUresult.CUDA_ERROR_NOT_FOUND
    if target in api.C_FAST_PATH:  # C functions: their exported address, not cffi's wrapper
        pfn[0] = ffi.cast("void *", driver.lib.zmlir_fast_address(target.encode()))
    elif target in _UNIMPLEMENTED:
        pfn[0] = ffi.cast("void *", driver.lib.zmlir_unsupported_address(target.encode()))
    else:
        pfn[0] = ffi.cast("void *", ffi.addressof(driver.lib, target))
    if status is not None and status != ffi.NULL:
        status[0] = _SYMBOL_FOUND
    return CUresult.CUDA_SUCCESS
