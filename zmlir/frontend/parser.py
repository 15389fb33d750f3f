"""PTX text -> zmlir.frontend.ast, with lark's LALR parser.

The grammar lives in grammar/ptx.lark. The transformer below is handed to the
Lark constructor, so the LALR parser calls it on every reduction and the AST
is built in one pass with no intermediate parse tree. Every lark error is
turned into a CompileError with a line and column; nothing else escapes.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr
from lark.parsers.lalr_analysis import Shift

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.files import cache_dir, cache_enabled
from zmlir.frontend import ast, cexpr
from zmlir.frontend.collector import without_collector
from zmlir.frontend.fastpath import MAX_REG_COUNT, FastLexer

__all__ = ["parse_ptx"]


@without_collector
def parse_ptx(text: str, filename: str = "<input>", *, fast: bool = True) -> ast.Module:
    """Parse a whole PTX module; raise CompileError (with `filename`) on bad input.

    `fast=False` parses every statement with lark, bypassing fastpath.py
    (same result, slower; for tests).
    """
    parser = _parser()
    # The lexer callbacks and the transformer share one per-parse state
    # (_STATE); the lock keeps concurrent parses in threads from mixing it up.
    with _LOCK:
        _STATE.reset()
        lexer = parser.parser.lexer
        assert isinstance(lexer, FastLexer)
        lexer.enabled = fast
        try:
            return _parse_locked(parser, text, filename)
        finally:
            _STATE.reset()
            lexer.enabled = True


def _parse_locked(parser: Lark, text: str, filename: str) -> ast.Module:
    try:
        module = parser.parse(text)
    except CompileError as e:  # raised by the transformer, which doesn't know the filename
        raise e.with_filename(filename) from None
    except UnexpectedInput as e:
        raise _diagnose(e, text, filename, parser) from None
    except RecursionError:  # only from absurd nesting: the LALR parser itself doesn't recurse
        raise CompileError("blocks or braces nested too deeply", filename) from None
    assert isinstance(module, ast.Module)
    return dataclasses.replace(module, filename=filename)


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    # Building the LALR tables takes 0.1 s, loading them from lark's cache
    # (which rebuilds it when the grammar or lark changes) a 10th of that.
    lark = Lark.open(
        "grammar/ptx.lark",
        rel_to=__file__,
        parser="lalr",
        lexer="contextual",
        transformer=_AstBuilder(),
        maybe_placeholders=True,
        lexer_callbacks={"LOC": _on_loc, "OPCODE": _on_opcode},
        cache=_tables_cache(),
    )
    # Runs of plain statements bypass lark's lexer and parser (fastpath.py).
    lalr = lark.parser.parser.parser  # ParsingFrontend -> LALR_Parser -> _Parser
    lark.parser.lexer = FastLexer(lark.parser.lexer, lalr.parse_table, _fast_number, _loc_value,
                                  _STATE)
    return lark


def _tables_cache() -> str | bool:
    """Where lark keeps the parser's tables, or False (no cache)."""
    if not cache_enabled():
        return False
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False  # lark builds the tables then, as without a cache
    return str(directory / "ptx-grammar.lark-cache")


def _fast_number(text: str, negative: bool) -> ast.IntImm | ast.FloatImm:
    return _number(Token("NUMBER", text, 0, 1, 1), negative)


# ---------------------------------------------------------------------------
# `.loc`: the CUDA source position of the instructions that follow
# ---------------------------------------------------------------------------
#
# `.loc` is an ignored terminal, so it may appear between any two tokens. Its
# lexer callback records the position; each OPCODE token lexed after it is
# tagged with that position (by offset in the text), and the `instruction`
# callback picks the tag up. Tagging at lex time matters: LALR reduces an
# instruction only after lexing the token after its `;`, which may be the
# next `.loc` already.


@dataclass(slots=True)
class _ParseState:
    src: tuple[int, int, int] | None = None
    src_at: dict[int, tuple[int, int, int]] = field(default_factory=dict)

    def reset(self) -> None:
        self.src = None
        self.src_at = {}


