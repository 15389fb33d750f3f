"""f16/bf16 arithmetic and directed rounding (.rz/.rm/.rp) checked against an exact reference.

Every fidelity case of test/ptx/spec.py whose body is one f16/f16x2/bf16/bf16x2 arithmetic
instruction or one f32/f64 add/sub/mul/fma/mad/div/rcp/sqrt with a directed rounding mode is
compiled to SPIR-V, run on the CPU, and compared, element by element, with the result computed
here in exact rational arithmetic (fractions.Fraction) and rounded once to the instruction's
format and mode: subnormals, overflow (.rz/.rm/.rp give the largest finite value where IEEE
says so), signed zeros (x + -x is -0 under .rm) and NVIDIA's canonical NaN 0x7fff for 16-bit
results included. These cases are thereby proven before H200 golden data exists for them;
test_ptx_fidelity.py compares them with the H200 once it does.

min/max (f16/bf16, and f32 .xorsign.abs) and neg/abs have no arithmetic to check: their
reference restates the PTX ISA's rules (9.7.3.10/11, 9.7.4.6-9.7.4.11); the H200 has the last
word on NaN signs there. The rest is arithmetic.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from ptx import spec
from support.fidelity import expected_rejection, run_case

# Precision, minimum and maximum normal exponent of each format.
FORMATS = {"f16": (11, -14, 15), "bf16": (8, -126, 127), "f32": (24, -126, 127),
           "f64": (53, -1022, 1023)}
HALF_NAN = 0x7FFF
_INSTRUCTION = re.compile(r"^(\w+)((?:\.\w+)*)\s+%d,\s*(.*);$")


def _parse(c: spec.Case) -> tuple[str, set[str], str] | None:
    """(op, modifiers, type) of a case this module checks, else None."""
    m = _INSTRUCTION.match(c.body.strip())
    if m is None or c.extra.get("pre"):
        return None
    op, mods = m.group(1), m.group(2).strip(".").split(".")
    t, flags = mods[-1], set(mods[:-1])
    if t in ("f16", "f16x2", "bf16", "bf16x2"):
        if op in ("add", "sub", "mul", "fma", "neg", "abs", "min", "max"):
            return op, flags, t
        return None
    if t in ("f32", "f64") and op in ("add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt") \
            and flags & {"rz", "rm", "rp"}:
        return op, flags, t
    if t == "f32" and op in ("min", "max") and "xorsign" in flags:
        return op, flags, t
    return None


CASES = [c.name for c in spec.CASES if _parse(c) is not None]


# -- exact rounding ------------------------------------------------------------------------


def round_exact(x: Fraction, fmt: str, mode: str, unbounded: bool = False) -> float:
    """x (nonzero) rounded once to fmt with mode rn/rz/rm/rp, as a Python float (exact:
    every result of these formats is a double); `unbounded`: with fmt's precision but no
    exponent range (the result as a Fraction then)."""
    p, emin, emax = FORMATS[fmt]
    if unbounded:
        emin, emax = -100000, 100000
    neg = x < 0
    a = -x if neg else x
    if mode == "rn":
        direction = "nearest"
    elif mode == "rz":
        direction = "down"
    elif mode == "rm":
        direction = "up" if neg else "down"
    else:
        direction = "down" if neg else "up"
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    quantum = Fraction(2) ** (e - p + 1)
    m = a / quantum
    whole = m.numerator // m.denominator
    rest = m - whole
    if direction == "nearest":
        whole += rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1)
    elif direction == "up":
        whole += rest > 0
    v = whole * quantum
    if unbounded:
        return -v if neg else v  # type: ignore[return-value]
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    r = math.inf if v > largest and direction != "down" else float(min(v, largest))
    return -r if neg else r


def round_sqrt(x: Fraction, fmt: str, mode: str) -> float:
    """sqrt(x) (x > 0) rounded once: the integer square root at 2^-1200 stands in for the
    root when inexact, on the right side of every rounding boundary of fmt (multiples of
    2^-1075)."""
    k = 1200
    n = x * Fraction(2) ** (2 * k)
    whole = n.numerator // n.denominator
    root = math.isqrt(whole)
    exact = root * root == n
    v = Fraction(root, 2 ** k) if exact else Fraction(2 * root + 1, 2 ** (k + 1))
    return round_exact(v, fmt, mode)


def _signbit(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def _zero_sum(x_neg: bool, y_neg: bool, mode: str) -> float:
    """IEEE's sign of an exact zero sum: -0 under rm unless both are +0, else +0 unless
    both are -0."""
    neg = (x_neg or y_neg) if mode == "rm" else (x_neg and y_neg)
    return -0.0 if neg else 0.0


def exact_op(op: str, xs: list[float], fmt: str, mode: str) -> float:
    """The IEEE result of op on xs, rounded once to fmt in mode."""
    if any(math.isnan(x) for x in xs):
        return math.nan
    if op == "sub":
        op, xs = "add", [xs[0], -xs[1]]
    if op == "rcp":
        op, xs = "div", [1.0, xs[0]]
    finite = all(math.isfinite(x) for x in xs)
    if op == "add":
        if not finite:
            return xs[0] + xs[1]
        s = Fraction(xs[0]) + Fraction(xs[1])
        if s == 0:
            return _zero_sum(_signbit(xs[0]), _signbit(xs[1]), mode)
        return round_exact(s, fmt, mode)
    if op == "mul":
        if not finite:
            return xs[0] * xs[1]
        prod = Fraction(xs[0]) * Fraction(xs[1])
        if prod == 0:
            return -0.0 if _signbit(xs[0]) != _signbit(xs[1]) else 0.0
        return round_exact(prod, fmt, mode)
    if op in ("fma", "mad"):
        if not finite:
            # A finite a*b is finite even where a double overflows.
            finite_product = math.isfinite(xs[0]) and math.isfinite(xs[1])
            return xs[2] if finite_product else xs[0] * xs[1] + xs[2]
        prod = Fraction(xs[0]) * Fraction(xs[1])
        s = prod + Fraction(xs[2])
        if s == 0:
            return _zero_sum(_signbit(xs[0]) != _signbit(xs[1]), _signbit(xs[2]), mode)
        return round_exact(s, fmt, mode)
    if op == "div":
        if not finite or xs[0] == 0 or xs[1] == 0:
            with np.errstate(all="ignore"):
                return float(np.float64(xs[0]) / np.float64(xs[1]))
        return round_exact(Fraction(xs[0]) / Fraction(xs[1]), fmt, mode)
    if op == "sqrt":
        x = xs[0]
        if x < 0:
            return math.nan
        if x == 0 or math.isinf(x):
            return x
        return round_sqrt(Fraction(x), fmt, mode)
    raise AssertionError(op)


def is_tiny(op: str, xs: list[float], fmt: str, mode: str) -> bool:
    """Whether the exact result is nonzero and, rounded in mode with fmt's precision but an
    unbounded exponent, below the smallest normal: the results .ftz flushes to zero (on the
    H200, also those that round up to the smallest normal)."""
    if not all(math.isfinite(x) for x in xs):
        return False
    smallest_normal = Fraction(2) ** FORMATS[fmt][1]
    f = [Fraction(x) for x in xs]
    if op == "sqrt":
        return 0 < f[0] < smallest_normal ** 2
    if (op == "div" and f[1] == 0) or (op == "rcp" and f[0] == 0):
        return False
    v = {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1], "mul": lambda: f[0] * f[1],
         "fma": lambda: f[0] * f[1] + f[2], "mad": lambda: f[0] * f[1] + f[2],
         "div": lambda: f[0] / f[1], "rcp": lambda: 1 / f[0]}[op]()
    return v != 0 and abs(Fraction(round_exact(v, fmt, mode, unbounded=True))) < smallest_normal


def _tiny_sign(op: str, xs: list[float]) -> bool:
    """The sign of a tiny exact result (is_tiny): negative or not."""
    f = [Fraction(x) for x in xs]
    v = {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1], "mul": lambda: f[0] * f[1],
         "fma": lambda: f[0] * f[1] + f[2], "mad": lambda: f[0] * f[1] + f[2],
         "div": lambda: f[0] / f[1], "rcp": lambda: 1 / f[0], "sqrt": lambda: f[0]}[op]()
    return v < 0


# -- 16-bit lanes --------------------------------------------------------------------------


def _half_value(bits: int, fmt: str) -> float:
    if fmt == "f32":
        return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])
    if fmt == "bf16":
        return float(np.array([bits << 16], dtype=np.uint32).view(np.float32)[0])
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def _half_bits(v: float, fmt: str) -> int:
    if math.isnan(v):
        return HALF_NAN
    if fmt == "bf16":
        return int(np.array([v], dtype=np.float32).view(np.uint32)[0]) >> 16
    return int(np.array([v], dtype=np.float16).view(np.uint16)[0])


def _half_nan(bits: int, fmt: str) -> bool:
    if fmt == "f32":
        return (bits & 0x7FFFFFFF) > 0x7F800000
    return (bits & 0x7FFF) > (0x7F80 if fmt == "bf16" else 0x7C00)


def _flush(bits: int, fmt: str) -> int:
    return bits & 0x8000 if bits & (0x7F80 if fmt == "bf16" else 0x7C00) == 0 else bits


def half_lane(op: str, flags: set[str], fmt: str, xs: list[int]) -> int:
    if "ftz" in flags:
        xs = [_flush(x, fmt) for x in xs]
    if op in ("neg", "abs"):
        # The sign bit; a NaN gives the canonical NaN (as on the H200).
        r = HALF_NAN if _half_nan(xs[0], fmt) else xs[0] ^ 0x8000 if op == "neg" else \
            xs[0] & 0x7FFF
    elif op in ("min", "max"):
        r = _half_min_max(op == "min", flags, fmt, xs[0], xs[1])
    else:
        values = [_half_value(x, fmt) for x in xs]
        r = _half_bits(exact_op(op, values, fmt, "rn"), fmt)
        if "ftz" in flags and is_tiny(op, values, fmt, "rn"):
            r = 0x8000 if _tiny_sign(op, values) else 0
        nan = _half_nan(r, fmt)
        if "relu" in flags and not nan and r & 0x8000:
            r = 0
        if "sat" in flags:
            one = 0x3F80 if fmt == "bf16" else 0x3C00
            r = 0 if nan or r & 0x8000 else min(r, one)
    if "ftz" in flags:
        r = _flush(r, fmt)
    return r


def _half_min_max(is_min: bool, flags: set[str], fmt: str, xa: int, xb: int) -> int:
    """PTX min/max: -0 < +0; a NaN operand gives the other operand (with .NaN, or when both
    are NaN, the canonical NaN); .xorsign.abs orders magnitudes and gives the result the XOR of
    the operands' signs."""
    xorsign = "xorsign" in flags
    mag = 0x7FFFFFFF if fmt == "f32" else 0x7FFF
    ma, mb = (xa & mag, xb & mag) if xorsign else (xa, xb)
    a_nan, b_nan = _half_nan(xa, fmt), _half_nan(xb, fmt)
    if (a_nan and b_nan) or ("NaN" in flags and (a_nan or b_nan)):
        return mag  # the canonical NaN
    if a_nan:
        r = mb
    elif b_nan:
        r = ma
    else:
        va, vb = _half_value(ma, fmt), _half_value(mb, fmt)
        ordered = ma if (va < vb) == is_min else mb
        r = (ma | mb if is_min else ma & mb) if va == vb else ordered
    if xorsign:
        r |= (xa ^ xb) & (mag + 1)
    return r


