"""What the graph API's modules share: looking up graphs and nodes by
handle, node lists in and out (NVIDIA's query protocol), and destroying a
graph with what it holds (node handles, graph memory, user objects)."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.graph.model import AllocParams, Graph, Node, forget_handles
from zmlir.runtime.cuda.objects import UserObject
from zmlir.runtime.cuda.state import DriverState

E = CUresult


class GraphBase(DriverState):
    def graph_of(self, handle: Any) -> Graph:
        """The graph behind a CUgraph (NULL or unknown: CUDA_ERROR_INVALID_VALUE)."""
        self.require_init()
        graph = self.handles.find(self.ptr(handle))
        if graph is None:
            graph = self.captured_graph(self.ptr(handle))
        if not isinstance(graph, Graph):
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"not a graph: 0x{self.ptr(handle):x}")
        return graph

    def captured_graph(self, handle: int) -> Graph | None:
        """The graph the vendor's driver captured as `handle` (fastpath.c),
        ours from now on; None where it is none (graph/executable.py)."""
        return None

    def node_of(self, handle: Any, node_type: int | None = None) -> Node:
        """The node behind a CUgraphNode, of `node_type` if given."""
        self.require_init()
        node = self.handles.find(self.ptr(handle))
        if not isinstance(node, Node):
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"not a node: 0x{self.ptr(handle):x}")
        if node_type is not None and node.type != node_type:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"node type {node.type}, not "
                                                        f"{node_type}")
        return node

    def node_list(self, array: Any, count: int, graph: Graph | None) -> list[Node]:
        """The nodes of a CUgraphNode array: each of `graph` (if given), no
        node twice."""
        if count and array == self.ffi.NULL:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "a NULL node array")
        nodes = [self.node_of(array[i]) for i in range(count)]
        if graph is not None and any(n.graph is not graph for n in nodes):
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "a node of another graph")
        if len(set(nodes)) != len(nodes):
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "a node listed twice")
        return nodes

    def check_edge_data(self, edge_data: Any, count: int) -> None:
        """Only default edges (all-zero CUgraphEdgeData) exist here: the
        programmatic ones order work that runs one launch after another anyway."""
        if edge_data == self.ffi.NULL:
            return
        data = bytes(self.ffi.buffer(self.ffi.cast("char *", edge_data), 8 * count))
        if any(data):
            raise CudaError(self.unsupported("graph edges", "non-default edge data "
                                             "(programmatic dependencies, ports)"))

    def nodes_out(self, nodes: list[Node], out: Any, count: Any) -> None:
        """NVIDIA's query protocol: `out` NULL gives the count; else `count`
        entries are written, NULL past the last node, and `count` becomes
        the number written."""
        if count == self.ffi.NULL:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "a NULL count")
        if out == self.ffi.NULL:
            count[0] = len(nodes)
            return
        room = int(count[0])
        for i in range(room):
            out[i] = self.handle_ptr(nodes[i].handle) if i < len(nodes) else self.ffi.NULL
        count[0] = min(room, len(nodes))

    def edge_data_out(self, edge_data: Any, count: int) -> None:
        if edge_data != self.ffi.NULL and count:
            self.ffi.memmove(self.ffi.cast("char *", edge_data), bytes(8 * count), 8 * count)

    # -- destroying ---------------------------------------------------------------

    def release_graph_memory(self, graph: Graph) -> None:
        for node in graph.walk():
            if isinstance(node.params, AllocParams):
                self.graph_memory.release(node.params.slot)

    def destroy_graph(self, graph: Graph) -> None:
        forget_handles(self.handles, graph)
        self.release_graph_memory(graph)
        if graph.handle:
            self.handles.remove(graph.handle, Graph)
            graph.handle = 0
        self.release_user_objects(graph.user_objects)
        if graph.vendor:
            self.device.graph_destroy(graph.vendor)
            graph.vendor = 0

    # -- user objects (user_objects.py): the references graphs hold ----------------

    def user_object(self, handle: Any) -> UserObject:
        return self.handles.get(self.ptr(handle), UserObject)

    def release_user_object(self, handle: int, count: int) -> None:
        obj = self.user_object(handle)
        obj.references -= count
        if obj.references <= 0:
            self.handles.remove(handle, UserObject)
            obj.destroy(obj.ptr)

    def release_user_objects(self, held: dict[int, int]) -> None:
        for handle, count in list(held.items()):
            self.release_user_object(handle, count)
        held.clear()

    def retain_user_objects(self, held: dict[int, int]) -> None:
        for handle, count in held.items():
            self.user_object(handle).references += count
