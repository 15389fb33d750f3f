"""Importing one function at a time (zmlir/frontend/stream.py): the same
text, the same diagnostics at the same file:line:col, in one process or in
several, as parsing the module whole."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from corpus.build import compile_all, have_nvcc

from zmlir import compile_module
from zmlir.diagnostics import CompileError
from zmlir.frontend import ast, importer, parse_ptx, pool, split, stream
from zmlir.frontend.declarations import Chunk, chunks, joined_chunks
from zmlir.frontend.importer import import_module

HEADER = ".version 8.5\n.target sm_80\n.address_size 64\n"

MODULE = HEADER + """
.global .align 4 .u32 counter = 3;
.extern .func (.param .b32 r) ext (.param .b32 a);

// .globl	first
.visible .entry first(.param .u64 out)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	.shared .align 4 .b8 tile[64];
	ld.param.u64 %rd1, [out];
	ld.global.u32 %r1, [counter];
	st.shared.u32 [tile], %r1;
	{
	.param .b32 param0;
	st.param.b32 [param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), second, (param0);
	ld.param.b32 %r2, [retval0+0];
	}
	st.global.u32 [%rd1], %r2;
	ret;
}
.weak .func (.param .b32 r) second (.param .b32 a) { .reg .b32 %x; ld.param.b32 %x, [a];
	st.param.b32 [r], %x; ret; } .global .u32 after = 1;
.visible .entry third() .maxntid 32, 1, 1
{
	/* a } in a comment */ ret; // and { here
}
"""


def _whole(text: str) -> tuple[str, str]:
    imported = import_module(parse_ptx(text, "m.ptx"), "m.ptx")
    printed = compile_module(text, emit="ptx-mlir", filename="m.ptx",
                             stream_min=1 << 40).stages["ptx-mlir"]
    return imported, printed


def test_split_finds_definitions_and_keeps_positions() -> None:
    parts = stream.split(MODULE)
    assert parts is not None
    module_text, spans = parts
    texts = [MODULE[s.start:s.end] for s in spans]
    assert len(texts) == 3
    assert texts[0].startswith(".visible .entry first") and texts[0].endswith("}")
    assert texts[1].startswith(".weak .func") and texts[2].startswith(".visible .entry third")
    # The module text has every line where it was, bodies replaced by `;`.
    assert module_text.count("\n") == MODULE.count("\n")
    lines, original = module_text.splitlines(), MODULE.splitlines()
    after = next(i for i, line in enumerate(original) if ".global .u32 after" in line)
    assert lines[after].index(".global") == original[after].index(".global")
    (s1,) = [s for s in spans if MODULE[s.start:s.end].startswith(".weak")]
    assert (s1.line, s1.col) == (after, 1)  # the line before `after`'s
    m = parse_ptx(module_text)
    assert [f.name for f in m.functions] == ["ext", "first", "second", "third"]
    assert all(f.body is None for f in m.functions)


@pytest.mark.parametrize("text", [
    HEADER + ".visible .entry k() { ret;",  # unbalanced
    HEADER + ".visible .entry k() { ret; } }",
    HEADER + ".visible .entry k() { /* ret; }",  # unterminated comment
    HEADER + '.visible .entry k() { mov.u32 %r1, "x; }',  # unterminated string
])
def test_split_declines_what_it_cannot_split(text: str) -> None:
    assert stream.split(text) is None


def _segments_split(text: str, cuts: list[int], tmp_path: Path
                    ) -> tuple[tuple[str, list[stream.Span]] | None, list[Chunk] | None]:
    """What Workers.split makes of `text` cut at `cuts`, in this process,
    and what the workers make of the module text's chunks."""
    data = text.encode()
    path = tmp_path / "m.ptx"
    path.write_bytes(data)
    file = pool._TextFile(str(path), len(data) == len(text))
    segments = [pool._split_segment(*args) for args in pool._segments(text, file, cuts)]
    joined = split.joined_segments(text, cuts, segments)
    if joined is None:
        return None, None
    parts = split.chunk_parts(segments)
    assert parts is not None
    return joined, joined_chunks(joined[0], parts)


