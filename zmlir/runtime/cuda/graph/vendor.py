"""Executable graphs replayed as the vendor's own (the CUDA passthrough's
NVIDIA graphs, Backend.vendor_graphs): our replay runs node after node
through the Python driver, a kernel on NVIDIA's NULL stream and a copy
waiting for the device, where NVIDIA's graph is one cuGraphLaunch on the
stream's own stream, which fastpath.c makes once the first launch built it.

A graph is replayed so only if each node is one NVIDIA's graph has as we
mean it: a kernel whose launch is the backend's as it is (launches_as_is:
no trap word, no device-side launches, no printf FIFO or heap still to
size), a fill, a copy between host and device addresses (not arrays), an
application's host function, an empty node, a child graph of these; every
node enabled. Anything else (events, memory nodes, conditionals, what a
capture recorded as Python work) keeps our replay.

A change to the executable graph (cuGraphExec*SetParams, cuGraphExecUpdate)
gives NVIDIA's nodes their new parameters (jacobiCudaGraphs sets a kernel
node's before every launch, or updates from a new capture); where NVIDIA
refuses, for a node inside a child graph, and for a node disabled or
enabled, NVIDIA's copy goes, to be built again at the next launch. A kernel
node's new parameters are fastpath.c's once the graph was launched
(register), which journals them for our copy (ExecAPI._take_graph_params)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zmlir.runtime.cuda.function import param_dtype
from zmlir.runtime.cuda.graph.model import (
    ChildParams,
    CopyParams,
    EmptyParams,
    Graph,
    HostParams,
    KernelParams,
    MemsetParams,
    Node,
)
from zmlir.runtime.cuda.objects import Function

# CUmemorytype of a CUDA_MEMCPY3D's ends: an array's handle is ours, not NVIDIA's.
_MEMORY_ARRAY = 3
# The kernel nodes of a graph whose new parameters fastpath.c may set: a few
# (a solver's step), not a captured network's hundreds in its shared table.
_NODES_REGISTERED = 64


@dataclass(eq=False)
class VendorGraph:
    """NVIDIA's copy of an executable graph: its graph, its instantiation and
    its node for each of ours (by id)."""

    graph: Any
    graph_exec: Any = None
    nodes: dict[int, Any] = field(default_factory=dict)
    # The application's kernel nodes whose new parameters fastpath.c sets.
    registered: list[int] = field(default_factory=list)


def _function(api: Any, p: KernelParams) -> Function | None:
    """The kernel of `p` if a launch of it is the backend's and nothing more,
    with parameters of known sizes."""
    fn = api.handles.find(p.function)
    if not isinstance(fn, Function):
        return None
    if fn.pending is not None:
        fn.pending(fn)  # a kernel of a parted module: its part loads now
    if fn.kernel is None or any(param_dtype(t) is None for t in fn.info.params):
        return None
    return fn if api.launches_as_is(fn) else None


def memory_types(copy: bytes, ffi: Any) -> tuple[int, int]:
    """The CUmemorytype of a CUDA_MEMCPY3D's source and destination."""
    c = ffi.new("CUDA_MEMCPY3D *")
    ffi.memmove(c, copy, len(copy))
    return int(c.srcMemoryType), int(c.dstMemoryType)


def _host_function(api: Any, p: HostParams) -> tuple[int, int]:
    return (int(api.ffi.cast("uintptr_t", p.fn)),
            int(api.ffi.cast("uintptr_t", p.user_data)))


def replayable(api: Any, graph: Graph) -> bool:
    """Whether every node of `graph` has its like in NVIDIA's graphs."""
    for node in graph.nodes:
        p = node.params
        if not node.enabled:
            return False
        if isinstance(p, ChildParams):
            if not replayable(api, p.graph):
                return False
        elif isinstance(p, KernelParams):
            if _function(api, p) is None:
                return False
        elif isinstance(p, CopyParams):
            if _MEMORY_ARRAY in memory_types(p.copy, api.ffi):
                return False
        elif not isinstance(p, MemsetParams | HostParams | EmptyParams):
            return False
    return True


