"""The fast path of the PTX parser: runs of plain statements without lark.

Most of a PTX file is instruction lines (`add.s32 %r3, %r1, %r2;`) and
labels. Feeding each of their tokens through lark's lexer and LALR parser
costs tens of microseconds per line. FastLexer wraps lark's contextual
lexer: wherever the parser is at the start of a statement, it first scans as
many plain statements as it can with a few regular expressions and hands the
parser one FAST_STMTS token carrying their AST, then lets lark's lexer
continue. Everything else (declarations, blocks, directives, unusual
spellings, errors) goes through lark as before.

The fast path is a strict subset of the grammar: it accepts a statement only
when it is sure lark would produce the same AST, and otherwise stops before
that statement, so lark parses it (and reports any error at exactly the same
place). test_parser.py checks both paths give equal ASTs on the corpus.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedToken
from lark.parsers.lalr_analysis import Shift

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import ast

# Token shapes, identical to the terminals in grammar/ptx.lark.
_REG = r"%[a-zA-Z0-9_$]+(?:\.[xyzwrgba](?![a-zA-Z0-9_$])|\.[bh][0-7]{1,4}(?![a-zA-Z0-9_$]))?"
NAME = r"[a-zA-Z][a-zA-Z0-9_$]*|[_$][a-zA-Z0-9_$]+"  # lark's NAME, as a regex
_NUMBER = (
    r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|0[xX][0-9a-fA-F]+U?|0[bB][01]+U?"
    r"|(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+U?"
)

_TYPE = (  # the TYPE terminal
    r"\.(?:[su](?:8|16|32|64)|b(?:8|16|32|64|128)|f(?:16|32|64)|f16x2|bf16(?:x2)?|tf32|pred"
    r"|e4m3(?:x2)?|e5m2(?:x2)?|e2m1(?:x2)?|e2m3(?:x2)?|e3m2(?:x2)?|ue8m0(?:x2)?"
    r"|texref|samplerref|surfref)(?![a-zA-Z0-9_$])"
)
_INT = r"(?:0|[1-9][0-9]{0,17})"  # decimal only: a leading 0 means octal to lark

# Blanks, `//` and `/* */` comments (lark's ignored WS, BLOCK_COMMENT); always matches.
_SKIP = re.compile(r"(?:[ \t\f\r\n]+|//[^\n]*|/\*[\s\S]*?\*/)*")
_LOC = re.compile(r"\.loc\b[^\n]*")
_PRAGMA = re.compile(r"\.pragma\b[^;]*;")
_NOUNROLL = re.compile(r'\.pragma[ \t]+"nounroll"[ \t]*;')  # the grammar's NOUNROLL
# `.reg .v4 .b32 %r<4>, %x;`
_REG_NAMES = rf"(?:{_REG}|{NAME})(?:<{_INT}>)?"
_REG_DECL = re.compile(
    rf"\.reg[ \t]*(?:(\.v\d+)(?![a-zA-Z0-9_$])[ \t]*)?({_TYPE})[ \t]*"
    rf"({_REG_NAMES}(?:[ \t]*,[ \t]*{_REG_NAMES})*)[ \t]*;"
)
_REG_NAME = re.compile(rf"({_REG}|{NAME})(?:<({_INT})>)?")
# `.param .align 8 .b8 param0[16];` and the like, without initializer.
_VAR_DECL = re.compile(
    rf"\.(global|const|shared|local|param)[ \t]+(?:\.align[ \t]+({_INT})[ \t]+)?"
    rf"(?:(\.v\d+)(?![a-zA-Z0-9_$])[ \t]*)?({_TYPE})[ \t]*({_REG}|{NAME})"
    rf"((?:\[{_INT}?\])*)[ \t]*;"
)
_DIM = re.compile(rf"\[({_INT}?)\]")
# A function's parameter or return list entry: `.param .align 8 .b8 name[16]`,
# `.reg .b32 %r` (no vectors, no `.ptr` attributes).
_PARAM = re.compile(
    rf"\.(param|reg)[ \t]+(?:\.align[ \t]+({_INT})[ \t]+)?({_TYPE})[ \t]+({_REG}|{NAME})"
    rf"(?:\[({_INT})\])?"
)
_BLANK = re.compile(r"[ \t\f\r\n]*")
# A function header up to its parameters: `.visible .entry name`, with
# `(.param ...)` return lists scanned apart.
_FUNC_KIND = re.compile(r"(?:\.(visible|extern|weak|common)[ \t\f\r\n]+)?\.(entry|func)"
                        r"(?![a-zA-Z0-9_$])[ \t\f\r\n]*")
# A module-scope variable without attributes or vectors, up to its
# initializer (a decimal integer, or a `{` left to scan_int_list).
_MODULE_VAR = re.compile(
    rf"(?:\.(extern|visible|weak|common)[ \t\f\r\n]+)?\.(global|const|shared)[ \t\f\r\n]+"
    rf"(?:\.align[ \t\f\r\n]+({_INT})[ \t\f\r\n]+)?({_TYPE})[ \t\f\r\n]*({NAME})"
    rf"((?:\[{_INT}?\])*)[ \t\f\r\n]*(?:(=)[ \t\f\r\n]*(?:({_INT})(?![a-zA-Z0-9_$.])"
    rf"[ \t\f\r\n]*)?)?"
)
# lark's _SEMI: the `;` and the blanks after it.
_SEMI = re.compile(r";[ \t\r\n]*")
_FUNC_NAME = re.compile(rf"({NAME})(?![a-zA-Z0-9_$])[ \t\f\r\n]*")
# An initializer of plain decimal integers: `{0, 0, 128, 63}`.
_INT_LIST = re.compile(rf"\{{[ \t\f\r\n]*{_INT}(?:[ \t\f\r\n]*,[ \t\f\r\n]*{_INT})*"
                       rf"[ \t\f\r\n]*\}}")
_DIGITS = re.compile(r"\d+")
# Lark would take deeper blocks too, but recursion here is Python recursion.
_MAX_DEPTH = 32
# How deep blocks and braces may nest (`{ { ... } }`, initializer lists):
# deeper is `file:line:col: error: unsupported nesting ...` at the brace that
# goes past it. ptxas takes up to 1663 nested blocks, then stops ("Parsing
# error near '{': memory exhausted"); real PTX nests a handful deep. The
# limit keeps the parser linear (lark's stack, which _accepts_fast copies
# for each token, stays short: 200k nested braces took 132 s) and the
# transformer's and importer's recursion over blocks far from Python's
# recursion limit.
MAX_NESTING = 512
# As the parser's limit (parser.py): `%r<N>` with a huge N is lark's to reject.
MAX_REG_COUNT = 1 << 20
# `name:` not followed by `:` (lark's LABEL_DEF), then what follows on the line.
_LABEL = re.compile(r"([a-zA-Z_$][a-zA-Z0-9_$]*)[ \t]*:(?!:)([ \t]*\.)?")
# [guard] opcode [operands] ; -- operands are checked by _operands below.
_INSTRUCTION = re.compile(
    r"(?:@[ \t]*(!?)[ \t]*(%?[a-zA-Z_$][a-zA-Z0-9_$]*)[ \t]+)?"
    r"([a-zA-Z][a-zA-Z0-9_]*(?:\.[a-zA-Z0-9_]+(?:::[a-zA-Z0-9_]+)*)*)"
    r"(?:[ \t]+([^;]*))?;"
)
_BLANKS = " \t\f\r\n"

# One operand without brackets, braces or parentheses.
_SIMPLE = re.compile(
    rf"({_REG})|(-?)({_NUMBER})|({NAME})|(_)"
    rf"|!({_REG}|{NAME})"
    rf"|({_REG}|{NAME})[ \t\f\r\n]*\|[ \t\f\r\n]*({_REG}|{NAME})"
)
# An address: `[base]`, `[base+4]`, `[base+-4]`, `[base-4]` (blanks anywhere).
_B = r"[ \t\f\r\n]*"
_ADDRESS = re.compile(
    rf"\[{_B}(?:({_REG})|({_NUMBER})|({NAME})){_B}(?:([+-]){_B}(-?){_B}({_NUMBER}){_B})?\]"
)
# `[tex, {x, y}]`, `[tex, sampler, {x}]`: texture, surface and tensor operands.
_TEX_ADDRESS = re.compile(
    rf"\[{_B}({_REG}|{NAME}){_B},{_B}(?:({_REG}|{NAME}){_B},{_B})?\{{([^{{}}\[\]()]*)\}}{_B}\]"
)
# What may be an element of `{...}` or `(...)`: no `!x`, no pairs.
_ELEMENT_TYPES = (ast.Reg, ast.Sym, ast.Sink, ast.IntImm, ast.FloatImm)


class _Bail(Exception):
    """The fast path can't take this statement; lark will."""


