"""Big PTX modules, parsed and imported one function at a time.

Parsing a whole module into one AST and importing it into one MLIR text
holds both at once: about 25 times the size of the PTX. Functions are
independent, so here:

1. `split` finds the top-level function definitions with a scan of braces,
   comments and strings, and makes the *module text*: the PTX with every
   function body replaced by `;` (and as many newlines as the body had), so
   what remains is the header, the variables and a declaration of every
   function, each at its own line and column.
2. The module text's declarations are parsed as the importer looks their
   names up (declarations.py: they give the signatures calls need), and its
   variables and other items, for the output; the definitions' headers
   there are left to the batches.
3. The functions are parsed a batch (about BATCH_BYTES) at a time, alone
   (after a one-line `.version`/`.target` prefix, each at its own line and
   column less the batch's line offset), imported, and the AST dropped.
   With `verify`, each batch is also parsed and verified by MLIR
   (`_native.Module`), and printed if asked, so the caller gets the printed
   `ptx-mlir` text without ever holding the whole module in MLIR.

With `jobs > 1` (_Workers) all of that is done by worker processes: the
split in segments of the module, the module text in parts, the batches.

Results are joined in the module's order, so the output is the same text as
`import_module(parse_ptx(text))` (and, verified and printed, as
`_native.Module(...).text()` of that); test_corpus.py and test_stream.py
check both. Input that the scan can't split with confidence (unbalanced
braces, an unterminated comment or string), that lark reads otherwise than
the scan, or that has any error makes
`import_streamed` return None: the caller then parses it whole, so every
diagnostic is exactly the whole-module path's (test_fuzz.py checks this on
mutated corpus modules). The error path pays for a second, whole parse.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import re
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import TypeVar

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import ast
from zmlir.frontend.collector import without_collector
from zmlir.frontend.declarations import (
    SCAN,
    SECTION,
    Chunk,
    Declarations,
    Row,
    Unreadable,
    chunk_rows,
    chunks,
    header_line,
    joined_chunks,
    moved,
    parse_pieces,
)
from zmlir.frontend.importer import ModuleImporter
from zmlir.frontend.parser import parse_ptx

# Below this size a module is parsed whole: splitting costs more than it saves.
STREAM_MIN_BYTES = 1 << 20
# PTX bytes per unit of work (one native parse, one message to a worker).
BATCH_BYTES = 256 << 10
# Module-text bytes per part a worker parses for the output (_Workers).
PART_BYTES = BATCH_BYTES

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
    a module: _Workers.split)."""

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


@dataclass
class Imported:
    """The importer's output in pieces, in module order."""

    header: str  # `module attributes {...} {`
    variables: list[str]  # module-scope, then body-scope ptx.var texts
    functions: list[str]  # func.func texts
    # The printed (verified) pieces, when asked for; else None.
    printed_header: str | None = None
    printed_variables: list[str] | None = None
    printed_functions: list[str] | None = None
    entries: tuple[ast.Function, ...] = ()  # signatures of the kernels

    def text(self) -> str:
        """What import_module would have returned."""
        return "\n".join([self.header, *self.variables, *self.functions, "}"]) + "\n"

    def printed(self) -> str:
        """What `_native.Module(self.text()).text()` would have returned."""
        assert self.printed_header is not None and self.printed_variables is not None
        assert self.printed_functions is not None
        return "".join([self.printed_header, *self.printed_variables,
                        *self.printed_functions, "}\n"])


