"""The PTX syntax tree the parser builds: plain frozen dataclasses, no behaviour.

Names keep PTX spelling without the leading dot: a `.global` state space is
`"global"`, an `add.s32` instruction is `Instruction(opcode="add", modifiers=("s32",))`.
Registers and special registers keep their `%`: `"%r1"`, `"%tid.x"`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zmlir.diagnostics import SourceLoc

# ---------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reg:
    """A register or special register: `%r1`, `%tid.x`, `%clock64`."""

    name: str


@dataclass(frozen=True, slots=True)
class IntImm:
    """An integer immediate (decimal, hex, octal, binary; `U` suffix dropped)."""

    value: int


@dataclass(frozen=True, slots=True)
class FloatImm:
    """A float immediate as its IEEE bit pattern: `0f3F800000` is bits=0x3F800000, width=32."""

    bits: int
    width: int


@dataclass(frozen=True, slots=True)
class Sym:
    """A symbol reference: a variable, parameter, function or label name."""

    name: str


@dataclass(frozen=True, slots=True)
class Addr:
    """A memory operand `[base]`, `[base+offset]`; base is a register or a symbol.

    Texture, surface and tensor operands carry coordinates too:
    `[tex, {%f1, %f2}]` has coords (%f1, %f2); `[tex, smp, {%f1}]` also has
    sampler `smp`. Plain addresses have coords None.
    """

    base: Reg | Sym | IntImm
    offset: int = 0
    coords: tuple[Operand, ...] | None = None
    sampler: Reg | Sym | None = None


@dataclass(frozen=True, slots=True)
class Vec:
    """A vector operand `{%r1, %r2, _, %r4}`."""

    elems: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class Pair:
    """A two-destination operand `%r1|%p1`."""

    first: Operand
    second: Operand


@dataclass(frozen=True, slots=True)
class Not:
    """A negated predicate operand `!%p1`."""

    operand: Operand


@dataclass(frozen=True, slots=True)
class Sink:
    """The bit bucket `_`."""


Operand = Reg | IntImm | FloatImm | Sym | Addr | Vec | Pair | Not | Sink

# ---------------------------------------------------------------------------
# Statements inside a function body
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Guard:
    """A predicate guard `@%p` or `@!%p`."""

    reg: str
    negated: bool


@dataclass(frozen=True, slots=True)
class Instruction:
    """One PTX instruction. `src` is the CUDA source position from the last
    preceding `.loc` directive: (file index, line, column); the file index maps
    to a name through Module.files. None when the PTX has no `.loc`."""

    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Guard | None
    loc: SourceLoc
    src: tuple[int, int, int] | None = None


@dataclass(frozen=True, slots=True)
class Label:
    name: str
    loc: SourceLoc


@dataclass(frozen=True, slots=True)
class RegDecl:
    """`.reg .b32 %r<5>;` expands to names `%r0` .. `%r4`; `.reg .pred %p, %q;` lists them."""

    type: str
    names: tuple[str, ...]
    loc: SourceLoc


@dataclass(frozen=True, slots=True)
class VarDecl:
    """A variable in a state space: `.shared .align 4 .b8 buf[1024];`.

    `dims` holds one entry per `[...]`; None means unsized (`[]`).
    `init` is the initializer: ints (constant expressions are evaluated),
    FloatImm, Sym (`sym`), SymOffset (`generic(sym)`, `sym+4`,
    `generic(sym)-8`), Mask (`0xff00(sym)`), InitField (`filter_mode = linear`
    in `.samplerref`/`.texref` initializers), or nested tuples.
    """

    space: str
    type: str
    name: str
    loc: SourceLoc
    align: int | None = None
    dims: tuple[int | None, ...] = ()
    linkage: str | None = None
    init: object | None = None
    attributes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Block:
    """A nested `{ ... }` scope inside a function body (nvcc uses these around calls)."""

    body: tuple[Statement, ...]
    loc: SourceLoc


@dataclass(frozen=True, slots=True)
class TargetList:
    """`ts: .branchtargets L1, L2;`, `.calltargets f, g;` or `.callprototype ...`: a labelled
    list of the targets of `brx.idx` or of an indirect `call`; `targets` holds the names
    (empty for a prototype)."""

    name: str
    kind: str  # "branchtargets", "calltargets" or "callprototype"
    targets: tuple[str, ...]
    loc: SourceLoc


@dataclass(frozen=True, slots=True)
class NoUnroll:
    """`.pragma "nounroll";` in a body: the loop whose header block holds it
    is not to be unrolled (PTX ISA 11.3). Other pragmas are ignored."""

    loc: SourceLoc


Statement = Instruction | Label | RegDecl | VarDecl | Block | TargetList | NoUnroll


# ---------------------------------------------------------------------------
# Initializer values beyond plain numbers and symbols
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SymOffset:
    """An address plus a constant in an initializer: `bar+4`, `generic(bar)+8`."""

    name: str
    offset: int
    generic: bool = False


@dataclass(frozen=True, slots=True)
class Mask:
    """The mask() operator: `0xff00(foo)` is byte 1 of foo's address.

    `value` is the address masked, a SymOffset (offset 0 for `0xff(foo)`);
    masks of plain integers are evaluated by the parser."""

    mask: int
    value: object


@dataclass(frozen=True, slots=True)
class InitField:
    """A named field of an opaque-type initializer: `addr_mode_0 = clamp_to_edge`.

    `value` is a Sym for a named setting, or an int."""

    name: str
    value: object

# ---------------------------------------------------------------------------
# Module level
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    """A function parameter or return value: `.param .u64 name`, `.reg .b32 x`,
    `.param .align 8 .b8 name[16]`; `ptr_space`/`ptr_align` come from `.ptr.global.align N`."""

    space: str
    type: str
    name: str
    loc: SourceLoc
    align: int | None = None
    dims: tuple[int | None, ...] = ()
    ptr_space: str | None = None
    ptr_align: int | None = None


@dataclass(frozen=True, slots=True)
class Function:
    """`.entry` (kind="entry") or `.func` (kind="func"); body None for a declaration."""

    kind: str
    name: str
    params: tuple[Param, ...]
    returns: tuple[Param, ...]
    body: tuple[Statement, ...] | None
    loc: SourceLoc
    linkage: str | None = None
    # Performance directives as written: {"maxntid": (256, 1, 1), "noreturn": ()}.
    directives: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Alias:
    """`.alias name, aliasee;`: `name` is another name for function `aliasee`."""

    name: str
    aliasee: str
    loc: SourceLoc


@dataclass(frozen=True, slots=True)
class Module:
    version: tuple[int, int]
    target: tuple[str, ...]
    address_size: int
    variables: tuple[VarDecl, ...]
    functions: tuple[Function, ...]
    filename: str = "<input>"
    # `.file` directives: index -> source file name, for Instruction.src.
    files: dict[int, str] = field(default_factory=dict)
    aliases: tuple[Alias, ...] = ()
