"""What the instruction handlers share: an instruction's modifiers sorted
into kinds (`classify`), checks of its form, its operands read as values
(the address of a memory operand too), and attribute text."""

from __future__ import annotations

from dataclasses import dataclass, field

from zmlir.frontend import ast
from zmlir.frontend.importer.core import FunctionImporter
from zmlir.frontend.importer.ptxtypes import MLIR_TYPES, bits
from zmlir.frontend.ssa import Value

_STATE_SPACES = {"global", "shared", "shared::cta", "shared::cluster", "local", "const", "param"}
_ROUNDING = {"rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi"}
_CMP = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
        "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}
_SEMANTICS = {"weak", "volatile", "relaxed", "acquire", "release", "acq_rel", "mmio"}
SCOPES = {"cta", "cluster", "gpu", "sys"}
_CACHE_OPS = {"ca", "cg", "cs", "lu", "cv", "wb", "wt"}
# Modifiers that are hints only and change no result.
_HINTS = {"uni", "aligned", "sync", "nc", "L1::evict_last", "L1::evict_first",
          "L1::no_allocate", "L1::evict_normal", "L1::evict_unchanged",
          "L2::64B", "L2::128B", "L2::256B", "L2::cache_hint"}


@dataclass(frozen=True, slots=True)
class Modifiers:
    """An instruction's modifiers sorted into kinds; unknown ones are errors.

    Shared: classify hands the same object to every instruction with the
    same modifiers, so it is frozen, and its lists (lists, as handlers
    compare them to lists) must not be changed in place either."""

    types: list[str] = field(default_factory=list)
    space: str | None = None
    rnd: str | None = None
    cmp: str | None = None
    sem: str | None = None
    scope: str | None = None
    cache: str | None = None
    vec: int = 1
    flags: frozenset[str] = frozenset()
    rest: list[str] = field(default_factory=list)


_FLAGS = frozenset(("ftz", "sat", "approx", "full", "lo", "hi", "wide", "to", "and", "or", "xor",
                    "relu"))
_SPACE_NAMES = {"shared::cta": "shared", "shared::cluster": "shared_cluster"}
# classify's results by modifier tuple (a module has few distinct ones).
_CLASSIFIED: dict[tuple[str, ...], Modifiers] = {}


def classify(inst: ast.Instruction) -> Modifiers:
    m = _CLASSIFIED.get(inst.modifiers)
    if m is None:
        m = _classify_uncached(inst.modifiers)
        if len(_CLASSIFIED) > 1 << 14:
            _CLASSIFIED.clear()
        _CLASSIFIED[inst.modifiers] = m
    return m


def _classify_uncached(modifiers: tuple[str, ...]) -> Modifiers:
    types: list[str] = []
    flags: set[str] = set()
    rest: list[str] = []
    space = rnd = cmp = sem = scope = cache = None
    vec = 1
    for mod in modifiers:
        if mod in MLIR_TYPES or mod in ("b128",):
            types.append(mod)
        elif mod in _STATE_SPACES:
            space = _SPACE_NAMES.get(mod, mod)
        elif mod in _ROUNDING:
            rnd = mod
        elif mod in _CMP and cmp is None:
            cmp = mod
        elif mod in _SEMANTICS:
            sem = mod
        elif mod in SCOPES:
            scope = mod
        elif mod in _CACHE_OPS:
            cache = mod
        elif mod in ("v2", "v4", "v8"):
            vec = int(mod[1:])
        elif mod in _HINTS or mod in _FLAGS:
            flags.add(mod)
        else:
            rest.append(mod)
    return Modifiers(types, space, rnd, cmp, sem, scope, cache, vec, frozenset(flags), rest)


def check_no_rest(imp: FunctionImporter, inst: ast.Instruction, m: Modifiers,
                  allowed: set[str] = frozenset()) -> None:
    extra = [r for r in m.rest if r not in allowed]
    if extra:
        raise imp.error(f"unsupported modifier '.{extra[0]}' on '{inst.opcode}'", inst.loc)


def one_type(imp: FunctionImporter, inst: ast.Instruction, m: Modifiers) -> str:
    if len(m.types) != 1:
        raise imp.error(f"'{inst.opcode}' needs exactly one type modifier", inst.loc)
    return m.types[0]


def attr_dict(**kwargs: object) -> str:
    parts = []
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        if value is True:
            parts.append(key)
        else:
            parts.append(f"{key} = {value}")
    return "{{" + ", ".join(parts) + "}}" if parts else ""


def arith_attrs(ptx_type: str, m: Modifiers, **extra: object) -> str:
    return attr_dict(type=f"#ptx.type<{ptx_type}>",
                     rnd=f"#ptx.rnd<{m.rnd}>" if m.rnd else None,
                     ftz="ftz" in m.flags, sat="sat" in m.flags, **extra)


def expect_operands(imp: FunctionImporter, inst: ast.Instruction, n: int) -> None:
    if len(inst.operands) != n:
        raise imp.error(f"'{inst.opcode}' expects {n} operands, got {len(inst.operands)}",
                        inst.loc)


def address(imp: FunctionImporter, inst: ast.Instruction, operand: ast.Operand,
            space: str | None) -> tuple[Value, int]:
    if not isinstance(operand, ast.Addr):
        raise imp.error("expected a memory operand [address]", inst.loc)
    base = operand.base
    if isinstance(base, ast.Reg):
        v = imp.read_reg(base.name, inst.loc)
        if v.type not in ("i32", "i64"):
            v = imp.coerce(v, f"i{bits(v.type)}", inst.loc)
        return v, operand.offset
    if isinstance(base, ast.Sym):
        width = "i32" if space == "shared" else "i64"
        return imp.address_of(base.name, width, inst.loc), operand.offset
    return imp.constant(ast.IntImm(base.value), "i64", inst.loc), operand.offset


def operand_values(imp: FunctionImporter, inst: ast.Instruction,
                   types: list[str], ptx_types: list[str] | None = None) -> list[Value]:
    """Operands 1.. read as `types` (immediates and registers alike)."""
    expect_operands(imp, inst, 1 + len(types))
    ptx_types = ptx_types or [""] * len(types)
    return [imp.value(o, t, inst.loc, pt)
            for o, t, pt in zip(inst.operands[1:], types, ptx_types, strict=True)]


def emit_result(imp: FunctionImporter, inst: ast.Instruction, text: str,
                operands: list[Value], result_type: str) -> None:
    r = imp.new_value(result_type)
    imp.emit([r], text, operands, inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


def operand_slots(n: int, start: int = 0) -> str:
    return ", ".join(f"{{{i}}}" for i in range(start, start + n))
