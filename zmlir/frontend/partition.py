"""A module's kernels in parts that compile apart (the driver compiles a big
module a part at a time, as its kernels are first used; and a module one
of whose kernels cannot be compiled without that kernel).

A part is a set of *roots*, kernels and module variables, and holds what
they reach: the functions they call or name, the variables they name, and
what those reach in turn (a name anywhere in a body counts: a function
pointer, a variable's address in an initializer). A module variable that
keeps state (`.global`, `.const`, `.tex`: what cuModuleGetGlobal hands
out, what kernels share) must be one object, so it is compiled in one
part only: the kernels that reach the same such variable are roots of one
part, with it (`Partition.parts`). `.shared`, `.local` and `.param`
variables are per block or thread: every part that needs one has it.

A part's PTX is the module's text less what its roots don't reach, each
item kept at its own line and column (the lines between are left empty),
so every diagnostic of a part's compile names the place in the module.

The index is a scan (split.py's of the definitions, declarations.py's of
the module text's items, and of each body's names), not a parse:
`partition` returns None for a module it cannot read with confidence
(then the module is compiled whole).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field

from zmlir.frontend.declarations import chunks, declared_name
from zmlir.frontend.split import Span, split

# What a module text's item may start with that is no declaration: blanks,
# comments and the directives without `;` (kept in every part).
_PREFIX = re.compile(r'(?:[ \t\f\r\n]+|//[^\n]*|/\*[\s\S]*?\*/|\.version[ \t]+\d+\.\d+'
                     r'|\.target[ \t]+\w+(?:[ \t]*,[ \t]*\w+)*|\.address_size[ \t]+\d+'
                     r'|\.file[ \t]+\d+[ \t]+"(?:[^"\\\n]|\\.)*"(?:[ \t]*,[ \t]*\d+)*)*')
# The kind of a declaration (its first directive after the linkage).
_KIND = re.compile(r"(?:\.(?:visible|extern|weak|common)[ \t\f\r\n]+)*"
                   r"\.(entry|func|global|const|shared|local|param|tex)(?![\w$])")
# A directive that declares something: an item holding one that
# declared_name cannot name is not one we can place.
_DECLARING = re.compile(r"\.(?:entry|func|global|const|shared|local|param|tex|extern|visible"
                        r"|weak|common)(?![\w$])")
_COMMENTS_STRINGS_SECTIONS = re.compile(
    r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|\.section\b[^{;]*\{[\s\S]*\}')
# A name as lark reads one (fastpath.NAME), not right after `%` or `.`.
_NAME_TOKEN = re.compile(r"(?<![\w$%.])(?:[a-zA-Z][a-zA-Z0-9_$]*|[_$][a-zA-Z0-9_$]+)")
# State spaces whose module variables are one object for all kernels.
_STATEFUL = frozenset({"global", "const", "tex"})


@dataclass(frozen=True, slots=True)
class Piece:
    """text[start:end] of the module (a definition, with its body) or of its
    module text (a declaration, a variable), at line:col of the module; the
    declaration or definition of `name`, or (None) kept in every part."""

    name: str | None
    in_module_text: bool
    start: int
    end: int
    line: int
    col: int


@dataclass
class Partition:
    """The index of one module (see the module docstring)."""

    text: str
    module_text: str
    pieces: list[Piece]  # in module order
    kinds: dict[str, str]  # name -> entry, func, global, const, shared, local, param, tex
    references: dict[str, frozenset[str]]  # name -> the names it names
    kernels: tuple[str, ...]  # the defined kernels, in module order
    # The definitions by their first line: (first line, last line, name).
    definitions: list[tuple[int, int, str]]
    _parts: dict[str, int] = field(default_factory=dict)  # root -> its part's index
    _roots: list[frozenset[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._group()

    # -- what reaches what ------------------------------------------------------

    def reached(self, roots: Iterable[str]) -> set[str]:
        """The names `roots` reach, themselves included."""
        seen: set[str] = set()
        work = [r for r in roots if r in self.kinds]
        while work:
            name = work.pop()
            if name in seen:
                continue
            seen.add(name)
            work += [n for n in self.references.get(name, ()) if n not in seen]
        return seen

    def _group(self) -> None:
        """The parts: kernels and stateful variables, joined where a kernel
        or variable reaches a stateful variable (union-find)."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        stateful = [n for n, k in self.kinds.items() if k in _STATEFUL]
        for root in [*self.kernels, *stateful]:
            find(root)
            for name in self.reached([root]):
                if self.kinds[name] in _STATEFUL:
                    parent[find(name)] = find(root)
        groups: dict[str, list[str]] = {}
        for root in [*self.kernels, *stateful]:
            groups.setdefault(find(root), []).append(root)
        for members in groups.values():
            for m in members:
                self._parts[m] = len(self._roots)
            self._roots.append(frozenset(members))

    def part_roots(self, name: str) -> frozenset[str] | None:
        """The roots of the part that holds kernel or stateful variable
        `name` (None: the module has no such kernel or variable)."""
        index = self._parts.get(name)
        return None if index is None else self._roots[index]

    def is_variable(self, name: str) -> bool:
        return self.kinds.get(name) not in (None, "entry", "func")

    # -- a part's text -------------------------------------------------------------

    def part_text(self, roots: Iterable[str]) -> str:
        """The PTX of the part of `roots`: the items they reach, and every
        item that declares nothing (the header, `.file`), each at its own
        line and column."""
        keep = self.reached(roots)
        out: list[str] = []
        line, col = 1, 1
        for p in self.pieces:
            if p.name is not None and p.name not in keep:
                continue
            if p.line > line:
                out.append("\n" * (p.line - line))
                line, col = p.line, 1
            if p.col > col:
                out.append(" " * (p.col - col))
                col = p.col
            text = (self.module_text if p.in_module_text else self.text)[p.start:p.end]
            out.append(text)
            n = text.count("\n")
            line += n
            col = len(text) - text.rindex("\n") if n else col + len(text)
        return "".join(out) + "\n"

    def to_json(self) -> str:
        """The index, less the module's text (from_json takes it again)."""
        return json.dumps({
            "module_text": self.module_text,
            "pieces": [[p.name, p.in_module_text, p.start, p.end, p.line, p.col]
                       for p in self.pieces],
            "kinds": self.kinds,
            "references": {name: sorted(names) for name, names in self.references.items()},
            "kernels": self.kernels, "definitions": self.definitions})

    @classmethod
    def from_json(cls, text: str, data: str) -> Partition:
        """What to_json wrote, for module `text`; ValueError (or KeyError,
        TypeError) if it is not that."""
        d = json.loads(data)
        pieces = [Piece(name, bool(in_module_text), int(start), int(end), int(line), int(col))
                  for name, in_module_text, start, end, line, col in d["pieces"]]
        if any(p.end > len(d["module_text"] if p.in_module_text else text) for p in pieces):
            raise ValueError("an index of another module")
        return cls(text, d["module_text"], pieces, dict(d["kinds"]),
                   {name: frozenset(names) for name, names in d["references"].items()},
                   tuple(d["kernels"]), [(int(a), int(b), str(n)) for a, b, n in d["definitions"]])

    def check(self, filename: str) -> None:
        """Parses what lies outside the function bodies (the header, the
        declarations and variables): a syntax error there is a CompileError
        now; a body's is one when its part is compiled."""
        from zmlir.frontend.parser import parse_ptx

        parse_ptx(self.module_text, filename)

    def function_at(self, line: int) -> str | None:
        """The function whose definition holds `line`, if one does."""
        k = bisect_right(self.definitions, (line, float("inf"), "")) - 1
        if k >= 0 and self.definitions[k][0] <= line <= self.definitions[k][1]:
            return self.definitions[k][2]
        return None

    def kernels_reaching(self, name: str, among: Iterable[str]) -> set[str]:
        """The kernels of `among` that reach `name`."""
        return {k for k in among if self.kinds.get(k) == "entry" and name in self.reached([k])}


