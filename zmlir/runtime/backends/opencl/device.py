"""Run compiled SPIR-V kernels on an OpenCL device with CUDA-style launches and raw pointers.

Device memory is Intel unified shared memory (USM): `Device.alloc` returns a plain integer
address that kernels receive as an i64 argument, convert with inttoptr and do arithmetic on,
exactly as a CUDA kernel does with a device pointer. Because such pointers reach memory without
passing through a kernel argument of pointer type, every kernel is marked as accessing device,
shared and host USM indirectly (CL_KERNEL_EXEC_INFO_INDIRECT_*_ACCESS_INTEL).

    dev = Device.open()
    a = dev.alloc(n * 4)
    dev.copy_to_device(a, host_array)
    kernel = dev.load_spirv(spv).kernel("vadd")
    dev.launch(kernel, grid=(blocks, 1, 1), block=(256, 1, 1), args=[KernelArg.ptr(a), ...])
"""

from __future__ import annotations

import array
import functools
import itertools
import queue
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

import cffi
import numpy as np

from zmlir.runtime import shared_memory
from zmlir.runtime.backends.base import UnsupportedLaunch
from zmlir.runtime.backends.opencl import api as cl
from zmlir.runtime.backends.opencl import icd
from zmlir.runtime.backends.opencl.api import OpenCLError, check, ffi
from zmlir.runtime.slabs import MIN_SLOT, SLAB_BYTES, SlabAllocator
from zmlir.runtime.sorted_addresses import SortedAddresses
from zmlir.targets.spirv import warps_not_rows, work_group
from zmlir.targets.spirv.binary import build_options

# "program": a program's variables; "ipc": another process's allocation
# mapped here (cuIpcOpenMemHandle), neither ours to free.
AllocKind = Literal["device", "shared", "host", "program", "ipc"]
_SPIRV_MAGIC = 0x07230203
_SPIRV_MAGIC_SWAPPED = 0x03022307
Dim3 = tuple[int, int, int]


# The ABI types a compiled kernel's scalar parameters can have. Device pointers are PTR: our
# kernels take them as i64 and convert inside, so they travel as 64-bit integers.
class ArgKind(Enum):
    I8 = "int8"
    U8 = "uint8"
    I16 = "int16"
    U16 = "uint16"
    I32 = "int32"
    U32 = "uint32"
    I64 = "int64"
    U64 = "uint64"
    F16 = "float16"
    F32 = "float32"
    F64 = "float64"
    PTR = "ptr"
    # A by-value aggregate (a struct, `.param .b8 p[K]`): its bytes, which the
    # kernel takes as a byval struct.
    BYTES = "bytes"

    @property
    def dtype(self) -> np.dtype:
        if self is ArgKind.BYTES:
            return np.dtype(np.void)
        return np.dtype(np.uint64 if self is ArgKind.PTR else self.value)


_KIND_BY_DTYPE = {kind.dtype: kind for kind in ArgKind
                  if kind not in (ArgKind.PTR, ArgKind.BYTES)}


@dataclass(frozen=True)
class KernelArg:
    """One kernel argument with its ABI type made explicit."""

    kind: ArgKind
    value: int | float | bytes

    @staticmethod
    def ptr(address: int) -> KernelArg:
        return KernelArg(ArgKind.PTR, address)

    @staticmethod
    def aggregate(data: bytes) -> KernelArg:
        return KernelArg(ArgKind.BYTES, bytes(data))

    def encode(self) -> bytes:
        """The argument's bytes as clSetKernelArg wants them; range errors raise."""
        if isinstance(self.value, bytes):
            if self.kind is not ArgKind.BYTES:
                raise TypeError(f"{self.kind.name} argument given bytes")
            return self.value
        if self.kind is ArgKind.BYTES:
            raise TypeError(f"BYTES argument given {self.value!r}")
        if self.kind is ArgKind.PTR or self.kind.dtype.kind in "iu":
            if isinstance(self.value, (float, np.floating)):
                raise TypeError(f"{self.kind.name} argument given a float: {self.value!r}")
            info = np.iinfo(self.kind.dtype)
            if not info.min <= int(self.value) <= info.max:
                raise OverflowError(f"{self.value} does not fit {self.kind.name}")
            return np.array(int(self.value), dtype=self.kind.dtype).tobytes()
        return np.array(self.value, dtype=self.kind.dtype).tobytes()

    @staticmethod
    def coerce(value: object) -> KernelArg:
        """Accept a KernelArg or a numpy scalar; plain Python numbers are ambiguous and refused."""
        if isinstance(value, KernelArg):
            return value
        if isinstance(value, np.void):
            return KernelArg.aggregate(value.tobytes())
        if isinstance(value, np.generic):
            kind = _KIND_BY_DTYPE.get(value.dtype)
            if kind is None:
                raise TypeError(f"unsupported kernel argument dtype {value.dtype}")
            return KernelArg(kind, value.item())
        raise TypeError(
            f"kernel argument {value!r} ({type(value).__name__}) has no C type: pass a numpy "
            "scalar (np.int32(...), np.float32(...)) or KernelArg.ptr(address) for a pointer"
        )


