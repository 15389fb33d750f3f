"""The Level Zero backend: SPIR-V kernels on Intel GPUs (and any other Level
Zero driver) through the oneAPI loader (libze_loader, cffi ABI mode).

Device memory is shared USM (zeMemAllocShared): real addresses the host can
also read, like the OpenCL backend's. Kernels take pointers as integers, so
every kernel is marked as reaching host, device and shared allocations
indirectly. The shared-memory window is the kernel's trailing `__local`
argument, set with a size and no value. Work goes through one synchronous
immediate command list: each append has completed when it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import cffi
import numpy as np

from zmlir.runtime.backends._vendor import (
    CopiesThroughMemcpy,
    OpenedLibrary,
    VendorError,
    dim3,
    encode_args,
    env_path,
    note,
    open_library,
)
from zmlir.runtime.backends.base import Backend, NoDevice, UnsupportedLaunch
from zmlir.targets.spirv import warps_not_rows, work_group
from zmlir.targets.spirv.binary import build_options

_CDEF = """
typedef int ze_result_t;
typedef struct _ze_driver_handle_t *ze_driver_handle_t;
typedef struct _ze_device_handle_t *ze_device_handle_t;
typedef struct _ze_context_handle_t *ze_context_handle_t;
typedef struct _ze_command_list_handle_t *ze_command_list_handle_t;
typedef struct _ze_module_handle_t *ze_module_handle_t;
typedef struct _ze_module_build_log_handle_t *ze_module_build_log_handle_t;
typedef struct _ze_kernel_handle_t *ze_kernel_handle_t;
typedef struct _ze_event_handle_t *ze_event_handle_t;

typedef struct { uint8_t id[16]; } ze_device_uuid_t;
typedef struct {
    int stype; void *pNext; int type; uint32_t vendorId; uint32_t deviceId;
    uint32_t flags; uint32_t subdeviceId; uint32_t coreClockRate; uint64_t maxMemAllocSize;
    uint32_t maxHardwareContexts; uint32_t maxCommandQueuePriority; uint32_t numThreadsPerEU;
    uint32_t physicalEUSimdWidth; uint32_t numEUsPerSubslice; uint32_t numSubslicesPerSlice;
    uint32_t numSlices; uint64_t timerResolution; uint32_t timestampValidBits;
    uint32_t kernelTimestampValidBits; ze_device_uuid_t uuid; char name[256];
} ze_device_properties_t;
typedef struct {
    int stype; void *pNext; uint32_t maxTotalGroupSize; uint32_t maxGroupSizeX;
    uint32_t maxGroupSizeY; uint32_t maxGroupSizeZ; uint32_t maxGroupCountX;
    uint32_t maxGroupCountY; uint32_t maxGroupCountZ; uint32_t maxSharedLocalMemory;
    uint32_t numSubGroupSizes; uint32_t subGroupSizes[8];
} ze_device_compute_properties_t;
typedef struct {
    int stype; void *pNext; uint32_t flags; uint32_t maxClockRate; uint32_t maxBusWidth;
    uint64_t totalSize; char name[256];
} ze_device_memory_properties_t;
typedef struct { int stype; const void *pNext; uint32_t flags; } ze_context_desc_t;
typedef struct {
    int stype; const void *pNext; uint32_t ordinal; uint32_t index; uint32_t flags;
    int mode; int priority;
} ze_command_queue_desc_t;
typedef struct { int stype; const void *pNext; uint32_t flags; uint32_t ordinal; }
    ze_device_mem_alloc_desc_t;
typedef struct { int stype; const void *pNext; uint32_t flags; } ze_host_mem_alloc_desc_t;
typedef struct {
    int stype; const void *pNext; int format; size_t inputSize; const uint8_t *pInputModule;
    const char *pBuildFlags; const void *pConstants;
} ze_module_desc_t;
typedef struct { int stype; const void *pNext; uint32_t flags; const char *pKernelName; }
    ze_kernel_desc_t;
typedef struct {
    int stype; void *pNext; uint32_t numKernelArgs; uint32_t requiredGroupSizeX;
    uint32_t requiredGroupSizeY; uint32_t requiredGroupSizeZ; uint32_t requiredNumSubGroups;
    uint32_t requiredSubgroupSize; uint32_t maxSubgroupSize; uint32_t maxNumSubgroups;
    uint32_t localMemSize; uint32_t privateMemSize; uint32_t spillMemSize;
    uint8_t kid[16]; uint8_t mid[16];
} ze_kernel_properties_t;
typedef struct { uint32_t groupCountX; uint32_t groupCountY; uint32_t groupCountZ; }
    ze_group_count_t;