def _dims(text: str) -> tuple[int | None, ...]:
    return tuple(int(d) if d else None for d in _DIM.findall(text))


# Entries the spelling caches may hold before they are emptied (bounded memory).
_CACHE_LIMIT = 1 << 17


class _Scanner:
    """Scans runs of statements for one parse.

    Repeated spellings of operands and opcodes are looked up in caches that
    outlive the parse (FastLexer keeps them): the AST nodes are immutable
    and depend on the spelling alone, and a big module parsed one function
    at a time (stream.py) repeats most register names in every function.
    """

    def __init__(self, number: Callable[[str, bool], ast.IntImm | ast.FloatImm],
                 operands: dict[str, ast.Operand] | None = None,
                 opcodes: dict[str, tuple[str, tuple[str, ...]]] | None = None,
                 operand_lists: dict[str, tuple[ast.Operand, ...]] | None = None) -> None:
        self._number = number
        self._operands: dict[str, ast.Operand] = {} if operands is None else operands
        self._opcodes: dict[str, tuple[str, tuple[str, ...]]] = (
            {} if opcodes is None else opcodes)
        # Whole operand lists by their text (`%r3, %r1, %r2`).
        self._operand_lists: dict[str, tuple[ast.Operand, ...]] = (
            {} if operand_lists is None else operand_lists)
        self.src: tuple[int, int, int] | None = None
        # Braces lark has opened around the scan (FastLexer.lex counts them).
        self.depth_base = 0

    # --- operands ----------------------------------------------------------------

    def _simple(self, text: str) -> ast.Operand:
        o = self._operands.get(text)
        if o is not None:
            return o
        m = _SIMPLE.fullmatch(text)
        if m is None:
            raise _Bail
        reg, neg, num, name, sink, not_, first, second = m.groups()
        if reg is not None:
            o = ast.Reg(reg)
        elif num is not None:
            try:
                o = self._number(num, neg == "-")
            except CompileError:
                raise _Bail from None  # lark reports it, at the number
        elif name is not None:
            o = ast.Sym(name)
        elif sink is not None:
            o = ast.Sink()
        elif not_ is not None:
            o = ast.Not(self._simple(not_))
        else:
            o = ast.Pair(self._simple(first), self._simple(second))
        self._operands[text] = o
        return o

    def operands(self, text: str) -> tuple[ast.Operand, ...]:
        found = self._operand_lists.get(text)
        if found is not None:
            return found
        parts = text.split(",")
        if "{" in text or "(" in text or "[" in text:
            parts = _rejoin(parts)
        cache = self._operands
        out = []
        for part in parts:
            part = part.strip(_BLANKS)
            o = cache.get(part)
            if o is None:
                o = self._compound(part)
            out.append(o)
        found = self._operand_lists[text] = tuple(out)
        return found

    def _compound(self, text: str) -> ast.Operand:
        """One operand, `[...]`, `{...}` and `(...)` included; cached."""
        c = text[:1]
        if c == "[":
            o: ast.Operand = self._address(text)
        elif c == "{" or c == "(":
            o = self._vector(text)
        else:
            return self._simple(text)
        self._operands[text] = o
        return o

    def _address(self, text: str) -> ast.Addr:
        m = _ADDRESS.fullmatch(text)
        if m is None:
            t = _TEX_ADDRESS.fullmatch(text)
            if t is None:
                raise _Bail  # an error: lark reports it
            base, sampler, coords = t.groups()
            return ast.Addr(
                self._simple(base),  # type: ignore[arg-type]
                0,
                self._elements(coords),
                self._simple(sampler) if sampler is not None else None,  # type: ignore[arg-type]
            )
        reg, num, name, op, neg, offset = m.groups()
        base = self._simple(reg or num or name)
        if num is not None and not isinstance(base, ast.IntImm):
            raise _Bail
        if op is None:
            return ast.Addr(base)  # type: ignore[arg-type]
        off = self._simple(offset)
        if not isinstance(off, ast.IntImm):
            raise _Bail  # lark reports a non-integer offset
        value = -off.value if neg else off.value
        return ast.Addr(base, -value if op == "-" else value)  # type: ignore[arg-type]

    def _vector(self, text: str) -> ast.Vec:
        close = "}" if text[0] == "{" else ")"
        if text[-1] != close:
            raise _Bail
        return ast.Vec(self._elements(text[1:-1]))

    def _elements(self, inner: str) -> tuple[ast.Operand, ...]:
        """The comma-separated elements inside `{...}` or `(...)`."""
        if not inner.strip(_BLANKS):
            return ()
        elems = []
        for part in inner.split(","):
            o = self._simple(part.strip(_BLANKS))
            if not isinstance(o, _ELEMENT_TYPES):
                raise _Bail
            elems.append(o)
        return tuple(elems)

    # --- statements --------------------------------------------------------------

    def _declaration(self, text: str, p: int, end: int,
                     loc: SourceLoc) -> tuple[ast.Statement, int] | None:
        """A `.reg` or variable declaration at `p`, with the position after it."""
        if text.startswith(".reg", p):
            m = _REG_DECL.match(text, p, end)
            if m is None:
                return None
            vector, ty, names_text = m.groups()
            names: list[str] = []
            for name, n in _REG_NAME.findall(names_text):
                if not n:
                    names.append(name)
                elif int(n) > MAX_REG_COUNT:
                    return None
                else:
                    names.extend(f"{name}{i}" for i in range(int(n)))
            ty = f"{vector[1:]}.{ty[1:]}" if vector else ty[1:]
            return ast.RegDecl(ty, tuple(names), loc), m.end()
        m = _VAR_DECL.match(text, p, end)
        if m is None:
            return None
        space, align, vector, ty, name, dims = m.groups()
        decl = ast.VarDecl(
            space=space,
            type=f"{vector[1:]}.{ty[1:]}" if vector else ty[1:],
            name=name,
            loc=loc,
            align=int(align) if align is not None else None,
            dims=_dims(dims) if dims else (),
        )
        return decl, m.end()

    def scan(self, text: str, pos: int, end: int, line: int, line_start: int, src: Any,
             depth: int = 0) -> tuple[list[ast.Statement], int, int, int]:
        """Statements from `pos` on, as many as the fast path takes.

        Returns them with the position after the last one taken and that
        position's line number and line start offset. Inside a block
        (depth > 0) it stops at the block's `}`.
        """
        out: list[ast.Statement] = []
        count = text.count
        while True:
            p = _SKIP.match(text, pos, end).end()
            n = count("\n", pos, p)
            if n:
                line += n
                line_start = text.rindex("\n", pos, p) + 1
            pos = p
            if p >= end:
                break
            c = text[p]
            if c == ".":
                decl = self._declaration(text, p, end, SourceLoc(line, p - line_start + 1))
                if decl is None:
                    m = _LOC.match(text, p, end)
                    if m is not None:
                        loc = src(m.group())
                        if loc is None:
                            break
                        self.src = loc
                    elif (m := _NOUNROLL.match(text, p, end)) is not None:
                        out.append(ast.NoUnroll(SourceLoc(line, p - line_start + 1)))
                    else:
                        m = _PRAGMA.match(text, p, end)
                        if m is None:
                            break
                    pos = m.end()
                    continue
                stmt, pos = decl
                out.append(stmt)
                continue
            if c == "{":
                if depth >= _MAX_DEPTH or self.depth_base + depth >= MAX_NESTING:
                    break  # lark takes it (and reports one too deep)
                saved = self.src
                inner, q, qline, qstart = self.scan(text, p + 1, end, line, line_start, src,
                                                    depth + 1)
                if q >= end or text[q] != "}":
                    self.src = saved
                    break
                out.append(ast.Block(tuple(inner), SourceLoc(line, p - line_start + 1)))
                pos, line, line_start = q + 1, qline, qstart
                continue
            if c != "@" and c != "$" and c != "_" and not c.isalpha():
                break
            # An instruction first: most statements are. A label never
            # matches _INSTRUCTION, but `name : ...` with blanks before the
            # colon would, and then fails in operands(): lark takes it.
            m = _INSTRUCTION.match(text, p, end)
            if m is None:
                lm = _LABEL.match(text, p, end)
                if lm is None or lm.group(2) is not None:  # `name: .branchtargets ...`
                    break
                out.append(ast.Label(lm.group(1), SourceLoc(line, p - line_start + 1)))
                pos = lm.end()
                continue
            negated, guard_reg, opcode, operand_text = m.groups()
            split = self._opcodes.get(opcode)
            if split is None:
                parts = opcode.split(".")
                split = self._opcodes[opcode] = (parts[0], tuple(parts[1:]))
            try:
                blank = operand_text is None or not operand_text.strip(_BLANKS)
                operands = () if blank else self.operands(operand_text)
            except _Bail:
                break
            out.append(
                ast.Instruction(
                    split[0],
                    split[1],
                    operands,
                    ast.Guard(guard_reg, negated == "!") if guard_reg is not None else None,
                    SourceLoc(line, p - line_start + 1),
                    self.src,
                )
            )
            end_ = m.end()
            n = count("\n", p, end_)
            if n:
                line += n
                line_start = text.rindex("\n", p, end_) + 1
            pos = end_
        return out, pos, line, line_start


