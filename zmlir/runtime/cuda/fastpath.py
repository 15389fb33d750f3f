"""The Python side of the C launch fast path (fastpath.c).

cuLaunchKernel and cuLaunchKernelEx are C functions in our libcuda.so.1.
They launch without entering Python when the function, the stream and the
calling thread's context are in fastpath.c's table; this class keeps that
table in step with the driver's state. So are cuEventRecord(WithFlags),
cuEventQuery, cuEventSynchronize and cuEventElapsedTime(_v2): an event the
backend keeps as one of the real driver's (the passthrough) is registered
once recorded outside a capture, and those calls go to the real driver.
Everything the table does not cover falls back to the Python driver, which
stays the reference: tracing on (ZMLIR_TRACE), ZMLIR_FAST_LAUNCH=0, a
backend without C entry points (events: every backend but the passthrough),
a function whose parameters the table cannot describe, a capturing stream
(for events: any capture under way), an event recorded into a capture, a
synchronisation with Python work to do (sync_work), an error the real
driver answers.
The context-local storage get cudart calls before each launch (an export-
table slot) is answered from a C mirror of the driver's storage as well,
and so is a context's unique id (TOOLS_CONTEXT slot 4, which NVIDIA's
cuBLASLt asks in each GEMM): the current context's, or
NVIDIA's slot's for a context the driver found NVIDIA's (vendor_context).
So are cuMemAlloc_v2, cuMemFree_v2 and cuMemsetD8/16/32 (_v2, Async) where
the backend hands their real entry points over (the passthrough): the
allocations and frees made in C are journalled, and the driver's map of
allocations takes the journal before it answers (take_allocations); an
allocation the Python driver must see freed is claimed (claim_allocation).
A native function's attributes (cuFuncGetAttribute, cuKernelGetAttribute,
and their sets but the dynamic shared memory's) go to the real driver from C,
and a stream's capture status is answered there while nothing captures:
NVIDIA's cuBLAS asks both in every GEMM.
cuFuncSetAttribute and cuKernelSetAttribute are answered in C when they
change nothing: a registered function opted in to the dynamic shared memory
its launch window already holds (llm.c sets it before every timed launch);
so is cuKernelGetFunction of a registered function (cudart's before each
cudaFuncSetAttribute), cuLibraryGetKernel of a kernel the driver made as its
library loaded (library_kernel), and the optional export tables' slots of no
known meaning, which cudart calls around every runtime call (quiet_stub).
OpenCL launches, on either path, return while their kernels run: fastpath.c
keeps the launches in flight and retires them as they end (launches_done,
launches_completed, take_failed_launches).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class Launch:
    """A launch of the Python path (FastPath.launch_lock): the backend's
    event to watch, then the launch's number (fastpath.c: launches in flight)."""

    event: Any = None
    number: int = 0


# fastpath.c's entry kinds.
KIND_CUDA = 1
KIND_OPENCL = 2
KIND_BY_NAME = {"cuda": KIND_CUDA, "opencl": KIND_OPENCL}
# claim_allocation's answer for a block of the vendor's default pool.
ASYNC_ALLOCATION = 2


