"""Events. Recording one asks the backend for a mark in its queue
(Backend.record_mark), in the order of the work enqueued before it, without
waiting for that work: the CUDA passthrough records the real driver's event
(one per event, re-recorded in place), so cuEventElapsedTime is the GPU's
time; OpenCL enqueues a marker whose profiled end is its time. Recorded in
a capturing stream, an event marks a fork point of the capture
(graph/capture.py), or with CU_EVENT_RECORD_EXTERNAL becomes an event
record node of its graph.

On the passthrough an event is one of the real driver's from its creation
(Backend.new_mark), registered with the C fast path (fastpath.c), which
records, queries, synchronises and times it with the real driver's
functions without entering Python, its first record included (a program's
first timed region holds no Python); these methods remain the reference,
taken whenever the fast path does not apply. A never-recorded event is the
real driver's never-recorded event, which answers as NVIDIA's does."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda.errors import CUresult
from zmlir.runtime.cuda.graph.capture import event_recorded
from zmlir.runtime.cuda.graph.model import EVENT_RECORD, EventParams, record
from zmlir.runtime.cuda.ipc import CU_EVENT_DISABLE_TIMING, CU_EVENT_INTERPROCESS, SharedEvent
from zmlir.runtime.cuda.objects import Event
from zmlir.runtime.cuda.state import DriverState

E = CUresult
CU_EVENT_RECORD_EXTERNAL = 0x1


class EventAPI(DriverState):
    def cuEventCreate(self, phevent: Any, flags: int) -> int:
        self.current_context()
        shared = None
        if flags & CU_EVENT_INTERPROCESS:
            if not flags & CU_EVENT_DISABLE_TIMING:  # NVIDIA requires both
                return E.CUDA_ERROR_INVALID_VALUE
            shared = SharedEvent.create()
        ev = Event(flags, shared=shared)
        ev.handle = self.handles.add(ev)
        if shared is None:
            ev.mark = self.device.new_mark(flags)
            if ev.mark is not None:  # recorded in C from the first record on
                self.fast.event(ev.handle, self.device, ev.mark)
        self.out(phevent, self.handle_ptr(ev.handle))
        return E.CUDA_SUCCESS

    def cuEventRecord(self, event: Any, stream: Any) -> int:
        self.require_init()
        ev = self.handles.get(self.ptr(event), Event)
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            event_recorded(ev, s)  # a fork point of the capture
            self.fast.forget(ev.handle)  # until recorded outside a capture again
            return E.CUDA_SUCCESS
        self.record_event(ev, self.vendor_queue(stream))
        return E.CUDA_SUCCESS

    def record_event(self, ev: Event, stream: int = 0) -> None:
        """Records an event outside a capture (cuEventRecord, graph event
        nodes), in vendor stream `stream` (0: the backend's queue)."""
        ev.capture, ev.capture_dependencies = None, []
        if ev.shared is not None:  # every process sees it (ipc.py)
            ev.shared.record(self.device)
            return
        ev.mark = self.device.record_mark(ev.mark, ev.flags, stream)
        self.fast.event(ev.handle, self.device, ev.mark)

    def cuEventRecordWithFlags(self, event: Any, stream: Any, flags: int) -> int:
        self.require_init()
        s = self.stream(stream)
        if flags & CU_EVENT_RECORD_EXTERNAL:
            if s is None or s.capture is None:  # an H200's answer outside a capture
                return E.CUDA_ERROR_ILLEGAL_STATE
            ev = self.handles.get(self.ptr(event), Event)
            record(self.handles, s, EventParams(ev.handle, EVENT_RECORD))  # recorded at each launch
            return E.CUDA_SUCCESS
        return self.cuEventRecord(event, stream)

    def _captured(self, ev: Event) -> bool:
        """Last recorded in a capture: an H200 answers CUDA_ERROR_INVALID_VALUE
        to a query, a wait or a time of it (until it is recorded again)."""
        return ev.capture is not None

    def cuEventSynchronize(self, event: Any) -> int:
        self.require_init()
        ev = self.handles.get(self.ptr(event), Event)
        if self._captured(ev):
            return E.CUDA_ERROR_INVALID_VALUE
        if ev.shared is not None:
            ev.shared.wait(ev.shared.last())
        if ev.mark is not None:
            self.device.wait_mark(ev.mark)
        self.sync_point()
        self.check_sticky()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuEventQuery(self, event: Any) -> int:
        self.require_init()
        ev = self.handles.get(self.ptr(event), Event)
        if self._captured(ev):
            return E.CUDA_ERROR_INVALID_VALUE
        if ev.shared is not None and not ev.shared.reached(ev.shared.last()):
            return E.CUDA_ERROR_NOT_READY
        if ev.mark is not None and not self.device.mark_reached(ev.mark):
            return E.CUDA_ERROR_NOT_READY
        return E.CUDA_SUCCESS

    def cuEventDestroy_v2(self, event: Any) -> int:
        self.require_init()
        ev = self.handles.get(self.ptr(event), Event)
        self.handles.remove(self.ptr(event), Event)
        self.fast.forget(ev.handle)
        if ev.mark is not None:
            self.device.release_mark(ev.mark)
        if ev.shared is not None:
            ev.shared.close()
        return E.CUDA_SUCCESS

    def cuEventElapsedTime(self, ms: Any, start: Any, end: Any) -> int:
        self.require_init()
        a = self.handles.get(self.ptr(start), Event)
        b = self.handles.get(self.ptr(end), Event)
        if ms == self.ffi.NULL:  # an H200's answer
            return E.CUDA_ERROR_INVALID_HANDLE
        if self._captured(a) or self._captured(b):
            return E.CUDA_ERROR_INVALID_VALUE
        if a.mark is None or b.mark is None:
            return E.CUDA_ERROR_INVALID_HANDLE
        if (a.flags | b.flags) & 0x2:  # CU_EVENT_DISABLE_TIMING
            return E.CUDA_ERROR_INVALID_HANDLE
        if not (self.device.mark_reached(a.mark) and self.device.mark_reached(b.mark)):
            return E.CUDA_ERROR_NOT_READY
        self.out(ms, self.device.elapsed_ms(a.mark, b.mark))
        return E.CUDA_SUCCESS

    cuEventElapsedTime_v2 = cuEventElapsedTime