# -- the reference of a case ---------------------------------------------------------------


def reference(c: spec.Case, ins: list[np.ndarray]) -> np.ndarray:
    parsed = _parse(c)
    assert parsed is not None
    op, flags, t = parsed
    n = len(ins[0])
    if op in ("min", "max") and t == "f32":
        bits = [col.view(np.uint32) for col in ins]
        if "ftz" in flags:
            bits = [np.where(b & 0x7F800000 == 0, b & 0x80000000, b) for b in bits]
        r = [_half_min_max(op == "min", flags, "f32", int(x), int(y))
             for x, y in zip(*bits, strict=True)]
        return np.array(r, dtype=np.uint32).view(np.float32)
    if t in ("f32", "f64"):
        mode = next(iter(flags & {"rz", "rm", "rp"}))
        dtype = np.float32 if t == "f32" else np.float64
        out = np.zeros(n, dtype=dtype)
        ftz = "ftz" in flags and t == "f32"
        tiny = 2.0 ** -126
        for i in range(n):
            xs = [float(col[i]) for col in ins]
            if ftz:
                xs = [math.copysign(0.0, x) if 0 < abs(x) < tiny else x for x in xs]
            r = exact_op(op, xs, t, mode)
            if ftz and is_tiny(op, xs, t, mode):
                r = -0.0 if _tiny_sign(op, xs) else 0.0
            if "sat" in flags:
                r = 0.0 if math.isnan(r) or r <= 0 else min(r, 1.0)
            out[i] = r
        return out
    fmt = "bf16" if t.startswith("bf16") else "f16"
    lanes = (0, 16) if t.endswith("x2") else (0,)
    out_bits = np.zeros(n, dtype=np.uint64)
    cols = [col.astype(np.uint64) for col in ins]
    for i in range(n):
        r = 0
        for shift in lanes:
            xs = [int(col[i] >> np.uint64(shift)) & 0xFFFF for col in cols]
            r |= half_lane(op, flags, fmt, xs) << shift
        out_bits[i] = r
    return out_bits.astype(ins[0].dtype)


