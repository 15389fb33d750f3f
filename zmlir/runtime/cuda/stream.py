"""Streams. All work goes into the backend's one in-order queue (kernels
run while the host goes on; copies wait for them), so every stream's order
(and every order between streams) is always kept; a stream
keeps its flags, priority and attributes, and the capture it records into
while a graph is being captured (graph.py). Under the passthrough a stream
is one of NVIDIA's (vendor), where its kernels run and its events are
recorded, at once with other streams' and by its priority; its other work
stays in the one queue, NVIDIA's NULL stream, which the stream waits for
and which waits for it (backends/cuda.py: vendor_stream); its synchronisation
and query are its own stream's and our work's on the NULL stream, not the
context's (stream_synchronize, queue_done). Elsewhere, where
the one queue's launches are watched to their ends (OpenCL), a created
stream's synchronisation waits for its last launch, not for the work of
other streams enqueued after it."""

from __future__ import annotations

import os
import struct
from typing import Any

from zmlir.runtime.cuda.errors import CUresult
from zmlir.runtime.cuda.graph.capture import dependencies_out, wait_for_event
from zmlir.runtime.cuda.objects import CU_STREAM_NON_BLOCKING, Event, Stream
from zmlir.runtime.cuda.state import DriverState

E = CUresult

# CUstreamAttrID: what streams keep (CUlaunchAttributeValue, 64 bytes):
# the access policy window, synchronization policy, priority and memory
# synchronization domain. All are hints here, kept and reported back.
_STREAM_ATTRIBUTES = (1, 3, 8, 9, 10)


