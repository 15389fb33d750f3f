"""PTX text -> zmlir.frontend.ast, with lark's LALR parser.

The grammar lives in grammar/ptx.lark. The transformer (transformer.py) is
handed to the Lark constructor, so the LALR parser calls it on every
reduction and the AST is built in one pass with no intermediate parse tree;
runs of plain statements take fastpath.py's lexer past lark altogether.
Every lark error is turned into a CompileError with a line and column
(syntax_errors.py); nothing else escapes.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import threading

from lark import Lark, Token
from lark.exceptions import UnexpectedInput

from zmlir.diagnostics import CompileError
from zmlir.files import cache_dir, cache_enabled, check_private_file, private_dir
from zmlir.frontend import ast
from zmlir.frontend.collector import without_collector
from zmlir.frontend.fastpath import FastLexer
from zmlir.frontend.syntax_errors import diagnose
from zmlir.frontend.transformer import STATE, AstBuilder, loc_of, parse_number

__all__ = ["parse_ptx"]

_LOCK = threading.Lock()


@without_collector
def parse_ptx(text: str, filename: str = "<input>", *, fast: bool = True) -> ast.Module:
    """Parse a whole PTX module; raise CompileError (with `filename`) on bad input.

    `fast=False` parses every statement with lark, bypassing fastpath.py
    (same result, slower; for tests).
    """
    parser = _parser()
    # The lexer callbacks and the transformer share one per-parse state
    # (STATE); the lock keeps concurrent parses in threads from mixing it up.
    with _LOCK:
        STATE.reset()
        lexer = parser.parser.lexer
        assert isinstance(lexer, FastLexer)
        lexer.enabled = fast
        try:
            return _parse_locked(parser, text, filename)
        finally:
            STATE.reset()
            lexer.enabled = True


def _parse_locked(parser: Lark, text: str, filename: str) -> ast.Module:
    try:
        module = parser.parse(text)
    except CompileError as e:  # raised by the transformer, which doesn't know the filename
        raise e.with_filename(filename) from None
    except UnexpectedInput as e:
        raise diagnose(e, text, filename, parser) from None
    except RecursionError:  # only from absurd nesting: the LALR parser itself doesn't recurse
        raise CompileError("blocks or braces nested too deeply", filename) from None
    assert isinstance(module, ast.Module)
    return dataclasses.replace(module, filename=filename)


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    # Building the LALR tables takes 0.1 s, loading them from lark's cache
    # (which rebuilds it when the grammar or lark changes) a 10th of that.
    lark = Lark.open(
        "grammar/ptx.lark",
        rel_to=__file__,
        parser="lalr",
        lexer="contextual",
        transformer=AstBuilder(),
        maybe_placeholders=True,
        lexer_callbacks={"LOC": _on_loc, "OPCODE": _on_opcode},
        cache=_tables_cache(),
    )
    # Runs of plain statements bypass lark's lexer and parser (fastpath.py).
    lalr = lark.parser.parser.parser  # ParsingFrontend -> LALR_Parser -> _Parser
    lark.parser.lexer = FastLexer(lark.parser.lexer, lalr.parse_table, _fast_number, _loc_value,
                                  STATE)
    return lark


def _tables_cache() -> str | bool:
    """Where lark keeps the parser's tables, or False (no cache)."""
    if not cache_enabled():
        return False
    # lark unpickles the file: only from a directory no other user can write.
    path = cache_dir() / "ptx-grammar.lark-cache"
    try:
        private_dir(path.parent)
        check_private_file(path)
    except OSError:
        return False  # lark builds the tables then, as without a cache
    return str(path)


def _fast_number(text: str, negative: bool) -> ast.IntImm | ast.FloatImm:
    return parse_number(Token("NUMBER", text, 0, 1, 1), negative)


# ---------------------------------------------------------------------------
# `.loc`: the CUDA source position of the instructions that follow
# ---------------------------------------------------------------------------
#
# `.loc` is an ignored terminal, so it may appear between any two tokens. Its
# lexer callback records the position; each OPCODE token lexed after it is
# tagged with that position (by offset in the text), and the `instruction`
# callback picks the tag up. Tagging at lex time matters: LALR reduces an
# instruction only after lexing the token after its `;`, which may be the
# next `.loc` already.

# `.loc file line column`, then optional `, function_name ...`, `, inlined_at ...`.
_LOC_RE = re.compile(r"\.loc[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)[ \t]*(?:,|//|$)")


def _loc_value(text: str) -> tuple[int, int, int] | None:
    m = _LOC_RE.match(text)
    if m is None:
        return None
    file, line, col = (int(g) for g in m.groups())
    return (file, line, col)


def _on_loc(tok: Token) -> Token:
    src = _loc_value(tok)
    if src is None:
        raise CompileError("malformed '.loc' directive; expected '.loc file line column'",
                           loc=loc_of(tok))
    STATE.src = src
    return tok


def _on_opcode(tok: Token) -> Token:
    if STATE.src is not None:
        assert tok.start_pos is not None
        STATE.src_at[tok.start_pos] = STATE.src
    return tok