@dataclass
class Kernel:
    """A kernel of a built program; its USM indirect-access flags are already set."""

    name: str
    handle: Any = field(repr=False)
    num_args: int
    device: Device = field(repr=False)
    # The same kernel compiled for grids of at most `variant_grid_x` blocks in
    # x and 65535 in y and z (the SPIR-V target's grid variant), which
    # launch() takes for such grids.
    variant: Kernel | None = field(default=None, repr=False)
    variant_grid_x: int = 0
    # The sub-group size the kernel requires (32 where its warps are
    # sub-groups; 0: none), which shapes its work-groups (spirv.work_group).
    sub_group_size: int = 0

    def for_grid(self, grid: Sequence[int]) -> Kernel:
        """The kernel a launch of `grid` blocks runs: the grid variant where it serves."""
        if (self.variant is not None and grid[0] <= self.variant_grid_x
                and max(grid[1:], default=1) <= 65535):
            return self.variant
        return self

    def work_group_size(self) -> int:
        """CL_KERNEL_WORK_GROUP_SIZE: the largest block this kernel can be launched with."""
        value = ffi.new("size_t *")
        check(
            "clGetKernelWorkGroupInfo",
            cl.loader().clGetKernelWorkGroupInfo(
                self.handle,
                self.device.device_id,
                cl.CL_KERNEL_WORK_GROUP_SIZE,
                ffi.sizeof("size_t"),
                value,
                ffi.NULL,
            ),
        )
        return int(value[0])

    def compile_sub_group_size(self) -> int:
        """The sub-group size required by the kernel's SPIR-V (0 when it requires none)."""
        return self._sub_group_info(cl.CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, (1, 1, 1))

    def max_sub_group_size(self, block: Dim3) -> int:
        """The sub-group size the runtime picks for a launch with this block shape."""
        return self._sub_group_info(cl.CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, block)

    def _sub_group_info(self, param: int, block: Dim3) -> int:
        local = ffi.new("size_t[3]", list(block))
        value = ffi.new("size_t *")
        check(
            "clGetKernelSubGroupInfo",
            cl.loader().clGetKernelSubGroupInfo(
                self.handle,
                self.device.device_id,
                param,
                ffi.sizeof(local),
                local,
                ffi.sizeof("size_t"),
                value,
                ffi.NULL,
            ),
        )
        return int(value[0])


@dataclass
class Program:
    """A SPIR-V module built for one device."""

    handle: Any = field(repr=False)
    device: Device = field(repr=False)
    build_log: str = ""
    # Its variables' addresses the device lets copies reach (Device.adopt).
    adopted: list[int] = field(default_factory=list, repr=False)
    _kernel_names: frozenset[str] | None = field(default=None, repr=False)

    def binary(self) -> bytes:
        """The device's own binary of this built program (for clCreateProgramWithBinary)."""
        lib = cl.loader()
        size = ffi.new("size_t[1]")
        check("clGetProgramInfo", lib.clGetProgramInfo(self.handle, cl.CL_PROGRAM_BINARY_SIZES,
                                                       ffi.sizeof("size_t"), size, ffi.NULL))
        buffer = ffi.new("unsigned char[]", size[0])
        pointers = ffi.new("unsigned char *[1]", [buffer])
        check("clGetProgramInfo", lib.clGetProgramInfo(self.handle, cl.CL_PROGRAM_BINARIES,
                                                       ffi.sizeof("unsigned char *"), pointers,
                                                       ffi.NULL))
        return bytes(ffi.buffer(buffer, size[0]))

    def global_variable(self, name: str) -> tuple[int, int]:
        """(address, size) of a program-scope variable, through Intel's
        clGetDeviceGlobalVariablePointerINTEL."""
        lib = cl.loader()
        entry = lib.clGetExtensionFunctionAddressForPlatform(self.device.platform_id,
                                                             b"clGetDeviceGlobalVariablePointerINTEL")
        if entry == ffi.NULL:
            raise OpenCLError(-59, "CL_INVALID_OPERATION", "clGetDeviceGlobalVariablePointerINTEL",
                              "the platform cannot expose program-scope variables")
        fn = ffi.cast("clGetDeviceGlobalVariablePointerINTEL_fn", entry)
        size = ffi.new("size_t *")
        pointer = ffi.new("void **")
        check("clGetDeviceGlobalVariablePointerINTEL",
              fn(self.device.device_id, self.handle, name.encode(), size, pointer),
              f"variable {name!r}")
        return int(ffi.cast("uintptr_t", pointer[0])), int(size[0])

    def kernel_names(self) -> frozenset[str]:
        """The names of the program's kernels (CL_PROGRAM_KERNEL_NAMES)."""
        if self._kernel_names is None:
            lib = cl.loader()
            size = ffi.new("size_t *")
            check("clGetProgramInfo", lib.clGetProgramInfo(self.handle, cl.CL_PROGRAM_KERNEL_NAMES,
                                                           0, ffi.NULL, size))
            names = ffi.new("char[]", size[0])
            check("clGetProgramInfo", lib.clGetProgramInfo(self.handle, cl.CL_PROGRAM_KERNEL_NAMES,
                                                           size[0], names, ffi.NULL))
            listed = ffi.string(names).decode()
            self._kernel_names = frozenset(listed.split(";")) if listed else frozenset()
        return self._kernel_names

    def kernel(self, name: str) -> Kernel:
        lib = cl.loader()
        err = ffi.new("cl_int *")
        handle = lib.clCreateKernel(self.handle, name.encode(), err)
        check("clCreateKernel", err[0], f"kernel {name!r}")
        handle = ffi.gc(handle, lib.clReleaseKernel)
        yes = ffi.new("cl_bool *", cl.CL_TRUE)
        # Sizes of the cdata, not of a type named by a string: cffi parses a
        # string it has not seen with every declaration of the API (20 ms,
        # in a program's first launch).
        for param in (
            cl.CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
            cl.CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL,
            cl.CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL,
        ):
            check(
                "clSetKernelExecInfo",
                lib.clSetKernelExecInfo(handle, param, ffi.sizeof(ffi.typeof(yes).item), yes),
            )
        num_args = ffi.new("cl_uint *")
        check(
            "clGetKernelInfo",
            lib.clGetKernelInfo(
                handle, cl.CL_KERNEL_NUM_ARGS, ffi.sizeof(ffi.typeof(num_args).item), num_args,
                ffi.NULL
            ),
        )
        kernel = Kernel(name=name, handle=handle, num_args=int(num_args[0]), device=self.device)
        if self.device.sub_group_sizes:  # cl_intel_required_subgroup_size
            kernel.sub_group_size = kernel.compile_sub_group_size()
        return kernel