_STATE = _ParseState()
_LOCK = threading.Lock()

# `.loc file line column`, then optional `, function_name ...`, `, inlined_at ...`.
_LOC_RE = re.compile(r"\.loc[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)[ \t]*(?:,|//|$)")


def _loc_value(text: str) -> tuple[int, int, int] | None:
    m = _LOC_RE.match(text)
    if m is None:
        return None
    file, line, col = (int(g) for g in m.groups())
    return (file, line, col)


def _on_loc(tok: Token) -> Token:
    src = _loc_value(tok)
    if src is None:
        raise CompileError("malformed '.loc' directive; expected '.loc file line column'",
                           loc=_loc(tok))
    _STATE.src = src
    return tok


def _on_opcode(tok: Token) -> Token:
    if _STATE.src is not None:
        assert tok.start_pos is not None
        _STATE.src_at[tok.start_pos] = _STATE.src
    return tok


# ---------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------


def _loc(tok: Token) -> SourceLoc:
    assert tok.line is not None and tok.column is not None
    return SourceLoc(tok.line, tok.column)


def _number(tok: Token, negative: bool = False) -> ast.IntImm | ast.FloatImm:
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
    too_big = CompileError(f"integer literal '{text}' does not fit in 64 bits", loc=_loc(tok))
    if len(digits) > 66:  # `0b` and 64 binary digits is the longest 64-bit literal
        raise too_big
    if prefix == "0x":
        value_i = int(digits[2:], 16)
    elif prefix == "0b":
        value_i = int(digits[2:], 2)
    elif len(digits) > 1 and digits[0] == "0":
        # PTX follows C: a leading zero means octal.
        if any(c in "89" for c in digits):
            raise CompileError(f"invalid octal literal '{text}'", loc=_loc(tok))
        value_i = int(digits, 8)
    else:
        value_i = int(digits, 10)
    if value_i >= 1 << 64:
        raise too_big
    return ast.IntImm(-value_i if negative else value_i)


def _int(tok: Token, negative: bool = False) -> int:
    imm = _number(tok, negative)
    if not isinstance(imm, ast.IntImm):
        raise CompileError(f"expected an integer, found '{tok}'", loc=_loc(tok))
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
    if isinstance(o, ast.Sym):
        return ast.Reg(o.name) if o.name in regs else o
    if isinstance(o, ast.Addr):
        base = _resolve_operand(o.base, regs)
        sampler = _resolve_operand(o.sampler, regs) if o.sampler is not None else None
        coords = (
            tuple(_resolve_operand(e, regs) for e in o.coords) if o.coords is not None else None
        )
        if (base, sampler, coords) == (o.base, o.sampler, o.coords):
            return o
        return dataclasses.replace(o, base=base, sampler=sampler, coords=coords)  # type: ignore[arg-type]
    if isinstance(o, ast.Vec):
        return ast.Vec(tuple(_resolve_operand(e, regs) for e in o.elems))
    if isinstance(o, ast.Pair):
        return ast.Pair(_resolve_operand(o.first, regs), _resolve_operand(o.second, regs))
    if isinstance(o, ast.Not):
        return ast.Not(_resolve_operand(o.operand, regs))
    return o


def _type_name(vector: Token | None, ty: Token) -> str:
    # Vector declarations (`.v4 .f32`) have no field of their own: "v4.f32".
    return f"{vector[1:]}.{ty[1:]}" if vector is not None else ty[1:]