ze_result_t zeInit(uint32_t flags);
ze_result_t zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers);
ze_result_t zeDeviceGet(ze_driver_handle_t hDriver, uint32_t *pCount,
                        ze_device_handle_t *phDevices);
ze_result_t zeDeviceGetProperties(ze_device_handle_t hDevice,
                                  ze_device_properties_t *pProperties);
ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t hDevice,
                                         ze_device_compute_properties_t *pProperties);
ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t *pCount,
                                        ze_device_memory_properties_t *pMemProperties);
ze_result_t zeContextCreate(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
                            ze_context_handle_t *phContext);
ze_result_t zeContextDestroy(ze_context_handle_t hContext);
ze_result_t zeCommandListCreateImmediate(ze_context_handle_t hContext,
                                         ze_device_handle_t hDevice,
                                         const ze_command_queue_desc_t *altdesc,
                                         ze_command_list_handle_t *phCommandList);
ze_result_t zeCommandListDestroy(ze_command_list_handle_t hCommandList);
ze_result_t zeMemAllocShared(ze_context_handle_t hContext,
                             const ze_device_mem_alloc_desc_t *device_desc,
                             const ze_host_mem_alloc_desc_t *host_desc, size_t size,
                             size_t alignment, ze_device_handle_t hDevice, void **pptr);
ze_result_t zeMemFree(ze_context_handle_t hContext, void *ptr);
ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t hCommandList, void *dstptr,
                                          const void *srcptr, size_t size,
                                          ze_event_handle_t hSignalEvent,
                                          uint32_t numWaitEvents,
                                          ze_event_handle_t *phWaitEvents);
ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t hCommandList, void *ptr,
                                          const void *pattern, size_t pattern_size,
                                          size_t size, ze_event_handle_t hSignalEvent,
                                          uint32_t numWaitEvents,
                                          ze_event_handle_t *phWaitEvents);
ze_result_t zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                           const ze_module_desc_t *desc, ze_module_handle_t *phModule,
                           ze_module_build_log_handle_t *phBuildLog);
ze_result_t zeModuleDestroy(ze_module_handle_t hModule);
ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t hModuleBuildLog,
                                      size_t *pSize, char *pBuildLog);
ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t hModuleBuildLog);
ze_result_t zeModuleGetGlobalPointer(ze_module_handle_t hModule, const char *pGlobalName,
                                     size_t *pSize, void **pptr);
ze_result_t zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
                           ze_kernel_handle_t *phKernel);
ze_result_t zeKernelDestroy(ze_kernel_handle_t hKernel);
ze_result_t zeKernelGetProperties(ze_kernel_handle_t hKernel,
                                  ze_kernel_properties_t *pKernelProperties);
ze_result_t zeKernelSetIndirectAccess(ze_kernel_handle_t hKernel, uint32_t flags);
ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t argIndex,
                                     size_t argSize, const void *pArgValue);
ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t groupSizeX,
                                 uint32_t groupSizeY, uint32_t groupSizeZ);
ze_result_t zeKernelSetGlobalOffsetExp(ze_kernel_handle_t hKernel, uint32_t offsetX,
                                       uint32_t offsetY, uint32_t offsetZ);
ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList,
                                            ze_kernel_handle_t hKernel,
                                            const ze_group_count_t *pLaunchFuncArgs,
                                            ze_event_handle_t hSignalEvent,
                                            uint32_t numWaitEvents,
                                            ze_event_handle_t *phWaitEvents);
