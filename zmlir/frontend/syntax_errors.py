"""lark's syntax errors as CompileErrors: a line and column, and a message
that names what was expected in words (`diagnose`)."""

from __future__ import annotations

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr
from lark.parsers.lalr_analysis import Shift

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend.transformer import loc_of

# How to name a named terminal in "expected ..." messages; anonymous ones
# (punctuation, keywords) are quoted as written.
_TERMINAL_DESCRIPTIONS = {
    "OPCODE": "an instruction",
    "FAST_STMTS": "an instruction",
    "FAST_PARAMS": "'('",
    "FAST_INIT": "'{'",
    "FAST_FUNC_HEAD": "'.entry' or '.func'",
    "FAST_VAR_DECL": "a state space",
    "LABEL_DEF": "a label",
    "GUARD": "a predicate guard",
    "REG": "a register",
    "NAME": "an identifier",
    "SINK": "'_'",
    "NUMBER": "a number",
    "NEG": "'-'",
    "ADD_OP": "'+'",
    "VERSION_NUM": "a version number",
    "MUL_OP": "an operator",
    "SHIFT_OP": "an operator",
    "UNARY_OP": "'~'",
    "FILE": "'.file'",
    "LINKAGE": "a linkage directive",
    "FUNC_KIND": "'.entry' or '.func'",
    "VAR_SPACE": "a state space",
    "PARAM_SPACE": "'.param' or '.reg'",
    "REG_KW": "'.reg'",
    "VECTOR": "a vector size",
    "TYPE": "a type",
    "DIRECTIVE_NAME": "a directive",
    "_COMMA": "','",
    "_SEMI": "';'",
    "$END": "end of input",
}


def _describe(name: str, parser: Lark) -> str:
    if name in _TERMINAL_DESCRIPTIONS:
        return _TERMINAL_DESCRIPTIONS[name]
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    return f"'{pattern.value}'" if isinstance(pattern, PatternStr) else name


def _join_alternatives(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _end_of_text(text: str) -> SourceLoc:
    """Position just after the last non-blank character: where EOF errors point."""
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    return SourceLoc(line, len(stripped) - (stripped.rfind("\n") + 1) + 1)


def _end_of_previous(text: str, pos: int) -> SourceLoc:
    """Position just after the last token before offset `pos`, skipping blanks and `//` comments."""
    lines = text[:pos].split("\n")
    for index in range(len(lines) - 1, -1, -1):
        code = lines[index].split("//", 1)[0].rstrip()
        if code:
            return SourceLoc(index + 1, len(code) + 1)
    return SourceLoc(1, 1)


def _viable(e: UnexpectedToken) -> set[str]:
    """The terminals in `e.expected` that the parser would really shift next.

    LALR merges states, so lark's expected set can name tokens that only fail
    after some reductions (a `}` after an operand is fine inside `{...}` but
    not in a plain instruction). Replay the reductions on a copy of the stack.
    """
    try:
        table = e.state.parse_conf.states
        stack0 = e.state.state_stack
    except AttributeError:  # no parser state to replay: keep lark's answer
        return set(e.expected)
    viable = set()
    for name in e.expected:
        stack = list(stack0)
        for _ in range(1000):  # bounded: a reduce chain is never this long
            action = table[stack[-1]].get(name)
            if action is None:
                break
            kind, rule = action
            if kind is Shift:
                viable.add(name)
                break
            if rule.expansion:
                del stack[-len(rule.expansion) :]
            goto = table[stack[-1]].get(rule.origin.name)
            if goto is None:
                break
            stack.append(goto[1])
    return viable or set(e.expected)


# Words that start a new top-level item: seeing one inside a body means a `}` is missing.
_TOP_LEVEL_STARTS = frozenset({".entry", ".func", ".visible", ".extern", ".weak", ".common"})


def diagnose(e: UnexpectedInput, text: str, filename: str, parser: Lark) -> CompileError:
    if isinstance(e, UnexpectedCharacters):
        pos = e.pos_in_stream or 0
        if text.startswith("/*", pos):
            message = "unterminated '/*' comment"
        else:
            message = f"unexpected character {text[pos]!r}"
        return CompileError(message, filename, SourceLoc(e.line, e.column))
    if isinstance(e, UnexpectedToken):
        ignored = set(parser.lexer_conf.ignore)  # (a cached Lark has no ignore_tokens)
        # `_TARGET_LIST` is filtered from the parse; `__ANON_n` are keywords and stay.
        names = {n for n in _viable(e) if n not in ignored and n != "_TARGET_LIST"}
        expected = sorted({_describe(n, parser) for n in names})
        tok = e.token
        if tok.type == "$END":
            message = "unexpected end of input"
            if "'}'" in expected:
                message = "expected '}' at end of input"
            elif expected and len(expected) <= 4:
                message += f"; expected {_join_alternatives(expected)}"
            return CompileError(message, filename, _end_of_text(text))
        if tok.start_pos is not None and text.startswith("/*", tok.start_pos):
            # BLOCK_COMMENT didn't match; the root lexer saw a '/' operator.
            return CompileError("unterminated '/*' comment", filename, loc_of(tok))
        if tok.start_pos is not None and text.startswith(".section", tok.start_pos):
            # The SECTION terminal didn't match, so the root lexer saw a bare directive.
            message = "unterminated '.section' (or its braces are nested too deeply)"
            return CompileError(message, filename, loc_of(tok))
        found = f"'{tok.strip()}'"
        if "';'" in expected and tok.start_pos is not None:
            prev = _end_of_previous(text, tok.start_pos)
            if prev.line < (tok.line or 0):
                # A semicolon missing at the end of a line: point where it belongs.
                return CompileError("expected ';'", filename, prev)
        if "'}'" in expected and tok in _TOP_LEVEL_STARTS:
            message = f"expected '}}' before {found}"
        elif expected and len(expected) <= 4:
            message = f"expected {_join_alternatives(expected)}, found {found}"
        else:
            message = f"unexpected {found}"
        return CompileError(message, filename, loc_of(tok))
    if isinstance(e, UnexpectedEOF):
        return CompileError("unexpected end of input", filename, _end_of_text(text))
    return CompileError(f"syntax error: {e}", filename, None)
