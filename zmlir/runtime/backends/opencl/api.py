"""The OpenCL 3.0 C API subset zmlir uses, declared once for cffi (ABI mode).

Everything that talks to OpenCL goes through `OpenCL` (one loaded ICD loader plus the
`cl_intel_unified_shared_memory` entry points of one platform) and `check`, which turns every
non-zero `cl_int` into an `OpenCLError` carrying the symbolic code name.

The ICD loader is `libOpenCL.so.1` (Debian's ocl-icd, or the Khronos loader that the
`intel-opencl-rt` wheel ships); which vendor library it loads is decided by `icd.py`, which must
run first because loaders read `OCL_ICD_VENDORS` when they enumerate platforms.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import cffi

# Opaque handles are pointers to incomplete structs so that cffi type-checks them apart.
_CDEF = """
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef cl_ulong cl_properties;
typedef cl_bitfield cl_device_type;
typedef cl_uint cl_platform_info;
typedef cl_uint cl_device_info;
typedef intptr_t cl_context_properties;
typedef cl_properties cl_queue_properties;
typedef cl_uint cl_program_build_info;
typedef cl_uint cl_kernel_info;
typedef cl_uint cl_kernel_work_group_info;
typedef cl_uint cl_kernel_sub_group_info;
typedef cl_uint cl_kernel_exec_info;

typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

cl_int clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms);
cl_int clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                         size_t param_value_size, void *param_value,
                         size_t *param_value_size_ret);
cl_int clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type, cl_uint num_entries,
                      cl_device_id *devices, cl_uint *num_devices);
cl_int clGetDeviceInfo(cl_device_id device, cl_device_info param_name, size_t param_value_size,
                       void *param_value, size_t *param_value_size_ret);

cl_context clCreateContext(const cl_context_properties *properties, cl_uint num_devices,
                           const cl_device_id *devices, void *pfn_notify, void *user_data,
                           cl_int *errcode_ret);
cl_int clReleaseContext(cl_context context);
cl_command_queue clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                                    const cl_queue_properties *properties,
                                                    cl_int *errcode_ret);
cl_int clReleaseCommandQueue(cl_command_queue command_queue);
cl_int clFlush(cl_command_queue command_queue);
cl_int clFinish(cl_command_queue command_queue);

cl_int clEnqueueMarkerWithWaitList(cl_command_queue command_queue,
                                   cl_uint num_events_in_wait_list,
                                   const cl_event *event_wait_list, cl_event *event);
cl_int clGetEventInfo(cl_event event, cl_uint param_name, size_t param_value_size,
                      void *param_value, size_t *param_value_size_ret);
cl_int clGetEventProfilingInfo(cl_event event, cl_uint param_name, size_t param_value_size,
                               void *param_value, size_t *param_value_size_ret);
cl_int clWaitForEvents(cl_uint num_events, const cl_event *event_list);
cl_event clCreateUserEvent(cl_context context, cl_int *errcode_ret);
cl_int clSetUserEventStatus(cl_event event, cl_int execution_status);
cl_int clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
                          void (*pfn_notify)(cl_event, cl_int, void *), void *user_data);
cl_int clEnqueueBarrierWithWaitList(cl_command_queue command_queue,
                                    cl_uint num_events_in_wait_list,
                                    const cl_event *event_wait_list, cl_event *event);
cl_int clReleaseEvent(cl_event event);

cl_program clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                     const cl_device_id *device_list, const size_t *lengths,
                                     const unsigned char **binaries, cl_int *binary_status,
                                     cl_int *errcode_ret);
cl_int clGetProgramInfo(cl_program program, cl_uint param_name, size_t param_value_size,
                        void *param_value, size_t *param_value_size_ret);
cl_program clCreateProgramWithIL(cl_context context, const void *il, size_t length,
                                 cl_int *errcode_ret);
cl_int clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
                      const char *options, void *pfn_notify, void *user_data);
