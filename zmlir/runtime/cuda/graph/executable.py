"""Executable graphs: cuGraphInstantiate* takes a private copy of the graph
(its nodes remember the application's node they copy, which the
cuGraphExec*SetParams calls name), cuGraphLaunch runs it in its stream in an
order that keeps every edge (all work goes into one in-order queue, so
every order between streams is kept too), and cuGraphExecUpdate checks a graph against it with
NVIDIA's rules, then takes its parameters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.graph import model, vendor
from zmlir.runtime.cuda.graph.conditional import WHILE
from zmlir.runtime.cuda.graph.construct import ConstructAPI
from zmlir.runtime.cuda.graph.model import (
    AllocParams,
    ChildParams,
    ConditionalParams,
    CopyParams,
    EmptyParams,
    EventParams,
    FreeParams,
    Graph,
    HostParams,
    KernelParams,
    MemsetParams,
    Node,
    WorkParams,
    inner_graphs,
)
from zmlir.runtime.cuda.objects import Event
from zmlir.runtime.cuda.state import log

E = CUresult
# CUgraphInstantiate_flags
AUTO_FREE_ON_LAUNCH, UPLOAD, DEVICE_LAUNCH, USE_NODE_PRIORITY = 1, 2, 4, 8
# CUgraphInstantiateResult
INSTANTIATE_SUCCESS, INSTANTIATE_ERROR, INSTANTIATE_INVALID_STRUCTURE = 0, 1, 2
# CUgraphExecUpdateResult
(UPDATE_SUCCESS, UPDATE_ERROR, UPDATE_TOPOLOGY_CHANGED, UPDATE_NODE_TYPE_CHANGED,
 UPDATE_FUNCTION_CHANGED, UPDATE_PARAMETERS_CHANGED, UPDATE_NOT_SUPPORTED) = range(7)
# Only these nodes can be disabled (cuGraphNodeSetEnabled).
_CAN_DISABLE = (model.KERNEL, model.MEMCPY, model.MEMSET)


@dataclass(eq=False)
class GraphExec:
    graph: Graph  # the private copy that runs
    source: Graph  # the graph instantiated
    flags: int
    orders: dict[int, list[Node]] = field(default_factory=dict)  # id(graph) -> run order
    # The backend's own copy that replays it (graph/vendor.py), once built;
    # vendor_refused: none can be, until the graph changes.
    vendor: vendor.VendorGraph | None = None
    vendor_refused: bool = False

    def node_for(self, node: Node) -> Node | None:
        """The copy of the application's `node` (of the instantiated graph)."""
        return next((n for n in self.graph.nodes if n.origin is node), None)


@dataclass
class UpdateError(Exception):
    result: int
    node: Node | None = None  # of the graph given


def _graphs(graph: Graph) -> list[Graph]:
    """`graph` and the graphs its nodes hold, at every depth."""
    return [graph] + [inner for n in graph.walk() for inner in inner_graphs(n.params)]


