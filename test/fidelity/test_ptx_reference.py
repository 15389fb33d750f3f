"""PTX fidelity cases checked on the CPU against numpy references, for the cases that have no
H200 golden data yet (test/ptx/golden/ lacks them until the next capture); and each reference
checked against the H200 golden data where it exists.

Each reference computes what the PTX ISA specifies for the case's instruction from the case's
own inputs: exact integer arithmetic in Python integers, IEEE float operations in numpy (which
rounds to nearest even) or, for fused multiply-add, exactly in fractions and rounded once. The
kernel runs as SPIR-V on the CPU and is compared with `spec.compare`, the comparison the H200
golden data gets: bit-exact, NaN payloads not compared, `.approx` ops within their Tolerance.
Where the ISA leaves a value unspecified (integer division by zero) or the H200 departs from
its text (float-to-integer NaN, div.approx by |b| > 2^126), the reference gives what the H200
gives. Results go to build/fidelity/spirv-cpu-reference.json for tools/fidelity_table.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from ptx import spec
from support.fidelity import expected_rejection, merge_results, run_case

import zmlir

Ref = Callable[[spec.Case, list[np.ndarray]], tuple[np.ndarray, np.ndarray | None]]
REFS: dict[str, Ref] = {}
# The issue 4 coverage cases of spec.py, the ones with references here.
MINE = [c for group in (spec.INT_ARITH, spec.LOGIC, spec.FLOAT_ARITH, spec.COMPARE, spec.MOVES,
                        spec.CVT, spec.MEMORY, spec.ATOMICS, spec.WARP, spec.SREGS,
                        spec.MATRIX)
        for c in group] + [spec.case("fns_b32"), spec.case("fns_b32_wide_base")] + spec.SETP_HALF \
    + spec.HALF_APPROX
# Cases without a reference, and why.
NO_REFERENCE = {
    "min_xorsign_abs_f32": "NaN rules of .xorsign.abs: left to the H200",
    "max_xorsign_abs_f32": "NaN rules of .xorsign.abs: left to the H200",
}
_results: dict[str, dict[str, object]] = {}


# -- integers ------------------------------------------------------------------------------


def _width(t: str) -> int:
    return int(t[1:])


def _u(v: int, w: int) -> int:
    return v & ((1 << w) - 1)


def _s(v: int, w: int) -> int:
    v = _u(v, w)
    return v - (1 << w) if v >> (w - 1) else v


def _val(v: int, t: str) -> int:
    """The register bits v read as PTX type t (the low bits of a wider register)."""
    w = _width(t)
    return _s(v, w) if t[0] == "s" else _u(v, w)


def _ints(a: np.ndarray) -> list[int]:
    return [int(x) for x in a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])]


def _out(c: spec.Case, values: list[int]) -> np.ndarray:
    dtype = spec.output_dtype(c)
    w = np.dtype(dtype).itemsize * 8
    return np.array([_u(v, w) for v in values], dtype=np.uint64).astype(dtype)


def _elementwise(fn: Callable[..., int | None]) -> Ref:
    """A reference from a function of the inputs' register bits; None: unspecified."""
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        rows = [fn(*vals) for vals in zip(*(_ints(a) for a in ins), strict=True)]
        mask = np.array([r is not None for r in rows])
        return _out(c, [0 if r is None else r for r in rows]), (None if mask.all() else mask)
    return ref


def _int_arith(op: str, mode: str, t: str) -> Callable[..., int | None]:
    w = _width(t)
    signed = t[0] == "s"

    def v(x: int) -> int:
        return _s(x, w) if signed else _u(x, w)

    if op in ("add", "sub"):
        return lambda a, b: v(a) + v(b) if op == "add" else v(a) - v(b)
    if op == "mul":
        if mode == "lo":
            return lambda a, b: v(a) * v(b)
        if mode == "hi":
            return lambda a, b: (v(a) * v(b)) >> w
        return lambda a, b: v(a) * v(b)  # wide: the output is 2w bits
    if op == "mad":
        if mode == "lo":
            return lambda a, b, c: v(a) * v(b) + v(c)
        if mode == "hi":
            return lambda a, b, c: ((v(a) * v(b)) >> w) + v(c)
        return lambda a, b, c: v(a) * v(b) + c
    if op in ("div", "rem"):
        def divrem(a: int, b: int) -> int | None:
            x, y = v(a), v(b)
            if y == 0:
                return -1  # unspecified in the PTX ISA; the H200 gives all ones for both
            q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # rounds toward zero
            return q if op == "div" else x - q * y
        return divrem
    if op == "abs":
        return lambda a: abs(v(a))
    if op == "neg":
        return lambda a: -v(a)
    if op == "min":
        return lambda a, b: min(v(a), v(b))
    if op == "max":
        return lambda a, b: max(v(a), v(b))
    raise KeyError(op)


def _logic(op: str, w: int) -> Callable[..., int]:
    m = (1 << w) - 1
    return {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
            "not": lambda a: ~a & m}[op]


def _shift(op: str, t: str) -> Callable[..., int]:
    w = _width(t)

    def f(a: int, b: int) -> int:
        n = min(b, w)  # counts past the width clamp to the width
        if op == "shl":
            return a << n if n < w else 0
        if t[0] == "s":
            return _s(a, w) >> n if n < w else -1 if _s(a, w) < 0 else 0
        return _u(a, w) >> n if n < w else 0
    return f


def _int_setp(cmp: str, t: str) -> Callable[..., int]:
    w = _width(t)
    signed = t[0] == "s"

    def f(a: int, b: int) -> int:
        x, y = (_s(a, w), _s(b, w)) if signed else (_u(a, w), _u(b, w))
        return int({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
                    "ge": x >= y, "lo": x < y, "ls": x <= y, "hi": x > y, "hs": x >= y}[cmp])
    return f


def _cvt_int(d: str, s: str, sat: bool, reg: int) -> Callable[[int], int]:
    dw = _width(d)
    lo, hi = ((-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if d[0] == "s" else (0, (1 << dw) - 1))

    def f(a: int) -> int:
        x = _val(a, s)
        if sat:
            x = min(max(x, lo), hi)
        x = _s(x, dw) if d[0] == "s" else _u(x, dw)  # then extended to the register width
        return _u(x, reg)
    return f


# -- floats --------------------------------------------------------------------------------

_FTYPE = {"f32": (np.float32, np.uint32, 24, -126), "f64": (np.float64, np.uint64, 53, -1022)}


def _flush(x: np.ndarray) -> np.ndarray:
    """Subnormals to sign-preserving zero (.ftz)."""
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)


