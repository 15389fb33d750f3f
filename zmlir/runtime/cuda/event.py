"""Events. Recording one asks the backend for a mark in its queue
(Backend.record_mark): a device timestamp where the backend has them (the
CUDA passthrough: the real driver's events, so cuEventElapsedTime is the
GPU's time and recording does not wait), else the host clock once the queue
has drained. Recorded in a capturing stream, an event marks a fork point of
the capture (graph/capture.py)."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda.errors import CUresult
from zmlir.runtime.cuda.graph.capture import event_recorded
from zmlir.runtime.cuda.objects import Event
from zmlir.runtime.cuda.state import DriverState

E = CUresult


class EventAPI(DriverState):
    def cuEventCreate(self, phevent: Any, flags: int) -> int:
        self.current_context()
        self.out(phevent, self.handle_ptr(self.handles.add(Event(flags))))
        return E.CUDA_SUCCESS

    def cuEventRecord(self, event: Any, stream: Any) -> int:
        self.require_init()
        ev = self.handles.get(self.ptr(event), Event)
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            event_recorded(ev, s)  # a fork point of the capture
            return E.CUDA_SUCCESS
        self.record_event(ev)
        return E.CUDA_SUCCESS

    def record_event(self, ev: Event) -> None:
        """Records an event outside a capture (cuEventRecord, graph event nodes)."""
        ev.capture, ev.capture_dependencies = None, []
        if ev.mark is not None:
            self.device.release_mark(ev.mark)
        ev.mark = self.device.record_mark()

    def cuEventRecordWithFlags(self, event: Any, stream: Any, flags: int) -> int:
        return self.cuEventRecord(event, stream)

    def cuEventSynchronize(self, event: Any) -> int:
        self.require_init()
        ev = self.handles.get(self.ptr(event), Event)
        if ev.mark is not None:
            self.device.wait_mark(ev.mark)
        self.sync_point()
        self.check_sticky()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuEventQuery(self, event: Any) -> int:
        self.require_init()
        ev = self.handles.get(self.ptr(event), Event)
        if ev.mark is not None and not self.device.mark_reached(ev.mark):
            return E.CUDA_ERROR_NOT_READY
        return E.CUDA_SUCCESS

    def cuEventDestroy_v2(self, event: Any) -> int:
        self.require_init()
        ev = self.handles.get(self.ptr(event), Event)
        self.handles.remove(self.ptr(event), Event)
        if ev.mark is not None:
            self.device.release_mark(ev.mark)
        return E.CUDA_SUCCESS

    def cuEventElapsedTime(self, ms: Any, start: Any, end: Any) -> int:
        self.require_init()
        a = self.handles.get(self.ptr(start), Event)
        b = self.handles.get(self.ptr(end), Event)
        if a.mark is None or b.mark is None:
            return E.CUDA_ERROR_INVALID_HANDLE
        if (a.flags | b.flags) & 0x2:  # CU_EVENT_DISABLE_TIMING
            return E.CUDA_ERROR_INVALID_HANDLE
        if not (self.device.mark_reached(a.mark) and self.device.mark_reached(b.mark)):
            return E.CUDA_ERROR_NOT_READY
        self.out(ms, self.device.elapsed_ms(a.mark, b.mark))
        return E.CUDA_SUCCESS

    cuEventElapsedTime_v2 = cuEventElapsedTime