class ExecAPI(ConstructAPI):
    def _exec(self, handle: Any) -> GraphExec:
        self.require_init()
        self._take_vendor_updates()
        self._take_graph_params()
        ge = self.handles.find(self.ptr(handle))
        if not isinstance(ge, GraphExec):
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"not a graph exec: "
                                                        f"0x{self.ptr(handle):x}")
        return ge

    def _retain_copy(self, graph: Graph) -> None:
        """A private copy of a graph holds its memory and user objects too."""
        for g in _graphs(graph):
            self.retain_user_objects(g.user_objects)
        for n in graph.walk():
            if isinstance(n.params, AllocParams):
                self.graph_memory.retain(n.params.slot)

    def _release_copy(self, graph: Graph) -> None:
        for g in _graphs(graph):
            self.release_user_objects(g.user_objects)
        self.release_graph_memory(graph)

    # -- instantiation -------------------------------------------------------------

    def instantiate(self, graph: Any, flags: int
                    ) -> tuple[int, GraphExec | None, int, Node | None]:
        """(CUresult, the executable graph, CUgraphInstantiateResult, the
        node an error is reported at)."""
        self.current_context()
        g = self.graph_of(graph)
        if flags & DEVICE_LAUNCH:
            return self.unsupported("cuGraphInstantiate", "device launch"), None, \
                INSTANTIATE_ERROR, None
        if flags & ~(AUTO_FREE_ON_LAUNCH | UPLOAD | USE_NODE_PRIORITY):
            return E.CUDA_ERROR_INVALID_VALUE, None, INSTANTIATE_ERROR, None
        for sub in _graphs(g):
            if (cycle := sub.cycle_node()) is not None:
                return E.CUDA_ERROR_INVALID_VALUE, None, INSTANTIATE_INVALID_STRUCTURE, cycle
        if g.instances and g.has_memory_nodes():  # one instance at a time (NVIDIA's code)
            return E.CUDA_ERROR_NOT_SUPPORTED, None, INSTANTIATE_ERROR, None
        if g.instances and any(n.type == model.CONDITIONAL for n in g.walk()):
            return E.CUDA_ERROR_INVALID_VALUE, None, INSTANTIATE_ERROR, None
        ge = GraphExec(g.clone(), g, flags)
        self._retain_copy(ge.graph)
        g.instances += 1
        return E.CUDA_SUCCESS, ge, INSTANTIATE_SUCCESS, None

    def cuGraphInstantiateWithFlags(self, pexec: Any, graph: Any, flags: int) -> int:
        if pexec == self.ffi.NULL or flags & UPLOAD:  # UPLOAD: WithParams only
            return E.CUDA_ERROR_INVALID_VALUE
        code, ge, _, _ = self.instantiate(graph, flags)
        if ge is not None:
            pexec[0] = self.handle_ptr(self.handles.add(ge))
        return code

    def cuGraphInstantiate(self, pexec: Any, graph: Any, perror: Any, log: Any,
                           size: int) -> int:
        if pexec == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        code, ge, _, error_node = self.instantiate(graph, 0)
        if ge is not None:
            pexec[0] = self.handle_ptr(self.handles.add(ge))
        if perror != self.ffi.NULL:
            perror[0] = self.handle_ptr(error_node.handle) if error_node else self.ffi.NULL
        if log != self.ffi.NULL and size:
            log[0] = b"\0"
        return code

    cuGraphInstantiate_v2 = cuGraphInstantiate

    def cuGraphInstantiateWithParams(self, pexec: Any, graph: Any, params: Any) -> int:
        if params == self.ffi.NULL or pexec == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        p = params[0]
        code, ge, result, error_node = self.instantiate(graph, int(p.flags))
        if ge is not None:
            pexec[0] = self.handle_ptr(self.handles.add(ge))
            if p.flags & UPLOAD:
                code = self.cuGraphUpload(pexec[0], p.hUploadStream)
        p.hErrNode_out = self.handle_ptr(error_node.handle) if error_node else self.ffi.NULL
        p.result_out = result
        return code

    def cuGraphExecGetFlags(self, exec_: Any, flags: Any) -> int:
        ge = self._exec(exec_)
        self.out(flags, ge.flags)
        return E.CUDA_SUCCESS

    def cuGraphUpload(self, exec_: Any, stream: Any) -> int:
        self._exec(exec_)  # nothing to upload: nodes run from the host
        self.stream(stream)
        return E.CUDA_SUCCESS

    def cuGraphExecDestroy(self, exec_: Any) -> int:
        ge = self._exec(exec_)
        self._drop_vendor(exec_, ge)
        self.handles.remove(self.ptr(exec_), GraphExec)
        self._release_copy(ge.graph)
        ge.source.instances -= 1
        return E.CUDA_SUCCESS

    # -- launching -----------------------------------------------------------------

    def cuGraphLaunch(self, exec_: Any, stream: Any) -> int:
        self.current_context()
        ge = self._exec(exec_)
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            # Refused, as NVIDIA's (a child graph node is the way), and like
            # its other refusals in a capture, the capture is invalidated.
            s.capture.invalidated = True
            return E.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        live = {n.params.slot for n in ge.graph.walk()
                if isinstance(n.params, AllocParams) and n.params.slot.live}
        if live and not ge.flags & AUTO_FREE_ON_LAUNCH:
            return E.CUDA_ERROR_INVALID_VALUE  # its allocations of a launch before are unfreed
        for slot in live:
            self.graph_memory.free(slot.address)
        replay = self._vendor_graph(ge) if self.device.vendor_graphs else None
        if replay is not None:
            self.check_sticky()  # as a launch: an earlier kernel may have faulted
            code = self.device.graph_launch(replay.graph_exec, self.vendor_queue(stream))
            if code == E.CUDA_SUCCESS:  # the next launches: fastpath.c's
                vendor.register(self, self.ptr(exec_), ge.graph, replay)
            return code

        def run() -> int:
            for graph in _graphs(ge.graph):
                self.assign_defaults(graph)
            return self._run(ge, ge.graph)

        return self.enqueue(stream, run)

    def _take_graph_params(self) -> None:
        """Kernel node parameters fastpath.c gave NVIDIA's copies: ours too."""
        for graph, node, function, grid, block, shared, args in self.fast.take_graph_params():
            ge = self.handles.find(graph)
            origin = self.handles.find(node)
            copy = ge.node_for(origin) if isinstance(ge, GraphExec) else None
            if copy is not None:
                copy.params = KernelParams(function, grid, block, shared, args)
                ge.orders.clear()

    # -- graphs the vendor's driver captured (fastpath.c: stream capture) -----------

    def captured_graph(self, handle: int) -> Graph | None:
        # Updates made from it so far take it as captured (the application
        # may change it once it is ours).
        self._take_vendor_updates()
        graph = self.handles.find(handle)
        if isinstance(graph, Graph):  # an update's graph, taken over just now
            return graph
        return vendor.imported(self, handle, handles=True) if self.fast.take_captured(handle) \
            else None

    def _take_vendor_updates(self) -> None:
        """Updates fastpath.c made of NVIDIA's copies of executable graphs
        from captured graphs: ours take them too; where one failed there,
        NVIDIA's copy goes (built again at the next launch)."""
        if not self.fast.updates_pending():
            return
        for handle, ge in list(self.handles.items(GraphExec)):
            captured, failed, destroyed = self.fast.take_update(handle)
            if captured:
                try:
                    graph = vendor.imported(self, captured, handles=False) if destroyed \
                        else self.graph_of(captured)
                finally:
                    self.fast.update_done(captured)
                try:  # NVIDIA's rules are the rules of what its copy took
                    self._take_update(ge, graph, checked=False)
                except UpdateError:  # another shape: NVIDIA's copy would not take it
                    log(f"stream capture: graph 0x{captured:x} updated NVIDIA's copy only")
                    failed = True
            if failed:
                self._drop_vendor(handle, ge)

    def _vendor_graph(self, ge: GraphExec) -> vendor.VendorGraph | None:
        if ge.vendor is None and not ge.vendor_refused:
            ge.vendor = vendor.build(self, ge.graph)
            ge.vendor_refused = ge.vendor is None
        return ge.vendor

    def _drop_vendor(self, exec_: Any, ge: GraphExec) -> None:
        """The executable graph changed: the backend's copy goes (built again
        at the next launch), and fastpath.c forgets it (vendor.release)."""
        if ge.vendor is not None:
            vendor.release(self, self.ptr(exec_), ge.vendor)
        ge.vendor, ge.vendor_refused = None, False

    def _run(self, ge: GraphExec, graph: Graph) -> int:
        order = ge.orders.get(id(graph))
        if order is None:
            order = ge.orders[id(graph)] = graph.topological_order() or []
        for node in order:
            if node.enabled:
                code = self._run_node(ge, node)
                if code != E.CUDA_SUCCESS:
                    return code
        return E.CUDA_SUCCESS

    def _run_node(self, ge: GraphExec, node: Node) -> int:
        p = node.params
        if isinstance(p, KernelParams):
            if node.c_params is None or node.c_params[0] is not p:
                buffers = [self.ffi.new("char[]", a) for a in p.args]
                node.c_params = (p, buffers, self.ffi.new("void *[]", buffers or 1))
            return self.launch(p.function, p.grid, p.block, p.shared, node.c_params[2],
                               self.ffi.NULL, None)
        if isinstance(p, CopyParams):
            c = self.ffi.new("CUDA_MEMCPY3D *")
            self.ffi.memmove(c, p.copy, len(p.copy))
            return self.cuMemcpy3D_v2(c)
        if isinstance(p, MemsetParams):
            return self.memset_2d(p.dst, p.pitch, p.value, p.element_size, p.width, p.height)
        if isinstance(p, HostParams):
            self.device.synchronize()
            with self.lock:  # what kernels printed before, in the stream's order
                self.printf.flush(even_held=True)
            p.fn(p.user_data)
            return E.CUDA_SUCCESS
        if isinstance(p, EventParams):
            ev = self.handles.find(p.event)
            if p.type == model.EVENT_RECORD and isinstance(ev, Event):
                self.record_event(ev)
            return E.CUDA_SUCCESS
        if isinstance(p, ChildParams):
            return self._run(ge, p.graph)
        if isinstance(p, ConditionalParams):
            return self._run_conditional(ge, p)
        if isinstance(p, AllocParams):
            self.graph_memory.allocate(p.slot, p.size)
            return E.CUDA_SUCCESS
        if isinstance(p, FreeParams):
            self.graph_memory.free(p.address)
            return E.CUDA_SUCCESS
        if isinstance(p, WorkParams):
            return p.work()
        assert isinstance(p, EmptyParams), p
        return E.CUDA_SUCCESS

    def _run_conditional(self, ge: GraphExec, p: ConditionalParams) -> int:
        if p.kind == WHILE:
            while self.condition(p.handle):
                code = self._run(ge, p.bodies[0])
                if code != E.CUDA_SUCCESS:
                    return code
            return E.CUDA_SUCCESS
        for body in self.bodies_to_run(p):
            code = self._run(ge, body)
            if code != E.CUDA_SUCCESS:
                return code
        return E.CUDA_SUCCESS

    # -- updates -----------------------------------------------------------------------

    def _check_params(self, old: Node, new: Node) -> None:
        """Raises the UpdateError NVIDIA's rules give for `new`'s parameters
        replacing `old`'s (nodes of the same type)."""
        a, b = old.params, new.params
        if isinstance(a, CopyParams):
            if vendor.memory_types(a.copy, self.ffi) != vendor.memory_types(b.copy, self.ffi):
                raise UpdateError(UPDATE_PARAMETERS_CHANGED, new)
        elif isinstance(a, MemsetParams):
            two_d = a.height > 1 or b.height > 1  # only the address and value may change
            if two_d and (a.width, a.height, a.pitch, a.element_size) != (
                    b.width, b.height, b.pitch, b.element_size):
                raise UpdateError(UPDATE_PARAMETERS_CHANGED, new)
        elif isinstance(a, AllocParams):
            if (a.slot, a.size) != (b.slot, b.size):
                raise UpdateError(UPDATE_NOT_SUPPORTED, new)
        elif isinstance(a, FreeParams):
            if a.address != b.address:
                raise UpdateError(UPDATE_NOT_SUPPORTED, new)
        elif isinstance(a, ChildParams):
            try:
                self._check_update(a.graph, b.graph)
            except UpdateError as err:
                raise UpdateError(err.result, new) from None
        elif isinstance(a, ConditionalParams):  # only its bodies' nodes may change
            if (a.handle, a.kind, len(a.bodies)) != (b.handle, b.kind, len(b.bodies)):
                raise UpdateError(UPDATE_PARAMETERS_CHANGED, new)
            try:
                for body_a, body_b in zip(a.bodies, b.bodies, strict=True):
                    self._check_update(body_a, body_b)
            except UpdateError as err:
                raise UpdateError(err.result, new) from None

    def _check_update(self, old: Graph, new: Graph, params: bool = True) -> None:
        """Nodes pair in creation order; each pair must have the same type,
        dependents (paired) and updatable parameters (unless not `params`).
        As NVIDIA's (an H200's answers): the nodes are checked last first, an
        edge by its source node's dependents, and no "from" node is named."""
        if len(old.nodes) != len(new.nodes):
            raise UpdateError(UPDATE_TOPOLOGY_CHANGED)
        index = {n: i for i, n in enumerate(new.nodes)}
        old_index = {n: i for i, n in enumerate(old.nodes)}
        for a, b in reversed(list(zip(old.nodes, new.nodes, strict=True))):
            if a.type != b.type:
                raise UpdateError(UPDATE_NODE_TYPE_CHANGED, b)
            if sorted(old_index[d] for d in a.dependents) != sorted(index[d] for d in
                                                                    b.dependents):
                raise UpdateError(UPDATE_TOPOLOGY_CHANGED, b)
            if params:
                self._check_params(a, b)

    def _take_params(self, old: Node, new: Node) -> None:
        if isinstance(new.params, ChildParams):
            self._release_copy(old.params.graph)
            copy = new.params.graph.clone()
            self._retain_copy(copy)
            copy.owner = old
            old.params = ChildParams(copy)
        elif isinstance(new.params, ConditionalParams):
            for body_old, body_new in zip(old.params.bodies, new.params.bodies, strict=True):
                for a, b in zip(body_old.nodes, body_new.nodes, strict=True):
                    self._take_params(a, b)
        else:
            old.params = new.params

    def _take_update(self, ge: GraphExec, g: Graph, checked: bool = True) -> list[Node]:
        """`g`'s parameters into `ge`'s copy (an update its rules allow, else
        UpdateError; not `checked`: one NVIDIA's made, of a graph of the same
        shape); the nodes whose parameters changed."""
        self._check_update(ge.graph, g, params=checked)
        # NVIDIA's copy needs only what changed: a capture per iteration
        # (jacobiCudaGraphs) changes one kernel's arguments of its three nodes.
        changed = [old for old, new in zip(ge.graph.nodes, g.nodes, strict=True)
                   if old.params != new.params]
        for old, new in zip(ge.graph.nodes, g.nodes, strict=True):
            self._take_params(old, new)
        ge.graph.conditions = dict(g.conditions)  # flags and defaults update too
        ge.orders.clear()
        return changed

    def cuGraphExecUpdate_v2(self, exec_: Any, graph: Any, info: Any) -> int:
        ge, g = self._exec(exec_), self.graph_of(graph)
        if info == self.ffi.NULL:  # NVIDIA updates all the same
            info = self.ffi.new("CUgraphExecUpdateResultInfo *")
        try:
            changed = self._take_update(ge, g)
        except UpdateError as err:
            info[0].result = err.result
            info[0].errorNode = self.handle_ptr(err.node.handle if err.node else 0)
            info[0].errorFromNode = self.ffi.NULL
            return E.CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE
        if ge.vendor is not None and not vendor.update(self, ge.vendor, changed):
            self._drop_vendor(exec_, ge)
        info[0].result = UPDATE_SUCCESS
        info[0].errorNode = info[0].errorFromNode = self.ffi.NULL
        return E.CUDA_SUCCESS

    def cuGraphExecUpdate(self, exec_: Any, graph: Any, perror: Any, presult: Any) -> int:
        info = self.ffi.new("CUgraphExecUpdateResultInfo *")
        code = self.cuGraphExecUpdate_v2(exec_, graph, info)
        if perror != self.ffi.NULL:
            perror[0] = info.errorNode
        if presult != self.ffi.NULL:
            presult[0] = info.result
        return code

    # -- an instantiation's node parameters ------------------------------------------

    def _exec_node(self, exec_: Any, node: Any, node_type: int | None = None) -> Node:
        ge = self._exec(exec_)
        copy = ge.node_for(self.node_of(node, node_type))
        if copy is None:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "not a node of the instantiated graph")
        return copy

    def _set_exec_params(self, exec_: Any, node: Any, params: Any) -> int:
        """Sets an instantiation's node's parameters where an update could."""
        copy = self._exec_node(exec_, node)
        if copy.type != params.type or copy.type in (model.MEM_ALLOC, model.MEM_FREE):
            return E.CUDA_ERROR_INVALID_VALUE
        new = Node(params, copy.graph)
        try:
            self._check_params(copy, new)
        except UpdateError:
            return E.CUDA_ERROR_INVALID_VALUE
        self._take_params(copy, new)
        ge = self._exec(exec_)
        ge.orders.clear()
        if ge.vendor is not None and not vendor.set_params(self, ge.vendor, copy):
            self._drop_vendor(exec_, ge)
        return E.CUDA_SUCCESS

    def cuGraphExecKernelNodeSetParams(self, exec_: Any, node: Any, p: Any) -> int:
        return self._set_exec_params(exec_, node, self.kernel_params(p, False))

    def cuGraphExecKernelNodeSetParams_v2(self, exec_: Any, node: Any, p: Any) -> int:
        return self._set_exec_params(exec_, node, self.kernel_params(p, True))

    def cuGraphExecMemcpyNodeSetParams(self, exec_: Any, node: Any, p: Any, ctx: Any) -> int:
        return self._set_exec_params(exec_, node, self.copy_params(p))

    def cuGraphExecMemsetNodeSetParams(self, exec_: Any, node: Any, p: Any, ctx: Any) -> int:
        return self._set_exec_params(exec_, node, self.memset_params(p))

    def cuGraphExecHostNodeSetParams(self, exec_: Any, node: Any, p: Any) -> int:
        return self._set_exec_params(exec_, node, self.host_params(p))

    def cuGraphExecChildGraphNodeSetParams(self, exec_: Any, node: Any, child: Any) -> int:
        return self._set_exec_params(exec_, node, ChildParams(self.graph_of(child)))

    def cuGraphExecEventRecordNodeSetEvent(self, exec_: Any, node: Any, event: Any) -> int:
        return self._set_exec_params(exec_, node, self.event_params(event, model.EVENT_RECORD))

    def cuGraphExecEventWaitNodeSetEvent(self, exec_: Any, node: Any, event: Any) -> int:
        return self._set_exec_params(exec_, node, self.event_params(event, model.WAIT_EVENT))

    def cuGraphExecNodeSetParams(self, exec_: Any, node: Any, p: Any) -> int:
        if p != self.ffi.NULL and p[0].type == model.GRAPH:
            return self.cuGraphExecChildGraphNodeSetParams(exec_, node, p[0].graph.graph)
        return self._set_exec_params(exec_, node, self.node_params(p, None, []))

    def cuGraphNodeSetEnabled(self, exec_: Any, node: Any, enabled: int) -> int:
        copy = self._exec_node(exec_, node)
        if copy.type not in _CAN_DISABLE:
            return E.CUDA_ERROR_INVALID_VALUE
        if copy.enabled != bool(enabled):
            copy.enabled = bool(enabled)
            self._drop_vendor(exec_, self._exec(exec_))
        return E.CUDA_SUCCESS

    def cuGraphNodeGetEnabled(self, exec_: Any, node: Any, enabled: Any) -> int:
        copy = self._exec_node(exec_, node)
        if copy.type not in _CAN_DISABLE:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(enabled, int(copy.enabled))
        return E.CUDA_SUCCESS

