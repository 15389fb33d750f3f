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

from zmlir.runtime.cuda import errors
from zmlir.runtime.cuda.function import param_dtype
from zmlir.runtime.cuda.graph import model
from zmlir.runtime.cuda.graph.model import (
    ChildParams,
    CopyParams,
    EmptyParams,
    Graph,
    HostParams,
    KernelParams,
    MemsetParams,
    Node,
    connect,
)
from zmlir.runtime.cuda.memcpy import ARRAY, DEVICE, HOST, UNIFIED
from zmlir.runtime.cuda.objects import Function

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
            if ARRAY in memory_types(p.copy, api.ffi):  # an array's handle is ours
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
            if ARRAY in memory_types(p.copy, api.ffi):
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


# -- NVIDIA's captures of our streams (fastpath.c: stream capture) ----------------


def _our_functions(api: Any) -> dict[int, Function]:
    """Our functions by their kernel's NVIDIA CUfunction (the first of those
    that share one)."""
    functions: dict[int, Function] = {}
    for fn in api.handles.all(Function):
        if fn.bound_kernel is not None:
            functions.setdefault(api.device.fast_graph(fn.bound_kernel.handle), fn)
    return functions


def _imported_params(api: Any, node: int, kind: int, functions: dict[int, Function]) -> Any:
    """Node `node`'s parameters, of CUgraphNodeType `kind`; a kernel node's
    function is ours in `functions` (_our_functions)."""
    device = api.device
    if kind == model.KERNEL:
        function, grid, block, window, params = device.graph_kernel_node(node)
        fn = functions.get(function)
        if fn is None:
            raise errors.CudaError(errors.CUresult.CUDA_ERROR_UNKNOWN,
                                   f"NVIDIA's function 0x{function:x} is none of ours")
        sizes = [param_dtype(t).itemsize for t in fn.info.params]
        return KernelParams(fn.handle, grid, block, window - int(fn.info.static_shared_bytes),
                            device.kernel_node_args(params, sizes))
    if kind == model.MEMSET:
        dst, pitch, value, element_size, width, height = device.graph_memset_node(node)
        return MemsetParams(dst, pitch, value & ((1 << (8 * element_size)) - 1), element_size,
                            width, height)
    if kind == model.MEMCPY:
        return CopyParams(device.graph_copy_node(node, api.ffi.sizeof("CUDA_MEMCPY3D")))
    if kind == model.HOST:
        fn, user_data = device.graph_host_node(node)
        return HostParams(api.ffi.cast("CUhostFn", fn), api.ffi.cast("void *", user_data))
    if kind == model.EMPTY:
        return EmptyParams()
    # fastpath.c records only launches, copies and fills in a capture.
    raise errors.CudaError(errors.CUresult.CUDA_ERROR_UNKNOWN,
                           f"a node of type {kind} in NVIDIA's capture")


def imported(api: Any, graph: int, handles: bool) -> Graph:
    """NVIDIA's graph `graph`, a capture of its driver (kernels, fills,
    copies), as ours. With `handles` it is the application's graph: its
    handle and its nodes' are NVIDIA's addresses, and it keeps NVIDIA's graph
    (Graph.vendor), which the application's handles name."""
    device = api.device
    g = Graph()
    described = {a: device.graph_node(a) for a in device.graph_nodes(graph)}
    functions = _our_functions(api)
    nodes = {a: g.add(_imported_params(api, a, kind, functions), [])
             for a, (kind, _) in described.items()}
    for address, (_, dependencies) in described.items():
        for dependency in dependencies:
            connect(nodes[dependency], nodes[address])
    if handles:
        for address, node in nodes.items():
            node.handle = api.handles.add_at(address, node)
        g.vendor = graph
        g.handle = api.handles.add_at(graph, g)
    return g


def _copy_between(api: Any, p: Any, src: int, dst: int, nbytes: int) -> bool:
    """Whether copy node parameters `p` copy `nbytes` from `src` to `dst`, one row."""
    if not isinstance(p, CopyParams):
        return False
    c = api.ffi.new("CUDA_MEMCPY3D *")
    api.ffi.memmove(c, p.copy, len(p.copy))

    def address(kind: int, host: Any, device: int) -> int | None:
        if kind == HOST:
            return int(api.ffi.cast("uintptr_t", host))
        return int(device) if kind in (DEVICE, UNIFIED) else None

    return (address(int(c.srcMemoryType), c.srcHost, c.srcDevice) == src and
            address(int(c.dstMemoryType), c.dstHost, c.dstDevice) == dst and
            (c.srcXInBytes, c.srcY, c.srcZ, c.dstXInBytes, c.dstY, c.dstZ) == (0,) * 6 and
            c.WidthInBytes == nbytes and c.Height <= 1 and c.Depth <= 1)


def _fills(p: Any, dst: int, value: int, nbytes: int) -> bool:
    """Whether fill node parameters `p` write `nbytes` bytes of `value` at `dst`."""
    if not isinstance(p, MemsetParams) or p.dst != dst or p.height != 1:
        return False
    return p.value.to_bytes(p.element_size, "little") * p.width == bytes([value]) * nbytes


def captures_read_back(api: Any) -> bool:
    """Whether a capture of the vendor's driver reads back as the work
    captured (its nodes as imported reads them): a fill, a launch and copies
    between device and pageable host memory, in a chain. fastpath.c's
    captures are the vendor's only where they do (graph/capture.py)."""
    device, nbytes = api.device, 64
    host = api.ffi.new("char[]", nbytes)  # pageable
    host_address = int(api.ffi.cast("uintptr_t", host))
    try:
        graph, memory, module, function, args = device.capture_probe(nbytes, host_address)
    except Exception:  # the vendor refuses some of it: our captures then
        return False
    try:
        nodes = device.graph_nodes(graph)
        described = [device.graph_node(n) for n in nodes]
        if [kind for kind, _ in described] != [model.MEMSET, model.KERNEL, model.MEMCPY,
                                                model.MEMCPY] or \
                [deps for _, deps in described] != [[], *[[n] for n in nodes[:-1]]]:
            return False
        fill, back, forth = (_imported_params(api, nodes[i], described[i][0], {})
                             for i in (0, 2, 3))
        # The probe's kernel is none of ours: its node as _imported_params reads one.
        launched, grid, block, window, params = device.graph_kernel_node(nodes[1])
        kernel = (launched, grid, block, window, device.kernel_node_args(params, [8, 4]))
        return (_fills(fill, memory, 7, nbytes) and
                kernel == (function, (1, 1, 1), (1, 1, 1), 0, (args[:8], args[8:])) and
                _copy_between(api, back, memory, host_address, nbytes) and
                _copy_between(api, forth, host_address, memory, nbytes))
    except Exception:
        return False
    finally:
        device.release_capture_probe(graph, memory, module)
