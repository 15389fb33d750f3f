"""The CUDA passthrough backend: the real NVIDIA driver underneath, kernels
recompiled by zmlir for the NVPTX target "nvptx:sm_<cc>" (capped at what
LLVM's NVPTX backend emits). It is how the whole stack is checked on NVIDIA
hardware; it runs only when asked for (ZMLIR_BACKEND=cuda).

Our own libcuda.so.1 shadows NVIDIA's by name, so NVIDIA's is opened by
absolute path (ZMLIR_CUDA_DRIVER, else the usual install locations and the
ld.so cache), skipping any file that is our library, with RTLD_DEEPBIND so
that the real driver's own symbol references never resolve to ours. It is
opened into the host's own (base) link-map namespace even when our driver
runs in a namespace of its own (a Python host, docs/python-hosts.md): NVIDIA's
driver crashes in cuInit when loaded into a namespace made by dlmopen (H200,
driver 580.159.04). So NVIDIA's libraries cannot load next to a driver of
their own either: under the passthrough they run on ours (our libcublas and
libcufft hand their calls to NVIDIA's, zmlir/libraries/common/route.c), and
ours loads their machine code for this GPU as it is (load_native).

Memory is managed (cuMemAllocManaged): device addresses the host can also
touch, as on our other backends, so cudaMallocManaged-style programs work;
what the application asks cuMemAlloc (and a device pool, cuMemAllocAsync)
for is NVIDIA's device memory, as on NVIDIA's driver (the device's default
pool is NVIDIA's own: cudaMallocAsync's blocks reused in stream order by
NVIDIA, from C), which NVIDIA's IPC exports: memory handles are NVIDIA's
own (cuIpc*MemHandle handed to it), interprocess events stay ours
(cuda/ipc.py); pools shared between processes are NVIDIA's pools
(cuda/mempool_ipc.py), and virtual memory management is NVIDIA's
(cuda/virtual_memory.py).
Kernels are zmlir's: all shared memory is one external `.shared` window, so a
launch's dynamic shared size is the kernel's static window plus CUDA's
dynamic bytes. Precompiled NVPTX (ZMLIR_NVPTX_CACHE, see nvptx_cache.py)
lets a machine without LLVM run the passthrough.
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cffi

from zmlir.compiled import KernelInfo
from zmlir.runtime.backends import nvptx_cache
from zmlir.runtime.backends._vendor import (
    OpenedLibrary,
    VendorError,
    dim3,
    env_path,
    host_buffer,
    note,
    param_block,
)
from zmlir.runtime.backends.base import MEMORY_MODEL, Backend, NoDevice
from zmlir.runtime.backends.cuda_ffi import get_ffi as _get_ffi

# Where NVIDIA's driver usually is: Debian/Ubuntu, RHEL-likes, the NVIDIA
# container toolkit, WSL. The ld.so cache adds whatever else is installed.
DRIVER_LOCATIONS = (
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "/usr/lib64/libcuda.so.1",
    "/usr/local/nvidia/lib64/libcuda.so.1",
    "/usr/lib/wsl/lib/libcuda.so.1",
    "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
)

# The sm_XY LLVM 22's NVPTX backend emits (llc -march=nvptx64 -mcpu=help),
# without the a/f feature variants: a newer GPU gets the newest one below it.
LLVM_NVPTX_SMS = (20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88,
                  89, 90, 100, 101, 103, 110, 120, 121)

CUDA_SUCCESS = 0
_CUDA_ERROR_NOT_FOUND = 500
_CUDA_ERROR_NOT_READY = 600
_ATTR_MAX_THREADS_PER_BLOCK = 1
_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8
_ATTR_MULTIPROCESSOR_COUNT = 16
_LAUNCH_ATTRIBUTE_COOPERATIVE = 2
_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
_ATTR_COMPUTE_CAPABILITY_MAJOR = 75
_ATTR_COMPUTE_CAPABILITY_MINOR = 76
_ATTR_COOPERATIVE_LAUNCH = 95
_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
_FUNC_ATTR_MAX_THREADS_PER_BLOCK = 0
_FUNC_ATTR_CONST_SIZE_BYTES = 2
_FUNC_ATTR_LOCAL_SIZE_BYTES = 3
_FUNC_ATTR_PTX_VERSION = 5
_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_CU_LIMIT_STACK_SIZE = 0
_CU_LIMIT_MALLOC_HEAP_SIZE = 2
_MEM_ATTACH_GLOBAL = 1
_MEM_ALLOCATION_TYPE_PINNED = 1
_MEM_LOCATION_TYPE_DEVICE = 1
# CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP, the same bits as
# CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP.
_HOST_PORTABLE_MAPPED = 0x1 | 0x2
_POINTER_ATTRIBUTE_IS_MANAGED = 8
_JIT_ERROR_LOG_BUFFER = 5
_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
_DEFAULT_SHARED_LIMIT = 48 * 1024  # above this a kernel must opt in
# The CU_EVENT_* flags a real event is created with: BLOCKING_SYNC, DISABLE_TIMING
# (an interprocess event is the driver's own, a page of shared memory: cuda/ipc.py).
_EVENT_FLAGS = 0x1 | 0x2
_EVENT_DISABLE_TIMING = 0x2
_STREAM_NON_BLOCKING = 0x1

# NVIDIA's graph calls graph_* make (a driver without one replays ours).
_GRAPH_CALLS = ("cuGraphCreate", "cuGraphDestroy", "cuGraphAddKernelNode",
                "cuGraphAddMemsetNode", "cuGraphAddMemcpyNode", "cuGraphAddHostNode",
                "cuGraphAddEmptyNode", "cuGraphAddChildGraphNode",
                "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecKernelNodeSetParams",
                "cuGraphExecMemsetNodeSetParams", "cuGraphExecMemcpyNodeSetParams",
                "cuGraphExecHostNodeSetParams", "cuGraphExecDestroy")

# The kernel capture_probe launches into a capture (never run).
_PROBE_PTX = b""".version 7.0
.target sm_52
.address_size 64
.visible .entry zmlir_probe(.param .u64 p, .param .u32 v)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [v];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r1;
  ret;
}
\0"""

# NVIDIA's calls a capture on its driver needs (fastpath.c: stream capture), and
# those that read its captured graph (graph/vendor.py: imported).
_CAPTURE_CALLS = ("cuStreamBeginCapture_v2", "cuStreamEndCapture", "cuStreamGetCaptureInfo_v2",
                  "cuGraphExecUpdate_v2", "cuGraphGetNodes", "cuGraphNodeGetType",
                  "cuGraphNodeGetDependencies", "cuGraphKernelNodeGetParams_v2",
                  "cuGraphMemsetNodeGetParams", "cuGraphMemcpyNodeGetParams",
                  "cuGraphHostNodeGetParams")

_VMM_CALLS = frozenset((
    "cuMemGetAllocationGranularity", "cuMemAddressReserve", "cuMemAddressFree", "cuMemCreate",
    "cuMemRelease", "cuMemMap", "cuMemUnmap", "cuMemSetAccess", "cuMemGetAccess",
    "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle",
    "cuMemGetAllocationPropertiesFromHandle", "cuMemRetainAllocationHandle"))
_TEXTURE_CALLS = frozenset((
    "cuArrayCreate_v2", "cuArray3DCreate_v2", "cuArrayGetDescriptor_v2",
    "cuArray3DGetDescriptor_v2", "cuArrayDestroy", "cuMipmappedArrayCreate",
    "cuMipmappedArrayGetLevel", "cuMipmappedArrayDestroy", "cuMemcpyHtoA_v2", "cuMemcpyAtoH_v2",
    "cuMemcpyDtoA_v2", "cuMemcpyAtoD_v2", "cuMemcpyAtoA_v2", "cuMemcpy2D_v2", "cuMemcpy3D_v2",
    "cuTexObjectCreate", "cuTexObjectDestroy", "cuTexObjectGetResourceDesc",
    "cuTexObjectGetTextureDesc", "cuSurfObjectCreate", "cuSurfObjectDestroy",
    "cuSurfObjectGetResourceDesc"))
# Arrays, texture and surface objects are NVIDIA's, the kernels' texture
# instructions its own (docs/textures.md); ZMLIR_NATIVE_TEXTURES=0 makes them
# ours, sampled in code, as on every other backend.
NATIVE_TEXTURES_ENV = "ZMLIR_NATIVE_TEXTURES"

def nvptx_arch(major: int, minor: int) -> str:
    """The NVPTX architecture zmlir compiles for on a device of compute
    capability major.minor: sm_<major><minor>, capped at LLVM's newest."""
    cc = major * 10 + minor
    return f"sm_{max((s for s in LLVM_NVPTX_SMS if s <= cc), default=LLVM_NVPTX_SMS[0])}"


def _our_library_dir() -> Path | None:
    try:
        from zmlir.runtime.cuda.build import library_dir
    except ImportError:
        return None
    return library_dir().resolve()


def _ldconfig_entries(soname: str = "libcuda.so.1") -> list[str]:
    for ldconfig in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        try:
            out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10,
                                 check=False).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        return [line.rsplit("=> ", 1)[1].strip() for line in out.splitlines()
                if line.strip().startswith(soname + " ") and "=> " in line]
    return []


# Where NVIDIA's libraries (libcublas.so.13, ...) usually are, after
# ZMLIR_NVIDIA_LIBRARY_PATH: the toolkit, then NVIDIA's wheels on sys.path.
TOOLKIT_LIBRARY_DIRS = ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib")


def vendor_library(soname: str) -> str | None:
    """NVIDIA's own file for library `soname`, never ours (our libraries
    answer under the passthrough by opening NVIDIA's: route.c); ld.so's
    cache is asked only when no usual place has it."""
    import sys

    wheels = [str(Path(entry) / "nvidia" / sub / "lib") for entry in sys.path
              for sub in ("cu13", "cublas", "cufft", "curand")]
    dirs = [*env_path("ZMLIR_NVIDIA_LIBRARY_PATH"), *TOOLKIT_LIBRARY_DIRS, *wheels]
    for paths in ([str(Path(d) / soname) for d in dirs], _ldconfig_entries(soname)):
        found = [path for path in _not_ours(paths)[0] if os.path.isfile(path)]
        if found:
            return found[0]
    return None