class FastPath:
    def __init__(self, ffi: Any, lib: Any) -> None:
        self.ffi = ffi
        # A driver bound to something other than our library (no C side):
        # every call here does nothing and every launch takes the Python path.
        self.lib = lib if hasattr(lib, "zmlir_fast_function") else None
        self.backend_ready = False
        self.on = False
        self._points: dict[str, int] = {}  # the backend's entry points (set_backend)
        self._launch_lock = threading.Lock()  # without the C side

    def enable(self, tracing: bool) -> None:
        on = not tracing and os.environ.get("ZMLIR_FAST_LAUNCH", "1") != "0"
        self.on = on and self.lib is not None
        if self.lib is not None:
            self.lib.zmlir_fast_enable(int(on))

    # -- the process's exit (fastpath.c) -------------------------------------------
    def enter(self) -> None:
        """Counts a call into the driver (pair it with leave()); once the
        process is exiting, a call from another thread waits for its end."""
        if self.lib is not None:
            self.lib.zmlir_enter()

    def leave(self) -> None:
        """Ends a call enter() counted, a call of the Python driver's (a created
        stream's synchronisation in C is then the context's: fastpath.c)."""
        if self.lib is not None:
            self.lib.zmlir_leave_python()

    def register_exit(self) -> None:
        """(Re)registers the exit handler: after the backend loaded code whose
        static destructors exit() runs, so that the handler runs before them."""
        if self.lib is not None:
            self.lib.zmlir_register_exit()

    def set_backend(self, device: Any) -> None:
        """Hands the backend's C entry points to fastpath.c (once, at cuInit),
        and the SASS architecture it runs (0: none; fastpath.c tells libraries
        that keep SASS and PTX apart another compute capability only then)."""
        self.register_exit()
        if self.lib is not None:
            self.lib.zmlir_fast_native_sm(device.native_sm())
        points = device.fast_launch_points()
        if self.lib is None or points is None:
            return
        for name, address in points.items():
            if self.lib.zmlir_fast_set_entry(name.encode(), address) != 0:
                raise ValueError(f"fastpath.c has no backend entry point {name!r}")
        self._points = points
        self.backend_ready = True

    def default_pool_current(self, current: bool) -> None:
        """Whether the vendor's default pool is the device's current pool:
        cuMemAllocAsync takes the C path only then (the backend's
        mem_alloc_async allocates from the vendor's current pool)."""
        address = self._points.get("mem_alloc_async")
        if self.lib is not None and address is not None:
            self.lib.zmlir_fast_set_entry(b"mem_alloc_async", address if current else 0)

    def keep_signal_dispositions(self, opening: bool) -> None:
        """Around opening the backend (`opening`: before it, else after):
        the process's handlers of crash signals stay its own, not those
        Intel's runtime installs (faults.c)."""
        if self.lib is not None:
            (self.lib.zmlir_signals_save if opening else self.lib.zmlir_signals_restore)()

    def install_fault_handler(self) -> None:
        """Kernel memory faults become CUDA_ERROR_ILLEGAL_ADDRESS instead of
        killing the process (faults.c), from cuInit on."""
        if self.lib is not None:
            self.lib.zmlir_faults_install()

    def take_faults(self) -> tuple[int, int]:
        """How many wild accesses kernels made since the last call, and the
        first one's address (faults.c)."""
        if self.lib is None:
            return 0, 0
        first = self.ffi.new("uintptr_t *")
        return int(self.lib.zmlir_faults_take(first)), int(first[0])

    def guard_faults(self, begin: int, size: int, add: bool) -> bool:
        """Makes a kernel's access to the inaccessible pages of [begin, begin +
        size) a fault (faults.c) rather than the process's end, or no longer;
        False if no more ranges can be guarded."""
        if self.lib is None:
            return True
        return int(self.lib.zmlir_faults_guard(begin, size, int(add))) == 0

    def function(self, handle: int, device: Any, kernel: Any, info: Any,
                 param_sizes: list[int] | None, window_limit: int, param_bytes: int = 0,
                 native: bool = False) -> bool:
        """Registers (or refreshes) a function; False if the fast path cannot
        launch it. Launches with a shared window (static plus dynamic bytes)
        above `window_limit` take the Python path, which refuses them.
        `param_bytes`: the parameters packed as in `extra`, each at its
        alignment (a launch's `extra` holding fewer is the Python path's).
        `native`: NVIDIA's machine code, whose attributes NVIDIA's driver
        answers (fastpath.c asks it for cuFuncGetAttribute and sets them)."""
        if not self.on or not self.backend_ready or param_sizes is None:
            return False
        entry = device.fast_kernel(kernel, info, len(param_sizes))
        if entry is None:
            return False
        kind, target, static_shared, shared_limit, max_threads = entry
        # fastpath.c keeps each parameter's size in a byte, for OpenCL's
        # clSetKernelArg: larger by-value arrays take the Python path there.
        # The real driver takes the application's parameters as they are
        # (NVIDIA's cuBLAS kernels take a struct of some hundred bytes).
        if kind == "opencl" and max(param_sizes, default=0) > 255:
            return False
        param_sizes = [min(size, 255) for size in param_sizes]
        optin = max(0, window_limit - info.static_shared_bytes)  # cuFuncSetAttribute's value
        shared_limit = min(shared_limit, window_limit)
        if info.max_threads > 0:  # .maxntid/.reqntid: above, the Python path
            max_threads = min(max_threads, info.max_threads)
        sizes = self.ffi.new("unsigned char[]", param_sizes or [0])
        if self.lib.zmlir_fast_function(handle, KIND_BY_NAME[kind], target, static_shared,
                                        shared_limit, optin, max_threads,
                                        len(param_sizes), sizes, param_bytes,
                                        int(native)) != 0:
            return False
        # An OpenCL kernel's grid variant and work-group shapes
        # (OpenCLBackend.fast_opencl_kernel), for fastpath.c's launches.
        facts = getattr(device, "fast_opencl_kernel", None)
        if facts is not None:
            self.lib.zmlir_fast_opencl_kernel(handle, *facts(kernel, info))
        return True

    def optin(self, handle: int) -> int | None:
        """The MAX_DYNAMIC_SHARED_SIZE_BYTES fastpath.c set for function
        `handle` since it was last registered, or None."""
        if self.lib is None:
            return None
        value = self.ffi.new("unsigned int *")
        return int(value[0]) if self.lib.zmlir_fast_optin(handle, value) else None

    def stream(self, handle: int, vendor: int = 0) -> None:
        """Registers stream `handle`; `vendor`: the backend's stream its
        kernels and events go to (Backend.vendor_stream; 0: the queue)."""
        if self.lib is not None:
            self.lib.zmlir_fast_stream(handle, vendor)

    def event(self, handle: int, device: Any, mark: Any) -> None:
        """Registers event `handle`, just recorded outside a capture at
        `mark`, where the backend's marks are events fastpath.c can use."""
        target = device.fast_event(mark) if self.on and self.backend_ready else None
        if target:
            self.lib.zmlir_fast_event(handle, target)

    def graph(self, handle: int, target: int) -> None:
        """Registers executable graph `handle`, replayed as the backend's
        `target` (graph/vendor.py): its launches are then fastpath.c's."""
        if self.on and self.backend_ready and target:
            self.lib.zmlir_fast_graph(handle, target)

    def graph_node(self, node: int, graph: int, target: int) -> None:
        """Registers kernel node `node` (the application's) of executable
        graph `graph` as the backend's node `target` of its replay: new
        parameters for it are then fastpath.c's (take_graph_params)."""
        if self.on and self.backend_ready and target:
            self.lib.zmlir_fast_graph_node(node, graph, target)

    def take_graph_params(self) -> list[tuple[int, int, int, tuple[int, int, int],
                                              tuple[int, int, int], int, tuple[bytes, ...]]]:
        """The kernel node parameters the C path set since the last call, in
        order: (graph, node, function, grid, block, shared, each argument's bytes)."""
        if self.lib is None or not self.lib.zmlir_fast_graph_pending():
            return []
        records = self.ffi.new("struct zmlir_graph_record[]", 16)
        taken = []
        while True:
            n = int(self.lib.zmlir_fast_graph_take(records, 16))
            for r in records[0:n]:
                data, at, args = bytes(r.args), 0, []
                for size in r.sizes[0:r.nargs]:
                    args.append(data[at:at + size])
                    at += size
                taken.append((int(r.graph), int(r.node), int(r.func), tuple(r.grid),
                              tuple(r.block), int(r.shared), tuple(args)))
            if n < 16:
                return taken

    def sync_work(self, delta: int) -> None:
        """One thing more (or less, -1) that a synchronisation point must do
        in Python (a printf buffer, a memory pool): cuEventSynchronize takes
        the Python path while there are any."""
        if self.lib is not None:
            self.lib.zmlir_fast_sync_work_add(delta)

    # -- captures on the vendor's driver (fastpath.c: stream capture) ---------------

    def vendor_capture_enable(self, on: bool) -> None:
        """Whether captures of our streams may begin on the vendor's driver."""
        if self.on and self.backend_ready and "begin_capture" in self._points:
            self.lib.zmlir_fast_vendor_capture_enable(int(on))

    def begin_vendor_capture(self, stream: int, mode: int) -> bool:
        """Begins the vendor's capture of `stream` as fastpath.c's
        cuStreamBeginCapture_v2 would: False where it does not."""
        return self.lib is not None and self.backend_ready and \
            self.lib.zmlir_fast_begin_vendor_capture(stream, mode) == 0

    def vendor_captures(self) -> bool:
        """Whether the vendor's driver captures streams of ours (fastpath.c
        began them): a call of the Python path ends them first (demote)."""
        return self.lib is not None and bool(self.lib.zmlir_fast_vendor_captures_under_way())

    @contextmanager
    def capture_lock(self) -> Iterator[None]:
        """Held while captures on the vendor's driver end: fastpath.c's work
        on a capturing stream waits, then takes the Python path."""
        self.lib.zmlir_fast_capture_lock(1)
        try:
            yield
        finally:
            self.lib.zmlir_fast_capture_lock(0)

    def vendor_capture_mode(self, stream: int) -> int | None:
        """Under capture_lock: the CUstreamCaptureMode the application began
        the vendor's capture of `stream` with; None: it captures nothing."""
        mode = int(self.lib.zmlir_fast_stream_capture(stream, 0, self.ffi.NULL, self.ffi.NULL))
        return None if mode < 0 else mode

    def end_vendor_capture(self, stream: int) -> tuple[int, int]:
        """Under capture_lock: ends the vendor's capture of `stream`: (its
        driver's answer, its graph: 0 for none), which the caller takes over."""
        code, graph = self.ffi.new("int *"), self.ffi.new("uintptr_t *")
        self.lib.zmlir_fast_stream_capture(stream, 1, code, graph)
        return int(code[0]), int(graph[0])

    def updates_pending(self) -> bool:
        """Whether fastpath.c updated executable graphs the Python driver has
        not looked at since (take_update)."""
        return self.lib is not None and bool(self.lib.zmlir_fast_updates_pending())

    def take_captured(self, graph: int) -> bool:
        """Takes the vendor's captured graph `graph` (the application's
        CUgraph) over from fastpath.c: False where it has none such."""
        return self.lib is not None and bool(self.lib.zmlir_fast_captured_take(graph))

    def take_update(self, graph_exec: int) -> tuple[int, bool, bool]:
        """(the captured graph fastpath.c last updated executable graph
        `graph_exec`'s vendor copy from, 0: none; whether an update failed;
        whether the application destroyed that graph: call update_done)."""
        if self.lib is None:
            return 0, False, False
        failed, destroyed = self.ffi.new("int *"), self.ffi.new("int *")
        graph = int(self.lib.zmlir_fast_update_take(graph_exec, failed, destroyed))
        return graph, bool(failed[0]), bool(destroyed[0])

    def update_done(self, graph: int) -> None:
        if self.lib is not None and graph:
            self.lib.zmlir_fast_update_done(graph)

    def forget(self, handle: int) -> None:
        if self.lib is not None:
            self.lib.zmlir_fast_forget(handle)

    def set_context(self, handle: int) -> None:
        """The calling thread's current context (0: none)."""
        if self.lib is not None:
            self.lib.zmlir_fast_set_context(handle)

    def context_destroyed(self) -> None:
        """A context was destroyed or took a sticky error: every thread's
        cached current context is stale (its next launch takes Python's path)."""
        if self.lib is not None:
            self.lib.zmlir_fast_context_destroyed()

    def capture(self, delta: int) -> None:
        if self.lib is not None:
            self.lib.zmlir_fast_capture(delta)

    @property
    def tracks_launches(self) -> bool:
        """Whether launches may return while their kernels run: fastpath.c
        watches each to its end (the backend's event)."""
        return self.lib is not None and self.backend_ready

    @contextmanager
    def launch_lock(self) -> Iterator[Launch]:
        """Held around a launch of the Python path: the backend's kernel
        objects (OpenCL binds arguments to them) are shared by every thread,
        and fastpath.c takes the same lock around its own launches. The
        launch puts the backend's event in the Launch (None: none to watch)
        and gets its number there once the lock is released."""
        launch = Launch()
        if self.lib is None:
            with self._launch_lock:
                yield launch
            return
        self.lib.zmlir_fast_launch_lock()
        event = 0
        try:
            yield launch
            event = int(self.ffi.cast("uintptr_t", launch.event)) if launch.event else 0
        finally:
            launch.number = int(self.lib.zmlir_fast_launch_unlock(event))

    def launches_done(self) -> bool:
        """Whether every launch so far has ended."""
        return bool(self.lib.zmlir_fast_launches_done()) if self.lib is not None else True

    def launches_enqueued(self) -> int:
        """How many launches have been enqueued so far (fastpath.c's ring)."""
        return int(self.lib.zmlir_fast_launches_enqueued()) if self.lib is not None else 0

    def stream_launched(self, handle: int) -> None:
        """Stream `handle`'s work includes every launch enqueued so far (the
        Python path's, for it). fastpath.c's own launches count themselves."""
        if self.lib is not None:
            self.lib.zmlir_fast_stream_launched(handle)

    def stream_ended(self, handle: int) -> bool | None:
        """Whether stream `handle`'s last launch has ended; None where
        fastpath.c does not know the stream."""
        ended = int(self.lib.zmlir_fast_stream_ended(handle)) if self.lib is not None else -1
        return None if ended < 0 else bool(ended)

    def stream_wait(self, handle: int) -> bool:
        """Waits for stream `handle`'s last launch (fastpath.c: a stream's own
        work on the backend's one queue); False where it cannot."""
        return self.lib is not None and bool(self.lib.zmlir_fast_stream_wait(handle))

    def poll(self) -> tuple[int, bool, bool]:
        """One look for kernels' errors: how many launches have ended (as
        launches_completed), and whether take_faults and take_failed_launches
        have anything to take."""
        if self.lib is None:
            return 0, False, False
        completed = self.ffi.new("unsigned long long *")
        news = int(self.lib.zmlir_fast_poll(completed))
        return int(completed[0]), bool(news & 1), bool(news & 2)

    def take_failed_launches(self) -> int:
        """Kernels the backend reported failed since the last call."""
        return int(self.lib.zmlir_fast_take_failed_launches()) if self.lib is not None else 0

    def take_word(self, address: int) -> int:
        """Reads and clears a 32-bit word of memory the host reaches, atomically."""
        if self.lib is not None:
            return int(self.lib.zmlir_fast_take_word(address))
        word = self.ffi.cast("uint32_t *", address)
        value, word[0] = int(word[0]), 0
        return value

    # -- device memory (fastpath.c's cuMemAlloc_v2, cuMemFree_v2) ---------------
    def take_allocations(self) -> list[tuple[int, int]]:
        """The allocations (address, size) and frees (address, 0) the C
        path made since the last call, in order."""
        if self.lib is None or not self.lib.zmlir_fast_mem_pending():
            return []
        records = self.ffi.new("struct zmlir_mem_record[]", 256)
        taken: list[tuple[int, int]] = []
        while True:
            n = int(self.lib.zmlir_fast_mem_take(records, 256))
            taken.extend((int(records[i].address), int(records[i].size)) for i in range(n))
            if n < 256:
                return taken

    def claim_allocation(self, address: int) -> int:
        """The Python driver frees the allocation at `address` from now on
        (the C path leaves it alone); whether the C path made it: 1 as
        cuMemAlloc, ASYNC_ALLOCATION as cuMemAllocAsync (a block of the
        vendor's default pool), else 0."""
        return int(self.lib.zmlir_fast_mem_claim(address)) if self.lib is not None else 0

    def allocation_kind(self, address: int) -> int:
        """What made the live allocation at `address` in C, as
        claim_allocation answers, leaving it the C path's."""
        return int(self.lib.zmlir_fast_mem_kind(address)) if self.lib is not None else 0

    def memory_calls(self) -> int:
        """Allocations, frees and memsets that took the C path so far."""
        return int(self.lib.zmlir_fast_memory_calls()) if self.lib is not None else 0

    def device_attribute(self, attrib: int, value: int) -> None:
        """Device 0's attribute `attrib` is `value` (it never changes):
        fastpath.c answers cuDeviceGetAttribute for it from now on."""
        if self.lib is not None:
            self.lib.zmlir_fast_device_attribute(attrib, value, os.getpid())

    def launches(self) -> int:
        """How many launches took the fast path so far."""
        return int(self.lib.zmlir_fast_launches()) if self.lib is not None else 0

    # -- context-local storage (cudart's per-launch export-table call) ------------
    def cls_get_slot(self, python_get: Any) -> Any:
        """The C function to put in the export table for a context-local
        storage get, falling back to `python_get` (a cffi callback); None:
        use `python_get` itself."""
        if not self.on:
            return None
        self.lib.zmlir_fast_cls_configure(int(self.ffi.cast("uintptr_t", python_get)))
        return self.ffi.cast("void *", self.lib.zmlir_fast_address(b"zmlir_fast_cls_get"))

    def context_id_slot(self, python_slot: Any, vendor_slot: Any) -> Any:
        """The C function to put in TOOLS_CONTEXT's slot 4 (a context's unique
        id, which NVIDIA's cuBLASLt asks in each GEMM), falling
        back to `python_slot` (a cffi callback); the contexts vendor_context
        names go to `vendor_slot` (NVIDIA's, or None). None: use `python_slot`."""
        if not self.on:
            return None
        vendor = int(self.ffi.cast("uintptr_t", vendor_slot)) if vendor_slot is not None else 0
        self.lib.zmlir_fast_context_id_configure(int(self.ffi.cast("uintptr_t", python_slot)),
                                                 vendor)
        return self.ffi.cast("void *", self.lib.zmlir_fast_address(b"zmlir_fast_context_id"))

    def context_check_slot(self) -> Any:
        """The C function to put in UNKNOWN_CHECKS' slot 2 (cudart 13 asks it
        in every cudaDeviceSynchronize); None: the Python body."""
        if not self.on:
            return None
        return self.ffi.cast("void *", self.lib.zmlir_fast_address(b"zmlir_fast_context_check"))

    def vendor_context(self, ctx: int, vendor: bool = True) -> None:
        """Context `ctx` is NVIDIA's, no handle of ours (its id is NVIDIA's
        slot's to give), or, vendor False, may be a handle of ours from now on."""
        if self.lib is not None:
            self.lib.zmlir_fast_vendor_context(ctx, int(vendor))

    def library_kernel(self, library: int, name: str, kernel: int) -> None:
        """Kernel `name` of `library` is function `kernel` (fastpath.c answers
        cuLibraryGetKernel for it from now on)."""
        if self.on:
            self.lib.zmlir_fast_library_kernel(library, name.encode(), kernel)

    def forget_library(self, library: int) -> None:
        if self.lib is not None:
            self.lib.zmlir_fast_forget_library(library)

    def quiet_stub(self) -> Any:
        """The C function answering CUDA_ERROR_NOT_SUPPORTED for an optional
        table's slot of no known meaning (cudart calls TOOLS_TLS's and
        TOOLS_RUNTIME_CALLBACK_HOOKS's around every runtime call); None: the
        Python stub, which traces and logs."""
        if not self.on or os.environ.get("ZMLIR_LOG"):
            return None
        return self.ffi.cast("void *", self.lib.zmlir_fast_address(b"zmlir_fast_not_supported"))

    def cls_put(self, ctx: int, key: int, value: int) -> None:
        if self.lib is not None:
            self.lib.zmlir_fast_cls_put(ctx, key, value)

    def cls_forget(self, ctx: int, key: int) -> None:
        """ctx 0: in every context; key 0: every key."""
        if self.lib is not None:
            self.lib.zmlir_fast_cls_forget(ctx, key)