def _sat(x: np.ndarray) -> np.ndarray:
    """.sat: clamp to [0, 1], NaN to +0."""
    return np.where(np.isnan(x), 0, np.clip(np.where(x <= 0, 0, x), 0, 1)).astype(x.dtype)


def _round_fraction(x: Fraction, t: str) -> float:
    """The exact value x rounded to nearest even in type t (finite x; may overflow to inf)."""
    _, _, p, emin = _FTYPE[t]
    if x == 0:
        return 0.0
    sign = -1 if x < 0 else 1
    m = abs(x)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    e = max(e, emin)  # subnormals keep the minimum exponent
    q = m / Fraction(2) ** (e - p + 1)
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2):
        n += 1
    emax = 127 if t == "f32" else 1023
    if n * Fraction(2) ** (e - p + 1) >= Fraction(2) ** (emax + 1):
        return sign * float("inf")
    return sign * float(n * Fraction(2) ** (e - p + 1))


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, t: str) -> np.ndarray:
    ftype = _FTYPE[t][0]
    out = np.empty(len(a), dtype=ftype)
    for i, (x, y, z) in enumerate(zip(a, b, c, strict=True)):
        if np.isnan(x) or np.isnan(y) or np.isnan(z):
            out[i] = np.nan
            continue
        if np.isinf(x) or np.isinf(y):  # the product is infinite (or inf * 0: NaN)
            with np.errstate(all="ignore"):
                out[i] = ftype(x) * ftype(y) + ftype(z)
            continue
        if np.isinf(z):  # a finite product, never rounded, so never overflowing
            out[i] = z
            continue
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        if exact == 0:
            prod_neg = (np.signbit(x) != np.signbit(y))
            both_zero = (x == 0 or y == 0) and z == 0
            out[i] = -0.0 if both_zero and prod_neg and np.signbit(z) else 0.0
        else:
            out[i] = _round_fraction(exact, t)
    return out


def _fview(a: np.ndarray, t: str) -> np.ndarray:
    return a.view(_FTYPE[t][0])


def _float_binary(op: str, mods: set[str], t: str) -> Ref:
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        xs = [_fview(a, t) for a in ins]
        if "ftz" in mods:
            xs = [_flush(x) for x in xs]
        with np.errstate(all="ignore"):
            if op in ("fma", "mad"):
                r = _fma(xs[0], xs[1], xs[2], t)
            elif op == "div" and "approx" in mods:
                # a * (1 / b), as the ISA says: on the H200 the reciprocal of |b| > 2^126
                # is 0 (a subnormal, flushed), so inf / FLT_MAX is NaN and 1 / FLT_MAX is 0.
                huge = np.abs(xs[1]) > 2.0 ** 126
                r = np.where(huge, xs[0] * np.copysign(np.zeros_like(xs[1]), xs[1]),
                             xs[0] / xs[1])
            else:
                r = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                     "div": np.divide}[op](xs[0], xs[1])
        if "ftz" in mods:
            r = _flush(r)
        if "sat" in mods:
            r = _sat(r)
        return r.astype(_FTYPE[t][0]), None
    return ref


def _float_unary(fn: Callable[[np.ndarray], np.ndarray], t: str, ftz: bool) -> Ref:
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        x = _fview(ins[0], t)
        if ftz:
            x = _flush(x)
        with np.errstate(all="ignore"):
            r = fn(x).astype(_FTYPE[t][0])
        return (_flush(r) if ftz else r), None
    return ref


def _minmax(op: str, t: str, ftz: bool, nan: bool) -> Ref:
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        a, b = (_fview(x, t) for x in ins)
        if ftz:
            a, b = _flush(a), _flush(b)
        # -0 is below +0; a NaN operand gives the other (or NaN with .NaN).
        ka = np.where(a == 0, np.where(np.signbit(a), -1.0, 1.0), 0.0)
        kb = np.where(b == 0, np.where(np.signbit(b), -1.0, 1.0), 0.0)
        lower = (a < b) | ((a == b) & (ka <= kb))
        pick_a = lower if op == "min" else ~lower
        r = np.where(pick_a, a, b)
        r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, r))
        if nan:
            r = np.where(np.isnan(a) | np.isnan(b), np.nan, r)
        return r.astype(a.dtype), None
    return ref


def _float_setp(cmp: str, t: str, ftz: bool) -> Ref:
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        a, b = (_fview(x, t) for x in ins)
        if ftz:
            a, b = _flush(a), _flush(b)
        unordered = np.isnan(a) | np.isnan(b)
        base = cmp[:-1] if cmp.endswith("u") and cmp not in ("num",) else cmp
        r = {"eq": a == b, "ne": (a != b) & ~unordered, "lt": a < b, "le": a <= b,
             "gt": a > b, "ge": a >= b, "num": ~unordered, "nan": unordered}[base]
        if cmp in ("equ", "neu", "ltu", "leu", "gtu", "geu"):
            r = r | unordered
        return r.astype(np.uint32), None
    return ref


def _float_to_int(rnd: str, d: str, s: str, reg: int) -> Ref:
    """Rounded, then clamped to the destination's range. NaN: the PTX ISA says 0, which the
    H200 gives only from f32 to at most 32 bits; from f64, or to 64 bits, it gives the
    destination's sign bit alone (0x80000000 for u32 too)."""
    dw = _width(d)
    nan_value = 0 if s == "f32" and dw <= 32 else 1 << (dw - 1)
    lo, hi = ((-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if d[0] == "s" else (0, (1 << dw) - 1))
    fn = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rnd]

    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        values = []
        with np.errstate(invalid="ignore"):
            rounded = fn(_fview(ins[0], s).astype(np.float64))
        for v in rounded:
            if np.isnan(v):
                r = nan_value if d[0] == "u" else _s(nan_value, dw)
            elif np.isinf(v):
                r = hi if v > 0 else lo
            else:
                r = min(max(int(v), lo), hi)
            values.append(_u(_s(r, dw) if d[0] == "s" else r, reg))
        return _out(c, values), None
    return ref


def _int_to_float(d: str, s: str) -> Ref:
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        ints = [_val(v, s) for v in _ints(ins[0])]
        src = np.array(ints, dtype=np.int64 if s[0] == "s" else np.uint64)
        return src.astype(_FTYPE[d][0]), None
    return ref