class _Context:
    """What one process needs to import functions of one module: the module
    text parsed whole, or its `declarations` parsed as they are looked up
    (a worker's)."""

    def __init__(self, module: ast.Module, filename: str, buffer: str,
                 declarations: Declarations | None = None) -> None:
        # The module variables' ptx.var lines (importing them registers them).
        self.variable_lines: list[str] | None = None
        if declarations is None:
            self.importer = ModuleImporter(module, filename)
            self.variable_lines = self.importer.module_variables()
        else:
            self.importer = ModuleImporter(module, filename, variables=declarations.variables,
                                           functions=declarations.functions,
                                           _symbol_names=declarations)
        self.declarations = declarations
        self.module_names = {v.name for v in module.variables}
        self.filename = filename
        self.buffer = buffer  # the name native parse errors are reported under
        self.prefix = header_line(module)

    def module_part(self, k: int, groups: int, verify: bool, printing: bool) -> _ModulePart:
        """The output of the k-th of `groups` parts of the module text (see
        Declarations.group; all of it in the first, if it was parsed whole)."""
        d = self.declarations
        if d is None:
            if k:
                return _ModulePart("", [], [], ())
            module = self.importer.module
            importer = self.importer
            assert self.variable_lines is not None
            lines = self.variable_lines
            entries = tuple(fn for fn in module.functions if fn.kind == "entry")
        else:
            parsed = d.group(k, groups)
            if parsed is None:
                return _ModulePart("", [], [], ())
            module, offset, decls = parsed
            importer = ModuleImporter(module, self.filename, _symbol_names=d,
                                      line_offset=offset)
            lines = importer.module_variables()
            entries = tuple(f for f in decls if isinstance(f, ast.Function) and f.kind == "entry")
        if any(fn.body is not None for fn in module.functions):
            raise Unsplittable  # a body the scan didn't take for a function's
        part = _ModulePart(importer.header() if k == 0 else "", lines,
                           [v.name for v in module.variables], entries)
        if verify:
            header, printed_vars, _ = self.verify(lines, [], printing)
            if printing:
                part.printed_header, part.printed_variables = header, printed_vars
        return part

    def is_module_variable(self, name: str) -> bool:
        if self.declarations is not None:
            return self.declarations.is_variable(name)
        return name in self.module_names

    def parse(self, work: list[tuple[str, int, int]]) -> tuple[list[ast.Function], int]:
        """The function definitions of `work`, parsed at once: after the
        prefix line, each at its own line and column, less an offset (the
        first at line 2); returns them and that offset."""
        m, offset = parse_pieces(self.prefix, work, self.filename)
        defined = [f for f in m.functions if f.body is not None]
        if len(defined) != len(work) or len(m.functions) != len(work) or m.variables:
            raise Unsplittable  # lark saw other than the definitions split() did
        return defined, offset

    def function(self, fn: ast.Function, offset: int) -> tuple[list[ast.VarDecl], list[str],
                                                                 str]:
        """One function definition (parsed `offset` lines up): its body
        variables (as declared and as ptx.var texts) and its func.func text."""
        imp = self.importer
        imp.line_offset = offset
        try:
            body_vars = imp.body_variables(fn)
            for v in body_vars:  # across functions: import_streamed checks
                if self.is_module_variable(v.name):
                    raise imp.error(f"unsupported redeclaration of '{v.name}' in a function "
                                    "body", v.loc)
            var_lines, func = imp.function(fn, body_vars)
        finally:
            imp.line_offset = 0
        located = [ast.VarDecl(v.space, v.type, v.name, SourceLoc(v.loc.line + offset, v.loc.col))
                   for v in body_vars]
        return located, var_lines, func

    @without_collector
    def batch(self, work: list[tuple[str, int, int]], verify: bool, printing: bool,
              locations: bool = True) -> _BatchResult:
        """Imports the functions of `work`; verified, when asked, by MLIR
        (and printed, with `printing`).

        Without `locations` the text (kept only for verification) has no
        `loc(...)`, which saves MLIR a location per op; if MLIR rejects it,
        the batch is imported again with locations for the diagnostic.
        """
        names: list[ast.VarDecl] = []
        var_lines: list[str] = []
        funcs: list[str] = []
        self.importer.locations = locations
        try:
            functions, offset = self.parse(work)
            for fn in functions:
                decls, lines, func = self.function(fn, offset)
                names += decls
                var_lines += lines
                funcs.append(func)
        finally:
            self.importer.locations = True
        entries = tuple(moved(replace(fn, body=None), offset)
                        for fn in functions if fn.kind == "entry")
        result = _BatchResult(names, var_lines, funcs, entries)
        if verify:
            try:
                _, result.printed_vars, result.printed_funcs = self.verify(var_lines, funcs,
                                                                           printing)
            except NativeError:
                if locations:
                    raise
                for v in names:  # registered by the first import
                    self.importer.variables.pop(v.name, None)
                return self.batch(work, verify, printing, locations=True)
        return result

    def verify(self, var_lines: list[str], funcs: list[str],
               printing: bool = True) -> tuple[str, str, str]:
        """MLIR's print of a module of these pieces: (header line, variables,
        functions), each with its newlines; empty strings without `printing`
        (verified only)."""
        from zmlir import _native  # here: the parser alone doesn't need MLIR

        text = "\n".join([self.importer.header(), *var_lines, *funcs, "}"]) + "\n"
        try:
            verified = _native.Module(text, self.buffer)
        except RuntimeError as err:
            raise NativeError(str(err), text) from None
        if not printing:
            return "", "", ""
        printed = verified.text()
        # `module attributes {...} {`, the variables, the functions, `}`.
        first = printed.index("\n") + 1
        body = printed[first:printed.rindex("}")]
        if body.startswith("  func.func "):
            cut = 0
        else:
            cut = body.find("\n  func.func ")
            cut = len(body) if cut < 0 else cut + 1
        return printed[:first], body[:cut], body[cut:]