class _AstBuilder(Transformer[Token, Any]):
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
        return _File(int(m.group(1)), name, _loc(c[0]))

    def alias(self, c: list[Any]) -> ast.Alias:
        # `!alias` keeps every token: [".alias", name, ",", aliasee, ";"].
        return ast.Alias(c[1].name, c[3].name, _loc(c[0]))

    def version(self, c: list[Token]) -> _Header:
        major, minor = c[1].split(".")
        return _Header("version", (int(major), int(minor)), _loc(c[0]))

    def target(self, c: list[Any]) -> _Header:
        # `!target` keeps the keyword token (for the location) among the Syms.
        return _Header("target", tuple(x.name for x in c if isinstance(x, ast.Sym)), _loc(c[0]))

    def address_size(self, c: list[Token]) -> _Header:
        size = _int(c[1])
        if size not in (32, 64):
            raise CompileError(f"'.address_size' must be 32 or 64, not {size}", loc=_loc(c[1]))
        return _Header("address_size", size, _loc(c[0]))

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
            raise CompileError("'.entry' cannot have return values", loc=_loc(kind))
        if name.name == "_":  # `_` lexes as the sink, which isn't a name
            raise CompileError("'_' is not a valid function name", loc=_loc(kind))
        params = params.params if params is not None else ()
        rets = rets.params if rets is not None else ()
        stmts = None
        if body is not None:
            # Parameters may be `.reg` names too (`.func (.reg .b32 x) f`).
            plain = frozenset(
                p.name for p in (*params, *rets) if p.space == "reg" and p.name[0] != "%"
            )
            stmts = _resolve_plain_regs(body.stmts, plain)
        return ast.Function(
            kind=kind[1:],
            name=name.name,
            params=params,
            returns=rets,
            body=stmts,
            loc=_loc(linkage if linkage is not None else kind),
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
            loc=_loc(space),
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
        return _Directive(name[1:], tuple(_int(v) for v in values if v is not None))

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
        return ast.Block(tuple(stmts) if stmts is not None else (), _loc(c[0]))

    def label(self, c: list[Token]) -> ast.Label:
        # LABEL_DEF is `name:` with optional blanks before the colon.
        return ast.Label(c[0][:-1].rstrip(), _loc(c[0]))

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
            _loc(first),
            _STATE.src_at.get(opcode.start_pos) if _STATE.src_at else None,
        )

    def operands(self, c: list[Any]) -> list[ast.Operand]:
        # `operands "," operand` (the "," is filtered out) or a lone `operand`.
        last = c[-1]
        if type(last) is Token:  # only NUMBER reaches here unconverted
            last = _number(last)
        if len(c) == 2:
            head: list[ast.Operand] = c[0]
            head.append(last)
            return head
        return [last]

    elems = operands

    def reg_decl(self, c: list[Any]) -> ast.RegDecl:
        kw, _align, vector, ty, *names = c
        return ast.RegDecl(
            _type_name(vector, ty), tuple(n for group in names for n in group), _loc(kw)
        )

    def reg_name(self, c: list[Any]) -> tuple[str, ...]:
        name: str = c[0].name
        count: Token | None = c[1]
        if count is None:
            return (name,)
        # `%r<12>` declares %r0 .. %r11.
        n = _int(count)
        if n > MAX_REG_COUNT:  # a typo like %r<99999999999> would exhaust memory
            raise CompileError(f"too many registers in '{name}<{count}>' (at most "
                               f"{MAX_REG_COUNT})", loc=_loc(count))
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
            loc=_loc(where),
            align=align,
            dims=dims,
            linkage=linkage[1:] if linkage is not None else None,
            init=init,
            attributes=attrs,
        )

    def align(self, c: list[Token]) -> _Align:
        return _Align(_int(c[0]))

    def attribute(self, c: list[str]) -> _Attrs:
        return _Attrs(tuple(c))

    def attr_item(self, c: list[Token | None]) -> str:
        name, *args = c
        assert name is not None
        values = [str(_int(a)) for a in args if a is not None]
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
        imm = _number(c[0])
        return imm.value if isinstance(imm, ast.IntImm) else imm

    def c_sym(self, c: list[ast.Sym]) -> ast.SymOffset:
        return ast.SymOffset(c[0].name, 0)

    def c_generic(self, c: list[ast.Sym]) -> ast.SymOffset:
        return ast.SymOffset(c[0].name, 0, generic=True)

    def c_mask(self, c: list[Any]) -> cexpr.Value:
        return cexpr.mask(_int(c[0]), c[1])

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
        return ast.TargetList(name.strip(), kind, targets, _loc(tok))

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
            base = ast.IntImm(_int(base))
        if len(c) == 1:
            return ast.Addr(base)
        offset = _int(c[-1], negative=len(c) == 4)
        return ast.Addr(base, -offset if c[1] == "-" else offset)

    def tex_addr(self, c: list[Any]) -> ast.Addr:
        # [base, sampler or None, elems or None]
        base, sampler, elems = c
        return ast.Addr(base, 0, tuple(elems) if elems is not None else (), sampler)

    def vec(self, c: list[list[ast.Operand] | None]) -> ast.Vec:
        return ast.Vec(tuple(c[0]) if c[0] is not None else ())

    def number(self, c: list[Token]) -> ast.IntImm | ast.FloatImm:
        return _number(c[-1], negative=len(c) == 2)

    def negative(self, c: list[Token]) -> ast.IntImm | ast.FloatImm:
        return _number(c[1], negative=True)


