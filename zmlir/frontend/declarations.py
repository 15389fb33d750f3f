"""A module text's declarations, parsed when a name is first looked up.

A worker of stream.py imports a few of a module's functions, but each needs
the signatures of the functions it calls and the variables it names, which
the module text declares (for the 80 MB bench module: 27,000 functions in
9.6 MB, 2 to 3 s to parse, longer than the worker's share of the functions on
16 cores). So a worker cuts the module text into its top-level items
(`chunks`), recognises the ones that plainly declare one name, and parses
those only when the importer looks that name up (`OnDemand`); every other
item (the header, `.file`, `.section`, anything with a comment or string
inside) is parsed up front.

The importer then sees exactly the declarations it would have seen in the
whole module text: it asks for every name it resolves, and each name's items
are parsed together, in module order. The module text is also parsed in
parts (`Declarations.group`, by the workers, for the output's variables),
and each part is checked to hold, in each item this scan named, exactly the
one declaration it saw there (`certified`); if not (the scan read the text
otherwise than lark), the module is imported whole.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TypeVar

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import ast
from zmlir.frontend.fastpath import NAME
from zmlir.frontend.parser import parse_ptx

# Top-level punctuation (of a module, for split.split; of a module text,
# for chunks), and what hides it: `.pragma` directives (lark's PRAGMA,
# ignored anywhere), comments, strings (an unterminated comment or string
# matches only its opening).
SCAN = re.compile(r'\.pragma\b[^;]*;|//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|[{};]|/\*|"')
# The directive whose braces at depth 0 are neither a function body's nor an
# initializer's (split() keeps it in the module text). Directive patterns
# start with `\.` and look behind it after: re then tries only the places
# where that character is, 16 times faster than a look-behind first.
SECTION = re.compile(r"\.(?<![\w$.]\.)section(?![\w$])")
_BLANKS_AND_COMMENTS = re.compile(r"(?:[ \t\f\r\n]+|//[^\n]*|/\*[\s\S]*?\*/)*")
_B = r"[ \t\f\r\n]"
_LINKAGE = rf"(?:\.(?:visible|extern|weak|common){_B}+)?"
# `[linkage] .entry|.func [(returns)] name`: the grammar's function header up
# to its name, with blanks only between tokens. The name is certain: it is
# the first token after the kind and the return list.
_FUNCTION = re.compile(rf"{_LINKAGE}\.(?:entry|func)(?![\w$]){_B}*(?:\([^()]*\){_B}*)?"
                       rf"({NAME})(?![\w$])")
# `[linkage] .space (.align n | .attribute(...) | .v4 | .type)* name`: the
# name is the first token that is not a directive, `.align`'s number or an
# attribute's list.
_VARIABLE = re.compile(rf"{_LINKAGE}\.(?:global|const|shared|local|param|tex)(?![\w$])"
                       rf"(?:{_B}*\.(?:align{_B}+\d+|attribute{_B}*\([^()]*\)|[a-z][a-z0-9_]*)"
                       rf"(?![\w$]))*{_B}+({NAME})(?![\w$])")
# Directives the parser checks across the module, and `.loc`, which ends at
# the end of its line, not at a `;` (see Declarations.group).
_LATE_HEADER = re.compile(r"\.(?<![\w$.]\.)(?:version|target|address_size|file)(?![\w$])")
_LOC = re.compile(r"\.(?<![\w$.]\.)loc(?![\w$])")
# What the name regexes don't see through: a lazily parsed item has none.
_HIDING = re.compile(r'["/]|\.(?:pragma|loc|section)\b')


@dataclass(frozen=True, slots=True)
class Chunk:
    """text[start:end], starting at line:col: one top-level item and the
    directives without `;` before it (`.version`, `.file`, ...)."""

    start: int
    end: int
    line: int
    col: int
    # The one name it declares, and where the declaration starts, when that
    # is certain (see _FUNCTION, _VARIABLE); None: parsed up front.
    name: str | None = None
    decl_loc: tuple[int, int] = (0, 0)
    # Whether it is (blanks and comments, and) the header of a function
    # definition, its body removed by split.split: the batches parse that.
    definition: bool = False

    def piece(self, text: str) -> tuple[str, int, int]:
        return text[self.start:self.end], self.line, self.col


def chunks(text: str, line: int = 1, headers: dict[int, tuple[int, int]] | None = None
           ) -> list[Chunk] | None:
    """The top-level items of a module text (function bodies removed: see
    split.split), each ending at a `;` or at the `}` of a `.section` (the
    other braces are initializers'); None if a comment or string doesn't end.
    The text starts at the start of line `line`. `headers`: where the
    definitions' headers end (-> where they start), to mark their chunks."""
    ends: list[int] = []
    depth = 0
    section = False  # whether the braces at depth 0 are a `.section`'s
    for m in SCAN.finditer(text):
        c = m.group()
        if c == "{":
            if depth == 0:
                section = SECTION.search(text, ends[-1] if ends else 0, m.start()) is not None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and section:
                ends.append(m.end())
        elif c == ";":
            if depth == 0:
                ends.append(m.end())
        elif c in ("/*", '"'):
            return None
    if depth != 0:
        return None
    if _BLANKS_AND_COMMENTS.match(text, ends[-1] if ends else 0).end() < len(text):
        ends.append(len(text))  # a last item without `;` (a directive): parsed up front
    out: list[Chunk] = []
    start, line_start = 0, 0
    for end in ends:
        found = _chunk(text, start, end, line, line_start, named=bool(out))
        if headers is not None and headers.get(end) == found.decl_loc:
            found = replace(found, definition=True)
        out.append(found)
        n = text.count("\n", start, end)
        if n:
            line += n
            line_start = text.rindex("\n", start, end) + 1
        start = end
    return out


def _chunk(text: str, start: int, end: int, line: int, line_start: int, named: bool) -> Chunk:
    """The chunk text[start:end], at `line`, which starts at `line_start`;
    its name looked for if `named` (the first holds the header)."""
    decl = _BLANKS_AND_COMMENTS.match(text, start, end).end()
    n = text.count("\n", start, decl)
    decl_start = text.rindex("\n", start, decl) + 1 if n else line_start
    name = declared_name(text, decl, end) if named else None
    return Chunk(start, end, line, start - line_start + 1, name, (line + n, decl - decl_start + 1))


def declared_name(text: str, start: int, end: int) -> str | None:
    """The one name the item text[start:end] (from its first directive)
    plainly declares, or None (see _FUNCTION, _VARIABLE)."""
    if _HIDING.search(text, start, end):
        return None
    m = _FUNCTION.match(text, start, end) or _VARIABLE.match(text, start, end)
    return None if m is None else m.group(1)


Row = tuple[int, int, int, int, str | None, tuple[int, int], bool]


def chunk_rows(found: list[Chunk]) -> list[Row]:
    """`found` as plain tuples, which pickle in a 10th of the time."""
    return [(c.start, c.end, c.line, c.col, c.name, c.decl_loc, c.definition) for c in found]


def joined_chunks(text: str, parts: list[tuple[int, list[Row]]]) -> list[Chunk] | None:
    """chunks(text) from the chunks of its parts, or None where that may not
    be it. A part is its offset in `text`, at the start of a line, and the
    chunk_rows of the text from there to the next part's (with their lines
    in `text`). Each part's first chunk is taken again from the end of the
    previous part's last `;`; what lies between must not be a `.section` or
    `.pragma` (either reads on past the offset)."""
    out: list[Chunk] = []
    for k, (offset, rows) in enumerate(parts):
        if not rows:
            return None
        shifted = [Chunk(start + offset, end + offset, line, col, name, decl, definition)
                   for start, end, line, col, name, decl, definition in rows]
        if k:
            # The previous part's text after its last `;`: a chunk of its own
            # unless only blanks and comments.
            tail_start = out[-1].start if out[-1].end == offset else out[-1].end
            if out[-1].end == offset:
                out.pop()
            tail = text[tail_start:offset]
            if ".section" in tail or ".pragma" in tail:
                return None
            first = shifted[0]
            merged = _chunk(text, tail_start, first.end, first.line - tail.count("\n"),
                            text.rfind("\n", 0, tail_start) + 1, named=bool(out))
            shifted[0] = replace(merged, definition=first.definition and
                                 merged.decl_loc == first.decl_loc)
        out += shifted
    return out


def header_line(module: ast.Module) -> str:
    """`.version`/`.target` of `module` as one line, for pieces of it to be
    parsed after (parse_pieces)."""
    return (f".version {module.version[0]}.{module.version[1]} .target "
            f"{', '.join(module.target)}\n")


def parse_pieces(prefix: str, work: list[tuple[str, int, int]], filename: str
                 ) -> tuple[ast.Module, int]:
    """Pieces of a file (text, line, column) parsed as one module after
    `prefix` (whole lines), each at its own line and column less an offset;
    returns the module and that offset, by which a parse error's line is
    corrected."""
    prefix_lines = prefix.count("\n")
    offset = work[0][1] - 1 - prefix_lines
    parts = [prefix]
    line = 1 + prefix_lines  # where the next part starts, and the column there
    col = 1
    for text, at_line, at_col in work:
        if at_line - offset > line:
            parts.append("\n" * (at_line - offset - line))
            line, col = at_line - offset, 1
        parts.append(" " * (at_col - col))
        parts.append(text)
        n = text.count("\n")
        line += n
        col = len(text) - text.rindex("\n") if n else at_col + len(text)
    try:
        return parse_ptx("".join(parts), filename), offset
    except CompileError as e:
        if e.loc is not None and offset:
            raise CompileError(e.message, e.filename,
                               SourceLoc(e.loc.line + offset, e.loc.col)) from None
        raise


class Unreadable(Exception):
    """A chunk didn't parse to the declaration the scan saw."""


V = TypeVar("V")


class OnDemand(dict[str, V]):
    """A name table that asks `resolve` for a name it doesn't hold yet (in
    the three ways the importer looks names up)."""

    def __init__(self, resolve: Callable[[str], None]) -> None:
        super().__init__()
        self._resolve = resolve

    def __contains__(self, name: object) -> bool:
        if dict.__contains__(self, name):
            return True
        self._resolve(name)  # type: ignore[arg-type]
        return dict.__contains__(self, name)

    def get(self, name: str, default: V | None = None) -> V | None:  # type: ignore[override]
        if not dict.__contains__(self, name):
            self._resolve(name)
        return dict.get(self, name, default)

    def __missing__(self, name: str) -> V:
        self._resolve(name)
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise KeyError(name)


class Declarations:
    """The declarations of a module text, for one worker's importer: those
    that chunks() left unnamed parsed now, the others when looked up."""

    def __init__(self, text: str, found: list[Chunk], filename: str) -> None:
        self.text = text
        self.chunks = found
        self.filename = filename
        self.variables: OnDemand[ast.VarDecl] = OnDemand(self.resolve)
        self.functions: OnDemand[ast.Function] = OnDemand(self.resolve)
        self.names: set[str] = set()  # module-scope names resolved so far
        self.variable_names: set[str] = set()  # of variables (not body ones)
        self.lazy: dict[str, list[int]] = {}  # name -> its chunks, in order
        for i, c in enumerate(found):
            if c.name is not None:
                self.lazy.setdefault(c.name, []).append(i)
        upfront = [0, *(i for i, c in enumerate(found) if c.name is None and i)]
        self.starts = [c.start for c in found]
        self.groupable = _LOC.search(text) is None  # see group()
        module, _, decls = self._parse(upfront, prefix="")
        # A name also declared up front is parsed with all its chunks then, in order.
        more = [i for n in {d.name for d in decls} if n in self.lazy for i in self.lazy.pop(n)]
        if more:
            module, _, decls = self._parse(sorted(upfront + more), prefix="")
        self.module = module  # the header, and what was parsed up front
        self.prefix = header_line(module)
        self._register(decls)

    def __contains__(self, name: object) -> bool:
        """Whether the module text declares `name` (a variable or function)."""
        self.resolve(name)  # type: ignore[arg-type]
        return name in self.names

    def is_variable(self, name: str) -> bool:
        """Whether the module text declares a variable `name`."""
        self.resolve(name)
        return name in self.variable_names

    def resolve(self, name: str) -> None:
        """Parses the chunks declaring `name`, if not done yet."""
        ids = self.lazy.pop(name, None)
        if ids is None:
            return
        decls = self._parse(ids, self.prefix)[2]
        if len(decls) != len(ids) or any(d.name != name for d in decls):
            raise Unreadable(name)
        self._register(decls)

    def _register(self, decls: Iterable[ast.VarDecl | ast.Function]) -> None:
        # As ModuleImporter: the first declaration of a function wins (the
        # module text has no definitions), the last of a variable.
        for d in decls:
            self.names.add(d.name)
            if isinstance(d, ast.Function):
                if not dict.__contains__(self.functions, d.name):
                    dict.__setitem__(self.functions, d.name, d)
            else:
                self.variable_names.add(d.name)
                dict.__setitem__(self.variables, d.name, d)

    def _parse(self, ids: Iterable[int], prefix: str
               ) -> tuple[ast.Module, int, list[ast.VarDecl | ast.Function]]:
        """The chunks `ids` parsed after `prefix`: the module, the offset of
        its lines, and its declarations in source order, at their lines in
        the file."""
        try:
            module, offset = parse_pieces(prefix, [self.chunks[i].piece(self.text) for i in ids],
                                          self.filename)
        except CompileError:
            raise Unreadable() from None
        decls: list[ast.VarDecl | ast.Function] = [*module.variables, *module.functions]
        decls.sort(key=lambda d: (d.loc.line, d.loc.col))
        return module, offset, [moved(d, offset) for d in decls] if offset else decls

    def group(self, k: int, groups: int
              ) -> tuple[ast.Module, int, list[ast.VarDecl | ast.Function]] | None:
        """The chunks of the k-th of `groups` equal parts of the module text
        parsed (as _parse), for the main process's part of the output, or
        None if there are none; Unreadable where that might not be what
        lark makes of the module text whole. Definitions' headers that the
        scan named are left out (the batches parse the definitions).

        It is that, since each part starts where an item does (certified()
        checks the scan's items against these parses), except when an item
        reaches past a `;`: a `.loc` (to the end of its line; nvcc puts them
        in function bodies only). And the parser checks the header
        directives across the module: parts after the first have none.
        """
        n = len(self.chunks)
        lo = 0 if k == 0 else bisect_left(self.starts, k * len(self.text) // groups)
        hi = n if k == groups - 1 else bisect_left(self.starts,
                                                   (k + 1) * len(self.text) // groups)
        if lo >= hi:
            return None
        start, end = self.chunks[lo].start, self.chunks[hi - 1].end
        if ((groups > 1 and not self.groupable)
                or (k and _LATE_HEADER.search(self.text, start, end))):
            raise Unreadable()
        # A definition's header gives no output, and the batches parse it.
        ids = [i for i in range(lo, hi) if not (self.chunks[i].definition and
                                                self.chunks[i].name is not None)]
        if not ids:
            return None
        module, offset, decls = self._parse(ids, "" if ids[0] == 0 else self.prefix)
        if not certified(decls, [self.chunks[i] for i in ids]):
            raise Unreadable()
        return module, offset, decls


D = TypeVar("D", ast.VarDecl, ast.Function)


def moved(decl: D, lines: int) -> D:
    """`decl` with its locations `lines` further down."""
    def at(loc: SourceLoc) -> SourceLoc:
        return SourceLoc(loc.line + lines, loc.col)

    if isinstance(decl, ast.VarDecl):
        return replace(decl, loc=at(decl.loc))
    return replace(decl, loc=at(decl.loc),
                   params=tuple(replace(p, loc=at(p.loc)) for p in decl.params),
                   returns=tuple(replace(p, loc=at(p.loc)) for p in decl.returns))


def certified(decls: Iterable[ast.VarDecl | ast.Function], found: list[Chunk]) -> bool:
    """Whether `decls` (the chunks `found` parsed, at their lines in the
    file) are, in each chunk that chunks() named, exactly the declaration it
    named, where it saw it."""
    starts = [(c.line, c.col) for c in found]
    seen = 0
    for d in decls:
        at = (d.loc.line, d.loc.col)
        i = bisect_right(starts, at) - 1
        if i < 0:
            return False
        c = found[i]
        if c.name is not None:
            if at != c.decl_loc or d.name != c.name:
                return False
            seen += 1
    return seen == sum(c.name is not None for c in found)
