"""One representation of a CUDA graph, however it was made (cuGraphAdd*,
stream capture, cuGraphClone, a child graph node's copy, an instantiation's
private copy): nodes holding their parameters as plain values, and edges in
the order they were added. Nothing here touches the driver; the API modules
turn C structures into these parameters and run them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult

# CUgraphNodeType
KERNEL, MEMCPY, MEMSET, HOST, GRAPH, EMPTY, WAIT_EVENT, EVENT_RECORD = range(8)
MEM_ALLOC, MEM_FREE, CONDITIONAL = 10, 11, 13
NODE_TYPE_NAMES = {KERNEL: "kernel", MEMCPY: "memcpy", MEMSET: "memset", HOST: "host",
                   GRAPH: "graph", EMPTY: "empty", WAIT_EVENT: "wait event",
                   EVENT_RECORD: "event record", MEM_ALLOC: "mem alloc", MEM_FREE: "mem free"}


@dataclass(frozen=True)
class KernelParams:
    function: int  # the CUfunction's (or CUkernel's) handle
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    args: tuple[bytes, ...]  # each parameter's bytes, copied when the node was made
    type = KERNEL


@dataclass(frozen=True)
class CopyParams:
    copy: bytes  # a CUDA_MEMCPY3D, as the application gave it
    type = MEMCPY


@dataclass(frozen=True)
class MemsetParams:
    dst: int
    pitch: int
    value: int
    element_size: int
    width: int
    height: int
    type = MEMSET


@dataclass(frozen=True)
class HostParams:
    fn: Any  # a CUhostFn
    user_data: Any
    type = HOST


@dataclass(frozen=True)
class ChildParams:
    graph: Graph  # the node's own copy of the child graph
    type = GRAPH


@dataclass(frozen=True)
class EmptyParams:
    type = EMPTY


@dataclass(frozen=True)
class EventParams:
    event: int  # the CUevent's handle
    type: int  # WAIT_EVENT or EVENT_RECORD


@dataclass(frozen=True)
class AllocParams:
    slot: Any  # memory.Slot: the address range the node allocates at each launch
    size: int
    pool_props: bytes  # the CUmemPoolProps given
    access: bytes  # the CUmemAccessDesc array given
    type = MEM_ALLOC


@dataclass(frozen=True)
class FreeParams:
    address: int
    type = MEM_FREE


@dataclass(frozen=True)
class ConditionalParams:
    handle: int  # the condition's address (graph/conditional.py)
    kind: int  # CUgraphConditionalNodeType: IF, WHILE, SWITCH
    bodies: tuple[Graph, ...]  # the node's own graphs
    type = CONDITIONAL


@dataclass(frozen=True)
class WorkParams:
    """Work recorded by a capture that has no node type of its own here."""

    work: Callable[[], int]
    type = HOST


@dataclass(eq=False)
class Node:
    params: Any
    graph: Graph
    dependencies: list[Node] = field(default_factory=list)  # in the order the edges came
    dependents: list[Node] = field(default_factory=list)
    handle: int = 0  # 0: a node no application sees (an instantiation's copy)
    origin: Node | None = None  # the node this one was cloned from
    enabled: bool = True  # cuGraphNodeSetEnabled (instantiations' nodes)
    c_params: Any = None  # C memory the node's *GetParams answers point into

    @property
    def type(self) -> int:
        return int(self.params.type)


@dataclass(eq=False)
class Graph:
    nodes: list[Node] = field(default_factory=list)  # in creation order
    user_objects: dict[int, int] = field(default_factory=dict)  # handle -> references held
    handle: int = 0
    instances: int = 0  # live instantiations (graphs with memory nodes allow one)
    owner: Node | None = None  # the child graph or conditional node it belongs to
    # Its conditional handles (cuGraphConditionalHandleCreate): address -> (default, flags).
    conditions: dict[int, tuple[int, int]] = field(default_factory=dict)
    # Captured by the vendor's driver (graph/vendor.py: imported): its graph,
    # whose address is this one's handle (and its nodes' the nodes'), kept
    # until this one is destroyed, so that no other graph of the vendor's has it.
    vendor: int = 0

    def add(self, params: Any, dependencies: list[Node]) -> Node:
        node = Node(params, self)
        self.nodes.append(node)
        for dep in dependencies:
            connect(dep, node)
        return node

    def has_memory_nodes(self) -> bool:
        return any(n.type in (MEM_ALLOC, MEM_FREE) for n in self.walk())

    def walk(self) -> Iterator[Node]:
        """Every node, those of child graphs and conditional bodies too."""
        for node in self.nodes:
            yield node
            for graph in inner_graphs(node.params):
                yield from graph.walk()

    def roots(self) -> list[Node]:
        return [n for n in self.nodes if not n.dependencies]

    def edges(self) -> list[tuple[Node, Node]]:
        return [(dep, node) for node in self.nodes for dep in node.dependencies]

    def topological_order(self) -> list[Node] | None:
        """The nodes in an order that keeps every edge (creation order where
        free), or None for a cycle."""
        waiting = {node: len(node.dependencies) for node in self.nodes}
        index = {node: i for i, node in enumerate(self.nodes)}
        ready = sorted((n for n, count in waiting.items() if count == 0), key=index.__getitem__)
        order: list[Node] = []
        while ready:
            node = ready.pop(0)
            order.append(node)
            released = []
            for dependent in node.dependents:
                waiting[dependent] -= 1
                if waiting[dependent] == 0:
                    released.append(dependent)
            ready = sorted(ready + released, key=index.__getitem__)
        return order if len(order) == len(self.nodes) else None

    def cycle_node(self) -> Node | None:
        """The node a cycle is reported at, None without one: a depth-first
        walk along dependents, from the nodes in creation order, names the
        node whose edge leads back into the walk's path (NVIDIA's choice, as
        an H200 answered: for a -> b -> c -> a, c)."""
        done: set[Node] = set()
        for start in self.nodes:
            if start in done:
                continue
            path = {start}
            stack = [(start, iter(start.dependents))]
            while stack:
                node, rest = stack[-1]
                following = next(rest, None)
                if following is None:
                    stack.pop()
                    path.discard(node)
                    done.add(node)
                elif following in path:
                    return node
                elif following not in done:
                    path.add(following)
                    stack.append((following, iter(following.dependents)))
        return None

    def clone(self) -> Graph:
        """A copy: nodes, edges and parameters (child graphs copied too);
        each new node's `origin` is the node it copies."""
        copy = Graph(user_objects=dict(self.user_objects), conditions=dict(self.conditions))
        mapping: dict[Node, Node] = {}
        for node in self.nodes:
            params = node.params
            if isinstance(params, ChildParams):
                params = ChildParams(params.graph.clone())
            elif isinstance(params, ConditionalParams):
                params = replace(params, bodies=tuple(b.clone() for b in params.bodies))
            new = Node(params, copy, origin=node, enabled=node.enabled)
            for graph in inner_graphs(params):
                graph.owner = new
            mapping[node] = new
            copy.nodes.append(new)
        for node in self.nodes:  # edges in the same order at both ends
            mapping[node].dependencies = [mapping[d] for d in node.dependencies]
            mapping[node].dependents = [mapping[d] for d in node.dependents]
        return copy