"""

LIBRARY_CANDIDATES = ("libze_loader.so.1", "/opt/intel/oneapi/lib/libze_loader.so.1")

ZE_RESULT_SUCCESS = 0
_STYPE_DEVICE_PROPERTIES = 0x3
_STYPE_COMPUTE_PROPERTIES = 0x4
_STYPE_MEMORY_PROPERTIES = 0x7
_STYPE_CONTEXT_DESC = 0xD
_STYPE_COMMAND_QUEUE_DESC = 0xE
_STYPE_DEVICE_MEM_ALLOC_DESC = 0x15
_STYPE_HOST_MEM_ALLOC_DESC = 0x16
_STYPE_MODULE_DESC = 0x1B
_STYPE_KERNEL_DESC = 0x1D
_STYPE_KERNEL_PROPERTIES = 0x1E
_MODULE_FORMAT_IL_SPIRV = 0
_QUEUE_MODE_SYNCHRONOUS = 1
_INDIRECT_ACCESS_ALL = 0x1 | 0x2 | 0x4  # host | device | shared
_ALLOC_ALIGNMENT = 256

# ze_result_t names for the messages (the loader has no zeGetErrorName).
RESULT_NAMES = {
    0x1: "ZE_RESULT_NOT_READY",
    0x70000001: "ZE_RESULT_ERROR_DEVICE_LOST",
    0x70000002: "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
    0x70000003: "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
    0x70000004: "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
    0x70000005: "ZE_RESULT_ERROR_MODULE_LINK_FAILURE",
    0x70010000: "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS",
    0x70010001: "ZE_RESULT_ERROR_NOT_AVAILABLE",
    0x70020000: "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE",
    0x78000001: "ZE_RESULT_ERROR_UNINITIALIZED",
    0x78000002: "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
    0x78000003: "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
    0x78000004: "ZE_RESULT_ERROR_INVALID_ARGUMENT",
    0x78000005: "ZE_RESULT_ERROR_INVALID_NULL_HANDLE",
    0x78000007: "ZE_RESULT_ERROR_INVALID_NULL_POINTER",
    0x78000008: "ZE_RESULT_ERROR_INVALID_SIZE",
    0x78000009: "ZE_RESULT_ERROR_UNSUPPORTED_SIZE",
    0x7800000A: "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT",
    0x7800000F: "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY",
    0x78000010: "ZE_RESULT_ERROR_INVALID_GLOBAL_NAME",
    0x78000011: "ZE_RESULT_ERROR_INVALID_KERNEL_NAME",
    0x78000013: "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION",
    0x78000015: "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX",
    0x78000016: "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE",
    0x7FFFFFFE: "ZE_RESULT_ERROR_UNKNOWN",
}

_ffi: cffi.FFI | None = None


def _get_ffi() -> cffi.FFI:
    global _ffi
    if _ffi is None:
        ffi = cffi.FFI()
        ffi.cdef(_CDEF)
        _ffi = ffi
    return _ffi


def result_name(code: int) -> str:
    code &= 0xFFFFFFFF
    return RESULT_NAMES.get(code, f"ze_result_t {code:#x}")


def _check(api: str, code: int, detail: str = "") -> None:
    if code != ZE_RESULT_SUCCESS:
        raise VendorError(api, code & 0xFFFFFFFF, result_name(code), detail)


@dataclass
class ZeKernel:
    name: str
    handle: Any
    num_args: int
    reads_global_offset: bool = False
    # The sub-group size the kernel requires (0: none): spirv.work_group.
    sub_group_size: int = 0


@dataclass
class ZeProgram:
    handle: Any
    kernels: dict[str, ZeKernel] = field(default_factory=dict)
    # Whether the module reads the global work offset: our kernels read their shared window's
    # size (%total_smem_size, %dynamic_smem_size) from it.
    reads_global_offset: bool = False


def _reads_global_offset(spirv: bytes) -> bool:
    """Whether a SPIR-V module decorates a variable BuiltIn GlobalOffset."""
    words = np.frombuffer(spirv[: len(spirv) // 4 * 4], dtype="<u4")
    i = 5  # past the header
    while i < len(words):
        count, opcode = int(words[i]) >> 16, int(words[i]) & 0xFFFF
        if count == 0:
            return False
        # OpDecorate %target BuiltIn(11) GlobalOffset(33)
        if opcode == 71 and count == 4 and words[i + 2] == 11 and words[i + 3] == 33:
            return True
        i += count
    return False


@dataclass(frozen=True)
class ZeDeviceInfo:
    name: str
    compute_units: int
    max_group_size: int
    shared_local_memory: int
    total_memory: int


class LevelZeroBackend(CopiesThroughMemcpy, Backend):
    name = "level_zero"

    def __init__(self, opened: OpenedLibrary, driver: Any, device: Any, info: ZeDeviceInfo,
                 context: Any, command_list: Any) -> None:
        self.ffi = _get_ffi()
        self.lib = opened.lib
        self.library_path = opened.path
        self.driver, self.device, self.info = driver, device, info
        self.context, self.command_list = context, command_list
        self._allocations: set[int] = set()

    # -- opening -----------------------------------------------------------------

    @classmethod
    def open(cls) -> LevelZeroBackend:
        ffi = _get_ffi()
        opened = open_library(ffi, [*env_path("ZMLIR_LEVEL_ZERO_LIBRARY"),
                                    *LIBRARY_CANDIDATES], "Level Zero loader (libze_loader)")
        lib = opened.lib
        code = lib.zeInit(0)
        if code != ZE_RESULT_SUCCESS:
            raise NoDevice(f"no Level Zero device: zeInit: {result_name(code)}")
        count = ffi.new("uint32_t *", 0)
        code = lib.zeDriverGet(count, ffi.NULL)
        if code != ZE_RESULT_SUCCESS:
            raise NoDevice(f"no Level Zero device: zeDriverGet: {result_name(code)}")
        if count[0] == 0:
            raise NoDevice("no Level Zero device: zeDriverGet found 0 drivers")
        drivers = ffi.new("ze_driver_handle_t[]", count[0])
        _check("zeDriverGet", lib.zeDriverGet(count, drivers))
        for index in range(count[0]):
            found = _first_device(ffi, lib, drivers[index])
            if found is not None:
                return cls._create(opened, drivers[index], found)
        raise NoDevice(f"no Level Zero device: {count[0]} driver(s) with 0 devices")

    @classmethod
    def _create(cls, opened: OpenedLibrary, driver: Any, device: Any) -> LevelZeroBackend:
        ffi, lib = _get_ffi(), opened.lib
        info = _device_info(ffi, lib, device)
        desc = ffi.new("ze_context_desc_t *", {"stype": _STYPE_CONTEXT_DESC})
        context = ffi.new("ze_context_handle_t *")
        _check("zeContextCreate", lib.zeContextCreate(driver, desc, context))
        queue_desc = ffi.new("ze_command_queue_desc_t *", {
            "stype": _STYPE_COMMAND_QUEUE_DESC, "ordinal": 0, "index": 0,
            "mode": _QUEUE_MODE_SYNCHRONOUS})
        command_list = ffi.new("ze_command_list_handle_t *")
        code = lib.zeCommandListCreateImmediate(context[0], device, queue_desc, command_list)
        if code != ZE_RESULT_SUCCESS:
            lib.zeContextDestroy(context[0])
            _check("zeCommandListCreateImmediate", code)
        note(f"level_zero backend: {info.name} through {opened.path}")
        return cls(opened, driver, device, info, context[0], command_list[0])

    def close(self) -> None:
        if self.context is None:
            return
        for address in list(self._allocations):
            self.free(address)
        self.lib.zeCommandListDestroy(self.command_list)
        self.lib.zeContextDestroy(self.context)
        self.context = self.command_list = None

    # -- what the device is ------------------------------------------------------

    @property
    def device_name(self) -> str:
        return self.info.name

    @property
    def target(self) -> str:
        return "spirv"

    @property
    def compute_units(self) -> int:
        return max(self.info.compute_units, 1)

    @property
    def local_mem_size(self) -> int:
        return self.info.shared_local_memory

    def total_memory(self) -> int:
        return self.info.total_memory

    # -- memory ------------------------------------------------------------------

    def alloc(self, nbytes: int) -> int:
        ffi = self.ffi
        device_desc = ffi.new("ze_device_mem_alloc_desc_t *",
                              {"stype": _STYPE_DEVICE_MEM_ALLOC_DESC})
        host_desc = ffi.new("ze_host_mem_alloc_desc_t *", {"stype": _STYPE_HOST_MEM_ALLOC_DESC})
        ptr = ffi.new("void **")
        _check("zeMemAllocShared", self.lib.zeMemAllocShared(
            self.context, device_desc, host_desc, max(nbytes, 1), _ALLOC_ALIGNMENT, self.device,
            ptr), f"{nbytes} bytes")
        address = int(ffi.cast("uintptr_t", ptr[0]))
        self._allocations.add(address)
        return address

    def free(self, address: int) -> None:
        _check("zeMemFree", self.lib.zeMemFree(self.context, self.ffi.cast("void *", address)))
        self._allocations.discard(address)

    def _memcpy(self, dst: Any, src: Any, nbytes: int) -> None:
        cast = self.ffi.cast
        _check("zeCommandListAppendMemoryCopy", self.lib.zeCommandListAppendMemoryCopy(
            self.command_list, cast("void *", dst), cast("void *", src), nbytes, self.ffi.NULL,
            0, self.ffi.NULL), f"{nbytes} bytes")

    def memset(self, address: int, byte: int, nbytes: int) -> None:
        if not nbytes:
            return
        pattern = self.ffi.new("uint8_t *", byte & 0xFF)
        _check("zeCommandListAppendMemoryFill", self.lib.zeCommandListAppendMemoryFill(
            self.command_list, self.ffi.cast("void *", address), pattern, 1, nbytes,
            self.ffi.NULL, 0, self.ffi.NULL), f"{nbytes} bytes")

    # -- code --------------------------------------------------------------------

    def load(self, compiled: Any) -> ZeProgram:
        ffi, lib = self.ffi, self.lib
        spirv = ffi.from_buffer(compiled.binary)
        # Intel's GPU compiler reads OpenCL's `-cl-` options (build_options).
        flags = ffi.new("char[]", build_options(compiled.binary).encode())
        desc = ffi.new("ze_module_desc_t *", {
            "stype": _STYPE_MODULE_DESC, "format": _MODULE_FORMAT_IL_SPIRV,
            "inputSize": len(compiled.binary),
            "pInputModule": ffi.cast("const uint8_t *", spirv), "pBuildFlags": flags})
        module = ffi.new("ze_module_handle_t *")
        build_log = ffi.new("ze_module_build_log_handle_t *")
        code = lib.zeModuleCreate(self.context, self.device, desc, module, build_log)
        log = self._take_build_log(build_log[0])
        _check("zeModuleCreate", code, f"build log:\n{log}" if log else "")
        return ZeProgram(module[0], reads_global_offset=_reads_global_offset(compiled.binary))

    def _take_build_log(self, handle: Any) -> str:
        if handle == self.ffi.NULL:
            return ""
        try:
            size = self.ffi.new("size_t *")
            if self.lib.zeModuleBuildLogGetString(handle, size, self.ffi.NULL) != 0:
                return ""
            text = self.ffi.new("char[]", max(size[0], 1))
            if self.lib.zeModuleBuildLogGetString(handle, size, text) != 0:
                return ""
            return self.ffi.string(text).decode(errors="replace").strip()
        finally:
            self.lib.zeModuleBuildLogDestroy(handle)

    def kernel(self, program: ZeProgram, name: str) -> ZeKernel:
        cached = program.kernels.get(name)
        if cached is not None:
            return cached
        ffi, lib = self.ffi, self.lib
        name_c = ffi.new("char[]", name.encode())
        desc = ffi.new("ze_kernel_desc_t *", {"stype": _STYPE_KERNEL_DESC, "pKernelName": name_c})
        handle = ffi.new("ze_kernel_handle_t *")
        _check("zeKernelCreate", lib.zeKernelCreate(program.handle, desc, handle),
               f"kernel {name!r}")
        # Pointers arrive as integers, not pointer arguments: the driver must
        # keep every allocation resident for the kernel (as OpenCL's
        # CL_KERNEL_EXEC_INFO_INDIRECT_*_ACCESS_INTEL).
        _check("zeKernelSetIndirectAccess",
               lib.zeKernelSetIndirectAccess(handle[0], _INDIRECT_ACCESS_ALL))
        props = ffi.new("ze_kernel_properties_t *", {"stype": _STYPE_KERNEL_PROPERTIES})
        _check("zeKernelGetProperties", lib.zeKernelGetProperties(handle[0], props))
        kernel = ZeKernel(name, handle[0], int(props.numKernelArgs), program.reads_global_offset,
                          int(props.requiredSubgroupSize))
        program.kernels[name] = kernel
        return kernel

    def global_variable(self, program: ZeProgram, name: str) -> tuple[int, int]:
        size, ptr = self.ffi.new("size_t *"), self.ffi.new("void **")
        _check("zeModuleGetGlobalPointer",
               self.lib.zeModuleGetGlobalPointer(program.handle, name.encode(), size, ptr),
               f"variable {name!r}")
        return int(self.ffi.cast("uintptr_t", ptr[0])), int(size[0])

    def launch(self, kernel: ZeKernel, info: Any, grid: Sequence[int], block: Sequence[int],
               args: Sequence[Any], shared_bytes: int) -> None:
        ffi, lib = self.ffi, self.lib
        (gx, gy, gz), (bx, by, bz) = dim3("grid", grid), dim3("block", block)
        if bx * by * bz > self.info.max_group_size:
            raise ValueError(f"block ({bx}, {by}, {bz}) has {bx * by * bz} threads; the "
                             f"device allows {self.info.max_group_size}")
        encoded = encode_args(args)
        if len(encoded) + 1 != kernel.num_args:
            raise ValueError(f"kernel {kernel.name!r} takes {kernel.num_args} arguments "
                             f"(with the shared-memory window), launch gives {len(encoded)} + 1")
        window = int(info.static_shared_bytes) + int(shared_bytes)
        if window > self.info.shared_local_memory:
            raise ValueError(f"shared-memory window of {window} bytes exceeds the device's "
                             f"{self.info.shared_local_memory} bytes of shared local memory")
        for index, raw in enumerate(encoded):
            _check("zeKernelSetArgumentValue", lib.zeKernelSetArgumentValue(
                kernel.handle, index, len(raw), ffi.from_buffer(raw)),
                f"kernel {kernel.name!r} argument {index}")
        # The window is a __local argument: a size and no value. It cannot be
        # 0 bytes; a kernel whose window is empty never touches it.
        _check("zeKernelSetArgumentValue", lib.zeKernelSetArgumentValue(
            kernel.handle, len(encoded), max(window, 1), ffi.NULL),
            f"kernel {kernel.name!r} shared-memory window")
        shaped = work_group((bx, by, bz), kernel.sub_group_size, info.linear_blocks)
        if shaped is None:
            raise UnsupportedLaunch(warps_not_rows(kernel.name, (bx, by, bz)))
        (lx, ly, lz), shape = shaped
        _check("zeKernelSetGroupSize", lib.zeKernelSetGroupSize(kernel.handle, lx, ly, lz),
               f"block ({bx}, {by}, {bz})")
        if kernel.reads_global_offset:
            # The window's size is the global offset in x (ZE_experimental_global_offset), and
            # y and z tell a kernel its block's shape where the work-group is not (work_group).
            try:
                set_offset = lib.zeKernelSetGlobalOffsetExp
            except AttributeError:
                raise ValueError(f"kernel {kernel.name!r} reads %total_smem_size or "
                                 "%dynamic_smem_size, which needs zeKernelSetGlobalOffsetExp "
                                 f"(not in {self.library_path})") from None
            _check("zeKernelSetGlobalOffsetExp", set_offset(kernel.handle, window, *shape),
                   f"kernel {kernel.name!r} shared-memory window size")
        groups = ffi.new("ze_group_count_t *", (gx, gy, gz))
        _check("zeCommandListAppendLaunchKernel", lib.zeCommandListAppendLaunchKernel(
            self.command_list, kernel.handle, groups, ffi.NULL, 0, ffi.NULL),
            f"kernel {kernel.name!r}, grid ({gx}, {gy}, {gz}), block ({bx}, {by}, {bz})")

    def synchronize(self) -> None:
        # The immediate command list is synchronous: every append has completed.
        return None


def _first_device(ffi: Any, lib: Any, driver: Any) -> Any | None:
    count = ffi.new("uint32_t *", 0)
    _check("zeDeviceGet", lib.zeDeviceGet(driver, count, ffi.NULL))
    if count[0] == 0:
        return None
    devices = ffi.new("ze_device_handle_t[]", count[0])
    _check("zeDeviceGet", lib.zeDeviceGet(driver, count, devices))
    return devices[0]


def _device_info(ffi: Any, lib: Any, device: Any) -> ZeDeviceInfo:
    props = ffi.new("ze_device_properties_t *", {"stype": _STYPE_DEVICE_PROPERTIES})
    _check("zeDeviceGetProperties", lib.zeDeviceGetProperties(device, props))
    compute = ffi.new("ze_device_compute_properties_t *", {"stype": _STYPE_COMPUTE_PROPERTIES})
    _check("zeDeviceGetComputeProperties", lib.zeDeviceGetComputeProperties(device, compute))
    count = ffi.new("uint32_t *", 0)
    _check("zeDeviceGetMemoryProperties", lib.zeDeviceGetMemoryProperties(device, count,
                                                                          ffi.NULL))
    memories = ffi.new("ze_device_memory_properties_t[]", max(count[0], 1))
    for index in range(count[0]):
        memories[index].stype = _STYPE_MEMORY_PROPERTIES
    if count[0]:
        _check("zeDeviceGetMemoryProperties",
               lib.zeDeviceGetMemoryProperties(device, count, memories))
    # EUs stand in for CUDA's SMs: each runs a few hardware threads of SIMD lanes.
    units = props.numSlices * props.numSubslicesPerSlice * props.numEUsPerSubslice
    return ZeDeviceInfo(
        name=ffi.string(props.name).decode(errors="replace"),
        compute_units=int(units),
        max_group_size=int(compute.maxTotalGroupSize),
        shared_local_memory=int(compute.maxSharedLocalMemory),
        total_memory=int(sum(memories[i].totalSize for i in range(count[0]))) or 8 << 30,
    )