def _checked_dims(d: _Dims, where: Token) -> tuple[int | None, ...]:
    out: list[int | None] = []
    for v in d.dims:
        if isinstance(v, cexpr.Bad):
            raise CompileError(f"invalid array size: {v.message}", loc=_loc(where))
        if v is not None and (type(v) is not int or v < 0):
            raise CompileError("array size must be a non-negative integer", loc=_loc(where))
        out.append(v)
    return tuple(out)


def _checked_init(init: object, where: Token) -> object:
    """The initializer with its top level finished; a Bad anywhere in it is an error."""
    stack = [init]
    while stack:
        v = stack.pop()
        if isinstance(v, cexpr.Bad):
            raise CompileError(f"invalid initializer: {v.message}", loc=_loc(where))
        if isinstance(v, tuple):
            stack.extend(v)
        elif isinstance(v, ast.InitField | ast.Mask):
            stack.append(v.value)
    return cexpr.finish(init)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Diagnostics
# ---------------------------------------------------------------------------

# How to name a named terminal in "expected ..." messages; anonymous ones
# (punctuation, keywords) are quoted as written.
_TERMINAL_DESCRIPTIONS = {
    "OPCODE": "an instruction",
    "FAST_STMTS": "an instruction",
    "FAST_PARAMS": "'('",
    "FAST_INIT": "'{'",
    "FAST_FUNC_HEAD": "'.entry' or '.func'",
    "FAST_VAR_DECL": "a state space",
    "LABEL_DEF": "a label",
    "GUARD": "a predicate guard",
    "REG": "a register",
    "NAME": "an identifier",
    "SINK": "'_'",
    "NUMBER": "a number",
    "NEG": "'-'",
    "ADD_OP": "'+'",
    "VERSION_NUM": "a version number",
    "MUL_OP": "an operator",
    "SHIFT_OP": "an operator",
    "UNARY_OP": "'~'",
    "FILE": "'.file'",
    "LINKAGE": "a linkage directive",
    "FUNC_KIND": "'.entry' or '.func'",
    "VAR_SPACE": "a state space",
    "PARAM_SPACE": "'.param' or '.reg'",
    "REG_KW": "'.reg'",
    "VECTOR": "a vector size",
    "TYPE": "a type",
    "DIRECTIVE_NAME": "a directive",
    "_COMMA": "','",
    "_SEMI": "';'",
    "$END": "end of input",
}


def _describe(name: str, parser: Lark) -> str:
    if name in _TERMINAL_DESCRIPTIONS:
        return _TERMINAL_DESCRIPTIONS[name]
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    return f"'{pattern.value}'" if isinstance(pattern, PatternStr) else name


