"""The HIP backend: AMDGPU code objects (HSACO, zmlir target
"amdgpu:<gfx arch of the device>") on AMD GPUs through the HIP runtime
(libamdhip64, cffi ABI mode).

Device memory is hipMalloc memory: real device addresses, so pointer
arithmetic and pointers inside structs work as in CUDA. Our kernels reach all
their shared memory through one external LDS array, so every launch's dynamic
LDS size is the kernel's static window plus CUDA's dynamic shared bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cffi

from zmlir.runtime.backends._vendor import (
    CopiesThroughMemcpy,
    OpenedLibrary,
    VendorError,
    dim3,
    env_path,
    note,
    open_library,
    param_block,
)
from zmlir.runtime.backends.base import Backend, NoDevice

_CDEF = """
typedef int hipError_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;
hipError_t hipInit(unsigned int flags);
hipError_t hipGetDeviceCount(int *count);
hipError_t hipSetDevice(int device);
hipError_t hipDeviceGetName(char *name, int len, int device);
hipError_t hipDeviceTotalMem(size_t *bytes, int device);
hipError_t hipDeviceGetAttribute(int *value, int attribute, int device);
hipError_t hipGetDeviceProperties(void *prop, int device);
hipError_t hipGetDevicePropertiesR0600(void *prop, int device);
const char *hipGetErrorName(hipError_t error);
hipError_t hipMalloc(void **ptr, size_t size);
hipError_t hipFree(void *ptr);
hipError_t hipMemcpy(void *dst, const void *src, size_t size, int kind);
hipError_t hipMemset(void *dst, int value, size_t size);
hipError_t hipModuleLoadData(hipModule_t *module, const void *image);
hipError_t hipModuleUnload(hipModule_t module);
hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module,
                                const char *name);
hipError_t hipModuleGetGlobal(void **dptr, size_t *bytes, hipModule_t module,
                              const char *name);
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX,
                                 unsigned int gridDimY, unsigned int gridDimZ,
                                 unsigned int blockDimX, unsigned int blockDimY,
                                 unsigned int blockDimZ, unsigned int sharedMemBytes,
                                 hipStream_t stream, void **kernelParams, void **extra);
