"""lark's transformer: the AST (zmlir.frontend.ast) built as the LALR
parser reduces, with no intermediate parse tree (parser.py hands it to the
Lark constructor). Literals, `.reg` names without `%`, and the checks of
what the grammar lets through (header directives, array sizes,
initializers) are done here; errors are CompileErrors with a line and
column (the filename is added by parse_ptx).
"""

from __future__ import annotations

import dataclasses
import re
import struct
from dataclasses import dataclass, field
from typing import Any

from lark import Token, Transformer

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import ast, cexpr
from zmlir.frontend.block_scopes import map_names, unique_block_names
from zmlir.frontend.fastpath import MAX_REG_COUNT

# `.target sm_XX[a|f]`: the architectures PTX ISA 9.0 (CUDA 13) names.
_SM_TARGET = re.compile(r"sm_(\d+)[af]?")
_ARCHITECTURES = frozenset({10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72,
                            75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121})


@dataclass(slots=True)
class ParseState:
    """What the lexer callbacks of one parse hand the transformer: the
    position of the last `.loc`, and the `.loc` of each instruction by the
    offset of its opcode (parser.py's `.loc` callbacks)."""

    src: tuple[int, int, int] | None = None
    src_at: dict[int, tuple[int, int, int]] = field(default_factory=dict)

    def reset(self) -> None:
        self.src = None
        self.src_at = {}


STATE = ParseState()


# ---------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------


def loc_of(tok: Token) -> SourceLoc:
    assert tok.line is not None and tok.column is not None
    return SourceLoc(tok.line, tok.column)


def parse_number(tok: Token, negative: bool = False) -> ast.IntImm | ast.FloatImm:
    """Classify one NUMBER token (see the terminal in ptx.lark)."""
    text = str(tok)
    prefix = text[:2].lower()
    if prefix == "0f":
        bits = int(text[2:], 16)
        return ast.FloatImm(bits ^ (1 << 31) if negative else bits, 32)
    if prefix == "0d":
        bits = int(text[2:], 16)
        return ast.FloatImm(bits ^ (1 << 63) if negative else bits, 64)
    if prefix not in ("0x", "0b") and any(c in text for c in ".eE"):
        value = -float(text) if negative else float(text)
        return ast.FloatImm(struct.unpack("<Q", struct.pack("<d", value))[0], 64)
    digits = text.rstrip("U")
    # Checked before int() too: Python refuses to convert very long digit strings.
    too_big = CompileError(f"integer literal '{text}' does not fit in 64 bits", loc=loc_of(tok))
    if len(digits) > 66:  # `0b` and 64 binary digits is the longest 64-bit literal
        raise too_big
    if prefix == "0x":
        value_i = int(digits[2:], 16)
    elif prefix == "0b":
        value_i = int(digits[2:], 2)
    elif len(digits) > 1 and digits[0] == "0":
        # PTX follows C: a leading zero means octal.
        if any(c in "89" for c in digits):
            raise CompileError(f"invalid octal literal '{text}'", loc=loc_of(tok))
        value_i = int(digits, 8)
    else:
        value_i = int(digits, 10)
    if value_i >= 1 << 64:
        raise too_big
    return ast.IntImm(-value_i if negative else value_i)


def parse_int(tok: Token, negative: bool = False) -> int:
    imm = parse_number(tok, negative)
    if not isinstance(imm, ast.IntImm):
        raise CompileError(f"expected an integer, found '{tok}'", loc=loc_of(tok))
    return imm.value


# ---------------------------------------------------------------------------
# Intermediate values passed between transformer callbacks
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Header:
    """A module header directive: `.version`, `.target` or `.address_size`."""

    kind: str
    value: Any
    loc: SourceLoc


@dataclass(frozen=True, slots=True)
class _Align:
    value: int


@dataclass(frozen=True, slots=True)
class _Attrs:
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Dims:
    dims: tuple[int | None, ...]


@dataclass(frozen=True, slots=True)
class _Ptr:
    space: str | None
    align: int | None