def _float_to_float(mods: list[str], d: str, s: str) -> Ref:
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        x = _fview(ins[0], s)
        if "ftz" in mods and s == "f32":
            x = _flush(x)
        for m, fn in (("rni", np.rint), ("rzi", np.trunc), ("rmi", np.floor),
                      ("rpi", np.ceil)):
            if m in mods:
                with np.errstate(invalid="ignore"):
                    x = fn(x)
        with np.errstate(all="ignore"):
            r = x.astype(_FTYPE[d][0])
        if "ftz" in mods:
            r = _flush(r)
        if "sat" in mods:
            r = _sat(r)
        return r, None
    return ref


# -- the reference of each case --------------------------------------------------------------


def _define() -> None:
    simple = re.compile(r"^(\w+)((?:\.\w+)*)\s+%d, (%a0)(?:, %a1)?(?:, %a2)?;$")
    for c in MINE:
        m = simple.match(c.body)
        if not m or c.extra.get("pre"):
            continue
        op, mods = m.group(1), m.group(2).split(".")[1:]
        t = mods[-1]
        mods = mods[:-1]
        if c.family in ("add/sub", "mul .lo/.hi/.wide", "mad .lo/.hi/.wide", "div/rem",
                        "abs/neg", "min/max"):
            if "sat" in mods:
                continue
            REFS[c.name] = _elementwise(_int_arith(op, mods[0] if mods else "", t))
        elif c.family == "and/or/xor/not":
            REFS[c.name] = _elementwise(_logic(op, _width(t)))
        elif c.family == "shl/shr" and c.name not in ("shl_b32", "shr_s32"):
            REFS[c.name] = _elementwise(_shift(op, t))
        elif c.family in ("add .rn .ftz .sat", "sub .rn .ftz .sat", "mul .rn .ftz .sat",
                          "fma/mad .rn .ftz .sat", "div .approx/.full/.rn"):
            REFS[c.name] = _float_binary(op, set(mods), t)
        elif c.family == "abs/neg float":
            fn = np.abs if op == "abs" else np.negative
            REFS[c.name] = _float_unary(fn, t, "ftz" in mods)
        elif c.name in ("rcp_rn_ftz_f32", "rcp_approx_ftz_f64"):
            REFS[c.name] = _float_unary(lambda x: np.ones_like(x) / x, t, True)
        elif c.name == "sqrt_rn_ftz_f32":
            REFS[c.name] = _float_unary(np.sqrt, t, True)
        elif c.name.startswith("ex2_approx_ftz_f32"):
            REFS[c.name] = _float_unary(lambda x: np.exp2(x.astype(np.float64)), t, True)
        elif c.family == "min/max f64 .ftz":
            REFS[c.name] = _minmax(op, t, "ftz" in mods, "NaN" in mods)
        elif c.family == "mov" and c.name.startswith("mov_") and op == "mov":
            REFS[c.name] = lambda c, ins: (ins[0].copy(), None)
        elif c.family in ("cvt int<->int", "cvt .sat int"):
            d, s = mods[-1], t
            reg = 32 if _width(d) == 8 else _width(d)
            REFS[c.name] = _elementwise(_cvt_int(d, s, "sat" in mods, reg))
        elif c.family == "cvt float->int":
            rnd = mods[0]
            d, s = mods[-1], t
            REFS[c.name] = _float_to_int(rnd, d, s, 32 if _width(d) == 8 else _width(d))
        elif c.family == "cvt int->float .rn":
            REFS[c.name] = _int_to_float(mods[-1], t)
        elif c.family == "cvt float<->float":
            REFS[c.name] = _float_to_float(mods[:-1], mods[-1], t)
    for c in MINE:
        m = re.match(r"^setp\.(\w+)((?:\.ftz)?)\.(\w+) %q0, %a0, %a1; " + re.escape(spec.SELP),
                     c.body)
        if m and m.group(3) not in ("f16", "bf16"):  # those: _setp_half below
            cmp, ftz, t = m.groups()
            REFS[c.name] = (_float_setp(cmp, t, bool(ftz)) if t in ("f32", "f64")
                            else _elementwise(_int_setp(cmp, t)))


_define()


def _ref(name: str) -> Callable[[Ref], Ref]:
    def register(fn: Ref) -> Ref:
        REFS[name] = fn
        return fn
    return register