class StreamAPI(DriverState):
    def cuStreamCreate(self, phstream: Any, flags: int) -> int:
        return self.cuStreamCreateWithPriority(phstream, flags, 0)

    def cuStreamCreateWithPriority(self, phstream: Any, flags: int, priority: int) -> int:
        self.current_context()
        if flags & ~CU_STREAM_NON_BLOCKING:
            return E.CUDA_ERROR_INVALID_VALUE
        stream = Stream(flags, priority)
        # Under the passthrough the handle is a stream of NVIDIA's driver
        # too: NVIDIA's cuBLAS hands the stream of cublasSetStream to a
        # function of NVIDIA's private tables (TOOLS_TLS and TOOLS_CONTEXT
        # are NVIDIA's there: export_slots.py), which reads it as NVIDIA's;
        # ours, small integers, crashed it (SIGSEGV at the handle's address:
        # docs/passthrough-libraries.md). ZMLIR_VENDOR_STREAMS=0 keeps our own
        # handles, and all the stream's work in the one queue.
        vendor = self.device.vendor_stream(priority, bool(flags & CU_STREAM_NON_BLOCKING)) \
            if _vendor_streams() else 0
        if vendor:
            stream.vendor = True
            handle = self.handles.add_at(vendor, stream)
            self.fast.vendor_context(handle, vendor=False)  # ours now, not NVIDIA's context
        else:
            handle = self.handles.add(stream)
        self.fast.stream(handle, vendor)
        self.out(phstream, self.handle_ptr(handle))
        return E.CUDA_SUCCESS

    def cuStreamDestroy_v2(self, stream: Any) -> int:
        self.require_init()
        s = self.handles.remove(self.ptr(stream), Stream)
        self.fast.forget(self.ptr(stream))
        if s.vendor:
            # Blocks freed in it wait on it in their pools (MemoryPool.pending),
            # which ask the vendor's driver about it: never once it is gone
            # (NVIDIA's driver crashed). They are free once its work is done.
            handle = self.ptr(stream)
            if any(pool.pending_in(handle) for pool in self.pools):
                self.device.synchronize()
                for pool in self.pools:
                    pool.settle(lambda lane: lane == handle)
            self.device.vendor_stream_destroy(handle)
        for key in [k for k in self.stream_attributes if k[0] == self.ptr(stream)]:
            del self.stream_attributes[key]
        if s.capture is not None and not any(  # the last stream of an unfinished capture
                o.capture is s.capture for o in self.handles.all(Stream)):
            s.capture.active = False
            self.fast.capture(-1)
        return E.CUDA_SUCCESS

    def cuStreamSynchronize(self, stream: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        if _refused_in_capture(s):
            return E.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        if self.own_work_waited(s, stream):
            self.check_sticky()
            self.settle_pools()  # a synchronisation: pools release what they keep above
            return E.CUDA_SUCCESS
        if s is not None:
            s.untracked = False
        self.device.synchronize()
        self.sync_point()
        self.check_sticky()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuStreamQuery(self, stream: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        if _refused_in_capture(s):
            return E.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        ended = self.fast.stream_ended(self.ptr(stream)) if self.own_work_is_launches(s) \
            else None
        if ended is not None:
            if not ended:
                return E.CUDA_ERROR_NOT_READY
            self.check_sticky()
            return E.CUDA_SUCCESS
        # Every stream's work is in the one queue: a stream is done once the
        # kernels launched before its query are (its own among them), those
        # the driver watches and those the backend's queue still holds (and
        # the vendor stream's own).
        if not self.fast.launches_done() or \
                not self.device.queue_done(self.vendor_queue(stream)):
            return E.CUDA_ERROR_NOT_READY
        self.check_sticky()
        return E.CUDA_SUCCESS

    def cuStreamWaitEvent(self, stream: Any, event: Any, flags: int) -> int:
        self.require_init()
        s = self.stream(stream)
        ev = self.handles.get(self.ptr(event), Event)
        if flags & 0x1 and (s is None or s.capture is None):  # CU_EVENT_WAIT_EXTERNAL
            return E.CUDA_ERROR_ILLEGAL_STATE  # an H200's answer outside a capture
        if ev.shared is not None and (s is None or s.capture is None):
            # Another process's record: waited for here (ipc.py).
            ev.shared.wait(ev.shared.last())
        wait_for_event(s, ev)  # an event of a capture: a fork or a join (graph/capture.py)
        if s is not None and s.capture is None:
            # Its synchronisation waits for what the event follows too: in
            # the one queue, every launch so far.
            self.stream_launched(s, stream)
        vendor = self.vendor_queue(stream)
        if vendor and s.capture is None and ev.capture is None and ev.mark is not None:
            # Its kernels run beside other streams': the real driver's wait.
            self.device.wait_mark_in_stream(vendor, ev.mark)
        return E.CUDA_SUCCESS

    def cuStreamAddCallback(self, stream: Any, callback: Any, user_data: Any, flags: int) -> int:
        self.require_init()
        s = self.stream(stream)
        if (s is None or s.capture is None) and self.device.add_stream_callback(
                self.vendor_queue(stream), self.ptr(stream), self.ptr(callback),
                self.ptr(user_data)):
            if s is not None:
                s.untracked = True
            return E.CUDA_SUCCESS  # the backend's, in the stream's order
        self.device.synchronize()
        self.sync_point()
        callback(stream, E.CUDA_SUCCESS, user_data)
        return E.CUDA_SUCCESS

    def cuStreamGetId(self, stream: Any, stream_id: Any) -> int:
        self.require_init()
        self.stream(stream)
        self.out(stream_id, self.ptr(stream))
        return E.CUDA_SUCCESS

    def cuStreamGetFlags(self, stream: Any, flags: Any) -> int:
        s = self.stream(stream)
        self.out(flags, s.flags if s else 0)
        return E.CUDA_SUCCESS

    def cuStreamGetPriority(self, stream: Any, priority: Any) -> int:
        s = self.stream(stream)
        self.out(priority, s.priority if s else 0)
        return E.CUDA_SUCCESS

    def cuStreamGetCtx(self, stream: Any, pctx: Any) -> int:
        self.stream(stream)
        self.out(pctx, self.handle_ptr(self.primary_context()))
        return E.CUDA_SUCCESS

    def cuStreamGetCtx_v2(self, stream: Any, pctx: Any, pgreen: Any) -> int:
        code = self.cuStreamGetCtx(stream, pctx)
        if code == E.CUDA_SUCCESS and pgreen != self.ffi.NULL:
            pgreen[0] = self.ffi.NULL  # no green contexts
        return code

    def cuStreamGetDevice(self, stream: Any, device: Any) -> int:
        self.require_init()
        self.stream(stream)
        self.out(device, 0)
        return E.CUDA_SUCCESS

    # -- attributes -----------------------------------------------------------

    def cuStreamGetAttribute(self, stream: Any, attr: int, value: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        if attr not in _STREAM_ATTRIBUTES or value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        stored = self.stream_attributes.get((self.ptr(stream), attr))
        if stored is None:
            stored = bytes(64)
            if attr == 8:  # PRIORITY
                stored = struct.pack("<i", s.priority if s else 0) + bytes(60)
        self.ffi.memmove(value, stored, 64)
        return E.CUDA_SUCCESS

    def cuStreamSetAttribute(self, stream: Any, attr: int, value: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        if attr not in _STREAM_ATTRIBUTES or value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        data = bytes(self.ffi.buffer(self.ffi.cast("char *", value), 64))
        if attr == 8 and s is not None:
            s.priority = struct.unpack_from("<i", data)[0]
        self.stream_attributes[(self.ptr(stream), attr)] = data
        return E.CUDA_SUCCESS

    def cuStreamCopyAttributes(self, dst: Any, src: Any) -> int:
        self.require_init()
        d, s = self.stream(dst), self.stream(src)
        for (handle, attr), data in list(self.stream_attributes.items()):
            if handle == self.ptr(src):
                self.stream_attributes[(self.ptr(dst), attr)] = data
        if d is not None and s is not None:
            d.priority = s.priority
        return E.CUDA_SUCCESS

    # -- capture state (graph.py begins and ends captures) ------------------------

    def cuStreamIsCapturing(self, stream: Any, status: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        self.out(status, _capture_status(s))
        return E.CUDA_SUCCESS

    def cuStreamGetCaptureInfo_v3(self, stream: Any, status: Any, capture_id: Any, graph: Any,
                                  dependencies: Any, edges: Any, count: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        capturing = s is not None and s.capture is not None
        if status != self.ffi.NULL:
            status[0] = _capture_status(s)
        if capture_id != self.ffi.NULL and capturing:
            assert s is not None
            capture_id[0] = id(s.capture)  # the same for every stream of one capture
        for out in (graph, dependencies, edges):
            if out != self.ffi.NULL:
                out[0] = self.ffi.NULL
        if count != self.ffi.NULL:
            count[0] = 0
        if capturing:
            assert s is not None and s.capture is not None
            if graph != self.ffi.NULL:
                graph[0] = self.handle_ptr(s.capture.graph.handle)  # recorded into so far
            dependencies_out(self.ffi, s, dependencies, count)  # edges: all default (NULL)
        return E.CUDA_SUCCESS

    def cuStreamGetCaptureInfo(self, stream: Any, status: Any, capture_id: Any) -> int:
        n = self.ffi.NULL
        return self.cuStreamGetCaptureInfo_v3(stream, status, capture_id, n, n, n, n)

    def cuStreamGetCaptureInfo_v2(self, stream: Any, status: Any, capture_id: Any, graph: Any,
                                  dependencies: Any, count: Any) -> int:
        return self.cuStreamGetCaptureInfo_v3(stream, status, capture_id, graph, dependencies,
                                              self.ffi.NULL, count)


def _vendor_streams() -> bool:
    return os.environ.get("ZMLIR_VENDOR_STREAMS", "1") != "0"


def _capture_status(s: Stream | None) -> int:
    """CU_STREAM_CAPTURE_STATUS_NONE, _ACTIVE or _INVALIDATED."""
    if s is None or s.capture is None:
        return 0
    return 2 if s.capture.invalidated else 1


def _refused_in_capture(s: Stream | None) -> bool:
    """Synchronizing with or querying a capturing stream is invalid: NVIDIA
    refuses it and invalidates the capture (the programming guide's
    "Prohibited and Unhandled Operations")."""
    if s is None or s.capture is None:
        return False
    s.capture.invalidated = True
    return True