# -- the reference itself, on known values -------------------------------------------------


def test_reference_rounding() -> None:
    """The checker's own rounding, on values whose results are known from IEEE 754."""
    third = Fraction(1, 3)
    assert round_exact(third, "f32", "rn") == float(np.float32(1 / 3))
    down = float(np.nextafter(np.float32(1 / 3), np.float32(0)))
    rz = round_exact(third, "f32", "rz")
    assert rz in (down, float(np.float32(1 / 3))) and rz <= 1 / 3
    assert round_exact(-third, "f32", "rm") == -round_exact(third, "f32", "rp")
    largest = float(np.finfo(np.float32).max)
    assert round_exact(Fraction(2) ** 200, "f32", "rz") == largest
    assert round_exact(Fraction(2) ** 200, "f32", "rm") == largest
    assert round_exact(Fraction(2) ** 200, "f32", "rp") == math.inf
    assert round_exact(-Fraction(2) ** 200, "f32", "rp") == -largest
    assert round_exact(Fraction(1, 2 ** 160), "f32", "rp") == 2.0 ** -149
    assert _signbit(round_exact(-Fraction(1, 2 ** 160), "f32", "rz"))
    assert round_exact(Fraction(3, 2 ** 26), "f16", "rn") == 2.0 ** -24  # 0.75 ulp up
    assert round_exact(Fraction(1, 2 ** 25), "f16", "rn") == 0.0  # the tie goes to 0
    assert _signbit(exact_op("add", [1.0, -1.0], "f32", "rm"))
    assert not _signbit(exact_op("add", [1.0, -1.0], "f32", "rz"))
    assert round_sqrt(Fraction(2), "f64", "rn") == math.sqrt(2)
    assert round_sqrt(Fraction(4), "f64", "rz") == 2.0
    # fma's double-rounding trap: (1 + 2^-10) * 1.5 is halfway between two f16 values; minus
    # 2^-24 it rounds down (0x3e01), through f32 (a tie there) it would round up (0x3e02).
    a = 1 + 2.0 ** -10
    assert _half_bits(exact_op("fma", [a, 1.5, -(2.0 ** -24)], "f16", "rn"), "f16") == 0x3E01
    assert _half_bits(float(np.float32(a * 1.5 - 2.0 ** -24)), "f16") == 0x3E02
    # .ftz tininess after rounding with an unbounded exponent (the H200's): 2^-14 - 2^-25 is
    # tiny (though it rounds to 2^-14), 2^-14 - 2^-28 is not.
    below = _half_value(0x3BFF, "f16")
    assert is_tiny("mul", [below, 2.0 ** -14], "f16", "rn")
    assert not is_tiny("fma", [2.0 ** -14, -(2.0 ** -14), 2.0 ** -14], "f16", "rn")
    assert is_tiny("div", [-(2.0 ** -126), 1 + 2.0 ** -23], "f32", "rm")
    assert is_tiny("mul", [-(2.0 ** -126), 1 - 2.0 ** -25], "f32", "rp")  # magnitude down
    assert not is_tiny("mul", [-(2.0 ** -126), 1 - 2.0 ** -25], "f32", "rm")  # up to 2^-126


