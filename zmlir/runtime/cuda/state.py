"""The driver's state and the helpers every area of the API shares: the
current context (a per-thread stack), its sticky error, argument checks,
C pointers and output parameters, the default-stream rule and the work a
capturing stream records.

Each area of the API is a class deriving DriverState in its own module
(device.py, context.py, module.py, function.py, memory.py, mempool.py,
memcpy.py, stream.py, graph.py, event.py, launch.py); driver.Driver
composes them and binds its cuXxx methods to the exported symbols.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.fastpath import FastPath
from zmlir.runtime.cuda.globaltimer import GlobalTimer
from zmlir.runtime.cuda.graph.memory import GraphMemory
from zmlir.runtime.cuda.graph.model import WorkParams, record
from zmlir.runtime.cuda.heap import DeviceHeaps
from zmlir.runtime.cuda.memory_map import AllocationMap
from zmlir.runtime.cuda.objects import Context, Handles, Stream
from zmlir.runtime.cuda.printf import DevicePrintf
from zmlir.runtime.cuda.stacks import StackPools
from zmlir.runtime.cuda.traps import TrapWatch, trap_error

if TYPE_CHECKING:
    from zmlir.runtime.cuda.mempool import MemoryPool

E = CUresult
# The errors after which NVIDIA's driver refuses every call on the context
# (a kernel faulted, trapped or asserted; the real GPU's under the passthrough).
STICKY_ERRORS = frozenset({E.CUDA_ERROR_ILLEGAL_ADDRESS, E.CUDA_ERROR_LAUNCH_TIMEOUT,
                           E.CUDA_ERROR_ASSERT, E.CUDA_ERROR_HARDWARE_STACK_ERROR,
                           E.CUDA_ERROR_ILLEGAL_INSTRUCTION, E.CUDA_ERROR_MISALIGNED_ADDRESS,
                           E.CUDA_ERROR_INVALID_ADDRESS_SPACE, E.CUDA_ERROR_INVALID_PC,
                           E.CUDA_ERROR_LAUNCH_FAILED})


def log(message: str) -> None:
    print(f"zmlir: {message}", file=sys.stderr, flush=True)


class DriverState:
    """The state behind the API: one process, one backend device."""

    def __init__(self, ffi: Any, lib: Any) -> None:
        self.ffi, self.lib = ffi, lib
        self.handles = Handles()
        self.device: Any = None  # backends.Backend
        self.initialized = False
        self.init_pid = 0  # the process that called cuInit
        self.primary: Context | None = None
        self.primary_handle = 0
        self.process_error = 0  # sticky: a kernel trapped, asserted or faulted (make_sticky)
        self.destroyed_contexts: set[int] = set()  # handles: their calls answer 709
        self.tls = threading.local()
        self.allocations = AllocationMap()
        self.host_allocations: dict[int, Any] = {}
        self.host_ranges = AllocationMap()  # page-locked: cuMemAllocHost's, registered
        self.stream_attributes: dict[tuple[int, int], bytes] = {}  # (stream, CUstreamAttrID)
        self.pools: list[MemoryPool] = []  # live pools (settled at synchronizations)
        self.pool_of: dict[int, MemoryPool] = {}  # pool allocation -> its pool
        self.default_pool = 0  # handles
        self.current_pool = 0
        # Pools of the other kinds (cuMemGetMemPool): (CUmemAllocationType, "host" or
        # "device") -> the default's and the current one's handle.
        self.kind_pools: dict[tuple[int, str], int] = {}
        self.kind_current_pools: dict[tuple[int, str], int] = {}
        self.managed: set[int] = set()  # managed allocations (CU_POINTER_ATTRIBUTE_IS_MANAGED)
        # Compiled modules by their PTX's sha256, the most recent last: a
        # module loaded again skips the compiler (module.py).
        self.compiled_by_hash: dict[str, Any] = {}
        self.keepalive: list[Any] = []
        self.warned: set[str] = set()
        self.lock = threading.RLock()
        # Set by driver.bind() when ZMLIR_TRACE asks for a call log.
        self.tracer: Any = None
        self.fast = FastPath(ffi, lib)
        self.allocations.journal = self.fast.take_allocations  # the C path's (fastpath.c)
        # Device printf and assert output (printf.py).
        self.printf = DevicePrintf(log, self.fast.sync_work)
        self.globaltimer = GlobalTimer(log)  # %globaltimer's calibration (globaltimer.py)
        self.heaps = DeviceHeaps()  # each context's device malloc heap (heap.py)
        self.stacks = StackPools()  # each context's software stacks (stacks.py)
        self.traps = TrapWatch()  # launched modules' trap words (traps.py)
        self.graph_memory = GraphMemory(self._graph_memory_alloc, self._graph_memory_free)
        # Whether captures may be the vendor's was decided (graph/capture.py).
        self.vendor_captures_decided = False

    # -- the current context ------------------------------------------------

    def context_stack(self) -> list[int]:
        """This thread's stack of current contexts (handles; the top is current)."""
        stack = getattr(self.tls, "stack", None)
        if stack is None:
            stack = self.tls.stack = []
        return stack

    def current_changed(self) -> None:
        """Tells the launch fast path this thread's current context (none
        while it holds a sticky error: the Python path returns that)."""
        stack = self.context_stack()
        self.fast.set_context(stack[-1] if stack and not self.sticky_error() else 0)

    def sticky_error(self, needs_context: bool = True) -> int:
        """The process's sticky error (0: none); a wild access of a kernel
        since the last call makes it CUDA_ERROR_ILLEGAL_ADDRESS. Where the
        call works on the current context and that was destroyed, the
        call's own 709 comes first, as on an H200."""
        stack = self.context_stack()
        if needs_context and stack and not isinstance(self.handles.find(stack[-1]), Context):
            return 0
        self.take_kernel_errors()
        return self.process_error

    def take_kernel_errors(self) -> None:
        """What kernels did since the last look, each error making the
        process's sticky: wild accesses (faults.c), kernels the backend
        reported failed, trap words set (traps.py). Kernels still running
        are looked at again later; a synchronisation point waits for the
        device first."""
        completed, faulted, failed = self.fast.poll()  # retires ended launches: first
        if faulted:
            faults, first = self.fast.take_faults()
            if faults and not self.process_error:
                where = f"the address 0x{first:x}" if first else "a non-canonical address"
                log(f"a kernel accessed {where} illegally ({faults} faults): later calls "
                    "return CUDA_ERROR_ILLEGAL_ADDRESS")
                self.make_sticky(E.CUDA_ERROR_ILLEGAL_ADDRESS)
        if failed and self.fast.take_failed_launches() and not self.process_error:
            log("a kernel failed (the backend's report): later calls return "
                "CUDA_ERROR_LAUNCH_FAILED")
            self.make_sticky(E.CUDA_ERROR_LAUNCH_FAILED)
        if not self.traps.watching():
            return
        for kernel, value in self.traps.take(completed, self._take_word):
            code, what = trap_error(value)
            if os.environ.get("ZMLIR_LOG") or code != E.CUDA_ERROR_ASSERT:
                log(f"kernel {kernel} {what}: the context's later calls return {code.name}")
            self.make_sticky(code)

    def _take_word(self, address: int) -> int:
        """Reads and clears a module's 32-bit trap word."""
        if self.device.host_accessible(address):
            return self.fast.take_word(address)
        value = int.from_bytes(self.device.copy_from_device(address, 4), "little")
        if value:
            self.device.copy_to_device(address, bytes(4))
        return value

    def make_sticky(self, code: CUresult) -> None:
        """Every later call of the process returns `code` (a kernel's fault,
        trap or failed assert), in every context, new ones too, as on an
        H200 (test/cuda/adversarial/recorded/): NVIDIA's documents say the
        process must be restarted. The first error stays."""
        if not self.process_error:
            self.process_error = int(code)
        # Other threads' launch fast paths hold a context: every thread's
        # cached context is stale, so their next launches take the Python
        # path, which returns the sticky error.
        self.fast.context_destroyed()

    def check_sticky(self, flush: bool = False, needs_context: bool = True) -> None:
        """Raises the process's sticky error, if it has one (after printing
        the device's output so far where `flush`: a sync point)."""
        code = self.sticky_error(needs_context)
        if code:
            if flush:
                self.sync_point()
            raise CudaError(code, "a kernel trapped, asserted or faulted earlier (sticky)")

    def current_context(self) -> Context:
        self.require_init()
        stack = self.context_stack()
        if not stack:
            raise CudaError(E.CUDA_ERROR_INVALID_CONTEXT, "no current context")
        context = self.handles.find(stack[-1])
        if not isinstance(context, Context):  # another thread destroyed it (NVIDIA: 709)
            raise CudaError(E.CUDA_ERROR_CONTEXT_IS_DESTROYED, f"context 0x{stack[-1]:x}")
        return context

    def primary_context(self) -> int:
        """The handle of the device's primary context (created on first use)."""
        if self.primary is None:
            self.primary = Context(device=0, primary=True, refcount=0)
            self.primary_handle = self.handles.add(self.primary)
        return self.primary_handle

    # -- checks and diagnostics -----------------------------------------------

    def unsupported(self, api_name: str, why: str) -> int:
        """Logs (once per API and reason) and returns CUDA_ERROR_NOT_SUPPORTED."""
        key = f"{api_name}: {why}"
        if key not in self.warned:
            self.warned.add(key)
            log(f"unsupported CUDA driver API: {api_name} ({why}); "
                "returning CUDA_ERROR_NOT_SUPPORTED")
        return E.CUDA_ERROR_NOT_SUPPORTED

    def require_init(self) -> None:
        if not self.initialized:
            raise CudaError(E.CUDA_ERROR_NOT_INITIALIZED)
        if self.init_pid != os.getpid():
            # As NVIDIA's: a child forked after cuInit has no driver (numba
            # tells users so on this answer; the backend's threads are gone).
            raise CudaError(E.CUDA_ERROR_NOT_INITIALIZED, "forked after cuInit")

    def check_device(self, dev: int) -> None:
        self.require_init()
        if dev != 0:
            raise CudaError(E.CUDA_ERROR_INVALID_DEVICE, f"device {dev}")

    # -- C values ---------------------------------------------------------------

    def ptr(self, value: Any) -> int:
        return int(self.ffi.cast("uintptr_t", value))

    def out(self, pointer: Any, value: Any) -> None:
        if pointer == self.ffi.NULL:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "null output pointer")
        pointer[0] = value

    def handle_ptr(self, handle: int) -> Any:
        return self.ffi.cast("void *", handle)

    def host_view(self, address: int, nbytes: int) -> memoryview:
        if address == 0 and nbytes:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "null host pointer")
        return memoryview(self.ffi.buffer(self.ffi.cast("char *", address), nbytes))

    # -- device memory ------------------------------------------------------------

    def total_memory(self) -> int:
        return self.device.total_memory()

    def is_device(self, address: int) -> bool:
        return self.allocations.containing(address) is not None

    def check_device_range(self, address: int, nbytes: int) -> None:
        if self.allocations.containing(address, nbytes) is not None:
            return
        raise CudaError(E.CUDA_ERROR_INVALID_VALUE,
                        f"[0x{address:x}, +{nbytes}) is not inside a device allocation")

    def _graph_memory_alloc(self, nbytes: int) -> int:
        address = int(self.device.alloc(nbytes))
        self.allocations.add(address, nbytes, owned=False)  # cuMemFree frees it as a graph's
        return address

    def _graph_memory_free(self, address: int) -> None:
        self.allocations.forget(address)
        self.device.free(address)

    def sync_point(self) -> None:
        """A synchronisation point: device printf and assert output so far
        appears on stdout (printf.py), before the call reports any error."""
        with self.lock:
            self.printf.flush()

    def own_work_is_launches(self, s: Stream | None) -> bool:
        """Whether created stream `s`'s work is its launches in the backend's
        one queue, each watched to its end (fastpath.c: a stream's own work):
        then its synchronisation waits for its last launch, its query asks
        about it and its copies wait for it, not for other streams' later
        work (which may wait for the host). Not where a host function of the
        stream is queued (no launch number covers it) or a printf buffer is
        to be flushed (read through the queue, after everything)."""
        return (s is not None and not s.vendor and not s.untracked and self.device.launch_events
                and self.fast.tracks_launches and not self.printf.buffer)

    def stream_launched(self, s: Stream | None, stream: Any) -> None:
        """Every launch enqueued so far is stream `s`'s (fastpath.c: a stream's
        own work), where its work is in the backend's one queue."""
        if s is not None and not s.vendor:
            self.fast.stream_launched(self.ptr(stream))

    def own_work_waited(self, s: Stream | None, stream: Any) -> bool:
        """Waits for stream `s`'s own work where own_work_is_launches, or in
        its vendor stream (and ours for it) where it has one and no printf
        buffer is to be flushed: True, else False (the caller waits for the
        device)."""
        if s is not None and s.vendor:
            return not self.printf.buffer and self.device.stream_synchronize(self.ptr(stream))
        return self.own_work_is_launches(s) and self.fast.stream_wait(self.ptr(stream))

    def settle_pools(self) -> None:
        """At a synchronization: pools release memory above their thresholds."""
        for pool in self.pools:
            pool.settle(self.device.queue_done)

    # -- streams (one in-order queue: ordering is always kept) ----------------------

    def stream(self, handle: Any) -> Stream | None:
        value = self.ptr(handle)
        if value in (0, 1, 2):  # legacy, per-thread default streams
            return None
        return self.handles.get(value, Stream)

    def vendor_queue(self, handle: Any) -> int:
        """The backend's stream that stream `handle`'s kernels and event
        records go to (Backend.vendor_stream: the handle itself), else 0
        (the one queue)."""
        s = self.stream(handle)
        return self.ptr(handle) if s is not None and s.vendor else 0

    def enqueue(self, stream: Any, work: Callable[[], int], params: Any = None) -> int:
        """Runs `work` now, or, while `stream` is being captured, records
        the graph node of `params` (graph/model.py) that does it.
        Asynchronous work is no synchronisation point, even where it is a
        blocking call's body run at once."""
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            record(self.handles, s, params if params is not None else WorkParams(work))
            return E.CUDA_SUCCESS
        before = self.fast.launches_enqueued()
        with self.printf.held():
            code = work()
        if self.fast.launches_enqueued() != before:
            self.stream_launched(s, stream)  # what it launched is the stream's
        return code
