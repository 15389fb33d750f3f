"""The graph representation (runtime/cuda/graph/model.py) and graph memory's
accounting (graph/memory.py), without a device: run order, clones, and the
footprint NVIDIA's CU_GRAPH_MEM_ATTR_* attributes report."""

from __future__ import annotations

import pytest

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.graph.memory import (
    RESERVED_MEM_CURRENT,
    RESERVED_MEM_HIGH,
    USED_MEM_CURRENT,
    USED_MEM_HIGH,
    GraphMemory,
)
from zmlir.runtime.cuda.graph.model import (
    ChildParams,
    EmptyParams,
    Graph,
    ancestors,
    connect,
    disconnect,
)

MiB = 1 << 20


def diamond() -> tuple[Graph, list]:
    """a -> (b, c) -> d, made in the order d's branches' c first."""
    g = Graph()
    a = g.add(EmptyParams(), [])
    c = g.add(EmptyParams(), [a])
    b = g.add(EmptyParams(), [a])
    d = g.add(EmptyParams(), [b, c])
    return g, [a, b, c, d]


def test_topological_order_keeps_edges_and_creation_order() -> None:
    g, (a, b, c, d) = diamond()
    assert g.topological_order() == [a, c, b, d]
    assert g.roots() == [a]
    assert g.edges() == [(a, c), (a, b), (b, d), (c, d)]
    disconnect(a, c)
    disconnect(c, d)
    connect(d, c)  # c now runs last
    assert g.topological_order() == [a, b, d, c]
    connect(c, a)  # a cycle
    assert g.topological_order() is None


def test_clone_copies_nodes_edges_and_child_graphs() -> None:
    g, (a, b, c, d) = diamond()
    child, _ = diamond()
    e = g.add(ChildParams(child), [d])
    copy = g.clone()
    assert [n.origin for n in copy.nodes] == [a, c, b, d, e]
    assert all(n.graph is copy for n in copy.nodes)
    assert [(x.origin, y.origin) for x, y in copy.edges()] == g.edges()
    copied_child = copy.nodes[4].params.graph
    assert copied_child is not child and len(copied_child.nodes) == 4
    assert copied_child.owner is copy.nodes[4]
    assert len(list(g.walk())) == 9
    connect(copy.nodes[0], copy.nodes[3])  # the original does not change
    assert len(g.edges()) == 5 and len(copy.edges()) == 6


def test_ancestors() -> None:
    _, (a, b, c, d) = diamond()
    assert ancestors([b]) == {a, b}
    assert ancestors([d]) == {a, b, c, d}


def test_graph_memory_footprint() -> None:
    """NVIDIA's model (cuda-samples' graphMemoryFootprint): memory stays
    mapped ("used") after a free until another allocation takes it over or a
    trim returns it; the allocator keeps what it got ("reserved")."""
    freed: list[int] = []
    addresses = iter(range(0x10000000, 0x20000000, 0x1000000))
    memory = GraphMemory(lambda size: next(addresses), freed.append)
    x, y = memory.reserve(1000), memory.reserve(3 * MiB)
    assert (x.size, y.size) == (2 * MiB, 4 * MiB)  # whole 2 MiB pages
    memory.retain(x)
    memory.retain(y)
    memory.allocate(x, 1000)
    with pytest.raises(CudaError) as err:
        memory.allocate(x, 1000)  # still live
    assert err.value.code == CUresult.CUDA_ERROR_INVALID_VALUE
    memory.allocate(y, 3 * MiB)
    assert memory.attribute(USED_MEM_CURRENT) == 6 * MiB
    assert memory.attribute(RESERVED_MEM_CURRENT) == 6 * MiB
    assert memory.free(x.address) and not memory.free(x.address)
    assert memory.attribute(USED_MEM_CURRENT) == 6 * MiB  # freed, still mapped
    memory.trim()  # the live allocation keeps its pages
    assert memory.attribute(USED_MEM_CURRENT) == memory.attribute(RESERVED_MEM_CURRENT) == 4 * MiB
    z = memory.reserve(MiB)
    memory.retain(z)
    memory.free(y.address)
    memory.allocate(z, MiB)  # takes over half of y's memory: nothing grows
    assert (y.mapped, z.mapped) == (2 * MiB, 2 * MiB)
    assert memory.attribute(RESERVED_MEM_CURRENT) == 4 * MiB
    memory.release(y)  # its node went: its range and memory go back
    assert freed == [y.address]
    assert memory.attribute(USED_MEM_CURRENT) == 2 * MiB
    memory.release(z)  # still allocated: it stays until freed
    assert freed == [y.address]
    memory.free(z.address)  # freed outside its graph: now it goes
    assert freed == [y.address, z.address]
    memory.trim()
    assert memory.attribute(USED_MEM_CURRENT) == memory.attribute(RESERVED_MEM_CURRENT) == 0
    assert memory.attribute(USED_MEM_HIGH) == memory.attribute(RESERVED_MEM_HIGH) == 6 * MiB
    memory.reset_high(RESERVED_MEM_HIGH, 0)
    assert memory.attribute(RESERVED_MEM_HIGH) == 0
    with pytest.raises(CudaError):
        memory.reset_high(USED_MEM_CURRENT, 0)
    memory.release(x)
    assert freed == [y.address, z.address, x.address]