@dataclass
class _BatchResult:
    body_vars: list[ast.VarDecl]
    var_lines: list[str]
    funcs: list[str]
    entries: tuple[ast.Function, ...]  # the kernels' signatures
    printed_vars: str = ""
    printed_funcs: str = ""


class Unsplittable(Exception):
    """A function's text didn't parse as one definition: parse the module whole."""


class NativeError(Exception):
    """MLIR rejected a batch: the message and the text it was given."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message, text)
        self.message = message
        self.text = text


@dataclass(frozen=True, slots=True)
class _Failure:
    """A worker's error, as plain data (CompileError doesn't pickle whole)."""

    message: str
    filename: str
    loc: SourceLoc | None
    text: str | None  # set for a native error: the batch's MLIR text
    unsplittable: bool = False

    def exception(self) -> Exception:
        if self.unsplittable:
            return Unsplittable()
        if self.text is not None:
            return NativeError(self.message, self.text)
        return CompileError(self.message, self.filename, self.loc)


_Result = TypeVar("_Result")


@dataclass(frozen=True, slots=True)
class _ModuleFile:
    """Where a worker reads the module text (written once by _Workers: sent
    with each worker's start, 16 copies of the 80 MB module's 9.5 MB took
    the main process 0.8 s), and the names its errors are reported under."""

    path: str
    filename: str
    buffer: str
    # Where the module text's chunks are, by part (see _Workers.split), if
    # they were found there.
    chunks: str | None = None


# A worker process's context, or why there is none, and the file it is of.
_WORKER: tuple[_ModuleFile, _Context | _Failure] | None = None


def _worker_context(source: _ModuleFile) -> _Context | _Failure:
    global _WORKER
    if _WORKER is None or _WORKER[0] != source:
        _WORKER = None  # the last module's, dropped first
        module_text = _read(source.path, 0, os.path.getsize(source.path))
        found = None
        if source.chunks is not None:
            with open(source.chunks, "rb") as f:
                found = joined_chunks(module_text, pickle.load(f))
        _WORKER = source, _load(module_text, found, source.filename, source.buffer)
    return _WORKER[1]


def _load(module_text: str, found: list[Chunk] | None, filename: str, buffer: str
          ) -> _Context | _Failure:
    """Reads the module text's declarations as the importer looks them up
    (declarations.py), or, if they can't be told apart, parses it whole.
    `found`: its chunks, if known."""
    if found is None:
        found = chunks(module_text)
    if found:
        try:
            declarations = Declarations(module_text, found, filename)
        except Unreadable:
            pass
        else:
            return _Context(declarations.module, filename, buffer, declarations)
    try:
        return _Context(parse_ptx(module_text, filename), filename, buffer)
    except _CARRIED as e:  # every task of this module then returns it
        return _failure(e)


def _task(source: _ModuleFile, method: Callable[..., _Result], *args: object
          ) -> _Result | _Failure:
    """`method` of the worker's context for `source` (_Context.batch,
    .module_part) on `args`; an error, as data."""
    context = _worker_context(source)
    if isinstance(context, _Failure):
        return context
    try:
        return method(context, *args)
    except _CARRIED as e:
        return _failure(e)


@dataclass(frozen=True, slots=True)
class _Segment:
    """What a worker makes of a segment of the module (_split_segment)."""

    scan: _Scan  # with the spans located
    module_text: str
    chunks: list[Row] | None  # of the module text, by chunk_rows


def _split_segment(path: str, start: int, end: int, offset: int, line: int
                   ) -> _Segment | None:
    """split() of the segment of the module in `path` from byte `start` to
    `end` (at `offset`, and line `line`, in the module), and the chunks of
    its module text."""
    segment = _read(path, start, end)
    scan = _scan(segment)
    if scan is None:
        return None
    module_text, spans, headers = _located(segment, scan.spans, line, offset)
    found = chunks(module_text, line, headers)
    return _Segment(replace(scan, spans=spans), module_text,
                    None if found is None else chunk_rows(found))


def _batch(context: _Context, pieces: _Pieces, *options: bool) -> _BatchResult:
    return context.batch(pieces.read(), *options)


# Surrogates (of a file decoded with surrogateescape) pass through the files.
_ENCODING_ERRORS = "surrogatepass"


def _read(path: str, start: int, end: int) -> str:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start).decode("utf-8", _ENCODING_ERRORS)


@dataclass(frozen=True, slots=True)
class _TextFile:
    """A text in a file for the workers, which read what they need of it:
    sent down the pool's pipes, the 80 MB module took 0.45 s."""

    path: str
    ascii: bool

    def byte_offsets(self, text: str, positions: list[int]) -> list[int]:
        """Where the characters at `positions` (ascending) are in the file."""
        if self.ascii:
            return positions
        out: list[int] = []
        at = last = 0
        for p in positions:
            at += len(text[last:p].encode("utf-8", _ENCODING_ERRORS))
            out.append(at)
            last = p
        return out