hipError_t hipDeviceSynchronize(void);
"""

# ROCm 6 first (its soname), then Debian 12's ROCm 5, then a /opt/rocm install.
LIBRARY_CANDIDATES = (
    "libamdhip64.so.6",
    "libamdhip64.so.5",
    "/opt/rocm/lib/libamdhip64.so.6",
    "/opt/rocm/lib/libamdhip64.so.5",
    "/opt/rocm/lib/libamdhip64.so",
)

HIP_SUCCESS = 0
_MEMCPY_DEFAULT = 4  # hipMemcpyDefault: direction from the pointers (unified addressing)
# hipDeviceAttribute_t values (the CUDA-compatible range, same in ROCm 5 and 6).
_ATTR_MULTIPROCESSOR_COUNT = 63
_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 74
_ATTR_MAX_THREADS_PER_BLOCK = 56
_GFX = re.compile(rb"gfx[0-9a-f]{3,4}")

_ffi: cffi.FFI | None = None


def _get_ffi() -> cffi.FFI:
    global _ffi
    if _ffi is None:
        ffi = cffi.FFI()
        ffi.cdef(_CDEF)
        _ffi = ffi
    return _ffi


@dataclass
class HIPKernel:
    name: str
    handle: Any


@dataclass
class HIPProgram:
    handle: Any
    image: Any  # the code object, kept alive for the module's lifetime


class HIPBackend(CopiesThroughMemcpy, Backend):
    name = "hip"

    def __init__(self, opened: OpenedLibrary, ordinal: int, name: str, arch: str,
                 compute_units: int, shared_per_block: int, max_threads: int,
                 memory: int) -> None:
        self.ffi = _get_ffi()
        self.lib = opened.lib
        self.library_path = opened.path
        self.ordinal = ordinal
        self._name, self.arch = name, arch
        self._compute_units, self._shared = compute_units, shared_per_block
        self.max_threads, self._memory = max_threads, memory

    # -- opening -----------------------------------------------------------------

    @classmethod
    def open(cls) -> HIPBackend:
        ffi = _get_ffi()
        opened = open_library(ffi, [*env_path("ZMLIR_HIP_LIBRARY"), *LIBRARY_CANDIDATES],
                              "HIP runtime (libamdhip64)")
        lib = opened.lib
        count = ffi.new("int *")
        code = lib.hipGetDeviceCount(count)
        if code != HIP_SUCCESS:
            raise NoDevice(f"no HIP device: {_error_name(lib, code)}")
        if count[0] < 1:
            raise NoDevice("no HIP device: hipGetDeviceCount found 0 devices")
        ordinal = 0
        _check(lib, "hipSetDevice", lib.hipSetDevice(ordinal))
        name = ffi.new("char[256]")
        _check(lib, "hipDeviceGetName", lib.hipDeviceGetName(name, 256, ordinal))
        memory = ffi.new("size_t *")
        _check(lib, "hipDeviceTotalMem", lib.hipDeviceTotalMem(memory, ordinal))
        arch = _gfx_arch(ffi, lib, ordinal)
        note(f"hip backend: {ffi.string(name).decode(errors='replace')} ({arch}) through "
             f"{opened.path}")
        return cls(opened, ordinal, ffi.string(name).decode(errors="replace"), arch,
                   _attribute(ffi, lib, _ATTR_MULTIPROCESSOR_COUNT, ordinal),
                   _attribute(ffi, lib, _ATTR_MAX_SHARED_MEMORY_PER_BLOCK, ordinal),
                   _attribute(ffi, lib, _ATTR_MAX_THREADS_PER_BLOCK, ordinal),
                   int(memory[0]))

    # -- what the device is ------------------------------------------------------

    @property
    def device_name(self) -> str:
        return self._name

    @property
    def target(self) -> str:
        return f"amdgpu:{self.arch}"

    @property
    def compute_units(self) -> int:
        return max(self._compute_units, 1)

    @property
    def local_mem_size(self) -> int:
        return self._shared

    def total_memory(self) -> int:
        return self._memory

    # -- memory ------------------------------------------------------------------

    def check(self, api: str, code: int, detail: str = "") -> None:
        _check(self.lib, api, code, detail)

    def alloc(self, nbytes: int) -> int:
        ptr = self.ffi.new("void **")
        self.check("hipMalloc", self.lib.hipMalloc(ptr, max(nbytes, 1)), f"{nbytes} bytes")
        return int(self.ffi.cast("uintptr_t", ptr[0]))

    def free(self, address: int) -> None:
        self.check("hipFree", self.lib.hipFree(self.ffi.cast("void *", address)))

    def _memcpy(self, dst: Any, src: Any, nbytes: int) -> None:
        as_ptr = self.ffi.cast
        self.check("hipMemcpy", self.lib.hipMemcpy(
            as_ptr("void *", dst), as_ptr("void *", src), nbytes, _MEMCPY_DEFAULT),
            f"{nbytes} bytes")

    def memset(self, address: int, byte: int, nbytes: int) -> None:
        if nbytes:
            self.check("hipMemset", self.lib.hipMemset(self.ffi.cast("void *", address),
                                                       byte & 0xFF, nbytes))

    # -- code --------------------------------------------------------------------

    def load(self, compiled: Any) -> HIPProgram:
        image = self.ffi.from_buffer(compiled.binary)
        module = self.ffi.new("hipModule_t *")
        self.check("hipModuleLoadData", self.lib.hipModuleLoadData(module, image),
                   f"code object for {self.target}")
        return HIPProgram(module[0], image)

    def unload(self, program: HIPProgram) -> None:
        self.check("hipModuleUnload", self.lib.hipModuleUnload(program.handle))

    def kernel(self, program: HIPProgram, name: str) -> HIPKernel:
        fn = self.ffi.new("hipFunction_t *")
        self.check("hipModuleGetFunction",
                   self.lib.hipModuleGetFunction(fn, program.handle, name.encode()),
                   f"kernel {name!r}")
        return HIPKernel(name, fn[0])

    def global_variable(self, program: HIPProgram, name: str) -> tuple[int, int]:
        ptr, size = self.ffi.new("void **"), self.ffi.new("size_t *")
        self.check("hipModuleGetGlobal",
                   self.lib.hipModuleGetGlobal(ptr, size, program.handle, name.encode()),
                   f"variable {name!r}")
        return int(self.ffi.cast("uintptr_t", ptr[0])), int(size[0])

    def launch(self, kernel: HIPKernel, info: Any, grid: Sequence[int], block: Sequence[int],
               args: Sequence[Any], shared_bytes: int) -> None:
        (gx, gy, gz), (bx, by, bz) = dim3("grid", grid), dim3("block", block)
        if bx * by * bz > self.max_threads:
            raise ValueError(f"block ({bx}, {by}, {bz}) has {bx * by * bz} threads; the "
                             f"device allows {self.max_threads}")
        window = int(info.static_shared_bytes) + int(shared_bytes)
        if window > self._shared:
            raise ValueError(f"shared-memory window of {window} bytes exceeds the device's "
                             f"{self._shared} bytes of LDS per block")
        params = param_block(self.ffi, args)
        self.check("hipModuleLaunchKernel", self.lib.hipModuleLaunchKernel(
            kernel.handle, gx, gy, gz, bx, by, bz, window, self.ffi.NULL, params.array,
            self.ffi.NULL), f"kernel {kernel.name!r}, grid ({gx}, {gy}, {gz}), "
            f"block ({bx}, {by}, {bz})")

    def synchronize(self) -> None:
        self.check("hipDeviceSynchronize", self.lib.hipDeviceSynchronize())


def _error_name(lib: Any, code: int) -> str:
    try:
        name = lib.hipGetErrorName(code)
    except AttributeError:
        name = None
    ffi = _get_ffi()
    return ffi.string(name).decode() if name else f"hipError {code}"


def _check(lib: Any, api: str, code: int, detail: str = "") -> None:
    if code != HIP_SUCCESS:
        raise VendorError(api, code, _error_name(lib, code), detail)


def _attribute(ffi: Any, lib: Any, attribute: int, ordinal: int) -> int:
    value = ffi.new("int *")
    _check(lib, "hipDeviceGetAttribute", lib.hipDeviceGetAttribute(value, attribute, ordinal),
           f"attribute {attribute}")
    return int(value[0])


def _gfx_arch(ffi: Any, lib: Any, ordinal: int) -> str:
    """The device's gfx architecture, e.g. "gfx90a" from "gfx90a:sramecc+:xnack-".

    hipDeviceProp_t changed layout between ROCm 5 and 6 (hipGetDevicePropertiesR0600),
    so rather than pick a struct version we read the properties into a buffer larger than
    either and take gcnArchName as the first "gfx..." string after the 256-byte name.
    """
    buffer = ffi.new("char[]", 16384)
    try:
        getter = lib.hipGetDevicePropertiesR0600
    except AttributeError:
        getter = lib.hipGetDeviceProperties
    _check(lib, "hipGetDeviceProperties", getter(buffer, ordinal))
    raw = bytes(ffi.buffer(buffer))[256:]
    for match in _GFX.finditer(raw):
        if match.start() == 0 or raw[match.start() - 1] == 0:
            return match.group().decode()
    raise NoDevice("HIP device properties name no gfx architecture (gcnArchName)")
