"""Building and inspecting graphs node by node: cuGraphCreate, cuGraphAdd*Node,
their *GetParams/*SetParams, cuGraphAddNode's CUgraphNodeParams, edges,
queries, cloning and destroying; graph memory's allocation and free nodes
and the device's graph memory attributes. Parameters are read from the C
structures when a node is made (kernel arguments copied, as NVIDIA's) into
model.py's values."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.function import packed_offsets, param_dtype
from zmlir.runtime.cuda.graph import model
from zmlir.runtime.cuda.graph.conditional import ConditionalAPI
from zmlir.runtime.cuda.graph.memory import Slot
from zmlir.runtime.cuda.graph.model import (
    AllocParams,
    ChildParams,
    CopyParams,
    EmptyParams,
    EventParams,
    FreeParams,
    Graph,
    HostParams,
    KernelParams,
    MemsetParams,
    Node,
    add_node,
    ancestors,
    inner_graphs,
)
from zmlir.runtime.cuda.launch import LaunchAPI
from zmlir.runtime.cuda.memcpy import ARRAY, DEVICE, HOST, UNIFIED, MemcpyAPI
from zmlir.runtime.cuda.objects import Event, Function

E = CUresult
_ALLOCATION_TYPE_PINNED, _LOCATION_TYPE_DEVICE = 1, 1


def _invalid(why: str) -> CudaError:
    return CudaError(E.CUDA_ERROR_INVALID_VALUE, why)


class ConstructAPI(ConditionalAPI, LaunchAPI, MemcpyAPI):
    def cuGraphCreate(self, pgraph: Any, flags: int) -> int:
        self.current_context()
        if flags != 0 or pgraph == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        graph = Graph()
        graph.handle = self.handles.add(graph)
        pgraph[0] = self.handle_ptr(graph.handle)
        return E.CUDA_SUCCESS

    def cuGraphDestroy(self, graph: Any) -> int:
        g = self.graph_of(graph)
        if g.owner is not None:  # a child graph node's: the node owns it
            return E.CUDA_ERROR_INVALID_VALUE
        self.destroy_graph(g)
        return E.CUDA_SUCCESS

    def _add(self, pnode: Any, graph: Any, deps: Any, count: int, make: Any) -> int:
        """Adds the node `make(graph, dependencies)`'s parameters describe."""
        self.current_context()
        if pnode == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        g = self.graph_of(graph)
        dependencies = self.node_list(deps, count, g)
        node = add_node(self.handles, g, make(g, dependencies), dependencies)
        pnode[0] = self.handle_ptr(node.handle)
        return E.CUDA_SUCCESS

    # -- kernel nodes -------------------------------------------------------------

    def kernel_params(self, p: Any, with_kernel: bool) -> KernelParams:
        """A CUDA_KERNEL_NODE_PARAMS (v2 and v3: `with_kernel`, a CUkernel
        in `kern` where `func` is NULL); the arguments are copied."""
        if p == self.ffi.NULL:
            raise _invalid("NULL kernel node parameters")
        c = p[0]
        handle = self.ptr(c.func) or (self.ptr(c.kern) if with_kernel else 0)
        fn = self.handles.find(handle)
        if not isinstance(fn, Function):
            raise _invalid(f"not a function: 0x{handle:x}")
        grid = (c.gridDimX, c.gridDimY, c.gridDimZ)
        block = (c.blockDimX, c.blockDimY, c.blockDimZ)
        if min(grid) < 1 or min(block) < 1:
            raise _invalid(f"grid {grid}, block {block}")
        args = self._kernel_args(fn, c.kernelParams, c.extra)
        return KernelParams(handle, grid, block, int(c.sharedMemBytes), args)

    def _kernel_args(self, fn: Function, params: Any, extra: Any) -> tuple[bytes, ...]:
        dtypes = [param_dtype(t) for t in fn.info.params]
        if any(d is None for d in dtypes):
            raise CudaError(self.unsupported("cuGraphAddKernelNode",
                                             f"a parameter type of {fn.name}"))
        if params != self.ffi.NULL and extra != self.ffi.NULL:
            raise _invalid("both kernelParams and extra")
        if extra != self.ffi.NULL:
            buffer = self._extra_buffer(extra)
            offsets, end = packed_offsets(fn.info.params, [d.itemsize for d in dtypes])
            if end > len(buffer):
                raise _invalid("extra's buffer is too small")
            return tuple(buffer[offset:offset + d.itemsize]
                         for d, offset in zip(dtypes, offsets, strict=True))
        if dtypes and params == self.ffi.NULL:
            raise _invalid("no kernel arguments")
        if any(params[i] == self.ffi.NULL for i in range(len(dtypes))):
            raise _invalid("a NULL kernel argument")
        return tuple(bytes(self.ffi.buffer(params[i], d.itemsize))
                     for i, d in enumerate(dtypes))

    def kernel_params_out(self, node: Node, out: Any, with_kernel: bool) -> None:
        """Fills a CUDA_KERNEL_NODE_PARAMS: kernelParams point at the node's copies."""
        if out == self.ffi.NULL:
            raise _invalid("NULL output")
        k: KernelParams = node.params
        if node.c_params is None or node.c_params[0] is not k:
            buffers = [self.ffi.new("char[]", a) for a in k.args]
            node.c_params = (k, buffers, self.ffi.new("void *[]", buffers or 1))
        c = out[0]
        c.func = self.handle_ptr(k.function)
        c.gridDimX, c.gridDimY, c.gridDimZ = k.grid
        c.blockDimX, c.blockDimY, c.blockDimZ = k.block
        c.sharedMemBytes = k.shared
        c.kernelParams = node.c_params[2]
        c.extra = self.ffi.NULL
        if with_kernel:  # a CUkernel is its CUfunction here: cudart maps kern to its entry
            c.kern, c.ctx = self.handle_ptr(k.function), self.ffi.NULL

    def cuGraphAddKernelNode(self, pnode: Any, graph: Any, deps: Any, count: int,
                             p: Any) -> int:
        return self._add(pnode, graph, deps, count, lambda g, d: self.kernel_params(p, False))

    def cuGraphAddKernelNode_v2(self, pnode: Any, graph: Any, deps: Any, count: int,
                                p: Any) -> int:
        return self._add(pnode, graph, deps, count, lambda g, d: self.kernel_params(p, True))

    def cuGraphKernelNodeGetParams(self, node: Any, out: Any) -> int:
        self.kernel_params_out(self.node_of(node, model.KERNEL), out, False)
        return E.CUDA_SUCCESS

    def cuGraphKernelNodeGetParams_v2(self, node: Any, out: Any) -> int:
        self.kernel_params_out(self.node_of(node, model.KERNEL), out, True)
        return E.CUDA_SUCCESS

    def cuGraphKernelNodeSetParams(self, node: Any, p: Any) -> int:
        self.node_of(node, model.KERNEL).params = self.kernel_params(p, False)
        return E.CUDA_SUCCESS

    def cuGraphKernelNodeSetParams_v2(self, node: Any, p: Any) -> int:
        self.node_of(node, model.KERNEL).params = self.kernel_params(p, True)
        return E.CUDA_SUCCESS

    # -- memcpy and memset nodes ------------------------------------------------------

    def copy_params(self, p: Any) -> CopyParams:
        if p == self.ffi.NULL:
            raise _invalid("NULL copy parameters")
        c = p[0]
        for side, kind, device in (("source", c.srcMemoryType, c.srcDevice),
                                   ("destination", c.dstMemoryType, c.dstDevice)):
            if kind == ARRAY:
                raise CudaError(self.unsupported("cuGraphAddMemcpyNode", f"CUDA arrays ({side})"))
            if kind not in (HOST, DEVICE, UNIFIED):
                raise _invalid(f"{side} memory type {kind}")
            if kind == DEVICE and c.WidthInBytes and self.allocations.containing(device) is None \
                    and self.host_ranges.containing(device) is None:
                raise _invalid(f"{side} 0x{device:x} is no device memory")
        return CopyParams(bytes(self.ffi.buffer(p)))

    def cuGraphAddMemcpyNode(self, pnode: Any, graph: Any, deps: Any, count: int, p: Any,
                             ctx: Any) -> int:
        return self._add(pnode, graph, deps, count, lambda g, d: self.copy_params(p))

    def cuGraphMemcpyNodeGetParams(self, node: Any, out: Any) -> int:
        n = self.node_of(node, model.MEMCPY)
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        self.ffi.memmove(out, n.params.copy, len(n.params.copy))
        return E.CUDA_SUCCESS

    def cuGraphMemcpyNodeSetParams(self, node: Any, p: Any) -> int:
        self.node_of(node, model.MEMCPY).params = self.copy_params(p)
        return E.CUDA_SUCCESS

    def memset_params(self, p: Any) -> MemsetParams:
        if p == self.ffi.NULL:
            raise _invalid("NULL memset parameters")
        c = p[0]
        if c.elementSize not in (1, 2, 4) or c.width == 0 or c.height == 0:
            raise _invalid(f"memset of element size {c.elementSize}, {c.width}x{c.height}")
        row = c.width * c.elementSize
        if c.height > 1 and c.pitch < row:
            raise _invalid(f"pitch {c.pitch} < row {row}")
        self.on_device(c.dst, (c.height - 1) * c.pitch + row)  # raises unless device memory
        mask = (1 << (8 * c.elementSize)) - 1
        return MemsetParams(int(c.dst), int(c.pitch), int(c.value) & mask, int(c.elementSize),
                            int(c.width), int(c.height))

    def cuGraphAddMemsetNode(self, pnode: Any, graph: Any, deps: Any, count: int, p: Any,
                             ctx: Any) -> int:
        return self._add(pnode, graph, deps, count, lambda g, d: self.memset_params(p))

    def cuGraphMemsetNodeGetParams(self, node: Any, out: Any) -> int:
        m: MemsetParams = self.node_of(node, model.MEMSET).params
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        c = out[0]
        c.dst, c.pitch, c.value, c.elementSize = m.dst, m.pitch, m.value, m.element_size
        c.width, c.height = m.width, m.height
        return E.CUDA_SUCCESS

    def cuGraphMemsetNodeSetParams(self, node: Any, p: Any) -> int:
        self.node_of(node, model.MEMSET).params = self.memset_params(p)
        return E.CUDA_SUCCESS

    # -- host, child graph, empty and event nodes -----------------------------------

    def host_params(self, p: Any) -> HostParams:
        if p == self.ffi.NULL or p[0].fn == self.ffi.NULL:
            raise _invalid("no host function")
        return HostParams(p[0].fn, p[0].userData)

    def cuGraphAddHostNode(self, pnode: Any, graph: Any, deps: Any, count: int, p: Any) -> int:
        return self._add(pnode, graph, deps, count, lambda g, d: self.host_params(p))

    def cuGraphHostNodeGetParams(self, node: Any, out: Any) -> int:
        h: HostParams = self.node_of(node, model.HOST).params
        if out == self.ffi.NULL or not isinstance(h, HostParams):
            return E.CUDA_ERROR_INVALID_VALUE
        out[0].fn, out[0].userData = h.fn, h.user_data
        return E.CUDA_SUCCESS

    def cuGraphHostNodeSetParams(self, node: Any, p: Any) -> int:
        self.node_of(node, model.HOST).params = self.host_params(p)
        return E.CUDA_SUCCESS

    def child_params(self, child: Any, parent: Graph | None) -> ChildParams:
        c = self.graph_of(child)
        if c is parent:
            raise _invalid("a graph as its own child")
        if c.has_memory_nodes():  # only a moved child graph may hold them (NVIDIA: 801)
            raise CudaError(E.CUDA_ERROR_NOT_SUPPORTED, "a child graph with memory nodes")
        if any(n.type == model.CONDITIONAL for n in c.walk()):
            raise _invalid("a child graph with conditional nodes")
        copy = c.clone()
        self.retain_user_objects(copy.user_objects)
        return ChildParams(copy)

    def cuGraphAddChildGraphNode(self, pnode: Any, graph: Any, deps: Any, count: int,
                                 child: Any) -> int:
        code = self._add(pnode, graph, deps, count, lambda g, d: self.child_params(child, g))
        if code == E.CUDA_SUCCESS:
            node = self.node_of(pnode[0])
            node.params.graph.owner = node
        return code

    def cuGraphChildGraphNodeGetGraph(self, node: Any, pgraph: Any) -> int:
        child: Graph = self.node_of(node, model.GRAPH).params.graph
        if pgraph == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        if not child.handle:  # the node keeps owning it: changes to it change the node
            child.handle = self.handles.add(child)
            for n in child.nodes:
                if not n.handle:
                    n.handle = self.handles.add(n)
        pgraph[0] = self.handle_ptr(child.handle)
        return E.CUDA_SUCCESS

    def cuGraphAddEmptyNode(self, pnode: Any, graph: Any, deps: Any, count: int) -> int:
        return self._add(pnode, graph, deps, count, lambda g, d: EmptyParams())

    def event_params(self, event: Any, node_type: int) -> EventParams:
        if not isinstance(self.handles.find(self.ptr(event)), Event):
            raise _invalid(f"not an event: 0x{self.ptr(event):x}")
        return EventParams(self.ptr(event), node_type)

    def cuGraphAddEventRecordNode(self, pnode: Any, graph: Any, deps: Any, count: int,
                                  event: Any) -> int:
        return self._add(pnode, graph, deps, count,
                         lambda g, d: self.event_params(event, model.EVENT_RECORD))

    def cuGraphAddEventWaitNode(self, pnode: Any, graph: Any, deps: Any, count: int,
                                event: Any) -> int:
        return self._add(pnode, graph, deps, count,
                         lambda g, d: self.event_params(event, model.WAIT_EVENT))

    def _event_out(self, node: Any, node_type: int, out: Any) -> int:
        e: EventParams = self.node_of(node, node_type).params
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        out[0] = self.handle_ptr(e.event)
        return E.CUDA_SUCCESS

    def cuGraphEventRecordNodeGetEvent(self, node: Any, out: Any) -> int:
        return self._event_out(node, model.EVENT_RECORD, out)

    def cuGraphEventWaitNodeGetEvent(self, node: Any, out: Any) -> int:
        return self._event_out(node, model.WAIT_EVENT, out)

    def cuGraphEventRecordNodeSetEvent(self, node: Any, event: Any) -> int:
        n = self.node_of(node, model.EVENT_RECORD)
        n.params = self.event_params(event, model.EVENT_RECORD)
        return E.CUDA_SUCCESS

    def cuGraphEventWaitNodeSetEvent(self, node: Any, event: Any) -> int:
        n = self.node_of(node, model.WAIT_EVENT)
        n.params = self.event_params(event, model.WAIT_EVENT)
        return E.CUDA_SUCCESS

    # -- graph memory --------------------------------------------------------------

    def place_allocation(self, graph: Graph, deps: list[Node], size: int) -> Slot:
        """The address range of a new allocation node of `graph` depending
        on `deps`: that of an earlier allocation of the graph every node of
        which was freed before (by a free node among `deps`' ancestors), or
        a new one."""
        before = ancestors(deps)
        frees = [n for n in before if isinstance(n.params, FreeParams)]
        users: dict[Slot, list[Node]] = {}
        for n in graph.nodes:
            if isinstance(n.params, AllocParams):
                users.setdefault(n.params.slot, []).append(n)
        for slot, allocs in users.items():
            if slot.size < size or slot.live:
                continue
            slot_frees = [f for f in frees if f.params.address == slot.address]
            if all(any(a in ancestors([f]) for f in slot_frees) for a in allocs):
                return slot
        slot = self.graph_memory.reserve(size)
        slot.owner = graph
        return slot

    def alloc_params(self, graph: Graph, deps: list[Node], p: Any) -> AllocParams:
        if p == self.ffi.NULL:
            raise _invalid("NULL allocation parameters")
        c = p[0]
        props = c.poolProps
        if c.bytesize == 0 or props.allocType != _ALLOCATION_TYPE_PINNED:
            raise _invalid(f"allocation of {c.bytesize} bytes, type {props.allocType}")
        if props.location.type != _LOCATION_TYPE_DEVICE:
            raise _invalid(f"allocation location type {props.location.type}")
        self.check_device(props.location.id)
        if c.accessDescCount and c.accessDescs == self.ffi.NULL:
            raise _invalid("no access descriptors")
        for i in range(c.accessDescCount):
            d = c.accessDescs[i]
            if d.location.type != _LOCATION_TYPE_DEVICE or d.location.id != 0:
                raise _invalid("access for another device")
        slot = self.place_allocation(graph, deps, int(c.bytesize))
        self.graph_memory.retain(slot)
        slot.allocs += 1
        c.dptr = slot.address
        access = bytes(self.ffi.buffer(c.accessDescs, c.accessDescCount *
                                       self.ffi.sizeof("CUmemAccessDesc"))) \
            if c.accessDescCount else b""
        return AllocParams(slot, int(c.bytesize), bytes(self.ffi.buffer(self.ffi.addressof(c,
                           "poolProps"))), access)

    def cuGraphAddMemAllocNode(self, pnode: Any, graph: Any, deps: Any, count: int,
                               p: Any) -> int:
        return self._add(pnode, graph, deps, count, lambda g, d: self.alloc_params(g, d, p))

    def cuGraphMemAllocNodeGetParams(self, node: Any, out: Any) -> int:
        n = self.node_of(node, model.MEM_ALLOC)
        a: AllocParams = n.params
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        c = out[0]
        self.ffi.memmove(self.ffi.addressof(c, "poolProps"), a.pool_props, len(a.pool_props))
        count = len(a.access) // self.ffi.sizeof("CUmemAccessDesc")
        descs = self.ffi.new("CUmemAccessDesc[]", max(count, 1))
        self.ffi.memmove(descs, a.access, len(a.access))
        n.c_params = descs  # owned by the node
        c.accessDescs = descs if count else self.ffi.NULL
        c.accessDescCount, c.bytesize, c.dptr = count, a.size, a.slot.address
        return E.CUDA_SUCCESS

    def free_params(self, graph: Graph, address: int) -> FreeParams:
        """A free node's: an allocation is freed once, in its own graph or
        in others (an address its graph took again is a new allocation)."""
        slot = self.graph_memory.slots.get(address)
        if slot is None:
            raise _invalid(f"0x{address:x} is no graph allocation")
        if slot.owner is graph:
            if slot.frees + int(slot.freed_elsewhere) >= slot.allocs:
                raise _invalid(f"0x{address:x} freed twice, or in another graph too")
            slot.frees += 1
        else:
            if slot.frees >= slot.allocs:
                raise _invalid(f"0x{address:x} is freed in its own graph")
            slot.freed_elsewhere = True
        return FreeParams(address)

    def cuGraphAddMemFreeNode(self, pnode: Any, graph: Any, deps: Any, count: int,
                              dptr: int) -> int:
        return self._add(pnode, graph, deps, count, lambda g, d: self.free_params(g, dptr))

    def cuGraphMemFreeNodeGetParams(self, node: Any, out: Any) -> int:
        f: FreeParams = self.node_of(node, model.MEM_FREE).params
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        out[0] = f.address
        return E.CUDA_SUCCESS

    def cuDeviceGraphMemTrim(self, dev: int) -> int:
        self.check_device(dev)
        self.device.synchronize()
        self.graph_memory.trim()
        return E.CUDA_SUCCESS

    def cuDeviceGetGraphMemAttribute(self, dev: int, attr: int, value: Any) -> int:
        self.check_device(dev)
        if value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        self.ffi.cast("unsigned long long *", value)[0] = self.graph_memory.attribute(attr)
        return E.CUDA_SUCCESS

    def cuDeviceSetGraphMemAttribute(self, dev: int, attr: int, value: Any) -> int:
        self.check_device(dev)
        if value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        self.graph_memory.reset_high(attr, int(self.ffi.cast("unsigned long long *", value)[0]))
        return E.CUDA_SUCCESS

    # -- cuGraphAddNode: CUgraphNodeParams ---------------------------------------------

    def node_params(self, p: Any, graph: Graph | None, deps: list[Node]) -> Any:
        """The parameters a CUgraphNodeParams describes (`graph`: the graph
        it is added to, None where a node's parameters are set)."""
        if p == self.ffi.NULL:
            raise _invalid("NULL node parameters")
        c, kind = p[0], p[0].type
        if kind == model.KERNEL:
            return self.kernel_params(self.ffi.addressof(c, "kernel"), True)
        if kind == model.MEMCPY:
            if c.memcpy.flags or c.memcpy.reserved:
                raise _invalid("memcpy node flags")
            return self.copy_params(self.ffi.addressof(c.memcpy, "copyParams"))
        if kind == model.MEMSET:
            return self.memset_params(self.ffi.cast("CUDA_MEMSET_NODE_PARAMS *",
                                                    self.ffi.addressof(c, "memset")))
        if kind == model.HOST:
            return self.host_params(self.ffi.addressof(c, "host"))
        if kind == model.GRAPH:
            if c.graph.ownership != 0:
                raise CudaError(self.unsupported("cuGraphAddNode", "moving a child graph"))
            return self.child_params(c.graph.graph, graph)
        if kind == model.EMPTY:
            return EmptyParams()
        if kind in (model.WAIT_EVENT, model.EVENT_RECORD):
            return self.event_params(c.eventWait.event, kind)
        if kind == model.MEM_ALLOC and graph is not None:
            return self.alloc_params(graph, deps, self.ffi.addressof(c, "alloc"))
        if kind == model.MEM_FREE and graph is not None:
            return self.free_params(graph, int(c.free.dptr))
        if kind == model.CONDITIONAL and graph is not None:
            return self.conditional_params(c.conditional, graph)
        if kind in model.NODE_TYPE_NAMES or kind in (8, 9, 12):
            raise CudaError(self.unsupported("cuGraphAddNode/SetParams", f"node type {kind}"))
        raise _invalid(f"node type {kind}")

    def cuGraphAddNode(self, pnode: Any, graph: Any, deps: Any, count: int, p: Any) -> int:
        return self.cuGraphAddNode_v2(pnode, graph, deps, self.ffi.NULL, count, p)

    def cuGraphAddNode_v2(self, pnode: Any, graph: Any, deps: Any, edge_data: Any, count: int,
                          p: Any) -> int:
        self.check_edge_data(edge_data, count)
        code = self._add(pnode, graph, deps, count, lambda g, d: self.node_params(p, g, d))
        if code == E.CUDA_SUCCESS:
            node = self.node_of(pnode[0])
            for inner in inner_graphs(node.params):
                inner.owner = node
        return code

    def cuGraphNodeSetParams(self, node: Any, p: Any) -> int:
        n = self.node_of(node)
        if p != self.ffi.NULL and p[0].type != n.type:
            return E.CUDA_ERROR_INVALID_VALUE
        if n.type in (model.MEM_ALLOC, model.MEM_FREE, model.CONDITIONAL):
            return E.CUDA_ERROR_INVALID_VALUE  # their parameters are fixed
        params = self.node_params(p, None, [])
        if isinstance(params, ChildParams):
            params.graph.owner = n
        n.params = params
        return E.CUDA_SUCCESS

    # -- edges and queries ----------------------------------------------------------

    def _edges(self, graph: Any, src: Any, dst: Any, edge_data: Any,
               count: int) -> tuple[Graph, list[tuple[Node, Node]]]:
        g = self.graph_of(graph)
        self.check_edge_data(edge_data, count)
        if count and (src == self.ffi.NULL or dst == self.ffi.NULL):
            raise _invalid("NULL edge arrays")
        edges = [(self.node_of(src[i]), self.node_of(dst[i])) for i in range(count)]
        if any(a.graph is not g or b.graph is not g for a, b in edges):
            raise _invalid("an edge between nodes of another graph")
        return g, edges

    def cuGraphAddDependencies(self, graph: Any, src: Any, dst: Any, count: int) -> int:
        return self.cuGraphAddDependencies_v2(graph, src, dst, self.ffi.NULL, count)

    def cuGraphAddDependencies_v2(self, graph: Any, src: Any, dst: Any, edge_data: Any,
                                  count: int) -> int:
        _, edges = self._edges(graph, src, dst, edge_data, count)
        if any(a is b or a in b.dependencies for a, b in edges) or len(set(edges)) < len(edges):
            return E.CUDA_ERROR_INVALID_VALUE  # a loop, or an edge that exists
        for a, b in edges:
            model.connect(a, b)
        return E.CUDA_SUCCESS

    def cuGraphRemoveDependencies(self, graph: Any, src: Any, dst: Any, count: int) -> int:
        return self.cuGraphRemoveDependencies_v2(graph, src, dst, self.ffi.NULL, count)

    def cuGraphRemoveDependencies_v2(self, graph: Any, src: Any, dst: Any, edge_data: Any,
                                     count: int) -> int:
        g, edges = self._edges(graph, src, dst, edge_data, count)
        if edges and g.has_memory_nodes():
            return E.CUDA_ERROR_NOT_SUPPORTED  # their edges cannot be removed (NVIDIA's code)
        if any(a not in b.dependencies for a, b in edges) or len(set(edges)) < len(edges):
            return E.CUDA_ERROR_INVALID_VALUE
        for a, b in edges:
            model.disconnect(a, b)
        return E.CUDA_SUCCESS

    def cuGraphGetEdges(self, graph: Any, src: Any, dst: Any, count: Any) -> int:
        return self.cuGraphGetEdges_v2(graph, src, dst, self.ffi.NULL, count)

    def cuGraphGetEdges_v2(self, graph: Any, src: Any, dst: Any, edge_data: Any,
                           count: Any) -> int:
        edges = self.graph_of(graph).edges()
        if count == self.ffi.NULL or (src == self.ffi.NULL) != (dst == self.ffi.NULL) or (
                edge_data != self.ffi.NULL and src == self.ffi.NULL):
            return E.CUDA_ERROR_INVALID_VALUE
        if src == self.ffi.NULL:
            count[0] = len(edges)
            return E.CUDA_SUCCESS
        room = int(count[0])
        for i in range(room):
            a, b = edges[i] if i < len(edges) else (None, None)
            src[i] = self.handle_ptr(a.handle) if a else self.ffi.NULL
            dst[i] = self.handle_ptr(b.handle) if b else self.ffi.NULL
        count[0] = min(room, len(edges))
        self.edge_data_out(edge_data, min(room, len(edges)))
        return E.CUDA_SUCCESS

    def _node_neighbours(self, nodes: list[Node], out: Any, edge_data: Any, count: Any) -> int:
        if edge_data != self.ffi.NULL and out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        self.nodes_out(nodes, out, count)
        if out != self.ffi.NULL:
            self.edge_data_out(edge_data, int(count[0]))
        return E.CUDA_SUCCESS

    def cuGraphNodeGetDependencies(self, node: Any, out: Any, count: Any) -> int:
        return self.cuGraphNodeGetDependencies_v2(node, out, self.ffi.NULL, count)

    def cuGraphNodeGetDependencies_v2(self, node: Any, out: Any, edge_data: Any,
                                      count: Any) -> int:
        return self._node_neighbours(self.node_of(node).dependencies, out, edge_data, count)

    def cuGraphNodeGetDependentNodes(self, node: Any, out: Any, count: Any) -> int:
        return self.cuGraphNodeGetDependentNodes_v2(node, out, self.ffi.NULL, count)

    def cuGraphNodeGetDependentNodes_v2(self, node: Any, out: Any, edge_data: Any,
                                        count: Any) -> int:
        return self._node_neighbours(self.node_of(node).dependents, out, edge_data, count)

    def cuGraphGetNodes(self, graph: Any, out: Any, count: Any) -> int:
        self.nodes_out(self.graph_of(graph).nodes, out, count)
        return E.CUDA_SUCCESS

    def cuGraphGetRootNodes(self, graph: Any, out: Any, count: Any) -> int:
        self.nodes_out(self.graph_of(graph).roots(), out, count)
        return E.CUDA_SUCCESS

    def cuGraphNodeGetType(self, node: Any, out: Any) -> int:
        n = self.node_of(node)
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        out[0] = n.type
        return E.CUDA_SUCCESS

    def cuGraphClone(self, pclone: Any, graph: Any) -> int:
        g = self.graph_of(graph)
        if pclone == self.ffi.NULL or any(n.type == model.CONDITIONAL for n in g.walk()):
            return E.CUDA_ERROR_INVALID_VALUE  # nor those with conditional nodes
        if g.has_memory_nodes():  # nor those with memory nodes: NVIDIA's code for it
            return E.CUDA_ERROR_NOT_SUPPORTED
        copy = g.clone()
        for n in copy.walk():
            if n.graph is copy:
                n.handle = self.handles.add(n)
        self.retain_user_objects(copy.user_objects)
        for n in copy.walk():  # child graphs' copies hold their own references too
            if isinstance(n.params, ChildParams):
                self.retain_user_objects(n.params.graph.user_objects)
        copy.handle = self.handles.add(copy)
        pclone[0] = self.handle_ptr(copy.handle)
        return E.CUDA_SUCCESS

    def cuGraphNodeFindInClone(self, pnode: Any, original: Any, clone: Any) -> int:
        node, copy = self.node_of(original), self.graph_of(clone)
        if pnode == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        for n in copy.nodes:
            if n.origin is node:
                pnode[0] = self.handle_ptr(n.handle)
                return E.CUDA_SUCCESS
        return E.CUDA_ERROR_INVALID_VALUE

    def cuGraphDestroyNode(self, node: Any) -> int:
        n = self.node_of(node)
        g = n.graph
        if g.has_memory_nodes():
            return E.CUDA_ERROR_NOT_SUPPORTED  # their nodes cannot be destroyed (NVIDIA's code)
        for dep in list(n.dependencies):
            model.disconnect(dep, n)
        for dependent in list(n.dependents):
            model.disconnect(n, dependent)
        g.nodes.remove(n)
        if isinstance(n.params, ChildParams):
            self.destroy_graph(n.params.graph)
        self.handles.remove(n.handle, Node)
        n.handle = 0
        return E.CUDA_SUCCESS

    def cuGraphDebugDotPrint(self, graph: Any, path: Any, flags: int) -> int:
        g = self.graph_of(graph)
        if path == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        lines = ["digraph cuda_graph {"]
        for n in g.nodes:
            label = model.NODE_TYPE_NAMES.get(n.type, str(n.type))
            if isinstance(n.params, KernelParams):
                fn = self.handles.find(n.params.function)
                label += f"\\n{getattr(fn, 'name', '?')}\\n<<<{n.params.grid}, {n.params.block}>>>"
            lines.append(f'  n{n.handle:x} [label="{label}"];')
        lines += [f"  n{a.handle:x} -> n{b.handle:x};" for a, b in g.edges()]
        try:
            with open(self.ffi.string(path).decode(), "w") as f:
                f.write("\n".join([*lines, "}"]) + "\n")
        except OSError:
            return E.CUDA_ERROR_OPERATING_SYSTEM
        return E.CUDA_SUCCESS