@dataclass(frozen=True, slots=True)
class _Directive:
    name: str
    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _ParamList:
    params: tuple[ast.Param, ...]


@dataclass(frozen=True, slots=True)
class _FastHead:
    """A function header fastpath.scan_function_head took."""

    value: tuple[Any, ...]

    def parts(self) -> tuple[Token | None, Token, _ParamList | None, ast.Sym,
                             _ParamList | None]:
        """As lark's children of `function`: linkage, kind, rets, name, params."""
        linkage, linkage_loc, kind, kind_loc, rets, name, params = self.value
        link = (Token("LINKAGE", "." + linkage, line=linkage_loc.line, column=linkage_loc.col)
                if linkage is not None else None)
        return (link, Token("FUNC_KIND", "." + kind, line=kind_loc.line, column=kind_loc.col),
                _ParamList(rets) if rets is not None else None, ast.Sym(name),
                _ParamList(params) if params is not None else None)


@dataclass(frozen=True, slots=True)
class _Body:
    stmts: tuple[ast.Statement, ...]


@dataclass(frozen=True, slots=True)
class _File:
    index: int
    name: str
    loc: SourceLoc


# `.file 1 "name"` with optional `, timestamp, size` (the FILE terminal).
_FILE_RE = re.compile(r'\.file[ \t]+(\d+)[ \t]+"((?:[^"\\\n]|\\.)*)"')


_SINK = ast.Sink()


# ---------------------------------------------------------------------------
# Registers declared without `%`
# ---------------------------------------------------------------------------
#
# The lexer can't tell a register `q` (from `.reg .pred q;`, common in inline
# asm) from a symbol `q`, so both arrive as Sym. Once a function body is
# complete, rewrite Syms that name a `.reg` declared in an enclosing scope to
# Reg, so the AST keeps its promise that registers are Reg.


def _resolve_plain_regs(
    stmts: tuple[ast.Statement, ...], outer: frozenset[str]
) -> tuple[ast.Statement, ...]:
    declared = outer.union(
        name for s in stmts if isinstance(s, ast.RegDecl) for name in s.names if name[0] != "%"
    )
    if not declared and not any(isinstance(s, ast.Block) for s in stmts):
        return stmts
    out: list[ast.Statement] = []
    changed = False
    for s in stmts:
        if isinstance(s, ast.Block):
            body = _resolve_plain_regs(s.body, declared)
            if body is not s.body:
                s = dataclasses.replace(s, body=body)
                changed = True
        elif declared and isinstance(s, ast.Instruction):
            operands = tuple(_resolve_operand(o, declared) for o in s.operands)
            if operands != s.operands:
                s = dataclasses.replace(s, operands=operands)
                changed = True
        out.append(s)
    return tuple(out) if changed else stmts


def _resolve_operand(o: ast.Operand, regs: frozenset[str]) -> ast.Operand:
    return map_names(o, lambda leaf: ast.Reg(leaf.name)
                     if isinstance(leaf, ast.Sym) and leaf.name in regs else leaf)


def _type_name(vector: Token | None, ty: Token) -> str:
    # Vector declarations (`.v4 .f32`) have no field of their own: "v4.f32".
    return f"{vector[1:]}.{ty[1:]}" if vector is not None else ty[1:]