@dataclass(frozen=True, slots=True)
class _Pieces:
    """Definitions (start, end, line, column), read by a worker from `path`:
    its bytes from `start` to `end` hold the text from `char_start` on."""

    path: str
    start: int
    end: int
    char_start: int
    spans: tuple[tuple[int, int, int, int], ...]

    def read(self) -> list[tuple[str, int, int]]:
        text = _read(self.path, self.start, self.end)
        at = self.char_start
        return [(text[a - at:b - at], line, col) for a, b, line, col in self.spans]


# The errors a worker sends back (anything else is a bug: it breaks the pool).
_CARRIED = (CompileError, NativeError, Unsplittable, Unreadable)


def _failure(e: Exception) -> _Failure:
    """A worker's error (one of _CARRIED) as plain data, raised again here."""
    if isinstance(e, CompileError):
        return _Failure(e.message, e.filename, e.loc, None)
    if isinstance(e, NativeError):
        return _Failure(e.message, "", None, e.text)
    return _Failure("", "", None, None, unsplittable=True)


@dataclass
class _ModulePart:
    """What (a part of) the module text gives the output."""

    header: str  # `module attributes {...} {` (from the first part)
    variables: list[str]  # the module-scope ptx.var texts
    variable_names: list[str]
    entries: tuple[ast.Function, ...]  # signatures of the kernels
    printed_header: str = ""  # with `printing`
    printed_variables: str = ""

    @staticmethod
    def joined(parts: list[_ModulePart]) -> _ModulePart:
        names = [n for p in parts for n in p.variable_names]
        if sum(len(set(p.variable_names)) for p in parts) != len(set(names)):
            # Parts verified apart miss a symbol declared in two: parse it whole.
            raise Unsplittable
        return _ModulePart(parts[0].header, [v for p in parts for v in p.variables], names,
                           tuple(e for p in parts for e in p.entries), parts[0].printed_header,
                           "".join(p.printed_variables for p in parts))


