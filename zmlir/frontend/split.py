"""A module's text split where its function definitions are, with a scan of
braces, comments and strings (not a parse): `split` makes the *module text*
(the PTX with every function body replaced by `;` and as many newlines as
the body had, so what remains is the header, the variables and a
declaration of every function, each at its own line and column) and the
definitions' spans; stream.py parses and imports the definitions apart.

With workers (pool.py), each scans a segment of the module (`split_segment`),
cut where a line starts a definition (`segment_cuts`), and the segments'
splits are joined (`joined_segments`) where they read as the whole would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from zmlir.frontend.declarations import SCAN, SECTION, Row, chunk_rows, chunks

# Inside braces: the characters that may start a brace, comment or string
# (a regex of one character class is searched for fastest), then which.
_BODY_CHARS = re.compile(r'[{}/"]')
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"')


def _braces(depth: int) -> str:
    """A `{...}` nested `depth` deep at most, as the loop in split() reads
    braces, comments and strings (possessive: no backtracking)."""
    atom = r'[^{}/"]++|//[^\n]*+|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*+"|/(?![/*])'
    inner = ""
    for _ in range(depth):
        inner = r"\{(?:" + atom + (f"|{inner}" if inner else "") + r")*+\}"
    return inner


# A whole function body (or initializer) in one C-level match: 4 times faster
# than split()'s loop, which takes what it doesn't match (deeper braces, an
# unterminated comment or string).
_BRACES = re.compile(_braces(4))
# Where a definition starts: the first `.entry`/`.func` of an item, and the
# linkage directives right before it.
_DEFINITION = re.compile(r"\.(?<![\w$.]\.)(?:(?:visible|extern|weak|common)[ \t\r\n]+\.)*"
                         r"(?:entry|func)(?![\w$])")


@dataclass(frozen=True, slots=True)
class Span:
    """One function definition: text[start:end], its body from `body` on."""

    start: int
    body: int
    end: int
    line: int  # the line of `start`, from 1
    col: int  # the column of `start`, from 1


def split(text: str) -> tuple[str, list[Span]] | None:
    """The module text and the function definitions (see the module
    docstring), or None when the text isn't plainly balanced."""
    scan = _scan(text)
    return None if scan is None else _located(text, scan.spans)[:2]


@dataclass(frozen=True, slots=True)
class _Scan:
    """The top-level scan of a text (for stream.split, or for a segment of
    a module: Workers.split)."""

    spans: list[Span]  # not located yet (line and column 0)
    # Where the last top-level item starts, and whether a `.pragma` is in it
    # (in a longer text, it may hide what follows).
    tail: int
    open_pragma: bool
    # The first `{` at depth 0 and where the first item ends (-1: none).
    first_open: int
    first_end: int


def _definition(text: str, item: int, brace: int) -> int:
    """Where the function definition whose body is the `{` at `brace` starts,
    in the top-level item starting at `item`; -1: the braces aren't a body.

    Directives without `;` before it (`.version`, `.file`) stay in the
    module text only."""
    found = _DEFINITION.search(text, item, brace)
    if found is None or SECTION.search(text, item, brace) is not None:
        return -1
    return found.start()


def _scan(text: str) -> _Scan | None:
    spans: list[Span] = []
    depth = 0
    item = 0  # where the current top-level item starts
    body = -1
    pos = 0
    first_open = first_end = -1
    while True:
        if depth > 0:
            # Inside braces only braces, comments and strings matter: most
            # `;` (one an instruction) are never looked at. (A `.pragma`
            # there with an unquoted brace would end the body early: lark
            # then reads the pieces otherwise, and the module is parsed whole.)
            m = _BODY_CHARS.search(text, pos)
            if m is None:
                break
            c = m.group()
            if c == "/" or c == '"':
                skipped = _COMMENT_OR_STRING.match(text, m.start())
                if skipped is not None:
                    pos = skipped.end()
                    continue
                if c == '"' or text.startswith("/*", m.start()):
                    return None  # unterminated string or comment: lark says where
                pos = m.end()
                continue
        else:
            m = SCAN.search(text, pos)
            if m is None:
                break
            tok = m.group()
            c = tok[0]
        pos = m.end()
        if c == "/" or c == '"' or c == ".":  # at depth 0 only
            if tok in ("/*", '"'):
                return None  # unterminated comment or string: lark says where
            continue
        if c == "{":
            if depth == 0:
                if first_open < 0:
                    first_open = m.start()
                body = _definition(text, item, m.start())
                if body >= 0:
                    item, body = body, m.start()
                whole = _BRACES.match(text, m.start())
                if whole is not None:  # the braces end here, as the loop would find
                    pos = whole.end()
                    if body >= 0:
                        spans.append(Span(item, body, pos, 0, 0))
                    item = pos
                    if first_end < 0:
                        first_end = pos
                    continue
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                if body >= 0:
                    spans.append(Span(item, body, m.end(), 0, 0))
                item = m.end()
                if first_end < 0:
                    first_end = item
        else:  # `;` (depth 0 only) ends a top-level item
            item = m.end()
            if first_end < 0:
                first_end = item
    if depth != 0:
        return None
    # A `.pragma` without its `;` after the last item (else its token ended
    # there) is no token here; in a longer text it may be.
    return _Scan(spans, item, text.find(".pragma", item) >= 0, first_open, first_end)