_CLOSING = {"[": "]", "{": "}", "(": ")"}


def _rejoin(parts: list[str]) -> list[str]:
    """Comma-split pieces joined back where brackets span commas.

    An operand's text starts with its bracket, which closes at the operand's
    end (`{...}`, `(...)`, `[...]`, `[tex, {...}]`), so joining pieces up to
    the first piece with the closing bracket suffices; a stray bracket makes
    the operand invalid, and _compound then bails on it.
    """
    out: list[str] = []
    open_: str | None = None
    close = ""
    for part in parts:
        if open_ is not None:
            open_ += "," + part
            if close in part:
                out.append(open_)
                open_ = None
            continue
        first = part.lstrip(_BLANKS)[:1]
        close = _CLOSING.get(first, "")
        if close and close not in part:
            open_ = part
        else:
            out.append(part)
    if open_ is not None:
        raise _Bail
    return out


def _skip(text: str, pos: int, end: int, line: int,
          line_start: int) -> tuple[int, int, int]:
    """Past blanks and comments from `pos`: (position, line, line start)."""
    p = _SKIP.match(text, pos, end).end()  # type: ignore[union-attr]
    n = text.count("\n", pos, p)
    if n:
        line += n
        line_start = text.rindex("\n", pos, p) + 1
    return p, line, line_start