@dataclass(frozen=True)
class Allocation:
    address: int
    nbytes: int
    kind: AllocKind


@dataclass
class Device:
    """One OpenCL device that accepts SPIR-V, with its context, in-order queue and USM API."""

    name: str
    platform_name: str
    il_version: str
    max_work_group_size: int
    max_work_item_sizes: tuple[int, int, int]
    local_mem_size: int
    sub_group_sizes: tuple[int, ...]
    alloc_kind: AllocKind
    compute_units: int
    platform_id: Any = field(repr=False)
    device_id: Any = field(repr=False)
    context: Any = field(repr=False)
    queue: Any = field(repr=False)
    usm: cl.UsmApi = field(repr=False)
    _allocations: dict[int, Allocation] = field(default_factory=dict, repr=False)
    _sorted_addresses: SortedAddresses = field(default_factory=SortedAddresses, repr=False)
    _slabs: SlabAllocator = field(init=False, repr=False)
    # Allocations (slabs as a whole) made shareable, by base (share()), and
    # shared memory mapped here, by address: (mapping, length, over a reservation).
    _shared: dict[int, shared_memory.SharedRange] = field(default_factory=dict, repr=False)
    _mapped: dict[int, tuple[int, int, bool]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._slabs = SlabAllocator(self._usm_alloc, self._usm_free)

    # --- lifetime ---------------------------------------------------------------------------

    @staticmethod
    def open(alloc_kind: AllocKind = "device") -> Device:
        """Open the first device whose CL_DEVICE_IL_VERSION lists SPIR-V.

        `alloc_kind` picks the USM flavour behind `alloc` (all give real addresses on a CPU
        device; "device" matches cudaMalloc's semantics).
        """
        runtime = icd.ensure_icd()
        lib = cl.loader()
        seen: list[str] = []
        for platform in cl.platforms():
            platform_name = cl.platform_str(platform, cl.CL_PLATFORM_NAME)
            for device in cl.devices(platform):
                name = cl.device_str(device, cl.CL_DEVICE_NAME)
                il = cl.device_str(device, cl.CL_DEVICE_IL_VERSION)
                seen.append(f"  {platform_name} / {name}: IL {il or '(none)'}")
                if "SPIR-V" in il:
                    return Device._create(
                        lib, platform, platform_name, device, name, il, alloc_kind
                    )
        listing = "\n".join(seen) or "  (no OpenCL platforms)"
        raise RuntimeError(
            f"no OpenCL device accepts SPIR-V (OCL_ICD_VENDORS={runtime.icd_dir}; was OpenCL "
            f"already used in this process before zmlir registered the runtime?); found:\n"
            f"{listing}"
        )

    @staticmethod
    def _create(
        lib: Any,
        platform: Any,
        platform_name: str,
        device: Any,
        name: str,
        il: str,
        alloc_kind: AllocKind,
    ) -> Device:
        err = ffi.new("cl_int *")
        devices = ffi.new("cl_device_id[1]", [device])
        context = lib.clCreateContext(ffi.NULL, 1, devices, ffi.NULL, ffi.NULL, err)
        check("clCreateContext", err[0])
        # In order (CUDA's one stream of work); profiled, for the markers'
        # timestamps (events: marker()).
        properties = ffi.new("cl_queue_properties[]",
                             [cl.CL_QUEUE_PROPERTIES, cl.CL_QUEUE_PROFILING_ENABLE, 0])
        queue = lib.clCreateCommandQueueWithProperties(context, device, properties, err)
        if err[0] != cl.CL_SUCCESS:
            lib.clReleaseContext(context)
            check("clCreateCommandQueueWithProperties", err[0])
        sizes = cl.device_sizes(device, cl.CL_DEVICE_MAX_WORK_ITEM_SIZES)
        try:
            sub_groups = cl.device_sizes(device, cl.CL_DEVICE_SUB_GROUP_SIZES_INTEL)
        except OpenCLError:
            sub_groups = ()  # not an Intel device: no cl_intel_required_subgroup_size
        return Device(
            name=name,
            platform_name=platform_name,
            il_version=il,
            max_work_group_size=cl.device_scalar(
                device, cl.CL_DEVICE_MAX_WORK_GROUP_SIZE, "size_t"
            ),
            max_work_item_sizes=(sizes[0], sizes[1], sizes[2]),
            local_mem_size=cl.device_scalar(device, cl.CL_DEVICE_LOCAL_MEM_SIZE, "cl_ulong"),
            sub_group_sizes=sub_groups,
            alloc_kind=alloc_kind,
            compute_units=cl.device_scalar(device, cl.CL_DEVICE_MAX_COMPUTE_UNITS, "cl_uint"),
            platform_id=platform,
            device_id=device,
            context=context,
            queue=queue,
            usm=cl.UsmApi.for_platform(platform),
        )

    def close(self) -> None:
        """Free every live allocation and release the queue and context (idempotent)."""
        if self.context is None:
            return
        lib = cl.loader()
        lib.clFinish(self.queue)
        self._slabs.release_all()
        for address in list(self._mapped):
            self.unmap_shared(address)
        for address, allocation in list(self._allocations.items()):
            if allocation.kind == "reserved":
                self.release(address)
            elif allocation.kind != "program":
                self._usm_free(address)
        lib.clReleaseCommandQueue(self.queue)
        lib.clReleaseContext(self.context)
        self.queue = None
        self.context = None

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- memory -----------------------------------------------------------------------------

    def alloc(self, nbytes: int, alignment: int = 0) -> int:
        """A USM allocation's address. Zero bytes gives 0 (NULL), as cudaMalloc does.
        Small ones are slots of larger USM allocations (runtime/slabs.py)."""
        if nbytes < 0:
            raise ValueError(f"negative allocation size {nbytes}")
        if nbytes == 0:
            return 0
        if SlabAllocator.serves(nbytes) and alignment <= MIN_SLOT:
            return self._slabs.alloc(nbytes)
        return self._usm_alloc(nbytes, alignment, whole_pages=True)

    def _usm_alloc(self, nbytes: int, alignment: int, whole_pages: bool = False) -> int:
        """A USM allocation, known to `allocation_at` (a slab as a whole).
        `whole_pages`: it takes whole pages of its own, so that share() can
        make them shared memory in place without touching a neighbour
        (Intel's CPU runtime hands out whole pages for such sizes anyway)."""
        held = shared_memory.page_ceil(nbytes) if whole_pages else nbytes
        if whole_pages:
            alignment = max(alignment, shared_memory.PAGE)
        err = ffi.new("cl_int *")
        if self.alloc_kind == "device":
            ptr = self.usm.device_alloc(
                self.context, self.device_id, ffi.NULL, held, alignment, err
            )
        elif self.alloc_kind == "shared":
            ptr = self.usm.shared_alloc(
                self.context, self.device_id, ffi.NULL, held, alignment, err
            )
        else:
            ptr = self.usm.host_alloc(self.context, ffi.NULL, held, alignment, err)
        check(f"cl{self.alloc_kind.capitalize()}MemAllocINTEL", err[0], f"{nbytes} bytes")
        address = int(ffi.cast("uintptr_t", ptr))
        if address == 0:
            raise OpenCLError(-6, "CL_OUT_OF_HOST_MEMORY", "USM alloc", f"{nbytes} bytes: NULL")
        self._allocations[address] = Allocation(address, nbytes, self.alloc_kind)
        self._sorted_addresses.add(address)
        return address

    def _usm_free(self, address: int) -> None:
        shared = self._shared.pop(address, None)
        if shared is not None:  # exported: its next owner shares nothing
            shared_memory.unshare(shared)
        check(
            "clMemBlockingFreeINTEL",
            self.usm.blocking_free(self.context, ffi.cast("void *", address)),
        )
        del self._allocations[address]
        self._sorted_addresses.discard(address)

    def free(self, address: int) -> None:
        """Free an allocation from `alloc`; waits for queued work that may still use it."""
        if address == 0:
            return
        slot = self._slabs.owns(address)
        if not slot:
            found = self._allocations.get(address)
            if (found is None or found.kind in ("program", "ipc", "reserved")
                    or self._slabs.is_slab(address)):
                raise ValueError(f"free of {address:#x}, which is not a live allocation start")
        # Launches return while their kernels run, and a kernel still running
        # may use the memory: a slot goes to the next allocation at once, and
        # clMemBlockingFreeINTEL waits only for kernels the runtime knows to
        # use it (ours take pointers as integers).
        self.synchronize()
        if slot:
            self._slabs.free(address)
        else:
            self._usm_free(address)

    def disown(self, address: int) -> None:
        """Undoes adopt, when the program owning that memory is released."""
        found = self._allocations.get(address)
        if found is not None and found.kind == "program":
            del self._allocations[address]
            self._sorted_addresses.discard(address)

    def adopt(self, address: int, nbytes: int) -> None:
        """Lets copies reach memory the device owns but we did not allocate
        (a program's global variables); it is never freed by us."""
        if address in self._allocations:
            return
        self._allocations[address] = Allocation(address, nbytes, "program")
        self._sorted_addresses.add(address)

    # --- memory other processes map (CUDA IPC) -----------------------------------------------

    def share(self, address: int) -> tuple[int, int, int]:
        """Makes the live allocation starting at `address` memory another
        process can map (runtime/shared_memory.py), at the same address:
        (memfd, the allocation's offset in it, its size). A slot makes its
        whole slab shared; the pages stay shared until the allocation (the
        slab) is freed. Waits for the queue: nothing may write them meanwhile."""
        if self._slabs.owns(address):
            region = address & ~(SLAB_BYTES - 1)
            slot = self._slabs.slot_holding(address)
            assert slot is not None
            nbytes, region_bytes = slot[1], SLAB_BYTES
        else:
            found = self._allocations.get(address)
            if found is None or found.kind in ("program", "ipc", "reserved"):
                raise ValueError(f"{address:#x} starts no live allocation")
            region, nbytes = address, found.nbytes
            region_bytes = shared_memory.page_ceil(nbytes)
        shared = self._shared.get(region)
        if shared is None:
            self.synchronize()
            shared = shared_memory.share_in_place(region, region_bytes)
            self._shared[region] = shared
        return shared.fd, address - region, nbytes

    def map_shared(self, fd: int, offset: int, nbytes: int, at: int = 0) -> int:
        """Maps shared memory here, a memfd's [offset, offset + nbytes) (another
        process's allocation, share(); CUDA's virtual memory): its address,
        which copies and kernels reach until unmap_shared. `at`: over pages
        of a reservation there (shared_memory.reserve; whole pages), which
        unmap_shared gives back to it."""
        if at:  # copies know the reservation already
            shared_memory.map_fd_at(at, fd, offset, nbytes)
            self._mapped[at] = (at, nbytes, True)
            return at
        address, base, length = shared_memory.map_fd(fd, offset, nbytes)
        self._mapped[address] = (base, length, False)
        self._allocations[address] = Allocation(address, nbytes, "ipc")
        self._sorted_addresses.add(address)
        return address

    def unmap_shared(self, address: int) -> None:
        """Undoes map_shared, once no queued work still reaches the memory."""
        base, length, reserved = self._mapped.pop(address)
        self.synchronize()
        if reserved:
            shared_memory.unmap_to_reserved(base, length)
            return
        del self._allocations[address]
        self._sorted_addresses.discard(address)
        shared_memory.unmap(base, length)

    def reserve(self, nbytes: int, alignment: int, hint: int = 0) -> int:
        """Address space for map_shared(at=) (shared_memory.reserve), which
        copies may reach as a whole: the driver lets them reach only what it
        mapped there and made accessible."""
        base = shared_memory.reserve(nbytes, alignment, hint)
        self._allocations[base] = Allocation(base, nbytes, "reserved")
        self._sorted_addresses.add(base)
        return base

    def release(self, base: int) -> None:
        """Frees a reservation of reserve(), nothing mapped there any more."""
        found = self._allocations.pop(base)
        assert found.kind == "reserved", found
        self._sorted_addresses.discard(base)
        shared_memory.unmap(base, found.nbytes)

    def allocation_at(self, address: int, nbytes: int) -> Allocation:
        """The live allocation holding [address, address + nbytes); raises if there is none.

        On a CPU device a stray copy would corrupt or crash this very process, so every host
        transfer is checked against the allocations we handed out.
        """
        base = self._sorted_addresses.floor(address)
        found = self._allocations[base] if base is not None else None
        if found is not None and self._slabs.is_slab(found.address):
            # Only a slab's live slots are anyone's memory.
            slot = self._slabs.slot_holding(address)
            found = Allocation(slot[0], slot[1], found.kind) if slot else None
        if found is not None and address + nbytes <= found.address + found.nbytes:
            return found
        raise ValueError(f"[{address:#x}, +{nbytes}) is not inside one live device allocation")

    def copy_to_device(
        self, address: int, data: bytes | bytearray | memoryview | np.ndarray
    ) -> None:
        """Copy host bytes (a numpy array's buffer in C order) to device memory; blocking."""
        src = _host_bytes(data)
        if len(src) == 0:
            return
        self.allocation_at(address, len(src))
        check(
            "clEnqueueMemcpyINTEL",
            self.usm.memcpy(
                self.queue,
                cl.CL_TRUE,
                ffi.cast("void *", address),
                ffi.from_buffer(src),
                len(src),
                0,
                ffi.NULL,
                ffi.NULL,
            ),
        )

    def copy_from_device(self, address: int, nbytes: int) -> bytes:
        """`nbytes` bytes of device memory; blocking."""
        out = bytearray(nbytes)
        self._read(address, memoryview(out))
        return bytes(out)

    def copy_into(self, address: int, out: np.ndarray) -> np.ndarray:
        """Fill a C-contiguous numpy array from device memory; returns it."""
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("copy_into needs a writeable C-contiguous array")
        self._read(address, memoryview(out).cast("B"))
        return out

    def _read(self, address: int, dst: memoryview) -> None:
        if dst.nbytes == 0:
            return
        self.allocation_at(address, dst.nbytes)
        check(
            "clEnqueueMemcpyINTEL",
            self.usm.memcpy(
                self.queue,
                cl.CL_TRUE,
                ffi.from_buffer(dst),
                ffi.cast("void *", address),
                dst.nbytes,
                0,
                ffi.NULL,
                ffi.NULL,
            ),
        )

    def memset(self, address: int, byte: int, nbytes: int) -> None:
        """Set `nbytes` bytes to `byte` (cudaMemset semantics); blocking."""
        if not 0 <= byte <= 255:
            raise ValueError(f"memset byte {byte} is not in 0..255")
        if nbytes == 0:
            return
        self.allocation_at(address, nbytes)
        pattern = ffi.new("unsigned char *", byte)
        lib = cl.loader()
        check(
            "clEnqueueMemFillINTEL",
            self.usm.memfill(
                self.queue, ffi.cast("void *", address), pattern, 1, nbytes, 0, ffi.NULL, ffi.NULL
            ),
        )
        check("clFinish", lib.clFinish(self.queue))

    def fill_word(self, address: int, value: int) -> None:
        """Enqueues writing the 64-bit `value` at `address` (any memory the
        device reaches), after the work before it; submitted, not waited for."""
        pattern = ffi.new("unsigned long long *", value)  # copied at the call
        check("clEnqueueMemFillINTEL", self.usm.memfill(
            self.queue, ffi.cast("void *", address), pattern, 8, 8, 0, ffi.NULL, ffi.NULL))
        check("clFlush", cl.loader().clFlush(self.queue))

    # --- programs and launches --------------------------------------------------------------

    def load_spirv(self, spirv: bytes, options: str = "") -> Program:
        """Create and build a program from a SPIR-V binary; the build log is in the error.
        A module marked so is built with its f32 subnormals flushed (build_options)."""
        check_spirv(spirv, self.spirv_versions)
        options = build_options(spirv, options)
        lib = cl.loader()
        err = ffi.new("cl_int *")
        handle = lib.clCreateProgramWithIL(self.context, ffi.from_buffer(spirv), len(spirv), err)
        check("clCreateProgramWithIL", err[0])
        handle = ffi.gc(handle, lib.clReleaseProgram)
        devices = ffi.new("cl_device_id[1]", [self.device_id])
        code = lib.clBuildProgram(handle, 1, devices, options.encode(), ffi.NULL, ffi.NULL)
        log = self._build_log(handle)
        check("clBuildProgram", code, f"build log:\n{log}" if log else "(empty build log)")
        return Program(handle=handle, device=self, build_log=log)

    def load_binary(self, binary: bytes, options: str = "") -> Program:
        """Create and build a program from this device's own binary (see Program.binary)."""
        lib = cl.loader()
        err = ffi.new("cl_int *")
        status = ffi.new("cl_int *")
        devices = ffi.new("cl_device_id[1]", [self.device_id])
        lengths = ffi.new("size_t[1]", [len(binary)])
        data = ffi.from_buffer(binary)
        pointers = ffi.new("unsigned char *[1]", [ffi.cast("unsigned char *", data)])
        handle = lib.clCreateProgramWithBinary(self.context, 1, devices, lengths,
                                               ffi.cast("const unsigned char **", pointers),
                                               status, err)
        check("clCreateProgramWithBinary", err[0])
        check("clCreateProgramWithBinary", status[0], "binary status")
        handle = ffi.gc(handle, lib.clReleaseProgram)
        code = lib.clBuildProgram(handle, 1, devices, options.encode(), ffi.NULL, ffi.NULL)
        log = self._build_log(handle)
        check("clBuildProgram", code, f"build log:\n{log}" if log else "(empty build log)")
        return Program(handle=handle, device=self, build_log=log)

    @property
    def spirv_versions(self) -> tuple[tuple[int, int], ...]:
        """The SPIR-V versions CL_DEVICE_IL_VERSION lists, e.g. ((1, 0), ..., (1, 4))."""
        return tuple(
            (int(major), int(minor))
            for major, minor in re.findall(r"SPIR-V_(\d+)\.(\d+)", self.il_version)
        )

    def _build_log(self, program: Any) -> str:
        raw = cl.info_bytes(
            "clGetProgramBuildInfo",
            cl.loader().clGetProgramBuildInfo,
            program,
            self.device_id,
            cl.CL_PROGRAM_BUILD_LOG,
        )
        return raw.rstrip(b"\0").decode(errors="replace").strip()

    def launch(
        self,
        kernel: Kernel,
        grid: Sequence[int],
        block: Sequence[int],
        args: Iterable[KernelArg | np.generic],
        shared_bytes: int = 0,
        shared_window: int | None = None,
        watched: bool = False,
        linear_blocks: bool = False,
    ) -> Any:
        """Launch `kernel` over `grid` blocks of `block` threads (CUDA semantics).

        The OpenCL global size is grid*block per dimension and the local size is block.
        `shared_window` is the static shared-memory size in bytes that the compiled kernel takes
        as a trailing `__local` argument (None: the kernel has no such argument);
        `shared_bytes` is CUDA's dynamic shared memory, which lives in the same window after the
        static part. The trailing argument is passed iff the kernel has it, sized
        shared_window + shared_bytes.

        Arguments are bound to the kernel object itself (clSetKernelArg), so one Kernel must
        not be launched from two threads at once.

        The launch waits for the kernel, unless `watched`: then it returns the launch's
        cl_event, for the caller to watch and release (the driver: fastpath.c), while the
        kernel runs.

        `linear_blocks`: the kernel has a form for blocks its warps are not rows of
        (KernelInfo.linear_blocks); without one such a block is UnsupportedLaunch.
        """
        grid3, block3 = _dim3("grid", grid), _dim3("block", block)
        threads = block3[0] * block3[1] * block3[2]
        if threads > self.max_work_group_size:
            raise ValueError(
                f"block {block3} has {threads} threads; the device allows "
                f"{self.max_work_group_size}"
            )
        if shared_bytes < 0 or (shared_window is not None and shared_window < 0):
            raise ValueError("shared memory sizes must be non-negative")
        if shared_window is None and shared_bytes > 0:
            raise ValueError(
                f"{shared_bytes} bytes of dynamic shared memory asked for, but the kernel has "
                "no shared-memory window argument (shared_window=None)"
            )
        kernel = kernel.for_grid(grid3)
        encoded = [KernelArg.coerce(arg).encode() for arg in args]
        expected = len(encoded) + (shared_window is not None)
        if expected != kernel.num_args:
            raise ValueError(
                f"kernel {kernel.name!r} takes {kernel.num_args} arguments, launch gives "
                f"{len(encoded)}"
                + (" + the shared-memory window" if shared_window is not None else "")
            )
        lib = cl.loader()
        for index, value in enumerate(encoded):
            check(
                "clSetKernelArg",
                lib.clSetKernelArg(kernel.handle, index, len(value), ffi.from_buffer(value)),
                f"kernel {kernel.name!r} argument {index}",
            )
        window = 0
        if shared_window is not None:
            window = shared_window + shared_bytes
            if window > self.local_mem_size:
                raise ValueError(
                    f"shared-memory window of {window} bytes exceeds the device's "
                    f"{self.local_mem_size} bytes of local memory"
                )
            # A __local argument cannot be 0 bytes (CL_INVALID_ARG_SIZE); a kernel whose window
            # is empty never touches it, so one byte stands in.
            check(
                "clSetKernelArg",
                lib.clSetKernelArg(kernel.handle, len(encoded), max(window, 1), ffi.NULL),
                f"kernel {kernel.name!r} shared-memory window",
            )
        shaped = work_group(block3, kernel.sub_group_size, linear_blocks)
        if shaped is None:
            raise UnsupportedLaunch(warps_not_rows(kernel.name, block3))
        local, shape = shaped
        global_size = ffi.new(_SIZE3, [g * b for g, b in zip(grid3, local, strict=True)])
        local_size = ffi.new(_SIZE3, local)
        # The window's size is the global work offset in x: kernels read %total_smem_size and
        # %dynamic_smem_size with get_global_offset(0) (they read no global ids); y and z tell
        # a kernel its block's shape where the work-group is not (work_group).
        offset = ffi.new(_SIZE3, (window, *shape))
        event = ffi.new(_EVENT_OUT) if watched else ffi.NULL
        check(
            "clEnqueueNDRangeKernel",
            lib.clEnqueueNDRangeKernel(
                self.queue,
                kernel.handle,
                3,
                offset,
                global_size,
                local_size,
                0,
                ffi.NULL,
                event,
            ),
            f"kernel {kernel.name!r}, grid {grid3}, block {block3}",
        )
        if watched:
            return event[0]
        self.synchronize()
        return None

    def synchronize(self) -> None:
        check("clFinish", cl.loader().clFinish(self.queue))

    # -- markers (CUDA events) ------------------------------------------------------
    def marker(self) -> Any:
        """A marker after the work enqueued so far, submitted, not waited for:
        its cl_event completes once that work has (release it with
        release_marker)."""
        lib = cl.loader()
        event = ffi.new("cl_event *")
        check("clEnqueueMarkerWithWaitList",
              lib.clEnqueueMarkerWithWaitList(self.queue, 0, ffi.NULL, event))
        check("clFlush", lib.clFlush(self.queue))
        return event[0]

    @staticmethod
    def marker_reached(marker: Any) -> bool:
        status = ffi.new("cl_int *")
        check("clGetEventInfo", cl.loader().clGetEventInfo(
            marker, cl.CL_EVENT_COMMAND_EXECUTION_STATUS, ffi.sizeof("cl_int"), status, ffi.NULL))
        if status[0] < 0:  # the work before it failed
            check("the work before an event", status[0])
        return status[0] == cl.CL_COMPLETE

    @staticmethod
    def wait_marker(marker: Any) -> None:
        """Waits until a marker is reached, looking every 10 us, doubling up
        to 0.5 ms: a thread in clWaitForEvents runs the queue's work itself
        on Intel's CPU runtime, later kernels too, and one of those may wait
        for what this thread does next (another stream's kernel waiting for
        the host)."""
        pause = 1e-5
        while not Device.marker_reached(marker):
            time.sleep(pause)
            pause = min(2 * pause, 5e-4)

    @staticmethod
    def marker_ns(marker: Any) -> int:
        """The device's time, in ns, at which a reached marker completed."""
        value = ffi.new("cl_ulong *")
        check("clGetEventProfilingInfo", cl.loader().clGetEventProfilingInfo(
            marker, cl.CL_PROFILING_COMMAND_END, ffi.sizeof("cl_ulong"), value, ffi.NULL))
        return int(value[0])

    @staticmethod
    def release_marker(marker: Any) -> None:
        check("clReleaseEvent", cl.loader().clReleaseEvent(marker))

    # -- host functions (cuLaunchHostFunc) ------------------------------------------
    def host_function(self, call: Callable[[], None]) -> None:
        """`call()` from a thread of ours once the work enqueued so far is
        done; the work enqueued after waits for its return (the queue's
        barrier waits for a user event), as a CUDA stream's work waits for a
        host function. Never in the caller's thread: a function may wait
        for what its caller does next."""
        lib = cl.loader()
        err = ffi.new("cl_int *")
        gate = lib.clCreateUserEvent(self.context, err)
        check("clCreateUserEvent", err[0])
        reached = ffi.new("cl_event *")
        check("clEnqueueMarkerWithWaitList",
              lib.clEnqueueMarkerWithWaitList(self.queue, 0, ffi.NULL, reached))
        check("clEnqueueBarrierWithWaitList",
              lib.clEnqueueBarrierWithWaitList(self.queue, 1, ffi.new("cl_event[1]", [gate]),
                                               ffi.NULL))
        key = next(_HOST_CALL_KEYS)
        _HOST_CALLS[key] = (call, gate, reached[0])  # both released once it has run
        _host_call_thread()
        check("clSetEventCallback", lib.clSetEventCallback(
            reached[0], cl.CL_COMPLETE, _host_call_reached, ffi.cast("void *", key)))
        check("clFlush", lib.clFlush(self.queue))


# Host functions waiting for their marker (Device.host_function): key -> (the
# call, the user event the queue's later work waits for, the marker); the
# runtime's callback hands their keys to one thread of ours, which calls them
# in order.
_HOST_CALLS: dict[int, tuple[Callable[[], None], Any, Any]] = {}
_HOST_CALL_KEYS = itertools.count(1)
_HOST_CALLS_READY: queue.SimpleQueue[int] = queue.SimpleQueue()


@functools.cache
def _host_call_thread() -> int:
    """The thread calling host functions, made by the host's C library (the
    link-map namespace the application runs in): an application's function
    is the host's code (a Python host's ctypes callback takes its GIL, and
    its C library, whose threads it did not count, took itself for one
    thread: a second thread of ours racing its malloc hung the process)."""
    base = cffi.FFI()
    base.cdef("void *dlmopen(long, const char *, int); void *dlsym(void *, const char *);"
              "int pthread_create(unsigned long *, void *, void *(*)(void *), void *);"
              "int pthread_detach(unsigned long);")
    own = base.dlopen(None)
    libc = own.dlmopen(0, b"libc.so.6", 2)  # LM_ID_BASE, RTLD_NOW
    create = own.dlsym(libc, b"pthread_create") if libc != base.NULL else base.NULL
    detach = own.dlsym(libc, b"pthread_detach") if libc != base.NULL else base.NULL
    if create == base.NULL or detach == base.NULL:  # the host's is ours
        threading.Thread(target=_run_host_calls, name="zmlir host functions",
                         daemon=True).start()
        return 0
    thread = base.new("unsigned long *")
    code = base.cast("int (*)(unsigned long *, void *, void *(*)(void *), void *)", create)(
        thread, base.NULL, base.cast("void *(*)(void *)", _host_call_main), base.NULL)
    if code != 0:
        raise OSError(code, "pthread_create")
    base.cast("int (*)(unsigned long)", detach)(thread[0])
    return int(thread[0])


@ffi.callback("void *(void *)")
def _host_call_main(_: Any) -> Any:
    _run_host_calls()
    return ffi.NULL


def _run_host_calls() -> None:
    lib = cl.loader()
    while True:
        call, gate, reached = _HOST_CALLS.pop(_HOST_CALLS_READY.get())
        try:
            call()
        except Exception as err:  # the application's function is C: this is ours
            print(f"zmlir: internal error in a host function's call: {err}", file=sys.stderr)
        finally:  # the queue goes on whatever happened: later work never waits forever
            lib.clSetUserEventStatus(gate, cl.CL_COMPLETE)
            lib.clReleaseEvent(gate)
            lib.clReleaseEvent(reached)


@ffi.callback("void(cl_event, cl_int, void *)")
def _host_call_reached(event: Any, status: int, data: Any) -> None:
    _HOST_CALLS_READY.put(int(ffi.cast("uintptr_t", data)))


def check_spirv(spirv: bytes, versions: Sequence[tuple[int, int]]) -> None:
    """Reject a module the runtime would mishandle, before it sees it.

    The Intel CPU runtime's SPIR-V reader spins forever on an instruction whose word count is
    0 and quietly builds a truncated module, so the instruction stream is walked here: every
    word count must be at least 1 and the last instruction must end exactly at the end.
    """
    if len(spirv) % 4 or len(spirv) < 20:
        raise ValueError(f"not a SPIR-V module: {len(spirv)} bytes is not a whole header + words")
    words = array.array("I", spirv)
    if words[0] != _SPIRV_MAGIC:
        if words[0] == _SPIRV_MAGIC_SWAPPED:
            raise ValueError("big-endian SPIR-V modules are not supported")
        raise ValueError(f"not a SPIR-V module: magic {words[0]:#010x}")
    version = ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF)
    if versions and version not in versions:
        raise ValueError(
            f"SPIR-V {version[0]}.{version[1]} module; the device accepts "
            + ", ".join(f"{major}.{minor}" for major, minor in versions)
        )
    index, end = 5, len(words)
    if index == end:
        raise ValueError("SPIR-V module has a header but no instructions")
    while index < end:
        count = words[index] >> 16
        if count == 0 or index + count > end:
            raise ValueError(
                f"malformed SPIR-V: instruction at word {index} (opcode {words[index] & 0xFFFF}) "
                f"has word count {count} with {end - index} words left"
            )
        index += count


# Launches make these for every kernel: the types are parsed once.
_SIZE3 = ffi.typeof("size_t[3]")
_EVENT_OUT = ffi.typeof("cl_event *")


def _dim3(what: str, dims: Sequence[int]) -> Dim3:
    if type(dims) is tuple and len(dims) == 3 and all(type(d) is int and d >= 1 for d in dims):
        return (dims[0], dims[1], dims[2])  # what the driver passes
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} must have 1 to 3 dimensions, got {tuple(dims)}")
    padded = [int(d) for d in dims] + [1] * (3 - len(dims))
    if any(d < 1 for d in padded):
        raise ValueError(f"{what} dimensions must be >= 1, got {tuple(dims)}")
    return (padded[0], padded[1], padded[2])


def _host_bytes(data: bytes | bytearray | memoryview | np.ndarray) -> memoryview:
    if isinstance(data, np.ndarray):
        return memoryview(np.ascontiguousarray(data)).cast("B")
    view = memoryview(data)
    return view if view.format == "B" and view.c_contiguous else view.cast("B")
