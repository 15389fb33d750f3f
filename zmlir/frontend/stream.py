"""Big PTX modules, parsed and imported one function at a time.

Parsing a whole module into one AST and importing it into one MLIR text
holds both at once: about 25 times the size of the PTX. Functions are
independent, so here:

1. `split` (split.py) finds the top-level function definitions with a scan
   of braces, comments and strings, and makes the *module text*: the PTX
   with every function body replaced by `;` (and as many newlines as the
   body had), so what remains is the header, the variables and a
   declaration of every function, each at its own line and column.
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
   (context.py: what a process needs for 2 and 3.)

With `jobs > 1` (pool.py) all of that is done by worker processes: the
split in segments of the module, the module text in parts, the batches.

Here, results are joined in the module's order, so the output is the same text as
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

from collections.abc import Iterator
from dataclasses import dataclass

from zmlir.diagnostics import CompileError
from zmlir.frontend import ast
from zmlir.frontend.context import BatchResult, ImportContext, NativeError, Unsplittable
from zmlir.frontend.declarations import Unreadable
from zmlir.frontend.parser import parse_ptx
from zmlir.frontend.pool import Workers, start_workers
from zmlir.frontend.split import Span, split

__all__ = ["STREAM_MIN_BYTES", "Imported", "NativeError", "Span", "Unsplittable",
           "import_streamed", "split", "start_workers"]

# Below this size a module is parsed whole: splitting costs more than it saves.
STREAM_MIN_BYTES = 1 << 20
# PTX bytes per unit of work (one native parse, one message to a worker).
BATCH_BYTES = 256 << 10
# Module-text bytes per part a worker parses for the output (pool.py).
PART_BYTES = BATCH_BYTES


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
    workers = Workers(jobs, filename, buffer) if jobs > 1 else None
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
            ctx = ImportContext(parse_ptx(module_text, filename), filename, buffer)
            part = ctx.module_part(0, 1, verify, printing)
            results: Iterator[BatchResult] = (ctx.batch(_pieces(text, b), *options)
                                              for b in batches)
        else:
            groups = max(1, len(module_text) // PART_BYTES)
            workers.submit(text, module_text, groups, batches, options)
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
