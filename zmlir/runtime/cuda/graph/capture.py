"""Stream capture: work asked of a capturing stream becomes nodes of the
capture's graph, the same nodes cuGraphAdd* makes. Each stream of the
capture has its own dependencies (the nodes its next work depends on); an
event recorded in a capturing stream keeps that stream's, and a stream
waiting on it joins the capture with them (a fork), or adds them to its
own (a join).

Under the CUDA passthrough a capture of a created stream is the vendor's
driver's (fastpath.c: stream capture) while every call of it stays there;
the first call that comes here ends it and goes on with the graph captured
so far (demote_vendor_captures)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.graph import vendor
from zmlir.runtime.cuda.graph.construct import ConstructAPI
from zmlir.runtime.cuda.graph.model import AllocParams, Graph, Node, ancestors, record
from zmlir.runtime.cuda.mempool import MemoryPool, MemPoolAPI
from zmlir.runtime.cuda.objects import Event, Stream
from zmlir.runtime.cuda.state import log

E = CUresult


@dataclass(eq=False)
class Capture:
    graph: Graph
    origin: Stream  # the stream that began it; it alone ends it
    mode: int
    to_graph: bool = False  # into an existing graph (cuStreamBeginCaptureToGraph)
    active: bool = True
    # An illegal call in the capture (e.g. ending it from a stream other than
    # its origin) invalidates it, as NVIDIA's: its streams' work then answers
    # CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, and so does its end.
    invalidated: bool = False
    # The C arrays cuStreamGetCaptureInfo handed out, kept valid until the next call.
    c_dependencies: dict[int, Any] = field(default_factory=dict)


# -- what the capture's streams depend on (stream.py, event.py) -------------------


def event_recorded(ev: Event, s: Stream) -> None:
    """cuEventRecord in a capturing stream: the event keeps the stream's dependencies."""
    if s.capture.invalidated:
        raise CudaError(E.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "the capture was invalidated")
    ev.capture = s.capture
    ev.capture_dependencies = list(s.capture_dependencies)


def wait_for_event(s: Stream | None, ev: Event) -> None:
    """cuStreamWaitEvent on an event recorded in a capture: a fork (the
    stream joins the capture) or a join (it adds the event's dependencies)."""
    capture = ev.capture
    if capture is None or not capture.active:
        return
    if capture.invalidated:
        raise CudaError(E.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "the capture was invalidated")
    if s is None:
        raise CudaError(E.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "the legacy stream")
    if s.capture is None:
        s.capture = capture
        s.capture_dependencies = list(ev.capture_dependencies)
    elif s.capture is not capture:
        raise CudaError(E.CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "two captures")
    else:
        s.capture_dependencies += [d for d in ev.capture_dependencies
                                   if d not in s.capture_dependencies]


def dependencies_out(ffi: Any, s: Stream, out: Any, count: Any) -> None:
    """cuStreamGetCaptureInfo's dependencies: a C array valid until the
    stream's next call."""
    assert s.capture is not None
    handles = [n.handle for n in s.capture_dependencies]
    array = ffi.new("CUgraphNode[]", [ffi.cast("void *", h) for h in handles] or 1)
    s.capture.c_dependencies[id(s)] = array
    if out != ffi.NULL:
        out[0] = array if handles else ffi.NULL
    if count != ffi.NULL:
        count[0] = len(handles)


