"""Instruction recipes: each instruction shape imported once, replayed after.

Most of a PTX module is a few hundred instruction shapes repeated with other
registers: `add.s32 %r7, %r5, %r6` and `add.s32 %r12, %r9, %r2` import to the
same ops. Running a handler (modifier classification, operand checks,
attribute formatting) costs ten times what its effect does, so the first
instruction of each shape runs its handler while a Recording notes what it
did at the level of values: register reads, new values, emitted ops,
register definitions. The steps are compiled into a straight-line Python
function (`compile_recipe`); later instructions of that shape call it with
their own register names.

A shape (`key`) is the opcode, the modifiers and per operand everything a
handler may look at: a register's declared type and which earlier operand
names the same register, immediates by value, the structure of addresses,
vectors and pairs, special registers by name. Instructions whose handler
depends on more than that are never recorded: symbols (parameters, variables,
functions, labels) and the opcodes that make blocks or read function state.
A recording is kept only if every value the handler used came from a
recorded step and it changed nothing but its block's ops and definitions;
test_memo.py checks that replayed and unreplayed imports print the same text.
"""

from __future__ import annotations

from collections.abc import Callable
from types import CodeType
from typing import Any, Protocol

from zmlir.frontend import ast
from zmlir.frontend.ssa import Value

# Handlers that branch, end a block or read the function's own state.
_NEVER = frozenset({"call", "ret", "exit", "trap", "brkpt", "bra", "brx"})
# Registers a handler may name itself (not an operand): the carry flag.
_FIXED_REGS = frozenset({"%cc.cf"})
# Recipes kept before the table is emptied (bounded memory).
_LIMIT = 1 << 14

# Step kinds: (READ, slot or name), (NEW, type), (EMIT, results, template,
# operands), (DEFINE, slot or name, value). Values are indices into the
# replay's list of values, in the order they were made.
READ, NEW, EMIT, DEFINE = range(4)

Step = tuple
Key = tuple


class RecordedOp(Protocol):
    """What a recording reads of an emitted op (the importer's printer.Op)."""

    results: list[Value]
    template: str
    operands: list[Value]
    loc: object


# The op class a recipe makes its ops with: (results, template, operands, loc).
OpClass = Callable[[list[Value], str, list[Value], Any], object]


class Shapes:
    """Operand lists' shapes, by the identity of the operand tuple: the
    parser hands out one tuple per distinct operand text (fastpath.py), so
    most instructions find theirs here without looking at their operands."""

    def __init__(self) -> None:
        # id(operands) -> (operands, shape id, register names); the tuple is
        # kept so its id is not reused.
        self.by_id: dict[int, tuple[tuple[ast.Operand, ...], int, tuple[str, ...]] | None] = {}
        self.ids: dict[tuple, int] = {}  # shape -> shape id

    def of(self, operands: tuple[ast.Operand, ...],
           special: frozenset[str] | set[str]) -> tuple[int, tuple[str, ...]] | None:
        entry = self.by_id.get(id(operands))
        if entry is None or entry[0] is not operands:
            if len(self.by_id) >= _LIMIT:
                self.by_id.clear()
            names: list[str] = []
            slots: dict[str, int] = {}
            shape = tuple(_shape(o, special, names, slots) for o in operands)
            if None in shape:
                self.by_id[id(operands)] = (operands, -1, ())
                return None
            shape_id = self.ids.setdefault(shape, len(self.ids))
            entry = self.by_id[id(operands)] = (operands, shape_id, tuple(names))
        if entry[1] < 0:
            return None
        return entry[1], entry[2]


def key(inst: ast.Instruction, reg_types: dict[str, str], shapes: Shapes,
        special: frozenset[str] | set[str]) -> tuple[Key, tuple[str, ...]] | None:
    """The instruction's shape and its register names (slot order), or None
    when it is never recorded."""
    if inst.opcode in _NEVER:
        return None
    operands = inst.operands
    entry = shapes.by_id.get(id(operands))
    if entry is None or entry[0] is not operands:
        shape = shapes.of(operands, special)
        if shape is None:
            return None
        shape_id, names = shape
    else:
        shape_id, names = entry[1], entry[2]
        if shape_id < 0:
            return None
    types = tuple(map(reg_types.get, names))
    if None in types:
        return None  # an undeclared register: its handler says so
    return (inst.opcode, inst.modifiers, shape_id, types), names


def _shape(o: ast.Operand, special: frozenset[str] | set[str], names: list[str],
           slots: dict[str, int]) -> object:
    """One operand's shape; register slots are numbered in `slots`/`names`."""
    cls = o.__class__
    if cls is ast.Reg:
        name = o.name  # type: ignore[union-attr]
        if name in special:
            return name
        i = slots.get(name)
        if i is None:
            i = slots[name] = len(names)
            names.append(name)
        return i
    if cls is ast.IntImm or cls is ast.FloatImm or cls is ast.Sink:
        return o
    if cls is ast.Addr:
        if o.base.__class__ is not ast.Reg:  # type: ignore[union-attr]
            return None
        base = _shape(o.base, special, names, slots)  # type: ignore[union-attr]
        coords = None
        if o.coords is not None:  # type: ignore[union-attr]
            coords = tuple(_shape(c, special, names, slots) for c in o.coords)  # type: ignore
            if None in coords:
                return None
        sampler = None
        if o.sampler is not None:  # type: ignore[union-attr]
            if o.sampler.__class__ is not ast.Reg:  # type: ignore[union-attr]
                return None
            sampler = _shape(o.sampler, special, names, slots)  # type: ignore[union-attr]
        return ("[", base, o.offset, coords, sampler)  # type: ignore[union-attr]
    if cls is ast.Vec:
        elems = tuple(_shape(e, special, names, slots) for e in o.elems)  # type: ignore
        return None if None in elems else ("{", elems)
    if cls is ast.Pair:
        first = _shape(o.first, special, names, slots)  # type: ignore[union-attr]
        second = _shape(o.second, special, names, slots)  # type: ignore[union-attr]
        return None if first is None or second is None else ("|", first, second)
    if cls is ast.Not:
        inner = _shape(o.operand, special, names, slots)  # type: ignore[union-attr]
        return None if inner is None else ("!", inner)
    return None  # symbols and anything else


