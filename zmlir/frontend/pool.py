"""The worker processes of a streamed import (stream.py, `jobs` > 1): they
split the module in segments, parse its module text in parts and import
the batches of functions; this process hands the work out through files
and collects the results (`Workers`). The workers are forked from a
server that has the frontend imported (worker.py)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend.context import BatchResult, ImportContext, ModulePart, NativeError, Unsplittable
from zmlir.frontend.declarations import Chunk, Declarations, Row, Unreadable, chunks, joined_chunks
from zmlir.frontend.parser import parse_ptx
from zmlir.frontend.split import (
    Segment,
    Span,
    chunk_parts,
    joined_segments,
    segment_cuts,
    split,
    split_segment,
)


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
    """Where a worker reads the module text (written once by Workers: sent
    with each worker's start, 16 copies of the 80 MB module's 9.5 MB took
    the main process 0.8 s), and the names its errors are reported under."""

    path: str
    filename: str
    buffer: str
    # Where the module text's chunks are, by part (see Workers.split), if
    # they were found there.
    chunks: str | None = None


# A worker process's context, or why there is none, and the file it is of.
_WORKER: tuple[_ModuleFile, ImportContext | _Failure] | None = None


def _worker_context(source: _ModuleFile) -> ImportContext | _Failure:
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
          ) -> ImportContext | _Failure:
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
            return ImportContext(declarations.module, filename, buffer, declarations)
    try:
        return ImportContext(parse_ptx(module_text, filename), filename, buffer)
    except _CARRIED as e:  # every task of this module then returns it
        return _failure(e)


def _task(source: _ModuleFile, method: Callable[..., _Result], *args: object
          ) -> _Result | _Failure:
    """`method` of the worker's context for `source` (ImportContext.batch,
    .module_part) on `args`; an error, as data."""
    context = _worker_context(source)
    if isinstance(context, _Failure):
        return context
    try:
        return method(context, *args)
    except _CARRIED as e:
        return _failure(e)


def _split_segment(path: str, start: int, end: int, offset: int, line: int
                   ) -> Segment | None:
    """split_segment() of the segment of the module in `path` from byte
    `start` to `end` (at `offset`, and line `line`, in the module)."""
    return split_segment(_read(path, start, end), offset, line)


def _batch(context: ImportContext, pieces: _Pieces, *options: bool) -> BatchResult:
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


class Workers:
    """`jobs` worker processes splitting the module, then importing the
    module text and the batches.

    The split: each worker scans a segment of the module, cut where a line
    starts a definition (segment_cuts), and finds its module text's chunks;
    this process joins them (joined_segments; split() whole if the segments
    may read otherwise). (This process splitting segments too while the workers
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
        self.parts: list[Future[ModulePart | _Failure]] = []
        self.pending: deque[Future[BatchResult | _Failure]] = deque()

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
        cuts = segment_cuts(text, self.jobs)
        if len(cuts) <= 2:
            return split(text)
        self.input = self._file(text)
        futures = [self.pool.submit(_split_segment, *args)
                   for args in _segments(text, self.input, cuts)]
        segments = [future.result() for future in futures]
        joined = joined_segments(text, cuts, segments)
        if joined is None:  # the segments may not read as the whole does, which says
            return split(text)
        # The workers join the module text's chunks (declarations.joined_chunks).
        self.chunks = chunk_parts(segments)
        return joined

    def submit(self, text: str, module_text: str, groups: int, batches: Iterator[list[Span]],
               options: tuple[bool, bool, bool]) -> None:
        """Queues the module text, in `groups` parts, and the batches of `text`."""
        module = self._file(module_text)
        chunks_path = None
        if self.chunks is not None:
            chunks_path = self._written(pickle.dumps(self.chunks, pickle.HIGHEST_PROTOCOL),
                                        ".chunks")
        source = _ModuleFile(module.path, self.filename, self.buffer, chunks_path)
        self.parts = [self.pool.submit(_task, source, ImportContext.module_part, k, groups,
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

    def module_part(self) -> ModulePart:
        return ModulePart.joined([_checked(future) for future in self.parts])

    def results(self) -> Iterator[BatchResult]:
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


def _segments(text: str, file: _TextFile, cuts: list[int]
              ) -> Iterator[tuple[str, int, int, int, int]]:
    """_split_segment's arguments for the segments of `text` (in `file`)
    between `cuts`."""
    at = file.byte_offsets(text, cuts)
    line = 1
    for k in range(len(cuts) - 1):
        yield file.path, at[k], at[k + 1], cuts[k], line
        line += text.count("\n", cuts[k], cuts[k + 1])


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
