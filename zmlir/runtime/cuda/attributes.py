"""Device and function attributes we report: an sm_89-class device (the PTX
we JIT), sized from what the backend device really offers."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.backends.base import MEMORY_MODEL
from zmlir.runtime.cuda.constants import COMPUTE_CAPABILITY

# CU_DEVICE_ATTRIBUTE_MAX of CUDA 13's cuda.h: attributes are 1 to 147, and
# NVIDIA's driver answers any other with CUDA_ERROR_INVALID_VALUE.
DEVICE_ATTRIBUTE_MAX = 148

# CUdevice_attribute -> value; entries that depend on the backend are filled
# in by device_attribute().
_STATIC = {
    1: 1024,  # MAX_THREADS_PER_BLOCK
    2: 1024, 3: 1024, 4: 64,  # MAX_BLOCK_DIM_X/Y/Z
    5: 2**31 - 1, 6: 65535, 7: 65535,  # MAX_GRID_DIM_X/Y/Z
    8: 48 * 1024,  # MAX_SHARED_MEMORY_PER_BLOCK
    9: 64 * 1024,  # TOTAL_CONSTANT_MEMORY
    10: 32,  # WARP_SIZE
    11: 2**31 - 1,  # MAX_PITCH
    12: 65536,  # MAX_REGISTERS_PER_BLOCK
    13: 1_500_000,  # CLOCK_RATE (kHz)
    14: 512,  # TEXTURE_ALIGNMENT
    15: 1,  # GPU_OVERLAP
    17: 0,  # KERNEL_EXEC_TIMEOUT
    18: 1,  # INTEGRATED: device memory is host memory
    19: 1,  # CAN_MAP_HOST_MEMORY
    20: 0,  # COMPUTE_MODE default
    31: 1,  # CONCURRENT_KERNELS
    32: 0,  # ECC_ENABLED
    33: 0, 34: 0, 50: 0,  # PCI bus, device, domain
    35: 0,  # TCC_DRIVER
    36: 1_500_000,  # MEMORY_CLOCK_RATE
    37: 64,  # GLOBAL_MEMORY_BUS_WIDTH
    38: 1 << 20,  # L2_CACHE_SIZE
    39: 2048,  # MAX_THREADS_PER_MULTIPROCESSOR
    40: 1,  # ASYNC_ENGINE_COUNT
    41: 1,  # UNIFIED_ADDRESSING
    75: COMPUTE_CAPABILITY[0], 76: COMPUTE_CAPABILITY[1],
    78: 0,  # STREAM_PRIORITIES_SUPPORTED
    79: 1, 80: 1,  # GLOBAL/LOCAL_L1_CACHE_SUPPORTED
    # An A100's (8.0) shared memory, the most of any 8.x part (an 8.9 Ada has
    # 100/99 KiB; programs tuned to opt in to 163 KiB keep running): 164 KiB
    # per SM, 163 KiB for a block opted in; at most the backend's (device_attribute).
    81: 164 * 1024,  # MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    82: 65536,  # MAX_REGISTERS_PER_MULTIPROCESSOR
    83: 1,  # MANAGED_MEMORY
    84: 0,  # MULTI_GPU_BOARD
    86: 1,  # HOST_NATIVE_ATOMIC_SUPPORTED
    # SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: a vector register holds twice
    # as many f32 lanes as f64 (an H100's or H200's ratio too); numba's
    # cuda.detect() prints it.
    87: 2,
    88: 1,  # PAGEABLE_MEMORY_ACCESS
    89: 1,  # CONCURRENT_MANAGED_ACCESS
    90: 0,  # COMPUTE_PREEMPTION_SUPPORTED
    91: 1,  # CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
    95: 0,  # COOPERATIVE_LAUNCH: per backend, below
    97: 163 * 1024,  # MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    100: 1,  # PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES
    101: 1,  # DIRECT_MANAGED_MEM_ACCESS_FROM_HOST
    106: 32,  # MAX_BLOCKS_PER_MULTIPROCESSOR
    111: 0,  # RESERVED_SHARED_MEMORY_PER_BLOCK
    115: 1,  # MEMORY_POOLS_SUPPORTED: cuMemAllocAsync and cuMemPool* (mempool.py)
    102: 0,  # VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: per backend, below
    103: 0,  # HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: per backend, below
    107: 0,  # GENERIC_COMPRESSION_SUPPORTED: no compressed memory
    119: 0,  # MEMPOOL_SUPPORTED_HANDLE_TYPES: per backend, below
    142: 1,  # HOST_NUMA_MEMORY_POOLS_SUPPORTED: host pools, one host memory (mempool.py)
    144: 1,  # HOST_MEMORY_POOLS_SUPPORTED
}


# The attributes that describe the hardware rather than what our driver does:
# a backend that presents a vendor GPU as it is answers them (the CUDA
# passthrough: NVIDIA's cuBLAS picks its kernels by them). Limits of block
# and grid, shared memory, warp, registers, clock, multiprocessors, PCI
# identity, memory clock and bus, L2, threads per multiprocessor, compute
# capability, f32 to f64 throughput, blocks per multiprocessor, reserved
# shared memory.
HARDWARE = frozenset((1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 16, 33, 34, 36, 37, 38, 39, 50,
                      75, 76, 81, 82, 87, 97, 106, 111))


def device_attribute(attrib: int, device: Any) -> int:
    if attrib in HARDWARE:
        real = device.hardware_attribute(attrib)
        if real is not None:
            return int(real)
    if attrib in MEMORY_MODEL:
        real = device.memory_model().get(attrib)
        if real is not None:
            return int(real)
    if attrib == 16:  # MULTIPROCESSOR_COUNT
        return int(device.compute_units)
    if attrib == 95:  # COOPERATIVE_LAUNCH: where the backend can keep all blocks resident
        return int(bool(device.supports_cooperative))
    if attrib in (102, 103, 107) and device.vendor_vmm:
        # VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_
        # SUPPORTED, GENERIC_COMPRESSION_SUPPORTED: the vendor's, whose calls
        # (cuMemCreate with compression) the application's are.
        return int(device.hardware_attribute(attrib) or 0)
    if attrib == 119 and device.vendor_pools:
        # MEMPOOL_SUPPORTED_HANDLE_TYPES: the vendor's pools, which we hand
        # POSIX file descriptor handles only (mempool_ipc.py).
        return int(device.hardware_attribute(119) or 0) & 0x1
    if attrib in (102, 103, 119):
        # Where the device reaches memory the driver maps (virtual_memory.py):
        # VMM, its allocations' POSIX file descriptors, pools' IPC by them
        # (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1).
        return int(bool(device.virtual_memory))
    if attrib == 120:  # CLUSTER_LAUNCH: where the backend launches thread-block clusters
        return int(bool(device.supports_clusters))
    if attrib in (8, 81, 97):
        return min(_STATIC[attrib], int(device.local_mem_size))
    return _STATIC.get(attrib, 0)


def presented_sm(device: Any) -> int:
    """The compute capability presented as one number (89 for 8.9)."""
    return device_attribute(75, device) * 10 + device_attribute(76, device)


def max_dynamic_shared(fn: Any, device: Any) -> int:
    """CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: what the application
    opted the kernel in to (cuFuncSetAttribute, up to the device's
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN less the static), else NVIDIA's
    default, MAX_SHARED_MEMORY_PER_BLOCK (48 KiB) less the static."""
    default = max(0, device_attribute(8, device) - fn.info.static_shared_bytes)
    return int(fn.attributes.get(8, default))


def max_dynamic_shared_optin(fn: Any, device: Any) -> int:
    """The most a kernel can be opted in to (NVIDIA: larger is CUDA_ERROR_INVALID_VALUE)."""
    return max(0, device_attribute(97, device) - fn.info.static_shared_bytes)


def max_threads(fn: Any) -> int:
    """The most threads a block of `fn` may have: 1024, or less where its
    PTX says `.maxntid`/`.reqntid` (a launch above is CUDA_ERROR_INVALID_VALUE)."""
    bound = fn.info.max_threads
    return min(bound, 1024) if bound > 0 else 1024


# What NUM_REGS says of a kernel without a register ceiling: the backends
# allocate no registers we could count.
DEFAULT_NUM_REGS = 32


def num_regs(fn: Any) -> int:
    """CU_FUNC_ATTRIBUTE_NUM_REGS: our constant, or less where the kernel's
    PTX says `.maxnreg` (a JIT option's ceiling is written as one: the
    frontend's link.with_register_ceiling)."""
    ceiling = fn.info.max_registers
    return min(DEFAULT_NUM_REGS, ceiling) if ceiling > 0 else DEFAULT_NUM_REGS


def function_attribute(attrib: int, fn: Any, device: Any) -> int | None:
    values = {
        0: max_threads(fn),  # MAX_THREADS_PER_BLOCK
        1: fn.info.static_shared_bytes,  # SHARED_SIZE_BYTES
        2: fn.info.const_bytes,  # CONST_SIZE_BYTES
        3: fn.info.local_bytes,  # LOCAL_SIZE_BYTES
        4: num_regs(fn),  # NUM_REGS
        # The PTX's `.target` (CUB's dispatch needs an architecture it was
        # built for); precompiled kernels do not say.
        5: fn.info.ptx_arch or presented_sm(device),  # PTX_VERSION
        6: presented_sm(device),  # BINARY_VERSION
        7: 0,  # CACHE_MODE_CA
        8: max_dynamic_shared(fn, device),  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        9: fn.attributes.get(9, -1),  # PREFERRED_SHARED_MEMORY_CARVEOUT
        # Thread-block clusters (sm_90): the device we present has none, so
        # no kernel requires one or has a cluster size set.
        10: 0,  # CLUSTER_SIZE_MUST_BE_SET
        11: 0,  # REQUIRED_CLUSTER_WIDTH
        12: 0,  # REQUIRED_CLUSTER_HEIGHT
        13: 0,  # REQUIRED_CLUSTER_DEPTH
        14: 0,  # NON_PORTABLE_CLUSTER_SIZE_ALLOWED
        15: 0,  # CLUSTER_SCHEDULING_POLICY_PREFERENCE (default)
    }
    return values.get(attrib)
