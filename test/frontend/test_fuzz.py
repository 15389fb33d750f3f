"""Fuzzing `zmlir compile --emit=ptx-mlir` with mutated corpus PTX.

Each input is a corpus module (test/corpus, nvcc output) with a few random
edits: byte flips, token deletions and duplications, line duplications and
swaps, insertions of PTX punctuation, truncation. It goes through the CLI's
main() in this process. Every run must end in exactly one of two ways:

- exit code 0 and the output file written;
- exit code 1, exactly one line on stderr, `FILE:LINE:COL: error: ...` (or
  `FILE: error: ...` for errors without a position), and no output file or
  temporary left behind.

Anything else (a traceback, exit code 70 for an internal error, several
lines, a hang) is a bug. This is the CI-sized batch; bench/fuzz_long.py runs
the same check on 100,000+ inputs.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpus.build import Case, compile_all, compile_case, have_nvcc
from support import CUDA_DIR, LIT_INPUTS

from zmlir.cli import main

# ---------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------

_TOKENS = re.compile(r"\s+|[A-Za-z0-9_$%.:]+|.", re.DOTALL)
_PUNCT = "{}[]();,.%@!|_-+<>=:/*\"'#\\\n\t 0123456789xfUe"
_WORDS = (".reg", ".param", ".entry", ".func", "{", "}", ";", ".loc 1 2 3", ".file 1 \"x\"",
          "[%rd1+4]", "{%r1, %r2}", "@%p1", "0f3F800000", "-", "ld.global.u32", "%r1",
          ".shared", ".align 8", "_", "$L__BB0_1:", "//", "/*", "*/", ".pragma \"x\";",
          "call.uni (retval0), f, (param0);", "0x", "99999999999999999999", "<100>")


def _flip(rng: random.Random, s: str) -> str:
    i = rng.randrange(len(s))
    c = rng.choice(_PUNCT) if rng.random() < 0.7 else chr(rng.randrange(1, 0x250))
    return s[:i] + c + s[i + 1 :]


def _insert(rng: random.Random, s: str) -> str:
    i = rng.randrange(len(s) + 1)
    return s[:i] + rng.choice(_WORDS) + s[i:]


def _token_edit(rng: random.Random, s: str) -> str:
    toks = _TOKENS.findall(s)
    i = rng.randrange(len(toks))
    if rng.random() < 0.5:
        del toks[i]
    else:
        toks.insert(i, toks[i])
    return "".join(toks)


def _line_edit(rng: random.Random, s: str) -> str:
    lines = s.split("\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if rng.random() < 0.5:
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _truncate(rng: random.Random, s: str) -> str:
    return s[: rng.randrange(len(s))]


MUTATORS: tuple[Callable[[random.Random, str], str], ...] = (
    _flip, _flip, _insert, _token_edit, _token_edit, _line_edit, _truncate,
)


def mutate(rng: random.Random, text: str) -> str:
    """`text` with 1 to 4 random edits (truncation at most once, last)."""
    for _ in range(rng.choice((1, 1, 1, 2, 3, 4))):
        if not text:
            break
        text = rng.choice(MUTATORS)(rng, text)
    return text


def seeds(max_bytes: int = 12_000) -> list[str]:
    """Corpus modules small enough to run many times a second, and the kernels
    of test/cuda (which the importer takes whole, so mutations reach it)."""
    texts = {p for p in compile_all().values() if len(p) <= max_bytes}
    texts |= {compile_case(Case(cu, "sm_80")) for cu in sorted(CUDA_DIR.glob("*.cu"))}
    texts |= {p.read_text() for p in sorted(LIT_INPUTS.glob("*.ptx"))}
    return sorted(texts, key=len)


# ---------------------------------------------------------------------------
# One run through the CLI
# ---------------------------------------------------------------------------


@dataclass
class Outcome:
    code: int
    stderr: str
    problem: str | None  # None when the run ended in one of the two allowed ways


class _Timeout(BaseException):
    """Not an Exception: main() must not catch it as an internal error."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _Timeout