def _join_alternatives(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _end_of_text(text: str) -> SourceLoc:
    """Position just after the last non-blank character: where EOF errors point."""
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    return SourceLoc(line, len(stripped) - (stripped.rfind("\n") + 1) + 1)


def _end_of_previous(text: str, pos: int) -> SourceLoc:
    """Position just after the last token before offset `pos`, skipping blanks and `//` comments."""
    lines = text[:pos].split("\n")
    for index in range(len(lines) - 1, -1, -1):
        code = lines[index].split("//", 1)[0].rstrip()
        if code:
            return SourceLoc(index + 1, len(code) + 1)
    return SourceLoc(1, 1)


def _viable(e: UnexpectedToken) -> set[str]:
    """The terminals in `e.expected` that the parser would really shift next.

    LALR merges states, so lark's expected set can name tokens that only fail
    after some reductions (a `}` after an operand is fine inside `{...}` but
    not in a plain instruction). Replay the reductions on a copy of the stack.
    """
    try:
        table = e.state.parse_conf.states
        stack0 = e.state.state_stack
    except AttributeError:  # no parser state to replay: keep lark's answer
        return set(e.expected)
    viable = set()
    for name in e.expected:
        stack = list(stack0)
        for _ in range(1000):  # bounded: a reduce chain is never this long
            action = table[stack[-1]].get(name)
            if action is None:
                break
            kind, rule = action
            if kind is Shift:
                viable.add(name)
                break
            if rule.expansion:
                del stack[-len(rule.expansion) :]
            goto = table[stack[-1]].get(rule.origin.name)
            if goto is None:
                break
            stack.append(goto[1])
    return viable or set(e.expected)


# Words that start a new top-level item: seeing one inside a body means a `}` is missing.
_TOP_LEVEL_STARTS = frozenset({".entry", ".func", ".visible", ".extern", ".weak", ".common"})


def _diagnose(e: UnexpectedInput, text: str, filename: str, parser: Lark) -> CompileError:
    if isinstance(e, UnexpectedCharacters):
        pos = e.pos_in_stream or 0
        if text.startswith("/*", pos):
            message = "unterminated '/*' comment"
        else:
            message = f"unexpected character {text[pos]!r}"
        return CompileError(message, filename, SourceLoc(e.line, e.column))
    if isinstance(e, UnexpectedToken):
        ignored = set(parser.lexer_conf.ignore)  # (a cached Lark has no ignore_tokens)
        # `_TARGET_LIST` is filtered from the parse; `__ANON_n` are keywords and stay.
        names = {n for n in _viable(e) if n not in ignored and n != "_TARGET_LIST"}
        expected = sorted({_describe(n, parser) for n in names})
        tok = e.token
        if tok.type == "$END":
            message = "unexpected end of input"
            if "'}'" in expected:
                message = "expected '}' at end of input"
            elif expected and len(expected) <= 4:
                message += f"; expected {_join_alternatives(expected)}"
            return CompileError(message, filename, _end_of_text(text))
        if tok.start_pos is not None and text.startswith("/*", tok.start_pos):
            # BLOCK_COMMENT didn't match; the root lexer saw a '/' operator.
            return CompileError("unterminated '/*' comment", filename, _loc(tok))
        if tok.start_pos is not None and text.startswith(".section", tok.start_pos):
            # The SECTION terminal didn't match, so the root lexer saw a bare directive.
            message = "unterminated '.section' (or its braces are nested too deeply)"
            return CompileError(message, filename, _loc(tok))
        found = f"'{tok.strip()}'"
        if "';'" in expected and tok.start_pos is not None:
            prev = _end_of_previous(text, tok.start_pos)
            if prev.line < (tok.line or 0):
                # A semicolon missing at the end of a line: point where it belongs.
                return CompileError("expected ';'", filename, prev)
        if "'}'" in expected and tok in _TOP_LEVEL_STARTS:
            message = f"expected '}}' before {found}"
        elif expected and len(expected) <= 4:
            message = f"expected {_join_alternatives(expected)}, found {found}"
        else:
            message = f"unexpected {found}"
        return CompileError(message, filename, _loc(tok))
    if isinstance(e, UnexpectedEOF):
        return CompileError("unexpected end of input", filename, _end_of_text(text))
    return CompileError(f"syntax error: {e}", filename, None)
