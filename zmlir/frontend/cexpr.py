"""Constant expressions of PTX initializers and array sizes.

PTX follows C here: integer arithmetic with C's operators, plus addresses of
variables (`bar`, `generic(bar)`) offset by an integer, and the mask()
operator (`0xff00(bar)`) that takes one byte of an address. The grammar's
`c_*` rules call these functions bottom-up.

Errors are values (Bad) rather than exceptions: the expression's callbacks
have no source position, so the enclosing declaration reports the error at
its own position (see parser.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from zmlir.frontend.ast import FloatImm, Mask, Sym, SymOffset


@dataclass(frozen=True, slots=True)
class Bad:
    """An invalid constant expression; the message says why."""

    message: str


Value = int | FloatImm | SymOffset | Mask | Bad

# Everything must fit a 64-bit integer, signed or unsigned. Checking every
# step also keeps `1 << huge` from running out of memory.
_LIMIT = 1 << 64


def _checked(v: int) -> int | Bad:
    if -_LIMIT < v < _LIMIT:
        return v
    return Bad("constant expression does not fit in 64 bits")


def _c_div(a: int, b: int) -> int:
    """C division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def binop(op: str, a: Value, b: Value) -> Value:
    if isinstance(a, Bad):
        return a
    if isinstance(b, Bad):
        return b
    if type(a) is int and type(b) is int:
        if op in ("/", "%") and b == 0:
            return Bad("division by zero in constant expression")
        if op in ("<<", ">>") and not 0 <= b < 64:
            return Bad(f"shift count {b} out of range in constant expression")
        if op == "+":
            return _checked(a + b)
        if op == "-":
            return _checked(a - b)
        if op == "*":
            return _checked(a * b)
        if op == "/":
            return _c_div(a, b)
        if op == "%":
            return a - _c_div(a, b) * b
        if op == "<<":
            return _checked(a << b)
        if op == ">>":
            return a >> b
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
    # Address arithmetic: `sym + n`, `n + sym`, `sym - n`.
    if op in ("+", "-") and isinstance(a, SymOffset) and type(b) is int:
        offset = _checked(a.offset + b if op == "+" else a.offset - b)
        return offset if isinstance(offset, Bad) else SymOffset(a.name, offset, a.generic)
    if op == "+" and type(a) is int and isinstance(b, SymOffset):
        return binop("+", b, a)
    return Bad(f"invalid operands to '{op}' in constant expression")


def unop(op: str, a: Value) -> Value:
    if isinstance(a, Bad):
        return a
    if op == "-" and isinstance(a, FloatImm):
        return FloatImm(a.bits ^ (1 << (a.width - 1)), a.width)
    if type(a) is not int:
        return Bad(f"invalid operand to '{op}' in constant expression")
    if op == "-":
        return -a
    if op == "~":
        return ~a
    return int(not a)  # "!"


def mask(m: int, a: Value) -> Value:
    if isinstance(a, Bad):
        return a
    shift = next((s for s in range(0, 64, 8) if m == 0xFF << s), None)
    if shift is None:
        return Bad(f"mask {m:#x} must be 0xff shifted by whole bytes")
    if type(a) is int:
        return ((a & m) >> shift) & 0xFF
    if isinstance(a, SymOffset):
        return Mask(m, a)  # kept whole: `generic(foo)` and `foo` differ here
    return Bad("invalid operand to mask() in constant expression")


def finish(v: Value) -> object:
    """The initializer value the AST keeps: a plain `bar` is a Sym;
    `generic(bar)` and addresses with an offset stay SymOffset (the generic
    address and the state-space address of a variable differ)."""
    if isinstance(v, SymOffset) and v.offset == 0 and not v.generic:
        return Sym(v.name)
    return v
