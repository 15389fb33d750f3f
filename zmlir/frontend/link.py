"""Links several PTX translation units into one module, as nvlink links
relocatable device code (`nvcc -rdc`, cuLinkAddData with several inputs).

Each unit's top-level items are found with a scan of braces, comments and
strings (not a parse), and named by their declaration's head. Then, as a
linker resolves symbols:
  - an `.extern` declaration stays; the importer takes a declaration and a
    definition of one name as that definition (scoping.module_variables);
  - a `.visible` definition (or a `.visible .entry`) is the symbol's; two
    are an error, in nvlink's words (its capitals too);
  - `.weak` definitions (nvcc's template and inline functions, one per unit
    using them) yield to a `.visible` one, else the first is kept; the
    others become `.extern` declarations. `.common` variables too, but only
    when they are declared alike (a larger one elsewhere would be a wrong
    answer: that is an error);
  - names without linkage are the unit's own: where another unit took the
    name first, the unit's references are renamed (`name_u<k>`);
  - an `.extern` name a unit uses that no unit defines is an undefined
    reference, as nvlink says, unless the driver provides it (vprintf,
    malloc, ...) or it is `.shared` (the dynamic shared memory a launch
    sizes, as numba's `cuda.shared.array(0, ...)`).
`.file` indices are renumbered per unit (and their `.loc`s), the header is
the newest `.version` and `.target` of the units, and each unit keeps its
lines, so a diagnostic's line in the linked text names one unit's line
(`LinkedPTX.origin`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from zmlir.diagnostics import CompileError, SourceLoc

_B = r"[ \t\f\r\n]"
# lark's NAME (fastpath.NAME), kept here: the linker runs without the parser.
NAME = r"[a-zA-Z][a-zA-Z0-9_$]*|[_$][a-zA-Z0-9_$]+"
_TOKENS = re.compile(r'\.pragma\b[^;]*;|//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|[{};]|/\*|"')
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"')
_BLANKS_AND_COMMENTS = re.compile(r"(?:[ \t\f\r\n]+|//[^\n]*|/\*[\s\S]*?\*/)*")
# Directives that end at the end of their line, not at a `;`.
_HEADER = re.compile(r"(?m)^[ \t]*\.(version|target|address_size|file)(?![\w$])([^\n]*)")
_LOC = re.compile(r"(?m)^([ \t]*\.loc[ \t]+)(\d+)")
_FILE_INDEX = re.compile(r"[ \t]*(\d+)")
_LINKAGE = re.compile(rf"\.(visible|extern|weak|common){_B}+")
_FUNCTION = re.compile(rf"\.(entry|func)(?![\w$]){_B}*(?:\([^()]*\){_B}*)?({NAME})(?![\w$])")
_VARIABLE = re.compile(rf"\.(global|const|shared|local|tex)(?![\w$])"
                       rf"(?:{_B}*\.(?:align{_B}+\d+|attribute{_B}*\([^()]*\)|[a-z][a-z0-9_]*)"
                       rf"(?![\w$]))*{_B}+({NAME})(?![\w$])")
_SM = re.compile(r"sm_(\d+)")
_MAXNREG = re.compile(r"\.maxnreg(?![\w$])[ \t]+(\d+)")
_INITIALIZER_OR_END = re.compile(r"[=;]")
# What the driver's JIT provides to every module (NVIDIA's system calls).
_PROVIDED = frozenset({"vprintf", "malloc", "free", "__assertfail"})


@dataclass
class _Item:
    """unit.text[start:end]: one top-level declaration or definition."""

    start: int
    end: int
    head: int  # where its linkage or kind starts
    name: str
    kind: str  # entry, func, or the variable's state space
    linkage: str | None
    body: int  # the function body's `{`, or the initializer's `=`; -1: none

    @property
    def defines(self) -> bool:
        if self.kind in ("entry", "func"):
            return self.body >= 0
        return self.linkage != "extern"


@dataclass
class _Unit:
    text: str
    name: str
    version: tuple[int, int] = (0, 0)
    target: list[str] = field(default_factory=list)
    address_size: int = 64
    items: list[_Item] = field(default_factory=list)
    files: dict[int, int] = field(default_factory=dict)  # .file index -> linked index
    edits: list[tuple[int, int, str]] = field(default_factory=list)
    renames: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LinkedPTX:
    text: str
    # (first line in the linked text, unit name), in order.
    units: tuple[tuple[int, str], ...]

    def origin(self, line: int) -> tuple[str, int]:
        """The unit and its line that the linked text's `line` comes from."""
        first, name = self.units[0]
        for start, unit in self.units:
            if start <= line:
                first, name = start, unit
        return name, line - first + 1


class LinkError(CompileError):
    pass