def _not_ours(paths: list[str]) -> tuple[list[str], list[str]]:
    """(`paths` that are not files of our own library folder, without
    repeats; those that are)."""
    ours = _our_library_dir()
    wanted, skipped = [], []
    for path in paths:
        real = Path(os.path.realpath(path))
        if ours is not None and real.parent == ours:
            skipped.append(path)
        elif path not in wanted:
            wanted.append(path)
    return wanted, skipped


def driver_candidates() -> tuple[list[str], list[str]]:
    """(paths to try, paths skipped because they are our own libcuda.so.1)."""
    return _not_ours([*env_path("ZMLIR_CUDA_DRIVER"), *DRIVER_LOCATIONS, *_ldconfig_entries()])


@dataclass
class CUDAKernel:
    name: str
    handle: Any
    shared_limit: int = _DEFAULT_SHARED_LIMIT  # dynamic bytes the kernel is opted in to


@dataclass
class CUDAProgram:
    handle: Any
    target: str
    kernels: dict[str, CUDAKernel] = field(default_factory=dict)


@dataclass(frozen=True)
class CUDADeviceInfo:
    name: str
    compute_capability: tuple[int, int]
    compute_units: int
    max_threads: int
    shared_optin: int
    total_memory: int
    cooperative: bool = False
    memory_model: dict[int, int] = field(default_factory=dict)