cl_int clGetProgramBuildInfo(cl_program program, cl_device_id device,
                             cl_program_build_info param_name, size_t param_value_size,
                             void *param_value, size_t *param_value_size_ret);
cl_int clReleaseProgram(cl_program program);

cl_kernel clCreateKernel(cl_program program, const char *kernel_name, cl_int *errcode_ret);
cl_int clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size,
                       void *param_value, size_t *param_value_size_ret);
cl_int clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                cl_kernel_work_group_info param_name, size_t param_value_size,
                                void *param_value, size_t *param_value_size_ret);
cl_int clGetKernelSubGroupInfo(cl_kernel kernel, cl_device_id device,
                               cl_kernel_sub_group_info param_name, size_t input_value_size,
                               const void *input_value, size_t param_value_size,
                               void *param_value, size_t *param_value_size_ret);
cl_int clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                      const void *arg_value);
cl_int clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param_name,
                           size_t param_value_size, const void *param_value);
cl_int clReleaseKernel(cl_kernel kernel);

cl_int clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                              const size_t *global_work_offset, const size_t *global_work_size,
                              const size_t *local_work_size, cl_uint num_events_in_wait_list,
                              const cl_event *event_wait_list, cl_event *event);

void *clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char *func_name);

/* cl_intel_unified_shared_memory: not exported by loaders, fetched per platform. */
typedef cl_properties cl_mem_properties_intel;
typedef cl_uint cl_mem_info_intel;
typedef void *(*clHostMemAllocINTEL_fn)(cl_context context,
                                        const cl_mem_properties_intel *properties, size_t size,
                                        cl_uint alignment, cl_int *errcode_ret);
typedef void *(*clDeviceMemAllocINTEL_fn)(cl_context context, cl_device_id device,
                                          const cl_mem_properties_intel *properties,
                                          size_t size, cl_uint alignment, cl_int *errcode_ret);
typedef void *(*clSharedMemAllocINTEL_fn)(cl_context context, cl_device_id device,
                                          const cl_mem_properties_intel *properties,
                                          size_t size, cl_uint alignment, cl_int *errcode_ret);
typedef cl_int (*clMemFreeINTEL_fn)(cl_context context, void *ptr);
typedef cl_int (*clMemBlockingFreeINTEL_fn)(cl_context context, void *ptr);
typedef cl_int (*clGetMemAllocInfoINTEL_fn)(cl_context context, const void *ptr,
                                            cl_mem_info_intel param_name,
                                            size_t param_value_size, void *param_value,
                                            size_t *param_value_size_ret);
typedef cl_int (*clEnqueueMemcpyINTEL_fn)(cl_command_queue command_queue, cl_bool blocking,
                                          void *dst_ptr, const void *src_ptr, size_t size,
                                          cl_uint num_events_in_wait_list,
                                          const cl_event *event_wait_list, cl_event *event);
typedef cl_int (*clEnqueueMemFillINTEL_fn)(cl_command_queue command_queue, void *dst_ptr,
                                           const void *pattern, size_t pattern_size,
                                           size_t size, cl_uint num_events_in_wait_list,
                                           const cl_event *event_wait_list, cl_event *event);
/* Intel: the address of a program-scope variable (CUDA __device__/__constant__). */
typedef cl_int (*clGetDeviceGlobalVariablePointerINTEL_fn)(
    cl_device_id device, cl_program program, const char *name, size_t *size_ret,
    void **pointer_ret);
