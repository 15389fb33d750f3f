"""A function's blocks of ops as MLIR text.

The importer builds each block as ops (Op: a template with `{0}`, `{1}`...
for its operands' names) and a terminator; values get their names (`%v1`,
`%v2`, ...) when printed, in order of first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zmlir.diagnostics import SourceLoc
from zmlir.frontend import ast
from zmlir.frontend.importer.ptxtypes import quote
from zmlir.frontend.ssa import Phi, SSABlock, Value


@dataclass(slots=True)
class Op:
    """One op to print: results, text with {0}, {1}... operand slots, location."""

    results: list[Value]
    template: str
    operands: list[Value]
    loc: SourceLoc | None


@dataclass(slots=True)
class Terminator:
    kind: str  # "bra", "cond_bra", "ret", "exit"
    succs: list[tuple[SSABlock, int]] = field(default_factory=list)  # (block, edge id)
    pred: Value | None = None
    attrs: str = ""
    loc: SourceLoc | None = None
    values: list[Value] = field(default_factory=list)  # a .func's return values


@dataclass(slots=True)
class Block:
    ssa: SSABlock
    ops: list[Op] = field(default_factory=list)
    term: Terminator | None = None


class FunctionPrinter:
    """Prints one function (`function`); values are named as they are printed."""

    def __init__(self, quoted_filename: str, locations: bool, line_offset: int) -> None:
        self._counter = 0
        self._locations = locations
        self._head = f" loc({quoted_filename}:"  # of a location, to the line
        self._line_offset = line_offset

    def _name(self, v: Value) -> str:
        v = v.resolve()
        if not v.name:
            self._counter += 1
            v.name = f"%v{self._counter}"
        return v.name

    def _loc(self, loc: SourceLoc | None) -> str:
        if loc is None or not self._locations:
            return ""
        return f"{self._head}{loc.line + self._line_offset}:{loc.col})"

    def function(self, fn: ast.Function, args: list[str], result_types: list[str],
                 blocks: list[Block], undefs: list[Op]) -> str:
        """`fn` as a `func.func` of `args` (`%argN: type`) returning
        `result_types`, its `blocks` (the entry block first, which gets the
        `undefs` first)."""
        entry = blocks[0]
        attrs = ["ptx.entry"] if fn.kind == "entry" else []
        if fn.linkage:
            attrs.append(f"ptx.linkage = {quote(fn.linkage)}")
        for key, values in fn.directives.items():
            # `.explicitcluster` has no values: `array<i64>`.
            elems = f": {', '.join(map(str, values))}" if values else ""
            attrs.append(f"ptx.{key} = array<i64{elems}>")
        attr_text = f" attributes {{{', '.join(attrs)}}}" if attrs else ""
        results = ""
        if result_types:
            results = " -> " + (result_types[0] if len(result_types) == 1
                                else f"({', '.join(result_types)})")
        lines = [f"  func.func @{quote(fn.name)}({', '.join(args)}){results}{attr_text} {{"]
        live_phis = {b.ssa.index: [p for p in b.ssa.phis if not p.dead] for b in blocks}
        for b in blocks:
            if b is not entry:
                phis = live_phis[b.ssa.index]
                params = ", ".join(f"{self._name(p.value)}: {p.value.type}" for p in phis)
                lines.append(f"  ^bb{b.ssa.index}" + (f"({params})" if phis else "") + ":")
            if b is entry:
                self._format_ops(undefs, lines)
            self._format_ops(b.ops, lines)
            lines.append("    " + self._format_terminator(b, live_phis))
        lines.append("  }" + self._loc(fn.loc))
        return "\n".join(lines)

    def _format_ops(self, ops: list[Op], lines: list[str]) -> None:
        """Each op as a line of text onto `lines`: `_name` and `_loc` inlined,
        as this is most of printing (a call per value costs the import ~15%)."""
        counter = self._counter
        locations = self._locations
        head = self._head
        line_offset = self._line_offset
        append = lines.append
        for op in ops:
            # Operands then results, named in that order on first use; the
            # template takes the operands' names and ignores the rest.
            names = []
            for v in op.operands + op.results if op.results else op.operands:
                while v.alias is not None:
                    v = v.alias
                if not v.name:
                    counter += 1
                    v.name = f"%v{counter}"
                names.append(v.name)
            body = op.template.format(*names)
            if op.results:
                body = ", ".join(names[len(op.operands):]) + " = " + body
            loc = op.loc
            if loc is not None and locations:
                append(f"    {body}{head}{loc.line + line_offset}:{loc.col})")
            else:
                append("    " + body)
        self._counter = counter

    def _successor(self, succ: tuple[SSABlock, int], live_phis: dict[int, list[Phi]]) -> str:
        block, edge = succ
        phis = live_phis[block.index]
        if not phis:
            return f"^bb{block.index}"
        values = [p.incoming[edge] for p in phis]
        names = ", ".join(self._name(v) for v in values)
        types = ", ".join(v.resolve().type for v in values)
        return f"^bb{block.index}({names} : {types})"

    def _format_terminator(self, b: Block, live_phis: dict[int, list[Phi]]) -> str:
        t = b.term
        assert t is not None
        loc = self._loc(t.loc)
        if t.kind == "bra":
            return f"ptx.bra {self._successor(t.succs[0], live_phis)}{t.attrs}{loc}"
        if t.kind == "cond_bra":
            assert t.pred is not None
            taken = self._successor(t.succs[0], live_phis)
            fall = self._successor(t.succs[1], live_phis)
            return f"ptx.cond_bra {self._name(t.pred)}, {taken}, {fall}{t.attrs}{loc}"
        if t.values:
            names = ", ".join(self._name(v) for v in t.values)
            types = ", ".join(v.resolve().type for v in t.values)
            return f"ptx.{t.kind}{t.attrs} {names} : {types}{loc}"
        return f"ptx.{t.kind}{t.attrs}{loc}"