class CaptureAPI(ConstructAPI, MemPoolAPI):
    # -- stream-ordered allocation in a capture: graph memory nodes ---------------

    def _capturing(self, stream: Any) -> Stream | None:
        s = self.stream(stream)
        return s if s is not None and s.capture is not None else None

    def cuMemAllocAsync(self, dptr: Any, nbytes: int, stream: Any) -> int:
        s = self._capturing(stream)
        if s is None:
            return super().cuMemAllocAsync(dptr, nbytes, stream)
        return self._capture_alloc(s, dptr, nbytes)

    def cuMemAllocFromPoolAsync(self, dptr: Any, nbytes: int, pool: Any, stream: Any) -> int:
        s = self._capturing(stream)
        if s is None:
            return super().cuMemAllocFromPoolAsync(dptr, nbytes, pool, stream)
        self.handles.get(self.ptr(pool), MemoryPool)
        return self._capture_alloc(s, dptr, nbytes)  # graphs allocate from graph memory

    def _capture_alloc(self, s: Stream, dptr: Any, nbytes: int) -> int:
        self.current_context()
        if nbytes == 0 or dptr == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        slot = self.place_allocation(s.capture.graph, list(s.capture_dependencies), nbytes)
        self.graph_memory.retain(slot)
        slot.allocs += 1
        props = self.ffi.new("CUmemPoolProps *")
        props.allocType, props.location.type = 1, 1  # PINNED on DEVICE 0
        record(self.handles, s, AllocParams(slot, nbytes, bytes(self.ffi.buffer(props)), b""))
        dptr[0] = slot.address
        return E.CUDA_SUCCESS

    def cuMemFreeAsync(self, dptr: int, stream: Any) -> int:
        s = self._capturing(stream)
        if s is None:
            return super().cuMemFreeAsync(dptr, stream)
        record(self.handles, s, self.free_params(s.capture.graph, dptr))
        return E.CUDA_SUCCESS

    # -- captures the vendor's driver began (fastpath.c) ----------------------------

    def demote_vendor_captures(self) -> None:
        """Captures of our streams on the vendor's driver become ours: each
        ends there, its graph so far is imported as the capture's graph
        (the application's handles to it and its nodes stay valid) and the
        stream depends on the nodes it depended on there. The call that
        came here, and what follows, records into it."""
        with self.fast.capture_lock():
            for handle, s in list(self.handles.items(Stream)):
                mode = self.fast.vendor_capture_mode(handle)
                if mode is None:
                    continue
                try:
                    status, dependencies = self.device.capture_dependencies(handle)
                except Exception as err:  # the vendor's refusal: the capture is lost
                    log(f"stream capture: the vendor's capture is lost: {err}")
                    status, dependencies = 2, []
                code, captured = self.fast.end_vendor_capture(handle)
                graph = None
                if captured:
                    try:
                        graph = vendor.imported(self, captured, handles=True)
                    except Exception as err:  # what it captured is lost: never run less
                        log(f"stream capture: the vendor's graph is lost: {err}")
                        self.device.graph_destroy(captured)
                if graph is None:
                    graph = Graph()
                    graph.handle = self.handles.add(graph)
                s.capture = Capture(graph, s, mode)
                # ACTIVE (CU_STREAM_CAPTURE_STATUS_*) with all it captured, or invalidated
                s.capture.invalidated = status != 1 or code != 0 or graph.vendor != captured
                s.capture_dependencies = [n for n in map(self.handles.find, dependencies)
                                          if isinstance(n, Node)]
                self.fast.capture(+1)

    # -- beginning and ending -----------------------------------------------------

    def cuStreamBeginCapture(self, stream: Any) -> int:
        return self.cuStreamBeginCapture_v2(stream, 0)  # CU_STREAM_CAPTURE_MODE_GLOBAL

    def cuStreamBeginCapture_v2(self, stream: Any, mode: int) -> int:
        self.current_context()
        self._decide_vendor_captures()
        if self.fast.begin_vendor_capture(self.ptr(stream), mode):  # fastpath.c's then
            return E.CUDA_SUCCESS
        graph = Graph()
        graph.handle = self.handles.add(graph)
        code = self._begin_capture(stream, graph, [], mode)
        if code != E.CUDA_SUCCESS:
            self.handles.remove(graph.handle, Graph)
        return code

    def cuStreamBeginCaptureToGraph(self, stream: Any, graph: Any, dependencies: Any,
                                    edge_data: Any, count: int, mode: int) -> int:
        self.current_context()
        g = self.graph_of(graph)
        deps = self.node_list(dependencies, count, g)
        self.check_edge_data(edge_data, count)
        return self._begin_capture(stream, g, deps, mode, to_graph=True)

    def _begin_capture(self, stream: Any, graph: Graph, deps: list[Node], mode: int,
                       to_graph: bool = False) -> int:
        s = self.stream(stream)
        if s is None:  # the legacy default stream cannot be captured
            return E.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        if s.capture is not None or mode not in (0, 1, 2):
            return E.CUDA_ERROR_ILLEGAL_STATE if s.capture is not None else \
                E.CUDA_ERROR_INVALID_VALUE
        s.capture = Capture(graph, s, mode, to_graph)
        s.capture_dependencies = deps
        self.fast.capture(+1)  # launches take the Python path, which records them
        return E.CUDA_SUCCESS

    def _decide_vendor_captures(self) -> None:
        """Captures are the vendor's (fastpath.c) if its driver's capture of
        a fill, a launch and copies reads back as captured
        (vendor.captures_read_back), tried at the first capture;
        ZMLIR_VENDOR_CAPTURE=0: never, 1: without the try."""
        if self.vendor_captures_decided or not self.device.vendor_captures:
            return
        self.vendor_captures_decided = True
        choice = os.environ.get("ZMLIR_VENDOR_CAPTURE")
        works = choice == "1" or (choice != "0" and vendor.captures_read_back(self))
        self.fast.vendor_capture_enable(works)
        if not works and os.environ.get("ZMLIR_LOG"):
            log("stream capture: the vendor's captures do not read back as captured: ours")

    def cuStreamEndCapture(self, stream: Any, pgraph: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        if s is None or s.capture is None:
            return E.CUDA_ERROR_ILLEGAL_STATE
        capture = s.capture
        if capture.origin is not s:
            capture.invalidated = True
            return E.CUDA_ERROR_STREAM_CAPTURE_UNMATCHED
        joined = ancestors(s.capture_dependencies)
        members = [o for o in self.handles.all(Stream) if o.capture is capture]
        unjoined = any(d not in joined for o in members for d in o.capture_dependencies)
        for o in members:
            o.capture, o.capture_dependencies = None, []
        capture.active = False
        self.fast.capture(-1)
        if capture.invalidated or unjoined:  # no graph: an illegal call, or a forked
            self.destroy_graph(capture.graph)  # stream's work not joined back
            if pgraph != self.ffi.NULL:
                pgraph[0] = self.ffi.NULL
            return E.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED if capture.invalidated else \
                E.CUDA_ERROR_STREAM_CAPTURE_UNJOINED
        if pgraph != self.ffi.NULL or not capture.to_graph:  # the graph is the caller's
            self.out(pgraph, self.handle_ptr(capture.graph.handle))
        return E.CUDA_SUCCESS

    def cuStreamUpdateCaptureDependencies(self, stream: Any, dependencies: Any, count: int,
                                          flags: int) -> int:
        return self.cuStreamUpdateCaptureDependencies_v2(stream, dependencies, self.ffi.NULL,
                                                         count, flags)

    def cuStreamUpdateCaptureDependencies_v2(self, stream: Any, dependencies: Any,
                                             edge_data: Any, count: int, flags: int) -> int:
        self.require_init()
        s = self.stream(stream)
        if s is None or s.capture is None:
            return E.CUDA_ERROR_ILLEGAL_STATE
        if flags not in (0, 1):
            return E.CUDA_ERROR_INVALID_VALUE
        nodes = self.node_list(dependencies, count, s.capture.graph)
        self.check_edge_data(edge_data, count)
        if flags == 1:  # CU_STREAM_SET_CAPTURE_DEPENDENCIES
            s.capture_dependencies = nodes
        else:  # CU_STREAM_ADD_CAPTURE_DEPENDENCIES
            s.capture_dependencies += [n for n in nodes if n not in s.capture_dependencies]
        return E.CUDA_SUCCESS
