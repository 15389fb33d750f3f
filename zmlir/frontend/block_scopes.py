"""The labels and registers of PTX's nested `{ }` blocks, made unique in
their function.

A block scopes the labels and registers declared in it (ptxas takes the
same label in two blocks of one function, and an inner `.reg` hides an
outer one of its name until the block ends). nvcc pastes a function's
inline asm once per use, so the same names come back: CUTLASS's
`{ LAB_WAIT: mbarrier.try_wait ...; @!P1 bra LAB_WAIT; }` at every wait,
`{ .reg .pred p; ... }` at every guarded asm. The importer resolves names
per function, so a nested declaration whose name is declared anywhere
else in its function gets a name of its own, and so do the references
that resolve to it (the innermost enclosing declaration).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator

from zmlir.diagnostics import CompileError
from zmlir.frontend import ast


def unique_block_names(stmts: tuple[ast.Statement, ...]) -> tuple[ast.Statement, ...]:
    """`stmts` (a function body) with each nested block's labels and
    registers renamed where their names are declared more than once in
    the function; `stmts` itself where none is."""
    nested: Counter[str] = Counter()
    for s in stmts:
        if s.__class__ is ast.Block:
            nested.update(_declared_within(s))  # type: ignore[arg-type]
    if not nested:
        return stmts
    outer: set[str] = set()
    label, target_list, reg_decl = ast.Label, ast.TargetList, ast.RegDecl
    for s in stmts:
        kind = s.__class__
        if kind is label or kind is target_list:
            outer.add(s.name)  # type: ignore[union-attr]
        elif kind is reg_decl:
            outer.update(s.names)  # type: ignore[union-attr]
    clashing = {name for name, count in nested.items() if count > 1 or name in outer}
    if not clashing:
        return stmts
    renamer = _Renamer(clashing, outer | set(nested))
    return tuple(renamer.block(s, {}) if s.__class__ is ast.Block else s for s in stmts)


def _declared(s: ast.Statement) -> tuple[str, ...]:
    """The labels and registers statement `s` itself declares."""
    if s.__class__ is ast.Label or s.__class__ is ast.TargetList:
        return (s.name,)  # type: ignore[union-attr]
    if s.__class__ is ast.RegDecl:
        return s.names  # type: ignore[union-attr]
    return ()


def _declared_within(block: ast.Block) -> Iterator[str]:
    stack = [block]
    while stack:
        for s in stack.pop().body:
            if s.__class__ is ast.Block:
                stack.append(s)  # type: ignore[arg-type]
            else:
                yield from _declared(s)


class _Renamer:
    def __init__(self, clashing: set[str], taken: set[str]) -> None:
        self.clashing = clashing
        self.taken = taken
        self.last: dict[str, int] = {}

    def fresh(self, name: str) -> str:
        n = self.last.get(name, 0) + 1
        while f"{name}${n}" in self.taken:
            n += 1
        self.last[name] = n
        self.taken.add(f"{name}${n}")
        return f"{name}${n}"

    def block(self, root: ast.Block, outer: dict[str, str]) -> ast.Block:
        """`root` renamed (iteratively: blocks nest up to ptxas's limit)."""
        stack = [self._frame(root, outer)]
        while True:
            block, names, rest, body = stack[-1]
            for s in rest:
                if s.__class__ is ast.Block:
                    stack.append(self._frame(s, names))  # type: ignore[arg-type]
                    break
                body.append(self.statement(s, names))
            else:
                stack.pop()
                done = dataclasses.replace(block, body=tuple(body))
                if not stack:
                    return done
                stack[-1][3].append(done)

    def _frame(self, block: ast.Block, outer: dict[str, str]
               ) -> tuple[ast.Block, dict[str, str], Iterator[ast.Statement], list[ast.Statement]]:
        # A label is visible in its whole block (branches go forward too).
        names = dict(outer)
        labels: set[str] = set()
        for s in block.body:
            if s.__class__ is ast.Label:
                if s.name in labels:  # type: ignore[union-attr]
                    raise CompileError(f"duplicate label '{s.name}'", loc=s.loc)  # type: ignore[union-attr]
                labels.add(s.name)  # type: ignore[union-attr]
            for name in _declared(s):
                if name in self.clashing and names.get(name, name) == outer.get(name, name):
                    names[name] = self.fresh(name)
        return block, names, iter(block.body), []

    def statement(self, s: ast.Statement, names: dict[str, str]) -> ast.Statement:
        if not names:
            return s
        if isinstance(s, ast.Instruction):

            def renamed(leaf: ast.Reg | ast.Sym) -> ast.Operand:
                return type(leaf)(names[leaf.name]) if leaf.name in names else leaf

            guard = s.guard
            if guard is not None and guard.reg in names:
                guard = ast.Guard(names[guard.reg], guard.negated)
            return dataclasses.replace(
                s, operands=tuple(map_names(o, renamed) for o in s.operands), guard=guard)
        if isinstance(s, ast.Label):
            return dataclasses.replace(s, name=names.get(s.name, s.name))
        if isinstance(s, ast.RegDecl):
            return dataclasses.replace(s, names=tuple(names.get(n, n) for n in s.names))
        if isinstance(s, ast.TargetList):
            return dataclasses.replace(s, name=names.get(s.name, s.name),
                                       targets=tuple(names.get(t, t) for t in s.targets))
        return s


def map_names(o: ast.Operand, leaf: Callable[[ast.Reg | ast.Sym], ast.Operand]) -> ast.Operand:
    """`o` with each register and symbol in it, in addresses, vectors, pairs
    and negations too, replaced by `leaf` of it; `o` itself where none
    changed."""
    if isinstance(o, (ast.Reg, ast.Sym)):
        return leaf(o)
    if isinstance(o, ast.Addr):
        base = map_names(o.base, leaf)
        sampler = map_names(o.sampler, leaf) if o.sampler is not None else None
        coords = tuple(map_names(e, leaf) for e in o.coords) if o.coords is not None else None
        if (base, sampler, coords) == (o.base, o.sampler, o.coords):
            return o
        return dataclasses.replace(o, base=base, sampler=sampler, coords=coords)  # type: ignore[arg-type]
    if isinstance(o, ast.Vec):
        return ast.Vec(tuple(map_names(e, leaf) for e in o.elems))
    if isinstance(o, ast.Pair):
        return ast.Pair(map_names(o.first, leaf), map_names(o.second, leaf))
    if isinstance(o, ast.Not):
        return ast.Not(map_names(o.operand, leaf))
    return o