class CUDABackend(Backend):
    name = "cuda"
    launches_raw_params = True
    device_named_as_is = True
    pitched_copies = True

    def __init__(self, opened: OpenedLibrary, device: int, context: Any,
                 info: CUDADeviceInfo) -> None:
        self.ffi = _get_ffi()
        self.lib = opened.lib
        self.library_path = opened.path
        self.device, self.context, self.info = device, context, info
        self.arch = nvptx_arch(*info.compute_capability)
        self.native_textures = os.environ.get(NATIVE_TEXTURES_ENV, "").strip() != "0"
        cache = os.environ.get(nvptx_cache.ENV, "").strip()
        self.cache_dir = Path(cache) if cache else None
        self._current = threading.local()
        self._hardware: dict[int, int | None] = {}  # hardware_attribute's answers
        # Non-blocking vendor streams (vendor_stream), each with an event of
        # its own, and one of the NULL stream's: _null_stream_order's fences.
        self._detached: dict[int, Any] = {}
        self._null_mark: Any = None
        # Blocking vendor streams, and while any exists an event after our
        # last work on the NULL stream (None: none since): their queries'
        # share of the NULL stream (queue_done).
        self._blocking: set[int] = set()
        self._null_work: Any = None

    # -- opening -----------------------------------------------------------------

    @classmethod
    def open(cls) -> CUDABackend:
        ffi = _get_ffi()
        candidates, skipped = driver_candidates()
        what = "NVIDIA CUDA driver (libcuda.so.1)"
        if skipped:
            what += f", skipping zmlir's own {', '.join(skipped)}"
        opened = _open_in_base_namespace(ffi, candidates, what)
        lib = opened.lib
        code = lib.cuInit(0)
        if code != CUDA_SUCCESS:
            raise NoDevice(f"no CUDA device: cuInit: {_error_name(lib, code)} "
                           f"({opened.path})")
        count = ffi.new("int *")
        _check(lib, "cuDeviceGetCount", lib.cuDeviceGetCount(count))
        if count[0] < 1:
            raise NoDevice("no CUDA device: cuDeviceGetCount found 0 devices")
        device = ffi.new("CUdevice *")
        _check(lib, "cuDeviceGet", lib.cuDeviceGet(device, 0))
        context = ffi.new("CUcontext *")
        _check(lib, "cuDevicePrimaryCtxRetain", lib.cuDevicePrimaryCtxRetain(context, device[0]))
        _check(lib, "cuCtxSetCurrent", lib.cuCtxSetCurrent(context[0]))
        backend = cls(opened, device[0], context[0], _device_info(ffi, lib, device[0]))
        backend._current.set = True
        note(f"cuda backend: {backend.device_name} (compute capability "
             f"{'.'.join(map(str, backend.info.compute_capability))}, kernels for "
             f"{backend.target}) through {opened.path}"
             + (f"; NVPTX cache {backend.cache_dir}" if backend.cache_dir else ""))
        return backend

    def close(self) -> None:
        if self.context is not None:
            self.lib.cuDevicePrimaryCtxRelease_v2(self.device)
            self.context = None

    def _enter(self) -> None:
        # A CUDA context is current per thread; the application may call us
        # from any of its threads.
        if not getattr(self._current, "set", False):
            self.check("cuCtxSetCurrent", self.lib.cuCtxSetCurrent(self.context))
            self._current.set = True

    def check(self, api: str, code: int, detail: str = "") -> None:
        _check(self.lib, api, code, detail)

    # -- what the device is ------------------------------------------------------

    @property
    def device_name(self) -> str:
        return self.info.name

    @property
    def target(self) -> str:
        return f"nvptx:{self.arch}"

    def target_for(self, ptx: str) -> str:
        # Only a module with texture instructions compiles differently.
        if self.native_textures and nvptx_cache.uses_textures(ptx):
            return f"{self.target}+native-textures"
        return self.target

    @property
    def compute_units(self) -> int:
        return max(self.info.compute_units, 1)

    @property
    def local_mem_size(self) -> int:
        # Launches opt kernels in to more than 48 KiB themselves.
        return self.info.shared_optin

    def total_memory(self) -> int:
        return self.info.total_memory

    @property
    def supports_cooperative(self) -> bool:  # type: ignore[override]
        return self.info.cooperative

    @property
    def supports_clusters(self) -> bool:  # type: ignore[override]
        return self.info.compute_capability >= (9, 0)

    def memory_model(self) -> dict[int, int]:
        return self.info.memory_model

    # -- memory ------------------------------------------------------------------

    def alloc(self, nbytes: int) -> int:
        self._enter()
        ptr = self.ffi.new("CUdeviceptr *")
        self.check("cuMemAllocManaged",
                   self.lib.cuMemAllocManaged(ptr, max(nbytes, 1), _MEM_ATTACH_GLOBAL),
                   f"{nbytes} bytes")
        return int(ptr[0])

    def alloc_device(self, nbytes: int) -> int:
        self._enter()
        ptr = self.ffi.new("CUdeviceptr *")
        self.check("cuMemAlloc_v2", self.lib.cuMemAlloc_v2(ptr, max(nbytes, 1)),
                   f"{nbytes} bytes")
        return int(ptr[0])

    def free(self, address: int) -> None:
        self._enter()
        self.check("cuMemFree_v2", self.lib.cuMemFree_v2(address))

    # NVIDIA's IPC for NVIDIA's device memory (alloc_device): its handles, its
    # codes (a freed allocation's handle, one opened in its exporter).
    @property
    def vendor_ipc(self) -> bool:
        return True

    @property
    def exports_memory(self) -> bool:
        return True

    def _ipc_call(self, api: str, code: int) -> None:
        if code != CUDA_SUCCESS:
            from zmlir.runtime.cuda.errors import CudaError

            raise CudaError(code, f"NVIDIA's {api}: {_error_name(self.lib, code)}")

    def vendor_ipc_export(self, address: int) -> bytes:
        self._enter()
        handle = self.ffi.new("CUipcMemHandle *")
        self._ipc_call("cuIpcGetMemHandle", self.lib.cuIpcGetMemHandle(handle, address))
        return bytes(self.ffi.buffer(handle))

    def vendor_ipc_open(self, handle: bytes, flags: int) -> tuple[int, int]:
        self._enter()
        data = self.ffi.new("CUipcMemHandle *")
        self.ffi.memmove(data, handle, self.ffi.sizeof(data[0]))
        ptr = self.ffi.new("CUdeviceptr *")
        self._ipc_call("cuIpcOpenMemHandle", self.lib.cuIpcOpenMemHandle_v2(ptr, data[0], flags))
        base, size = self.ffi.new("CUdeviceptr *"), self.ffi.new("size_t *")
        self.check("cuMemGetAddressRange_v2",
                   self.lib.cuMemGetAddressRange_v2(base, size, ptr[0]))
        return int(ptr[0]), int(size[0]) - (int(ptr[0]) - int(base[0]))

    def vendor_ipc_close(self, address: int) -> None:
        self._enter()
        self._ipc_call("cuIpcCloseMemHandle", self.lib.cuIpcCloseMemHandle(address))

    def vendor_ipc_event_code(self, handle: bytes) -> int:
        self._enter()
        data = self.ffi.new("CUipcEventHandle *")
        self.ffi.memmove(data, handle, self.ffi.sizeof(data[0]))
        event = self.ffi.new("CUevent *")
        code = int(self.lib.cuIpcOpenEventHandle(event, data[0]))
        if code == CUDA_SUCCESS:  # an event of NVIDIA's: none of ours ever is
            self.lib.cuEventDestroy_v2(event[0])
            return 1  # CUDA_ERROR_INVALID_VALUE
        return code

    # NVIDIA's virtual memory management, its answers as they are
    # (cuda/virtual_memory.py keeps the accessible ranges for copies).
    @property
    def vendor_vmm(self) -> bool:
        return True

    def vendor_vmm_call(self, api: str, *args: int) -> int:
        if api not in _VMM_CALLS:
            raise ValueError(f"{api} is no virtual memory call")
        self._enter()
        return int(getattr(self.lib, api)(*args))

    # NVIDIA's arrays, texture and surface objects under ZMLIR_NATIVE_TEXTURES=1
    # (cuda/texture.py forwards the application's calls, after our work).
    @property
    def vendor_textures(self) -> bool:
        return self.native_textures

    def vendor_texture_call(self, api: str, *args: int) -> int:
        if api not in _TEXTURE_CALLS:
            raise ValueError(f"{api} is no array or texture call")
        self._enter()
        copy = api.startswith("cuMemcpy")  # a blocking copy on the NULL stream
        with self._null_stream_order() if copy else contextlib.nullcontext():
            return int(getattr(self.lib, api)(*args))

    # NVIDIA's pools for pools with IPC handle types: our MemoryPool keeps
    # its blocks as any pool's, each block one of NVIDIA's pool's, ordered on
    # the stream our work takes (the NULL stream); handles, export data and
    # their codes are NVIDIA's.
    @property
    def vendor_pools(self) -> bool:
        return True

    def vendor_pool_create(self, handle_types: int, max_size: int) -> Any:
        self._enter()
        props = self.ffi.new("CUmemPoolProps *")
        props.allocType = _MEM_ALLOCATION_TYPE_PINNED
        props.handleTypes = handle_types
        props.location.type, props.location.id = _MEM_LOCATION_TYPE_DEVICE, self.device
        props.maxSize = max_size
        pool = self.ffi.new("CUmemoryPool *")
        self._ipc_call("cuMemPoolCreate", self.lib.cuMemPoolCreate(pool, props))
        return pool[0]

    def vendor_pool_destroy(self, pool: Any) -> None:
        self._enter()
        self._ipc_call("cuMemPoolDestroy", self.lib.cuMemPoolDestroy(pool))

    def vendor_pool_alloc(self, pool: Any, nbytes: int) -> int:
        self._enter()
        ptr = self.ffi.new("CUdeviceptr *")
        with self._null_stream_order():
            self._ipc_call("cuMemAllocFromPoolAsync",
                           self.lib.cuMemAllocFromPoolAsync(ptr, nbytes, pool, self.ffi.NULL))
        return int(ptr[0])

    def vendor_pool_free(self, address: int) -> None:
        self._enter()
        with self._null_stream_order():
            self._ipc_call("cuMemFreeAsync", self.lib.cuMemFreeAsync(address, self.ffi.NULL))

    def vendor_pool_export(self, pool: Any, handle_type: int) -> int:
        self._enter()
        fd = self.ffi.new("int *", -1)
        self._ipc_call("cuMemPoolExportToShareableHandle",
                       self.lib.cuMemPoolExportToShareableHandle(fd, pool, handle_type, 0))
        return int(fd[0])

    def vendor_pool_import(self, handle: int, handle_type: int) -> Any:
        self._enter()
        pool = self.ffi.new("CUmemoryPool *")
        self._ipc_call("cuMemPoolImportFromShareableHandle",
                       self.lib.cuMemPoolImportFromShareableHandle(
                           pool, self.ffi.cast("void *", handle), handle_type, 0))
        return pool[0]

    def vendor_pool_export_pointer(self, address: int) -> bytes:
        self._enter()
        data = self.ffi.new("CUmemPoolPtrExportData *")
        self._ipc_call("cuMemPoolExportPointer", self.lib.cuMemPoolExportPointer(data, address))
        return bytes(self.ffi.buffer(data))

    def vendor_pool_import_pointer(self, pool: Any, data: bytes) -> tuple[int, int]:
        self._enter()
        share = self.ffi.new("CUmemPoolPtrExportData *")
        self.ffi.memmove(share, data, self.ffi.sizeof(share[0]))
        ptr = self.ffi.new("CUdeviceptr *")
        self._ipc_call("cuMemPoolImportPointer", self.lib.cuMemPoolImportPointer(ptr, pool, share))
        base, size = self.ffi.new("CUdeviceptr *"), self.ffi.new("size_t *")
        self.check("cuMemGetAddressRange_v2",
                   self.lib.cuMemGetAddressRange_v2(base, size, ptr[0]))
        return int(ptr[0]), int(size[0]) - (int(ptr[0]) - int(base[0]))

    # The device's default pool is NVIDIA's (cudaMallocAsync's natively):
    # NVIDIA orders its blocks' reuse in each stream, and fastpath.c
    # allocates and frees its blocks without Python.
    @property
    def vendor_default_pool(self) -> bool:
        return True

    @functools.cached_property
    def _default_pool(self) -> Any:
        self._enter()
        pool = self.ffi.new("CUmemoryPool *")
        self._ipc_call("cuDeviceGetDefaultMemPool",
                       self.lib.cuDeviceGetDefaultMemPool(pool, self.device))
        return pool[0]

    def default_pool_alloc(self, nbytes: int, queue: int) -> int:
        self._enter()
        ptr = self.ffi.new("CUdeviceptr *")
        with self._null_stream_order(queue):
            self._ipc_call("cuMemAllocAsync", self.lib.cuMemAllocAsync(
                ptr, nbytes, self.ffi.cast("CUstream", queue)))
        return int(ptr[0])

    def default_pool_free(self, address: int, queue: int) -> None:
        self._enter()
        with self._null_stream_order(queue):
            self._ipc_call("cuMemFreeAsync",
                           self.lib.cuMemFreeAsync(address, self.ffi.cast("CUstream", queue)))

    def default_pool_attribute(self, attr: int, value: int | None = None) -> int:
        pool = self._default_pool
        cell = self.ffi.new("int *" if attr in _POOL_INT_ATTRIBUTES else "unsigned long long *")
        if value is not None:
            cell[0] = value
            self._ipc_call("cuMemPoolSetAttribute",
                           self.lib.cuMemPoolSetAttribute(pool, attr, cell))
        self._ipc_call("cuMemPoolGetAttribute", self.lib.cuMemPoolGetAttribute(pool, attr, cell))
        return int(cell[0])

    def default_pool_trim(self, keep: int) -> None:
        pool = self._default_pool
        self._ipc_call("cuMemPoolTrimTo", self.lib.cuMemPoolTrimTo(pool, keep))

    # The GPU reaches host memory only where the real driver mapped it
    # (page-locked, unified addressing: the same address on both sides).
    def host_alloc(self, nbytes: int) -> int | None:
        self._enter()
        ptr = self.ffi.new("void **")
        self.check("cuMemHostAlloc",
                   self.lib.cuMemHostAlloc(ptr, max(nbytes, 1), _HOST_PORTABLE_MAPPED),
                   f"{nbytes} bytes")
        return int(self.ffi.cast("uintptr_t", ptr[0]))

    def host_free(self, address: int) -> None:
        self._enter()
        self.check("cuMemFreeHost", self.lib.cuMemFreeHost(self.ffi.cast("void *", address)))

    def host_register(self, address: int, nbytes: int) -> None:
        self._enter()
        self.check("cuMemHostRegister_v2",
                   self.lib.cuMemHostRegister_v2(self.ffi.cast("void *", address), nbytes,
                                                 _HOST_PORTABLE_MAPPED),
                   f"{nbytes} bytes at {address:#x}")

    def host_unregister(self, address: int) -> None:
        self._enter()
        self.check("cuMemHostUnregister",
                   self.lib.cuMemHostUnregister(self.ffi.cast("void *", address)))

    def copy_to_device(self, address: int, data: Any) -> None:
        src, nbytes = host_buffer(self.ffi, data)
        if nbytes:
            self._enter()
            with self._null_stream_order():
                self.check("cuMemcpyHtoD_v2", self.lib.cuMemcpyHtoD_v2(address, src, nbytes),
                           f"{nbytes} bytes to {address:#x}")

    def copy_from_device(self, address: int, nbytes: int) -> bytes:
        out = bytearray(nbytes)
        if nbytes:
            self._enter()
            with self._null_stream_order():
                self.check("cuMemcpyDtoH_v2",
                           self.lib.cuMemcpyDtoH_v2(self.ffi.from_buffer(out), address, nbytes),
                           f"{nbytes} bytes from {address:#x}")
        return bytes(out)

    def copy_into_host(self, host: memoryview, address: int) -> None:
        # Straight into the application's memory: page-locked memory (cudaMallocHost,
        # cudaHostRegister) takes NVIDIA's DMA at full speed, with no copy of ours.
        if host.nbytes:
            self._enter()
            with self._null_stream_order():
                self.check("cuMemcpyDtoH_v2", self.lib.cuMemcpyDtoH_v2(
                    self.ffi.from_buffer(host), address, host.nbytes),
                    f"{host.nbytes} bytes from {address:#x}")

    def copy_device_to_device(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            self._enter()
            with self._null_stream_order():
                self.check("cuMemcpyDtoD_v2", self.lib.cuMemcpyDtoD_v2(dst, src, nbytes),
                           f"{nbytes} bytes")

    def launch_host_func(self, queue: int, fn: int, user_data: int) -> bool:
        # NVIDIA's: the application's function, called from NVIDIA's thread
        # when the stream gets there (ours ran it at once, after the device's
        # work, which blocked the caller: a function waiting on the host's
        # next step never returned).
        self._enter()
        with self._null_stream_order(queue):
            self.check("cuLaunchHostFunc", self.lib.cuLaunchHostFunc(
                self.ffi.cast("CUstream", queue), self.ffi.cast("void *", fn),
                self.ffi.cast("void *", user_data)))
        return True

    def add_stream_callback(self, queue: int, stream: int, callback: int,
                            user_data: int) -> bool:  # NVIDIA's names its stream itself
        self._enter()
        with self._null_stream_order(queue):
            self.check("cuStreamAddCallback", self.lib.cuStreamAddCallback(
                self.ffi.cast("CUstream", queue), self.ffi.cast("void *", callback),
                self.ffi.cast("void *", user_data), 0))
        return True

    def memory_hint(self, api: str, ptr: int, count: int, location_type: int, location_id: int,
                    *rest: int) -> None:
        # Managed memory is NVIDIA's: its prefetches move it before the
        # kernels fault it in page by page.
        if location_type == _MEM_LOCATION_TYPE_DEVICE:  # our device 0 is NVIDIA's self.device
            location_id = self.device
        location = self.ffi.new("CUmemLocation *", {"type": location_type, "id": location_id})
        self._enter()
        if api == "cuMemPrefetchAsync_v2":
            flags, queue = rest
            with self._null_stream_order(queue):
                code = self.lib.cuMemPrefetchAsync_v2(ptr, count, location[0], flags,
                                                      self.ffi.cast("CUstream", queue))
        elif api == "cuMemAdvise_v2":
            code = self.lib.cuMemAdvise_v2(ptr, count, rest[0], location[0])
        else:
            raise ValueError(f"{api} is no memory hint")
        self.check(api, code)

    def fill_pitched(self, dst: int, pitch: int, value: int, element_size: int, width: int,
                     height: int, queue: int | None) -> bool:
        # NVIDIA's cuMemsetD2D{8,16,32}, in one call (ours filled a row at a time).
        name = f"cuMemsetD2D{8 * element_size}" + ("_v2" if queue is None else "Async")
        value &= (1 << (8 * element_size)) - 1
        pitch = pitch or width * element_size  # a 1D fill: one row
        self._enter()
        with self._null_stream_order(queue):
            if queue is None:
                code = getattr(self.lib, name)(dst, pitch, value, width, height)
            else:
                code = getattr(self.lib, name)(dst, pitch, value, width, height,
                                               self.ffi.cast("CUstream", queue))
        self.check(name, code)
        return True

    def copy_pitched(self, copy: bytes, queue: int | None) -> bool:
        # NVIDIA's, in one call: a row at a time cost a blocking copy each.
        self._enter()
        spec = self.ffi.new("char[]", copy)
        address = int(self.ffi.cast("uintptr_t", spec))
        with self._null_stream_order(queue):
            if queue is None:
                self.check("cuMemcpy3D_v2", self.lib.cuMemcpy3D_v2(address))
            else:
                self.check("cuMemcpy3DAsync_v2", self.lib.cuMemcpy3DAsync_v2(
                    address, self.ffi.cast("CUstream", queue)))
        return True

    def memset(self, address: int, byte: int, nbytes: int) -> None:
        if nbytes:
            self._enter()
            with self._null_stream_order():
                self.check("cuMemsetD8_v2",
                           self.lib.cuMemsetD8_v2(address, byte & 0xFF, nbytes))

    # -- code --------------------------------------------------------------------

    def precompiled(self, key: str, ptx: str) -> nvptx_cache.CachedModule | None:
        """The module precompiled for `ptx` (`key`: nvptx_cache.ptx_key of it)
        in ZMLIR_NVPTX_CACHE, if there is one, for its target (a module with
        texture instructions: sm_90+native-textures)."""
        if self.cache_dir is None:
            return None
        found = nvptx_cache.lookup(self.cache_dir, key, self.target_for(ptx).partition(":")[2])
        note(f"cuda backend: module {key[:16]} "
             + (f"precompiled for {found.target}" if found else "not in the NVPTX cache"))
        return found

    def load(self, compiled: Any) -> CUDAProgram:
        self._enter()
        ffi = self.ffi
        # cuModuleLoadData takes PTX as a NUL-terminated string.
        image = bytes(compiled.binary)
        if not image.endswith(b"\0"):
            image += b"\0"
        target = compiled.target if isinstance(compiled.target, str) else compiled.target.spec
        # NVIDIA's JIT cache keeps the machine code of this PTX between runs
        # (an H200: a 0.4 MB module 3182 ms cold, 1.4 ms warm). A cache of
        # ours, of cubins from NVIDIA's linker, was dropped: the linker's
        # relocatable compile at -O4 made recursion_local_memory fault.
        log = ffi.new("char[]", 8192)
        options = ffi.new("int[]", [_JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES])
        values = ffi.new("void *[]", [ffi.cast("void *", log), ffi.cast("void *", 8192)])
        module = ffi.new("CUmodule *")
        code = self.lib.cuModuleLoadDataEx(module, image, 2, options, values)
        text = ffi.string(log).decode(errors="replace").strip()
        self.check("cuModuleLoadDataEx", code,
                   f"{target} PTX" + (f"; JIT log:\n{text}" if text else ""))
        return CUDAProgram(module[0], target)

    def vendor_library(self, soname: str) -> str | None:
        return vendor_library(soname)

    def vendor_export_table(self, key: bytes) -> int:
        # NVIDIA's private table `key`, for ZMLIR_VENDOR_TABLES (export_slots.py).
        self._enter()
        table, uuid = self.ffi.new("const void **"), self.ffi.new("CUuuid *")
        self.ffi.memmove(uuid, key, 16)
        if self.lib.cuGetExportTable(table, uuid) != CUDA_SUCCESS:
            return 0
        return int(self.ffi.cast("uintptr_t", table[0]))

    # A stream the application creates is one of NVIDIA's too, its handle
    # NVIDIA's (stream.py): NVIDIA's private table slots read it. Its
    # kernels, event records, fills and 1D and pitched copies go there (from
    # fastpath.c, launch.py, memcpy.py), so that streams run at once and by
    # their priorities; the rest of its work (the Python path's copies and
    # fills, our own reads and writes of device memory) goes to the NULL
    # stream. A blocking stream orders itself with that work; a non-blocking
    # one is NVIDIA's non-blocking stream, whose work overlaps the legacy
    # stream's as natively (a blocking stream made every pageable copy and
    # pool call of streamOrderedAllocation's loop wait), and which
    # _null_stream_order orders with our work on the NULL stream.
    def vendor_stream(self, priority: int = 0, non_blocking: bool = False) -> int:
        try:
            create = self.lib.cuStreamCreateWithPriority
        except AttributeError:  # a driver without streams (a stand-in): our handle
            return 0
        self._enter()
        stream = self.ffi.new("CUstream *")
        flags = _STREAM_NON_BLOCKING if non_blocking else 0
        self.check("cuStreamCreateWithPriority", create(stream, flags, priority))
        handle = int(self.ffi.cast("uintptr_t", stream[0]))
        if non_blocking:
            self._detached[handle] = self.new_mark(_EVENT_DISABLE_TIMING)
        else:
            self._blocking.add(handle)
        return handle

    def _null_stream_order(self, queue: int | None = 0) -> contextlib.AbstractContextManager:
        """Where `queue` is the NULL stream (0 or None: a blocking call) and
        non-blocking streams exist: the work done inside waits for theirs so
        far, and their later work for it, by events, as if they were
        blocking streams. Our work there (the Python path's copies and fills,
        reads of device-side launch queues, printf buffers) is often for a
        stream, or read after its kernels. While blocking streams exist, an
        event marks the work's end (queue_done)."""
        if queue or not (self._detached or self._blocking):
            return contextlib.nullcontext()
        return _NullStreamFence(self)

    def _mark_null_work(self) -> None:
        if self._blocking:
            self._null_work = self.record_mark(self._null_work, _EVENT_DISABLE_TIMING)

    def _fence_null_stream(self) -> None:
        for handle, mark in list(self._detached.items()):
            self.check("cuEventRecord", self.lib.cuEventRecord(
                mark, self.ffi.cast("CUstream", handle)))
            self.check("cuStreamWaitEvent", self.lib.cuStreamWaitEvent(
                self.ffi.cast("CUstream", 0), mark, 0))

    def _fence_detached_streams(self, only: int | None = None) -> None:
        if not self._detached:
            return
        self._null_mark = self.record_mark(self._null_mark, _EVENT_DISABLE_TIMING)
        for handle in [only] if only is not None else list(self._detached):
            self.check("cuStreamWaitEvent", self.lib.cuStreamWaitEvent(
                self.ffi.cast("CUstream", handle), self._null_mark, 0))

    def follow_null_stream(self, stream: int) -> None:
        if stream in self._detached:
            self._enter()
            self._fence_detached_streams(stream)

    def stream_priority_range(self) -> tuple[int, int]:
        self._enter()
        least, greatest = self.ffi.new("int *"), self.ffi.new("int *")
        self.check("cuCtxGetStreamPriorityRange",
                   self.lib.cuCtxGetStreamPriorityRange(least, greatest))
        return int(least[0]), int(greatest[0])

    def wait_mark_in_stream(self, stream: int, mark: Any) -> None:
        self._enter()
        self.check("cuStreamWaitEvent", self.lib.cuStreamWaitEvent(
            self.ffi.cast("CUstream", stream), mark, 0))

    def vendor_stream_destroy(self, handle: int) -> None:
        self._enter()
        self._blocking.discard(handle)
        mark = self._detached.pop(handle, None)
        self.check("cuStreamDestroy", self.lib.cuStreamDestroy_v2(
            self.ffi.cast("CUstream", handle)))
        if mark is not None:
            self.release_mark(mark)

    # NVIDIA's own machine code for this GPU, loaded as it is: what the
    # application's image holds when it has no PTX we compile (NVIDIA's
    # libraries keep PTX only for newer GPUs).
    def native_sm(self) -> int:
        major, minor = self.info.compute_capability
        return major * 10 + minor

    def load_native(self, address: int) -> CUDAProgram:
        self._enter()
        module = self.ffi.new("CUmodule *")
        code = self.lib.cuModuleLoadData(module, self.ffi.cast("void *", address))
        if code != CUDA_SUCCESS:
            from zmlir.runtime.cuda.errors import CudaError

            raise CudaError(code, f"NVIDIA's driver loading the machine code for "
                                  f"sm_{self.native_sm()}: {_error_name(self.lib, code)}")
        return CUDAProgram(module[0], f"sm_{self.native_sm()} machine code")

    def native_kernel_info(self, program: CUDAProgram, name: str) -> KernelInfo | None:
        self._enter()
        fn = self.ffi.new("CUfunction *")
        code = self.lib.cuModuleGetFunction(fn, program.handle, name.encode())
        if code == _CUDA_ERROR_NOT_FOUND:
            return None
        self.check("cuModuleGetFunction", code, f"kernel {name!r}")
        program.kernels.setdefault(name, CUDAKernel(name, fn[0]))
        offset, size = self.ffi.new("size_t *"), self.ffi.new("size_t *")
        params = []
        while self.lib.cuFuncGetParamInfo(fn[0], len(params), offset, size) == CUDA_SUCCESS:
            params.append(native_param_type(int(offset[0]), int(size[0])))

        def attribute(attrib: int) -> int:
            return self.native_function_attribute(fn[0], attrib) or 0

        # The kernel's static shared memory is NVIDIA's to add: a launch's
        # window is the dynamic bytes alone (static_shared_bytes 0).
        return KernelInfo(name, len(params), 0, tuple(params),
                          ptx_arch=attribute(_FUNC_ATTR_PTX_VERSION),
                          local_bytes=attribute(_FUNC_ATTR_LOCAL_SIZE_BYTES),
                          const_bytes=attribute(_FUNC_ATTR_CONST_SIZE_BYTES),
                          max_threads=attribute(_FUNC_ATTR_MAX_THREADS_PER_BLOCK))

    def native_kernel_names(self, program: CUDAProgram) -> list[str]:
        self._enter()
        count = self.ffi.new("unsigned int *")
        self.check("cuModuleGetFunctionCount",
                   self.lib.cuModuleGetFunctionCount(count, program.handle))
        functions = self.ffi.new("CUfunction[]", max(count[0], 1))
        self.check("cuModuleEnumerateFunctions",
                   self.lib.cuModuleEnumerateFunctions(functions, count[0], program.handle))
        name = self.ffi.new("const char **")
        names = []
        for i in range(count[0]):
            self.check("cuFuncGetName", self.lib.cuFuncGetName(name, functions[i]))
            names.append(self.ffi.string(name[0]).decode())
        return names

    def native_set_function_attribute(self, kernel: Any, attrib: int, value: int) -> int:
        self._enter()
        return int(self.lib.cuFuncSetAttribute(kernel, attrib, value))

    def native_function_attribute(self, kernel: Any, attrib: int) -> int | None:
        self._enter()
        value = self.ffi.new("int *")
        if self.lib.cuFuncGetAttribute(value, attrib, kernel) != CUDA_SUCCESS:
            return None
        return int(value[0])

    def unload(self, program: CUDAProgram) -> None:
        self._enter()
        self.check("cuModuleUnload", self.lib.cuModuleUnload(program.handle))
        program.kernels.clear()

    def kernel(self, program: CUDAProgram, name: str) -> CUDAKernel:
        cached = program.kernels.get(name)
        if cached is None:
            self._enter()
            fn = self.ffi.new("CUfunction *")
            self.check("cuModuleGetFunction",
                       self.lib.cuModuleGetFunction(fn, program.handle, name.encode()),
                       f"kernel {name!r}")
            cached = program.kernels[name] = CUDAKernel(name, fn[0])
        return cached

    def global_variable(self, program: CUDAProgram, name: str) -> tuple[int, int]:
        self._enter()
        ptr, size = self.ffi.new("CUdeviceptr *"), self.ffi.new("size_t *")
        self.check("cuModuleGetGlobal_v2",
                   self.lib.cuModuleGetGlobal_v2(ptr, size, program.handle, name.encode()),
                   f"variable {name!r}")
        return int(ptr[0]), int(size[0])

    def host_accessible(self, address: int) -> bool:
        # The real driver's managed memory: a module variable the NVPTX
        # declares `.attribute(.managed)` (__managed__); any other module
        # variable is device memory the host cannot touch.
        self._enter()
        managed = self.ffi.new("unsigned int *")
        self.check("cuPointerGetAttribute",
                   self.lib.cuPointerGetAttribute(managed, _POINTER_ATTRIBUTE_IS_MANAGED,
                                                  address),
                   f"CU_POINTER_ATTRIBUTE_IS_MANAGED of {address:#x}")
        return bool(managed[0])

    def launch_raw(self, kernel: CUDAKernel, info: Any, grid: Sequence[int],
                   block: Sequence[int], params_address: int, shared_bytes: int,
                   cooperative: bool = False, cluster: Sequence[int] | None = None,
                   stream: int = 0) -> None:
        """Launch with the application's own kernelParams array: our NVPTX
        kernels take exactly the PTX parameters, so it passes through as is."""
        self._launch(kernel, info, grid, block, self.ffi.cast("void **", params_address),
                     shared_bytes, cooperative, cluster, stream)

    def launch(self, kernel: CUDAKernel, info: Any, grid: Sequence[int], block: Sequence[int],
               args: Sequence[Any], shared_bytes: int, cooperative: bool = False,
               cluster: Sequence[int] | None = None, stream: int = 0) -> None:
        params = param_block(self.ffi, args)
        self._launch(kernel, info, grid, block, params.array, shared_bytes, cooperative,
                     cluster, stream)

    def hardware_attribute(self, attrib: int) -> int | None:
        """NVIDIA's answer: the GPU is presented as it is, so that code that
        picks its kernels by the device (NVIDIA's libraries, with their
        machine code for it) picks those for this GPU."""
        if attrib not in self._hardware:
            self._enter()
            value = self.ffi.new("int *")
            code = self.lib.cuDeviceGetAttribute(value, attrib, self.device)
            self._hardware[attrib] = int(value[0]) if code == CUDA_SUCCESS else None
        return self._hardware[attrib]

    def reserve_shared(self, kernel: CUDAKernel, window: int) -> None:
        # Above the device's limit NVIDIA's answer (a launch's, an
        # occupancy's) is the refusal.
        self._enter()
        if window <= self.info.shared_optin:
            self._allow_shared(kernel, window)

    def shared_reserved(self, kernel: CUDAKernel, window: int) -> None:
        kernel.shared_limit = window  # fastpath.c set it, lower or higher

    def _allow_shared(self, kernel: CUDAKernel, window: int) -> None:
        """Opts the kernel in to a window of `window` bytes (the real driver
        refuses launches and occupancy queries above its limit)."""
        if window > kernel.shared_limit:
            self.check("cuFuncSetAttribute", self.lib.cuFuncSetAttribute(
                kernel.handle, _FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, window),
                f"kernel {kernel.name!r}: {window} bytes of dynamic shared memory")
            kernel.shared_limit = window

    def max_active_clusters(self, kernel: CUDAKernel, info: Any, config_address: int) -> int:
        """The real driver's count for a CUlaunchConfig (at config_address,
        the stream's handle cleared; the window is the kernel's static
        shared memory plus the config's dynamic bytes, as at launch)."""
        clusters = self.ffi.new("int *")
        config = self.ffi.cast("unsigned int *", config_address)
        config[6] += int(info.static_shared_bytes)  # sharedMemBytes
        self.reserve_shared(kernel, int(config[6]))
        self.check("cuOccupancyMaxActiveClusters",
                   self.lib.cuOccupancyMaxActiveClusters(
                       clusters, kernel.handle, self.ffi.cast("void *", config_address)))
        return int(clusters[0])

    def occupancy(self, kernel: CUDAKernel, info: Any, block: int, dynamic_shared: int) -> int:
        """The real driver's active blocks per multiprocessor (the window is
        the kernel's static shared memory plus the dynamic bytes)."""
        window = int(info.static_shared_bytes) + int(dynamic_shared)
        self.reserve_shared(kernel, window)
        blocks = self.ffi.new("int *")
        self.check("cuOccupancyMaxActiveBlocksPerMultiprocessor",
                   self.lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                       blocks, kernel.handle, block, window))
        return int(blocks[0])

    def _launch(self, kernel: CUDAKernel, info: Any, grid: Sequence[int], block: Sequence[int],
                params: Any, shared_bytes: int, cooperative: bool = False,
                cluster: Sequence[int] | None = None, stream: int = 0) -> None:
        """`stream`: one of vendor_stream's (0: the NULL stream)."""
        (gx, gy, gz), (bx, by, bz) = dim3("grid", grid), dim3("block", block)
        if bx * by * bz > self.info.max_threads:
            raise ValueError(f"block ({bx}, {by}, {bz}) has {bx * by * bz} threads; the "
                             f"device allows {self.info.max_threads}")
        # zmlir's kernels declare no static .shared: the whole window is dynamic.
        window = int(info.static_shared_bytes) + int(shared_bytes)
        if window > self.info.shared_optin:
            raise ValueError(f"shared-memory window of {window} bytes exceeds the device's "
                             f"{self.info.shared_optin} bytes per block")
        self._enter()
        self._allow_shared(kernel, window)
        where = (f"kernel {kernel.name!r}, grid ({gx}, {gy}, {gz}), block ({bx}, {by}, {bz}), "
                 f"{window} bytes shared")
        queue = self.ffi.cast("CUstream", stream)
        # On the NULL stream: a graph's kernel replayed by Python for a
        # stream, or the legacy stream's own (more waiting than NVIDIA's).
        with self._null_stream_order(stream):
            if cluster is not None:  # cuLaunchKernelEx with the cluster's dimensions
                attrs = self.ffi.new("CUlaunchAttribute[2]")
                attrs[0].id = _LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
                attrs[0].value[0:3] = list(cluster)
                attrs[1].id = _LAUNCH_ATTRIBUTE_COOPERATIVE
                attrs[1].value[0] = int(cooperative)
                config = self.ffi.new("CUlaunchConfig *", {
                    "gridDimX": gx, "gridDimY": gy, "gridDimZ": gz, "blockDimX": bx,
                    "blockDimY": by, "blockDimZ": bz, "sharedMemBytes": window,
                    "attrs": attrs, "numAttrs": 2, "hStream": queue})
                code = self.lib.cuLaunchKernelEx(config, kernel.handle, params, self.ffi.NULL)
            elif cooperative:  # the real driver checks that the grid fits the device at once
                code = self.lib.cuLaunchCooperativeKernel(kernel.handle, gx, gy, gz, bx, by,
                                                          bz, window, queue, params)
            else:
                code = self.lib.cuLaunchKernel(kernel.handle, gx, gy, gz, bx, by, bz, window,
                                               queue, params, self.ffi.NULL)
        if code != CUDA_SUCCESS:
            # The real driver's CUresult is the application's answer (as on the C path).
            from zmlir.runtime.cuda.errors import CudaError

            raise CudaError(code, f"{where}: {_error_name(self.lib, code)}")

    def synchronize(self) -> None:
        self._enter()
        self.check("cuCtxSynchronize", self.lib.cuCtxSynchronize())

    # -- NVIDIA's graphs (graph/vendor.py) -------------------------------------------
    # An executable graph of kernels, fills, copies and host functions is
    # replayed as NVIDIA's: one cuGraphLaunch on the stream's own stream.

    @functools.cached_property
    def vendor_graphs(self) -> bool:  # asked at every graph launch through Python
        return all(getattr(self.lib, name, None) is not None for name in _GRAPH_CALLS)

    def graph_create(self) -> Any:
        self._enter()
        graph = self.ffi.new("CUgraph *")
        self.check("cuGraphCreate", self.lib.cuGraphCreate(graph, 0))
        return graph[0]

    def _graph_node(self, api: str, code_of: Callable[[Any, Any, int], int],
                    dependencies: Sequence[Any]) -> Any:
        node = self.ffi.new("CUgraphNode *")
        deps = self.ffi.new("CUgraphNode[]", list(dependencies)) if dependencies else \
            self.ffi.NULL
        self.check(api, code_of(node, deps, len(dependencies)))
        return node[0]

    def _kernel_node_params(self, kernel: CUDAKernel, info: Any, grid: Sequence[int],
                            block: Sequence[int], shared_bytes: int, args: Sequence[bytes],
                            keep: list[Any]) -> Any:
        (gx, gy, gz), (bx, by, bz) = dim3("grid", grid), dim3("block", block)
        window = int(info.static_shared_bytes) + int(shared_bytes)
        self._allow_shared(kernel, window)
        buffers = [self.ffi.new("char[]", a) for a in args]
        params = self.ffi.new("void *[]", buffers or 1)
        keep += [buffers, params]
        return self.ffi.new("CUDA_KERNEL_NODE_PARAMS *", {
            "func": kernel.handle, "gridDimX": gx, "gridDimY": gy, "gridDimZ": gz,
            "blockDimX": bx, "blockDimY": by, "blockDimZ": bz, "sharedMemBytes": window,
            "kernelParams": params, "extra": self.ffi.NULL})

    def graph_add_kernel(self, graph: Any, dependencies: Sequence[Any], kernel: CUDAKernel,
                         info: Any, grid: Sequence[int], block: Sequence[int],
                         shared_bytes: int, args: Sequence[bytes]) -> Any:
        """A kernel node; `args`: each parameter's bytes (NVIDIA copies them)."""
        keep: list[Any] = []
        p = self._kernel_node_params(kernel, info, grid, block, shared_bytes, args, keep)
        return self._graph_node("cuGraphAddKernelNode", lambda node, deps, n:
                                self.lib.cuGraphAddKernelNode(node, graph, deps, n, p),
                                dependencies)

    def graph_set_kernel(self, graph_exec: Any, node: Any, kernel: CUDAKernel, info: Any,
                         grid: Sequence[int], block: Sequence[int], shared_bytes: int,
                         args: Sequence[bytes]) -> None:
        keep: list[Any] = []
        p = self._kernel_node_params(kernel, info, grid, block, shared_bytes, args, keep)
        self._enter()
        self.check("cuGraphExecKernelNodeSetParams",
                   self.lib.cuGraphExecKernelNodeSetParams(graph_exec, node, p))

    def _memset_node_params(self, dst: int, pitch: int, value: int, element_size: int,
                            width: int, height: int) -> Any:
        return self.ffi.new("CUDA_MEMSET_NODE_PARAMS *", {
            "dst": dst, "pitch": pitch, "value": value, "elementSize": element_size,
            "width": width, "height": height})

    def graph_add_memset(self, graph: Any, dependencies: Sequence[Any], dst: int, pitch: int,
                         value: int, element_size: int, width: int, height: int) -> Any:
        p = self._memset_node_params(dst, pitch, value, element_size, width, height)
        return self._graph_node("cuGraphAddMemsetNode", lambda node, deps, n:
                                self.lib.cuGraphAddMemsetNode(node, graph, deps, n, p,
                                                              self.context), dependencies)

    def graph_set_memset(self, graph_exec: Any, node: Any, dst: int, pitch: int, value: int,
                         element_size: int, width: int, height: int) -> None:
        p = self._memset_node_params(dst, pitch, value, element_size, width, height)
        self._enter()
        self.check("cuGraphExecMemsetNodeSetParams",
                   self.lib.cuGraphExecMemsetNodeSetParams(graph_exec, node, p, self.context))

    def graph_add_copy(self, graph: Any, dependencies: Sequence[Any], copy: bytes) -> Any:
        """A copy node of a CUDA_MEMCPY3D's bytes (host and device addresses)."""
        p = self.ffi.new("char[]", copy)
        return self._graph_node("cuGraphAddMemcpyNode", lambda node, deps, n:
                                self.lib.cuGraphAddMemcpyNode(node, graph, deps, n, p,
                                                              self.context), dependencies)

    def graph_set_copy(self, graph_exec: Any, node: Any, copy: bytes) -> None:
        self._enter()
        self.check("cuGraphExecMemcpyNodeSetParams", self.lib.cuGraphExecMemcpyNodeSetParams(
            graph_exec, node, self.ffi.new("char[]", copy), self.context))

    def _host_node_params(self, fn: int, user_data: int) -> Any:
        return self.ffi.new("CUDA_HOST_NODE_PARAMS *", {
            "fn": self.ffi.cast("void *", fn), "userData": self.ffi.cast("void *", user_data)})

    def graph_add_host(self, graph: Any, dependencies: Sequence[Any], fn: int,
                       user_data: int) -> Any:
        """A host function node: NVIDIA calls the application's `fn` in order."""
        p = self._host_node_params(fn, user_data)
        return self._graph_node("cuGraphAddHostNode", lambda node, deps, n:
                                self.lib.cuGraphAddHostNode(node, graph, deps, n, p),
                                dependencies)

    def graph_set_host(self, graph_exec: Any, node: Any, fn: int, user_data: int) -> None:
        self._enter()
        self.check("cuGraphExecHostNodeSetParams", self.lib.cuGraphExecHostNodeSetParams(
            graph_exec, node, self._host_node_params(fn, user_data)))

    def graph_add_empty(self, graph: Any, dependencies: Sequence[Any]) -> Any:
        return self._graph_node("cuGraphAddEmptyNode", lambda node, deps, n:
                                self.lib.cuGraphAddEmptyNode(node, graph, deps, n),
                                dependencies)

    def graph_add_child(self, graph: Any, dependencies: Sequence[Any], child: Any) -> Any:
        """A child graph node: NVIDIA copies `child` (graph_create's) into it."""
        return self._graph_node("cuGraphAddChildGraphNode", lambda node, deps, n:
                                self.lib.cuGraphAddChildGraphNode(node, graph, deps, n, child),
                                dependencies)

    def graph_instantiate(self, graph: Any) -> Any:
        self._enter()
        graph_exec = self.ffi.new("CUgraphExec *")
        self.check("cuGraphInstantiateWithFlags",
                   self.lib.cuGraphInstantiateWithFlags(graph_exec, graph, 0))
        return graph_exec[0]

    def graph_launch(self, graph_exec: Any, stream: int = 0) -> int:
        """NVIDIA's answer (its error codes are the application's)."""
        self._enter()
        with self._null_stream_order(stream):
            return int(self.lib.cuGraphLaunch(graph_exec, self.ffi.cast("CUstream", stream)))

    def graph_destroy(self, graph: Any, graph_exec: Any = None) -> None:
        self._enter()
        if graph_exec is not None:
            self.lib.cuGraphExecDestroy(graph_exec)
        if graph is not None:
            self.lib.cuGraphDestroy(self.ffi.cast("CUgraph", graph))

    # -- NVIDIA's captures of our streams (fastpath.c), its graphs read back ------

    @functools.cached_property
    def vendor_captures(self) -> bool:
        return self.vendor_graphs and all(getattr(self.lib, name, None) is not None
                                          for name in _CAPTURE_CALLS)

    def capture_probe(self, nbytes: int, host: int) -> tuple[int, int, Any, int, bytes]:
        """NVIDIA's graph of a capture (relaxed, on a stream of its own) of
        what fastpath.c's captures hold: a fill of device memory, a launch
        (captured, never run) of a kernel of a module of its own, copies of
        `nbytes` to and from host memory `host`: (the graph, its device
        memory, the module, the kernel, the launch's arguments' bytes); the
        first three for release_capture_probe."""
        self._enter()
        module, function = self.ffi.new("CUmodule *"), self.ffi.new("CUfunction *")
        stream, graph = self.ffi.new("CUstream *"), self.ffi.new("CUgraph *")
        self.check("cuModuleLoadDataEx", self.lib.cuModuleLoadDataEx(
            module, _PROBE_PTX, 0, self.ffi.NULL, self.ffi.NULL))
        memory = 0
        try:
            self.check("cuModuleGetFunction",
                       self.lib.cuModuleGetFunction(function, module[0], b"zmlir_probe"))
            self.check("cuStreamCreate", self.lib.cuStreamCreate(stream, 0))
            memory = self.alloc(nbytes)
            pointer, value = self.ffi.new("uint64_t *", memory), self.ffi.new("uint32_t *", 7)
            params = self.ffi.new("void *[]", [pointer, value])
            host_pointer, s = self.ffi.cast("void *", host), stream[0]
            self.check("cuStreamBeginCapture_v2", self.lib.cuStreamBeginCapture_v2(s, 2))
            codes = [self.lib.cuMemsetD8Async(memory, 7, nbytes, s),
                     self.lib.cuLaunchKernel(function[0], 1, 1, 1, 1, 1, 1, 0, s, params,
                                             self.ffi.NULL),
                     self.lib.cuMemcpyDtoHAsync_v2(host_pointer, memory, nbytes, s),
                     self.lib.cuMemcpyHtoDAsync_v2(memory, host_pointer, nbytes, s)]
            end = self.lib.cuStreamEndCapture(s, graph)
            for code in (*codes, end):
                self.check("a capture", code)
        except Exception:
            if memory:
                self.free(memory)
            self.lib.cuModuleUnload(module[0])
            raise
        finally:
            if stream[0] != self.ffi.NULL:
                self.lib.cuStreamDestroy_v2(stream[0])
        args = bytes(self.ffi.buffer(pointer)) + bytes(self.ffi.buffer(value))
        return self.fast_graph(graph[0]), memory, module[0], self.fast_graph(function[0]), args

    def release_capture_probe(self, graph: int, memory: int, module: Any) -> None:
        self.graph_destroy(graph)
        self.free(memory)
        self.lib.cuModuleUnload(module)

    def capture_dependencies(self, stream: int) -> tuple[int, list[int]]:
        """NVIDIA's CUstreamCaptureStatus of `stream` and the nodes its next
        work depends on."""
        self._enter()
        status, deps = self.ffi.new("int *"), self.ffi.new("const CUgraphNode **")
        count = self.ffi.new("size_t *")
        self.check("cuStreamGetCaptureInfo_v2", self.lib.cuStreamGetCaptureInfo_v2(
            self.ffi.cast("CUstream", stream), status, self.ffi.NULL, self.ffi.NULL, deps,
            count))
        return int(status[0]), [self.fast_graph(deps[0][i]) for i in range(count[0])]

    def graph_nodes(self, graph: int) -> list[int]:
        """The nodes of NVIDIA's graph `graph`, in the order it made them."""
        self._enter()
        g = self.ffi.cast("CUgraph", graph)
        count = self.ffi.new("size_t *")
        self.check("cuGraphGetNodes", self.lib.cuGraphGetNodes(g, self.ffi.NULL, count))
        if count[0] == 0:  # NVIDIA refuses an array for none (CUDA_ERROR_INVALID_VALUE)
            return []
        nodes = self.ffi.new("CUgraphNode[]", count[0])
        self.check("cuGraphGetNodes", self.lib.cuGraphGetNodes(g, nodes, count))
        return [self.fast_graph(nodes[i]) for i in range(count[0])]

    def graph_node(self, node: int) -> tuple[int, list[int]]:
        """NVIDIA's node `node`: its CUgraphNodeType and its dependencies."""
        self._enter()
        n = self.ffi.cast("CUgraphNode", node)
        kind, count = self.ffi.new("int *"), self.ffi.new("size_t *")
        self.check("cuGraphNodeGetType", self.lib.cuGraphNodeGetType(n, kind))
        self.check("cuGraphNodeGetDependencies",
                   self.lib.cuGraphNodeGetDependencies(n, self.ffi.NULL, count))
        if count[0] == 0:  # NVIDIA refuses an array for none (CUDA_ERROR_INVALID_VALUE)
            return int(kind[0]), []
        deps = self.ffi.new("CUgraphNode[]", count[0])
        self.check("cuGraphNodeGetDependencies",
                   self.lib.cuGraphNodeGetDependencies(n, deps, count))
        return int(kind[0]), [self.fast_graph(deps[i]) for i in range(count[0])]

    def graph_kernel_node(self, node: int) -> tuple[int, tuple[int, int, int],
                                                    tuple[int, int, int], int, int]:
        """A kernel node's (CUfunction, grid, block, shared window bytes, its
        kernelParams: read them with kernel_node_args)."""
        self._enter()
        p = self.ffi.new("CUDA_KERNEL_NODE_PARAMS_v2 *")
        self.check("cuGraphKernelNodeGetParams_v2", self.lib.cuGraphKernelNodeGetParams_v2(
            self.ffi.cast("CUgraphNode", node), p))
        function = self.fast_graph(p.func) or self.fast_graph(p.kern)
        if p.extra != self.ffi.NULL:  # none in a capture of fastpath.c's launches
            raise ValueError("a kernel node with `extra`")
        return (function, (p.gridDimX, p.gridDimY, p.gridDimZ),
                (p.blockDimX, p.blockDimY, p.blockDimZ), int(p.sharedMemBytes),
                self.fast_graph(p.kernelParams))

    def kernel_node_args(self, params: int, sizes: Sequence[int]) -> tuple[bytes, ...]:
        """Each argument's bytes from a kernel node's kernelParams."""
        if not params and sizes:
            raise ValueError("a kernel node without its arguments")
        pointers = self.ffi.cast("void **", params)
        return tuple(bytes(self.ffi.buffer(pointers[i], size)) for i, size in enumerate(sizes))

    def graph_memset_node(self, node: int) -> tuple[int, int, int, int, int, int]:
        """A fill node's (dst, pitch, value, element size, width, height)."""
        self._enter()
        p = self.ffi.new("CUDA_MEMSET_NODE_PARAMS *")
        self.check("cuGraphMemsetNodeGetParams", self.lib.cuGraphMemsetNodeGetParams(
            self.ffi.cast("CUgraphNode", node), p))
        return (int(p.dst), int(p.pitch), int(p.value), int(p.elementSize), int(p.width),
                int(p.height))

    def graph_copy_node(self, node: int, size: int) -> bytes:
        """A copy node's CUDA_MEMCPY3D (`size` bytes)."""
        self._enter()
        p = self.ffi.new("char[]", size)
        self.check("cuGraphMemcpyNodeGetParams", self.lib.cuGraphMemcpyNodeGetParams(
            self.ffi.cast("CUgraphNode", node), p))
        return bytes(self.ffi.buffer(p))

    def graph_host_node(self, node: int) -> tuple[int, int]:
        """A host node's function and user data."""
        self._enter()
        p = self.ffi.new("CUDA_HOST_NODE_PARAMS *")
        self.check("cuGraphHostNodeGetParams", self.lib.cuGraphHostNodeGetParams(
            self.ffi.cast("CUgraphNode", node), p))
        return self.fast_graph(p.fn), self.fast_graph(p.userData)

    def fast_graph(self, graph_object: Any) -> int:
        """The address of an instantiation or a node of graph_*'s, for fastpath.c."""
        return int(self.ffi.cast("uintptr_t", graph_object))

    def queue_done(self, stream: int = 0) -> bool:
        # Our work is NVIDIA's on its NULL stream, and on the vendor stream's
        # own; a non-blocking stream waits for our work on the NULL stream
        # (_null_stream_order): its own query is the answer. A blocking one's
        # is its own and the event after our last work on the NULL stream:
        # NVIDIA's query of the NULL stream waits for every blocking stream,
        # and said NOT_READY while another stream's kernel waited for the
        # host (stream_synchronize_own_work, natively ready).
        self._enter()
        if stream in self._blocking and self._null_work is not None and \
                not self.mark_reached(self._null_work):
            return False
        queues = (stream,) if stream in self._detached or stream in self._blocking else \
            (0, stream) if stream else (0,)
        for queue in queues:
            code = self.lib.cuStreamQuery(self.ffi.cast("CUstream", queue))
            if code == _CUDA_ERROR_NOT_READY:
                return False
            self.check("cuStreamQuery", code)
        return True

    def stream_synchronize(self, stream: int) -> bool:
        # A non-blocking stream waits for our work on the NULL stream
        # (_null_stream_order); a blocking one's share of it ends at the
        # event after our last work there.
        if stream not in self._blocking and stream not in self._detached:
            return False
        self._enter()
        if stream in self._blocking and self._null_work is not None and \
                self.lib.cuEventSynchronize(self._null_work) != CUDA_SUCCESS:
            return False
        return self.lib.cuStreamSynchronize(self.ffi.cast("CUstream", stream)) == CUDA_SUCCESS

    # NVPTX modules call NVIDIA's malloc and keep their local memory on
    # NVIDIA's stacks: both limits are the real context's.
    def set_heap_size(self, nbytes: int) -> int | None:
        return self._set_limit(_CU_LIMIT_MALLOC_HEAP_SIZE, nbytes)

    def heap_size(self) -> int | None:
        return self._limit(_CU_LIMIT_MALLOC_HEAP_SIZE)

    def set_stack_size(self, nbytes: int) -> int | None:
        return self._set_limit(_CU_LIMIT_STACK_SIZE, nbytes)

    def stack_size(self) -> int | None:
        return self._limit(_CU_LIMIT_STACK_SIZE)

    def _set_limit(self, limit: int, value: int) -> int:
        self._enter()
        return int(self.lib.cuCtxSetLimit(limit, value))

    def _limit(self, limit: int) -> int:
        self._enter()
        value = self.ffi.new("size_t *")
        self.check("cuCtxGetLimit", self.lib.cuCtxGetLimit(value, limit), f"limit {limit}")
        return int(value[0])

    # Events are the real driver's, one per event with its flags, made with
    # the event (so that fastpath.c records it from the first record on) and
    # recorded again in place in the stream its record names (ours: the NULL
    # stream), so cuEventElapsedTime is the GPU's own time and recording
    # waits for nothing. A never-recorded one answers as NVIDIA's does.
    def new_mark(self, flags: int) -> Any:
        self._enter()
        pevent = self.ffi.new("CUevent *")
        self.check("cuEventCreate", self.lib.cuEventCreate(pevent, flags & _EVENT_FLAGS))
        return pevent[0]

    def record_mark(self, previous: Any, flags: int, stream: int = 0) -> Any:
        self._enter()
        event = self.new_mark(flags) if previous is None else previous
        self.check("cuEventRecord", self.lib.cuEventRecord(
            event, self.ffi.cast("CUstream", stream)))
        return event

    def mark_reached(self, mark: Any) -> bool:
        self._enter()
        code = self.lib.cuEventQuery(mark)
        if code == _CUDA_ERROR_NOT_READY:
            return False
        self.check("cuEventQuery", code)
        return True

    def wait_mark(self, mark: Any) -> None:
        self._enter()
        self.check("cuEventSynchronize", self.lib.cuEventSynchronize(mark))

    def elapsed_ms(self, start: Any, end: Any) -> float:
        self._enter()
        ms = self.ffi.new("float *")
        self.check("cuEventElapsedTime", self.lib.cuEventElapsedTime(ms, start, end))
        return float(ms[0])

    def release_mark(self, mark: Any) -> None:
        self._enter()
        self.check("cuEventDestroy", self.lib.cuEventDestroy_v2(mark))

    def fast_event(self, mark: Any) -> int:
        return int(self.ffi.cast("uintptr_t", mark))

    def fast_launch_points(self) -> dict[str, int]:
        # The real driver's cuLaunchKernel: fastpath.c calls it with the real
        # CUfunction, the shared window and the application's kernelParams,
        # exactly as _launch does.
        def address(function: Any) -> int:
            return int(self.ffi.cast("uintptr_t", function))

        points = {"launch": address(self.lib.cuLaunchKernel),
                  "event_record": address(self.lib.cuEventRecord),
                  "event_query": address(self.lib.cuEventQuery),
                  "event_synchronize": address(self.lib.cuEventSynchronize),
                  "event_elapsed": address(self.lib.cuEventElapsedTime),
                  # A stream's or the context's synchronisation: synchronize().
                  "ctx_synchronize": address(self.lib.cuCtxSynchronize)}
        if getattr(self.lib, "cuStreamSynchronize", None) is not None:  # a created stream's own
            points["stream_synchronize"] = address(self.lib.cuStreamSynchronize)
        if self.vendor_graphs:  # an executable graph's replay: graph_launch, graph_set_kernel
            points["graph_launch"] = address(self.lib.cuGraphLaunch)
            points["graph_set_kernel"] = address(self.lib.cuGraphExecKernelNodeSetParams)
        if self.vendor_captures:  # stream capture on NVIDIA's driver
            points.update(begin_capture=address(self.lib.cuStreamBeginCapture_v2),
                          end_capture=address(self.lib.cuStreamEndCapture),
                          capture_info=address(self.lib.cuStreamGetCaptureInfo_v2),
                          exec_update=address(self.lib.cuGraphExecUpdate_v2),
                          graph_destroy=address(self.lib.cuGraphDestroy))
        if self.supports_clusters:  # launches with a thread-block cluster, as _launch makes them
            points["launch_ex"] = address(self.lib.cuLaunchKernelEx)
        # NVIDIA's machine code's attributes: native_function_attribute and
        # native_set_function_attribute, in C.
        points["func_get_attribute"] = address(self.lib.cuFuncGetAttribute)
        points["func_set_attribute"] = address(self.lib.cuFuncSetAttribute)
        # A registered function's MAX_DYNAMIC_SHARED_SIZE_BYTES, set in C up to
        # the device's limit (reserve_shared's, there).
        points["shared_optin"] = self.info.shared_optin
        occupancy = getattr(self.lib, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", None)
        if occupancy is not None:  # the occupancy of a registered function: occupancy()'s
            points["occupancy"] = address(occupancy)
        # Allocations, frees and memsets: NVIDIA's own, on the NULL stream
        # (the fills: as memset does here); asynchronous copies on the
        # stream's own; a driver without one leaves it to the Python path.
        for name, symbol in _FAST_MEMORY_POINTS.items():
            function = getattr(self.lib, symbol, None)
            if function is not None:
                points[name] = address(function)
        points["device_ordinal"] = self.device  # NVIDIA's ordinal of our device 0 (hints)
        return points

    def fast_kernel(self, kernel: CUDAKernel, info: Any,
                    nparams: int) -> tuple[str, int, int, int, int]:
        # Above kernel.shared_limit the kernel must be opted in first
        # (cuFuncSetAttribute): the Python path does it and re-registers.
        return ("cuda", int(self.ffi.cast("uintptr_t", kernel.handle)),
                int(info.static_shared_bytes), kernel.shared_limit, self.info.max_threads)


# CUmemPool_attribute's of type int (REUSE_*); the others are cuuint64_t.
_POOL_INT_ATTRIBUTES = (1, 2, 3)

# fastpath.c's entry points for device memory: NVIDIA's functions.
_FAST_MEMORY_POINTS = {
    "copy": "cuMemcpy", "copy_htod": "cuMemcpyHtoD_v2", "copy_dtoh": "cuMemcpyDtoH_v2",
    "copy_dtod": "cuMemcpyDtoD_v2",
    "mem_alloc": "cuMemAlloc_v2", "mem_free": "cuMemFree_v2",
    "mem_alloc_async": "cuMemAllocAsync", "mem_free_async": "cuMemFreeAsync",
    "mem_prefetch": "cuMemPrefetchAsync_v2", "mem_advise": "cuMemAdvise_v2",
    "memset_d8": "cuMemsetD8_v2", "memset_d16": "cuMemsetD16_v2", "memset_d32": "cuMemsetD32_v2",
    "memset_d8_async": "cuMemsetD8Async", "memset_d16_async": "cuMemsetD16Async",
    "memset_d32_async": "cuMemsetD32Async",
    "copy_async": "cuMemcpyAsync", "copy_htod_async": "cuMemcpyHtoDAsync_v2",
    "copy_dtoh_async": "cuMemcpyDtoHAsync_v2", "copy_dtod_async": "cuMemcpyDtoDAsync_v2",
}


def native_param_type(offset: int, size: int) -> str:
    """A parameter of a native kernel as a PTX type (KernelInfo.params) from
    NVIDIA's offset and size: an aligned scalar's own type, else bytes
    aligned to the largest power of two (at most 16) dividing its offset.
    Laid out in order (function.param_alignment), those give NVIDIA's offsets
    back: each is a multiple of the true alignment that divides the offset."""
    if size in (1, 2, 4, 8) and offset % size == 0:
        return f"b{8 * size}"
    align = 16
    while offset % align:
        align //= 2
    return f"align {align} b8[{size}]"


_LM_ID_BASE = 0


def _open_in_base_namespace(ffi: Any, candidates: list[str], what: str) -> OpenedLibrary:
    """NVIDIA's driver in the host's link-map namespace, whichever namespace
    we run in, with RTLD_DEEPBIND."""
    libc_ffi = cffi.FFI()
    libc_ffi.cdef("void *dlmopen(long, const char *, int); char *dlerror(void);")
    libc = libc_ffi.dlopen(None)
    # Resolved before the first dlmopen: cffi looks a function up at its first
    # use, and a successful dlsym clears the error dlerror would report.
    dlmopen, dlerror = libc.dlmopen, libc.dlerror

    def reason() -> str:
        text = dlerror()
        return libc_ffi.string(text).decode() if text != libc_ffi.NULL else "dlmopen failed"

    tried = []
    for candidate in dict.fromkeys(candidates):
        if os.path.isabs(candidate) and not os.path.exists(candidate):
            tried.append(f"{candidate} (no such file)")
            continue
        handle = dlmopen(_LM_ID_BASE, candidate.encode(),
                         ffi.RTLD_NOW | ffi.RTLD_LOCAL | getattr(ffi, "RTLD_DEEPBIND", 0))
        if handle == libc_ffi.NULL:
            tried.append(f"{candidate} ({reason()})")
            continue
        lib = ffi.dlopen(ffi.cast("void *", int(libc_ffi.cast("uintptr_t", handle))))
        return OpenedLibrary(lib, candidate)
    raise NoDevice(f"{what} not found; tried: "
                   + "; ".join(tried or ["(no candidates)"]))


def _error_name(lib: Any, code: int) -> str:
    ffi = _get_ffi()
    name = ffi.new("const char **")
    if lib.cuGetErrorName(code, name) == CUDA_SUCCESS and name[0] != ffi.NULL:
        return ffi.string(name[0]).decode()
    return f"CUresult {code}"


def _check(lib: Any, api: str, code: int, detail: str = "") -> None:
    if code != CUDA_SUCCESS:
        raise VendorError(api, code, _error_name(lib, code), detail, cuda_result=code)


def _device_info(ffi: Any, lib: Any, device: int) -> CUDADeviceInfo:
    def attribute(attrib: int) -> int:
        value = ffi.new("int *")
        _check(lib, "cuDeviceGetAttribute", lib.cuDeviceGetAttribute(value, attrib, device),
               f"attribute {attrib}")
        return int(value[0])

    name = ffi.new("char[256]")
    _check(lib, "cuDeviceGetName", lib.cuDeviceGetName(name, 256, device))
    memory = ffi.new("size_t *")
    _check(lib, "cuDeviceTotalMem_v2", lib.cuDeviceTotalMem_v2(memory, device))
    return CUDADeviceInfo(
        name=ffi.string(name).decode(errors="replace"),
        compute_capability=(attribute(_ATTR_COMPUTE_CAPABILITY_MAJOR),
                            attribute(_ATTR_COMPUTE_CAPABILITY_MINOR)),
        compute_units=attribute(_ATTR_MULTIPROCESSOR_COUNT),
        max_threads=attribute(_ATTR_MAX_THREADS_PER_BLOCK),
        shared_optin=max(attribute(_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
                         attribute(_ATTR_MAX_SHARED_MEMORY_PER_BLOCK)),
        total_memory=int(memory[0]),
        cooperative=attribute(_ATTR_COOPERATIVE_LAUNCH) != 0,
        memory_model={attrib: attribute(attrib) for attrib in MEMORY_MODEL},
    )


class _NullStreamFence:
    """CUDABackend._null_stream_order's fences around work on the NULL stream."""

    def __init__(self, backend: CUDABackend) -> None:
        self.backend = backend

    def __enter__(self) -> None:
        self.backend._fence_null_stream()

    def __exit__(self, *exc: object) -> None:
        self.backend._fence_detached_streams()
        self.backend._mark_null_work()