@_ref("mov_imm")
def _mov_imm(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
    return ins[0] ^ np.uint32(0x9E3779B9 ^ 0x3FC00000 ^ 0xFFFFFFFE), None


for _n in ("and", "or", "xor"):
    REFS[f"{_n}_pred"] = _elementwise(
        lambda a, b, op=_n: _logic(op, 1)(a & 1, b & 1))
REFS["not_pred"] = _elementwise(lambda a: (a & 1) ^ 1)
REFS["mov_pred"] = _elementwise(lambda a: a & 1)
REFS["mov_unpack_b64"] = _elementwise(lambda a: (a >> 32) | (a << 32))
REFS["mov_pack_b32_b16"] = _elementwise(lambda a, b: b | a << 16)
REFS["mov_unpack_b64_b16"] = _elementwise(
    lambda a: ((a >> 32) & 0xFFFF) | (a & 0xFFFF) << 16 | ((a >> 48) & 0xFFFF) << 32
    | ((a >> 16) & 0xFFFF) << 48)
for _t, _mask in (("b16", 0xFFFF), ("b32", 0xFFFFFFFF), ("b64", 2 ** 64 - 1)):
    REFS[f"selp_{_t}"] = _elementwise(lambda a, b, p: a if p & 1 else b)
for _t in ("f32", "f64"):
    REFS[f"selp_{_t}"] = lambda c, ins: (np.where(ins[2] & 1, ins[0], ins[1]), None)


def _fns(mask: int, a1: int, a2: int, base_bits: int = 31) -> int:
    """fns.b32 d, mask, base, offset with base = a1 & base_bits and offset = (a2 & 63) - 32;
    a base above 31 names no bit (0xffffffff, as on the H200)."""
    base, offset = a1 & base_bits, (a2 & 63) - 32
    if base > 31:
        return 0xFFFFFFFF
    if offset == 0:
        return base if mask >> base & 1 else 0xFFFFFFFF
    count, step, pos = abs(offset) - 1, 1 if offset > 0 else -1, base
    while 0 <= pos < 32:
        if mask >> pos & 1:
            if count == 0:
                return pos
            count -= 1
        pos += step
    return 0xFFFFFFFF


REFS["fns_b32"] = _elementwise(_fns)
REFS["fns_b32_wide_base"] = _elementwise(lambda mask, a1, a2: _fns(mask, a1, a2, 63))


def _combine(kind: str, negate: bool) -> Callable[..., int]:
    def f(a: int, b: int, c: int) -> int:
        cmp = _s(a, 32) < _s(b, 32)
        q = bool(c & 1) != negate
        p1, p2 = {"and": (cmp and q, (not cmp) and q), "or": (cmp or q, (not cmp) or q),
                  "xor": (cmp != q, (not cmp) != q)}[kind]
        return int(p1) | int(p2) << 1
    return f


for _k in ("and", "or", "xor"):
    REFS[f"setp_lt_{_k}_s32"] = _elementwise(_combine(_k, False))
REFS["setp_lt_and_not_s32"] = _elementwise(_combine("and", True))
REFS["setp_pair_u32"] = _elementwise(lambda a, b: int(a > b) | int(not a > b) << 1)


@_ref("setp_gtu_and_not_f32")
def _setp_gtu_and_not(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    a, b, x = (v.view(np.float32) for v in ins)
    gtu = (a > b) | np.isnan(a) | np.isnan(b)
    return (gtu & np.isnan(x)).astype(np.uint32), None


# -- memory, barriers, atomics, warps, special registers -----------------------------------


def _tid(n: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n)
    return i, i - i % spec.BLOCK


def _brev64(x: int) -> int:
    return int(f"{x:064b}"[::-1], 2)


@_ref("ld_global_v2_u32")
def _ld_v2(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    a = ins[0]
    return (a >> np.uint64(32)) | (a << np.uint64(32)), None


def _pairs(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(len(a))
    return a[(i >> 1) * 2], a[(i >> 1) * 2 + 1]


@_ref("ld_global_v4_u32")
def _ld_v4(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    x, y = _pairs(ins[0])
    m = np.uint64(0xFFFFFFFF)
    t0, t1, t2, t3 = x & m, x >> np.uint64(32), y & m, y >> np.uint64(32)
    r = ((t0 ^ (t1 * np.uint64(3) & m)) + t2 * np.uint64(5)) & m
    r = r ^ t3 ^ np.arange(len(x), dtype=np.uint64)
    return (r & m).astype(np.uint32), None


@_ref("ld_global_v2_f64")
def _ld_v2_f64(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    x, y = _pairs(ins[0])
    return np.array([int(a) ^ _brev64(int(b)) for a, b in zip(x, y, strict=True)],
                    dtype=np.uint64), None


@_ref("ld_global_v4_f32")
def _ld_v4_f32(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    x, y = _pairs(ins[0])
    m = np.uint64(0xFFFFFFFF)
    v = [x & m, x >> np.uint64(32), y & m, y >> np.uint64(32)]
    even = np.arange(len(x)) % 2 == 0
    return np.where(even, v[0], v[1]) | (np.where(even, v[3], v[2]) << np.uint64(32)), None


@_ref("st_global_v2_u32")
def _st_v2(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    i = np.arange(len(ins[1]))
    lead = ins[1][i & ~1]
    return np.where(i % 2 == 0, lead, lead ^ np.uint32(0x5555)), None


def _v4_words(a: np.ndarray) -> list[np.ndarray]:
    return [a, a ^ np.uint32(0x5555), a + np.uint32(77), ~a]


@_ref("st_global_v4_u32")
def _st_v4(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    i = np.arange(len(ins[1]))
    words = _v4_words(ins[1][i & ~3])
    return np.choose(i % 4, words).astype(np.uint32), None


def _neighbour(a: np.ndarray) -> np.ndarray:
    return a[np.arange(len(a)) ^ 1]


def _shared_next(a: np.ndarray) -> np.ndarray:
    i, base = _tid(len(a))
    return a[base + (i % spec.BLOCK + 37) % spec.BLOCK]


for _c in MINE:
    if _c.family == "ld/st qualifiers" and _c.name.startswith("ld"):
        REFS[_c.name] = lambda c, ins: (_neighbour(ins[0]) ^ ins[0], None)
    elif (_c.family == "ld/st qualifiers" and _c.name.startswith("st")) or \
            _c.family == "membar/fence":
        REFS[_c.name] = lambda c, ins: (_neighbour(ins[0] ^ ins[1]), None)
    elif (_c.family == "bar.sync + shared" and _c.name.endswith("_shared")
          and not _c.name.startswith("bar_warp")) or _c.name in (
            "bar_sync_shared_u32addr", "cvta_shared", "cvta_to_shared", "cvta_to_shared_u32"):
        REFS[_c.name] = lambda c, ins: (_shared_next(ins[0]), None)
    elif _c.family == "prefetch" or _c.name == "cvta_to_local":
        REFS[_c.name] = lambda c, ins: (ins[0] + np.uint32(1), None)
    elif _c.family == "isspacep":
        bit = {"isspacep_global": 1, "isspacep_shared": 2, "isspacep_local": 4}[_c.name]
        REFS[_c.name] = lambda c, ins, bit=bit: (ins[0] ^ np.uint32(bit), None)
REFS["cvta_to_global"] = lambda c, ins: (ins[0] ^ np.uint32(0x1234), None)


def _setp_half(cmp: str, t: str, ftz: bool = False, all_ones: bool = False) -> Ref:
    """setp/set on f16/bf16 bits: the values compared exactly (numpy f16, or bf16 as the top
    half of an f32), unordered forms true on NaN; .ftz flushes subnormals to signed zero."""
    return _elementwise(_half_compare(cmp, t, ftz, all_ones))


def _half_compare(cmp: str, t: str, ftz: bool = False,
                  all_ones: bool = False) -> Callable[[int, int], int]:
    def value(bits: int) -> float:
        if t == "f16":
            if ftz and (bits & 0x7C00) == 0:
                return -0.0 if bits & 0x8000 else 0.0
            return float(np.uint16(bits).view(np.float16))
        x = float(np.uint32(bits << 16).view(np.float32))
        return (-0.0 if bits & 0x8000 else 0.0) if ftz and (bits & 0x7f80) == 0 else x

    def fn(a: int, b: int) -> int:
        x, y = value(a), value(b)
        nan = x != x or y != y
        ordered = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
                   "ge": x >= y}
        if cmp in ("num", "nan"):
            r = nan == (cmp == "nan")
        elif cmp.endswith("u"):
            r = nan or ordered[cmp[:-1]]
        else:
            r = not nan and ordered[cmp]
        return (0xFFFFFFFF if r else 0) if all_ones else int(r)
    return fn


for _t, _cmps in (("f16", ("lt", "geu", "ne", "nan")), ("bf16", ("ltu", "eq", "num"))):
    for _cmp in _cmps:
        REFS[f"setp_{_cmp}_{_t}"] = _setp_half(_cmp, _t)
REFS["cvta_global"] = lambda c, ins: (ins[0].copy(), None)
for _cmp in ("lt", "equ", "ne"):
    REFS[f"setp_{_cmp}_ftz_f16"] = _setp_half(_cmp, "f16", ftz=True)


def _setp_pair(cmp: str, t: str, ftz: bool, boolop: str = "", c_of: Callable[..., int] | None
               = None) -> Ref:
    """setp on f16x2/bf16x2: p compares the low halves, q the high ones (each combined with
    c by the boolop), the output p | q << 1."""
    lane = _half_compare(cmp, t, ftz)

    def fn(a: int, b: int) -> int:
        lo, hi = lane(a & 0xFFFF, b & 0xFFFF), lane(a >> 16, b >> 16)
        if boolop:
            cv = c_of(a, b) if c_of else 0
            op = {"and": lambda x, y: x & y, "or": lambda x, y: x | y}[boolop]
            lo, hi = op(lo, cv), op(hi, cv)
        return lo | hi << 1
    return _elementwise(fn)


for _name, _cmp, _t, _ftz, _op, _cf in (
        ("setp_lt_f16x2", "lt", "f16", False, "", None),
        ("setp_geu_ftz_f16x2", "geu", "f16", True, "", None),
        ("setp_ne_f16x2", "ne", "f16", False, "", None),
        ("setp_nan_f16x2", "nan", "f16", False, "", None),
        ("setp_le_and_f16x2", "le", "f16", False, "and", lambda a, b: 1 - (a & 1)),
        ("setp_gt_bf16x2", "gt", "bf16", False, "", None),
        ("setp_equ_bf16x2", "equ", "bf16", False, "", None),
        ("setp_num_bf16x2", "num", "bf16", False, "", None),
        ("setp_lt_or_bf16x2", "lt", "bf16", False, "or", lambda a, b: b & 1)):
    REFS[_name] = _setp_pair(_cmp, _t, _ftz, _op, _cf)


def _half_approx(fn: Callable[[np.ndarray], np.ndarray], t: str, flush: bool) -> Ref:
    """ex2/tanh of 16-bit float lanes: exact in float64, rounded to nearest even (bf16 through
    f32: the comparison allows the op's bound anyway), NaN the canonical 0x7fff; `flush`
    (ex2.approx.ftz.bf16) makes a subnormal result +0."""
    def lanes(bits: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            if t == "f16":
                x = bits.astype(np.uint16).view(np.float16).astype(np.float64)
                r = fn(x).astype(np.float16).view(np.uint16).astype(np.uint32)
                subnormal = (r & 0x7C00) == 0
            else:
                x = (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
                f = fn(x).astype(np.float32).view(np.uint32).astype(np.uint64)
                r = ((f + np.uint64(0x7FFF) + ((f >> np.uint64(16)) & np.uint64(1)))
                     >> np.uint64(16)).astype(np.uint32)
                subnormal = (r & 0x7F80) == 0
            r = np.where(np.isnan(x) | np.isnan(fn(x)), np.uint32(0x7FFF), r)
            if flush:
                r = np.where(subnormal, r & np.uint32(0x8000), r)
            return r

    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
        a = ins[0].astype(np.uint32)
        if c.output == "u16":
            return lanes(a).astype(np.uint16), None
        return (lanes(a & np.uint32(0xFFFF)) | lanes(a >> np.uint32(16)) << np.uint32(16)), None
    return ref


for _c in spec.HALF_APPROX:
    _t = "bf16" if "bf16" in _c.name else "f16"
    REFS[_c.name] = _half_approx(np.exp2 if _c.name.startswith("ex2") else np.tanh, _t,
                                 _c.name.startswith("ex2") and _t == "bf16")


@_ref("bar_warp_sync_shared")
def _warp_sync(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    i, base = _tid(len(ins[0]))
    return ins[0][base + (i % spec.BLOCK ^ 5)], None


@_ref("shared_v4_v2")
def _shared_v4(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    i, base = _tid(len(ins[0]))
    w = _v4_words(ins[0][base + (i % spec.BLOCK ^ 1)])
    return w[2].astype(np.uint64) | w[3].astype(np.uint64) << np.uint64(32), None


def _atomic(op: str, t: str, old: int, b: int, c: int = 0) -> int:
    w = _width(t)
    if op == "add":
        return old + b
    if op in ("min", "max"):
        x, y = (_s(old, w), _s(b, w)) if t[0] == "s" else (old, b)
        return min(x, y) if op == "min" else max(x, y)
    if op == "inc":
        return 0 if old >= b else old + 1
    if op == "dec":
        return b if old == 0 or old > b else old - 1
    if op == "exch":
        return b
    if op == "cas":
        return c if old == b else old
    return _logic(op, w)(old, b)


def _float_atomic_add(a: np.ndarray, b: np.ndarray, t: str, shared: bool) -> np.ndarray:
    with np.errstate(all="ignore"):
        # atom.add.f32 on global memory flushes subnormal inputs and results;
        # on shared memory the H200 keeps them.
        if t == "f32" and not shared:
            return _flush(_flush(a) + _flush(b))
        return a + b


def _own_ref(op: str, t: str) -> Ref:
    w = _width(t)

    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        if t[0] == "f":
            return _float_atomic_add(ins[0], ins[1], t, ".shared" in c.body), None
        rows = []
        for vals in zip(*(_ints(a) for a in ins), strict=True):
            new = _u(_atomic(op, t, *vals), w)
            if c.output == "u64" and w == 32:
                rows.append(vals[0] | new << 32)
            elif c.output == "u64" and not c.name.startswith("red"):
                rows.append(vals[0] ^ _brev64(new))
            else:
                rows.append(new)
        return _out(c, rows), None
    return ref


_INIT = {"add": 0, "min": -1, "max": 0, "and": -1, "or": 0, "xor": 0, "inc": 0, "dec": 0}


def _total_ref(op: str, t: str, space: str) -> Ref:
    w = _width(t)

    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        n = len(ins[0])
        out = np.zeros(n, dtype=ins[0].dtype)
        for base in range(0, n, spec.BLOCK):
            block = ins[0][base:base + spec.BLOCK]
            if t[0] == "f":
                start = 0.0 if space == "shared" else float(block[0])
                out[base:base + spec.BLOCK] = start + float(np.sum(block.astype(np.float64)))
                continue
            if space == "shared":
                total = _INIT[op]
                if op == "min" and t[0] == "s":
                    total = (1 << (w - 1)) - 1
                if op == "max" and t[0] == "s":
                    total = 1 << (w - 1)
            else:
                total = int(_ints(block)[0])
            total = _u(total, w)
            for v in _ints(block):
                total = _u(_atomic(op, t, total, 100 if op in ("inc", "dec") else v), w)
            out[base:base + spec.BLOCK] = total
        return out, None
    return ref


for _c in spec.ATOMICS:
    _m = re.search(r"(?:atom|red)[\w.]*?\.(add|min|max|inc|dec|and|or|xor|exch|cas)"
                   r"\.([bsuf]\d+) ", _c.body)
    if _m:
        _op, _t = _m.groups()
        if "_total_" in _c.name:
            REFS[_c.name] = _total_ref(_op, _t, "shared" if "shared" in _c.name else "global")
        else:
            REFS[_c.name] = _own_ref(_op, _t)


def _shfl_ref(mode: str, c_val: int, bmask: int, half: bool, divergent: bool,
              b_const: int | None = None) -> Ref:
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        a, b = ins
        n = len(a)
        out = np.zeros(n, dtype=np.uint64)
        for i in range(n):
            lane = i % 32
            warp = i - lane
            if divergent and lane >= 16:
                out[i] = 7
                continue
            bval = (int(b[i]) if b_const is None else b_const) & bmask & 31
            cval, segmask = c_val & 31, (c_val >> 8) & 31
            max_lane = (lane & segmask) | (cval & ~segmask)
            min_lane = lane & segmask
            j = {"up": lane - bval, "down": lane + bval, "bfly": lane ^ bval,
                 "idx": min_lane | (bval & ~segmask)}[mode]
            p = j >= max_lane if mode == "up" else j <= max_lane
            src = j if p else lane
            out[i] = int(a[warp + src]) | int(p) << 32
        return out, None
    return ref


for _c in spec.WARP:
    _m = re.search(r"shfl\.sync\.(\w+)\.b32 %t1\|%q0, %a0, (%t0|\d+), (0x[0-9a-f]+|\d+), ",
                   _c.body)
    if _m and _c.family == "shfl.sync":
        _bm = re.search(r"and\.b32 %t0, %a1, (\d+);", _c.body)
        REFS[_c.name] = _shfl_ref(_m.group(1), int(_m.group(3), 0),
                                  int(_bm.group(1)) if _bm else 31, "half" in _c.name,
                                  "divergent" in _c.name,
                                  None if _m.group(2) == "%t0" else int(_m.group(2)))


def _ldmatrix_ref(count: int, trans: bool, hi: bool) -> Ref:
    """Lane t gets of matrix i (row r at the row lane 8 i + r gave) the elements (t / 4,
    2 (t % 4)) and (t / 4, 2 (t % 4) + 1), transposed with .trans (PTX ISA 9.7.14.5.15)."""
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
        words = ins[0].astype(np.uint32)
        n = len(words)
        out = np.zeros(n, dtype=np.uint64)
        for base in range(0, n, spec.BLOCK):
            rows = words[base:base + spec.BLOCK].view(np.uint16).reshape(32, 8)
            for w in range(spec.BLOCK // 32):
                regs = np.zeros((32, 4), dtype=np.uint64)
                for i in range(count):
                    m = rows[[((8 * i + r) * 5 + 7 * w + 3) % 32 for r in range(8)]]
                    m = m.T if trans else m
                    for t in range(32):
                        regs[t, i] = int(m[t // 4, 2 * (t % 4)]) | int(
                            m[t // 4, 2 * (t % 4) + 1]) << 16
                lo = 2 if hi else 0
                packed = regs[:, lo] | (regs[:, lo + 1] << np.uint64(32) if count > 1 else 0)
                out[base + 32 * w:base + 32 * w + 32] = packed
        return out, None
    return ref


for _c in spec.MATRIX:
    if _c.family == "ldmatrix":
        _n = int(re.search(r"_x(\d)", _c.name).group(1))
        REFS[_c.name] = _ldmatrix_ref(_n, "trans" in _c.name, _c.name.endswith("_hi"))


def _mma_ref(atype: str, part: str) -> Ref:
    """D = A B + C of each warp, its fragments where PTX puts them (PTX ISA 9.7.14.5.7-9,
    g = lane / 4, t = lane % 4), exact in float64 (the inputs are small integers)."""
    def ref(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
        n = len(ins[0])
        out = np.zeros(n, dtype=np.uint64)
        f64 = atype == "f64"
        for w0 in range(0, n, 32):
            if f64:
                x = [a[w0:w0 + 32].astype(np.float64) for a in ins]
                a, b, cm = np.zeros((8, 4)), np.zeros((4, 8)), np.zeros((8, 8))
                for lane in range(32):
                    g, t = divmod(lane, 4)
                    a[g, t], b[t, g] = x[0][lane], x[1][lane]
                    cm[g, 2 * t], cm[g, 2 * t + 1] = x[2][lane], 2 * x[2][lane]
                d = a @ b + cm
                for lane in range(32):
                    g, t = divmod(lane, 4)
                    out[w0 + lane] = np.float64(d[g, 2 * t + int(part[1])]).view(np.uint64)
                continue
            words = [a[w0:w0 + 32].view(np.uint32).reshape(32, 2) for a in ins]
            if atype == "tf32":
                vals = [wd.view(np.float32).astype(np.float64) for wd in words]
                a, b = np.zeros((16, 8)), np.zeros((8, 8))
            else:
                halves = [wd.view(np.uint16).reshape(32, 2, 2) for wd in words]
                vals = [h.view(np.float16).astype(np.float64) if atype == "f16" else
                        (h.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
                        for h in halves]
                a, b = np.zeros((16, 16)), np.zeros((16, 8))
            cm = np.zeros((16, 8))
            k2 = a.shape[1] // 2
            for lane in range(32):
                g, t = divmod(lane, 4)
                regs_a = [vals[0][lane, 0], vals[0][lane, 1], vals[1][lane, 0], vals[1][lane, 1]]
                regs_b = [vals[2][lane, 0], vals[2][lane, 1]]
                for i, r in enumerate(regs_a):
                    row = g + 8 * (i % 2)
                    if atype == "tf32":
                        a[row, t + k2 * (i // 2)] = r
                    else:
                        a[row, 2 * t + k2 * (i // 2):2 * t + k2 * (i // 2) + 2] = r
                for i, r in enumerate(regs_b):
                    if atype == "tf32":
                        b[t + k2 * i, g] = r
                    else:
                        b[2 * t + k2 * i:2 * t + k2 * i + 2, g] = r
                idx = w0 + lane
                for i, v in enumerate((idx, -idx, 2 * idx, -2 * idx)):
                    cm[g + 8 * (i // 2), 2 * t + i % 2] = v
            d = (a @ b + cm).astype(np.float32).view(np.uint32).astype(np.uint64)
            for lane in range(32):
                g, t = divmod(lane, 4)
                row = g if part == "d01" else g + 8
                out[w0 + lane] = d[row, 2 * t] | d[row, 2 * t + 1] << np.uint64(32)
        return out, None
    return ref


for _c in spec.MATRIX:
    if _c.family == "mma.sync":
        _shape, _t, _part = _c.name.split("_")[2:]
        REFS[_c.name] = _mma_ref(_t, _part)


@_ref("sreg_tid_ntid_ctaid")
def _sreg1(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    n = len(ins[0])
    i = np.arange(n, dtype=np.uint64)
    lo = i % np.uint64(128) | np.uint64(128 << 11 | 1 << 20 | 1 << 26)
    hi = i // np.uint64(128) | np.uint64((n // 128) << 16)
    return lo | hi << np.uint64(32), None


@_ref("sreg_yz_laneid")
def _sreg2(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, None]:
    i = np.arange(len(ins[0]), dtype=np.uint32)
    return (np.uint32(1 << 8 | 1 << 12 | 32 << 24) | (i % np.uint32(32)) << np.uint32(16)), None


# -- the test --------------------------------------------------------------------------------

for _c in MINE:  # atomic vector accesses: the same values as the plain ones
    if _c.family == "ld/st atomic vector":
        REFS[_c.name] = REFS[("ld_global" if _c.name.startswith("ld") else "st_global")
                             + _c.name[-7:]]


def _tf32_rounded(rnd: str, relu: bool, satfinite: bool) -> Ref:
    """cvt.{rn,rz,rna}{.relu}{.satfinite}.tf32.f32: the f32 bits rounded at bit 13 (.rn to
    nearest even, .rz toward zero, .rna ties away), the low 13 bits cleared; .satfinite an
    infinite result the largest finite 0x7f7fe000 with the sign; .relu a negative result +0.
    A NaN gives, as on the H200, tf32's canonical 0x7fffe000 (.rn, .rz, with .relu too), or
    with .rna.satfinite its truncated bits less one tf32 unit (0x7f800001 -> 0x7f7fe000)."""
    def one(x: int) -> int:
        if (x & 0x7FFFFFFF) > 0x7F800000:
            return ((x & 0xFFFFE000) - 0x2000) & 0xFFFFFFFF if rnd == "rna" else 0x7FFFE000
        inc = {"rz": 0, "rna": 0x1000, "rn": 0xFFF + ((x >> 13) & 1)}[rnd]
        r = ((x + inc) & 0xFFFFE000) & 0xFFFFFFFF
        if satfinite and r & 0x7FFFFFFF == 0x7F800000:
            r = (x & 0x80000000) | 0x7F7FE000
        if relu and x & 0x80000000:
            r = 0
        return r
    return _elementwise(one)


for _m in ("rn", "rz", "rn_relu", "rz_relu", "rna_satfinite"):
    REFS[f"cvt_{_m}_tf32_f32"] = _tf32_rounded(_m.split("_")[0], "relu" in _m, "satfinite" in _m)


# -- mad.hi.sat, tf32 and fp8 -------------------------------------------------------------


@_ref("mad_hi_sat_s32")
def _mad_hi_sat(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
    """The high half of a * b plus c, clamped to the s32 range (not wrapped)."""
    def one(a: int, b: int, x: int) -> int:
        return min(max(((_s(a, 32) * _s(b, 32)) >> 32) + _s(x, 32), -(1 << 31)), (1 << 31) - 1)
    return _elementwise(one)(c, ins)


@_ref("cvt_rna_tf32_f32")
def _tf32(c: spec.Case, ins: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
    """f32 rounded to 10 mantissa bits, ties away from zero, as f32 bits with the low 13 zero.
    A NaN keeps its upper 19 bits (the H200: 0x7fc00001 -> 0x7fc00000, 0x7fa00000 kept); one
    whose payload is all in the low 13 bits (not captured) is modelled as getting the quiet bit."""
    def one(x: int) -> int:
        if (x & 0x7FFFFFFF) > 0x7F800000:
            t = x & 0xFFFFE000
            return t | 0x400000 if t & 0x7FFFFF == 0 else t
        return ((x + 0x1000) & 0xFFFFE000) & 0xFFFFFFFF
    return _elementwise(one)(c, ins)


def _fp8(x: float, e: int, relu: bool) -> int:
    """x (exactly an f32 value) to E4M3 (e = 4) or E5M2 (e = 5), .rn.satfinite{.relu}: to
    nearest even, subnormals included; beyond the largest finite value (infinity too) that
    value (0x7e, 0x7b); NaN 0x7f; -0 keeps its sign; .relu: negatives and -0 give +0."""
    m, bias = 7 - e, (1 << (e - 1)) - 1
    top = 0x7E if e == 4 else 0x7B
    if np.isnan(x):
        return 0x7F
    sign = 1 if np.signbit(x) else 0
    if relu and sign:
        return 0
    if np.isinf(x):
        return top | sign << 7
    q = Fraction(abs(float(x))) / Fraction(2) ** (1 - bias - m)  # in units of the quantum
    if q < 1 << m:  # subnormal (or rounds to the smallest normal, encoded alike)
        code = _round_half_even(q)
    else:
        exp = q.numerator.bit_length() - q.denominator.bit_length()
        exp -= 1 if Fraction(2) ** exp > q else 0  # q in [2^exp, 2^(exp+1))
        scale = Fraction(2) ** (exp - m)
        mant = _round_half_even(q / scale)  # in [2^m, 2^(m+1)]
        code = ((exp - m + 1) << m) + mant - (1 << m)
    return min(code, top) | sign << 7


def _round_half_even(q: Fraction) -> int:
    n = q.numerator // q.denominator
    r = q - n
    return n + 1 if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2) else n


def _fp8_to_f16(code: int, e: int, relu: bool = False) -> int:
    """An fp8 byte as f16 bits, exactly; NaNs (E4M3 0x7f/0xff, E5M2 exponent 31 with a
    mantissa) give 0x7fff; .relu: negatives (-0 and -Inf too) give +0."""
    m, bias = 7 - e, (1 << (e - 1)) - 1
    sign, exp, mant = code >> 7, (code >> m) & ((1 << e) - 1), code & ((1 << m) - 1)
    if (e == 4 and code & 0x7F == 0x7F) or (e == 5 and exp == 31 and mant):
        return 0x7FFF
    if relu and sign:
        return 0
    if e == 5 and exp == 31:
        return code << 8
    v = (mant if exp == 0 else (1 << m) + mant) * 2.0 ** (max(exp, 1) - bias - m)
    return int(np.array([v], np.float16).view(np.uint16)[0]) | sign << 15


for _t, _e in (("e4m3", 4), ("e5m2", 5)):
    for _relu in (False, True):
        REFS[f"cvt_rn_satfinite_{'relu_' if _relu else ''}{_t}x2_f32"] = _elementwise(
            lambda a, b, e=_e, relu=_relu: _fp8(np.uint32(a).view(np.float32), e, relu) << 8
            | _fp8(np.uint32(b).view(np.float32), e, relu))
    REFS[f"cvt_rn_satfinite_{_t}x2_f16x2"] = _elementwise(
        lambda a, e=_e: _fp8(np.uint16(a >> 16).view(np.float16), e, False) << 8
        | _fp8(np.uint16(a & 0xFFFF).view(np.float16), e, False))
    REFS[f"cvt_rn_f16x2_{_t}x2"] = _elementwise(
        lambda a, e=_e: _fp8_to_f16(a >> 8 & 0xFF, e) << 16 | _fp8_to_f16(a & 0xFF, e))
    # Issue 14's directed inputs and the .relu forms.
    for _relu in (False, True):
        _r = "relu_" if _relu else ""
        REFS[f"cvt_rn_satfinite_{_r}{_t}x2_f32_edges"] = REFS[f"cvt_rn_satfinite_{_r}{_t}x2_f32"]
        REFS[f"cvt_rn_satfinite_{_r}{_t}x2_f16x2{'' if _relu else '_all'}"] = _elementwise(
            lambda a, e=_e, relu=_relu: _fp8(np.uint16(a >> 16).view(np.float16), e, relu) << 8
            | _fp8(np.uint16(a & 0xFFFF).view(np.float16), e, relu))
    REFS[f"cvt_rn_relu_f16x2_{_t}x2"] = _elementwise(
        lambda a, e=_e: _fp8_to_f16(a >> 8 & 0xFF, e, True) << 16
        | _fp8_to_f16(a & 0xFF, e, True))



def _pack_sat(a: int, b: int, c: int | None, width: int, signed: bool) -> int:
    """cvt.pack.sat: a and b (s32) saturated to `width` bits, a above b, c's bits above both."""
    low, high = (-(1 << width - 1), (1 << width - 1) - 1) if signed else (0, (1 << width) - 1)
    mask = (1 << width) - 1

    def sat(x: int) -> int:
        x = x - (1 << 32) if x >= 1 << 31 else x
        return min(max(x, low), high) & mask
    packed = sat(a) << width | sat(b)
    return (packed | (c << 2 * width if c is not None else 0)) & 0xFFFFFFFF


for _t in ("s16", "u16"):
    REFS[f"cvt_pack_sat_{_t}_s32"] = _elementwise(
        lambda a, b, t=_t: _pack_sat(a, b, None, 16, t[0] == "s"))
for _t in ("s8", "u8", "s4", "u4", "s2", "u2"):
    REFS[f"cvt_pack_sat_{_t}_s32_b32"] = _elementwise(
        lambda a, b, c, t=_t: _pack_sat(a, b, c, int(t[1:]), t[0] == "s"))

# Every reference is registered by now (the fp8 ones above too).
CASES = [c for c in MINE if c.name in REFS and not (spec.GOLDEN / f"{c.name}.npz").exists()]


@pytest.fixture(scope="module", autouse=True)
def _write_results():
    yield
    merge_results("spirv-cpu-reference", _results)


def test_references_cover_the_new_cases() -> None:
    """Every issue 4 case has a reference here, except those in NO_REFERENCE (with why)."""
    missing = {c.name for c in MINE if c.name not in REFS}
    assert missing == set(NO_REFERENCE), sorted(missing ^ set(NO_REFERENCE))


@pytest.mark.parametrize("name", [c.name for c in MINE if c.name in REFS
                                  and (spec.GOLDEN / f"{c.name}.npz").exists()])
def test_reference_matches_h200(name: str) -> None:
    """The reference, on the golden inputs, gives the H200's outputs: it models the hardware
    (where the H200 departs from the ISA's text, the reference says so), so it can stand in
    for the H200 for cases captured later."""
    c = spec.case(name)
    golden = np.load(spec.GOLDEN / f"{name}.npz")
    ins = [golden[f"in{i}"] for i in range(len(c.inputs))]
    want, mask = REFS[name](c, ins)
    want = want.astype(spec.output_dtype(c))
    got = golden["out"]
    g, w = (got, want) if mask is None else (got[mask], want[mask])
    status, ndiff = spec.compare(c, g, w)
    assert status != "mismatch", (f"{ndiff} of {len(g)} differ: "
                                  + _first_differences(c, got, want, ins, mask))


def _first_differences(c: spec.Case, got: np.ndarray, want: np.ndarray,
                       ins: list[np.ndarray], mask: np.ndarray | None) -> str:
    if c.output in ("f32", "f64"):
        it = np.uint32 if c.output == "f32" else np.uint64
        bad = (got.view(it) != want.view(it)) & ~(np.isnan(got) & np.isnan(want))
    else:
        bad = got != want
    if mask is not None:
        bad &= mask
    rows = []
    for i in np.flatnonzero(bad)[:4]:
        args = ", ".join(f"{_ints(a[i:i + 1])[0]:#x}" for a in ins)
        rows.append(f"[{i}] in=({args}) got={got[i]!r} want={want[i]!r}")
    return "; ".join(rows)


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_spirv_cpu_matches_reference(name: str, device) -> None:
    c = spec.case(name)
    ins = spec.inputs(c)
    rejected = expected_rejection("spirv", c)
    if rejected:
        _results[name] = {"family": c.family, "status": "unsupported", "detail": rejected}
        pytest.skip(f"unsupported: {rejected}")
    try:
        got = run_case(device, c, ins)
    except zmlir.CompileError as err:
        _results[name] = {"family": c.family, "status": "error",
                          "detail": str(err).splitlines()[0]}
        raise
    except Exception as err:  # the OpenCL runtime rejected what we produced
        _results[name] = {"family": c.family, "status": "error",
                          "detail": f"{type(err).__name__}: {str(err).splitlines()[0]}"}
        raise
    want, mask = REFS[name](c, ins)
    want = want.astype(spec.output_dtype(c))
    g, w = (got, want) if mask is None else (got[mask], want[mask])
    status, ndiff = spec.compare(c, g, w)
    detail = f"{ndiff} of {len(g)} differ: " + _first_differences(c, got, want, ins, mask) \
        if ndiff else ""
    _results[name] = {"family": c.family, "status": status, "detail": detail}
    assert status != "mismatch", detail
