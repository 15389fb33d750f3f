"""Conditional nodes (if, while, switch). A conditional handle is the
address of a 32-bit condition in device memory: the device runtime's
cudaGraphSetConditional(handle, value), which kernels call, is a store
there (defined in the PTX of each module that declares it:
`define_device_runtime`), and a launch reads it where the node runs: an
if's body runs when it is non-zero (an else body when zero), a while's as
long as it is non-zero, a switch's body of its index. The default value is
written when the handle is made and, with CU_GRAPH_COND_ASSIGN_DEFAULT, at
the start of each launch."""

from __future__ import annotations

import re
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.graph.base import GraphBase
from zmlir.runtime.cuda.graph.model import ConditionalParams, Graph

E = CUresult
ASSIGN_DEFAULT = 1  # CU_GRAPH_COND_ASSIGN_DEFAULT
IF, WHILE, SWITCH = 0, 1, 2  # CUgraphConditionalNodeType
_BODIES = {IF: (1, 2), WHILE: (1, 1), SWITCH: (1, 1 << 31)}  # allowed sizes

_SET_CONDITIONAL = re.compile(
    r"\.extern\s+\.func\s+cudaGraphSetConditional\s*\(\s*\.param\s+\.b64\s+(\w+)\s*,"
    r"\s*\.param\s+\.b32\s+(\w+)\s*\)\s*;")


def define_device_runtime(ptx: str) -> str:
    """`ptx` with the device runtime's cudaGraphSetConditional defined
    where it is declared (nvcc -rdc leaves it to libcudadevrt)."""
    def body(match: re.Match[str]) -> str:
        handle, value = match.group(1), match.group(2)
        return (f".func cudaGraphSetConditional(.param .b64 {handle}, .param .b32 {value})\n"
                "{\n\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n"
                f"\tld.param.u64 %rd1, [{handle}];\n\tld.param.u32 %r1, [{value}];\n"
                "\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n")
    return _SET_CONDITIONAL.sub(body, ptx)


class ConditionalAPI(GraphBase):
    def cuGraphConditionalHandleCreate(self, phandle: Any, graph: Any, ctx: Any,
                                       default: int, flags: int) -> int:
        self.current_context()
        g = self.graph_of(graph)
        if phandle == self.ffi.NULL or flags not in (0, ASSIGN_DEFAULT):
            return E.CUDA_ERROR_INVALID_VALUE
        address = int(self.device.alloc(4))
        self.allocations.add(address, 4, owned=False)
        self.device.copy_to_device(address, int(default).to_bytes(4, "little"))
        g.conditions[address] = (int(default), int(flags))
        phandle[0] = address
        return E.CUDA_SUCCESS

    def conditional_params(self, c: Any, graph: Graph) -> ConditionalParams:
        """A CUDA_CONDITIONAL_NODE_PARAMS' node: its body graphs are made,
        and returned in phGraph_out (the driver's array)."""
        handle, kind, size = int(c.handle), int(c.type), int(c.size)
        if handle not in graph.conditions:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"conditional handle 0x{handle:x} is "
                                                        "not the graph's")
        low, high = _BODIES.get(kind, (1, 0))
        if not low <= size <= high:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"conditional type {kind}, {size} bodies")
        bodies = tuple(Graph() for _ in range(size))
        for body in bodies:
            body.handle = self.handles.add(body)
        array = self.ffi.new("CUgraph[]", [self.handle_ptr(b.handle) for b in bodies])
        self.keepalive.append(array)  # valid for the node's lifetime
        c.phGraph_out = array
        return ConditionalParams(handle, kind, bodies)

    def assign_defaults(self, graph: Graph) -> None:
        """At a launch's start: the conditions that ask for it take their default."""
        for address, (default, flags) in graph.conditions.items():
            if flags & ASSIGN_DEFAULT:
                self.device.copy_to_device(address, default.to_bytes(4, "little"))

    def condition(self, handle: int) -> int:
        self.device.synchronize()  # the kernels before the node set it
        return int.from_bytes(self.device.copy_from_device(handle, 4), "little")

    def bodies_to_run(self, p: ConditionalParams) -> list[Graph]:
        """The bodies an if or a switch runs now (a while: `condition` each time)."""
        value = self.condition(p.handle)
        if p.kind == IF:
            return [p.bodies[0]] if value else list(p.bodies[1:])
        return [p.bodies[value]] if value < len(p.bodies) else []