"""

# Enum values from the Khronos headers (CL/cl.h, CL/cl_ext.h); only those we pass.
CL_SUCCESS = 0
CL_PROGRAM_BINARY_SIZES = 0x1165
CL_PROGRAM_KERNEL_NAMES = 0x1168
CL_PROGRAM_BINARIES = 0x1166
CL_TRUE = 1
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF

CL_PLATFORM_NAME = 0x0902
CL_PLATFORM_VENDOR = 0x0903
CL_PLATFORM_VERSION = 0x0901
CL_PLATFORM_EXTENSIONS = 0x0904

CL_DEVICE_TYPE = 0x1000
CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002
CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS = 0x1003
CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004
CL_DEVICE_MAX_WORK_ITEM_SIZES = 0x1005
CL_DEVICE_LOCAL_MEM_SIZE = 0x1023
CL_DEVICE_NAME = 0x102B
CL_DEVICE_VENDOR = 0x102C
CL_DEVICE_VERSION = 0x102F
CL_DEVICE_EXTENSIONS = 0x1030
CL_DEVICE_IL_VERSION = 0x105B
CL_DEVICE_SUB_GROUP_SIZES_INTEL = 0x4108
CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL = 0x4191
CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL = 0x4192

CL_PROGRAM_BUILD_LOG = 0x1183

CL_QUEUE_PROPERTIES = 0x1093
CL_QUEUE_PROFILING_ENABLE = 1 << 1
CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D3
CL_COMPLETE = 0
CL_PROFILING_COMMAND_END = 0x1283

CL_KERNEL_NUM_ARGS = 0x1191
CL_KERNEL_WORK_GROUP_SIZE = 0x11B0
CL_KERNEL_LOCAL_MEM_SIZE = 0x11B2
CL_KERNEL_PRIVATE_MEM_SIZE = 0x11B4
CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE = 0x2033
CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL = 0x410A

CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL = 0x4200
CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL = 0x4201
CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL = 0x4202

CL_MEM_ALLOC_TYPE_INTEL = 0x419A
CL_MEM_TYPE_HOST_INTEL = 0x4197
CL_MEM_TYPE_DEVICE_INTEL = 0x4198
CL_MEM_TYPE_SHARED_INTEL = 0x4199

ERROR_NAMES: dict[int, str] = {
    0: "CL_SUCCESS",
    -1: "CL_DEVICE_NOT_FOUND",
    -2: "CL_DEVICE_NOT_AVAILABLE",
    -3: "CL_COMPILER_NOT_AVAILABLE",
    -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
    -5: "CL_OUT_OF_RESOURCES",
    -6: "CL_OUT_OF_HOST_MEMORY",
    -7: "CL_PROFILING_INFO_NOT_AVAILABLE",
    -8: "CL_MEM_COPY_OVERLAP",
    -9: "CL_IMAGE_FORMAT_MISMATCH",
    -10: "CL_IMAGE_FORMAT_NOT_SUPPORTED",
    -11: "CL_BUILD_PROGRAM_FAILURE",
    -12: "CL_MAP_FAILURE",
    -13: "CL_MISALIGNED_SUB_BUFFER_OFFSET",
    -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
    -15: "CL_COMPILE_PROGRAM_FAILURE",
    -16: "CL_LINKER_NOT_AVAILABLE",
    -17: "CL_LINK_PROGRAM_FAILURE",
    -18: "CL_DEVICE_PARTITION_FAILED",
    -19: "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
    -30: "CL_INVALID_VALUE",
    -31: "CL_INVALID_DEVICE_TYPE",
    -32: "CL_INVALID_PLATFORM",
    -33: "CL_INVALID_DEVICE",
    -34: "CL_INVALID_CONTEXT",
    -35: "CL_INVALID_QUEUE_PROPERTIES",
    -36: "CL_INVALID_COMMAND_QUEUE",
    -37: "CL_INVALID_HOST_PTR",
    -38: "CL_INVALID_MEM_OBJECT",
    -39: "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
    -40: "CL_INVALID_IMAGE_SIZE",
    -41: "CL_INVALID_SAMPLER",
    -42: "CL_INVALID_BINARY",
    -43: "CL_INVALID_BUILD_OPTIONS",
    -44: "CL_INVALID_PROGRAM",
    -45: "CL_INVALID_PROGRAM_EXECUTABLE",
    -46: "CL_INVALID_KERNEL_NAME",
    -47: "CL_INVALID_KERNEL_DEFINITION",
    -48: "CL_INVALID_KERNEL",
    -49: "CL_INVALID_ARG_INDEX",
    -50: "CL_INVALID_ARG_VALUE",
    -51: "CL_INVALID_ARG_SIZE",
    -52: "CL_INVALID_KERNEL_ARGS",
    -53: "CL_INVALID_WORK_DIMENSION",
    -54: "CL_INVALID_WORK_GROUP_SIZE",
    -55: "CL_INVALID_WORK_ITEM_SIZE",
    -56: "CL_INVALID_GLOBAL_OFFSET",
    -57: "CL_INVALID_EVENT_WAIT_LIST",
    -58: "CL_INVALID_EVENT",
    -59: "CL_INVALID_OPERATION",
    -60: "CL_INVALID_GL_OBJECT",
    -61: "CL_INVALID_BUFFER_SIZE",
    -62: "CL_INVALID_MIP_LEVEL",
    -63: "CL_INVALID_GLOBAL_WORK_SIZE",
    -64: "CL_INVALID_PROPERTY",
    -65: "CL_INVALID_IMAGE_DESCRIPTOR",
    -66: "CL_INVALID_COMPILER_OPTIONS",
    -67: "CL_INVALID_LINKER_OPTIONS",
    -68: "CL_INVALID_DEVICE_PARTITION_COUNT",
    -69: "CL_INVALID_PIPE_SIZE",
    -70: "CL_INVALID_DEVICE_QUEUE",
    -71: "CL_INVALID_SPEC_ID",
    -72: "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
    -1001: "CL_PLATFORM_NOT_FOUND_KHR",
}


class OpenCLError(Exception):
    """A failed OpenCL call: `code` is the raw cl_int, `name` its symbolic name."""

    def __init__(self, code: int, name: str, api: str, detail: str = ""):
        self.code = code
        self.name = name
        self.api = api
        self.detail = detail
        message = f"{api} failed: {name} ({code})"
        super().__init__(f"{message}\n{detail}" if detail else message)


class OpenCLLoaderNotFound(RuntimeError):
    """No OpenCL ICD loader (libOpenCL.so.1) could be loaded."""


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"unknown OpenCL error {code}")


def check(api: str, code: int, detail: str = "") -> None:
    """Raise `OpenCLError` unless `code` is CL_SUCCESS."""
    if code != CL_SUCCESS:
        raise OpenCLError(code, error_name(code), api, detail)


ffi = cffi.FFI()
ffi.cdef(_CDEF)


def loader_candidates() -> list[str]:
    """Where the ICD loader is looked for, in order.

    `ZMLIR_OPENCL_LOADER` overrides; then the system's soname lookup (Debian's ocl-icd); then the
    Khronos loader that the `intel-opencl-rt` wheel puts beside the runtime.
    """
    override = os.environ.get("ZMLIR_OPENCL_LOADER")
    if override:
        return [override]
    return ["libOpenCL.so.1", str(Path(sys.prefix) / "lib" / "libOpenCL.so.1")]


@cache
def loader() -> Any:
    """The ICD loader, loaded once per process."""
    tried: list[str] = []
    for candidate in loader_candidates():
        try:
            return ffi.dlopen(candidate)
        except OSError as exc:
            tried.append(f"  {candidate}: {exc}")
    raise OpenCLLoaderNotFound(
        "no OpenCL ICD loader could be loaded (install Debian's ocl-icd-libopencl1 or set "
        "ZMLIR_OPENCL_LOADER); tried:\n" + "\n".join(tried)
    )


@dataclass(frozen=True)
class UsmApi:
    """The `cl_intel_unified_shared_memory` entry points of one platform, as callable pointers."""

    host_alloc: Any
    device_alloc: Any
    shared_alloc: Any
    free: Any
    blocking_free: Any
    alloc_info: Any
    memcpy: Any
    memfill: Any

    @staticmethod
    def for_platform(platform: Any) -> UsmApi:
        lib = loader()

        def entry(name: str) -> Any:
            address = lib.clGetExtensionFunctionAddressForPlatform(platform, name.encode())
            if address == ffi.NULL:
                raise OpenCLError(
                    -59,
                    "CL_INVALID_OPERATION",
                    "clGetExtensionFunctionAddressForPlatform",
                    f"the platform has no {name} (cl_intel_unified_shared_memory missing?)",
                )
            return ffi.cast(f"{name}_fn", address)

        return UsmApi(
            host_alloc=entry("clHostMemAllocINTEL"),
            device_alloc=entry("clDeviceMemAllocINTEL"),
            shared_alloc=entry("clSharedMemAllocINTEL"),
            free=entry("clMemFreeINTEL"),
            blocking_free=entry("clMemBlockingFreeINTEL"),
            alloc_info=entry("clGetMemAllocInfoINTEL"),
            memcpy=entry("clEnqueueMemcpyINTEL"),
            memfill=entry("clEnqueueMemFillINTEL"),
        )


# --- Typed query helpers: OpenCL's two-call "ask the size, then fetch" protocol in one place.


def info_bytes(api: str, getter: Any, *leading: Any) -> bytes:
    """An info query's bytes: asks the size, then fetches (getter(*leading, size, buf, out))."""
    size = ffi.new("size_t *")
    check(api, getter(*leading, 0, ffi.NULL, size))
    if size[0] == 0:
        return b""
    buf = ffi.new("char[]", size[0])
    check(api, getter(*leading, size[0], buf, ffi.NULL))
    return bytes(ffi.buffer(buf, size[0]))