def _add(api: Any, device: Any, g: Any, node: Node, deps: list[Any]) -> Any:
    """NVIDIA's node of `node`, in NVIDIA's graph `g` after `deps`."""
    p = node.params
    if isinstance(p, ChildParams):
        child = device.graph_create()
        try:
            _add_nodes(api, device, child, p.graph, {})
            return device.graph_add_child(g, deps, child)
        finally:
            device.graph_destroy(child)  # the node holds NVIDIA's copy
    if isinstance(p, KernelParams):
        fn = _function(api, p)
        assert fn is not None
        return device.graph_add_kernel(g, deps, fn.kernel, fn.info, p.grid, p.block, p.shared,
                                       p.args)
    if isinstance(p, MemsetParams):
        return device.graph_add_memset(g, deps, p.dst, p.pitch, p.value, p.element_size,
                                       p.width, p.height)
    if isinstance(p, CopyParams):
        return device.graph_add_copy(g, deps, p.copy)
    if isinstance(p, HostParams):
        return device.graph_add_host(g, deps, *_host_function(api, p))
    return device.graph_add_empty(g, deps)


def _add_nodes(api: Any, device: Any, g: Any, graph: Graph, nodes: dict[int, Any]) -> None:
    """`graph`'s nodes into NVIDIA's graph `g`; `nodes` maps each (by id) to
    NVIDIA's."""
    order = graph.topological_order()
    if order is None:
        raise ValueError("a cycle")
    for node in order:
        nodes[id(node)] = _add(api, device, g, node, [nodes[id(d)] for d in node.dependencies])


def build(api: Any, graph: Graph) -> VendorGraph | None:
    """NVIDIA's graph of `graph`, instantiated; None where a node has no like
    there or NVIDIA refuses it (our replay runs it then)."""
    if not replayable(api, graph):
        return None
    device = api.device
    vendor = VendorGraph(device.graph_create())
    try:
        _add_nodes(api, device, vendor.graph, graph, vendor.nodes)
        vendor.graph_exec = device.graph_instantiate(vendor.graph)
    except Exception:  # the backend's refusal: ours replays it
        device.graph_destroy(vendor.graph, vendor.graph_exec)
        return None
    return vendor


def set_params(api: Any, vendor: VendorGraph, node: Node) -> bool:
    """Gives NVIDIA's node of `node` the node's (new) parameters; False where
    it cannot (another kind of node, NVIDIA's refusal: the copy must be
    built again)."""
    p, device = node.params, api.device
    target = vendor.nodes.get(id(node))
    if target is None or not node.enabled:
        return False
    try:
        if isinstance(p, KernelParams):
            fn = _function(api, p)
            if fn is None:
                return False
            device.graph_set_kernel(vendor.graph_exec, target, fn.kernel, fn.info, p.grid,
                                    p.block, p.shared, p.args)
        elif isinstance(p, MemsetParams):
            device.graph_set_memset(vendor.graph_exec, target, p.dst, p.pitch, p.value,
                                    p.element_size, p.width, p.height)
        elif isinstance(p, CopyParams):
            if _MEMORY_ARRAY in memory_types(p.copy, api.ffi):
                return False
            device.graph_set_copy(vendor.graph_exec, target, p.copy)
        elif isinstance(p, HostParams):
            device.graph_set_host(vendor.graph_exec, target, *_host_function(api, p))
        elif not isinstance(p, EmptyParams):
            return False
    except Exception:  # NVIDIA's refusal (another function, another shape, context)
        return False
    return True


def update(api: Any, vendor: VendorGraph, nodes: list[Node]) -> bool:
    """Gives NVIDIA's nodes the parameters `nodes` took from an update
    (cuGraphExecUpdate: same nodes, same edges); False where one cannot."""
    return all(set_params(api, vendor, node) for node in nodes)


def register(api: Any, handle: int, graph: Graph, vendor: VendorGraph) -> None:
    """Hands executable graph `handle`'s replay to fastpath.c: its launches,
    and new parameters of its kernel nodes (those of the graph instantiated)."""
    device = api.device
    api.fast.graph(handle, device.fast_graph(vendor.graph_exec))
    kernels = [n for n in graph.nodes if isinstance(n.params, KernelParams)]
    if vendor.registered or len(kernels) > _NODES_REGISTERED:
        return
    for node in kernels:
        if node.origin is not None and node.origin.handle:
            api.fast.graph_node(node.origin.handle, handle,
                                device.fast_graph(vendor.nodes[id(node)]))
            vendor.registered.append(node.origin.handle)


def release(api: Any, handle: int, vendor: VendorGraph) -> None:
    for node in vendor.registered:
        api.fast.forget(node)
    api.fast.forget(handle)
    api.device.graph_destroy(vendor.graph, vendor.graph_exec)
