"""Graphs, by stream capture only: the work a capturing stream (and every
stream that joins its capture through an event) is asked to do is recorded
in order, and cuGraphLaunch replays it in that order. User objects
(cuUserObject*) are reference counts graphs and their instantiations hold,
as cuda.core keeps a graph's kernel arguments alive: the destructor runs
when the last reference goes, in the call that released it."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda.errors import CUresult
from zmlir.runtime.cuda.objects import Graph, GraphExec, Stream, UserObject
from zmlir.runtime.cuda.state import DriverState

E = CUresult


def capture_graph(driver: DriverState, nodes: list[Any]) -> int:
    """The handle of the graph a capture records into (`nodes`, the capture's
    list): made when first asked for (cuStreamGetCaptureInfo during the
    capture, else cuStreamEndCapture), the same one after."""
    for handle, obj in driver.handles.items(Graph):
        if obj.nodes is nodes:
            return handle
    return driver.handles.add(Graph(nodes))


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
        nodes = s.capture
        graph = capture_graph(self, nodes)
        for obj in self.handles.all(Stream):  # streams that joined the capture
            if obj.capture is nodes:
                obj.capture = None
        self.fast.capture(-1)
        self.out(pgraph, self.handle_ptr(graph))
        return E.CUDA_SUCCESS

    # -- graphs ------------------------------------------------------------------

    def cuGraphInstantiateWithFlags(self, pexec: Any, graph: Any, flags: int) -> int:
        self.require_init()
        g = self.handles.get(self.ptr(graph), Graph)
        for handle, count in g.user_objects.items():  # the instance holds its graph's too
            self._user_object(handle).references += count
        self.out(pexec, self.handle_ptr(self.handles.add(GraphExec(list(g.nodes),
                                                                   dict(g.user_objects)))))
        return E.CUDA_SUCCESS

    def cuGraphInstantiateWithParams(self, pexec: Any, graph: Any, params: Any) -> int:
        if params == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        p = params[0]
        code = self.cuGraphInstantiateWithFlags(pexec, graph, p.flags)
        if code == E.CUDA_SUCCESS and p.flags & 2:  # CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD
            code = self.cuGraphUpload(pexec[0], p.hUploadStream)
        p.hErrNode_out = self.ffi.NULL
        p.result_out = 0 if code == E.CUDA_SUCCESS else 1  # CUDA_GRAPH_INSTANTIATE_SUCCESS/ERROR
        return code

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
        g = self.handles.get(self.ptr(graph), Graph)
        self.handles.remove(self.ptr(graph), Graph)
        self._release_user_objects(g.user_objects)
        return E.CUDA_SUCCESS

    def cuGraphExecDestroy(self, exec_: Any) -> int:
        self.require_init()
        g = self.handles.get(self.ptr(exec_), GraphExec)
        self.handles.remove(self.ptr(exec_), GraphExec)
        self._release_user_objects(g.user_objects)
        return E.CUDA_SUCCESS

    # -- user objects --------------------------------------------------------------

    def _user_object(self, handle: Any) -> UserObject:
        return self.handles.get(self.ptr(handle), UserObject)

    def _release_user_object(self, handle: int, count: int) -> None:
        obj = self._user_object(handle)
        obj.references -= count
        if obj.references <= 0:
            self.handles.remove(handle, UserObject)
            obj.destroy(obj.ptr)

    def _release_user_objects(self, held: dict[int, int]) -> None:
        for handle, count in list(held.items()):
            self._release_user_object(handle, count)
        held.clear()

    def cuUserObjectCreate(self, pobject: Any, ptr: Any, destroy: Any, references: int,
                           flags: int) -> int:
        self.require_init()
        # CU_USER_OBJECT_NO_DESTRUCTOR_SYNC is required: nothing waits for a destructor.
        if pobject == self.ffi.NULL or destroy == self.ffi.NULL or references == 0 or flags != 1:
            return E.CUDA_ERROR_INVALID_VALUE
        obj = UserObject(ptr, destroy, references)
        self.out(pobject, self.handle_ptr(self.handles.add(obj)))
        return E.CUDA_SUCCESS

    def cuUserObjectRetain(self, obj: Any, count: int) -> int:
        self.require_init()
        if count == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        self._user_object(obj).references += count
        return E.CUDA_SUCCESS

    def cuUserObjectRelease(self, obj: Any, count: int) -> int:
        self.require_init()
        if count == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        self._release_user_object(self.ptr(obj), count)
        return E.CUDA_SUCCESS

    def cuGraphRetainUserObject(self, graph: Any, obj: Any, count: int, flags: int) -> int:
        self.require_init()
        g = self.handles.get(self.ptr(graph), Graph)
        o = self._user_object(obj)
        if count == 0 or flags not in (0, 1):
            return E.CUDA_ERROR_INVALID_VALUE
        if flags != 1:  # CU_GRAPH_USER_OBJECT_MOVE: the caller's references move to the graph
            o.references += count
        g.user_objects[self.ptr(obj)] = g.user_objects.get(self.ptr(obj), 0) + count
        return E.CUDA_SUCCESS

    def cuGraphReleaseUserObject(self, graph: Any, obj: Any, count: int) -> int:
        self.require_init()
        g = self.handles.get(self.ptr(graph), Graph)
        handle = self.ptr(obj)
        if count == 0 or g.user_objects.get(handle, 0) < count:
            return E.CUDA_ERROR_INVALID_VALUE
        g.user_objects[handle] -= count
        if g.user_objects[handle] == 0:
            del g.user_objects[handle]
        self._release_user_object(handle, count)
        return E.CUDA_SUCCESS