def scan_params(text: str, pos: int, end: int, line: int,
                line_start: int) -> tuple[tuple[ast.Param, ...], int] | None:
    """A parameter or return list `( .param .u64 a, ... )` at `pos` (its
    `(`), with the position after its `)`; None unless every entry is a
    plain one (_PARAM) and only blanks separate them."""
    if text[pos:pos + 1] != "(":
        return None
    params: list[ast.Param] = []
    p = _BLANK.match(text, pos + 1, end).end()  # type: ignore[union-attr]
    if text[p:p + 1] == ")":
        return (), p + 1
    while True:
        m = _PARAM.match(text, p, end)
        if m is None:
            return None
        n = text.count("\n", pos, p)
        if n:
            line += n
            line_start = text.rindex("\n", pos, p) + 1
        pos = p
        space, align, ty, name, dim = m.groups()
        params.append(ast.Param(space=space, type=ty[1:], name=name,
                                loc=SourceLoc(line, p - line_start + 1),
                                align=int(align) if align is not None else None,
                                dims=(int(dim),) if dim is not None else ()))
        p = _BLANK.match(text, m.end(), end).end()  # type: ignore[union-attr]
        c = text[p:p + 1]
        if c == ")":
            return tuple(params), p + 1
        if c != ",":
            return None
        p = _BLANK.match(text, p + 1, end).end()  # type: ignore[union-attr]


