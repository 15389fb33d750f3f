"""SSA construction for PTX's virtual registers (Braun et al., "Simple and
Efficient Construction of Static Single Assignment Form", CC 2013).

The importer fills every block first, reading registers through
`read(block, reg)`; a register not yet written in a block gets a placeholder
for its value on entry. `seal()` then resolves the placeholders: a block with
one predecessor takes the predecessor's value on exit, a block with several
gets a block argument (a phi) fed by each incoming branch. Trivial phis (all
inputs the same value) are folded away, so straight-line code has none.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(eq=False, slots=True)
class Value:
    """An SSA value; `alias` points at the value it was folded into."""

    type: str
    name: str = ""
    alias: Value | None = None

    def resolve(self) -> Value:
        v = self
        while v.alias is not None:
            v = v.alias
        return v


@dataclass(eq=False, slots=True)
class Phi:
    """A block argument standing for `reg` on entry to its block."""

    value: Value
    reg: str
    incoming: dict[int, Value] = field(default_factory=dict)  # predecessor edge id -> value
    dead: bool = False


@dataclass(eq=False, slots=True)
class SSABlock:
    index: int
    preds: list[tuple[SSABlock, int]] = field(default_factory=list)  # (block, edge id)
    defs: dict[str, Value] = field(default_factory=dict)
    entry: dict[str, Value] = field(default_factory=dict)  # placeholders read before a write
    phis: list[Phi] = field(default_factory=list)


class SSABuilder:
    """Tracks register definitions per block and builds phis when sealed."""

    def __init__(self, undef: callable) -> None:
        # undef(type) -> Value: a value for a register read before any write.
        self._undef = undef
        self._reg_types: dict[str, str] = {}

    def declare(self, reg: str, type_: str) -> None:
        self._reg_types[reg] = type_

    @property
    def reg_types(self) -> dict[str, str]:
        """Every declared register's type (read only)."""
        return self._reg_types

    def reg_type(self, reg: str) -> str | None:
        return self._reg_types.get(reg)

    def write(self, block: SSABlock, reg: str, value: Value) -> None:
        block.defs[reg] = value

    def read(self, block: SSABlock, reg: str) -> Value:
        if reg in block.defs:
            return block.defs[reg]
        if reg not in block.entry:
            block.entry[reg] = Value(self._reg_types[reg])
        return block.entry[reg]

    def _exit_value(self, block: SSABlock, reg: str) -> Value:
        return block.defs.get(reg) or self.read(block, reg)

    def seal(self, blocks: list[SSABlock], entry: SSABlock) -> None:
        """Resolves every entry placeholder, creating phis where needed."""
        worklist = [(b, r) for b in blocks for r in b.entry]
        done: set[tuple[int, str]] = set()
        while worklist:
            block, reg = worklist.pop()
            if (block.index, reg) in done:
                continue
            done.add((block.index, reg))
            placeholder = block.entry[reg]
            if block is entry and not block.preds:
                placeholder.alias = self._undef(placeholder.type)
                continue
            # Reading `reg` on exit of a predecessor adds at most one
            # placeholder there, for `reg` itself: resolve that one too.
            if len(block.preds) == 1:
                pred, _ = block.preds[0]
                n = len(pred.entry)
                placeholder.alias = self._exit_value(pred, reg)
                if len(pred.entry) != n:
                    worklist.append((pred, reg))
                continue
            phi = Phi(placeholder, reg)
            block.phis.append(phi)
            for pred, edge in block.preds:
                n = len(pred.entry)
                phi.incoming[edge] = self._exit_value(pred, reg)
                if len(pred.entry) != n:
                    worklist.append((pred, reg))
        self._break_alias_cycles(blocks)
        self._fold_trivial_phis(blocks)

    def _break_alias_cycles(self, blocks: list[SSABlock]) -> None:
        """Unreachable code can form a loop of single-predecessor blocks whose
        entry values alias one another in a circle; such a register is
        undefined there."""
        for block in blocks:
            for placeholder in block.entry.values():
                seen: set[int] = set()
                v = placeholder
                while v.alias is not None:
                    if id(v) in seen:
                        v.alias = self._undef(v.type)
                        break
                    seen.add(id(v))
                    v = v.alias

    @staticmethod
    def _fold_trivial_phis(blocks: list[SSABlock]) -> None:
        changed = True
        while changed:
            changed = False
            for block in blocks:
                for phi in block.phis:
                    if phi.dead:
                        continue
                    me = phi.value.resolve()
                    sources = {v.resolve() for v in phi.incoming.values()} - {me}
                    if len(sources) == 1:
                        phi.value.alias = sources.pop()
                        phi.dead = True
                        changed = True