def _batches(spans: list[Span], jobs: int) -> Iterator[list[Span]]:
    """The definitions in batches of BATCH_BYTES; with workers, the last
    ones smaller (a quarter of what is left per worker, down to a 16th of
    BATCH_BYTES), so that they finish together."""
    left = sum(s.end - s.start for s in spans)
    batch: list[Span] = []
    size = 0
    limit = BATCH_BYTES
    for s in spans:
        batch.append(s)
        size += s.end - s.start
        if size >= limit:
            yield batch
            left -= size
            batch, size = [], 0
            if jobs > 1:
                limit = min(BATCH_BYTES, max(left // (4 * jobs), BATCH_BYTES // 16))
    if batch:
        yield batch


def _pieces(text: str, spans: list[Span]) -> list[tuple[str, int, int]]:
    return [(text[s.start:s.end], s.line, s.col) for s in spans]


def import_streamed(text: str, filename: str, *, jobs: int = 1, verify: bool = False,
                    keep_text: bool = True, keep_printed: bool = True,
                    buffer: str = "<zmlir importer output>") -> Imported | None:
    """Parses and imports `text` one function at a time (see the module
    docstring); None if split() can't take it, or if the module has an
    error: parse it whole then, which reports the error the whole-module
    path reports (syntax errors anywhere before import errors).

    `jobs` > 1 imports batches of functions in that many worker processes
    (this one then only hands them out).
    `verify` also has MLIR parse and verify each batch (native parse errors
    come back as NativeError with the batch's text, named `buffer`), and
    print it, for `printed()`, with `keep_printed`. Without `keep_text` only
    the printed pieces are kept (`verify` and `keep_printed` needed).
    """
    try:
        return _import_streamed(text, filename, jobs, verify and keep_printed, verify,
                                keep_text, buffer)
    except (CompileError, NativeError, Unsplittable, Unreadable):
        return None


def _import_streamed(text: str, filename: str, jobs: int, printing: bool, verify: bool,
                     keep_text: bool, buffer: str) -> Imported | None:
    workers = _Workers(jobs, filename, buffer) if jobs > 1 else None
    try:
        parts = split(text) if workers is None else workers.split(text)
        if parts is None:
            return None
        module_text, spans = parts
        locations = keep_text or not verify
        batches = _batches(spans, jobs)
        options = (verify, printing, locations)
        if workers is None:
            # Parsed whole: cheaper here than on demand (a lookup's parse costs
            # 0.25 ms: 0.9 s for the 20 MB module's, 0.67 s to parse it whole).
            ctx = _Context(parse_ptx(module_text, filename), filename, buffer)
            part = ctx.module_part(0, 1, verify, printing)
            results: Iterator[_BatchResult] = (ctx.batch(_pieces(text, b), *options)
                                               for b in batches)
        else:
            workers.submit(text, module_text, batches, options)
            part = workers.module_part()
            results = workers.results()
        out = Imported(part.header, [*part.variables], [])
        # The kernels by where they are declared or defined (a definition is
        # in the module text, as a declaration, and in its batch).
        entries = {(e.loc.line, e.loc.col): e for e in part.entries}
        if printing:
            out.printed_header = part.printed_header
            out.printed_variables, out.printed_functions = [part.printed_variables], []
        seen = set(part.variable_names)
        body_vars: list[str] = []
        printed_body_vars: list[str] = []
        for result in results:
            entries.update(((e.loc.line, e.loc.col), e) for e in result.entries)
            for v in result.body_vars:
                if v.name in seen:
                    raise CompileError(f"unsupported redeclaration of '{v.name}' in a "
                                       "function body", filename, v.loc)
                seen.add(v.name)
            if keep_text:
                body_vars += result.var_lines
                out.functions += result.funcs
            if printing:
                printed_body_vars.append(result.printed_vars)
                assert out.printed_functions is not None
                out.printed_functions.append(result.printed_funcs)
    finally:
        if workers is not None:
            workers.close()
    out.variables += body_vars
    out.entries = tuple(entries[at] for at in sorted(entries))
    if printing:
        assert out.printed_variables is not None
        out.printed_variables += printed_body_vars
    return out


class _Workers:
    """`jobs` worker processes splitting the module, then importing the
    module text and the batches.

    The split: each worker scans a segment of the module, cut where a line
    starts a definition (_cuts), and finds its module text's chunks; this
    process joins them (_joined; split() whole if the segments may read
    otherwise). (This process splitting segments too while the workers
    start, from the last one back, made the split end later on the H200
    host, 0.58 -> 0.80 s for 20 MB on 16 workers: the thread submitting
    theirs waits for the interpreter lock at each fork.) The module, its
    module text and the chunks go to files the workers read what they need
    of (through the pool's pipes, 80 MB took 0.45 s). The module text's
    parts go first (their variables are the output's, and they are the
    truth the workers' declarations are checked against; parsed whole in
    one worker, the 80 MB module's took as long as all the functions on 16
    cores), then the function batches. All work is queued at once, so this
    process, which only collects the results, never keeps a worker waiting
    (when it parsed the module text itself, it held the interpreter lock its
    pool's threads need to hand out work and take results: on 16 cores, the
    workers idled a third of the time).
    """

    def __init__(self, jobs: int, filename: str, buffer: str) -> None:
        self.jobs = jobs
        self.filename = filename
        self.buffer = buffer
        self.pool = ProcessPoolExecutor(jobs, mp_context=_forkserver())
        self.files: list[str] = []  # removed by close()
        self.input: _TextFile | None = None
        self.chunks: list[tuple[int, list[Row]]] | None = None  # by segment
        self.parts: list[Future[_ModulePart | _Failure]] = []
        self.pending: deque[Future[_BatchResult | _Failure]] = deque()

    def _file(self, text: str) -> _TextFile:
        data = text.encode("utf-8", _ENCODING_ERRORS)
        return _TextFile(self._written(data, ".ptx"), len(data) == len(text))

    def _written(self, data: bytes, suffix: str) -> str:
        """A temporary file holding `data` (removed by close())."""
        with tempfile.NamedTemporaryFile("wb", prefix="zmlir-", suffix=suffix,
                                         dir=_memory_dir(2 * len(data)), delete=False) as f:
            self.files.append(f.name)
            f.write(data)
        return f.name

    def split(self, text: str) -> tuple[str, list[Span]] | None:
        """split(text), the segments scanned by the workers."""
        cuts = _cuts(text, self.jobs)
        if len(cuts) <= 2:
            return split(text)
        self.input = self._file(text)
        futures = [self.pool.submit(_split_segment, *args)
                   for args in _segments(text, self.input, cuts)]
        segments = [future.result() for future in futures]
        joined = _joined(text, cuts, segments)
        if joined is None:  # the segments may not read as the whole does, which says
            return split(text)
        # The workers join the module text's chunks (declarations.joined_chunks).
        self.chunks = _chunk_parts(segments)
        return joined

    def submit(self, text: str, module_text: str, batches: Iterator[list[Span]],
               options: tuple[bool, bool, bool]) -> None:
        """Queues the module text's parts and the batches of `text`."""
        module = self._file(module_text)
        chunks_path = None
        if self.chunks is not None:
            chunks_path = self._written(pickle.dumps(self.chunks, pickle.HIGHEST_PROTOCOL),
                                        ".chunks")
        source = _ModuleFile(module.path, self.filename, self.buffer, chunks_path)
        groups = max(1, len(module_text) // PART_BYTES)
        self.parts = [self.pool.submit(_task, source, _Context.module_part, k, groups,
                                       *options[:2]) for k in range(groups)]
        if self.input is None:
            self.input = self._file(text)
        groups_of_spans = list(batches)
        ends = [p for b in groups_of_spans for p in (b[0].start, b[-1].end)]
        at = self.input.byte_offsets(text, ends)
        self.pending.extend(
            self.pool.submit(_task, source, _batch,
                             _Pieces(self.input.path, at[2 * i], at[2 * i + 1], b[0].start,
                                     tuple((s.start, s.end, s.line, s.col) for s in b)),
                             *options)
            for i, b in enumerate(groups_of_spans))

    def module_part(self) -> _ModulePart:
        return _ModulePart.joined([_checked(future) for future in self.parts])

    def results(self) -> Iterator[_BatchResult]:
        while self.pending:
            yield _checked(self.pending.popleft())

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        for path in self.files:
            os.unlink(path)


def _memory_dir(size: int) -> str | None:
    """/dev/shm if it has room for `size` bytes (files there stay in memory:
    80 MB written to a disk's /tmp took 0.08 to 0.25 s), else the default."""
    try:
        fs = os.statvfs("/dev/shm")
    except OSError:
        return None
    return "/dev/shm" if fs.f_bavail * fs.f_frsize >= size and os.access("/dev/shm", os.W_OK) \
        else None


# A line that starts a function definition: where _cuts cuts.
_DEFINITION_LINE = re.compile(r"^(?:\.(?:visible|extern|weak|common)[ \t]+)*\.(?:entry|func)"
                              r"(?![\w$])", re.MULTILINE)


def _cuts(text: str, n: int) -> list[int]:
    """0, up to n - 1 places about len(text) / n apart where a line starts a
    definition, and len(text)."""
    cuts = [0]
    for k in range(1, n):
        found = _DEFINITION_LINE.search(text, max(cuts[-1] + 1, k * len(text) // n))
        if found is None:
            break
        cuts.append(found.start())
    return [*cuts, len(text)]


def _segments(text: str, file: _TextFile, cuts: list[int]
              ) -> Iterator[tuple[str, int, int, int, int]]:
    """_split_segment's arguments for the segments of `text` (in `file`)
    between `cuts`."""
    at = file.byte_offsets(text, cuts)
    line = 1
    for k in range(len(cuts) - 1):
        yield file.path, at[k], at[k + 1], cuts[k], line
        line += text.count("\n", cuts[k], cuts[k + 1])


def _joined(text: str, cuts: list[int], segments: list[_Segment | None]
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


def _chunk_parts(segments: list[_Segment | None]) -> list[tuple[int, list[Row]]] | None:
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


def _checked(future: Future[_Result | _Failure]) -> _Result:
    """A worker's result, its error raised here."""
    result = future.result()
    if isinstance(result, _Failure):
        raise result.exception()
    return result


def start_workers() -> None:
    """Starts the workers' server now, for a caller with other things to do
    before it imports a big module with `jobs` > 1 (the CLI loads MLIR)."""
    _forkserver()


def _forkserver() -> multiprocessing.context.BaseContext:
    """The start method for workers, its server started now (it imports
    the frontend while the caller writes the module to a file).

    `forkserver`: a worker is forked from a server process that has imported
    the frontend already and built its tables (worker.py); `spawn` starts
    and imports a fresh interpreter per worker, one after the other (on the
    16-core host, the 16th worker of the 80 MB module started its work 16 s
    in). Not `fork`: this process may hold threads (MLIR's, the caller's),
    which fork would break.
    """
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["zmlir.frontend.worker"])
    multiprocessing.forkserver.ensure_running()
    return ctx