def scan_function_head(text: str, pos: int, end: int, line: int,
                       line_start: int) -> tuple[tuple[Any, ...], int] | None:
    """A function header `[linkage] .entry|.func [(rets)] name [(params)]`
    at `pos`, up to its body's `{` or its `;` (not taken): ((linkage, its
    loc, kind, its loc, rets, name, params), the position of the `{` or `;`);
    None for any other header (performance directives, comments, ...).
    Absent lists are None, as lark's placeholders."""
    m = _FUNC_KIND.match(text, pos, end)
    if m is None:
        return None

    def loc(at: int) -> SourceLoc:
        n = text.count("\n", pos, at)
        start = text.rindex("\n", pos, at) + 1 if n else line_start
        return SourceLoc(line + n, at - start + 1)

    def param_list(p: int) -> tuple[tuple[ast.Param, ...] | None, int] | None:
        """The `(...)` list at `p`, if any (None for none), and the position
        after it and its blanks; None if the list is not a plain one."""
        if not text.startswith("(", p):
            return None, p
        lp = loc(p)
        found = scan_params(text, p, end, lp.line, p - lp.col + 1)
        if found is None:
            return None
        params, after = found
        return params, _BLANK.match(text, after, end).end()  # type: ignore[union-attr]

    linkage = m.group(1)
    kind_at = m.start(2) - 1
    rets_at = param_list(m.end())
    if rets_at is None:
        return None
    rets, p = rets_at
    n = _FUNC_NAME.match(text, p, end)
    if n is None:
        return None
    name = n.group(1)
    params_at = param_list(n.end())
    if params_at is None:
        return None
    params, p = params_at
    if not text.startswith(("{", ";"), p):
        return None
    return (linkage, loc(pos) if linkage else None, m.group(2), loc(kind_at), rets, name,
            params), p


