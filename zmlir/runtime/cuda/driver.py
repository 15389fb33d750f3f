"""The CUDA driver API, in Python, behind the exported symbols of our
libcuda.so.1 (see build.py). Handles are small integers the application
sees as pointers; device memory is the backend's unified (USM) memory, so
device pointers are real addresses. Kernels are JIT-compiled from the PTX in
the application's fatbins for the backend's target and run there.

Driver composes one class per CUDA object, each in its own module, all
deriving DriverState (state.py):

    device.py   cuInit, versions, error strings, cuDevice*
    context.py  cuDevicePrimaryCtx*, cuCtx*
    module.py   cuModule*, cuLibrary*
    link.py     cuLink* (the JIT linker)
    function.py cuFunc*, cuKernel*
    memory.py   cuMemAlloc/Free*, host memory, cuMemGetInfo, cuPointerGetAttribute, hints
    ipc.py      cuIpc* (memory and events shared with other processes; a base of memory.py)
    mempool.py  cuMemAllocAsync, cuMemPool*, cuMemGetMemPool (host, managed pools)
    mempool_ipc.py  cuMemPoolExport*/Import* (pools shared with other processes)
    virtual_memory.py  cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess...,
                cuMemExport/ImportFromShareableHandle (VMM)
    memcpy.py   cuMemcpy*, cuMemset*
    texture.py  cuArray*, copies to and from arrays, cuTexObject*, cuSurfObject*
    stream.py   cuStream*
    graph/      cuGraph*, stream capture, cuUserObject* (a package: graph/__init__.py)
    event.py    cuEvent*
    launch.py   cuLaunch*, cuOccupancy*
    profiler.py cuProfilerStart/Stop

with printf.py, the device printf buffer that module loading attaches
modules to and every synchronisation point flushes (DriverState.sync_point);
bind() below is the C boundary: every exported symbol is bound to the
method of its name. Every entry point returns a CUresult; Python exceptions
never cross into C: a CudaError becomes its code, anything else
CUDA_ERROR_UNKNOWN with one line on stderr. APIs we do not implement return
CUDA_ERROR_NOT_SUPPORTED and log their name once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from zmlir.runtime.backends._vendor import VendorError
from zmlir.runtime.cuda import api, export_slots, proc_address
from zmlir.runtime.cuda.context import ContextAPI
from zmlir.runtime.cuda.device import DeviceAPI
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.event import EventAPI
from zmlir.runtime.cuda.graph.api import GraphAPI
from zmlir.runtime.cuda.launch import LaunchAPI
from zmlir.runtime.cuda.link import LinkAPI
from zmlir.runtime.cuda.memcpy import MemcpyAPI
from zmlir.runtime.cuda.mempool_ipc import MemPoolIpcAPI
from zmlir.runtime.cuda.module import ModuleAPI
from zmlir.runtime.cuda.objects import Function
from zmlir.runtime.cuda.profiler import ProfilerAPI
from zmlir.runtime.cuda.state import STICKY_ERRORS, log
from zmlir.runtime.cuda.stream import StreamAPI
from zmlir.runtime.cuda.texref import TexRefAPI
from zmlir.runtime.cuda.virtual_memory import VirtualMemoryAPI

E = CUresult


class Driver(DeviceAPI, ContextAPI, LinkAPI, ModuleAPI, GraphAPI, LaunchAPI, TexRefAPI,
             MemcpyAPI, MemPoolIpcAPI, VirtualMemoryAPI, StreamAPI, EventAPI, ProfilerAPI):
    """The state behind the API: one process, one backend device."""


# -- the C boundary ---------------------------------------------------------------

_INSTANCE: Driver | None = None


def instance() -> Driver:
    assert _INSTANCE is not None, "driver not bound"
    return _INSTANCE


def bind(ffi: Any, lib: Any) -> Driver:
    """Binds every exported symbol to its Python body (or a logging stub)."""
    global _INSTANCE
    driver = Driver(ffi, lib)
    _INSTANCE = driver
    bodies: dict[str, Callable[..., int]] = {
        "cuGetProcAddress": lambda s, p, v, f: proc_address.get_proc_address(driver, s, p, v, f,
                                                                              None),
        "cuGetProcAddress_v2": lambda s, p, v, f, st: proc_address.get_proc_address(
            driver, s, p, v, f, st),
        "cuGetExportTable": lambda t, u: export_slots.get_export_table(driver, t, u),
    }
    for name in api.function_names():
        body = bodies.get(name) or getattr(driver, name, None)
        # The fast path's functions are C; their Python bodies go by another name.
        symbol = api.PYTHON_BODY_PREFIX + name if name in api.C_FAST_PATH else name
        ffi.def_extern(name=symbol)(_boundary(name, body, driver))

    def unsupported(name: Any) -> int:
        api_name = ffi.string(name).decode()

        def invoke() -> int:
            return int(driver.unsupported(api_name, "not implemented"))
        tracer = driver.tracer  # traced like every other entry point
        return invoke() if tracer is None else int(tracer.call(api_name, (), invoke))
    ffi.def_extern(name="zmlir_py_unsupported", error=int(E.CUDA_ERROR_UNKNOWN))(unsupported)
    _install_tracer(driver)
    # ZMLIR_TRACE_FAST_PATH=1 keeps the C fast path on while tracing: the
    # trace then holds what still reaches Python (what a hot loop costs there).
    keep_fast = os.environ.get("ZMLIR_TRACE_FAST_PATH", "0") not in ("", "0")
    driver.fast.enable(tracing=driver.tracer is not None and not keep_fast)
    return driver


def _install_tracer(driver: Driver) -> None:
    """Sets driver.tracer when ZMLIR_TRACE names a file."""
    path = os.environ.get("ZMLIR_TRACE")
    if not path:
        return
    from zmlir.trace.tracer import Tracer  # only when tracing

    def kernel_name(handle: int) -> str | None:
        obj = driver.handles.find(handle)
        return obj.name if isinstance(obj, Function) else None

    try:
        driver.tracer = Tracer(path, driver.ffi, driver="zmlir", kernel_name=kernel_name)
    except OSError as err:
        log(f"cannot write the trace {path}: {err}")


# What NVIDIA's driver still answers once the process holds a sticky error
# (a kernel trapped, asserted or faulted; state.make_sticky), as an H200
# answered test/cuda/adversarial/recorded/sticky_calls.cu: calls that touch no
# context, the current-context stack, pointer attributes, and destroying or
# resetting contexts (which does not clear the error). Every other entry
# point, creating a context or retaining the primary one included, returns
# the sticky error (_boundary).
_STICKY_EXEMPT = ("cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString",
                  "cuGetProcAddress", "cuGetExportTable", "cuDeviceGet", "cuDeviceTotalMem",
                  "cuDeviceComputeCapability", "cuDeviceCanAccessPeer",
                  "cuDevicePrimaryCtxGetState", "cuDevicePrimaryCtxRelease",
                  "cuDevicePrimaryCtxReset", "cuCtxDestroy",
                  "cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxPushCurrent", "cuCtxPopCurrent",
                  "cuCtxGetDevice", "cuCtxGetApiVersion", "cuCtxGetId", "cuCtxGetFlags",
                  "cuPointerGetAttribute", "cuModuleGetLoadingMode", "cuProfiler")
# Calls that make a context rather than work on the current one: the sticky
# error comes first even where the current context was destroyed.
_MAKE_CONTEXTS = ("cuCtxCreate", "cuDevicePrimaryCtxRetain")
# Synchronisation points (DriverState.sync_point): refused for a sticky error,
# they still print what kernels printed before it (a failed assert's message).
_SYNC_POINTS = ("cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuMemFree_v2",
                "cuModuleLoad", "cuModuleUnload", "cuLibraryLoad", "cuStreamAddCallback")


def _is_sync_point(name: str) -> bool:
    blocking_copy = name.startswith("cuMemcpy") and "Async" not in name
    return blocking_copy or name.startswith(_SYNC_POINTS)


def _boundary(name: str, body: Callable[..., int] | None, driver: Driver) -> Callable[..., int]:
    sticky = not name.startswith(_STICKY_EXEMPT)
    needs_context = not name.startswith(_MAKE_CONTEXTS)
    flush = _is_sync_point(name)
    if body is None:
        def not_implemented(*args: Any) -> int:
            return int(driver.unsupported(name, "not implemented"))
        body = not_implemented

    def invoke(*args: Any) -> int:
        driver.fast.enter()  # counted: the process's exit waits for it (fastpath.c)
        try:
            if driver.fast.vendor_captures():  # streams capture on the vendor's driver
                driver.demote_vendor_captures()
            if sticky:
                driver.check_sticky(flush, needs_context)
            return int(body(*args))
        except CudaError as err:
            if os.environ.get("ZMLIR_LOG"):
                log(f"{name}: {err}")
            return int(err.code)
        except VendorError as err:
            if err.cuda_result is None:
                return internal_error(err)
            if os.environ.get("ZMLIR_LOG"):
                log(f"{name}: {err}")
            if err.cuda_result in STICKY_ERRORS:  # the real GPU's context is lost
                driver.make_sticky(CUresult(err.cuda_result))
            return int(err.cuda_result)
        except Exception as err:  # a bug of ours: report it, never unwind into C
            return internal_error(err)
        finally:
            driver.fast.leave()

    def internal_error(err: Exception) -> int:
        log(f"internal error in {name}: {type(err).__name__}: {err}")
        if os.environ.get("ZMLIR_DEBUG"):
            import traceback

            traceback.print_exc()
        return int(E.CUDA_ERROR_UNKNOWN)

    def call(*args: Any) -> int:
        tracer = driver.tracer
        if tracer is None:
            return invoke(*args)
        return tracer.call(name, args, invoke)

    return call