# -- the SPIR-V results against it ---------------------------------------------------------


def _check(got: np.ndarray, want: np.ndarray, ins: list[np.ndarray], what: str) -> None:
    """Bit-exact, but for the payloads of f32/f64 NaNs."""
    if got.dtype.kind == "f":
        itype = np.uint32 if got.dtype == np.float32 else np.uint64
        differ = (got.view(itype) != want.view(itype)) & ~(np.isnan(got) & np.isnan(want))
    else:
        differ = got != want
    if differ.any():
        i = np.flatnonzero(differ)[:8]
        shown = [(*(col[j] for col in ins), got[j], want[j]) for j in i]
        width = 8 if got.dtype.itemsize <= 4 else 16
        rows = "\n".join(" ".join(f"{int(np.asarray(v).view(f'u{np.asarray(v).itemsize}')):0{width}x}"
                                  for v in row) for row in shown)
        pytest.fail(f"{int(differ.sum())} of {len(got)} {what} differ from the exact result "
                    f"(inputs, got, want):\n{rows}")


@pytest.mark.parametrize("name", CASES)
def test_spirv_cpu_matches_exact_reference(name: str, device) -> None:
    c = spec.case(name)
    ins = spec.inputs(c)
    rejected = expected_rejection("spirv", c)
    if rejected:
        pytest.skip(f"unsupported: {rejected}")
    got = run_case(device, c, ins)
    _check(got, reference(c, ins), ins, "SPIR-V-CPU results")


@pytest.mark.parametrize("name", CASES)
def test_h200_matches_exact_reference(name: str) -> None:
    """The H200's own results (golden data) against the same reference: where they differ,
    the reference's reading of the PTX ISA (NaN signs of min/max/neg/abs, .sat of -0) is what
    is wrong, and the lowering with it."""
    path = spec.GOLDEN / f"{name}.npz"
    if not path.exists():
        pytest.skip("no H200 golden data yet (tools/capture_golden.py)")
    c = spec.case(name)
    golden = np.load(path)
    ins = [golden[f"in{i}"] for i in range(len(c.inputs))]
    _check(golden["out"], reference(c, ins), ins, "H200 results")
