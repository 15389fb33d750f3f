"""OpenCLBackend: the driver's Backend over an OpenCL Device (device.py):
SPIR-V kernels on any OpenCL 3.0 device with SPIR-V and Intel USM."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from zmlir.runtime.backends.base import Backend, NoDevice
from zmlir.targets.spirv.binary import build_options

_CL_DEVICE_TYPE_CPU = 1 << 1


# CUDA_MEMCPY3D: per side X, Y, Z, LOD, memory type (and padding), host,
# device, array, reserved, pitch, height; then width, height, depth.
_MEMCPY3D = struct.Struct("<4Qi4x6Q4Qi4x6Q3Q")


class OpenCLBackend(Backend):
    name = "opencl"
    launch_events = True
    host_copies = True  # shared USM (open)

    def __init__(self, device: Any) -> None:
        self.device = device

    @classmethod
    def open(cls) -> OpenCLBackend:
        from zmlir.runtime.backends.opencl.device import Device

        try:
            # Shared USM: device memory the host can also read, like CUDA's
            # unified addressing on an integrated device.
            backend = cls(Device.open(alloc_kind="shared"))
        except Exception as err:
            raise NoDevice(str(err)) from None
        _parse_c_types()
        return backend

    @property
    def device_name(self) -> str:
        return str(self.device.name)

    def vendor_library(self, soname: str) -> str | None:
        # NVIDIA's libraries run here from their PTX (`zmlir run`): what our
        # libcurand lacks goes to NVIDIA's (route.c), found as the
        # passthrough finds its libraries.
        from zmlir.runtime.backends.cuda import vendor_library

        return vendor_library(soname)

    def native_handles(self) -> tuple[int, ...]:
        # cl_platform_id, cl_device_id, cl_context: our USM allocations are
        # of that context.
        from zmlir.runtime.backends.opencl.api import ffi

        device = self.device
        return tuple(int(ffi.cast("uintptr_t", h))
                     for h in (device.platform_id, device.device_id, device.context))

    @functools.cached_property
    def is_cpu(self) -> bool:
        from zmlir.runtime.backends.opencl import api as cl

        kind = cl.device_scalar(self.device.device_id, cl.CL_DEVICE_TYPE, "cl_device_type")
        return bool(kind & _CL_DEVICE_TYPE_CPU)

    @property
    def host_accessible_globals(self) -> bool:  # type: ignore[override]
        # A CPU device's program variables are in the host's own memory.
        return self.is_cpu

    @property
    def supports_cooperative(self) -> bool:  # type: ignore[override]
        # A CPU runtime runs each work-group to its end on one of its
        # compute_units threads (Intel's: TBB workers), taking the next
        # work-group only then: a grid of at most compute_units blocks has
        # them all running at once, a larger one does not
        # (tools/probe_coresidency.cu). So one block per compute unit.
        return self.is_cpu

    def occupancy(self, kernel: Any, info: Any, block: int, dynamic_shared: int) -> int | None:
        return 1 if self.is_cpu else None

    @property
    def target(self) -> str:
        return "spirv"

    @property
    def compute_units(self) -> int:
        return max(1, int(self.device.compute_units))

    @property
    def local_mem_size(self) -> int:
        return int(self.device.local_mem_size)

    def total_memory(self) -> int:
        # Host memory backs the device: report half of it.
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
        except (ValueError, OSError):
            return 8 << 30

    def alloc(self, nbytes: int) -> int:
        return int(self.device.alloc(nbytes, 256))

    def free(self, address: int) -> None:
        self.device.free(address)

    def copy_to_device(self, address: int, data: Any) -> None:
        self.device.copy_to_device(address, data)

    def copy_from_device(self, address: int, nbytes: int) -> bytes:
        return bytes(self.device.copy_from_device(address, nbytes))

    def copy_device_to_device(self, dst: int, src: int, nbytes: int) -> None:
        # Shared USM is ordinary memory once the queue is idle.
        self.device.synchronize()
        ctypes.memmove(dst, src, nbytes)

    # 2D/3D copies on a CPU device, whose memory is the host's own once the
    # queue is idle: one wait, then each row a memmove (a blocking copy of
    # ours per row took 31 ms for a 4000 x 1080 image up and back).
    @property
    def pitched_copies(self) -> bool:  # type: ignore[override]
        return self.is_cpu

    def copy_pitched(self, copy: bytes, queue: int | None) -> bool:
        if not self.is_cpu:
            return False
        fields = _MEMCPY3D.unpack(copy)
        src, dst = fields[:11], fields[11:22]
        width, height, depth = fields[22:]

        def rows(side: tuple[int, ...]) -> tuple[int, int, int]:
            x, y, z, _, kind, host, device, _, _, pitch, slice_rows = side
            pitch, slice_rows = pitch or width, slice_rows or height
            base = host if kind == 1 else device  # CU_MEMORYTYPE_HOST, else device/unified
            return base + (z * slice_rows + y) * pitch + x, pitch, slice_rows

        (src_at, src_pitch, src_rows), (dst_at, dst_pitch, dst_rows) = rows(src), rows(dst)
        self.device.synchronize()
        for z in range(max(depth, 1)):
            for y in range(height):
                ctypes.memmove(dst_at + (z * dst_rows + y) * dst_pitch,
                               src_at + (z * src_rows + y) * src_pitch, width)
        return True

    def fill_pitched(self, dst: int, pitch: int, value: int, element_size: int, width: int,
                     height: int, queue: int | None) -> bool:
        if not self.is_cpu:
            return False
        value &= (1 << (8 * element_size)) - 1
        nbytes = width * element_size
        row = None if element_size == 1 else np.full(
            width, value, dtype={2: np.uint16, 4: np.uint32}[element_size]).tobytes()
        self.device.synchronize()
        for y in range(height):
            if row is None:
                ctypes.memset(dst + y * (pitch or nbytes), value, nbytes)
            else:
                ctypes.memmove(dst + y * (pitch or nbytes), row, nbytes)
        return True

    # Host functions and stream callbacks: the runtime's thread calls them once
    # the queue gets there; the queue's later work waits for their return.
    def launch_host_func(self, queue: int, fn: int, user_data: int) -> bool:
        from zmlir.runtime.backends.opencl.api import ffi

        function = ffi.cast("void (*)(void *)", fn)
        self.device.host_function(lambda: function(ffi.cast("void *", user_data)))
        return True

    def add_stream_callback(self, queue: int, stream: int, callback: int,
                            user_data: int) -> bool:
        from zmlir.runtime.backends.opencl.api import ffi

        function = ffi.cast("void (*)(void *, int, void *)", callback)
        self.device.host_function(lambda: function(ffi.cast("void *", stream), 0,
                                                   ffi.cast("void *", user_data)))
        return True

    def memset(self, address: int, byte: int, nbytes: int) -> None:
        # Filled by the host once the queue is idle, as copies are: an
        # enqueued fill and its wait took ~40 µs on Intel's CPU runtime
        # (bench/alloc_overhead.cu), a 64 KiB memset ~2.
        if nbytes:
            self.device.allocation_at(address, nbytes)  # a stray fill would corrupt us
            self.device.synchronize()
            ctypes.memset(address, byte & 0xFF, nbytes)

    def load(self, compiled: Any) -> Any:
        from zmlir.runtime import cache

        if not cache.cache_enabled():
            return self.device.load_spirv(compiled.binary)
        # The OpenCL driver's build of our SPIR-V is cached too: rebuilding
        # from its own binary takes a fraction of the time.
        blobs = cache.BlobCache(cache.shared_cache())
        key = hashlib.sha256(compiled.binary + b"|" + self.device.name.encode()
                             + b"|" + self.device.platform_name.encode()).hexdigest()
        binary = blobs.get(key)
        if binary is not None:
            try:
                return self.device.load_binary(binary, build_options(compiled.binary))
            except Exception:  # stale or rejected: rebuild from SPIR-V
                pass
        program = self.device.load_spirv(compiled.binary)
        blobs.put(key, program.binary())
        return program

    def kernel(self, program: Any, name: str) -> Any:
        from zmlir.targets.spirv import GRID_VARIANT_SUFFIX, GRID_VARIANT_X

        kernel = program.kernel(name)
        # Its grid variant, if the compiler gave it one: Device.launch runs
        # it for the grids it serves.
        if name + GRID_VARIANT_SUFFIX in program.kernel_names():
            kernel.variant = program.kernel(name + GRID_VARIANT_SUFFIX)
            kernel.variant_grid_x = GRID_VARIANT_X
        return kernel

    def global_variable(self, program: Any, name: str) -> tuple[int, int]:
        address, size = program.global_variable(name)
        self.device.adopt(address, size)
        program.adopted.append(address)
        return address, size

    def unload(self, program: Any) -> None:
        # The OpenCL program and its kernels are released with their last
        # reference (ffi.gc); its variables' memory goes with them.
        for address in program.adopted:
            self.device.disown(address)
        program.adopted.clear()

    def launch(self, kernel: Any, info: Any, grid: Sequence[int], block: Sequence[int],
               args: Sequence[Any], shared_bytes: int, cooperative: bool = False,
               watched: bool = False) -> Any:
        blocks = grid[0] * grid[1] * grid[2]
        if cooperative and blocks > self.compute_units:
            from zmlir.runtime.cuda.errors import CudaError, CUresult

            raise CudaError(CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                            f"a cooperative grid of {blocks} blocks; {self.compute_units} "
                            "run at once")
        return self.device.launch(kernel, grid, block, args, shared_bytes=shared_bytes,
                                  shared_window=info.static_shared_bytes, watched=watched,
                                  linear_blocks=info.linear_blocks)

    def synchronize(self) -> None:
        self.device.synchronize()

    # Events are markers in the queue, in the order of the work before them,
    # not waited for; an event's time is when its marker completed on the
    # device's profiling clock, so cuEventElapsedTime is the time the device
    # took between the two points of its queue.
    def record_mark(self, previous: Any, flags: int, stream: int = 0) -> Any:
        if previous is not None:
            self.device.release_marker(previous)
        return self.device.marker()

    def mark_reached(self, mark: Any) -> bool:
        return bool(self.device.marker_reached(mark))

    def wait_mark(self, mark: Any) -> None:
        self.device.wait_marker(mark)

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return (self.device.marker_ns(end) - self.device.marker_ns(start)) / 1e6

    def release_mark(self, mark: Any) -> None:
        self.device.release_marker(mark)

    def signal(self, address: int, value: int) -> None:
        # A fill in the queue: written when the queue reaches it, unwaited.
        self.device.fill_word(address, value)

    # Another process maps a CPU device's memory: its pages made shared
    # memory (Device.share); a GPU's device memory is no host page.
    @property
    def exports_memory(self) -> bool:
        return self.is_cpu

    def ipc_export(self, address: int) -> tuple[int, int] | None:
        if not self.is_cpu:
            return None
        fd, offset, _ = self.device.share(address)
        return fd, offset

    def ipc_import(self, fd: int, offset: int, nbytes: int, at: int = 0) -> int:
        return int(self.device.map_shared(fd, offset, nbytes, at))

    @property
    def virtual_memory(self) -> bool:
        return self.is_cpu

    def reserve(self, nbytes: int, alignment: int, hint: int = 0) -> int:
        return int(self.device.reserve(nbytes, alignment, hint))

    def release_reservation(self, base: int) -> None:
        self.device.release(base)

    def ipc_close(self, address: int) -> None:
        self.device.unmap_shared(address)

    def fast_launch_points(self) -> dict[str, int]:
        from zmlir.runtime.backends.opencl import api as cl

        lib = cl.loader()

        def address(value: Any) -> int:
            return int(cl.ffi.cast("uintptr_t", value))

        return {"set_arg": address(lib.clSetKernelArg),
                "enqueue": address(lib.clEnqueueNDRangeKernel),
                "flush": address(lib.clFlush),
                "release_event": address(lib.clReleaseEvent),
                "get_event_info": address(lib.clGetEventInfo),
                "wait_for_events": address(lib.clWaitForEvents),
                "queue": address(self.device.queue)}

    def fast_kernel(self, kernel: Any, info: Any,
                    nparams: int) -> tuple[str, int, int, int, int] | None:
        # Our SPIR-V kernels take the PTX parameters as scalars (pointers as
        # 64-bit integers), then the __local shared-memory window: what
        # Device.launch sets, and what fastpath.c sets from kernelParams.
        if kernel.num_args != nparams + 1:
            return None
        from zmlir.runtime.backends.opencl.api import ffi

        return ("opencl", int(ffi.cast("uintptr_t", kernel.handle)),
                int(info.static_shared_bytes), self.local_mem_size,
                int(self.device.max_work_group_size))

    def fast_opencl_kernel(self, kernel: Any, info: Any) -> tuple[int, int, int, int]:
        """(cl_kernel, largest grid in x) of the kernel's grid variant ((0, 0):
        none), the sub-group size it requires and whether it has a form for
        blocks its warps are not rows of (spirv.work_group), for fastpath.c."""
        from zmlir.runtime.backends.opencl.api import ffi

        variant = kernel.variant
        return (int(ffi.cast("uintptr_t", variant.handle)) if variant is not None else 0,
                kernel.variant_grid_x if variant is not None else 0, kernel.sub_group_size,
                int(info.linear_blocks))

    def close(self) -> None:
        self.device.close()


def _parse_c_types() -> None:
    """cffi parses each C type string on first use (a few ms each, with
    pycparser): do it while the driver starts, not in the first module load
    or launch."""
    from zmlir.runtime.backends.opencl import api as cl
    from zmlir.runtime.backends.opencl.api import ffi

    # cffi also builds each library function on first access: those a module
    # load and a kernel lookup call.
    lib = cl.loader()
    for function in ("clCreateProgramWithBinary", "clBuildProgram", "clReleaseProgram",
                     "clGetProgramBuildInfo", "clGetProgramInfo", "clCreateKernel",
                     "clReleaseKernel", "clGetKernelInfo", "clSetKernelExecInfo",
                     "clSetKernelArg", "clEnqueueNDRangeKernel", "clFinish",
                     "clGetExtensionFunctionAddressForPlatform"):
        getattr(lib, function, None)
    for name in ("cl_bool *", "cl_device_id[1]", "cl_int *", "cl_uint *",
                 "const unsigned char **", "size_t *", "size_t[1]", "size_t[3]", "uintptr_t",
                 "unsigned char *", "unsigned char *[1]", "unsigned char[]", "void *", "void **",
                 "clGetDeviceGlobalVariablePointerINTEL_fn"):
        ffi.typeof(name)
