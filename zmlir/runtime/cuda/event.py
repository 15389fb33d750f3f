"""Events. Work is synchronous, so an event is complete once recorded; its
timestamp is taken after the queue drained. Recorded in a capturing stream,
it marks a fork point of the capture (graph.py)."""

from __future__ import annotations

import time
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
        ev.capture, ev.capture_dependencies = None, []
        self.device.synchronize()
        ev.timestamp = time.perf_counter()
        return E.CUDA_SUCCESS

    def cuEventRecordWithFlags(self, event: Any, stream: Any, flags: int) -> int:
        return self.cuEventRecord(event, stream)

    def cuEventSynchronize(self, event: Any) -> int:
        self.require_init()
        self.handles.get(self.ptr(event), Event)
        self.sync_point()
        self.check_sticky()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuEventQuery(self, event: Any) -> int:
        self.require_init()
        self.handles.get(self.ptr(event), Event)
        return E.CUDA_SUCCESS

    def cuEventDestroy_v2(self, event: Any) -> int:
        self.require_init()
        self.handles.remove(self.ptr(event), Event)
        return E.CUDA_SUCCESS

    def cuEventElapsedTime(self, ms: Any, start: Any, end: Any) -> int:
        self.require_init()
        a = self.handles.get(self.ptr(start), Event)
        b = self.handles.get(self.ptr(end), Event)
        if a.timestamp is None or b.timestamp is None:
            return E.CUDA_ERROR_INVALID_HANDLE
        if (a.flags | b.flags) & 0x2:  # CU_EVENT_DISABLE_TIMING
            return E.CUDA_ERROR_INVALID_HANDLE
        self.out(ms, (b.timestamp - a.timestamp) * 1000.0)
        return E.CUDA_SUCCESS

    cuEventElapsedTime_v2 = cuEventElapsedTime