def scan_module_var(text: str, pos: int, end: int, line: int,
                    line_start: int) -> tuple[ast.VarDecl, int] | None:
    """A plain module-scope variable declaration at `pos`, `;` included: the
    VarDecl lark would make, and the position after it; None for any other."""
    m = _MODULE_VAR.match(text, pos, end)
    if m is None:
        return None
    linkage, space, align, ty, name, dims, equal, scalar = m.groups()
    p = m.end()
    init: object = None
    if equal is not None:
        if scalar is not None:
            init = int(scalar)
        else:
            found = scan_int_list(text, p, end)
            if found is None:
                return None
            init, p = found
    semi = _SEMI.match(text, p, end)
    if semi is None:
        return None
    decl = ast.VarDecl(space=space, type=ty[1:], name=name,
                       loc=SourceLoc(line, pos - line_start + 1),
                       align=int(align) if align is not None else None,
                       dims=_dims(dims) if dims else (), linkage=linkage, init=init)
    return decl, semi.end()


def scan_int_list(text: str, pos: int, end: int) -> tuple[tuple[int, ...], int] | None:
    """An initializer of plain decimal integers `{1, 2, 3}` at `pos`, with
    the position after it; None for any other."""
    m = _INT_LIST.match(text, pos, end)
    if m is None:
        return None
    return tuple(map(int, _DIGITS.findall(m.group()))), m.end()


