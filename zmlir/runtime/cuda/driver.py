"""The CUDA driver API, in Python, behind the exported symbols of our
libcuda.so.1 (see build.py). Handles are small integers the application
sees as pointers; device memory is the backend's unified (USM) memory, so
device pointers are real addresses. Kernels are JIT-compiled from the PTX in
the application's fatbins to SPIR-V and run on the OpenCL backend.

Every entry point returns a CUresult; Python exceptions never cross into C:
a CudaError becomes its code, anything else CUDA_ERROR_UNKNOWN with one line
on stderr. APIs we do not implement return CUDA_ERROR_NOT_SUPPORTED and log
their name once.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zmlir.runtime.backends._vendor import VendorError
from zmlir.runtime.cuda import api, fatbin
from zmlir.runtime.cuda.errors import CudaError, CUresult, message_of, name_of
from zmlir.runtime.cuda.fastpath import FastPath
from zmlir.runtime.cuda.memory_map import AllocationMap
from zmlir.runtime.cuda.mempool import (
    ALLOCATION_TYPE_PINNED,
    HANDLE_TYPE_NONE,
    LOCATION_TYPE_DEVICE,
    MemoryPool,
)

DRIVER_VERSION = 13000
TRAP_WORD = "__zmlir_trap"  # kTrapWordName of zmlir/lowering/PTXLowering.h
COMPUTE_CAPABILITY = (8, 0)
E = CUresult

_NUMPY_TYPES = {
    "u8": np.uint8, "s8": np.int8, "b8": np.uint8, "u16": np.uint16, "s16": np.int16,
    "b16": np.uint16, "f16": np.float16, "u32": np.uint32, "s32": np.int32, "b32": np.uint32,
    "f32": np.float32, "u64": np.uint64, "s64": np.int64, "b64": np.uint64, "f64": np.float64,
}


def log(message: str) -> None:
    print(f"zmlir: {message}", file=sys.stderr, flush=True)


@dataclass
class Context:
    device: int
    flags: int = 0
    primary: bool = False
    refcount: int = 1
    limits: dict[int, int] = field(default_factory=dict)
    local_storage: dict[int, tuple[int, Any]] = field(default_factory=dict)
    # Sticky: once a kernel of the context trapped (CUDA_ERROR_LAUNCH_FAILED), every later
    # launch, copy and synchronization returns it, as NVIDIA's driver does.
    error: int = 0


@dataclass
class Function:
    module: Module
    name: str
    info: Any  # zmlir.KernelInfo
    kernel: Any  # the backend's kernel
    attributes: dict[int, int] = field(default_factory=dict)
    dtypes: list[Any] | None = None  # numpy types of the parameters, found on first launch
    handle: int = 0
    fast: bool = False  # registered with the C launch fast path


@dataclass
class Module:
    ptx_name: str
    compiled: Any  # zmlir.CompiledModule
    program: Any  # the backend's program
    functions: dict[str, Function] = field(default_factory=dict)
    globals: dict[str, int] = field(default_factory=dict)
    handle: int = 0  # the first handle it was loaded under (cuFuncGetModule)
    # The address of the module's trap word (SPIR-V modules with a `trap`), 0: none.
    trap_word: int = 0


@dataclass
class UncompiledLibrary:
    """A library whose PTX did not compile (logged when it was loaded). CUDA
    loads libraries lazily and cudart loads every fatbin of a program at
    start-up, so the error belongs to the library's first use: a program
    can still ask the device what it supports before it needs the kernel."""

    error: CudaError


@dataclass
class Stream:
    flags: int = 0
    priority: int = 0
    # While capturing (cuStreamBeginCapture): the work recorded for the graph.
    capture: list[Callable[[], int]] | None = None


@dataclass
class Graph:
    """Work captured from a stream, replayed in order by cuGraphLaunch."""

    nodes: list[Callable[[], int]]


@dataclass
class GraphExec:
    nodes: list[Callable[[], int]]


@dataclass
class Event:
    flags: int = 0
    timestamp: float | None = None
    # Recorded in a capturing stream: streams waiting on it join that capture.
    capture: list[Callable[[], int]] | None = None


# CUlaunchAttributeID values that change nothing here: hints, and orderings
# our one queue already gives (programmatic serialization may overlap
# launches; running them in order is allowed).
_LAUNCH_HINTS = {0: "IGNORE", 1: "ACCESS_POLICY_WINDOW", 3: "SYNCHRONIZATION_POLICY",
                 5: "CLUSTER_SCHEDULING_POLICY_PREFERENCE",
                 6: "PROGRAMMATIC_STREAM_SERIALIZATION", 8: "PRIORITY",
                 9: "MEM_SYNC_DOMAIN_MAP", 10: "MEM_SYNC_DOMAIN",
                 14: "PREFERRED_SHARED_MEMORY_CARVEOUT", 16: "NVLINK_UTIL_CENTRIC_SCHEDULING"}


class Handles:
    """Integer handles for driver objects (what the application sees)."""

    def __init__(self) -> None:
        self._objects: dict[int, Any] = {}
        self._ids = itertools.count(0x1000, 0x10)

    def add(self, obj: Any) -> int:
        handle = next(self._ids)
        self._objects[handle] = obj
        return handle

    def get(self, handle: int, kind: type) -> Any:
        obj = self._objects.get(handle)
        if not isinstance(obj, kind):
            raise CudaError(E.CUDA_ERROR_INVALID_HANDLE, f"not a {kind.__name__}: 0x{handle:x}")
        return obj

    def find(self, handle: int) -> Any:
        """The object behind `handle`, of any kind, or None."""
        return self._objects.get(handle)

    def remove(self, handle: int, kind: type) -> Any:
        obj = self.get(handle, kind)
        del self._objects[handle]
        return obj


class Driver:
    """The state behind the API: one process, one backend device."""

    def __init__(self, ffi: Any, lib: Any) -> None:
        self.ffi, self.lib = ffi, lib
        self.handles = Handles()
        self.device: Any = None  # backends.Backend
        self.initialized = False
        self.primary: Context | None = None
        self.primary_handle = 0
        self.tls = threading.local()
        self.allocations = AllocationMap()
        self.host_allocations: dict[int, Any] = {}
        self.stream_attributes: dict[tuple[int, int], bytes] = {}  # (stream, CUstreamAttrID)
        self.pools: list[MemoryPool] = []  # live pools (settled at synchronizations)
        self.pool_of: dict[int, MemoryPool] = {}  # pool allocation -> its pool
        self.default_pool = 0  # handles
        self.current_pool = 0
        self.modules_by_hash: dict[str, Module] = {}
        self.keepalive: list[Any] = []
        self.warned: set[str] = set()
        self.lock = threading.RLock()
        # Set by trace.install() when ZMLIR_TRACE asks for a call log.
        self.tracer: Any = None
        self.fast = FastPath(ffi, lib)

    # -- helpers ------------------------------------------------------------

    def _stack(self) -> list[int]:
        stack = getattr(self.tls, "stack", None)
        if stack is None:
            stack = self.tls.stack = []
        return stack

    def _current_changed(self) -> None:
        """Tells the launch fast path this thread's current context (none
        while it holds a sticky error: the Python path returns that)."""
        stack = self._stack()
        self.fast.set_context(stack[-1] if stack and not self._sticky_error() else 0)

    def _sticky_error(self) -> int:
        """The current context's sticky error (0: none)."""
        stack = self._stack()
        if not stack:
            return 0
        try:
            return self.handles.get(stack[-1], Context).error
        except CudaError:
            return 0

    def check_sticky(self) -> None:
        """Raises the current context's sticky error, if it has one."""
        code = self._sticky_error()
        if code:
            raise CudaError(code, "a kernel of this context trapped earlier")

    def unsupported(self, api_name: str, why: str) -> int:
        """Logs (once per API and reason) and returns CUDA_ERROR_NOT_SUPPORTED."""
        key = f"{api_name}: {why}"
        if key not in self.warned:
            self.warned.add(key)
            log(f"unsupported CUDA driver API: {api_name} ({why}); "
                "returning CUDA_ERROR_NOT_SUPPORTED")
        return E.CUDA_ERROR_NOT_SUPPORTED

    def require_init(self) -> None:
        if not self.initialized:
            raise CudaError(E.CUDA_ERROR_NOT_INITIALIZED)

    def current_context(self) -> Context:
        self.require_init()
        stack = self._stack()
        if not stack:
            raise CudaError(E.CUDA_ERROR_INVALID_CONTEXT, "no current context")
        return self.handles.get(stack[-1], Context)

    def check_device(self, dev: int) -> None:
        self.require_init()
        if dev != 0:
            raise CudaError(E.CUDA_ERROR_INVALID_DEVICE, f"device {dev}")

    def ptr(self, value: Any) -> int:
        return int(self.ffi.cast("uintptr_t", value))

    def out(self, pointer: Any, value: Any) -> None:
        if pointer == self.ffi.NULL:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "null output pointer")
        pointer[0] = value

    def handle_ptr(self, handle: int) -> Any:
        return self.ffi.cast("void *", handle)

    def host_view(self, address: int, nbytes: int) -> memoryview:
        if address == 0 and nbytes:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "null host pointer")
        return memoryview(self.ffi.buffer(self.ffi.cast("char *", address), nbytes))

    def check_device_range(self, address: int, nbytes: int) -> None:
        if self.allocations.containing(address, nbytes) is not None:
            return
        raise CudaError(E.CUDA_ERROR_INVALID_VALUE,
                        f"[0x{address:x}, +{nbytes}) is not inside a device allocation")

    # -- init, versions, errors ---------------------------------------------

    def cuInit(self, flags: int) -> int:
        if flags != 0:
            return E.CUDA_ERROR_INVALID_VALUE
        with self.lock:
            if self.initialized:
                return E.CUDA_SUCCESS
            from zmlir.runtime.backends import NoDevice, open_backend

            try:
                self.device = open_backend()
            except NoDevice as err:
                log(f"no device: {err}")
                return E.CUDA_ERROR_NO_DEVICE
            self._prepare_module_loading()
            self.fast.set_backend(self.device)
            self.initialized = True
        return E.CUDA_SUCCESS

    def _prepare_module_loading(self) -> None:
        """Imports what loading a cached module needs now, at start-up, so a
        warm module load costs milliseconds."""
        try:
            import zmlir.compiled  # noqa: F401  (what a cache hit builds)
            from zmlir.runtime import cache
            from zmlir.targets import get_target

            get_target(self.device.target)
            cache.shared_cache()
            cache.compiler_fingerprint()
        except Exception as err:  # no compiler here: precompiled modules only
            if os.environ.get("ZMLIR_LOG"):
                log(f"module cache unavailable: {err}")

    def cuDriverGetVersion(self, version: Any) -> int:
        self.out(version, DRIVER_VERSION)
        return E.CUDA_SUCCESS

    def _error_string(self, table: Callable[[int], str | None], error: int, out: Any) -> int:
        text = table(error)
        if text is None:
            out[0] = self.ffi.NULL
            return E.CUDA_ERROR_INVALID_VALUE
        cstr = self.ffi.new("char[]", text.encode())
        self.keepalive.append(cstr)
        out[0] = cstr
        return E.CUDA_SUCCESS

    def cuGetErrorName(self, error: int, out: Any) -> int:
        return self._error_string(name_of, error, out)

    def cuGetErrorString(self, error: int, out: Any) -> int:
        return self._error_string(message_of, error, out)

    # -- devices ------------------------------------------------------------

    def cuDeviceGetCount(self, count: Any) -> int:
        self.require_init()
        self.out(count, 1)
        return E.CUDA_SUCCESS

    def cuDeviceGet(self, device: Any, ordinal: int) -> int:
        self.check_device(ordinal)
        self.out(device, 0)
        return E.CUDA_SUCCESS

    def cuDeviceGetName(self, name: Any, length: int, dev: int) -> int:
        self.check_device(dev)
        text = f"zmlir {self.device.device_name}".encode()[: max(length - 1, 0)]
        self.ffi.memmove(name, text + b"\0", len(text) + 1)
        return E.CUDA_SUCCESS

    def cuDeviceGetUuid(self, uuid: Any, dev: int) -> int:
        self.check_device(dev)
        digest = hashlib.md5(f"zmlir:{self.device.device_name}".encode()).digest()
        self.ffi.memmove(uuid, digest, 16)
        return E.CUDA_SUCCESS

    cuDeviceGetUuid_v2 = cuDeviceGetUuid

    def device_hash_info(self) -> bytes:
        """Per device: UUID, PCI domain, bus and device (the integrity check's input)."""
        uuid = self.ffi.new("CUuuid *")
        self.cuDeviceGetUuid(uuid, 0)
        return bytes(self.ffi.buffer(uuid, 16)) + struct.pack("<iii", 0, 0, 0)

    def cuDeviceGetLuid(self, luid: Any, mask: Any, dev: int) -> int:
        self.check_device(dev)
        return self.unsupported("cuDeviceGetLuid", "LUIDs exist on Windows only")

    def cuDeviceTotalMem_v2(self, nbytes: Any, dev: int) -> int:
        self.check_device(dev)
        self.out(nbytes, self.total_memory())
        return E.CUDA_SUCCESS

    def total_memory(self) -> int:
        return self.device.total_memory()

    def cuDeviceGetAttribute(self, pi: Any, attrib: int, dev: int) -> int:
        self.check_device(dev)
        from zmlir.runtime.cuda.attributes import device_attribute

        self.out(pi, device_attribute(attrib, self.device))
        return E.CUDA_SUCCESS

    def cuDeviceComputeCapability(self, major: Any, minor: Any, dev: int) -> int:
        self.check_device(dev)
        self.out(major, COMPUTE_CAPABILITY[0])
        self.out(minor, COMPUTE_CAPABILITY[1])
        return E.CUDA_SUCCESS

    # -- contexts -------------------------------------------------------------

    def _primary(self) -> int:
        if self.primary is None:
            self.primary = Context(device=0, primary=True, refcount=0)
            self.primary_handle = self.handles.add(self.primary)
        return self.primary_handle

    def cuDevicePrimaryCtxRetain(self, pctx: Any, dev: int) -> int:
        self.check_device(dev)
        handle = self._primary()
        assert self.primary is not None
        self.primary.refcount += 1
        self.out(pctx, self.handle_ptr(handle))
        return E.CUDA_SUCCESS

    def cuDevicePrimaryCtxRelease_v2(self, dev: int) -> int:
        self.check_device(dev)
        if self.primary is None or self.primary.refcount == 0:
            return E.CUDA_ERROR_INVALID_CONTEXT
        self.primary.refcount -= 1
        return E.CUDA_SUCCESS

    def cuDevicePrimaryCtxReset_v2(self, dev: int) -> int:
        self.check_device(dev)
        if self.primary is not None:
            self._destroy_local_storage(self.primary_handle, self.primary)
            self.primary.refcount = 0
        return E.CUDA_SUCCESS

    def cuDevicePrimaryCtxGetState(self, dev: int, flags: Any, active: Any) -> int:
        self.check_device(dev)
        ctx = self.primary
        self.out(flags, ctx.flags if ctx else 0)
        self.out(active, int(bool(ctx and ctx.refcount > 0)))
        return E.CUDA_SUCCESS

    def cuDevicePrimaryCtxSetFlags_v2(self, dev: int, flags: int) -> int:
        self.check_device(dev)
        self.handles.get(self._primary(), Context).flags = flags
        return E.CUDA_SUCCESS

    def cuCtxCreate_v2(self, pctx: Any, flags: int, dev: int) -> int:
        self.check_device(dev)
        handle = self.handles.add(Context(device=dev, flags=flags))
        self._stack().append(handle)
        self._current_changed()
        self.out(pctx, self.handle_ptr(handle))
        return E.CUDA_SUCCESS

    def cuCtxCreate_v4(self, pctx: Any, params: Any, flags: int, dev: int) -> int:
        return self.cuCtxCreate_v2(pctx, flags, dev)

    def cuCtxDestroy_v2(self, ctx: Any) -> int:
        self.require_init()
        handle = self.ptr(ctx)
        context = self.handles.get(handle, Context)
        if context.primary:
            return E.CUDA_ERROR_INVALID_CONTEXT
        self._destroy_local_storage(handle, context)
        self.handles.remove(handle, Context)
        stack = self._stack()
        while handle in stack:
            stack.remove(handle)
        self.fast.context_destroyed()
        self._current_changed()
        return E.CUDA_SUCCESS

    def cuCtxGetCurrent(self, pctx: Any) -> int:
        self.require_init()
        stack = self._stack()
        self.out(pctx, self.handle_ptr(stack[-1]) if stack else self.ffi.NULL)
        return E.CUDA_SUCCESS

    def cuCtxSetCurrent(self, ctx: Any) -> int:
        self.require_init()
        handle = self.ptr(ctx)
        stack = self._stack()
        if handle == 0:
            if stack:
                stack.pop()
            self._current_changed()
            return E.CUDA_SUCCESS
        self.handles.get(handle, Context)
        if stack:
            stack[-1] = handle
        else:
            stack.append(handle)
        self._current_changed()
        return E.CUDA_SUCCESS

    def cuCtxPushCurrent_v2(self, ctx: Any) -> int:
        self.require_init()
        handle = self.ptr(ctx)
        self.handles.get(handle, Context)
        self._stack().append(handle)
        self._current_changed()
        return E.CUDA_SUCCESS

    def cuCtxPopCurrent_v2(self, pctx: Any) -> int:
        self.require_init()
        stack = self._stack()
        if not stack:
            return E.CUDA_ERROR_INVALID_CONTEXT
        handle = stack.pop()
        self._current_changed()
        if pctx != self.ffi.NULL:
            pctx[0] = self.handle_ptr(handle)
        return E.CUDA_SUCCESS

    def cuCtxGetDevice(self, device: Any) -> int:
        self.out(device, self.current_context().device)
        return E.CUDA_SUCCESS

    def _context_or_current(self, ctx: Any) -> Context:
        """CUDA 13's context arguments: NULL means the current context."""
        if self.ptr(ctx) == 0:
            return self.current_context()
        self.require_init()
        return self.handles.get(self.ptr(ctx), Context)

    def cuCtxGetDevice_v2(self, device: Any, ctx: Any) -> int:
        self.out(device, self._context_or_current(ctx).device)
        return E.CUDA_SUCCESS

    def cuCtxGetFlags(self, flags: Any) -> int:
        self.out(flags, self.current_context().flags)
        return E.CUDA_SUCCESS

    def cuCtxGetId(self, ctx: Any, ctx_id: Any) -> int:
        handle = self.ptr(ctx)
        if handle == 0:
            stack = self._stack()
            handle = stack[-1] if stack else 0
        self.handles.get(handle, Context)
        self.out(ctx_id, handle)
        return E.CUDA_SUCCESS

    def cuCtxSynchronize(self) -> int:
        self.current_context()
        self.check_sticky()
        self.device.synchronize()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuCtxSynchronize_v2(self, ctx: Any) -> int:
        self._context_or_current(ctx)  # one device: its work is all of every context's
        self.check_sticky()
        self.device.synchronize()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuCtxGetApiVersion(self, ctx: Any, version: Any) -> int:
        self.require_init()
        self.out(version, 3020)
        return E.CUDA_SUCCESS

    def cuCtxGetLimit(self, value: Any, limit: int) -> int:
        ctx = self.current_context()
        defaults = {0: 1024, 1: 1 << 20, 2: 8 << 20, 3: 2, 4: 2048, 5: 0, 6: 0}
        if limit not in defaults:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(value, ctx.limits.get(limit, defaults[limit]))
        return E.CUDA_SUCCESS

    def cuCtxSetLimit(self, limit: int, value: int) -> int:
        self.current_context().limits[limit] = value
        return E.CUDA_SUCCESS

    def cuCtxGetCacheConfig(self, config: Any) -> int:
        self.current_context()
        self.out(config, 0)
        return E.CUDA_SUCCESS

    def cuCtxSetCacheConfig(self, config: int) -> int:
        self.current_context()
        return E.CUDA_SUCCESS

    def cuCtxGetSharedMemConfig(self, config: Any) -> int:
        self.current_context()
        self.out(config, 1)
        return E.CUDA_SUCCESS

    def cuCtxSetSharedMemConfig(self, config: int) -> int:
        self.current_context()
        if config not in (0, 1, 2):  # default, four-byte, eight-byte banks: a preference
            return E.CUDA_ERROR_INVALID_VALUE
        return E.CUDA_SUCCESS

    def cuCtxGetStreamPriorityRange(self, least: Any, greatest: Any) -> int:
        self.require_init()
        if least != self.ffi.NULL:
            least[0] = 0
        if greatest != self.ffi.NULL:
            greatest[0] = 0
        return E.CUDA_SUCCESS

    def _destroy_local_storage(self, handle: int, ctx: Context) -> None:
        for key, (value, dtor) in list(ctx.local_storage.items()):
            if dtor is not None and dtor != self.ffi.NULL:
                dtor(self.handle_ptr(handle), self.ffi.cast("void *", key), value)
        ctx.local_storage.clear()
        self.fast.cls_forget(handle, 0)

    # -- modules ---------------------------------------------------------------

    def _image_ptx(self, image: Any) -> tuple[str, str]:
        """(PTX text, a name for diagnostics) of a module image in memory."""
        address = self.ptr(image)
        if address == 0:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "null module image")
        head = bytes(self.ffi.buffer(self.ffi.cast("char *", address), 16))
        magic = struct.unpack_from("<I", head)[0]
        if magic == fatbin.WRAPPER_MAGIC:
            _, version, data, _ = struct.unpack("<IIQQ", bytes(
                self.ffi.buffer(self.ffi.cast("char *", address), 24)))
            if version != 1:
                raise CudaError(E.CUDA_ERROR_INVALID_IMAGE,
                                f"fatbin wrapper version {version} is not supported")
            return self._fatbin_ptx(data)
        if magic == fatbin.FATBIN_MAGIC:
            return self._fatbin_ptx(address)
        if head.startswith(b"\x7fELF"):
            raise CudaError(E.CUDA_ERROR_NO_BINARY_FOR_GPU,
                            "module image is NVIDIA machine code (cubin), not PTX")
        text = self.ffi.string(self.ffi.cast("char *", address)).decode("utf-8", "replace")
        return text, "module.ptx"

    def _fatbin_ptx(self, address: int) -> tuple[str, str]:
        header = bytes(self.ffi.buffer(self.ffi.cast("char *", address), 16))
        size = fatbin.fatbin_size(header)
        data = bytes(self.ffi.buffer(self.ffi.cast("char *", address), size))
        try:
            entry = fatbin.select_ptx(fatbin.parse(data), COMPUTE_CAPABILITY[0] * 10
                                      + COMPUTE_CAPABILITY[1])
        except fatbin.FatbinError as err:
            raise CudaError(E.CUDA_ERROR_NO_BINARY_FOR_GPU, str(err)) from None
        return entry.ptx_text(), f"fatbin@0x{address:x}.sm_{entry.sm}.ptx"

    def load_module(self, image: Any) -> int:
        self.require_init()
        ptx, name = self._image_ptx(image)
        key = hashlib.sha256(ptx.encode()).hexdigest()
        module = self.modules_by_hash.get(key)
        if module is None:
            # A backend may hold modules compiled ahead of time (the CUDA
            # passthrough on machines without our compiler).
            find = getattr(self.device, "precompiled", None)
            compiled = find(key) if find is not None else None
            if compiled is None:
                compiled = self._compile(ptx, name, key)
            program = self.device.load(compiled)
            module = Module(name, compiled, program)
            module.trap_word = self._trap_word(module)
            self.modules_by_hash[key] = module
        handle = self.handles.add(module)
        module.handle = module.handle or handle
        return handle

    def _trap_word(self, module: Module) -> int:
        """The address of a SPIR-V module's trap word (0: it has none), the
        variable a thread executing `trap` sets (see emitTrap in
        zmlir/lowering/PTXToStdWarp.cpp); its Export linkage names it in the binary."""
        if getattr(module.compiled.target, "name", "") != "spirv" or \
                TRAP_WORD.encode() not in module.compiled.binary:
            return 0
        address, size = self.device.global_variable(module.program, TRAP_WORD)
        self.allocations.add(address, size, owned=False)
        return address

    def _compile(self, ptx: str, name: str, key: str) -> Any:
        from zmlir.diagnostics import CompileError

        try:
            from zmlir.runtime.cache import compile_cached

            return compile_cached(ptx, self.device.target, name)
        except CompileError as err:
            log(f"cannot compile {name}: {err}")
            raise CudaError(E.CUDA_ERROR_INVALID_PTX, str(err)) from None
        except ImportError as err:
            log(f"module {key} is not precompiled and zmlir's compiler is unavailable ({err})")
            raise CudaError(E.CUDA_ERROR_INVALID_PTX, "compiler unavailable") from None

    def cuModuleLoadData(self, pmodule: Any, image: Any) -> int:
        self.out(pmodule, self.handle_ptr(self.load_module(image)))
        return E.CUDA_SUCCESS

    def cuModuleLoadDataEx(self, pmodule: Any, image: Any, n: int, options: Any,
                           values: Any) -> int:
        return self.cuModuleLoadData(pmodule, image)

    cuModuleLoadFatBinary = cuModuleLoadData

    def cuModuleUnload(self, hmod: Any) -> int:
        self.require_init()
        self.handles.remove(self.ptr(hmod), Module)
        return E.CUDA_SUCCESS

    def function(self, module: Module, name: str) -> int:
        fn = module.functions.get(name)
        if fn is None:
            info = module.compiled.kernels.get(name)
            if info is None:
                raise CudaError(E.CUDA_ERROR_NOT_FOUND, f"no kernel named {name!r}")
            fn = Function(module, name, info, self.device.kernel(module.program, name))
            fn.handle = self.handles.add(fn)
            module.functions[name] = fn
            self._fast_register(fn)
        return fn.handle

    def _fast_register(self, fn: Function) -> None:
        """Registers `fn` with the C launch fast path (if it can launch it):
        its parameters' sizes come from their PTX types."""
        dtypes = [_NUMPY_TYPES.get(t) for t in fn.info.params]
        sizes = None if None in dtypes else [np.dtype(d).itemsize for d in dtypes]
        if fn.module.trap_word:
            sizes = None  # its launches check the trap word, in Python
        fn.fast = self.fast.function(fn.handle, self.device, fn.kernel, fn.info, sizes)

    def cuModuleGetFunction(self, hfunc: Any, hmod: Any, name: Any) -> int:
        self.require_init()
        module = self.handles.get(self.ptr(hmod), Module)
        self.out(hfunc, self.handle_ptr(self.function(module, self.ffi.string(name).decode())))
        return E.CUDA_SUCCESS

    def cuModuleGetGlobal_v2(self, dptr: Any, nbytes: Any, hmod: Any, name: Any) -> int:
        self.require_init()
        module = self.handles.get(self.ptr(hmod), Module)
        if name == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        var = self.ffi.string(name).decode()
        address = module.globals.get(var)
        if address is None:
            try:
                address, size = self.device.global_variable(module.program, var)
            except Exception as err:
                if os.environ.get("ZMLIR_LOG"):
                    log(f"cuModuleGetGlobal({var!r}): {err}")
                return E.CUDA_ERROR_NOT_FOUND
            module.globals[var] = address
            # Module variables are device memory for copies and range checks.
            self.allocations.add(address, size, owned=False)
        if dptr != self.ffi.NULL:
            dptr[0] = address
        if nbytes != self.ffi.NULL:
            nbytes[0] = self.allocations.size_of(address)
        return E.CUDA_SUCCESS

    def cuModuleGetLoadingMode(self, mode: Any) -> int:
        self.out(mode, 1)  # CU_MODULE_EAGER_LOADING
        return E.CUDA_SUCCESS

    # Libraries are modules loaded on first use in CUDA; we load eagerly,
    # and one that does not compile fails at its first use (UncompiledLibrary).
    def cuLibraryLoadData(self, plib: Any, code: Any, *options: Any) -> int:
        try:
            handle = self.load_module(code)
        except CudaError as err:
            if err.code != E.CUDA_ERROR_INVALID_PTX:
                raise
            handle = self.handles.add(UncompiledLibrary(err))
        self.out(plib, self.handle_ptr(handle))
        return E.CUDA_SUCCESS

    def _library(self, lib: Any) -> None:
        """Raises the compile error of a library that did not compile."""
        obj = self.handles.find(self.ptr(lib))
        if isinstance(obj, UncompiledLibrary):
            raise obj.error

    def cuLibraryUnload(self, lib: Any) -> int:
        self.require_init()
        if isinstance(self.handles.find(self.ptr(lib)), UncompiledLibrary):
            self.handles.remove(self.ptr(lib), UncompiledLibrary)
            return E.CUDA_SUCCESS
        return self.cuModuleUnload(lib)

    def cuLibraryGetKernel(self, pkernel: Any, lib: Any, name: Any) -> int:
        self._library(lib)
        return self.cuModuleGetFunction(pkernel, lib, name)

    def cuLibraryGetModule(self, pmod: Any, lib: Any) -> int:
        self._library(lib)
        self.handles.get(self.ptr(lib), Module)
        self.out(pmod, lib)
        return E.CUDA_SUCCESS

    def cuLibraryGetGlobal(self, dptr: Any, nbytes: Any, lib: Any, name: Any) -> int:
        self._library(lib)
        return self.cuModuleGetGlobal_v2(dptr, nbytes, lib, name)

    def cuLibraryGetManaged(self, dptr: Any, nbytes: Any, lib: Any, name: Any) -> int:
        # A __managed__ variable: the host reads and writes it through this
        # address, so it must be the module variable's own, host-accessible
        # memory (on the CUDA passthrough: the real driver's managed memory).
        self.require_init()
        self._library(lib)
        address, size = self.ffi.new("CUdeviceptr *"), self.ffi.new("size_t *")
        code = self.cuModuleGetGlobal_v2(address, size, lib, name)
        if code != E.CUDA_SUCCESS:
            return code
        if not self.device.host_accessible(int(address[0])):
            var = self.ffi.string(name).decode()
            return self.unsupported("cuLibraryGetManaged", f"__managed__ variable {var!r}: "
                                    f"the {self.device.name} backend's module variable is "
                                    "not host-accessible")
        if dptr != self.ffi.NULL:
            dptr[0] = address[0]
        if nbytes != self.ffi.NULL:
            nbytes[0] = size[0]
        return E.CUDA_SUCCESS

    def cuKernelGetFunction(self, pfunc: Any, kernel: Any) -> int:
        self.handles.get(self.ptr(kernel), Function)
        self.out(pfunc, kernel)
        return E.CUDA_SUCCESS

    def cuKernelGetName(self, name: Any, kernel: Any) -> int:
        return self.cuFuncGetName(name, kernel)

    def cuFuncGetName(self, name: Any, hfunc: Any) -> int:
        fn = self.handles.get(self.ptr(hfunc), Function)
        cstr = self.ffi.new("char[]", fn.name.encode())
        self.keepalive.append(cstr)
        self.out(name, cstr)
        return E.CUDA_SUCCESS

    def cuFuncGetModule(self, hmod: Any, hfunc: Any) -> int:
        fn = self.handles.get(self.ptr(hfunc), Function)
        self.out(hmod, self.handle_ptr(fn.module.handle))
        return E.CUDA_SUCCESS

    def cuFuncGetAttribute(self, pi: Any, attrib: int, hfunc: Any) -> int:
        fn = self.handles.get(self.ptr(hfunc), Function)
        from zmlir.runtime.cuda.attributes import function_attribute

        value = function_attribute(attrib, fn, self.device)
        if value is None:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(pi, value)
        return E.CUDA_SUCCESS

    def cuKernelGetAttribute(self, pi: Any, attrib: int, kernel: Any, dev: int) -> int:
        return self.cuFuncGetAttribute(pi, attrib, kernel)

    def cuFuncSetAttribute(self, hfunc: Any, attrib: int, value: int) -> int:
        fn = self.handles.get(self.ptr(hfunc), Function)
        fn.attributes[attrib] = value
        return E.CUDA_SUCCESS

    def cuKernelSetAttribute(self, attrib: int, value: int, kernel: Any, dev: int) -> int:
        return self.cuFuncSetAttribute(kernel, attrib, value)

    def cuFuncSetCacheConfig(self, hfunc: Any, config: int) -> int:
        self.handles.get(self.ptr(hfunc), Function)
        return E.CUDA_SUCCESS

    def cuKernelSetCacheConfig(self, kernel: Any, config: int, dev: int) -> int:
        self.check_device(dev)
        return self.cuFuncSetCacheConfig(kernel, config)  # a preference: one cache here

    def cuFuncGetParamInfo(self, hfunc: Any, index: int, poffset: Any, psize: Any) -> int:
        """Offset and size of a parameter in the packed parameter buffer
        (naturally aligned, in order: what `extra` launches use)."""
        fn = self.handles.get(self.ptr(hfunc), Function)
        if index >= len(fn.info.params):
            return E.CUDA_ERROR_INVALID_VALUE
        offset = 0
        for i, ptx_type in enumerate(fn.info.params[: index + 1]):
            dtype = _NUMPY_TYPES.get(ptx_type)
            if dtype is None:
                return self.unsupported("cuFuncGetParamInfo", f"parameter of type .{ptx_type}")
            size = np.dtype(dtype).itemsize
            offset = -(-offset // size) * size
            if i < index:
                offset += size
        self.out(poffset, offset)
        self.out(psize, size)
        return E.CUDA_SUCCESS

    def cuKernelGetParamInfo(self, kernel: Any, index: int, poffset: Any, psize: Any) -> int:
        return self.cuFuncGetParamInfo(kernel, index, poffset, psize)

    # -- memory ----------------------------------------------------------------

    def cuMemAlloc_v2(self, dptr: Any, nbytes: int) -> int:
        self.current_context()
        if nbytes == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        try:
            address = self.device.alloc(nbytes)
        except Exception as err:
            log(f"allocation of {nbytes} bytes failed: {err}")
            return E.CUDA_ERROR_OUT_OF_MEMORY
        self.allocations.add(address, nbytes)
        self.out(dptr, address)
        return E.CUDA_SUCCESS

    def cuMemAllocManaged(self, dptr: Any, nbytes: int, flags: int) -> int:
        # Our device memory is already shared with the host.
        return self.cuMemAlloc_v2(dptr, nbytes)

    def cuMemFree_v2(self, dptr: int) -> int:
        self.require_init()
        if dptr == 0:
            return E.CUDA_SUCCESS
        if not self.allocations.remove_owned(dptr):
            return E.CUDA_ERROR_INVALID_VALUE
        pool = self.pool_of.pop(dptr, None)
        if pool is not None:
            pool.free(dptr)  # kept for reuse until the pool settles or is trimmed
        else:
            self.device.free(dptr)
        return E.CUDA_SUCCESS

    # -- memory pools: stream-ordered allocation (see mempool.py) -------------------

    def _default_pool(self) -> int:
        if self.default_pool == 0:
            self.default_pool = self._new_pool(MemoryPool(self.device.alloc, self.device.free,
                                                          default=True))
        return self.default_pool

    def _new_pool(self, pool: MemoryPool) -> int:
        self.pools.append(pool)
        return self.handles.add(pool)

    def _pool(self, handle: Any) -> MemoryPool:
        self.require_init()
        return self.handles.get(self.ptr(handle), MemoryPool)

    def settle_pools(self) -> None:
        """At a synchronization: pools release memory above their thresholds."""
        for pool in self.pools:
            pool.settle()

    def _stream_ordered(self, api_name: str, stream: Any) -> int | None:
        """None if work may be ordered on `stream` now, else the error."""
        self.current_context()
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            return self.unsupported(api_name, "inside a stream capture (graph memory nodes)")
        return None

    def pool_allocate(self, pool: MemoryPool, dptr: Any, nbytes: int) -> int:
        if nbytes == 0 or dptr == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        address = pool.allocate(nbytes)
        self.allocations.add(address, nbytes)
        self.pool_of[address] = pool
        dptr[0] = address
        return E.CUDA_SUCCESS

    def cuMemAllocAsync(self, dptr: Any, nbytes: int, stream: Any) -> int:
        error = self._stream_ordered("cuMemAllocAsync", stream)
        if error is not None:
            return error
        self.check_device(0)
        return self.pool_allocate(self._pool(self.current_pool or self._default_pool()), dptr,
                                  nbytes)

    def cuMemAllocFromPoolAsync(self, dptr: Any, nbytes: int, pool: Any, stream: Any) -> int:
        error = self._stream_ordered("cuMemAllocFromPoolAsync", stream)
        if error is not None:
            return error
        p = self._pool(pool)
        if p.destroyed:
            return E.CUDA_ERROR_INVALID_HANDLE
        return self.pool_allocate(p, dptr, nbytes)

    def cuMemFreeAsync(self, dptr: int, stream: Any) -> int:
        error = self._stream_ordered("cuMemFreeAsync", stream)
        if error is not None:
            return error
        if dptr == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        return self.cuMemFree_v2(dptr)

    def cuDeviceGetDefaultMemPool(self, ppool: Any, dev: int) -> int:
        self.check_device(dev)
        self.out(ppool, self.handle_ptr(self._default_pool()))
        return E.CUDA_SUCCESS

    def cuDeviceGetMemPool(self, ppool: Any, dev: int) -> int:
        self.check_device(dev)
        self.out(ppool, self.handle_ptr(self.current_pool or self._default_pool()))
        return E.CUDA_SUCCESS

    def cuDeviceSetMemPool(self, dev: int, pool: Any) -> int:
        self.check_device(dev)
        if self._pool(pool).destroyed:
            return E.CUDA_ERROR_INVALID_HANDLE
        self.current_pool = self.ptr(pool)
        return E.CUDA_SUCCESS

    def cuMemPoolCreate(self, ppool: Any, props: Any) -> int:
        self.require_init()
        if props == self.ffi.NULL or ppool == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        p = props[0]
        if p.allocType != ALLOCATION_TYPE_PINNED:
            return E.CUDA_ERROR_INVALID_VALUE
        if p.location.type != LOCATION_TYPE_DEVICE:
            return self.unsupported("cuMemPoolCreate", f"location type {p.location.type} "
                                    "(only device memory pools)")
        self.check_device(p.location.id)
        if p.handleTypes != HANDLE_TYPE_NONE:
            return self.unsupported("cuMemPoolCreate", f"handle types {p.handleTypes:#x} (IPC)")
        pool = MemoryPool(self.device.alloc, self.device.free, max_size=int(p.maxSize))
        self.out(ppool, self.handle_ptr(self._new_pool(pool)))
        return E.CUDA_SUCCESS

    def cuMemPoolDestroy(self, pool: Any) -> int:
        p = self._pool(pool)
        if p.default or p.destroyed:
            return E.CUDA_ERROR_INVALID_VALUE
        p.destroy()
        self.pools.remove(p)
        self.handles.remove(self.ptr(pool), MemoryPool)
        if self.current_pool == self.ptr(pool):
            self.current_pool = 0  # the default pool is current again
        return E.CUDA_SUCCESS

    def cuMemPoolSetAttribute(self, pool: Any, attr: int, value: Any) -> int:
        p = self._pool(pool)
        if value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        ctype = "int *" if MemoryPool.is_int_attribute(attr) else "unsigned long long *"
        p.set_attribute(attr, int(self.ffi.cast(ctype, value)[0]))
        return E.CUDA_SUCCESS

    def cuMemPoolGetAttribute(self, pool: Any, attr: int, value: Any) -> int:
        p = self._pool(pool)
        if value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        ctype = "int *" if MemoryPool.is_int_attribute(attr) else "unsigned long long *"
        self.ffi.cast(ctype, value)[0] = p.get_attribute(attr)
        return E.CUDA_SUCCESS

    def cuMemPoolTrimTo(self, pool: Any, keep: int) -> int:
        self._pool(pool).release(keep)
        return E.CUDA_SUCCESS

    def cuMemPoolSetAccess(self, pool: Any, descs: Any, count: int) -> int:
        self._pool(pool)
        if count and descs == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        for i in range(count):  # one device, which always has read-write access
            d = descs[i]
            if d.location.type != LOCATION_TYPE_DEVICE:
                return E.CUDA_ERROR_INVALID_VALUE
            self.check_device(d.location.id)
            if d.flags != 3:  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                return self.unsupported("cuMemPoolSetAccess",
                                        f"access flags {d.flags} for the pool's own device")
        return E.CUDA_SUCCESS

    def cuMemPoolGetAccess(self, flags: Any, pool: Any, location: Any) -> int:
        self._pool(pool)
        if location == self.ffi.NULL or location.type != LOCATION_TYPE_DEVICE:
            return E.CUDA_ERROR_INVALID_VALUE
        self.check_device(location.id)
        self.out(flags, 3)  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        return E.CUDA_SUCCESS

    def cuMemAllocHost_v2(self, pp: Any, nbytes: int) -> int:
        self.require_init()
        buffer = self.ffi.new("char[]", max(nbytes, 1))
        address = self.ptr(buffer)
        self.host_allocations[address] = buffer
        self.out(pp, buffer)
        return E.CUDA_SUCCESS

    def cuMemHostAlloc(self, pp: Any, nbytes: int, flags: int) -> int:
        return self.cuMemAllocHost_v2(pp, nbytes)

    def cuMemFreeHost(self, p: Any) -> int:
        if self.host_allocations.pop(self.ptr(p), None) is None:
            return E.CUDA_ERROR_INVALID_VALUE
        return E.CUDA_SUCCESS

    def cuMemHostGetDevicePointer_v2(self, pdptr: Any, p: Any, flags: int) -> int:
        self.require_init()
        self.out(pdptr, self.ptr(p))
        return E.CUDA_SUCCESS

    def cuMemHostRegister_v2(self, p: Any, nbytes: int, flags: int) -> int:
        self.require_init()
        return E.CUDA_SUCCESS

    def cuMemHostUnregister(self, p: Any) -> int:
        self.require_init()
        return E.CUDA_SUCCESS

    def cuMemGetInfo_v2(self, free: Any, total: Any) -> int:
        self.current_context()
        total_bytes = self.total_memory()
        held = sum(p.reserved - p.used for p in self.pools)  # free blocks pools keep
        self.out(free, max(total_bytes - self.allocations.owned_bytes() - held, 0))
        self.out(total, total_bytes)
        return E.CUDA_SUCCESS

    def cuMemGetAddressRange_v2(self, pbase: Any, psize: Any, dptr: int) -> int:
        self.require_init()
        found = self.allocations.containing(dptr)
        if found is None:
            return E.CUDA_ERROR_NOT_FOUND
        if pbase != self.ffi.NULL:
            pbase[0] = found[0]
        if psize != self.ffi.NULL:
            psize[0] = found[1]
        return E.CUDA_SUCCESS

    def _is_device(self, address: int) -> bool:
        return self.allocations.containing(address) is not None

    def copy(self, dst: int, src: int, nbytes: int) -> int:
        """cudaMemcpyDefault semantics: either side may be host or device."""
        self.current_context()
        self.check_sticky()
        if nbytes == 0:
            return E.CUDA_SUCCESS
        dst_dev, src_dev = self._is_device(dst), self._is_device(src)
        if dst_dev:
            self.check_device_range(dst, nbytes)
        if src_dev:
            self.check_device_range(src, nbytes)
        self.device.synchronize()
        if dst_dev and not src_dev:
            self.device.copy_to_device(dst, self.host_view(src, nbytes))
        elif src_dev and not dst_dev:
            self.host_view(dst, nbytes)[:] = self.device.copy_from_device(src, nbytes)
        elif dst_dev and src_dev:
            self.device.copy_device_to_device(dst, src, nbytes)
        else:
            self.ffi.memmove(self.ffi.cast("void *", dst), self.ffi.cast("void *", src), nbytes)
        return E.CUDA_SUCCESS

    def cuMemcpy(self, dst: int, src: int, nbytes: int) -> int:
        return self.copy(dst, src, nbytes)

    def enqueue(self, stream: Any, work: Callable[[], int]) -> int:
        """Runs `work` now, or records it while `stream` is being captured."""
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            s.capture.append(work)
            return E.CUDA_SUCCESS
        return work()

    def cuMemcpyAsync(self, dst: int, src: int, nbytes: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.copy(dst, src, nbytes))

    def cuMemcpyPeer(self, dst: int, dst_ctx: Any, src: int, src_ctx: Any, nbytes: int) -> int:
        # One device: both contexts are on it, and a peer copy is a device copy.
        self.require_init()
        self.handles.get(self.ptr(dst_ctx), Context)
        self.handles.get(self.ptr(src_ctx), Context)
        return self.cuMemcpyDtoD_v2(dst, src, nbytes)

    def cuMemcpyPeerAsync(self, dst: int, dst_ctx: Any, src: int, src_ctx: Any, nbytes: int,
                          stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyPeer(dst, dst_ctx, src, src_ctx,
                                                                nbytes))

    def cuMemcpyHtoD_v2(self, dst: int, src: Any, nbytes: int) -> int:
        self.check_device_range(dst, nbytes)
        return self.copy(dst, self.ptr(src), nbytes)

    def cuMemcpyDtoH_v2(self, dst: Any, src: int, nbytes: int) -> int:
        self.check_device_range(src, nbytes)
        return self.copy(self.ptr(dst), src, nbytes)

    def cuMemcpyDtoD_v2(self, dst: int, src: int, nbytes: int) -> int:
        self.check_device_range(dst, nbytes)
        self.check_device_range(src, nbytes)
        return self.copy(dst, src, nbytes)

    def cuMemcpyHtoDAsync_v2(self, dst: int, src: Any, nbytes: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyHtoD_v2(dst, src, nbytes))

    def cuMemcpyDtoHAsync_v2(self, dst: Any, src: int, nbytes: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyDtoH_v2(dst, src, nbytes))

    def cuMemcpyDtoDAsync_v2(self, dst: int, src: int, nbytes: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyDtoD_v2(dst, src, nbytes))

    def memset(self, dst: int, value: int, width: int, count: int) -> int:
        self.current_context()
        nbytes = width * count
        if nbytes == 0:
            return E.CUDA_SUCCESS
        self.check_device_range(dst, nbytes)
        self.device.synchronize()
        if width == 1:
            self.device.memset(dst, value & 0xFF, nbytes)
        else:
            pattern = np.full(count, value, dtype={2: np.uint16, 4: np.uint32}[width])
            self.device.copy_to_device(dst, pattern)
        return E.CUDA_SUCCESS

    def cuMemsetD8_v2(self, dst: int, value: int, n: int) -> int:
        return self.memset(dst, value, 1, n)

    def cuMemsetD16_v2(self, dst: int, value: int, n: int) -> int:
        return self.memset(dst, value, 2, n)

    def cuMemsetD32_v2(self, dst: int, value: int, n: int) -> int:
        return self.memset(dst, value, 4, n)

    def cuMemsetD8Async(self, dst: int, value: int, n: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.memset(dst, value, 1, n))

    def cuMemsetD16Async(self, dst: int, value: int, n: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.memset(dst, value, 2, n))

    def cuMemsetD32Async(self, dst: int, value: int, n: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.memset(dst, value, 4, n))

    def cuMemAllocPitch_v2(self, dptr: Any, ppitch: Any, width: int, height: int,
                           element_size: int) -> int:
        if element_size not in (4, 8, 16) or width == 0 or height == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        pitch = -(-width // 256) * 256  # rows aligned like the texture alignment
        code = self.cuMemAlloc_v2(dptr, pitch * height)
        if code == E.CUDA_SUCCESS:
            self.out(ppitch, pitch)
        return code

    def _copy_end(self, memory_type: int, host: Any, device: int, array: Any, what: str) -> int:
        """The base address of one side of a 2D/3D copy (CUmemorytype)."""
        if memory_type == 1:  # HOST
            return self.ptr(host)
        if memory_type in (2, 4):  # DEVICE, UNIFIED
            return int(device)
        if memory_type == 3:
            raise CudaError(self.unsupported("cuMemcpy2D/3D", f"CUDA arrays ({what})"))
        raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"{what} memory type {memory_type}")

    def _copy_rows(self, src: int, src_pitch: int, src_height: int, dst: int, dst_pitch: int,
                   dst_height: int, width: int, height: int, depth: int) -> int:
        for z in range(depth):
            for y in range(height):
                code = self.copy(dst + (z * dst_height + y) * dst_pitch,
                                 src + (z * src_height + y) * src_pitch, width)
                if code != E.CUDA_SUCCESS:
                    return code
        return E.CUDA_SUCCESS

    def cuMemcpy2D_v2(self, copy: Any) -> int:
        if copy == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        c = copy[0]
        if (c.WidthInBytes > c.srcPitch and c.Height > 1) or (
                c.WidthInBytes > c.dstPitch and c.Height > 1):
            return E.CUDA_ERROR_INVALID_VALUE
        src = self._copy_end(c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, "source")
        dst = self._copy_end(c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, "destination")
        src += c.srcY * c.srcPitch + c.srcXInBytes
        dst += c.dstY * c.dstPitch + c.dstXInBytes
        return self._copy_rows(src, c.srcPitch, 0, dst, c.dstPitch, 0, c.WidthInBytes,
                               c.Height, 1)

    cuMemcpy2DUnaligned_v2 = cuMemcpy2D_v2

    def cuMemcpy2DAsync_v2(self, copy: Any, stream: Any) -> int:
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            return self.unsupported("cuMemcpy2DAsync", "inside a stream capture")
        return self.cuMemcpy2D_v2(copy)

    def cuMemcpy3D_v2(self, copy: Any) -> int:
        if copy == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        c = copy[0]
        src = self._copy_end(c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, "source")
        dst = self._copy_end(c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, "destination")
        src_pitch = c.srcPitch or c.WidthInBytes
        dst_pitch = c.dstPitch or c.WidthInBytes
        src_height = c.srcHeight or c.Height
        dst_height = c.dstHeight or c.Height
        src += (c.srcZ * src_height + c.srcY) * src_pitch + c.srcXInBytes
        dst += (c.dstZ * dst_height + c.dstY) * dst_pitch + c.dstXInBytes
        return self._copy_rows(src, src_pitch, src_height, dst, dst_pitch, dst_height,
                               c.WidthInBytes, c.Height, max(c.Depth, 1))

    def cuMemcpy3DAsync_v2(self, copy: Any, stream: Any) -> int:
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            return self.unsupported("cuMemcpy3DAsync", "inside a stream capture")
        return self.cuMemcpy3D_v2(copy)

    def memset_2d(self, dst: int, pitch: int, value: int, width: int, count: int,
                  height: int) -> int:
        for row in range(height):
            code = self.memset(dst + row * pitch, value, width, count)
            if code != E.CUDA_SUCCESS:
                return code
        return E.CUDA_SUCCESS

    def cuMemsetD2D8_v2(self, dst: int, pitch: int, value: int, width: int, height: int) -> int:
        return self.memset_2d(dst, pitch, value, 1, width, height)

    def cuMemsetD2D16_v2(self, dst: int, pitch: int, value: int, width: int, height: int) -> int:
        return self.memset_2d(dst, pitch, value, 2, width, height)

    def cuMemsetD2D32_v2(self, dst: int, pitch: int, value: int, width: int, height: int) -> int:
        return self.memset_2d(dst, pitch, value, 4, width, height)

    def cuMemsetD2D8Async(self, dst: int, pitch: int, value: int, width: int, height: int,
                          stream: Any) -> int:
        return self.memset_2d(dst, pitch, value, 1, width, height)

    def cuMemsetD2D32Async(self, dst: int, pitch: int, value: int, width: int, height: int,
                           stream: Any) -> int:
        return self.memset_2d(dst, pitch, value, 4, width, height)

    # -- one device: peers, PCI identity -------------------------------------------

    def cuDeviceCanAccessPeer(self, can: Any, dev: int, peer: int) -> int:
        self.check_device(dev)
        self.check_device(peer)
        self.out(can, 0)
        return E.CUDA_SUCCESS

    def cuDeviceGetP2PAttribute(self, value: Any, attrib: int, src: int, dst: int) -> int:
        self.check_device(src)
        self.check_device(dst)
        self.out(value, 0)
        return E.CUDA_SUCCESS

    def cuCtxEnablePeerAccess(self, peer: Any, flags: int) -> int:
        self.current_context()
        return E.CUDA_ERROR_INVALID_DEVICE  # there is no other device to peer with

    def cuCtxDisablePeerAccess(self, peer: Any) -> int:
        self.current_context()
        return E.CUDA_ERROR_INVALID_DEVICE

    _PCI_BUS_ID = "0000:00:00.0"

    def cuDeviceGetPCIBusId(self, bus_id: Any, length: int, dev: int) -> int:
        self.check_device(dev)
        text = self._PCI_BUS_ID.encode()[: max(length - 1, 0)]
        self.ffi.memmove(bus_id, text + b"\0", len(text) + 1)
        return E.CUDA_SUCCESS

    def cuDeviceGetByPCIBusId(self, dev: Any, bus_id: Any) -> int:
        self.require_init()
        if self.ffi.string(bus_id).decode().lower() != self._PCI_BUS_ID:
            return E.CUDA_ERROR_INVALID_DEVICE
        self.out(dev, 0)
        return E.CUDA_SUCCESS

    def cuStreamGetId(self, stream: Any, stream_id: Any) -> int:
        self.require_init()
        self.stream(stream)
        self.out(stream_id, self.ptr(stream))
        return E.CUDA_SUCCESS

    def cuCtxResetPersistingL2Cache(self) -> int:
        self.current_context()
        return E.CUDA_SUCCESS

    def cuOccupancyMaxPotentialBlockSize(self, min_grid: Any, block: Any, f: Any,
                                         smem_fn: Any, smem: int, limit: int) -> int:
        self.handles.get(self.ptr(f), Function)
        size = min(limit or 1024, 1024)
        self.out(block, size)
        self.out(min_grid, self.device.compute_units * max(1, 2048 // size))
        return E.CUDA_SUCCESS

    def _managed_range(self, api_name: str, ptr: int, count: int, location: Any) -> None:
        self.current_context()
        if count == 0:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"{api_name}: 0 bytes")
        self.check_device_range(ptr, count)
        if location.type == 1:  # CU_MEM_LOCATION_TYPE_DEVICE
            self.check_device(location.id)

    def cuMemPrefetchAsync_v2(self, ptr: int, count: int, location: Any, flags: int,
                              stream: Any) -> int:
        # Device memory is already where both the host and the kernels reach
        # it (unified): a prefetch moves nothing.
        self._managed_range("cuMemPrefetchAsync", ptr, count, location)
        self.stream(stream)
        return E.CUDA_SUCCESS

    def _location(self, device: int) -> Any:
        """A CUmemLocation of `device` (CUDA 8-12's device ordinal arguments;
        CU_DEVICE_CPU, -1, is the host)."""
        location = self.ffi.new("CUmemLocation *")
        location.type, location.id = (2, 0) if device == -1 else (1, device)  # HOST / DEVICE
        return location[0]

    def cuMemPrefetchAsync(self, ptr: int, count: int, device: int, stream: Any) -> int:
        return self.cuMemPrefetchAsync_v2(ptr, count, self._location(device), 0, stream)

    def cuMemAdvise(self, ptr: int, count: int, advice: int, device: int) -> int:
        return self.cuMemAdvise_v2(ptr, count, advice, self._location(device))

    def cuMemAdvise_v2(self, ptr: int, count: int, advice: int, location: Any) -> int:
        self._managed_range("cuMemAdvise", ptr, count, location)
        if not 1 <= advice <= 6:  # CU_MEM_ADVISE_SET_READ_MOSTLY .. UNSET_ACCESSED_BY
            return E.CUDA_ERROR_INVALID_VALUE
        return E.CUDA_SUCCESS  # advice about placement: there is one memory

    def cuPointerGetAttribute(self, data: Any, attribute: int, ptr: int) -> int:
        self.require_init()
        is_device = self._is_device(ptr)
        if attribute == 2:  # CU_POINTER_ATTRIBUTE_MEMORY_TYPE
            self.ffi.cast("unsigned int *", data)[0] = 2 if is_device else 1
        elif attribute == 1:  # CONTEXT
            self.ffi.cast("void **", data)[0] = self.handle_ptr(self._primary())
        elif attribute in (3, 4):  # DEVICE_POINTER, HOST_POINTER
            self.ffi.cast("unsigned long long *", data)[0] = ptr
        elif attribute == 9:  # DEVICE_ORDINAL
            self.ffi.cast("int *", data)[0] = 0
        else:
            return E.CUDA_ERROR_INVALID_VALUE
        return E.CUDA_SUCCESS

    # -- launch ----------------------------------------------------------------

    def launch(self, hfunc: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
               shared: int, params: Any, extra: Any, stream: Any = None,
               cooperative: bool = False) -> int:
        """The Python launch path: what fastpath.c's C path does not take."""
        self.current_context()
        self.check_sticky()
        self._current_changed()  # back on the fast path after a context was destroyed
        fn = self.handles.get(self.ptr(hfunc), Function)
        if cooperative and not self.device.supports_cooperative:
            return self.unsupported(
                "cooperative launch", f"the {self.device.name} backend cannot guarantee that "
                "all blocks are resident at once")
        code = self._launch(fn, grid, block, shared, params, extra, stream, cooperative)
        if fn.fast and code == E.CUDA_SUCCESS:
            self._fast_register(fn)  # the backend may have raised the kernel's shared limit
        return code

    def _launch(self, fn: Function, grid: tuple[int, int, int], block: tuple[int, int, int],
                shared: int, params: Any, extra: Any, stream: Any, cooperative: bool) -> int:
        # Only backends that support cooperative launches take the keyword.
        how = {"cooperative": True} if cooperative else {}
        s = self.stream(stream) if stream is not None else None
        capturing = s is not None and s.capture is not None
        if min(grid) < 1 or min(block) < 1:
            return E.CUDA_ERROR_INVALID_VALUE
        if block[0] * block[1] * block[2] > 1024 or block[2] > 64:
            return E.CUDA_ERROR_INVALID_VALUE
        if params != self.ffi.NULL and extra != self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        raw = getattr(self.device, "launch_raw", None)
        if raw is not None and params != self.ffi.NULL and not capturing:
            # The backend takes the application's parameter array as it is.
            try:
                raw(fn.kernel, fn.info, grid, block, self.ptr(params), shared, **how)
            except ValueError as err:
                log(f"launch of {fn.name} rejected: {err}")
                return E.CUDA_ERROR_INVALID_VALUE
            return E.CUDA_SUCCESS
        dtypes = fn.dtypes
        if dtypes is None:
            dtypes = []
            for ptx_type in fn.info.params:
                dtype = _NUMPY_TYPES.get(ptx_type)
                if dtype is None:
                    return self.unsupported("cuLaunchKernel",
                                            f"kernel parameter of type .{ptx_type} ({fn.name})")
                dtypes.append(np.dtype(dtype))
            fn.dtypes = dtypes
        if extra != self.ffi.NULL:
            buffer = self._extra_buffer(extra)
            args, offset = [], 0
            for dtype in dtypes:
                offset = -(-offset // dtype.itemsize) * dtype.itemsize  # natural alignment
                if offset + dtype.itemsize > len(buffer):
                    return E.CUDA_ERROR_INVALID_VALUE
                args.append(np.frombuffer(buffer, dtype=dtype, count=1, offset=offset)[0])
                offset += dtype.itemsize
        else:
            if params == self.ffi.NULL and dtypes:
                return E.CUDA_ERROR_INVALID_VALUE
            args = [np.frombuffer(bytes(self.ffi.buffer(params[i], dtype.itemsize)),
                                  dtype=dtype)[0] for i, dtype in enumerate(dtypes)]
        def run() -> int:
            try:
                self.device.launch(fn.kernel, fn.info, grid, block, args, shared, **how)
            except ValueError as err:
                log(f"launch of {fn.name} rejected: {err}")
                return E.CUDA_ERROR_INVALID_VALUE
            self._check_trap(fn)
            return E.CUDA_SUCCESS

        if capturing:
            assert s is not None and s.capture is not None
            s.capture.append(run)  # the arguments were copied above
            return E.CUDA_SUCCESS
        return run()

    def _check_trap(self, fn: Function) -> None:
        """After a (synchronous) launch: a set trap word means a thread
        executed `trap`. Like NVIDIA's driver, the launch itself succeeded and
        the context now holds the sticky CUDA_ERROR_LAUNCH_FAILED."""
        word = fn.module.trap_word
        if not word or not any(self.device.copy_from_device(word, 4)):
            return
        self.device.copy_to_device(word, bytes(4))  # a later context may load the module again
        stack = self._stack()
        if stack:
            self.handles.get(stack[-1], Context).error = E.CUDA_ERROR_LAUNCH_FAILED
        log(f"kernel {fn.name} executed trap: the context's later calls return "
            "CUDA_ERROR_LAUNCH_FAILED")
        self._current_changed()

    def _extra_buffer(self, extra: Any) -> bytes:
        """The packed parameters of cuLaunchKernel's `extra`: pairs of
        CU_LAUNCH_PARAM_BUFFER_POINTER (1) / _SIZE (2), ended by _END (0)."""
        pointer, size = None, None
        for i in range(0, 64, 2):
            tag = self.ptr(extra[i])
            if tag == 0:
                break
            if tag == 1:
                pointer = extra[i + 1]
            elif tag == 2:
                size = self.ffi.cast("size_t *", extra[i + 1])[0]
            else:
                raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"unknown launch extra {tag}")
        if pointer is None or size is None:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "extra lacks the buffer or its size")
        return bytes(self.ffi.buffer(pointer, size))

    def cuLaunchKernel(self, f: Any, gx: int, gy: int, gz: int, bx: int, by: int, bz: int,
                       shared: int, stream: Any, params: Any, extra: Any) -> int:
        return self.launch(f, (gx, gy, gz), (bx, by, bz), shared, params, extra, stream)

    def cuLaunchKernelEx(self, config: Any, f: Any, params: Any, extra: Any) -> int:
        if config == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        c = config[0]
        if c.numAttrs and c.attrs == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        cooperative = False
        attrs = self.ffi.cast("CUlaunchAttribute *", c.attrs)
        for i in range(c.numAttrs):
            ident, value = attrs[i].id, self.ffi.cast("unsigned int *", attrs[i].value)
            if ident == 2:  # COOPERATIVE
                cooperative = value[0] != 0
            elif ident in (4, 11):  # (PREFERRED_)CLUSTER_DIMENSION
                if (value[0], value[1], value[2]) not in ((1, 1, 1), (0, 0, 0)):
                    return self.unsupported("cuLaunchKernelEx", "thread block clusters")
            elif ident not in _LAUNCH_HINTS:
                return self.unsupported("cuLaunchKernelEx", f"launch attribute {ident}")
        return self.launch(f, (c.gridDimX, c.gridDimY, c.gridDimZ),
                           (c.blockDimX, c.blockDimY, c.blockDimZ), c.sharedMemBytes,
                           params, extra, c.hStream, cooperative)

    def cuLaunchCooperativeKernel(self, f: Any, gx: int, gy: int, gz: int, bx: int, by: int,
                                  bz: int, shared: int, stream: Any, params: Any) -> int:
        return self.launch(f, (gx, gy, gz), (bx, by, bz), shared, params, self.ffi.NULL,
                           stream, cooperative=True)

    def cuLaunchHostFunc(self, stream: Any, fn: Any, user_data: Any) -> int:
        self.current_context()

        def run() -> int:
            self.device.synchronize()
            fn(user_data)
            return E.CUDA_SUCCESS

        return self.enqueue(stream, run)

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, num: Any, f: Any, block: int,
                                                     smem: int) -> int:
        fn = self.handles.get(self.ptr(f), Function)
        if block < 1:
            return E.CUDA_ERROR_INVALID_VALUE
        occupancy = getattr(self.device, "occupancy", None)  # the real device's answer
        blocks = occupancy(fn.kernel, fn.info, block, smem) if occupancy is not None else \
            max(1, 2048 // block)
        self.out(num, blocks)
        return E.CUDA_SUCCESS

    def cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(self, num: Any, f: Any, block: int,
                                                              smem: int, flags: int) -> int:
        return self.cuOccupancyMaxActiveBlocksPerMultiprocessor(num, f, block, smem)

    # -- streams and events (work is synchronous: ordering is always kept) ----

    def stream(self, handle: Any) -> Stream | None:
        value = self.ptr(handle)
        if value in (0, 1, 2):  # legacy, per-thread default streams
            return None
        return self.handles.get(value, Stream)

    def cuStreamCreate(self, phstream: Any, flags: int) -> int:
        self.current_context()
        handle = self.handles.add(Stream(flags))
        self.fast.stream(handle)
        self.out(phstream, self.handle_ptr(handle))
        return E.CUDA_SUCCESS

    def cuStreamCreateWithPriority(self, phstream: Any, flags: int, priority: int) -> int:
        self.current_context()
        handle = self.handles.add(Stream(flags, priority))
        self.fast.stream(handle)
        self.out(phstream, self.handle_ptr(handle))
        return E.CUDA_SUCCESS

    def cuStreamDestroy_v2(self, stream: Any) -> int:
        self.require_init()
        s = self.handles.remove(self.ptr(stream), Stream)
        self.fast.forget(self.ptr(stream))
        for key in [k for k in self.stream_attributes if k[0] == self.ptr(stream)]:
            del self.stream_attributes[key]
        if s.capture is not None and not any(  # the last stream of an unfinished capture
                isinstance(o, Stream) and o.capture is s.capture
                for o in self.handles._objects.values()):
            self.fast.capture(-1)
        return E.CUDA_SUCCESS

    def cuStreamSynchronize(self, stream: Any) -> int:
        self.require_init()
        self.stream(stream)
        self.check_sticky()
        self.device.synchronize()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuStreamQuery(self, stream: Any) -> int:
        self.require_init()
        self.stream(stream)
        return E.CUDA_SUCCESS

    def cuStreamWaitEvent(self, stream: Any, event: Any, flags: int) -> int:
        self.require_init()
        s = self.stream(stream)
        ev = self.handles.get(self.ptr(event), Event)
        if s is not None and ev.capture is not None and s.capture is None:
            # Waiting on an event of a capture pulls this stream into it; all
            # recorded work is replayed in order, which keeps every dependency.
            s.capture = ev.capture
        return E.CUDA_SUCCESS

    def cuStreamAddCallback(self, stream: Any, callback: Any, user_data: Any, flags: int) -> int:
        self.require_init()
        self.device.synchronize()
        callback(stream, E.CUDA_SUCCESS, user_data)
        return E.CUDA_SUCCESS

    def cuStreamGetCaptureInfo_v3(self, stream: Any, status: Any, capture_id: Any, graph: Any,
                                  dependencies: Any, edges: Any, count: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        capturing = s is not None and s.capture is not None
        if capturing and any(p != self.ffi.NULL for p in (graph, dependencies, edges, count)):
            return self.unsupported("cuStreamGetCaptureInfo",
                                    "the graph and dependencies of a capture in progress")
        if status != self.ffi.NULL:
            status[0] = 1 if capturing else 0  # CU_STREAM_CAPTURE_STATUS_ACTIVE / _NONE
        if capture_id != self.ffi.NULL and capturing:
            assert s is not None
            capture_id[0] = id(s.capture)  # the same for every stream of one capture
        for out in (graph, dependencies, edges):
            if out != self.ffi.NULL:
                out[0] = self.ffi.NULL
        if count != self.ffi.NULL:
            count[0] = 0
        return E.CUDA_SUCCESS

    def cuStreamGetCaptureInfo(self, stream: Any, status: Any, capture_id: Any) -> int:
        n = self.ffi.NULL
        return self.cuStreamGetCaptureInfo_v3(stream, status, capture_id, n, n, n, n)

    def cuStreamGetCaptureInfo_v2(self, stream: Any, status: Any, capture_id: Any, graph: Any,
                                  dependencies: Any, count: Any) -> int:
        return self.cuStreamGetCaptureInfo_v3(stream, status, capture_id, graph, dependencies,
                                              self.ffi.NULL, count)

    def cuStreamGetDevice(self, stream: Any, device: Any) -> int:
        self.require_init()
        self.stream(stream)
        self.out(device, 0)
        return E.CUDA_SUCCESS

    # CUstreamAttrID: what streams keep (CUlaunchAttributeValue, 64 bytes):
    # the access policy window, synchronization policy, priority and memory
    # synchronization domain. All are hints here, kept and reported back.
    _STREAM_ATTRIBUTES = (1, 3, 8, 9, 10)

    def cuStreamGetAttribute(self, stream: Any, attr: int, value: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        if attr not in self._STREAM_ATTRIBUTES or value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        stored = self.stream_attributes.get((self.ptr(stream), attr))
        if stored is None:
            stored = bytes(64)
            if attr == 8:  # PRIORITY
                stored = struct.pack("<i", s.priority if s else 0) + bytes(60)
        self.ffi.memmove(value, stored, 64)
        return E.CUDA_SUCCESS

    def cuStreamSetAttribute(self, stream: Any, attr: int, value: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        if attr not in self._STREAM_ATTRIBUTES or value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        data = bytes(self.ffi.buffer(self.ffi.cast("char *", value), 64))
        if attr == 8 and s is not None:
            s.priority = struct.unpack_from("<i", data)[0]
        self.stream_attributes[(self.ptr(stream), attr)] = data
        return E.CUDA_SUCCESS

    def cuStreamCopyAttributes(self, dst: Any, src: Any) -> int:
        self.require_init()
        d, s = self.stream(dst), self.stream(src)
        for (handle, attr), data in list(self.stream_attributes.items()):
            if handle == self.ptr(src):
                self.stream_attributes[(self.ptr(dst), attr)] = data
        if d is not None and s is not None:
            d.priority = s.priority
        return E.CUDA_SUCCESS

    def cuStreamIsCapturing(self, stream: Any, status: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        self.out(status, 1 if s is not None and s.capture is not None else 0)
        return E.CUDA_SUCCESS

    # -- graphs: stream capture and replay ---------------------------------------

    def cuStreamBeginCapture(self, stream: Any) -> int:
        return self.cuStreamBeginCapture_v2(stream, 0)  # CU_STREAM_CAPTURE_MODE_GLOBAL

    def cuStreamBeginCapture_v2(self, stream: Any, mode: int) -> int:
        self.current_context()
        s = self.stream(stream)
        if s is None:  # the legacy default stream cannot be captured
            return E.CUDA_ERROR_NOT_PERMITTED
        if s.capture is not None:
            return E.CUDA_ERROR_NOT_PERMITTED
        s.capture = []
        self.fast.capture(+1)  # launches take the Python path, which records them
        return E.CUDA_SUCCESS

    def cuStreamEndCapture(self, stream: Any, pgraph: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        if s is None or s.capture is None:
            return E.CUDA_ERROR_NOT_PERMITTED
        graph = Graph(s.capture)
        for obj in self.handles._objects.values():  # streams that joined the capture
            if isinstance(obj, Stream) and obj.capture is graph.nodes:
                obj.capture = None
        self.fast.capture(-1)
        self.out(pgraph, self.handle_ptr(self.handles.add(graph)))
        return E.CUDA_SUCCESS

    def cuGraphInstantiateWithFlags(self, pexec: Any, graph: Any, flags: int) -> int:
        self.require_init()
        g = self.handles.get(self.ptr(graph), Graph)
        self.out(pexec, self.handle_ptr(self.handles.add(GraphExec(list(g.nodes)))))
        return E.CUDA_SUCCESS

    def cuGraphLaunch(self, exec_: Any, stream: Any) -> int:
        self.current_context()
        graph = self.handles.get(self.ptr(exec_), GraphExec)

        def run() -> int:
            for node in graph.nodes:
                code = node()
                if code != E.CUDA_SUCCESS:
                    return code
            return E.CUDA_SUCCESS

        return self.enqueue(stream, run)

    def cuGraphGetNodes(self, graph: Any, nodes: Any, count: Any) -> int:
        self.require_init()
        g = self.handles.get(self.ptr(graph), Graph)
        if nodes != self.ffi.NULL:
            return self.unsupported("cuGraphGetNodes", "node handles")
        self.out(count, len(g.nodes))
        return E.CUDA_SUCCESS

    def cuGraphUpload(self, exec_: Any, stream: Any) -> int:
        self.require_init()
        self.handles.get(self.ptr(exec_), GraphExec)  # nothing to upload: work is replayed
        self.stream(stream)
        return E.CUDA_SUCCESS

    def cuGraphDestroy(self, graph: Any) -> int:
        self.require_init()
        self.handles.remove(self.ptr(graph), Graph)
        return E.CUDA_SUCCESS

    def cuGraphExecDestroy(self, exec_: Any) -> int:
        self.require_init()
        self.handles.remove(self.ptr(exec_), GraphExec)
        return E.CUDA_SUCCESS

    def cuStreamGetFlags(self, stream: Any, flags: Any) -> int:
        s = self.stream(stream)
        self.out(flags, s.flags if s else 0)
        return E.CUDA_SUCCESS

    def cuStreamGetPriority(self, stream: Any, priority: Any) -> int:
        s = self.stream(stream)
        self.out(priority, s.priority if s else 0)
        return E.CUDA_SUCCESS

    def cuStreamGetCtx(self, stream: Any, pctx: Any) -> int:
        self.stream(stream)
        self.out(pctx, self.handle_ptr(self._primary()))
        return E.CUDA_SUCCESS

    def cuStreamGetCtx_v2(self, stream: Any, pctx: Any, pgreen: Any) -> int:
        code = self.cuStreamGetCtx(stream, pctx)
        if code == E.CUDA_SUCCESS and pgreen != self.ffi.NULL:
            pgreen[0] = self.ffi.NULL  # no green contexts
        return code

    def cuEventCreate(self, phevent: Any, flags: int) -> int:
        self.current_context()
        self.out(phevent, self.handle_ptr(self.handles.add(Event(flags))))
        return E.CUDA_SUCCESS

    def cuEventRecord(self, event: Any, stream: Any) -> int:
        self.require_init()
        ev = self.handles.get(self.ptr(event), Event)
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            ev.capture = s.capture  # a fork point of the capture
            return E.CUDA_SUCCESS
        ev.capture = None
        self.device.synchronize()
        ev.timestamp = time.perf_counter()
        return E.CUDA_SUCCESS

    def cuEventRecordWithFlags(self, event: Any, stream: Any, flags: int) -> int:
        return self.cuEventRecord(event, stream)

    def cuEventSynchronize(self, event: Any) -> int:
        self.require_init()
        self.handles.get(self.ptr(event), Event)
        self.check_sticky()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuEventQuery(self, event: Any) -> int:
        self.require_init()
        self.handles.get(self.ptr(event), Event)
        return E.CUDA_SUCCESS

    def cuEventDestroy_v2(self, event: Any) -> int:
        self.require_init()
        self.handles.remove(self.ptr(event), Event)
        return E.CUDA_SUCCESS

    def cuEventElapsedTime(self, ms: Any, start: Any, end: Any) -> int:
        self.require_init()
        a = self.handles.get(self.ptr(start), Event)
        b = self.handles.get(self.ptr(end), Event)
        if a.timestamp is None or b.timestamp is None:
            return E.CUDA_ERROR_INVALID_HANDLE
        if (a.flags | b.flags) & 0x2:  # CU_EVENT_DISABLE_TIMING
            return E.CUDA_ERROR_INVALID_HANDLE
        self.out(ms, (b.timestamp - a.timestamp) * 1000.0)
        return E.CUDA_SUCCESS

    cuEventElapsedTime_v2 = cuEventElapsedTime



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
    from zmlir.runtime.cuda import export_tables, proc_address

    bodies: dict[str, Callable[..., int]] = {
        "cuGetProcAddress": lambda s, p, v, f: proc_address.get_proc_address(driver, s, p, v, f,
                                                                              None),
        "cuGetProcAddress_v2": lambda s, p, v, f, st: proc_address.get_proc_address(
            driver, s, p, v, f, st),
        "cuGetExportTable": lambda t, u: export_tables.get_export_table(driver, t, u),
    }
    for name in api.function_names():
        body = bodies.get(name) or getattr(driver, name, None)
        # The fast path's functions are C; their Python bodies go by another name.
        symbol = api.PYTHON_BODY_PREFIX + name if name in api.C_FAST_PATH else name
        ffi.def_extern(name=symbol)(_boundary(name, body, driver))
    try:
        from zmlir.runtime.cuda import trace
    except ImportError:  # tracing not available in this build
        pass
    else:
        trace.install(driver)
    driver.fast.enable(tracing=driver.tracer is not None)
    return driver


def _boundary(name: str, body: Callable[..., int] | None, driver: Driver) -> Callable[..., int]:
    if body is None:
        def not_implemented(*args: Any) -> int:
            return int(driver.unsupported(name, "not implemented"))
        body = not_implemented

    def invoke(*args: Any) -> int:
        try:
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
            return int(err.cuda_result)
        except Exception as err:  # a bug of ours: report it, never unwind into C
            return internal_error(err)

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