def _located(text: str, spans: list[Span], line: int = 1, offset: int = 0
             ) -> tuple[str, list[Span], dict[int, tuple[int, int]]]:
    """The module text of `text`, its definitions `spans` with their lines
    and columns, and where each definition's header ends in the module text
    (after its `;`; -> the line and column where it starts); `text` starts
    at that line (at its start) and at that offset in the file."""
    out: list[str] = []
    located: list[Span] = []
    headers: dict[int, tuple[int, int]] = {}
    pos, line_start, size = 0, 0, 0
    for s in spans:
        n = text.count("\n", pos, s.start)
        if n:
            line += n
            line_start = text.rindex("\n", pos, s.start) + 1
        located.append(Span(s.start + offset, s.body + offset, s.end + offset, line,
                            s.start - line_start + 1))
        # The body's newlines keep later lines where they were; blanks after
        # them keep the columns of whatever follows the `}` on its line.
        n = text.count("\n", s.body, s.end)
        tail = s.end - (text.rindex("\n", s.body, s.end) + 1) if n else 0
        size += s.body - pos
        headers[size + 1] = (line, s.start - line_start + 1)
        out.append(text[pos:s.body])
        out.append(";" + "\n" * n + " " * tail)
        size += 1 + n + tail
        pos = s.end
        line += text.count("\n", s.start, s.end)
        if n:
            line_start = text.rindex("\n", s.start, s.end) + 1
    out.append(text[pos:])
    return "".join(out), located, headers


@dataclass(frozen=True, slots=True)
class Segment:
    """What a worker makes of a segment of the module (split_segment)."""

    scan: _Scan  # with the spans located
    module_text: str
    chunks: list[Row] | None  # of the module text, by chunk_rows


def split_segment(segment: str, offset: int, line: int) -> Segment | None:
    """split() of `segment`, a segment of a module (at `offset`, and line
    `line`, in the module), and the chunks of its module text."""
    scan = _scan(segment)
    if scan is None:
        return None
    module_text, spans, headers = _located(segment, scan.spans, line, offset)
    found = chunks(module_text, line, headers)
    return Segment(replace(scan, spans=spans), module_text,
                   None if found is None else chunk_rows(found))


# A line that starts a function definition: where segment_cuts cuts.
_DEFINITION_LINE = re.compile(r"^(?:\.(?:visible|extern|weak|common)[ \t]+)*\.(?:entry|func)"
                              r"(?![\w$])", re.MULTILINE)


def segment_cuts(text: str, n: int) -> list[int]:
    """0, up to n - 1 places about len(text) / n apart where a line starts a
    definition, and len(text)."""
    cuts = [0]
    for k in range(1, n):
        found = _DEFINITION_LINE.search(text, max(cuts[-1] + 1, k * len(text) // n))
        if found is None:
            break
        cuts.append(found.start())
    return [*cuts, len(text)]


def joined_segments(text: str, cuts: list[int], segments: list[Segment | None]
                    ) -> tuple[str, list[Span]] | None:
    """The segments' splits as split(text), or None if that may not be it.

    It is, when each segment's scan ends outside of any braces, comment or
    string (a cut is at the start of a line, so only a `.pragma` could reach
    over it), and a definition at the start of a segment is taken where it
    would be after the previous segment's last item."""
    spans: list[Span] = []
    for k, segment in enumerate(segments):
        if segment is None:
            return None
        scan = segment.scan
        if k + 1 < len(segments) and scan.open_pragma:
            return None
        if k and scan.first_open >= 0 and (scan.first_end < 0 or
                                           scan.first_open < scan.first_end):
            brace = cuts[k] + scan.first_open
            item = cuts[k - 1] + segments[k - 1].scan.tail  # type: ignore[union-attr]
            if _definition(text, item, brace) != _definition(text, cuts[k], brace):
                return None
        spans += scan.spans
    return "".join(s.module_text for s in segments if s is not None), spans


def chunk_parts(segments: list[Segment | None]) -> list[tuple[int, list[Row]]] | None:
    """The segments' chunks, each with the offset of its module text in the
    whole (joined_chunks' parts), or None if a segment has none."""
    parts: list[tuple[int, list[Row]]] = []
    offset = 0
    for s in segments:
        if s is None or s.chunks is None:
            return None
        parts.append((offset, s.chunks))
        offset += len(s.module_text)
    return parts
