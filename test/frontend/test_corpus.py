"""The nvcc corpus (test/corpus/*.cu for sm_75, sm_80, sm_90, sm_100): all of
its PTX parses, and imports, verifies and round-trips through zmlir-opt.

Parsing is checked against the text itself: every one-statement instruction
line of the PTX is an instruction of the AST at that line with the same
opcode and modifiers, and every function the text defines is in the module.

Every case imports: there are no known import failures.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from corpus.build import REPO, Case, cases, compile_all, have_nvcc
from support import tool

from zmlir import compile_module
from zmlir.frontend import parse_ptx
from zmlir.frontend.ast import Block, Instruction, Module, Statement

pytestmark = pytest.mark.skipif(not have_nvcc(), reason="nvcc is not installed")

@pytest.fixture(scope="session")
def corpus() -> dict[str, str]:
    """Case name -> PTX, for every buildable case; nvcc runs once per session
    (and is cached on disk across sessions, see corpus/build.py)."""
    return {case.name: ptx for case, ptx in compile_all().items()}


def _params() -> list[object]:
    return list(_iter_params())


def _iter_params() -> Iterator[object]:
    for case in cases():
        marks: list[pytest.MarkDecorator] = []
        if case.skip is not None:
            marks.append(pytest.mark.skip(reason=case.skip))
        yield pytest.param(case, id=case.name, marks=marks)


def _walk(stmts: tuple[Statement, ...] | None) -> Iterator[Statement]:
    for s in stmts or ():
        yield s
        if isinstance(s, Block):
            yield from _walk(s.body)


def instructions(m: Module) -> Iterator[Instruction]:
    for f in m.functions:
        for s in _walk(f.body):
            if isinstance(s, Instruction):
                yield s


def variant(i: Instruction) -> str:
    return ".".join((i.opcode, *i.modifiers))


# One instruction alone on a line, as nvcc prints them: optional guard, the
# mnemonic, operands, `;`, and maybe a `//` comment.
_INSTRUCTION_LINE = re.compile(
    r"^\s*(?:@!?%?[\w$]+\s+)?([a-z][a-z0-9_]*(?:\.[\w:]+)*)(?!\s*:)(?:\s[^;{}]*)?;\s*(?://.*)?$"
)
_DEFINED_FUNCTION = re.compile(r"^(?:\.\w+\s+)*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)",
                               re.MULTILINE)


@pytest.mark.parametrize("case", _params())
def test_parses(case: Case, corpus: dict[str, str]) -> None:
    ptx = corpus[case.name]
    m = parse_ptx(ptx, f"{case.name}.ptx")
    assert m.target[0] == case.arch and m.address_size == 64
    # The fast path (fastpath.py) gives exactly lark's AST.
    assert m == parse_ptx(ptx, f"{case.name}.ptx", fast=False)
    by_line: dict[int, list[str]] = {}
    for i in instructions(m):
        by_line.setdefault(i.loc.line, []).append(variant(i))
    checked = 0
    for n, line in enumerate(ptx.splitlines(), 1):
        match = _INSTRUCTION_LINE.match(line)
        if match is not None:
            assert by_line.get(n) == [match.group(1)], (n, line)
            checked += 1
    assert checked > 20
    defined = {f.name for f in m.functions if f.body is not None}
    # Declarations (`;` after the signature) are in the module too, but only
    # definitions are checked: the regex can't tell them apart.
    assert set(_DEFINED_FUNCTION.findall(ptx)) <= {f.name for f in m.functions}
    assert defined


@pytest.mark.parametrize("case", _params())
def test_imports_and_round_trips(case: Case, corpus: dict[str, str], tmp_path: Path) -> None:
    ptx = corpus[case.name]
    mlir = compile_module(ptx, emit="ptx-mlir", filename=f"{case.name}.ptx")
    text = mlir.stages["ptx-mlir"]
    assert isinstance(text, str) and "func.func" in text
    # One function at a time (zmlir/frontend/stream.py) gives the same text.
    streamed = compile_module(ptx, emit="ptx-mlir", filename=f"{case.name}.ptx", stream_min=0)
    assert streamed.stages["ptx-mlir"] == text
    # print -> parse -> print gives back the same text.
    opt = tool("zmlir-opt") or str(REPO / ".venv" / "bin" / "zmlir-opt")
    src = tmp_path / "in.mlir"
    src.write_text(text)
    out = subprocess.run([opt, str(src)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip("\n") == text.rstrip("\n")


def test_instruction_variant_coverage(corpus: dict[str, str]) -> None:
    """Counts the distinct opcode+modifier variants in the corpus; the list is
    written to build/corpus-variants.txt for reports."""
    variants: set[str] = set()
    for name, ptx in corpus.items():
        variants.update(variant(i) for i in instructions(parse_ptx(ptx, name)))
    out = REPO / "build" / "corpus-variants.txt"
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join(f"{v}\n" for v in sorted(variants)))
    opcodes = {v.split(".")[0] for v in variants}
    print(f"corpus: {len(variants)} instruction variants, {len(opcodes)} opcodes")
    # Floors well below today's numbers: a drop means the corpus lost coverage.
    assert len(variants) >= 450 and len(opcodes) >= 75
    for must in ("wmma", "mma", "ldmatrix", "cp", "tex", "suld", "sust", "atom", "red", "shfl",
                 "vote", "match", "redux", "call", "brx", "mbarrier", "fence", "cvt", "barrier"):
        assert must in opcodes, must