class FastLexer:
    """Stands in for lark's ContextualLexer (see the module docstring)."""

    def __init__(self, inner: Any, parse_table: Any,
                 number: Callable[[str, bool], ast.IntImm | ast.FloatImm],
                 loc_value: Callable[[str], tuple[int, int, int] | None],
                 state: Any) -> None:
        self.inner = inner
        self.number = number
        self.loc_value = loc_value
        self.state = state  # the parser's per-parse state: `.src`
        self.table = parse_table.states
        # Parser states with an action on FAST_STMTS. Shifting it is certain
        # in `shift_states`; elsewhere it is a reduction that may lead to a
        # state that rejects it (LALR merges lookaheads: a variable
        # declaration may be followed by statements inside a function, not
        # at module level), so _accepts_fast replays the reductions.
        self.fast_states = frozenset(
            s for s, actions in self.table.items() if "FAST_STMTS" in actions
        )
        self.shift_states = frozenset(
            s for s in self.fast_states if self.table[s]["FAST_STMTS"][0] is Shift
        )
        # Where a parameter list (FAST_PARAMS) or an integer list initializer
        # (FAST_INIT) may come, scanned here too: lark's cost there is one
        # token per number or keyword, and a dozen reductions per number.
        self.param_states = frozenset(s for s, a in self.table.items() if "FAST_PARAMS" in a)
        self.init_states = frozenset(s for s, a in self.table.items() if "FAST_INIT" in a)
        self.head_states = frozenset(s for s, a in self.table.items()
                                     if "FAST_FUNC_HEAD" in a)
        self.var_states = frozenset(s for s, a in self.table.items() if "FAST_VAR_DECL" in a)
        self.enabled = True
        # The scanners' spelling caches, shared by all parses (see _Scanner).
        self._operands: dict[str, ast.Operand] = {}
        self._opcodes: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._operand_lists: dict[str, tuple[ast.Operand, ...]] = {}

    def _accepts_fast(self, stack: list[int], terminal: str = "FAST_STMTS") -> bool:
        stack = list(stack)
        table = self.table
        for _ in range(1000):  # bounded: a reduce chain is never this long
            action = table[stack[-1]].get(terminal)
            if action is None:
                return False
            kind, rule = action
            if kind is Shift:
                return True
            if rule.expansion:
                del stack[-len(rule.expansion):]
            goto = table[stack[-1]].get(rule.origin.name)
            if goto is None:
                return False
            stack.append(goto[1])
        return False

    def _list_token(self, text: str, end: int, ctr: Any, position: int,
                    stack: list[int]) -> Token | None:
        """A FAST_PARAMS, FAST_INIT, FAST_FUNC_HEAD or FAST_VAR_DECL token at
        the lexer's position, if the
        text there is one and the parser takes it; the position moved past it."""
        p, line, line_start = _skip(text, ctr.char_pos, end, ctr.line, ctr.line_start_pos)
        c = text[p:p + 1]
        found: tuple[Any, int] | None = None
        if c == "(" and position in self.param_states:
            kind = "FAST_PARAMS"
            found = scan_params(text, p, end, line, line_start)
        elif c == "{" and position in self.init_states:
            kind = "FAST_INIT"
            found = scan_int_list(text, p, end)
        elif c == "." and position in self.head_states:
            kind = "FAST_FUNC_HEAD"
            found = scan_function_head(text, p, end, line, line_start)
            if found is None and position in self.var_states:
                kind = "FAST_VAR_DECL"
                found = scan_module_var(text, p, end, line, line_start)
        if found is None or not self._accepts_fast(stack, kind):
            return None
        value, after = found
        tok = Token(kind, "", p, line, p - line_start + 1)
        tok.value = value  # type: ignore[assignment]
        n = text.count("\n", p, after)
        if n:
            line += n
            line_start = text.rindex("\n", p, after) + 1
        ctr.char_pos = after
        ctr.line = line
        ctr.line_start_pos = line_start
        ctr.column = after - line_start + 1
        return tok

    def lex(self, lexer_state: Any, parser_state: Any) -> Iterator[Token]:
        lexers = self.inner.lexers
        fast = self.fast_states if self.enabled else frozenset()
        for cache in (self._operands, self._opcodes, self._operand_lists):
            if len(cache) > _CACHE_LIMIT:
                cache.clear()
        scanner = _Scanner(self.number, self._operands, self._opcodes, self._operand_lists)
        state = self.state
        text_slice = lexer_state.text
        text, end = text_slice.text, text_slice.end
        ctr = lexer_state.line_ctr
        depth = 0  # braces lark lexed and has not closed
        try:
            while True:
                position = parser_state.position
                if position in fast and (position in self.shift_states
                                         or self._accepts_fast(parser_state.state_stack)):
                    scanner.src = state.src
                    stmts, pos, line, line_start = scanner.scan(
                        text, ctr.char_pos, end, ctr.line, ctr.line_start_pos, self.loc_value
                    )
                    if stmts:
                        state.src = scanner.src
                        first = stmts[0].loc
                        tok = Token("FAST_STMTS", "", ctr.char_pos, first.line, first.col)
                        tok.value = stmts  # type: ignore[assignment]
                        ctr.char_pos = pos
                        ctr.line = line
                        ctr.line_start_pos = line_start
                        ctr.column = pos - line_start + 1
                        lexer_state.last_token = tok
                        yield tok
                        continue
                elif self.enabled and (position in self.param_states
                                       or position in self.init_states
                                       or position in self.head_states):
                    tok = self._list_token(text, end, ctr, position, parser_state.state_stack)
                    if tok is not None:
                        lexer_state.last_token = tok
                        yield tok
                        continue
                tok = lexers[position].next_token(lexer_state, parser_state)
                kind = tok.type
                if kind == "LBRACE":
                    depth += 1
                    if depth > MAX_NESTING:
                        raise CompileError(
                            f"unsupported nesting: blocks or braces more than {MAX_NESTING} "
                            "deep", loc=SourceLoc(tok.line, tok.column))
                    scanner.depth_base = depth
                elif kind == "RBRACE":
                    depth -= 1
                    scanner.depth_base = depth
                yield tok
        except EOFError:
            pass
        except UnexpectedCharacters as e:
            # As lark's ContextualLexer.lex: try the root lexer for a better message.
            try:
                last_token = lexer_state.last_token
                token = self.inner.root_lexer.next_token(lexer_state, parser_state)
                raise UnexpectedToken(token, e.allowed, state=parser_state,
                                      token_history=[last_token],
                                      terminals_by_name=self.inner.root_lexer.terminals_by_name)
            except UnexpectedCharacters:
                raise e from None