def link_ptx(units: Sequence[tuple[str, str]]) -> LinkedPTX:
    """One module of the PTX translation units `units` ((text, name) each)."""
    parsed = [_scan(text, name) for text, name in units]
    if len({u.address_size for u in parsed}) > 1:
        raise LinkError("units of different .address_size cannot be linked", parsed[-1].name)
    _resolve(parsed)
    _check_references(parsed)
    _renumber_files(parsed)
    newest = max(parsed, key=lambda u: u.version)
    target = max(parsed, key=lambda u: _sm(u.target)).target
    header = (f".version {newest.version[0]}.{newest.version[1]}\n"
              f".target {', '.join(target)}\n.address_size {parsed[0].address_size}\n")
    out, starts, line = [header], [], header.count("\n") + 1
    for u in parsed:
        note = f"// zmlir link: {u.name}\n"
        out.append(note)
        line += 1
        starts.append((line, u.name))
        body = _edited(u)
        out.append(body if body.endswith("\n") else body + "\n")
        line += out[-1].count("\n")
    return LinkedPTX("".join(out), tuple(starts))


def with_register_ceiling(text: str, ceiling: int) -> str:
    """`text` with each kernel's `.maxnreg` at most `ceiling` (one added
    where it has none): how a register ceiling given as a JIT option
    (CU_JIT_MAX_REGISTERS, nvJitLink's -maxrregcount) reaches the kernels,
    as ptxas takes it for the module's entries."""
    if ceiling <= 0:
        return text
    edits = []
    for item in _scan(text, "<ceiling>").items:
        if item.kind != "entry" or item.body < 0:
            continue
        header = _COMMENT_OR_STRING.sub(lambda m: " " * len(m.group()),
                                        text[item.head:item.body])
        if m := _MAXNREG.search(header):
            if int(m.group(1)) > ceiling:
                edits.append((item.head + m.start(1), item.head + m.end(1), str(ceiling)))
        else:
            edits.append((item.body, item.body, f".maxnreg {ceiling} "))  # its lines kept
    for start, end, replacement in reversed(edits):
        text = text[:start] + replacement + text[end:]
    return text


def _sm(target: list[str]) -> int:
    for option in target:
        if m := _SM.match(option):
            return int(m.group(1))
    return 0


def _scan(text: str, name: str) -> _Unit:
    unit = _Unit(text, name)
    # The header directives have no `;`: blank them out of the scanned text.
    masked = list(text)
    for m in _HEADER.finditer(text):
        if _inside_comment(text, m.start()):
            continue
        directive, rest = m.group(1), m.group(2).split("//")[0].strip()
        if directive == "version":
            major, _, minor = rest.partition(".")
            unit.version = (int(major), int(minor or 0))
        elif directive == "target":
            unit.target = [t.strip() for t in rest.split(",") if t.strip()]
        elif directive == "address_size":
            unit.address_size = int(rest)
        if directive != "file":
            unit.edits.append((m.start(), m.end(), ""))
        masked[m.start():m.end()] = " " * (m.end() - m.start())
    scanned = "".join(masked)
    depth, start, brace = 0, 0, -1
    for m in _TOKENS.finditer(scanned):
        c = m.group()
        if c in ("/*", '"'):
            raise LinkError("unterminated comment or string", name, _loc(text, m.start()))
        if c == "{":
            if depth == 0 and brace < 0:
                brace = m.start()
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                raise LinkError("'}' without '{'", name, _loc(text, m.start()))
            if depth == 0 and _FUNCTION.search(scanned, start, brace):
                _add_item(unit, scanned, start, m.end(), brace)
                start, brace = m.end(), -1
        elif c == ";" and depth == 0:
            _add_item(unit, scanned, start, m.end(), -1)
            start, brace = m.end(), -1
    if depth != 0:
        raise LinkError("'{' without '}'", name, _loc(text, len(text)))
    return unit


def _inside_comment(text: str, pos: int) -> bool:
    line_start = text.rfind("\n", 0, pos) + 1
    return "//" in text[line_start:pos] or text.rfind("/*", 0, pos) > text.rfind("*/", 0, pos)


def _add_item(unit: _Unit, scanned: str, start: int, end: int, brace: int) -> None:
    head = _BLANKS_AND_COMMENTS.match(scanned, start, end).end()
    at = head
    linkage = None
    if m := _LINKAGE.match(scanned, at, end):
        linkage, at = m.group(1), m.end()
    if m := _FUNCTION.match(scanned, at, end):
        unit.items.append(_Item(start, end, head, m.group(2), m.group(1), linkage, brace))
    elif m := _VARIABLE.match(scanned, at, end):
        init = _initializer(scanned, m.end(), end)
        unit.items.append(_Item(start, end, head, m.group(2), m.group(1), linkage, init))


def _initializer(scanned: str, start: int, end: int) -> int:
    m = _INITIALIZER_OR_END.search(scanned, start, end)
    return m.start() if m and m.group() == "=" else -1


def _loc(text: str, pos: int) -> SourceLoc:
    line = text.count("\n", 0, pos) + 1
    return SourceLoc(line, pos - (text.rfind("\n", 0, pos) + 1) + 1)


