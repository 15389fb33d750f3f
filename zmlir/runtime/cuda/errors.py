"""CUresult: every code of CUDA 13's cuda.h, with the names and messages
NVIDIA's driver gives (cuGetErrorName / cuGetErrorString; the messages are
the texts NVIDIA's cudart holds for the same errors, but two: 202 and 916)."""

from __future__ import annotations

from enum import IntEnum


class CUresult(IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NOT_INITIALIZED = 3
    CUDA_ERROR_DEINITIALIZED = 4
    CUDA_ERROR_PROFILER_DISABLED = 5
    CUDA_ERROR_PROFILER_NOT_INITIALIZED = 6
    CUDA_ERROR_PROFILER_ALREADY_STARTED = 7
    CUDA_ERROR_PROFILER_ALREADY_STOPPED = 8
    CUDA_ERROR_STUB_LIBRARY = 34
    CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36
    CUDA_ERROR_DEVICE_UNAVAILABLE = 46
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_INVALID_DEVICE = 101
    CUDA_ERROR_DEVICE_NOT_LICENSED = 102
    CUDA_ERROR_INVALID_IMAGE = 200
    CUDA_ERROR_INVALID_CONTEXT = 201
    CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202
    CUDA_ERROR_MAP_FAILED = 205
    CUDA_ERROR_UNMAP_FAILED = 206
    CUDA_ERROR_ARRAY_IS_MAPPED = 207
    CUDA_ERROR_ALREADY_MAPPED = 208
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209
    CUDA_ERROR_ALREADY_ACQUIRED = 210
    CUDA_ERROR_NOT_MAPPED = 211
    CUDA_ERROR_NOT_MAPPED_AS_ARRAY = 212
    CUDA_ERROR_NOT_MAPPED_AS_POINTER = 213
    CUDA_ERROR_ECC_UNCORRECTABLE = 214
    CUDA_ERROR_UNSUPPORTED_LIMIT = 215
    CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216
    CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217
    CUDA_ERROR_INVALID_PTX = 218
    CUDA_ERROR_INVALID_GRAPHICS_CONTEXT = 219
    CUDA_ERROR_NVLINK_UNCORRECTABLE = 220
    CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222
    CUDA_ERROR_JIT_COMPILATION_DISABLED = 223
    CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224
    CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225
    CUDA_ERROR_CONTAINED = 226
    CUDA_ERROR_INVALID_SOURCE = 300
    CUDA_ERROR_FILE_NOT_FOUND = 301
    CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302
    CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303
    CUDA_ERROR_OPERATING_SYSTEM = 304
    CUDA_ERROR_INVALID_HANDLE = 400
    CUDA_ERROR_ILLEGAL_STATE = 401
    CUDA_ERROR_LOSSY_QUERY = 402
    CUDA_ERROR_NOT_FOUND = 500
    CUDA_ERROR_NOT_READY = 600
    CUDA_ERROR_ILLEGAL_ADDRESS = 700
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701
    CUDA_ERROR_LAUNCH_TIMEOUT = 702
    CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704
    CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705
    CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708
    CUDA_ERROR_CONTEXT_IS_DESTROYED = 709
    CUDA_ERROR_ASSERT = 710
    CUDA_ERROR_TOO_MANY_PEERS = 711
    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712
    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715
    CUDA_ERROR_MISALIGNED_ADDRESS = 716
    CUDA_ERROR_INVALID_ADDRESS_SPACE = 717
    CUDA_ERROR_INVALID_PC = 718
    CUDA_ERROR_LAUNCH_FAILED = 719
    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720
    CUDA_ERROR_TENSOR_MEMORY_LEAK = 721
    CUDA_ERROR_NOT_PERMITTED = 800
    CUDA_ERROR_NOT_SUPPORTED = 801
    CUDA_ERROR_SYSTEM_NOT_READY = 802
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804
    CUDA_ERROR_MPS_CONNECTION_FAILED = 805
    CUDA_ERROR_MPS_RPC_FAILURE = 806
    CUDA_ERROR_MPS_SERVER_NOT_READY = 807
    CUDA_ERROR_MPS_MAX_CLIENTS_REACHED = 808
    CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED = 809
    CUDA_ERROR_MPS_CLIENT_TERMINATED = 810
    CUDA_ERROR_CDP_NOT_SUPPORTED = 811
    CUDA_ERROR_CDP_VERSION_MISMATCH = 812
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901
    CUDA_ERROR_STREAM_CAPTURE_MERGE = 902
    CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903
    CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904
    CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905
    CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906
    CUDA_ERROR_CAPTURED_EVENT = 907
    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908
    CUDA_ERROR_TIMEOUT = 909
    CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910
    CUDA_ERROR_EXTERNAL_DEVICE = 911
    CUDA_ERROR_INVALID_CLUSTER_SIZE = 912
    CUDA_ERROR_FUNCTION_NOT_LOADED = 913
    CUDA_ERROR_INVALID_RESOURCE_TYPE = 914
    CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915
    CUDA_ERROR_KEY_ROTATION = 916
    CUDA_ERROR_UNKNOWN = 999


_MESSAGES = {
    0: "no error",
    1: "invalid argument",
    2: "out of memory",
    3: "initialization error",
    4: "driver shutting down",
    5: "profiler disabled while using external profiling tool",
    6: "profiler not initialized: call cudaProfilerInitialize()",
    7: "profiler already started",
    8: "profiler already stopped",
    34: "CUDA driver is a stub library",
    36: "API call is not supported in the installed CUDA driver",
    46: "CUDA-capable device(s) is/are busy or unavailable",
    100: "no CUDA-capable device is detected",
    101: "invalid device ordinal",
    102: "device doesn't have valid Grid license",
    200: "device kernel image is invalid",
    201: "invalid device context",
    202: "context already current",
    205: "mapping of buffer object failed",
    206: "unmapping of buffer object failed",
    207: "array is mapped",
    208: "resource already mapped",
    209: "no kernel image is available for execution on the device",
    210: "resource already acquired",
    211: "resource not mapped",
    212: "resource not mapped as array",
    213: "resource not mapped as pointer",
    214: "uncorrectable ECC error encountered",
    215: "limit is not supported on this architecture",
    216: "exclusive-thread device already in use by a different thread",
    217: "peer access is not supported between these two devices",
    218: "a PTX JIT compilation failed",
    219: "invalid OpenGL or DirectX context",
    220: "uncorrectable NVLink error detected during the execution",
    221: "PTX JIT compiler library not found",
    222: "the provided PTX was compiled with an unsupported toolchain.",
    223: "PTX JIT compilation was disabled",
    224: "the provided execution affinity is not supported",
    225: "the provided PTX contains unsupported call to cudaDeviceSynchronize",
    226: "Invalid access of peer GPU memory over nvlink or a hardware error",
    300: "device kernel image is invalid",
    301: "file not found",
    302: "shared object symbol not found",
    303: "shared object initialization failed",
    304: "OS call failed or operation not supported on this OS",
    400: "invalid resource handle",
    401: "the operation cannot be performed in the present state",
    402: "attempted introspection would be semantically lossy",
    500: "named symbol not found",
    600: "device not ready",
    700: "an illegal memory access was encountered",
    701: "too many resources requested for launch",
    702: "the launch timed out and was terminated",
    703: "launch uses incompatible texturing mode",
    704: "peer access is already enabled",
    705: "peer access has not been enabled",
    708: "cannot set while device is active in this process",
    709: "context is destroyed",
    710: "device-side assert triggered",
    711: "peer mapping resources exhausted",
    712: "part or all of the requested memory range is already mapped",
    713: "pointer does not correspond to a registered memory region",
    714: "hardware stack error",
    715: "an illegal instruction was encountered",
    716: "misaligned address",
    717: "operation not supported on global/shared address space",
    718: "invalid program counter",
    719: "unspecified launch failure",
    720: "too many blocks in cooperative launch",
    721: "tensor memory not completely freed",
    800: "operation not permitted",
    801: "operation not supported",
    802: "system not yet initialized",
    803: "system has unsupported display driver / cuda driver combination",
    804: "forward compatibility was attempted on non supported HW",
    805: "MPS client failed to connect to the MPS control daemon or the MPS server",
    806: "the remote procedural call between the MPS server and the MPS client failed",
    807: "MPS server is not ready to accept new MPS client requests",
    808: "the hardware resources required to create MPS client have been exhausted",
    809: "the hardware resources required to support device connections have been exhausted",
    810: "the MPS client has been terminated by the server",
    811: ("is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does "
         "not support it"),
    812: "unsupported interaction between different versions of CUDA Dynamic Parallelism",
    900: "operation not permitted when stream is capturing",
    901: "operation failed due to a previous error during capture",
    902: "operation would result in a merge of separate capture sequences",
    903: "capture was not ended in the same stream as it began",
    904: "capturing stream has unjoined work",
    905: "dependency created on uncaptured work in another stream",
    906: "operation would make the legacy stream depend on a capturing blocking stream",
    907: "operation not permitted on an event last recorded in a capturing stream",
    908: "attempt to terminate a thread-local capture sequence from another thread",
    909: "wait operation timed out",
    910: ("the graph update was not performed because it included changes which violated "
         "constraints specific to instantiated graph update"),
    911: "an async error has occured in external entity outside of CUDA",
    912: "a kernel launch error has occurred due to cluster misconfiguration",
    913: "the function handle is not loaded when calling an API that requires a loaded function",
    914: "one or more resources passed in are not valid resource types for the operation",
    915: "one or more resources are insufficient or non-applicable for the operation",
    916: "an error happened during the key rotation sequence",
    999: "unknown error",
}


class CudaError(Exception):
    """Raised inside the driver; the API boundary turns it into its code."""

    def __init__(self, code: CUresult | int, detail: str = "") -> None:
        self.code = code  # any CUresult, also one the real driver returned that we never do
        name = name_of(code) or f"CUresult {int(code)}"
        super().__init__(f"{name}: {detail}" if detail else name)


def name_of(code: int) -> str | None:
    try:
        return CUresult(code).name
    except ValueError:
        return None


def message_of(code: int) -> str | None:
    try:
        return _MESSAGES[CUresult(code)]
    except ValueError:
        return None