class Recording:
    """What one handler did, as steps; `valid` until it did something a
    recipe can't repeat."""

    def __init__(self, names: tuple[str, ...], loc: object) -> None:
        self.slots = {n: i for i, n in enumerate(names)}
        self.loc = loc
        self.steps: list[Step] = []
        self.index: dict[int, int] = {}  # id(value) -> its index in the replay's values
        self.count = 0
        self.emits = 0
        self.keep: list[Value] = []  # the values indexed, alive so ids stay unique
        self.valid = True

    def _value(self, v: Value) -> None:
        self.index[id(v)] = self.count
        self.count += 1
        self.keep.append(v)

    def _reg(self, name: str) -> int | str | None:
        slot = self.slots.get(name)
        if slot is not None:
            return slot
        if name in _FIXED_REGS:
            return name
        self.valid = False
        return None

    def read(self, name: str, v: Value) -> None:
        self.steps.append((READ, self._reg(name)))
        self._value(v)

    def new(self, v: Value) -> None:
        self.steps.append((NEW, v.type))
        self._value(v)

    def emit(self, op: RecordedOp) -> None:
        if op.loc is not self.loc:
            self.valid = False
        results = self._indices(op.results)
        operands = self._indices(op.operands)
        if any(n in op.template for n in self.slots):
            self.valid = False  # a register name in the text: not this shape's alone
        self.steps.append((EMIT, results, op.template, operands))
        self.emits += 1

    def define(self, name: str, v: Value) -> None:
        i = self.index.get(id(v))
        if i is None:
            self.valid = False
        self.steps.append((DEFINE, self._reg(name), i))

    def _indices(self, values: list[Value]) -> tuple[int, ...]:
        out = []
        for v in values:
            i = self.index.get(id(v))
            if i is None:
                self.valid = False
                i = -1
            out.append(i)
        return tuple(out)


# A recipe: (importer, register names, loc). The importer (importer.core's
# FunctionImporter) is not typed here, which would make an import cycle.
Replay = Callable[[Any, tuple[str, ...], object], None]


class Recipes:
    """Recipes by key, shared by every import in the process (they depend on
    the key alone), each compiled to a function (`compile_recipe`)."""

    def __init__(self) -> None:
        self.table: dict[Key, Replay] = {}
        self.shapes = Shapes()

    def add(self, k: Key, rec: Recording, op_class: OpClass) -> None:
        if len(self.table) >= _LIMIT:
            self.table.clear()
        self.table[k] = compile_recipe(tuple(rec.steps), op_class)


def compile_recipe(steps: tuple[Step, ...], op_class: OpClass) -> Replay:
    """A function `(importer, register names, loc)` doing what the recorded
    handler did: the steps as straight-line Python, so a replay pays for no
    loop over steps and no dispatch on their kinds. Templates and types are
    constants of the function's namespace, never part of its source."""
    consts: dict[str, object] = {"Value": Value, "Op": op_class}
    body = ["    block = imp.block", "    ssa_block = block.ssa", "    defs = ssa_block.defs"]
    if any(step[0] == READ for step in steps):
        body.append("    read = imp.ssa.read")
    count = 0  # values made so far: v0, v1, ...

    def register(reg: int | str) -> str:
        if reg.__class__ is int:
            return f"names[{reg}]"
        key = f"R{len(consts)}"
        consts[key] = reg
        return key

    for step in steps:
        kind = step[0]
        if kind == READ:
            name = register(step[1])
            body.append(f"    v{count} = defs.get({name})")
            body.append(f"    if v{count} is None:")
            body.append(f"        v{count} = read(ssa_block, {name})")
            count += 1
        elif kind == NEW:
            key = f"T{len(consts)}"
            consts[key] = step[1]
            body.append(f"    v{count} = Value({key})")
            count += 1
        elif kind == EMIT:
            key = f"S{len(consts)}"
            consts[key] = step[2]
            results = ", ".join(f"v{i}" for i in step[1])
            operands = ", ".join(f"v{i}" for i in step[3])
            body.append(f"    block.ops.append(Op([{results}], {key}, [{operands}], loc))")
        else:
            body.append(f"    defs[{register(step[1])}] = v{step[2]}")
    source = "def replay(imp, names, loc):\n" + "\n".join(body) + "\n"
    code = _CODE.get(source)
    if code is None:
        if len(_CODE) >= _LIMIT:
            _CODE.clear()
        code = _CODE[source] = compile(source, "<zmlir recipe>", "exec")
    exec(code, consts)
    return consts["replay"]  # type: ignore[return-value]


# Compiled recipe sources: recipes of one step structure have one source (the
# templates and types are constants), a 20th of the 2 MB bench module's.
_CODE: dict[str, CodeType] = {}


RECIPES = Recipes()