def partition(text: str) -> Partition | None:
    """The index of module `text`, or None where the scan cannot place
    every item (an unbalanced text, an item declaring what it cannot name):
    compile it whole."""
    found = split(text)
    if found is None:
        return None
    module_text, spans = found
    items = chunks(module_text)
    if items is None:
        return None
    by_place: dict[tuple[int, int], Span] = {(s.line, s.col): s for s in spans}
    pieces: list[Piece] = []
    kinds: dict[str, str] = {}
    bodies: dict[str, list[str]] = {}  # name -> the texts its references are in
    kernels: list[str] = []
    definitions: list[tuple[int, int, str]] = []
    for chunk in items:
        decl = _PREFIX.match(module_text, chunk.start, chunk.end).end()
        if _COMMENTS_STRINGS_SECTIONS.sub("", module_text[chunk.start:decl]).strip():
            pieces.append(Piece(None, True, chunk.start, decl, chunk.line, chunk.col))
        if decl >= chunk.end:
            continue
        newlines = module_text.count("\n", chunk.start, decl)
        line = chunk.line + newlines
        col = decl - (module_text.rfind("\n", 0, decl) + 1) + 1 if newlines \
            else chunk.col + decl - chunk.start
        name = declared_name(module_text, decl, chunk.end)
        kind = _KIND.match(module_text, decl, chunk.end)
        if name is None or kind is None:
            rest = _COMMENTS_STRINGS_SECTIONS.sub(" ", module_text[decl:chunk.end])
            if _DECLARING.search(rest):
                return None
            pieces.append(Piece(None, True, decl, chunk.end, line, col))  # `.pragma`...
            continue
        kinds.setdefault(name, kind[1])
        span = by_place.pop((line, col), None)
        if span is None:
            pieces.append(Piece(name, True, decl, chunk.end, line, col))
            bodies.setdefault(name, []).append(module_text[decl:chunk.end])
            continue
        # A definition: its body is in the module's text.
        pieces.append(Piece(name, False, span.start, span.end, span.line, span.col))
        bodies.setdefault(name, []).append(text[span.body:span.end])
        definitions.append((span.line, span.line + text.count("\n", span.start, span.end),
                            name))
        if kind[1] == "entry":
            kernels.append(name)
    if by_place:
        return None  # a definition the module text's scan did not name
    references: dict[str, frozenset[str]] = {}
    for name, texts in bodies.items():
        named: set[str] = set()
        for body in texts:
            named.update(_NAME_TOKEN.findall(body))
        named.discard(name)
        references[name] = frozenset(n for n in named if n in kinds)
    definitions.sort()
    return Partition(text, module_text, pieces, kinds, references, tuple(kernels), definitions)