def _unmarked(found: list[Chunk] | None) -> list[Chunk] | None:
    """`found` without the definition marks, which chunks() doesn't make."""
    return None if found is None else [dataclasses.replace(c, definition=False) for c in found]


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_segments_split_as_whole(n: int, tmp_path: Path) -> None:
    # Non-ASCII: the segments are read from the file by their bytes.
    text = MODULE.replace("and { here", "and { here, déjà")
    cuts = split.segment_cuts(text, n)
    # Cut where a line starts a definition or declaration (`.extern`).
    assert 2 < len(cuts) <= n + 1
    assert all(text.startswith((".visible", ".weak", ".extern"), c) for c in cuts[1:-1])
    joined, found = _segments_split(text, cuts, tmp_path)
    assert joined == stream.split(text)
    assert joined is not None and found is not None and _unmarked(found) == chunks(joined[0])
    assert [c.name for c in found].count("second") == 1
    assert [c.name for c in found if c.definition] == ["first", "second", "third"]


@pytest.mark.skipif(not have_nvcc(), reason="nvcc is not installed")
def test_corpus_segments_split_as_whole(tmp_path: Path) -> None:
    for case, ptx in compile_all().items():
        joined, found = _segments_split(ptx, split.segment_cuts(ptx, 5), tmp_path)
        assert joined == stream.split(ptx), case.name
        assert joined is not None and found is not None, case.name
        assert _unmarked(found) == chunks(joined[0]), case.name
        # Every definition's header is marked (but one in the first chunk,
        # which holds the module's header too).
        marked = {c.decl_loc for c in found if c.definition}
        headers = {(s.line, s.col) for s in joined[1]}
        assert marked <= headers and len(marked) >= len(headers) - 1, case.name


@pytest.mark.parametrize("before, cut", [
    ('.pragma "nounroll"\n', ".visible .entry third"),  # may reach past the cut
    ("// .visible\n", ".visible .entry third"),  # the definition starts in the comment
    ("/*\n", ".visible .entry third"),  # a comment over the cut (closed below)
    ("{\n", ".visible .entry third"),  # braces over the cut
    ("// .section\n", ".visible .entry third"),  # whole, no definition follows
])
def test_segments_decline_what_may_read_otherwise(before: str, cut: str,
                                                  tmp_path: Path) -> None:
    text = MODULE.replace(cut, before + cut).replace("// and { here", "// and { here */ }")
    at = text.index(cut)
    assert _segments_split(text, [0, at, len(text)], tmp_path) == (None, None)
    joined, found = _segments_split(text, [0, len(text)], tmp_path)
    assert joined == stream.split(text)
    assert _unmarked(found) == (None if joined is None else chunks(joined[0]))


def test_segment_chunks_join_across_an_item_of_the_part(tmp_path: Path) -> None:
    # `.file` has no `;`: in its part, an item of its own; whole, part of the next.
    cut = ".visible .entry third"
    text = MODULE.replace(cut, '.file 2 "b.cu"\n' + cut)
    joined, found = _segments_split(text, [0, text.index(cut), len(text)], tmp_path)
    assert joined == stream.split(text) and joined is not None
    assert _unmarked(found) == chunks(joined[0])


def test_same_text_as_whole_module() -> None:
    imported, printed = _whole(MODULE)
    out = stream.import_streamed(MODULE, "m.ptx")
    assert out is not None and out.text() == imported
    assert [f.name for f in out.entries] == ["first", "third"]
    assert out.entries == _kernels(MODULE)
    out = stream.import_streamed(MODULE, "m.ptx", verify=True, keep_text=False)
    assert out is not None and out.printed() == printed
    assert compile_module(MODULE, emit="ptx-mlir", filename="m.ptx",
                          stream_min=0).stages["ptx-mlir"] == printed


def test_small_batches_same_text(monkeypatch: pytest.MonkeyPatch) -> None:
    imported, printed = _whole(MODULE)
    monkeypatch.setattr(stream, "BATCH_BYTES", 1)  # one function per batch
    out = stream.import_streamed(MODULE, "m.ptx", verify=True)
    assert out is not None and out.text() == imported and out.printed() == printed