def run_cli(text: str, workdir: Path, timeout_s: int = 20) -> Outcome:
    src = workdir / "in.ptx"
    out = workdir / "out.mlir"
    src.write_text(text, encoding="utf-8", errors="surrogateescape")
    out.unlink(missing_ok=True)
    err = io.StringIO()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(timeout_s)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["compile", str(src), "--emit=ptx-mlir", "-o", str(out)])
    except SystemExit as e:  # argparse; never expected here
        code = e.code if isinstance(e.code, int) else 2
    except _Timeout:
        return Outcome(-1, err.getvalue(), f"hang: no result within {timeout_s} s")
    except BaseException as e:  # any escape from main() is the finding
        return Outcome(-2, err.getvalue(), f"exception escaped main(): {type(e).__name__}: {e}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    stderr = err.getvalue()
    leftovers = [p.name for p in workdir.iterdir() if p.name.startswith(".zmlir-")]
    if leftovers:
        return Outcome(code, stderr, f"temporary files left: {leftovers}")
    if code == 0:
        problem = None if out.exists() else "exit 0 without output"
        return Outcome(code, stderr, problem)
    if code != 1:
        return Outcome(code, stderr, f"exit code {code}")
    if out.exists():
        return Outcome(code, stderr, "output file left after an error")
    lines = stderr.splitlines()
    pattern = re.compile(rf"^{re.escape(str(src))}(?::\d+:\d+)?: error: \S")
    if len(lines) != 1 or pattern.match(lines[0]) is None:
        return Outcome(code, stderr, "diagnostic is not one 'file:line:col: error:' line")
    return Outcome(code, stderr, None)


def fuzz(count: int, seed: int, workdir: Path, texts: list[str]) -> Iterator[tuple[str, Outcome]]:
    rng = random.Random(seed)
    for _ in range(count):
        text = mutate(rng, rng.choice(texts))
        yield text, run_cli(text, workdir)


# ---------------------------------------------------------------------------
# The CI batch
# ---------------------------------------------------------------------------

BATCH = int(os.environ.get("ZMLIR_FUZZ_BATCH", "2000"))

# Internal errors of the importer found by fuzzing, by their message; these
# are reported to the importer's owner and counted, not failed on, here.
KNOWN_IMPORTER_CRASHES: tuple[str, ...] = ()


@pytest.mark.skipif(not have_nvcc(), reason="nvcc is not installed (the seeds are its output)")
def test_mutated_corpus_through_cli(tmp_path: Path) -> None:
    texts = seeds()
    assert len(texts) >= 5
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    problems: list[tuple[str, Outcome]] = []
    accepted = rejected = 0
    for text, outcome in fuzz(BATCH, seed=20260101, workdir=tmp_path, texts=texts):
        if outcome.problem is None:
            accepted += outcome.code == 0
            rejected += outcome.code == 1
        elif not any(k in outcome.stderr for k in KNOWN_IMPORTER_CRASHES) or not outcome.stderr:
            problems.append((text, outcome))
    # Both outcomes occur: the mutations neither always break nor never break.
    assert rejected > BATCH // 4 and accepted > BATCH // 100, (accepted, rejected)
    if problems:
        text, first = problems[0]
        (tmp_path / "first-problem.ptx").write_text(text, errors="surrogateescape")
        pytest.fail(f"{len(problems)} of {BATCH} runs misbehaved; first: {first.problem}: "
                    f"{first.stderr.strip()[:500]} (input in {tmp_path / 'first-problem.ptx'})")


# ---------------------------------------------------------------------------
# The per-function path (zmlir/frontend/stream.py) against the whole-module one
# ---------------------------------------------------------------------------

STREAM_BATCH = int(os.environ.get("ZMLIR_FUZZ_STREAM_BATCH", "400"))


WORKER_BATCH = int(os.environ.get("ZMLIR_FUZZ_WORKER_BATCH", "60"))


def _compile(text: str, stream_min: int, jobs: int = 1) -> tuple[str, str]:
    """("ok", ptx-mlir text) or ("error", the diagnostic); anything else raises."""
    from zmlir import compile_module
    from zmlir.diagnostics import CompileError

    try:
        return "ok", compile_module(text, emit="ptx-mlir", filename="f.ptx",
                                    stream_min=stream_min, jobs=jobs).stages["ptx-mlir"]
    except CompileError as e:
        return "error", str(e)


@pytest.mark.skipif(not have_nvcc(), reason="nvcc is not installed (the seeds are its output)")
def test_mutated_corpus_per_function_same_outcome() -> None:
    """Mutated corpus modules imported one function at a time: the same
    text, or the same diagnostic, as the whole-module path."""
    rng = random.Random(20261201)
    texts = seeds()
    outcomes = {"ok": 0, "error": 0}
    for _ in range(STREAM_BATCH):
        text = mutate(rng, rng.choice(texts))
        whole = _compile(text, 1 << 62)
        assert _compile(text, 0) == whole, text
        outcomes[whole[0]] += 1
    assert min(outcomes.values()) > STREAM_BATCH // 100, outcomes


@pytest.mark.skipif(not have_nvcc(), reason="nvcc is not installed (the seeds are its output)")
def test_mutated_corpus_in_workers_same_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same in two worker processes, a function per batch and the module
    text in parts of 1 kB (declarations.py: items parsed as looked up, the
    parts checked against the scan)."""
    from zmlir.frontend import stream

    monkeypatch.setattr(stream, "BATCH_BYTES", 1)
    monkeypatch.setattr(stream, "PART_BYTES", 1000)
    texts = seeds()
    for text in texts:  # unmutated, each is imported by the workers (no fallback)
        one, two = (stream.import_streamed(text, "f.ptx", jobs=jobs) for jobs in (1, 2))
        assert one is not None and two is not None and two.text() == one.text()
    rng = random.Random(20261202)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(WORKER_BATCH):
        text = mutate(rng, rng.choice(texts))
        whole = _compile(text, 1 << 62)
        assert _compile(text, 0, jobs=2) == whole, text
        outcomes[whole[0]] += 1
    assert min(outcomes.values()) > WORKER_BATCH // 100, outcomes