def platform_str(platform: Any, param: int) -> str:
    raw = info_bytes("clGetPlatformInfo", loader().clGetPlatformInfo, platform, param)
    return raw.rstrip(b"\0").decode(errors="replace")


def device_bytes(device: Any, param: int) -> bytes:
    return info_bytes("clGetDeviceInfo", loader().clGetDeviceInfo, device, param)


def device_str(device: Any, param: int) -> str:
    return device_bytes(device, param).rstrip(b"\0").decode(errors="replace")


def device_scalar(device: Any, param: int, ctype: str) -> int:
    value = ffi.new(f"{ctype} *")
    check(
        "clGetDeviceInfo",
        loader().clGetDeviceInfo(device, param, ffi.sizeof(ctype), value, ffi.NULL),
    )
    return int(value[0])


def device_sizes(device: Any, param: int) -> tuple[int, ...]:
    """A `size_t[]` device property (e.g. CL_DEVICE_SUB_GROUP_SIZES_INTEL)."""
    raw = device_bytes(device, param)
    count = len(raw) // ffi.sizeof("size_t")
    array = ffi.cast("size_t *", ffi.from_buffer(raw))
    return tuple(int(array[i]) for i in range(count))


def platforms() -> list[Any]:
    lib = loader()
    count = ffi.new("cl_uint *")
    code = lib.clGetPlatformIDs(0, ffi.NULL, count)
    if code == -1001 or count[0] == 0:  # CL_PLATFORM_NOT_FOUND_KHR: no ICD registered at all
        return []
    check("clGetPlatformIDs", code)
    ids = ffi.new("cl_platform_id[]", count[0])
    check("clGetPlatformIDs", lib.clGetPlatformIDs(count[0], ids, ffi.NULL))
    return [ids[i] for i in range(count[0])]


def devices(platform: Any) -> list[Any]:
    lib = loader()
    count = ffi.new("cl_uint *")
    code = lib.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, ffi.NULL, count)
    if code == -1:  # CL_DEVICE_NOT_FOUND is an empty answer, not a failure
        return []
    check("clGetDeviceIDs", code)
    ids = ffi.new("cl_device_id[]", count[0])
    check(
        "clGetDeviceIDs", lib.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count[0], ids, ffi.NULL)
    )
    return [ids[i] for i in range(count[0])]