def test_parallel_same_text(monkeypatch: pytest.MonkeyPatch) -> None:
    imported, printed = _whole(MODULE)
    # One function per batch: this process takes the first, a worker the others.
    monkeypatch.setattr(stream, "BATCH_BYTES", 1)
    out = stream.import_streamed(MODULE, "m.ptx", jobs=2, verify=True)
    assert out is not None and out.text() == imported and out.printed() == printed
    assert out.entries == _kernels(MODULE)
    # Not ASCII: the workers read the module's files by the bytes of each piece.
    text = MODULE.replace("and { here", "and { here, déjà").replace("// .globl", "// ½ .globl")
    out = stream.import_streamed(text, "m.ptx", jobs=2, verify=True)
    assert out is not None and out.text() == imported and out.printed() == printed


def _kernels(text: str) -> tuple[ast.Function, ...]:
    return tuple(dataclasses.replace(f, body=None) for f in parse_ptx(text, "m.ptx").functions
                 if f.kind == "entry")


def _error(text: str, **kwargs: object) -> str:
    with pytest.raises(CompileError) as e:
        compile_module(text, emit="ptx-mlir", filename="m.ptx", **kwargs)  # type: ignore[arg-type]
    return str(e.value)


@pytest.mark.parametrize("bad, good", [
    ("st.global.u32 [%rd1], %r2;", "st.global.u32 [%rd1], %r2 %r2;"),  # syntax, in a body
    ("st.global.u32 [%rd1], %r2;", "st.global.u32 [%rd1], %r9;"),  # import: undeclared
    ("st.param.b32 [r], %x; ret; }", "st.param.b32 [r], %y; ret; }"),  # on a shared line
    (".global .u32 after = 1;", ".global .u32 after = 1"),  # module level
    (".global .align 4 .u32 counter = 3;",  # a module variable defined twice
     ".global .align 4 .u32 counter = 3;\n.global .align 4 .u32 counter = 4;"),
    (".global .u32 after = 1;", ".global .u32 after[4611686018427387904];"),  # larger than memory
])
def test_same_diagnostics(bad: str, good: str) -> None:
    text = MODULE.replace(bad, good)
    assert text != MODULE
    whole = _error(text, stream_min=1 << 40)
    assert whole.startswith("m.ptx:") and ": error: " in whole
    assert _error(text, stream_min=0) == whole
    assert _error(text, stream_min=0, jobs=2) == whole


def test_mlir_rejection_is_located(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module MLIR rejects (an importer bug) gives the internal error at
    the PTX line, on either path."""
    real = importer.FunctionImporter.run

    def broken(self: importer.FunctionImporter) -> str:
        text = real(self)
        return text.replace("ptx.ret", "ptx.ret %nonsense : i32", 1) if (
            self.fn.name == "third") else text

    monkeypatch.setattr(importer.FunctionImporter, "run", broken)
    with pytest.raises(stream.NativeError):  # the batch, without and then with locations
        stream._import_streamed(MODULE, "m.ptx", 1, True, True, False, "<buffer>")
    line = next(n for n, t in enumerate(MODULE.splitlines(), 1) if "a } in a comment" in t)
    message = _error(MODULE, stream_min=0)
    assert message.startswith(f"m.ptx:{line}:") and "internal error" in message, message
    assert _error(MODULE, stream_min=1 << 40) == message
    # Lowered, a streamed module is verified once, whole: the same error.
    with pytest.raises(CompileError) as e:
        compile_module(MODULE, emit="std-mlir", filename="m.ptx", stream_min=0)
    assert str(e.value) == message


def test_error_falls_back_to_the_whole_module() -> None:
    """With an error, the per-function path gives up (the whole-module path
    then reports what it always did: a syntax error before an earlier
    function's import error)."""
    text = MODULE.replace("st.global.u32 [%rd1], %r2;", "st.global.u32 [%rd1], %r9;").replace(
        "/* a } in a comment */ ret;", "ret ,;")
    assert stream.import_streamed(text, "m.ptx") is None
    message = _error(text, stream_min=0)
    assert ": error: " in message and "%r9" not in message