def _resolve(units: list[_Unit]) -> None:
    # The definition each external name resolves to: (unit, item).
    chosen: dict[str, tuple[_Unit, _Item]] = {}
    for u in units:
        for item in u.items:
            if not item.defines or item.linkage is None:
                continue
            first = chosen.get(item.name)
            if first is None:
                chosen[item.name] = (u, item)
                continue
            fu, fi = first
            if _strong(fi) and _strong(item):
                raise LinkError(f"Multiple definition of '{item.name}' in '{u.name}', first "
                                f"defined in '{fu.name}'", u.name, _loc(u.text, item.head))
            if (fi.linkage, item.linkage) == ("common", "common") and \
                    _declared(u, item) != _declared(fu, fi):
                raise LinkError(f"'.common' variable '{item.name}' declared differently in "
                                f"'{u.name}' and '{fu.name}'", u.name, _loc(u.text, item.head))
            if _strong(item):
                chosen[item.name] = (u, item)
    # Every other definition of an external name becomes a declaration.
    for u in units:
        for item in u.items:
            if item.defines and item.linkage is not None and chosen[item.name][1] is not item:
                u.edits.append((item.head, item.end, _as_declaration(u.text, item)))
    # A unit's own names (no linkage) that an external name, or an earlier
    # unit's own name, took: renamed in that unit.
    external = {i.name for u in units for i in u.items if i.linkage is not None}
    taken = set(external)
    for index, u in enumerate(units):
        own = {i.name for i in u.items if i.linkage is None}
        for name in sorted(own & taken):
            fresh, n = f"{name}_u{index}", 1
            while fresh in taken or fresh in own:
                fresh, n = f"{name}_u{index}_{n}", n + 1
            u.renames[name] = fresh
            taken.add(fresh)
        taken |= own


def _check_references(units: list[_Unit]) -> None:
    defined = {i.name for u in units for i in u.items if i.defines}
    for u in units:
        for item in u.items:
            if item.linkage != "extern" or item.name in defined or item.name in _PROVIDED:
                continue
            if item.kind == "shared":  # dynamic shared memory: the launch's, no link's
                continue
            declarations = [(i.start, i.end) for i in u.items if i.name == item.name]
            uses = re.compile(rf"(?<![\w$%.]){re.escape(item.name)}(?![\w$])")
            if any(not any(a <= m.start() < b for a, b in declarations)
                   for m in uses.finditer(u.text)):
                raise LinkError(f"Undefined reference to '{item.name}' in '{u.name}'", u.name,
                                _loc(u.text, item.head))


def _strong(item: _Item) -> bool:
    return item.linkage not in ("weak", "common")


def _declared(unit: _Unit, item: _Item) -> str:
    end = item.body if item.body >= 0 else item.end
    return " ".join(unit.text[item.head:end].split())


def _as_declaration(text: str, item: _Item) -> str:
    """`item`, a definition another unit's wins over, as an `.extern`
    declaration with as many lines."""
    end = item.body if item.body >= 0 else item.end - 1
    head = text[item.head:end].rstrip()
    head = _LINKAGE.sub(".extern ", head, count=1) if _LINKAGE.match(head) else ".extern " + head
    return head + ";" + "\n" * (text.count("\n", item.head, item.end) - head.count("\n"))


def _renumber_files(units: list[_Unit]) -> None:
    next_index = 1
    for u in units:
        for m in _HEADER.finditer(u.text):
            if m.group(1) != "file" or _inside_comment(u.text, m.start()):
                continue
            index = _FILE_INDEX.match(m.group(2))
            if index is None:
                continue
            u.files[int(index.group(1))] = next_index
            u.edits.append((m.start(2) + index.start(1), m.start(2) + index.end(1),
                            str(next_index)))
            next_index += 1
        for m in _LOC.finditer(u.text):
            if int(m.group(2)) in u.files:
                u.edits.append((m.start(2), m.end(2), str(u.files[int(m.group(2))])))


def _edited(unit: _Unit) -> str:
    text, renames = unit.text, unit.renames
    names = re.compile(r"(?<![\w$%.])(" + "|".join(map(re.escape, renames)) + r")(?![\w$])") \
        if renames else None
    pieces, at = [], 0
    for start, end, replacement in sorted(unit.edits):
        if start < at:
            continue  # inside an item already replaced
        pieces.append(_renamed(text[at:start], names, renames))
        pieces.append(_renamed(replacement, names, renames))
        at = end
    pieces.append(_renamed(text[at:], names, renames))
    return "".join(pieces)


def _renamed(text: str, names: re.Pattern[str] | None, renames: dict[str, str]) -> str:
    """`text` with the `names` pattern's matches renamed, outside comments and strings."""
    if names is None:
        return text
    out, at = [], 0
    for m in _COMMENT_OR_STRING.finditer(text):
        out.append(names.sub(lambda n: renames[n.group(1)], text[at:m.start()]))
        out.append(m.group())
        at = m.end()
    out.append(names.sub(lambda n: renames[n.group(1)], text[at:]))
    return "".join(out)
