"""The interface every driver backend implements (OpenCL, Level Zero, HIP,
CUDA passthrough). Device pointers are plain integers: real addresses in the
backend's unified memory, so applications can do arithmetic on them."""

from __future__ import annotations

import ctypes
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar


class NoDevice(RuntimeError):
    """The backend's library loaded (or not) but offers no usable device."""


class UnsupportedLaunch(ValueError):
    """A launch the backend cannot run as CUDA would (the driver answers
    CUDA_ERROR_NOT_SUPPORTED and says why)."""


# CUdevice_attribute values that describe the memory system: a passthrough to
# a real GPU answers them as that GPU does (Backend.memory_model). A program
# that sees PAGEABLE_MEMORY_ACCESS hands kernels malloc'd memory, which the
# H200 faults on (cuda-samples' systemWideAtomics: 700).
MEMORY_MODEL = (18, 19, 83, 86, 88, 89, 91, 100, 101)


class Backend(ABC):
    """A device the driver runs on. What a backend may do beyond the abstract
    methods is declared here with a conservative default: the capability
    flags below, precompiled, launch_raw and occupancy. The driver calls
    them directly, never probing for attributes."""

    name: ClassVar[str]
    # Whether launch/launch_raw take cooperative=True: every block of the grid
    # resident at once (cuLaunchCooperativeKernel).
    supports_cooperative: bool = False
    # Whether launch_raw takes the application's kernelParams array as it is.
    launches_raw_params: bool = False
    # Whether launch_raw takes cluster=(x, y, z): thread-block clusters (sm_90).
    supports_clusters: bool = False
    # Whether launch takes watched=True: it then returns while the kernel runs,
    # handing the driver the launch's event to watch to its end (fastpath.c).
    launch_events: bool = False
    # Whether the host reaches all device memory as its own once the kernels
    # that use it have ended (shared USM): a stream's copies may then be the
    # host's, after the stream's launches alone (memcpy.py).
    host_copies: bool = False
    # Whether an executable graph of kernels, fills, copies and host functions
    # may replay as the vendor's own graph (graph_* methods: the CUDA backend's).
    vendor_graphs: bool = False
    # Whether a stream's capture may be the vendor's (capture_probe and the
    # graph_* readers; fastpath.c: stream capture): the CUDA backend's.
    vendor_captures: bool = False
    # Whether copy_pitched and fill_pitched copy and fill 2D/3D between host
    # and device memory in one call each.
    pitched_copies: bool = False
    # Whether applications see device_name as it is: the vendor's own device,
    # which programs look up by name (llm.c's table of GPUs for its MFU);
    # otherwise the name is zmlir's ("zmlir " + device_name).
    device_named_as_is: bool = False
    # Whether the host may read and write every module variable at the
    # address global_variable gives (__managed__ variables need it; see
    # host_accessible for a backend that knows per variable).
    host_accessible_globals: bool = False

    @classmethod
    @abstractmethod
    def open(cls) -> Backend:
        """The backend on its first device; raises NoDevice (with the reason)."""

    # -- what the device is --------------------------------------------------
    @property
    @abstractmethod
    def device_name(self) -> str: ...

    @property
    @abstractmethod
    def target(self) -> str:
        """The zmlir compile target for this device, e.g. "spirv" or "amdgpu:gfx1100"."""

    @property
    def compute_units(self) -> int:
        return 1

    @property
    def local_mem_size(self) -> int:
        return 48 * 1024

    def total_memory(self) -> int:
        return 8 << 30

    def memory_model(self) -> dict[int, int]:
        """The device's own answers to the memory-system attributes
        (MEMORY_MODEL: pageable access, managed memory, host
        atomics, ...) where they differ from the unified memory zmlir
        presents; programs pick their allocation paths from them."""
        return {}

    # -- memory ----------------------------------------------------------------
    @abstractmethod
    def alloc(self, nbytes: int) -> int: ...

    @abstractmethod
    def free(self, address: int) -> None: ...

    def alloc_device(self, nbytes: int) -> int:
        """Memory cuMemAlloc asked for, which only the device need reach:
        the vendor's device memory where the backend has it apart from the
        unified memory alloc gives (the passthrough: NVIDIA's cuMemAlloc,
        which NVIDIA's IPC exports and the host cannot touch), else alloc's.
        free frees either."""
        return self.alloc(nbytes)

    @abstractmethod
    def copy_to_device(self, address: int, data: memoryview | bytes | Any) -> None: ...

    @abstractmethod
    def copy_from_device(self, address: int, nbytes: int) -> bytes: ...

    def copy_into_host(self, host: memoryview, address: int) -> None:
        """Copies host.nbytes bytes from device `address` into `host` (a
        writable view of the application's memory); a backend that can
        copies straight there."""
        host[:] = self.copy_from_device(address, host.nbytes)

    @abstractmethod
    def copy_device_to_device(self, dst: int, src: int, nbytes: int) -> None: ...

    @abstractmethod
    def memset(self, address: int, byte: int, nbytes: int) -> None: ...

    # -- code --------------------------------------------------------------------
    def target_for(self, ptx: str) -> str:
        """The compile target for module `ptx`: `target`, unless the backend
        compiles some modules with other features (the CUDA passthrough's
        native textures)."""
        return self.target

    def precompiled(self, key: str, ptx: str) -> Any | None:
        """A module compiled ahead of time for `ptx`, whose sha256 is `key`
        (a zmlir.CompiledModule-like object load takes), or None: the driver
        compiles the PTX."""
        return None

    def vendor_library(self, soname: str) -> str | None:
        """The path of the vendor's own library `soname` (libcublas.so.13),
        never ours; None: none is installed (or the backend runs none). Our
        library of that name hands it every call under the passthrough, and
        what ours does not make (libcurand's generators of types ours lacks:
        zmlir/libraries/common/route.c) where NVIDIA's library runs through
        its own PTX, under `zmlir run` (the OpenCL backend)."""
        return None

    def native_handles(self) -> tuple[int, ...]:
        """The backend's own API handles, as addresses, for a library of ours
        that works on that API in the same context (the SYCL route of
        zmlir/libraries/cublas/engine.c); empty where it has none to give."""
        return ()

    # NVIDIA machine code (SASS) run as it is, where the backend can
    # (the CUDA passthrough; zmlir/runtime/cuda/native.py).
    def vendor_export_table(self, key: bytes) -> int:
        """The address of the vendor driver's own private export table `key`
        (a UUID's 16 bytes), where it is underneath (the passthrough); 0:
        none. Asked for the tables of ours with no slot known
        (Table.vendor_first), and under ZMLIR_VENDOR_TABLES (an experiment)
        for tables we do not know."""
        return 0

    def vendor_stream(self, priority: int = 0, non_blocking: bool = False) -> int:
        """A new stream of the vendor's driver underneath (the passthrough),
        as an address, for a stream the application creates to have as its
        handle; 0: none (the handle is ours). The stream's kernels run there:
        launch and launch_raw take it as `stream=`, record_mark as `stream`,
        and wait_mark_in_stream makes it wait. `non_blocking`: the
        application's CU_STREAM_NON_BLOCKING (no order with the NULL stream's
        work but the backend's own)."""
        return 0

    def stream_priority_range(self) -> tuple[int, int]:
        """(least, greatest) stream priority that means something: one
        queue has none, (0, 0); the vendor's range where its streams are."""
        return 0, 0

    def wait_mark_in_stream(self, stream: int, mark: Any) -> None:
        """Makes vendor stream `stream` wait for a mark (cuStreamWaitEvent)."""
        raise NotImplementedError(f"the {self.name} backend has no streams of its own")

    def follow_null_stream(self, stream: int) -> None:
        """Makes vendor stream `stream`, if non-blocking, wait for the NULL
        stream's work so far (a block the NULL stream freed, reused there)."""
        return None

    def vendor_stream_destroy(self, handle: int) -> None:
        """Destroys the vendor's stream `handle` (vendor_stream's)."""
        raise NotImplementedError(f"the {self.name} backend has no streams of its own")

    def native_sm(self) -> int:
        """The SASS architecture the backend runs as it is (90 for sm_90);
        0: it runs only what zmlir compiles."""
        return 0

    def load_native(self, address: int) -> Any:
        """Loads the module image (a fatbin or cubin) at `address` with
        the vendor's own loader; returns a program as load does."""
        raise NotImplementedError

    def native_kernel_info(self, program: Any, name: str) -> Any | None:
        """A zmlir.KernelInfo for kernel `name` of a native program, from
        the vendor's driver (None: no such kernel)."""
        raise NotImplementedError

    def native_kernel_names(self, program: Any) -> list[str]:
        """The kernels of a native program, as the vendor's driver lists them."""
        raise NotImplementedError

    def native_set_function_attribute(self, kernel: Any, attrib: int, value: int) -> int:
        """Sets CUfunction attribute `attrib` of a native kernel; the
        vendor's CUresult."""
        raise NotImplementedError

    def native_function_attribute(self, kernel: Any, attrib: int) -> int | None:
        """CUfunction attribute `attrib` of a native kernel, as the
        vendor's driver answers it (None: it refused)."""
        raise NotImplementedError

    @abstractmethod
    def load(self, compiled: Any) -> Any:
        """Loads a zmlir.CompiledModule built for `target`; returns a program.
        Each load is a new program, with variables of its own."""

    def unload(self, program: Any) -> None:
        """Releases a program from load once its module is unloaded: its
        variables are gone (what global_variable handed out included)."""
        return None

    # -- host memory the device reaches (cuMemHostAlloc, cuMemHostRegister) --
    def host_alloc(self, nbytes: int) -> int | None:
        """Page-locked host memory the device reaches at the same address,
        or None where the device reaches all of this process's memory (the
        CPU, unified shared memory): the driver allocates it itself."""
        return None

    def host_free(self, address: int) -> None:
        """Frees what host_alloc returned."""
        raise NotImplementedError(f"the {self.name} backend allocates no host memory")

    def host_register(self, address: int, nbytes: int) -> None:
        """Makes existing host memory reachable by the device at the same
        address; nothing where the device reaches it already."""
        return None

    def host_unregister(self, address: int) -> None:
        """Undoes host_register."""
        return None

    @abstractmethod
    def kernel(self, program: Any, name: str) -> Any: ...

    @abstractmethod
    def global_variable(self, program: Any, name: str) -> tuple[int, int]:
        """(device address, size) of a module-scope variable of a loaded program."""

    def host_accessible(self, address: int) -> bool:
        """Whether the host may read and write the module variable at
        `address` (from global_variable), as a __managed__ variable must be."""
        return self.host_accessible_globals

    @abstractmethod
    def launch(self, kernel: Any, info: Any, grid: Sequence[int], block: Sequence[int],
               args: Sequence[Any], shared_bytes: int) -> Any:
        """Launches with CUDA semantics; `args` are numpy scalars in parameter order,
        `info` the kernel's zmlir.KernelInfo. A backend that supports_cooperative
        also takes cooperative=True; one with launch_events, watched=True (it
        returns the event). Without watched the result is None."""

    def launch_raw(self, kernel: Any, info: Any, grid: Sequence[int], block: Sequence[int],
                   params_address: int, shared_bytes: int, cooperative: bool = False) -> None:
        """Launches with the application's own kernelParams array (the address
        of its void *[]), where launches_raw_params says the backend can."""
        raise NotImplementedError(f"the {self.name} backend takes no raw kernel parameters")

    def max_active_clusters(self, kernel: Any, info: Any, config_address: int) -> int | None:
        """cuOccupancyMaxActiveClusters for the CUlaunchConfig at
        config_address (the driver's copy: the backend may change it), or
        None where the device has no thread-block clusters."""
        return None

    def hardware_attribute(self, attrib: int) -> int | None:
        """The vendor's own answer for a hardware CUdevice_attribute (the
        compute capability, multiprocessors, memory sizes; cuda/attributes.py
        HARDWARE) where the backend is a vendor GPU presented as it is (the
        CUDA passthrough), or None: the driver presents its sm_89-class device."""
        return None

    def occupancy(self, kernel: Any, info: Any, block: int, dynamic_shared: int) -> int | None:
        """The device's own count of a kernel's active blocks per multiprocessor,
        or None: the driver estimates it."""
        return None

    def set_heap_size(self, nbytes: int) -> int | None:
        """CU_LIMIT_MALLOC_HEAP_SIZE where the modules call the device's own
        malloc (the CUDA passthrough): the CUresult of setting it there;
        None where the driver keeps the heap (cuda/heap.py)."""
        return None

    def heap_size(self) -> int | None:
        """The device's own CU_LIMIT_MALLOC_HEAP_SIZE, or None (see set_heap_size)."""
        return None

    def set_stack_size(self, nbytes: int) -> int | None:
        """CU_LIMIT_STACK_SIZE where the modules' local memory is on the
        device's own stacks (the CUDA passthrough): the CUresult of setting
        it there, with the device's rounding; None where the driver keeps
        the stacks (cuda/stacks.py)."""
        return None

    def stack_size(self) -> int | None:
        """The device's own CU_LIMIT_STACK_SIZE, or None (see set_stack_size)."""
        return None

    @abstractmethod
    def synchronize(self) -> None: ...

    def queue_done(self, stream: int = 0) -> bool:
        """Whether the device has run all the work enqueued so far
        (cuStreamQuery) where its launches return before their kernels end
        and the driver does not watch them (launch_events): the passthrough,
        whose launches are NVIDIA's, with those of vendor stream `stream`
        (0: none). Elsewhere launches end before they return, or the driver
        watches them (fastpath.c)."""
        return True

    def stream_synchronize(self, stream: int) -> bool:
        """Waits for vendor stream `stream`'s work and ours enqueued for it
        before (cuStreamSynchronize, not the whole device's: another stream's
        kernel may wait for the host); False where it cannot say (an error:
        the caller synchronises the device, which reports it)."""
        return False

    # -- events (cuEventRecord, cuEventElapsedTime) ----------------------------------
    def new_mark(self, flags: int) -> Any:
        """The mark of a new event of CU_EVENT_* `flags`, not yet recorded,
        which record_mark records in place; None: none until the first
        record. A backend whose marks fastpath.c records (fast_event) makes
        it here, so that the event's first record is a C call too."""
        return None

    def record_mark(self, previous: Any, flags: int, stream: int = 0) -> Any:
        """A point in the device's queue after the work enqueued so far, for
        an event of CU_EVENT_* `flags` last recorded at `previous` (None:
        never; a backend may record that again in place, else it releases
        it), in vendor stream `stream` (0: the queue): here the host clock
        once the queue has drained. A backend with device timestamps records
        one in its queue instead, without waiting."""
        self.synchronize()
        return time.perf_counter()

    def mark_reached(self, mark: Any) -> bool:
        """Whether the device has passed a mark (cuEventQuery)."""
        return True

    def wait_mark(self, mark: Any) -> None:
        """Waits until the device has passed a mark (cuEventSynchronize): here
        it had when it was recorded."""
        return None

    def elapsed_ms(self, start: Any, end: Any) -> float:
        """Milliseconds between two marks, once both are reached."""
        return (end - start) * 1000.0

    def release_mark(self, mark: Any) -> None:
        """The event that held a mark was destroyed."""
        return None

    def fast_event(self, mark: Any) -> int | None:
        """The address of the native event a mark is, which fastpath.c
        records again, queries, waits for and times with the entry points
        fast_launch_points names ("event_record", "event_query",
        "event_synchronize", "event_elapsed"); None: the Python driver's."""
        return None

    def signal(self, address: int, value: int) -> None:
        """Writes the 64-bit `value` at `address`, host memory shared with
        other processes (an interprocess event, cuda/ipc.py), once the work
        enqueued so far has run: here once the queue has drained."""
        self.synchronize()
        ctypes.c_uint64.from_address(address).value = value

    # -- memory other processes map (cuIpc*Mem*, cuda/ipc.py) -----------------------
    # Where the vendor's driver is underneath (the passthrough), its own IPC:
    # memory handles are the vendor's 64 bytes, opened by its driver.
    @property
    def vendor_ipc(self) -> bool:
        """Whether memory handles are the vendor's (vendor_ipc_*), not ours
        (ipc_export, ipc_import)."""
        return False

    def vendor_ipc_export(self, address: int) -> bytes:
        """The vendor's handle of the alloc_device allocation at `address`;
        raises CudaError with the vendor's code."""
        raise NotImplementedError(f"the {self.name} backend has no IPC of its own")

    def vendor_ipc_open(self, handle: bytes, flags: int) -> tuple[int, int]:
        """(address, size) of the allocation a vendor handle names, opened
        here (once more: the vendor counts the opens); raises CudaError with
        the vendor's code."""
        raise NotImplementedError(f"the {self.name} backend has no IPC of its own")

    def vendor_ipc_close(self, address: int) -> None:
        """Undoes one vendor_ipc_open of `address`."""
        raise NotImplementedError(f"the {self.name} backend has no IPC of its own")

    def vendor_ipc_event_code(self, handle: bytes) -> int:
        """The vendor's CUresult for opening `handle`, no event handle of
        ours, as an event (a memory handle: CUDA_ERROR_MAP_FAILED)."""
        raise NotImplementedError(f"the {self.name} backend has no IPC of its own")

    # Virtual memory management (cuda/virtual_memory.py) where the vendor's
    # driver is underneath: its own calls, with the application's arguments.
    @property
    def vendor_vmm(self) -> bool:
        """Whether cuMemAddressReserve, cuMemCreate, cuMemMap, ... are the
        vendor's (vendor_vmm_call), not memfds (virtual_memory)."""
        return False

    def vendor_vmm_call(self, api: str, *args: int) -> int:
        """The vendor's CUresult for virtual memory call `api` (its CUDA
        name) with the application's arguments, pointers as addresses."""
        raise NotImplementedError(f"the {self.name} backend has no virtual memory of its own")

    # Arrays, mipmapped arrays, texture and surface objects (cuda/texture.py)
    # where the vendor's driver is underneath and the kernels' texture
    # instructions are its own (the NVPTX target's native textures).
    @property
    def vendor_textures(self) -> bool:
        """Whether cuArray*, cuMipmappedArray*, the copies to and from arrays,
        cuTexObject* and cuSurfObject* are the vendor's (vendor_texture_call),
        its handles the application's, not our descriptors."""
        return False

    def vendor_texture_call(self, api: str, *args: int) -> int:
        """The vendor's CUresult for array or texture call `api` (its CUDA
        name) with the application's arguments, pointers as addresses."""
        raise NotImplementedError(f"the {self.name} backend has no textures of its own")

    # Pools shared between processes (cuda/mempool_ipc.py) where the vendor's
    # driver is underneath: its own pools, handles and export data.
    @property
    def vendor_pools(self) -> bool:
        """Whether pools with IPC handle types are the vendor's
        (vendor_pool_*), not memfds (virtual_memory)."""
        return False

    def vendor_pool_create(self, handle_types: int, max_size: int) -> Any:
        """A vendor pool of device memory with IPC `handle_types`; raises
        CudaError with the vendor's code."""
        raise NotImplementedError(f"the {self.name} backend has no pools of its own")

    def vendor_pool_destroy(self, pool: Any) -> None:
        """Destroys a vendor pool (its memory still in use lives until freed)."""
        raise NotImplementedError(f"the {self.name} backend has no pools of its own")

    def vendor_pool_alloc(self, pool: Any, nbytes: int) -> int:
        """A block of a vendor pool, usable by all work enqueued after."""
        raise NotImplementedError(f"the {self.name} backend has no pools of its own")

    def vendor_pool_free(self, address: int) -> None:
        """Frees a block of a vendor pool, or a pointer imported into one,
        once the work enqueued so far has run."""
        raise NotImplementedError(f"the {self.name} backend has no pools of its own")

    def vendor_pool_export(self, pool: Any, handle_type: int) -> int:
        """The vendor pool's shareable handle (a POSIX file descriptor)."""
        raise NotImplementedError(f"the {self.name} backend has no pools of its own")

    def vendor_pool_import(self, handle: int, handle_type: int) -> Any:
        """Another process's vendor pool from its shareable handle."""
        raise NotImplementedError(f"the {self.name} backend has no pools of its own")

    def vendor_pool_export_pointer(self, address: int) -> bytes:
        """The vendor's 64 bytes of export data of a block of a vendor pool."""
        raise NotImplementedError(f"the {self.name} backend has no pools of its own")

    def vendor_pool_import_pointer(self, pool: Any, data: bytes) -> tuple[int, int]:
        """(address, size) of another process's block (its export data) in
        an imported vendor pool."""
        raise NotImplementedError(f"the {self.name} backend has no pools of its own")

    def copy_pitched(self, copy: bytes, queue: int | None) -> bool:
        """A 2D/3D copy between host and device memory (a CUDA_MEMCPY3D's
        bytes, no array on either side) in one call of the vendor's:
        asynchronous in `queue` (a vendor stream, 0: the NULL stream), or
        blocking where `queue` is None; False where the backend has none (the
        driver then copies a row at a time: pitched_copies). Raises
        VendorError with the vendor's code."""
        return False

    def memory_hint(self, api: str, ptr: int, count: int, location_type: int, location_id: int,
                    *rest: int) -> None:
        """A managed memory range's prefetch (cuMemPrefetchAsync_v2: flags,
        then the vendor stream, 0: NULL) or advice (cuMemAdvise_v2: the
        advice) to the vendor's driver, whose managed memory moves; nothing
        where the one memory is ours. Raises VendorError with its code."""
        return None

    def fill_pitched(self, dst: int, pitch: int, value: int, element_size: int, width: int,
                     height: int, queue: int | None) -> bool:
        """cuMemsetD2D{8,16,32}: `height` rows `pitch` bytes apart of `width`
        elements of `element_size` bytes set to `value`, in one call of the
        vendor's (as copy_pitched: asynchronous in `queue`, blocking where it
        is None); False where the backend has none (a row at a time)."""
        return False

    def launch_host_func(self, queue: int, fn: int, user_data: int) -> bool:
        """Has the vendor call host function `fn(user_data)` from its own
        thread once `queue` (a vendor stream, 0: the NULL stream) reaches it,
        as CUDA's cuLaunchHostFunc; False where the backend cannot (the
        driver then calls it at once, after the device's work)."""
        return False

    def add_stream_callback(self, queue: int, stream: int, callback: int,
                            user_data: int) -> bool:
        """launch_host_func for cuStreamAddCallback's
        `callback(stream, status, user_data)` (`stream`: the application's)."""
        return False

    # The device's default pool where the vendor's driver is underneath: its
    # own stream-ordered allocator (cudaMallocAsync natively), blocks reused
    # and released in the streams' own order by the vendor.
    @property
    def vendor_default_pool(self) -> bool:
        """Whether the device's default pool is the vendor's (default_pool_*)."""
        return False

    def default_pool_alloc(self, nbytes: int, queue: int) -> int:
        """A block of the vendor's default pool, ordered in `queue` (a
        vendor stream, 0: the NULL stream); raises CudaError with the
        vendor's code."""
        raise NotImplementedError(f"the {self.name} backend has no default pool of its own")

    def default_pool_free(self, address: int, queue: int) -> None:
        """Frees a block of the vendor's default pool in `queue`'s order."""
        raise NotImplementedError(f"the {self.name} backend has no default pool of its own")

    def default_pool_attribute(self, attr: int, value: int | None = None) -> int:
        """The vendor's default pool's attribute `attr` (CUmemPool_attribute),
        set to `value` first where one is given; raises CudaError with the
        vendor's code."""
        raise NotImplementedError(f"the {self.name} backend has no default pool of its own")

    def default_pool_trim(self, keep: int) -> None:
        """cuMemPoolTrimTo of the vendor's default pool."""
        raise NotImplementedError(f"the {self.name} backend has no default pool of its own")

    @property
    def exports_memory(self) -> bool:
        """Whether ipc_export can (CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE)."""
        return False

    def ipc_export(self, address: int) -> tuple[int, int] | None:
        """Makes the allocation starting at `address` one another process can
        map: (a file descriptor of this process holding it, the allocation's
        offset there); None where the backend cannot (the driver answers
        CUDA_ERROR_NOT_SUPPORTED)."""
        return None

    def ipc_import(self, fd: int, offset: int, nbytes: int, at: int = 0) -> int:
        """Maps [offset, offset + nbytes) of a memfd (`fd` opened here: what
        another process's ipc_export gave, a virtual memory allocation, a
        shared pool's memory): the address the device reaches it at; `at`:
        over whole pages of a reservation there (shared_memory.reserve)."""
        raise NotImplementedError(f"the {self.name} backend exports no memory")

    def ipc_close(self, address: int) -> None:
        """Unmaps what ipc_import returned (back to its reservation, if any)."""
        raise NotImplementedError(f"the {self.name} backend exports no memory")

    @property
    def virtual_memory(self) -> bool:
        """Whether the device reaches memory mapped with ipc_import at an
        address of the driver's choosing (cuMemAddressReserve, cuMemMap,
        cuda/virtual_memory.py) and shares it as memfds (their POSIX file
        descriptor handles; pools' IPC)."""
        return False

    def reserve(self, nbytes: int, alignment: int, hint: int = 0) -> int:
        """Inaccessible address space (whole pages, at `alignment`, at `hint`
        where free) for ipc_import(at=), which copies may reach as a whole
        (the driver checks what is mapped and accessible there)."""
        raise NotImplementedError(f"the {self.name} backend reserves no addresses")

    def release_reservation(self, base: int) -> None:
        """Frees a reservation of reserve(), nothing mapped there any more."""
        raise NotImplementedError(f"the {self.name} backend reserves no addresses")

    # -- the driver's C launch fast path (zmlir/runtime/cuda/fastpath.c) -----------
    def fast_launch_points(self) -> dict[str, int] | None:
        """Addresses of the C entry points fastpath.c launches through ("launch":
        a cuLaunchKernel; or "set_arg", "enqueue", "flush", "queue" and the
        event calls it retires launches with, "release_event",
        "get_event_info" and "wait_for_events", for OpenCL), and those of
        events (fast_event), or None: every launch and event call takes the
        Python path."""
        return None

    def reserve_shared(self, kernel: Any, window: int) -> None:
        """Readies `kernel` to launch with a shared window of `window` bytes
        (static plus dynamic): the application opted it in
        (cuFuncSetAttribute). The passthrough opts NVIDIA's function in at
        once, so that its launches above 48 KiB stay on fastpath.c's path;
        elsewhere nothing needs doing."""
        return None

    def shared_reserved(self, kernel: Any, window: int) -> None:
        """fastpath.c opted `kernel` in to `window` bytes itself (the
        passthrough's cuFuncSetAttribute in C): what reserve_shared would
        have recorded."""
        return None

    def fast_kernel(self, kernel: Any, info: Any,
                    nparams: int) -> tuple[str, int, int, int, int] | None:
        """(kind "cuda"/"opencl", native kernel address, static shared bytes,
        the largest shared window launchable without the Python path, max
        threads per block) of a kernel, or None if fastpath.c cannot launch it."""
        return None

    def close(self) -> None:
        return None