class AstBuilder(Transformer[Token, Any]):
    """One method per grammar rule (or alias); `c` is the list of children."""

    # --- module ----------------------------------------------------------------

    def start(self, c: list[Any]) -> ast.Module:
        headers = [x for x in c if isinstance(x, _Header)]
        if not c or not isinstance(c[0], _Header) or c[0].kind != "version":
            first = c[0].loc if c else SourceLoc(1, 1)
            raise CompileError("PTX module must start with a '.version' directive", loc=first)
        found: dict[str, _Header] = {}
        for h in headers:
            if h.kind in found:
                raise CompileError(f"duplicate '.{h.kind}' directive", loc=h.loc)
            found[h.kind] = h
        if "target" not in found:
            raise CompileError("missing '.target' directive", loc=c[0].loc)
        address_size = found["address_size"].value if "address_size" in found else 32
        files: dict[int, str] = {}
        for x in c:
            if isinstance(x, _File):
                if x.index in files and files[x.index] != x.name:
                    raise CompileError(f"'.file {x.index}' declared twice", loc=x.loc)
                files[x.index] = x.name
        return ast.Module(
            version=found["version"].value,
            target=found["target"].value,
            address_size=address_size,
            variables=tuple(x for x in c if isinstance(x, ast.VarDecl)),
            functions=tuple(x for x in c if isinstance(x, ast.Function)),
            files=files,
            aliases=tuple(x for x in c if isinstance(x, ast.Alias)),
        )

    def file_decl(self, c: list[Token]) -> _File:
        m = _FILE_RE.match(c[0])
        assert m is not None  # the FILE terminal has the same shape
        # C escapes in the name: only `\"` and `\\` occur in practice.
        name = re.sub(r"\\(.)", r"\1", m.group(2))
        return _File(int(m.group(1)), name, loc_of(c[0]))

    def alias(self, c: list[Any]) -> ast.Alias:
        # `!alias` keeps every token: [".alias", name, ",", aliasee, ";"].
        return ast.Alias(c[1].name, c[3].name, loc_of(c[0]))

    def version(self, c: list[Token]) -> _Header:
        major, minor = c[1].split(".")
        return _Header("version", (int(major), int(minor)), loc_of(c[0]))

    def target(self, c: list[Any]) -> _Header:
        # `!target` keeps the keyword token (for the location) among the Syms.
        syms = [x for x in c if isinstance(x, ast.Sym)]
        for sym in syms:
            arch = _SM_TARGET.fullmatch(sym.name)
            if arch and int(arch.group(1)) not in _ARCHITECTURES:
                # NVIDIA's JIT rejects it too (CUDA_ERROR_INVALID_PTX).
                raise CompileError(f"unknown target architecture '{sym.name}'",
                                   loc=loc_of(c[0]))
        return _Header("target", tuple(x.name for x in syms), loc_of(c[0]))

    def address_size(self, c: list[Token]) -> _Header:
        size = parse_int(c[1])
        if size not in (32, 64):
            raise CompileError(f"'.address_size' must be 32 or 64, not {size}", loc=loc_of(c[1]))
        return _Header("address_size", size, loc_of(c[0]))

    # --- functions -------------------------------------------------------------

    def function(self, c: list[Any]) -> ast.Function:
        if isinstance(c[0], _FastHead):
            linkage, kind, rets, name, params = c[0].parts()
            rest = c[1:]
        else:
            linkage, kind, rets, name, params = c[:5]
            rest = c[5:]
        body: _Body | None = rest.pop() if rest and isinstance(rest[-1], _Body) else None
        if kind == ".entry" and rets is not None:
            raise CompileError("'.entry' cannot have return values", loc=loc_of(kind))
        if name.name == "_":  # `_` lexes as the sink, which isn't a name
            raise CompileError("'_' is not a valid function name", loc=loc_of(kind))
        params = params.params if params is not None else ()
        rets = rets.params if rets is not None else ()
        stmts = None
        if body is not None:
            # Parameters may be `.reg` names too (`.func (.reg .b32 x) f`).
            plain = frozenset(
                p.name for p in (*params, *rets) if p.space == "reg" and p.name[0] != "%"
            )
            stmts = unique_block_names(_resolve_plain_regs(body.stmts, plain))
        return ast.Function(
            kind=kind[1:],
            name=name.name,
            params=params,
            returns=rets,
            body=stmts,
            loc=loc_of(linkage if linkage is not None else kind),
            linkage=linkage[1:] if linkage is not None else None,
            directives={d.name: d.values for d in rest},
        )

    def ret_list(self, c: list[ast.Param | _ParamList | None]) -> _ParamList:
        if len(c) == 1 and isinstance(c[0], _ParamList):  # FAST_PARAMS
            return c[0]
        return _ParamList(tuple(p for p in c if isinstance(p, ast.Param)))

    param_list = ret_list

    def param(self, c: list[Any]) -> ast.Param:
        space, align, vector, ty, ptr, name = c[:6]
        dims = _checked_dims(c[6], space) if len(c) > 6 else ()
        return ast.Param(
            space=space[1:],
            type=_type_name(vector, ty),
            # A `_` name (in call prototypes) arrives as the Sink operand.
            name=name.name if not isinstance(name, ast.Sink) else "_",
            loc=loc_of(space),
            align=align.value if align is not None else None,
            dims=dims,
            ptr_space=ptr.space if ptr is not None else None,
            ptr_align=ptr.align if ptr is not None else None,
        )

    def ptr_attr(self, c: list[Any]) -> _Ptr:
        space, align = c
        return _Ptr(space[1:] if space is not None else None, align.value if align else None)

    def perf_directive(self, c: list[Token | None]) -> _Directive:
        name, *values = c
        assert name is not None
        return _Directive(name[1:], tuple(parse_int(v) for v in values if v is not None))

    def body(self, c: list[list[ast.Statement] | None]) -> _Body:
        return _Body(tuple(c[0]) if c[0] is not None else ())

    def stmts(self, c: list[Any]) -> list[ast.Statement]:
        # `stmts stmt` or `stmt`.
        # A FAST_STMTS child is a list of statements (see FAST_STMTS below);
        # nothing else is a list, so a list first is the statements so far.
        if c and type(c[0]) is list:
            head: list[ast.Statement] = c[0]
            for x in c[1:]:
                if type(x) is list:
                    head.extend(x)
                else:
                    head.append(x)
            return head
        return c

    # --- statements ------------------------------------------------------------

    def block(self, c: list[Any]) -> ast.Block:
        # `!block` keeps the braces: ["{", stmts or None, "}"].
        stmts = c[1]
        return ast.Block(tuple(stmts) if stmts is not None else (), loc_of(c[0]))

    def label(self, c: list[Token]) -> ast.Label:
        # LABEL_DEF is `name:` with optional blanks before the colon.
        return ast.Label(c[0][:-1].rstrip(), loc_of(c[0]))

    def instruction(self, c: list[Any]) -> ast.Instruction:
        first = c[0]
        if first.type == "GUARD":
            reg = first[1:].lstrip(" \t")  # `@ !%p` may have blanks
            negated = reg[0] == "!"
            if negated:
                reg = reg[1:].lstrip(" \t")
            guard: ast.Guard | None = ast.Guard(reg, negated)
            opcode, operands = c[1], c[2]
        else:
            guard, opcode, operands = None, first, c[1]
        # `::` never contains a dot, so a plain split keeps `shared::cta` whole.
        parts = opcode.rstrip().split(".")  # OPCODE keeps its trailing blanks
        return ast.Instruction(
            parts[0],
            tuple(parts[1:]),
            tuple(operands) if operands is not None else (),
            guard,
            loc_of(first),
            STATE.src_at.get(opcode.start_pos) if STATE.src_at else None,
        )

    def operands(self, c: list[Any]) -> list[ast.Operand]:
        # `operands "," operand` (the "," is filtered out) or a lone `operand`.
        last = c[-1]
        if type(last) is Token:  # only NUMBER reaches here unconverted
            last = parse_number(last)
        if len(c) == 2:
            head: list[ast.Operand] = c[0]
            head.append(last)
            return head
        return [last]

    elems = operands

    def reg_decl(self, c: list[Any]) -> ast.RegDecl:
        kw, _align, vector, ty, *names = c
        return ast.RegDecl(
            _type_name(vector, ty), tuple(n for group in names for n in group), loc_of(kw)
        )

    def reg_name(self, c: list[Any]) -> tuple[str, ...]:
        name: str = c[0].name
        count: Token | None = c[1]
        if count is None:
            return (name,)
        # `%r<12>` declares %r0 .. %r11.
        n = parse_int(count)
        if n > MAX_REG_COUNT:  # a typo like %r<99999999999> would exhaust memory
            raise CompileError(f"too many registers in '{name}<{count}>' (at most "
                               f"{MAX_REG_COUNT})", loc=loc_of(count))
        return tuple(f"{name}{i}" for i in range(n))

    def var_decl(self, c: list[Any]) -> ast.VarDecl:
        init = c[-1]
        linkage = c[0]
        space = c[1]
        where = linkage if linkage is not None else space
        if init is not None:
            init = _checked_init(init, where)
        align: int | None = None
        attrs: tuple[str, ...] = ()
        dims: tuple[int | None, ...] = ()
        vector = ty = name = None
        for x in c[2:-1]:
            if isinstance(x, _Align):
                align = x.value
            elif isinstance(x, _Attrs):
                attrs += x.names
            elif isinstance(x, _Dims):
                dims = _checked_dims(x, where)
            elif isinstance(x, Token):
                if x.type == "VECTOR":
                    vector = x
                else:
                    ty = x
            elif isinstance(x, ast.Reg | ast.Sym):
                name = x.name
        assert ty is not None and name is not None
        return ast.VarDecl(
            space=space[1:],
            type=_type_name(vector, ty),
            name=name,
            loc=loc_of(where),
            align=align,
            dims=dims,
            linkage=linkage[1:] if linkage is not None else None,
            init=init,
            attributes=attrs,
        )

    def align(self, c: list[Token]) -> _Align:
        return _Align(parse_int(c[0]))

    def attribute(self, c: list[str]) -> _Attrs:
        return _Attrs(tuple(c))

    def attr_item(self, c: list[Token | None]) -> str:
        name, *args = c
        assert name is not None
        values = [str(parse_int(a)) for a in args if a is not None]
        return f"{name[1:]}({', '.join(values)})" if values else name[1:]

    def dims(self, c: list[cexpr.Value | None]) -> _Dims:
        return _Dims(tuple(c))  # type: ignore[arg-type]  # checked by _checked_dims

    def dim(self, c: list[cexpr.Value | None]) -> cexpr.Value | None:
        return c[0]

    def init_list(self, c: list[object]) -> tuple[object, ...]:
        # An empty `{}` leaves a single None placeholder.
        return tuple(cexpr.finish(x) for x in c if x is not None)  # type: ignore[arg-type]

    def init_field(self, c: list[Any]) -> ast.InitField:
        name, value = c
        return ast.InitField(name.name, cexpr.finish(value))

    # --- constant expressions (see cexpr.py) -----------------------------------

    def c_num(self, c: list[Token]) -> int | ast.FloatImm:
        imm = parse_number(c[0])
        return imm.value if isinstance(imm, ast.IntImm) else imm

    def c_sym(self, c: list[ast.Sym]) -> ast.SymOffset:
        return ast.SymOffset(c[0].name, 0)

    def c_generic(self, c: list[ast.Sym]) -> ast.SymOffset:
        return ast.SymOffset(c[0].name, 0, generic=True)

    def c_mask(self, c: list[Any]) -> cexpr.Value:
        return cexpr.mask(parse_int(c[0]), c[1])

    def c_binop(self, c: list[Any]) -> cexpr.Value:
        return cexpr.binop(str(c[1]), c[0], c[2])

    def c_bor(self, c: list[Any]) -> cexpr.Value:
        return cexpr.binop("|", c[0], c[1])

    def c_bxor(self, c: list[Any]) -> cexpr.Value:
        return cexpr.binop("^", c[0], c[1])

    def c_band(self, c: list[Any]) -> cexpr.Value:
        return cexpr.binop("&", c[0], c[1])

    def c_unop(self, c: list[Any]) -> cexpr.Value:
        return cexpr.unop(str(c[0]), c[1])

    def c_lnot(self, c: list[Any]) -> cexpr.Value:
        return cexpr.unop("!", c[0])

    # --- terminals: called as each token is shifted ---------------------------
    # (Upper-case names: lark looks these methods up by terminal name.)

    def REG(self, tok: Token) -> ast.Reg:
        return ast.Reg(str(tok))

    def NAME(self, tok: Token) -> ast.Sym:
        return ast.Sym(str(tok))

    def SINK(self, tok: Token) -> ast.Sink:
        return _SINK

    def TARGET_LIST(self, tok: Token) -> ast.TargetList:
        name, _, rest = str(tok).partition(":")
        m = re.match(r"\s*\.(\w+)(.*);", rest, re.S)
        assert m is not None  # the terminal's own pattern
        kind, items = m.group(1), m.group(2)
        targets = () if kind == "callprototype" else tuple(
            t.strip() for t in items.split(",") if t.strip())
        return ast.TargetList(name.strip(), kind, targets, loc_of(tok))

    def NOUNROLL(self, tok: Token) -> ast.NoUnroll:
        return ast.NoUnroll(loc_of(tok))

    def FAST_STMTS(self, tok: Token) -> list[ast.Statement]:
        return tok.value  # type: ignore[return-value]  # set by FastLexer

    def FAST_PARAMS(self, tok: Token) -> _ParamList:
        return _ParamList(tok.value)  # type: ignore[arg-type]  # set by FastLexer

    def FAST_FUNC_HEAD(self, tok: Token) -> _FastHead:
        return _FastHead(tok.value)  # type: ignore[arg-type]  # set by FastLexer

    def FAST_VAR_DECL(self, tok: Token) -> ast.VarDecl:
        return tok.value  # type: ignore[return-value]  # set by FastLexer

    def FAST_INIT(self, tok: Token) -> tuple[int, ...]:
        return tok.value  # type: ignore[return-value]  # set by FastLexer

    # --- operands --------------------------------------------------------------

    def not_(self, c: list[ast.Reg | ast.Sym]) -> ast.Not:
        return ast.Not(c[0])

    def pair(self, c: list[ast.Reg | ast.Sym]) -> ast.Pair:
        return ast.Pair(c[0], c[1])

    def addr(self, c: list[Any]) -> ast.Addr:
        # [base] or [base, ADD_OP, NEG?, NUMBER]
        base = c[0]
        if type(base) is Token:
            base = ast.IntImm(parse_int(base))
        if len(c) == 1:
            return ast.Addr(base)
        offset = parse_int(c[-1], negative=len(c) == 4)
        return ast.Addr(base, -offset if c[1] == "-" else offset)

    def tex_addr(self, c: list[Any]) -> ast.Addr:
        # [base, sampler or None, elems or None]
        base, sampler, elems = c
        return ast.Addr(base, 0, tuple(elems) if elems is not None else (), sampler)

    def vec(self, c: list[list[ast.Operand] | None]) -> ast.Vec:
        return ast.Vec(tuple(c[0]) if c[0] is not None else ())

    def vec_pair(self, c: list[Any]) -> ast.Pair:
        return ast.Pair(ast.Vec(tuple(c[0]) if c[0] is not None else ()), c[1])

    def number(self, c: list[Token]) -> ast.IntImm | ast.FloatImm:
        return parse_number(c[-1], negative=len(c) == 2)

    def negative(self, c: list[Token]) -> ast.IntImm | ast.FloatImm:
        return parse_number(c[1], negative=True)


def _checked_dims(d: _Dims, where: Token) -> tuple[int | None, ...]:
    out: list[int | None] = []
    for v in d.dims:
        if isinstance(v, cexpr.Bad):
            raise CompileError(f"invalid array size: {v.message}", loc=loc_of(where))
        if v is not None and (type(v) is not int or v < 0):
            raise CompileError("array size must be a non-negative integer", loc=loc_of(where))
        out.append(v)
    return tuple(out)


def _checked_init(init: object, where: Token) -> object:
    """The initializer with its top level finished; a Bad anywhere in it is an error."""
    stack = [init]
    while stack:
        v = stack.pop()
        if isinstance(v, cexpr.Bad):
            raise CompileError(f"invalid initializer: {v.message}", loc=loc_of(where))
        if isinstance(v, tuple):
            stack.extend(v)
        elif isinstance(v, ast.InitField | ast.Mask):
            stack.append(v.value)
    return cexpr.finish(init)  # type: ignore[arg-type]
