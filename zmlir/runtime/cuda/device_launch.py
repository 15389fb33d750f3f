"""Device-side launches (CUDA dynamic parallelism): grids a kernel launches.

A module linked with our libcudadevrt stand-in (devrt.py, cudadevrt.ptx)
has a `__zmlir_device_launches` variable. While one of its kernels runs,
it holds the address of the module's launch queue: a header, then records
a thread fills through `cudaGetParameterBufferV2` (the child kernel's
address, grid, block, dynamic shared bytes, and its parameters as
cuLaunchKernel's `extra` lays them out) and marks launched with
`cudaLaunchDeviceV2`; a device-side copy (cudaMemcpyAsync) is a record
too, of kernel COPY. Once the launching grid has ended, the driver
launches the launched records' grids in record order, each with the queue
emptied for its own children, and makes their copies in the same order
(launch.py). CUDA allows this schedule: a CDP2 grid cannot wait for its
children and is complete only with them. A child kernel is found by its
address, a hash of its name (frontend/kernel_address.py), among its
module's kernels."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache
from typing import Any

from zmlir.frontend.kernel_address import kernel_address
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.objects import Module

VARIABLE = "__zmlir_device_launches"
HEADER = 64  # {u32 claimed; u32 capacity; u32 dropped;}, padded
RECORD = 64 + 4096  # {u64 kernel; u32 grid[3], block[3], shared, launched; u64 stream;}, params
CAPACITY = 2048  # NVIDIA's cudaLimitDevRuntimePendingLaunchCount by default
MAX_DEPTH = 24  # NVIDIA's deepest nesting of device-side launches
COPY = 1  # the kernel of a device-side cudaMemcpyAsync's record: no kernel's address
_RECORD_HEAD = struct.Struct("<Q3I3III")
_COPY = struct.Struct("<QQQ")  # its parameters: destination, source, bytes


@dataclass(frozen=True)
class DeviceLaunch:
    kernel: int  # the child's address (kernel_address)
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    params: bytes  # as cuLaunchKernel's `extra` buffer


def attach(device: Any, module: Module) -> None:
    """At load: the address of the module's `__zmlir_device_launches`, where
    it was linked with the device runtime's launch functions."""
    if VARIABLE.encode() not in module.compiled.binary:
        return
    try:
        module.device_launch_var, _ = device.global_variable(module.program, VARIABLE)
    except Exception as err:  # the backend's: it cannot reach the module's variable
        raise CudaError(CUresult.CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
                        f"the device launch queue pointer of {module.ptx_name}: {err}") from None


def begin(device: Any, module: Module) -> None:
    """Before a launch of one of `module`'s kernels: an empty queue."""
    if not module.device_launch_queue:
        module.device_launch_queue = int(device.alloc(HEADER + CAPACITY * RECORD))
        device.copy_to_device(module.device_launch_var,
                              struct.pack("<Q", module.device_launch_queue))
    device.copy_to_device(module.device_launch_queue, struct.pack("<III", 0, CAPACITY, 0))


def collect(device: Any, module: Module) -> tuple[list[DeviceLaunch], int]:
    """After the launch: the grids its threads launched, in record order,
    and how many launches found the queue full."""
    claimed, capacity, dropped = struct.unpack(
        "<III", device.copy_from_device(module.device_launch_queue, 12))
    count = min(claimed, capacity)
    if not count:
        return [], dropped
    data = device.copy_from_device(module.device_launch_queue + HEADER, count * RECORD)
    launches = []
    for i in range(count):
        kernel, gx, gy, gz, bx, by, bz, shared, launched = _RECORD_HEAD.unpack_from(
            data, i * RECORD)
        if launched:  # a buffer taken and never launched launches nothing
            params = bytes(data[i * RECORD + 64:(i + 1) * RECORD])
            launches.append(DeviceLaunch(kernel, (gx, gy, gz), (bx, by, bz), shared, params))
    return launches, dropped


def copy_of(launch: DeviceLaunch) -> tuple[int, int, int] | None:
    """(destination, source, bytes) where the record is a device-side copy
    (cudaMemcpyAsync in a kernel), None where it is a grid."""
    return _COPY.unpack_from(launch.params) if launch.kernel == COPY else None


def kernel_name(module: Module, address: int) -> str | None:
    """The module's kernel at `address`, None where none is."""
    return _names(tuple(module.compiled.kernels)).get(address)


@cache
def _names(kernels: tuple[str, ...]) -> dict[int, str]:
    return {kernel_address(name): name for name in kernels}


def detach(device: Any, module: Module) -> None:
    """At the module's unload: its queue goes."""
    if module.device_launch_queue:
        device.free(module.device_launch_queue)
        module.device_launch_queue = 0
    module.device_launch_var = 0
