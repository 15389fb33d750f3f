"""Graphs, by stream capture only: the work a capturing stream (and every
stream that joins its capture through an event) is asked to do is recorded
in order, and cuGraphLaunch replays it in that order."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda.errors import CUresult
from zmlir.runtime.cuda.objects import Graph, GraphExec, Stream
from zmlir.runtime.cuda.state import DriverState

E = CUresult


class GraphAPI(DriverState):
    # -- stream capture --------------------------------------------------------

    def cuStreamBeginCapture(self, stream: Any) -> int:
        return self.cuStreamBeginCapture_v2(stream, 0)  # CU_STREAM_CAPTURE_MODE_GLOBAL

    def cuStreamBeginCapture_v2(self, stream: Any, mode: int) -> int:
        self.current_context()
        s = self.stream(stream)
        if s is None:  # the legacy default stream cannot be captured
            return E.CUDA_ERROR_NOT_PERMITTED
        if s.capture is not None:
            return E.CUDA_ERROR_NOT_PERMITTED
        s.capture = []
        self.fast.capture(+1)  # launches take the Python path, which records them
        return E.CUDA_SUCCESS

    def cuStreamEndCapture(self, stream: Any, pgraph: Any) -> int:
        self.require_init()
        s = self.stream(stream)
        if s is None or s.capture is None:
            return E.CUDA_ERROR_NOT_PERMITTED
        graph = Graph(s.capture)
        for obj in self.handles.all(Stream):  # streams that joined the capture
            if obj.capture is graph.nodes:
                obj.capture = None
        self.fast.capture(-1)
        self.out(pgraph, self.handle_ptr(self.handles.add(graph)))
        return E.CUDA_SUCCESS

    # -- graphs ------------------------------------------------------------------

    def cuGraphInstantiateWithFlags(self, pexec: Any, graph: Any, flags: int) -> int:
        self.require_init()
        g = self.handles.get(self.ptr(graph), Graph)
        self.out(pexec, self.handle_ptr(self.handles.add(GraphExec(list(g.nodes)))))
        return E.CUDA_SUCCESS

    def cuGraphLaunch(self, exec_: Any, stream: Any) -> int:
        self.current_context()
        graph = self.handles.get(self.ptr(exec_), GraphExec)

        def run() -> int:
            for node in graph.nodes:
                code = node()
                if code != E.CUDA_SUCCESS:
                    return code
            return E.CUDA_SUCCESS

        return self.enqueue(stream, run)

    def cuGraphGetNodes(self, graph: Any, nodes: Any, count: Any) -> int:
        self.require_init()
        g = self.handles.get(self.ptr(graph), Graph)
        if nodes != self.ffi.NULL:
            return self.unsupported("cuGraphGetNodes", "node handles")
        self.out(count, len(g.nodes))
        return E.CUDA_SUCCESS

    def cuGraphUpload(self, exec_: Any, stream: Any) -> int:
        self.require_init()
        self.handles.get(self.ptr(exec_), GraphExec)  # nothing to upload: work is replayed
        self.stream(stream)
        return E.CUDA_SUCCESS

    def cuGraphDestroy(self, graph: Any) -> int:
        self.require_init()
        self.handles.remove(self.ptr(graph), Graph)
        return E.CUDA_SUCCESS

    def cuGraphExecDestroy(self, exec_: Any) -> int:
        self.require_init()
        self.handles.remove(self.ptr(exec_), GraphExec)
        return E.CUDA_SUCCESS