def inner_graphs(params: Any) -> tuple[Graph, ...]:
    """The graphs a node holds: a child graph, a conditional node's bodies."""
    if isinstance(params, ChildParams):
        return (params.graph,)
    if isinstance(params, ConditionalParams):
        return params.bodies
    return ()


def add_node(handles: Any, graph: Graph, params: Any, dependencies: list[Node]) -> Node:
    """A node the application sees (a handle of `handles`), added to `graph`."""
    node = graph.add(params, dependencies)
    node.handle = handles.add(node)
    return node


def record(handles: Any, stream: Any, params: Any) -> Node:
    """`params`' node, added to the capture of `stream` (a capturing
    objects.Stream) after the stream's dependencies; the stream's next work
    depends on it."""
    if stream.capture.invalidated:
        raise CudaError(CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                        "the capture was invalidated")
    node = add_node(handles, stream.capture.graph, params, list(stream.capture_dependencies))
    stream.capture_dependencies = [node]
    return node


def forget_handles(handles: Any, graph: Graph) -> None:
    """Drops the handles of `graph`'s nodes, its child graphs' too."""
    for node in graph.walk():
        if node.handle:
            handles.remove(node.handle, Node)
            node.handle = 0
        for inner in inner_graphs(node.params):
            if inner.handle:
                handles.remove(inner.handle, Graph)
                inner.handle = 0


def connect(source: Node, target: Node) -> None:
    source.dependents.append(target)
    target.dependencies.append(source)


def disconnect(source: Node, target: Node) -> None:
    source.dependents.remove(target)
    target.dependencies.remove(source)


def ancestors(nodes: list[Node]) -> set[Node]:
    """`nodes` and every node they depend on, directly or not."""
    seen: set[Node] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(node.dependencies)
    return seen


def with_params(node: Node, **changes: Any) -> Any:
    return replace(node.params, **changes)
