"""PTX instruction fidelity cases: one small kernel per instruction variant family.

Each case is an element-wise kernel `k(out, in0, in1, in2, n)`: thread i loads in0[i], in1[i],
in2[i] into %a0, %a1, %a2 (registers of the case's input types), runs the case's PTX body, which
leaves its result in %d, and stores %d to out[i]. Inputs are generated here, deterministically:
exhaustive where the input space is at most 2^16, else random plus edge cases (NaN payloads,
+-Inf, +-0, subnormals, INT_MIN/INT_MAX, shift counts at and past the width, rounding ties,
out-of-range conversions). Blocks are 128 threads, so warp-level cases see full warps.

This module needs numpy only: tools/capture_golden.py imports it on the GPU machine, and
test/fidelity/test_ptx_fidelity.py on the CI machine. `python3 test/ptx/spec.py` rewrites the PTX files
in test/ptx/kernels/ from the cases below.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
GOLDEN = HERE / "golden"
BLOCK = 128

# Register type of each input/output kind, its numpy dtype and byte width.
KINDS = {
    "u16": ("b16", np.uint16), "u32": ("b32", np.uint32), "u64": ("b64", np.uint64),
    "f32": ("f32", np.float32), "f64": ("f64", np.float64),
}


@dataclass(frozen=True)
class Tolerance:
    """How far an .approx result may be from the H200's: `ulp` units in the last place of
    the golden value, or an absolute error `abs`. NVIDIA documents the op's error against the
    exact result; both results are within it, so they may differ by up to twice the bound."""

    ulp: int = 0
    abs: float = 0.0
    source: str = ""
    half: str = ""  # "f16" or "bf16": a u16 (u32: two lanes) output in that format


@dataclass(frozen=True)
class Case:
    name: str
    family: str  # row of docs/fidelity.md
    body: str  # PTX using %a0..%a2 (inputs), %d (result), %t0..%t3/%q0..%q3/%w0..%w3 temps
    inputs: tuple[str, ...]
    output: str
    gen: str = "random"  # see _inputs
    tolerance: Tolerance | None = None
    preamble: str = ""  # module-level PTX (device functions)
    locals_: str = ""  # function-level declarations (.local arrays)
    extra: dict[str, object] = field(default_factory=dict)


def _c(name: str, family: str, body: str, inputs: str, output: str, **kw: object) -> Case:
    return Case(name, family, body, tuple(inputs.split()), output, **kw)  # type: ignore[arg-type]


SELP = "selp.u32 %d, 1, 0, %q0;"
# -- coverage of every instruction family (issue 4) ----------------------------------------
# Extra registers for the cases below (declared through `locals_`): %x 64-bit, %e f64,
# %s 16-bit, %g predicates.
XREGS = ".reg .b64 %x<4>;\n\t.reg .f64 %e<4>;\n\t.reg .b16 %s<4>;\n\t.reg .pred %g<4>;"
SMALL = {"n_random": 512}  # inputs per case beyond the edge cases
_IK = {"8": "u16", "16": "u16", "32": "u32", "64": "u64"}  # input kind of an integer width
_ITYPES = ("s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64")


def _ik(t: str) -> str:
    return _IK[t[1:]]


def _ok(t: str) -> str:  # output kind of an integer type (8-bit results in 32-bit registers)
    return "u32" if t[1:] == "8" else _IK[t[1:]]


def _wide(t: str) -> str:  # the double width type of mul.wide / mad.wide
    return t[0] + str(2 * int(t[1:]))


def _ints(name: str, family: str, body: str, t: str, arity: int, out: str | None = None,
          gen: str | None = None) -> Case:
    """An integer case whose inputs are all of type t (64-bit ones with INT64_MIN/MAX)."""
    return _c(name, family, body, " ".join([_ik(t)] * arity), out or _ik(t),
              gen=gen or ("wide" if t.endswith("64") else "random"), extra=SMALL)


_I163264 = ("s16", "u16", "s32", "u32", "s64", "u64")
INT_ARITH = [
    *[_ints(f"{op}_{t}", "add/sub", f"{op}.{t} %d, %a0, %a1;", t, 2)
      for op in ("add", "sub") for t in _I163264],
    *[_ints(f"mul_{m}_{t}", "mul .lo/.hi/.wide", f"mul.{m}.{t} %d, %a0, %a1;", t, 2)
      for m in ("lo", "hi") for t in _I163264],
    *[_ints(f"mul_wide_{t}", "mul .lo/.hi/.wide", f"mul.wide.{t} %d, %a0, %a1;", t, 2,
            out=_ik(_wide(t))) for t in _I163264[:4]],
    *[_ints(f"mad_{m}_{t}", "mad .lo/.hi/.wide", f"mad.{m}.{t} %d, %a0, %a1, %a2;", t, 3)
      for m in ("lo", "hi") for t in _I163264],
    *[_c(f"mad_wide_{t}", "mad .lo/.hi/.wide", f"mad.wide.{t} %d, %a0, %a1, %a2;",
         f"{_ik(t)} {_ik(t)} {_ik(_wide(t))}", _ik(_wide(t)), extra=SMALL)
      for t in _I163264[:4]],
    _ints("mad_hi_sat_s32", "mad .lo/.hi/.wide", "mad.hi.sat.s32 %d, %a0, %a1, %a2;", "s32", 3),
    *[_ints(f"{op}_{t}", "div/rem", f"{op}.{t} %d, %a0, %a1;", t, 2)
      for op in ("div", "rem") for t in _I163264],
    *[_ints(f"{op}_{t}", "abs/neg", f"{op}.{t} %d, %a0;", t, 1)
      for op in ("abs", "neg") for t in ("s16", "s32", "s64")],
    *[_ints(f"{op}_{t}", "min/max", f"{op}.{t} %d, %a0, %a1;", t, 2)
      for op in ("min", "max") for t in _I163264],
]
LOGIC = [
    *[_ints(f"{op}_b{w}", "and/or/xor/not", f"{op}.b{w} %d, %a0, %a1;", f"u{w}", 2)
      for op in ("and", "or", "xor") for w in (16, 32, 64)],
    *[_ints(f"not_b{w}", "and/or/xor/not", f"not.b{w} %d, %a0;", f"u{w}", 1)
      for w in (16, 32, 64)],
    *[_c(f"{op}_pred", "and/or/xor/not", "and.b32 %t0, %a0, 1; setp.ne.u32 %q0, %t0, 0; "
         "and.b32 %t1, %a1, 1; setp.ne.u32 %q1, %t1, 0; "
         f"{op}.pred %q2, %q0, %q1; selp.u32 %d, 1, 0, %q2;", "u32 u32", "u32", extra=SMALL)
      for op in ("and", "or", "xor")],
    _c("not_pred", "and/or/xor/not", "and.b32 %t0, %a0, 1; setp.ne.u32 %q0, %t0, 0; "
       "not.pred %q2, %q0; selp.u32 %d, 1, 0, %q2;", "u32", "u32", extra=SMALL),
    *[_c(f"{op}_{t}", "shl/shr", f"{op}.{t} %d, %a0, %a1;", f"{_ik(t)} u32", _ik(t),
         gen="shifts", extra=SMALL)
      for op, t in (("shl", "b16"), ("shr", "u16"), ("shr", "s16"), ("shl", "b64"),
                    ("shr", "u64"), ("shr", "s64"), ("shr", "u32"))],
]
FLOAT_ARITH = [
    *[_c(f"{op}_{'_'.join(m)}_{t}".replace("__", "_"), f"{op} .rn .ftz .sat",
         f"{op}{''.join('.' + x for x in m)}.{t} %d, %a0, %a1;", f"{t} {t}", t, gen="pairs",
         extra=SMALL)
      for op in ("add", "sub", "mul")
      for m, t in ((("rn",), "f32"), (("rn", "ftz"), "f32"), (("rn", "sat"), "f32"),
                   (("rn", "ftz", "sat"), "f32"), ((), "f32"), (("rn",), "f64"))],
    *[_c(f"{op}_{'_'.join(m)}_{t}", "fma/mad .rn .ftz .sat",
         f"{op}.{'.'.join(m)}.{t} %d, %a0, %a1, %a2;", f"{t} {t} {t}", t, extra=SMALL)
      for op, m, t in (("fma", ("rn",), "f32"), ("fma", ("rn", "ftz"), "f32"),
                       ("fma", ("rn", "sat"), "f32"), ("fma", ("rn", "ftz", "sat"), "f32"),
                       ("fma", ("rn",), "f64"),
                       ("mad", ("rn",), "f32"), ("mad", ("rn", "ftz"), "f32"),
                       ("mad", ("rn",), "f64"))],
    *[_c(f"div_{'_'.join(m)}_{t}", "div .approx/.full/.rn",
         f"div.{'.'.join(m)}.{t} %d, %a0, %a1;", f"{t} {t}", t, gen="pairs", extra=SMALL,
         tolerance=tol)
      for m, t, tol in (
          (("approx",), "f32", Tolerance(ulp=2, source="PTX ISA div.approx.f32: max 2 ulp "
                                                      "for |b| in [2^-126, 2^126]")),
          (("approx", "ftz"), "f32", Tolerance(ulp=2, source="PTX ISA div.approx.f32: max 2 "
                                                             "ulp for |b| in [2^-126, 2^126]")),
          (("full",), "f32", Tolerance(ulp=2, source="PTX ISA div.full.f32: max 2 ulp")),
          (("full", "ftz"), "f32", Tolerance(ulp=2, source="PTX ISA div.full.f32: max 2 ulp")),
          (("rn",), "f32", None), (("rn", "ftz"), "f32", None), (("rn",), "f64", None))],
    _c("rcp_approx_ftz_f64", "rcp.approx.ftz.f64", "rcp.approx.ftz.f64 %d, %a0;", "f64", "f64",
       extra=SMALL, tolerance=Tolerance(ulp=2 ** 33, source="no bound in the PTX ISA; the "
                                                            "H200 keeps ~20 mantissa bits: "
                                                            "max relative error 2^-20.1 "
                                                            "measured on this case's inputs")),
    _c("rcp_rn_ftz_f32", "rcp/sqrt .rn", "rcp.rn.ftz.f32 %d, %a0;", "f32", "f32", extra=SMALL),
    _c("sqrt_rn_ftz_f32", "rcp/sqrt .rn", "sqrt.rn.ftz.f32 %d, %a0;", "f32", "f32",
       extra=SMALL),
    *[_c(f"{op}_{'ftz_' if z else ''}{t}", "abs/neg float", f"{op}{'.ftz' if z else ''}.{t} "
         "%d, %a0;", t, t, extra=SMALL)
      for op in ("abs", "neg") for t, z in (("f32", False), ("f32", True), ("f64", False))],
    *[_c(f"{op}_xorsign_abs_f32", "min/max .xorsign.abs", f"{op}.xorsign.abs.f32 %d, %a0, %a1;",
         "f32 f32", "f32", gen="pairs", extra=SMALL) for op in ("min", "max")],
    *[_c(f"{op}_{v.replace('.', '_')}", "min/max f64 .ftz", f"{op}.{v} %d, %a0, %a1;",
         f"{v[-3:]} {v[-3:]}", v[-3:], gen="pairs", extra=SMALL)
      for op in ("min", "max") for v in ("f64", "ftz.f32", "ftz.NaN.f32")],
    _c("ex2_approx_ftz_f32", "sin/cos/lg2/ex2/tanh .approx", "ex2.approx.ftz.f32 %d, %a0;",
       "f32", "f32", gen="exponent", extra=SMALL,
       tolerance=Tolerance(ulp=4, source="PTX ISA ex2.approx.f32: max 2 ulp")),
    _c("ex2_approx_ftz_f32_edges", "sin/cos/lg2/ex2/tanh .approx",
       "ex2.approx.ftz.f32 %d, %a0;", "f32", "f32", extra=SMALL,
       tolerance=Tolerance(ulp=4, source="PTX ISA ex2.approx.f32: max 2 ulp")),
]
_SETP_F = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
           "num", "nan")
COMPARE = [
    *[_c(f"setp_{cmp}_{t}", f"setp {t if t in ('f32', 'f64') else 'int'}", f"setp.{cmp}.{t} %q0, %a0, %a1; {SELP}",
         f"{k} {k}", "u32", gen="pairs", extra=SMALL)
      for t, k, cmps in (("s32", "u32", ("eq", "ne", "lt", "le", "gt", "ge")),
                         ("u32", "u32", ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi",
                                         "hs")),
                         ("f32", "f32", _SETP_F), ("f64", "f64", _SETP_F),
                         ("s16", "u16", ("lt", "ge")), ("u64", "u64", ("lo", "gt")),
                         ("s64", "u64", ("le", "ne")), ("b32", "u32", ("eq", "ne")))
      for cmp in cmps],
    _c("setp_lt_ftz_f32", "setp f32", f"setp.lt.ftz.f32 %q0, %a0, %a1; {SELP}", "f32 f32",
       "u32", gen="pairs", extra=SMALL),
    *[_c(f"setp_lt_{b}{'_not' if n else ''}_s32", "setp .and/.or/.xor", "and.b32 %t0, %a2, 1; setp.ne.u32 %q1, "
         f"%t0, 0; setp.lt.{b}.s32 %q0|%q2, %a0, %a1, {n}%q1; selp.u32 %t1, 2, 0, %q2; "
         f"{SELP} or.b32 %d, %d, %t1;", "u32 u32 u32", "u32", extra=SMALL)
      for b in ("and", "or", "xor") for n in ("", "!") if not (n and b != "and")],
    _c("setp_gtu_and_not_f32", "setp .and/.or/.xor", "mov.b32 %w0, %a2; setp.num.f32 %q1, "
       "%w0, %w0; setp.gtu.and.f32 %q0, %a0, %a1, !%q1; " + SELP, "f32 f32 f32", "u32",
       extra=SMALL),
    _c("setp_pair_u32", "setp .and/.or/.xor", "setp.hi.u32 %q0|%q2, %a0, %a1; selp.u32 %t1, "
       "2, 0, %q2; " + SELP + " or.b32 %d, %d, %t1;", "u32 u32", "u32", extra=SMALL),
    *[_c(f"selp_{t}", "selp", f"and.b32 %t0, %a2, 1; setp.ne.u32 %q0, %t0, 0; "
         f"selp.{t} %d, %a0, %a1, %q0;", f"{k} {k} u32", k, extra=SMALL)
      for t, k in (("b16", "u16"), ("b32", "u32"), ("b64", "u64"), ("f32", "f32"),
                   ("f64", "f64"))],
]
MOVES = [
    *[_c(f"mov_{t}", "mov", f"mov.{t} %d, %a0;", k, k, extra=SMALL)
      for t, k in (("b16", "u16"), ("u32", "u32"), ("b64", "u64"), ("f32", "f32"),
                   ("f64", "f64"))],
    _c("mov_imm", "mov", "mov.b32 %t0, 0x9E3779B9; mov.f32 %w0, 0f3FC00000; mov.b32 %t1, %w0; "
       "mov.u64 %x0, -2; cvt.u32.u64 %t2, %x0; xor.b32 %t0, %t0, %t1; xor.b32 %t0, %t0, %t2; "
       "xor.b32 %d, %t0, %a0;", "u32", "u32", locals_=XREGS, extra=SMALL),
    _c("mov_pred", "mov", "and.b32 %t0, %a0, 1; setp.ne.u32 %q0, %t0, 0; mov.pred %q1, %q0; "
       "selp.u32 %d, 1, 0, %q1;", "u32", "u32", extra=SMALL),
    _c("mov_unpack_b64", "mov pack/unpack", "mov.b64 {%t0, %t1}, %a0; mov.b64 %d, {%t1, %t0};",
       "u64", "u64", extra=SMALL),
    _c("mov_pack_b32_b16", "mov pack/unpack", "mov.b32 %d, {%a1, %a0};", "u16 u16", "u32",
       extra=SMALL),
    _c("mov_unpack_b64_b16", "mov pack/unpack", "mov.b64 {%s0, %s1, %s2, %s3}, %a0; "
       "mov.b64 %d, {%s2, %s0, %s3, %s1};", "u64", "u64", locals_=XREGS, extra=SMALL),
]


def _sat_matters(d: str, s: str) -> bool:
    """Whether cvt.sat.d.s can clamp: the source range is not inside the destination's."""
    dw, sw = int(d[1:]), int(s[1:])
    if d[0] == s[0]:
        return dw < sw
    return d[0] == "u" or dw <= sw  # s -> u clamps negatives; u -> s of the same or less width


CVT = [
    *[_c(f"cvt_{d}_{s}", "cvt int<->int", f"cvt.{d}.{s} %d, %a0;", _ik(s), _ok(d),
         gen="wide", extra=SMALL)
      for d in _ITYPES for s in _ITYPES if d != s],
    *[_c(f"cvt_sat_{d}_{s}", "cvt .sat int", f"cvt.sat.{d}.{s} %d, %a0;", _ik(s), _ok(d),
         gen="wide", extra=SMALL)
      for d in _ITYPES for s in _ITYPES
      if d != s and _sat_matters(d, s) and f"{d}_{s}" not in ("s8_s32", "u16_s32", "s32_u32")],
    *[_c(f"cvt_{r}_{d}_{s}", "cvt float->int", f"cvt.{r}.{d}.{s} %d, %a0;", s, _ok(d),
         gen="ties", extra=SMALL)
      for r in ("rni", "rzi", "rmi", "rpi") for d in ("s32", "u32", "s64", "u64")
      for s in ("f32", "f64") if f"{r}_{d}_{s}" != "rni_s32_f32"],
    *[_c(f"cvt_{r.replace('.', '_')}_{d}_{s}", "cvt float->int", f"cvt.{r}.{d}.{s} %d, %a0;",
         s, _ok(d), gen="ties", extra=SMALL)
      for r, d, s in (("rzi.sat", "s32", "f32"), ("rni.sat", "u32", "f64"),
                      ("rzi.ftz", "s32", "f32"), ("rzi.ftz.sat", "u64", "f32"),
                      ("rzi", "s16", "f32"), ("rni", "u16", "f32"), ("rzi", "s8", "f32"),
                      ("rni", "u8", "f64"), ("rmi", "s16", "f64"))],
    *[_c(f"cvt_rn_{d}_{s}", "cvt int->float .rn", f"cvt.rn.{d}.{s} %d, %a0;", _ik(s), d,
         gen="wide", extra=SMALL)
      for d in ("f32", "f64") for s in ("s16", "u16", "s32", "u32", "s64", "u64")],
    *[_c(f"cvt_{m.replace('.', '_')}_{d}_{s}", "cvt float<->float", f"cvt.{m}.{d}.{s} %d, %a0;",
         s, d, gen="ties", extra=SMALL)
      for m, d, s in (("rn", "f32", "f64"), ("rn.ftz", "f32", "f64"), ("rn.sat", "f32", "f64"),
                      ("rni", "f32", "f32"), ("rzi", "f32", "f32"), ("rmi", "f64", "f64"),
                      ("rpi", "f64", "f64"), ("rni.ftz", "f32", "f32"),
                      ("ftz.sat", "f32", "f32"), ("sat", "f64", "f64"))],
    _c("cvt_f64_f32", "cvt float<->float", "cvt.f64.f32 %d, %a0;", "f32", "f64", extra=SMALL),
    _c("cvt_ftz_f64_f32", "cvt float<->float", "cvt.ftz.f64.f32 %d, %a0;", "f32", "f64",
       extra=SMALL),
    _c("cvt_rna_tf32_f32", "cvt tf32/fp8", "cvt.rna.tf32.f32 %d, %a0;", "f32", "u32",
       gen="ties", extra=SMALL),
    *[_c(f"cvt_{m.replace('.', '_')}_tf32_f32", "cvt tf32/fp8", f"cvt.{m}.tf32.f32 %d, %a0;",
         "f32", "u32", gen="tf32", extra=SMALL)
      for m in ("rn", "rz", "rn.relu", "rz.relu")],
    # (.rn/.rz .satfinite need sm_100: not on the H200.)
    _c("cvt_rna_satfinite_tf32_f32", "cvt tf32/fp8", "cvt.rna.satfinite.tf32.f32 %d, %a0;",
       "f32", "u32", gen="tf32", extra={**SMALL, "version": "8.1"}),
    *[_c(f"cvt_rn_satfinite_{r}{t}x2_f32", "cvt tf32/fp8",
         f"cvt.rn.satfinite.{r.replace('_', '.')}{t}x2.f32 %h0, %a0, %a1; "
         "cvt.u32.u16 %d, %h0;", "f32 f32", "u32", gen="fp8", extra=SMALL)
      for t in ("e4m3", "e5m2") for r in ("", "relu_")],
    *[_c(f"cvt_rn_satfinite_{t}x2_f16x2", "cvt tf32/fp8",
         f"cvt.rn.satfinite.{t}x2.f16x2 %h0, %a0; cvt.u32.u16 %d, %h0;", "u32", "u32",
         extra=SMALL) for t in ("e4m3", "e5m2")],
    # cvt.pack.sat's integer forms (the 2- and 4-bit ones sm_75): a and b saturate, a above
    # b, c's low bits above both.
    *[_c(f"cvt_pack_sat_{t}_s32", "cvt.pack", f"cvt.pack.sat.{t}.s32 %d, %a0, %a1;",
         "u32 u32", "u32", gen="narrowints") for t in ("s16", "u16")],
    *[_c(f"cvt_pack_sat_{t}_s32_b32", "cvt.pack",
         f"cvt.pack.sat.{t}.s32.b32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32",
         gen="narrowints") for t in ("s8", "u8", "s4", "u4", "s2", "u2")],
    *[_c(f"cvt_rn_f16x2_{t}x2", "cvt tf32/fp8", f"mov.b16 %h0, %a0; "
         f"cvt.rn.f16x2.{t}x2 %d, %h0;", "u16", "u32", gen="exhaustive16")
      for t in ("e4m3", "e5m2")],
    # The fp8 pairs again on directed inputs (issue 14): from f32, every fp8 value of both
    # formats, the ties between neighbours (and past the largest, where .satfinite starts)
    # with their f32 neighbours, subnormals, NaN payloads, infinities, both signs; from
    # .f16x2, every f16 in each half; to .f16x2 with .relu, every pair.
    *[_c(f"cvt_rn_satfinite_{r}{t}x2_f32_edges", "cvt tf32/fp8",
         f"cvt.rn.satfinite.{r.replace('_', '.')}{t}x2.f32 %h0, %a0, %a1; "
         "cvt.u32.u16 %d, %h0;", "f32 f32", "u32", gen="fp8edges", extra=SMALL)
      for t in ("e4m3", "e5m2") for r in ("", "relu_")],
    *[_c(f"cvt_rn_satfinite_{r}{t}x2_f16x2{'' if r else '_all'}", "cvt tf32/fp8",
         f"cvt.rn.satfinite.{r.replace('_', '.')}{t}x2.f16x2 %h0, %a0; cvt.u32.u16 %d, %h0;",
         "u32", "u32", gen="f16pairs") for t in ("e4m3", "e5m2") for r in ("", "relu_")],
    *[_c(f"cvt_rn_relu_f16x2_{t}x2", "cvt tf32/fp8", f"mov.b16 %h0, %a0; "
         f"cvt.rn.relu.f16x2.{t}x2 %d, %h0;", "u16", "u32", gen="exhaustive16")
      for t in ("e4m3", "e5m2")],
]


SHARED = ".shared .align 16 .b8 sh[2048];"
DEPOT = ".local .align 8 .b8 depot[8];"
# %rd0 = &in2[i] (in2 is a copy of in0 when a case has fewer than three inputs; the kernel
# does not read it before the case body), then a store, and the neighbour i^1 read back.
_IN2_OWN = "ld.param.u64 %rd0, [in2]; mul.wide.u32 %rd5, %r4, 4; add.s64 %rd5, %rd0, %rd5;"
_IN2_NEIGHBOUR = ("xor.b32 %r0, %r4, 1; mul.wide.u32 %rd5, %r0, 4; add.s64 %rd5, %rd0, %rd5; "
                  "ld.global.u32 %d, [%rd5];")
_IN0_NEIGHBOUR = ("xor.b32 %r0, %r4, 1; ld.param.u64 %rd0, [in0]; mul.wide.u32 %rd5, %r0, 4; "
                  "add.s64 %rd0, %rd0, %rd5;")
_SH_NEXT = "add.u32 %t2, %r3, 37; and.b32 %t2, %t2, 127; shl.b32 %t2, %t2, 2;"
MEMORY = [
    _c("ld_global_v2_u32", "ld/st vector", "ld.global.v2.u32 {%t0, %t1}, [%rd2]; "
       "mov.b64 %d, {%t1, %t0};", "u64", "u64", extra=SMALL),
    _c("ld_global_v4_u32", "ld/st vector", "ld.param.u64 %rd0, [in0]; shr.u32 %r0, %r4, 1; "
       "mul.wide.u32 %rd5, %r0, 16; add.s64 %rd0, %rd0, %rd5; "
       "ld.global.v4.u32 {%t0, %t1, %t2, %t3}, [%rd0]; mul.lo.u32 %t1, %t1, 3; "
       "xor.b32 %t0, %t0, %t1; mul.lo.u32 %t2, %t2, 5; add.u32 %t0, %t0, %t2; "
       "xor.b32 %t0, %t0, %t3; xor.b32 %d, %t0, %r4;", "u64", "u32", extra=SMALL),
    _c("ld_global_v2_f64", "ld/st vector", "ld.param.u64 %rd0, [in0]; shr.u32 %r0, %r4, 1; "
       "mul.wide.u32 %rd5, %r0, 16; add.s64 %rd0, %rd0, %rd5; "
       "ld.global.v2.f64 {%e0, %e1}, [%rd0]; mov.b64 %x0, %e0; mov.b64 %x1, %e1; "
       "brev.b64 %x1, %x1; xor.b64 %d, %x0, %x1;", "u64", "u64", locals_=XREGS, extra=SMALL),
    _c("ld_global_v4_f32", "ld/st vector", "ld.param.u64 %rd0, [in0]; shr.u32 %r0, %r4, 1; "
       "mul.wide.u32 %rd5, %r0, 16; add.s64 %rd0, %rd0, %rd5; "
       "ld.global.v4.f32 {%v0, %v1, %v2, %v3}, [%rd0]; and.b32 %r0, %r4, 1; "
       "setp.eq.u32 %q0, %r0, 0; selp.f32 %w0, %v0, %v1, %q0; selp.f32 %w1, %v3, %v2, %q0; "
       "mov.b32 %t0, %w0; mov.b32 %t1, %w1; mov.b64 %d, {%t0, %t1};", "u64", "u64",
       locals_=XREGS + "\n\t.reg .f32 %v<4>;", extra=SMALL),
    _c("st_global_v2_u32", "ld/st vector", _IN2_OWN + " and.b32 %t0, %r4, 1; "
       "setp.eq.u32 %q0, %t0, 0; xor.b32 %t1, %a1, 0x5555; "
       "@%q0 st.global.v2.u32 [%rd5], {%a1, %t1}; bar.sync 0; ld.global.u32 %d, [%rd5];",
       "u32 u32", "u32", extra=SMALL),
    _c("st_global_v4_u32", "ld/st vector", _IN2_OWN + " and.b32 %t0, %r4, 3; "
       "setp.eq.u32 %q0, %t0, 0; xor.b32 %t1, %a1, 0x5555; add.u32 %t2, %a1, 77; "
       "not.b32 %t3, %a1; @%q0 st.global.v4.u32 [%rd5], {%a1, %t1, %t2, %t3}; bar.sync 0; "
       "ld.global.u32 %d, [%rd5];", "u32 u32", "u32", extra=SMALL),
    # Vector accesses with .relaxed/.acquire/.release: one scalar access per element.
    *[_c(f"ld_{s_.replace('.', '_')}_v2_u32", "ld/st atomic vector",
         f"ld.{s_}.v2.u32 {{%t0, %t1}}, [%rd2]; mov.b64 %d, {{%t1, %t0}};", "u64", "u64",
         extra=SMALL) for s_ in ("relaxed.gpu.global", "acquire.gpu.global", "relaxed.gpu",
                                 "acquire.sys.global", "volatile.global")],
    *[_c(f"ld_{s_.replace('.', '_')}_v4_u32", "ld/st atomic vector",
         "ld.param.u64 %rd0, [in0]; shr.u32 %r0, %r4, 1; mul.wide.u32 %rd5, %r0, 16; "
         f"add.s64 %rd0, %rd0, %rd5; ld.{s_}.v4.u32 {{%t0, %t1, %t2, %t3}}, [%rd0]; "
         "mul.lo.u32 %t1, %t1, 3; xor.b32 %t0, %t0, %t1; mul.lo.u32 %t2, %t2, 5; "
         "add.u32 %t0, %t0, %t2; xor.b32 %t0, %t0, %t3; xor.b32 %d, %t0, %r4;", "u64", "u32",
         extra=SMALL) for s_ in ("acquire.gpu.global", "relaxed.cta.global")],
    *[_c(f"st_{s_.replace('.', '_')}_v{v}_u32", "ld/st atomic vector", _IN2_OWN +
         f" and.b32 %t0, %r4, {v - 1}; setp.eq.u32 %q0, %t0, 0; xor.b32 %t1, %a1, 0x5555; "
         "add.u32 %t2, %a1, 77; not.b32 %t3, %a1; "
         f"@%q0 st.{s_}.v{v}.u32 [%rd5], {{{', '.join(['%a1', '%t1', '%t2', '%t3'][:v])}}}; "
         "bar.sync 0; ld.global.u32 %d, [%rd5];", "u32 u32", "u32", extra=SMALL)
      for s_, v in (("relaxed.gpu.global", 2), ("relaxed.gpu", 2), ("release.gpu.global", 4),
                    ("release.sys.global", 2), ("relaxed.cta.global", 4))],
    *[_c(f"{q.replace('.', '_')}_u32", "ld/st qualifiers", _IN0_NEIGHBOUR +
         f" {q}.u32 %t0, [%rd0]; xor.b32 %d, %t0, %a0;", "u32", "u32", extra=SMALL)
      for q in ("ld.volatile.global", "ld.relaxed.gpu.global", "ld.acquire.gpu.global",
                "ld.relaxed.sys.global", "ld.acquire.cta.global", "ld.global.nc", "ldu.global",
                "ld.global.ca", "ld.global.cg", "ld.global.cs", "ld.global.lu", "ld.global.cv",
                "ld")],
    *[_c(f"{q.replace('.', '_')}_u32", "ld/st qualifiers", _IN2_OWN +
         f" xor.b32 %t0, %a0, %a1; {q}.u32 [%rd5], %t0; bar.sync 0; " + _IN2_NEIGHBOUR,
         "u32 u32", "u32", extra=SMALL)
      for q in ("st.volatile.global", "st.release.gpu.global", "st.relaxed.sys.global",
                "st.global.cs", "st.global.wt", "st")],
    *[_c(f"{f.replace('.', '_')}", "membar/fence", _IN2_OWN +
         f" xor.b32 %t0, %a0, %a1; st.global.u32 [%rd5], %t0; {f}; bar.sync 0; "
         + _IN2_NEIGHBOUR, "u32 u32", "u32", extra=SMALL)
      for f in ("membar.cta", "membar.gl", "membar.sys", "fence.sc.cta", "fence.acq_rel.gpu",
                "fence.sc.sys", "fence.acq_rel.sys")],
    _c("bar_sync_shared_u32addr", "bar.sync + shared", "mov.u32 %r0, sh; shl.b32 %t0, %r3, 2; "
       "add.u32 %t1, %r0, %t0; st.shared.u32 [%t1], %a0; bar.sync 0; " + _SH_NEXT +
       " add.u32 %t2, %r0, %t2; ld.shared.u32 %d, [%t2];", "u32", "u32", locals_=SHARED,
       extra=SMALL),
    *[_c(f"{b.replace(', ', '_').replace(' ', '_').replace('.', '_')}_shared", "bar.sync + shared", "mov.u64 %rd0, sh; "
         "mul.wide.u32 %rd5, %r3, 4; add.s64 %rd5, %rd0, %rd5; st.shared.u32 [%rd5], %a0; "
         f"{b}; " + _SH_NEXT + " cvt.u64.u32 %rd5, %t2; add.s64 %rd5, %rd0, %rd5; "
         "ld.shared.u32 %d, [%rd5];", "u32", "u32", locals_=SHARED, extra=SMALL)
      for b in ("bar.sync 0", "barrier.sync 0", "barrier.sync.aligned 0", "bar.sync 1, 128")],
    _c("shared_v4_v2", "bar.sync + shared", "mov.u64 %rd0, sh; mul.wide.u32 %rd5, %r3, 16; "
       "add.s64 %rd5, %rd0, %rd5; xor.b32 %t1, %a0, 0x5555; add.u32 %t2, %a0, 77; "
       "not.b32 %t3, %a0; st.shared.v4.u32 [%rd5], {%a0, %t1, %t2, %t3}; bar.sync 0; "
       "xor.b32 %t0, %r3, 1; mul.wide.u32 %rd5, %t0, 16; add.s64 %rd5, %rd0, %rd5; "
       "ld.shared.v2.u32 {%t0, %t1}, [%rd5+8]; mov.b64 %d, {%t0, %t1};", "u32", "u64",
       locals_=SHARED, extra=SMALL),
    _c("bar_warp_sync_shared", "bar.sync + shared", "mov.u64 %rd0, sh; "
       "mul.wide.u32 %rd5, %r3, 4; add.s64 %rd5, %rd0, %rd5; st.shared.u32 [%rd5], %a0; "
       "bar.warp.sync -1; xor.b32 %t0, %r3, 5; mul.wide.u32 %rd5, %t0, 4; "
       "add.s64 %rd5, %rd0, %rd5; ld.shared.u32 %d, [%rd5];", "u32", "u32", locals_=SHARED,
       extra=SMALL),
    *[_c("prefetch_" + p.replace("prefetchu.", "u_").replace("prefetch.", "").replace(
        ".", "_").replace("::", "_").lower(), "prefetch",
         f"{p} [%rd2]; add.u32 %d, %a0, 1;", "u32", "u32", extra=SMALL)
      for p in ("prefetch.global.L1", "prefetch.global.L2", "prefetchu.L1", "prefetch.L1",
                "prefetch.global.L2::evict_last")],
    _c("cvta_to_global", "cvta", "cvta.to.global.u64 %rd0, %rd2; ld.global.u32 %t0, [%rd0]; "
       "xor.b32 %d, %t0, 0x1234;", "u32", "u32", extra=SMALL),
    _c("cvta_global", "cvta", "cvta.to.global.u64 %rd0, %rd2; cvta.global.u64 %rd5, %rd0; "
       "ld.u32 %d, [%rd5];", "u32", "u32", extra=SMALL),
    _c("cvta_shared", "cvta", "mov.u64 %rd0, sh; cvta.shared.u64 %rd5, %rd0; "
       "mul.wide.u32 %l0, %r3, 4; add.s64 %l1, %rd5, %l0; st.u32 [%l1], %a0; bar.sync 0; "
       + _SH_NEXT + " cvt.u64.u32 %l0, %t2; add.s64 %l0, %rd0, %l0; ld.shared.u32 %d, [%l0];",
       "u32", "u32", locals_=SHARED, extra=SMALL),
    _c("cvta_to_shared", "cvta", "cvta.shared.u64 %rd5, sh; cvta.to.shared.u64 %rd0, %rd5; "
       "mul.wide.u32 %l0, %r3, 4; add.s64 %l1, %rd0, %l0; st.shared.u32 [%l1], %a0; "
       "bar.sync 0; " + _SH_NEXT + " cvt.u64.u32 %l0, %t2; add.s64 %l0, %rd5, %l0; "
       "ld.u32 %d, [%l0];", "u32", "u32", locals_=SHARED, extra=SMALL),
    _c("cvta_to_shared_u32", "cvta", "cvta.shared.u64 %rd5, sh; cvta.to.shared.u64 %rd0, %rd5; "
       "cvt.u32.u64 %r0, %rd0; "
       "shl.b32 %t0, %r3, 2; add.u32 %t1, %r0, %t0; st.shared.u32 [%t1], %a0; bar.sync 0; "
       + _SH_NEXT + " cvt.u64.u32 %l0, %t2; add.s64 %l0, %rd5, %l0; ld.u32 %d, [%l0];",
       "u32", "u32", locals_=SHARED, extra=SMALL),
    _c("cvta_to_local", "cvta", "mov.u64 %l1, depot; cvta.local.u64 %l0, %l1; "
       "cvta.to.local.u64 %l2, %l0; st.local.u32 [%l2], %a0; ld.u32 %t0, [%l0]; "
       "add.u32 %d, %t0, 1;", "u32", "u32", locals_=DEPOT, extra=SMALL),
    *[_c(f"isspacep_{k}", "isspacep", f"{p} isspacep.global %g0, %x0; "
         "isspacep.shared %g1, %x0; isspacep.local %g2, %x0; selp.u32 %t0, 1, 0, %g0; "
         "selp.u32 %t1, 2, 0, %g1; selp.u32 %t2, 4, 0, %g2; or.b32 %t0, %t0, %t1; "
         "or.b32 %t0, %t0, %t2; xor.b32 %d, %t0, %a0;", "u32", "u32",
         locals_=f"{XREGS}\n\t{SHARED}\n\t{DEPOT}", extra=SMALL)
      for k, p in (("global", "mov.b64 %x0, %rd2;"),
                   ("shared", "cvta.shared.u64 %x0, sh; mul.wide.u32 %x1, %r3, 4; "
                              "add.s64 %x0, %x0, %x1;"),
                   ("local", "mov.u64 %x1, depot; cvta.local.u64 %x0, %x1;"))],
]


def _atom_own(inst: str, op: str, t: str, gen: str = "random") -> Case:
    """`inst` (atom.global, atom.relaxed.gpu.global, atom: generic) on the thread's own in0[i]:
    the old value and the memory afterwards (for floats: the memory afterwards, or pi where
    the old value is not the bits of in0[i]; a float result keeps NaN payloads out of the
    comparison)."""
    w = int(t[1:])
    k = {"f32": "f32", "f64": "f64"}.get(t, f"u{w}")
    operands = "%a1, %a2" if op == "cas" else "%a1"
    ld = "ld.global" if ".global" in inst else "ld"
    if t == "f32":
        old, tail = "%w0", ("mov.b32 %t0, %w0; mov.b32 %t1, %a0; setp.ne.b32 %q0, %t0, %t1; "
                            "@%q0 mov.f32 %d, 0f40490FDB;")
    elif t == "f64":
        old, tail = "%e0", ("mov.b64 %x0, %e0; mov.b64 %x1, %a0; setp.ne.b64 %q0, %x0, %x1; "
                            "@%q0 mov.f64 %d, 0d400921FB54442D18;")
    elif w == 32:
        old, tail = "%t0", "mov.b64 %d, {%t0, %t1};"
    else:
        old, tail = "%x0", "brev.b64 %x1, %x1; xor.b64 %d, %x0, %x1;"
    new = "%d" if t[0] == "f" else ("%t1" if w == 32 else "%x1")
    body = (f"{inst}.{op}.{t} {old}, [%rd2], {operands}; {ld}.{t[0] if t[0] == 'f' else 'b'}{w} "
            f"{new}, [%rd2]; {tail}")
    name = f"{inst.replace('.', '_')}{'_generic' if inst == 'atom' else ''}_{op}_{t}"
    return _c(name, f"atom {op}", body, " ".join([k] * (3 if op == "cas" else 2)),
              k if t[0] == "f" else "u64", gen=gen, locals_=XREGS, extra=SMALL)


def _red_own(qual: str, op: str, t: str, gen: str = "random") -> Case:
    """red on the thread's own in0[i]: the memory afterwards."""
    w = int(t[1:])
    k = {"f32": "f32", "f64": "f64"}.get(t, f"u{w}")
    ld = f"{k[0] if k[0] == 'f' else 'b'}{w}"
    return _c(f"{qual}_{op}_{t}".replace(".", "_"), f"red {op}",
              f"{qual}.{op}.{t} [%rd2], %a1; ld.global.{ld} %d, [%rd2];", f"{k} {k}", k,
              gen=gen, extra=SMALL)


_INIT = {"add": "0", "min": "-1", "max": "0", "and": "-1", "or": "0", "xor": "0", "inc": "0",
         "dec": "0"}


def _atom_block(space: str, op: str, t: str, red: bool = False, qual: str = "",
                gen: str = "random") -> Case:
    """Every thread of a block applies `op` with its in0[i] to one address (a shared word set
    up by thread 0, or in2[128 * block] whose start value is in0[128 * block]): the total
    after a barrier, the same whatever the order of the threads."""
    w = int(t[1:])
    k = {"f32": "f32", "f64": "f64"}.get(t, f"u{w}")
    b = f"b{w}"
    init = _INIT[op] if not (op == "min" and t[0] == "s") else (
        "0x7FFFFFFF" if w == 32 else "0x7FFFFFFFFFFFFFFF")
    if op == "max" and t[0] == "s":
        init = "0x80000000" if w == 32 else "0x8000000000000000"
    operand = "100" if op in ("inc", "dec") else "%a0"
    if t[0] == "f":
        operand, init = ("%a0", "0")
    old = "%t0" if w == 32 else "%x0"
    if t[0] == "f":
        old = "%w0" if w == 32 else "%e0"
    inst = (f"red{qual}.{space}.{op}.{t} [%rd0], {operand};" if red else
            f"atom{qual}.{space}.{op}.{t} {old}, [%rd0], {operand};")
    if space == "shared":
        reg = "%t3" if w == 32 else "%x3"
        body = (f"mov.u64 %rd0, sh; setp.eq.u32 %g0, %r3, 0; mov.{b} {reg}, {init}; "
                f"@%g0 st.shared.{b} [%rd0], {reg}; bar.sync 0; {inst} bar.sync 0; "
                f"ld.shared.{b} %d, [%rd0];")
    else:
        body = (f"ld.param.u64 %rd0, [in2]; mul.wide.u32 %rd5, %r1, {BLOCK * w // 8}; "
                f"add.s64 %rd0, %rd0, %rd5; {inst} bar.sync 0; ld.volatile.global.{b} %d, "
                "[%rd0];")
    name = f"{'red' if red else 'atom'}{qual}_{space}_total_{op}_{t}".replace(".", "_")
    return _c(name, f"{'red' if red else 'atom'} {op}", body, k, k, gen="smallint" if t[0] == "f" else gen,
              locals_=f"{XREGS}\n\t{SHARED}", extra=SMALL)


def _atom_shared_own(op: str, t: str, gen: str = "random") -> Case:
    """atom.shared on the thread's own word, set to in0[i] first: the old value and the word
    afterwards, as _atom_own."""
    w = int(t[1:])
    k = {"f32": "f32", "f64": "f64"}.get(t, f"u{w}")
    b = f"b{w}"
    operands = "%a1, %a2" if op == "cas" else "%a1"
    if t == "f32":
        old, new, tail = "%w0", "%d", ("mov.b32 %t0, %w0; mov.b32 %t1, %a0; "
                                       "setp.ne.b32 %q0, %t0, %t1; @%q0 mov.f32 %d, 0f40490FDB;")
    elif w == 32:
        old, new, tail = "%t0", "%t1", "mov.b64 %d, {%t0, %t1};"
    else:
        old, new, tail = "%x0", "%x1", "brev.b64 %x1, %x1; xor.b64 %d, %x0, %x1;"
    body = (f"mov.u64 %rd0, sh; mul.wide.u32 %rd5, %r3, 8; add.s64 %rd5, %rd0, %rd5; "
            f"st.shared.{b} [%rd5], %a0; atom.shared.{op}.{t} {old}, [%rd5], {operands}; "
            f"ld.shared.{b if t[0] != 'f' else t} {new}, [%rd5]; {tail}")
    return _c(f"atom_shared_{op}_{t}", f"atom {op}", body,
              " ".join([k] * (3 if op == "cas" else 2)), k if t[0] == "f" else "u64", gen=gen,
              locals_=f"{XREGS}\n\t{SHARED}", extra=SMALL)


ATOMICS = [
    *[_atom_shared_own(op, t, gen=g) for op, t, g in (
        ("cas", "b32", "cas"), ("cas", "b64", "cas"), ("exch", "b64", "random"),
        ("add", "f32", "random"), ("min", "s32", "random"), ("inc", "u32", "incdec"))],
    *[_atom_own("atom.global", op, t) for op, ts in (
        ("add", ("u32", "s32", "u64", "f32", "f64")), ("min", ("u32", "s32", "u64", "s64")),
        ("max", ("u32", "s32", "u64", "s64")), ("and", ("b32", "b64")), ("or", ("b32", "b64")),
        ("xor", ("b32", "b64")), ("exch", ("b32", "b64"))) for t in ts],
    *[_atom_own("atom.global", op, "u32", gen="incdec") for op in ("inc", "dec")],
    *[_atom_own("atom.global", "cas", t, gen="cas") for t in ("b32", "b64")],
    *[_atom_own(f"atom.{q}.global", "add", "u32")
      for q in ("relaxed.gpu", "acquire.gpu", "release.gpu", "acq_rel.gpu", "relaxed.cta",
                "relaxed.sys", "acq_rel.sys")],
    _atom_own("atom", "add", "u32"),
    _atom_own("atom", "cas", "b32", gen="cas"),
    _atom_own("atom.acq_rel.gpu.global", "cas", "b64", gen="cas"),
    *[_red_own(q, op, t, gen="incdec" if op in ("inc", "dec") else "random") for q, op, t in (
        ("red.global", "add", "u32"), ("red.global", "add", "u64"), ("red.global", "add", "f32"),
        ("red.global", "add", "f64"), ("red.global", "min", "s32"), ("red.global", "max", "u32"),
        ("red.global", "and", "b32"), ("red.global", "or", "b64"), ("red.global", "xor", "b32"),
        ("red.global", "inc", "u32"), ("red.global", "dec", "u32"),
        ("red.relaxed.gpu.global", "add", "u32"), ("red.release.sys.global", "add", "u64"))],
    *[_atom_block("shared", op, t) for op, t in (
        ("add", "u32"), ("add", "u64"), ("add", "f32"), ("add", "f64"), ("min", "s32"),
        ("max", "u32"), ("min", "u64"), ("max", "s64"), ("and", "b32"), ("or", "b32"),
        ("xor", "b64"), ("inc", "u32"), ("dec", "u32"))],
    _atom_block("shared", "add", "u32", red=True),
    _atom_block("shared", "max", "s32", red=True),
    *[_atom_block("global", op, t, qual=q) for op, t, q in (
        ("add", "u32", ""), ("add", "u64", ""), ("add", "f32", ""), ("min", "s32", ""),
        ("max", "u32", ""), ("or", "b32", ""), ("xor", "b64", ""), ("inc", "u32", ""),
        ("add", "u32", ".relaxed.gpu"), ("add", "u32", ".acq_rel.gpu"))],
    _atom_block("global", "add", "u32", red=True, qual=".release.gpu"),
    _atom_block("global", "and", "b32", red=True),
]


def _shfl(mode: str, c: int, tag: str, bmask: int = 31, mask: str = "-1", pre: str = "",
          pred: str = "") -> Case:
    return _c(f"shfl_{mode}_{tag}", "shfl.sync",
              f"{pre} and.b32 %t0, %a1, {bmask}; {pred}shfl.sync.{mode}.b32 %t1|%q0, %a0, %t0, "
              f"{c:#x}, {mask}; selp.u32 %t2, 1, 0, %q0; mov.b64 %d, {{%t1, %t2}};",
              "u32 u32", "u64", gen="warp", locals_=XREGS)


_HALF = ("mov.u32 %t3, %laneid; setp.lt.u32 %g0, %t3, 16; selp.b32 %t3, 0xFFFF, 0xFFFF0000, "
         "%g0;")
WARP = [
    *[_shfl(m, 0 if m == "up" else 0x1F, "w32") for m in ("up", "down", "bfly", "idx")],
    *[_shfl(m, 0x1800 if m == "up" else 0x181F, "w8") for m in ("up", "down", "bfly", "idx")],
    _shfl("idx", 0x0F, "c0f"), _shfl("down", 0x10, "c10"), _shfl("up", 0x03, "c03"),
    _shfl("bfly", 0x1C07, "c1c07"),
    # The same lane offset in every lane, and offsets past 31 (PTX uses b[4:0]).
    *[_c(f"shfl_{m}_w32_b{b}", "shfl.sync", f"shfl.sync.{m}.b32 %t1|%q0, %a0, {b}, "
         f"{0 if m == 'up' else 0x1F}, -1; selp.u32 %t2, 1, 0, %q0; mov.b64 %d, {{%t1, %t2}};",
         "u32 u32", "u64", gen="warp") for m, b in (("up", 3), ("down", 5), ("up", 35),
                                                    ("down", 33), ("bfly", 37), ("idx", 40))],
    # Membermask is each lane's own half-warp (and in shfl_idx_divergent only lanes 0-15 run
    # the shfl): c = 0x101f / 0x100f makes 16-lane segments and the lane offset stays below 16
    # (b & 15, or b & ~segmask for idx), so every source lane is in membermask and executing,
    # and every result is one PTX defines (the H200 agrees with the ISA pseudo-code on all of
    # them). A source lane outside membermask would read an unspecified value; no case asks.
    *[_shfl(m, 0x101F, "half_mask", bmask=15, mask="%t3", pre=_HALF) for m in ("bfly", "idx")],
    _c("shfl_idx_divergent", "shfl.sync", "mov.u32 %t3, %laneid; setp.lt.u32 %g0, %t3, 16; "
       "mov.b32 %t1, 7; setp.eq.u32 %q0, %t1, 0; and.b32 %t0, %a1, 31; "
       "@%g0 shfl.sync.idx.b32 %t1|%q0, %a0, %t0, 0x100f, 0xFFFF; selp.u32 %t2, 1, 0, %q0; "
       "mov.b64 %d, {%t1, %t2};", "u32 u32", "u64", gen="warp", locals_=XREGS),
]
# -- ldmatrix and mma.sync (PTX ISA 9.7.14.5): each thread stores its input word into shared
# memory (the block's 128 words: 32 rows of 16 bytes), lane l of warp w gives the address of
# row (5 l + 7 w + 3) % 32, and the case returns what ldmatrix gave the lane (x4: two cases,
# its registers 0-1 and 2-3).
_LDM_ROWS = ("mov.u32 %t0, sh; shl.b32 %t1, %r3, 2; add.u32 %t1, %t1, %t0; "
             "st.shared.u32 [%t1], %a0; bar.sync 0; mov.u32 %t2, %laneid; shr.u32 %t3, %r3, 5; "
             "mad.lo.u32 %t2, %t2, 5, 3; mad.lo.u32 %t2, %t3, 7, %t2; and.b32 %t2, %t2, 31; "
             "shl.b32 %t2, %t2, 4; add.u32 %t2, %t2, %t0;")


def _ldmatrix(count: int, trans: bool, part: str = "") -> Case:
    regs = ", ".join(f"%t{i}" for i in range(count))
    out = {"": "mov.b32 %d, %t0;" if count == 1 else "mov.b64 %d, {%t0, %t1};",
           "hi": "mov.b64 %d, {%t2, %t3};"}[part]
    name = f"ldmatrix_x{count}{'_trans' if trans else ''}{'_' + part if part else ''}"
    return _c(name, "ldmatrix", f"{_LDM_ROWS} ldmatrix.sync.aligned.m8n8.x{count}"
              f"{'.trans' if trans else ''}.shared.b16 {{{regs}}}, [%t2]; {out}", "u32",
              "u32" if count == 1 else "u64", gen="warp", locals_=SHARED)


# mma.sync on small integers (exact in any order of summation, so the H200's tensor cores
# and the emulation agree): A's registers are in0's and in1's 32-bit halves, B's in2's; C's
# are f32 from the thread's index i (i, -i, 2i, -2i; f64: in2 and 2 in2), and the case
# returns D's registers 0-1 or 2-3 (f64: 0 or 1).
MMA_REGS = "\n\t.reg .b32 %m<8>;\n\t.reg .f32 %v<8>;\n\t.reg .f64 %y<4>;"
_MMA_C = ("cvt.rn.f32.u32 %v0, %r4; neg.f32 %v1, %v0; add.f32 %v2, %v0, %v0; "
          "neg.f32 %v3, %v2;")


def _mma(form: str, part: str) -> Case:
    shape, types = form.split(".", 1)
    name = f"mma_sync_{shape}_{types.split('.')[1]}_{part}"
    if shape == "m8n8k4":
        return _c(name, "mma.sync", f"add.f64 %y0, %a2, %a2; mma.sync.aligned.{shape}.row.col."
                  f"{types} {{%y1, %y2}}, {{%a0}}, {{%a1}}, {{%a2, %y0}}; "
                  f"mov.b64 %d, %y{1 + int(part[1])};", "f64 f64 f64", "u64", gen="mma_f64",
                  locals_=MMA_REGS)
    regs = "mov.b64 {%m0, %m1}, %a0; mov.b64 {%m2, %m3}, %a1; mov.b64 {%m4, %m5}, %a2;"
    lo, hi = (4, 5) if part == "d01" else (6, 7)
    return _c(name, "mma.sync", f"{regs} {_MMA_C} mma.sync.aligned.{shape}.row.col.{types} "
              "{%v4, %v5, %v6, %v7}, {%m0, %m1, %m2, %m3}, {%m4, %m5}, {%v0, %v1, %v2, %v3}; "
              f"mov.b32 %t0, %v{lo}; mov.b32 %t1, %v{hi}; mov.b64 %d, {{%t0, %t1}};",
              "u64 u64 u64", "u64", gen="mma_" + types.split(".")[1], locals_=MMA_REGS)


MATRIX = [
    *[_ldmatrix(n, t) for n in (1, 2, 4) for t in (False, True)],
    *[_ldmatrix(4, t, "hi") for t in (False, True)],
    *[_mma(f, p) for f in ("m16n8k16.f32.f16.f16.f32", "m16n8k16.f32.bf16.bf16.f32",
                           "m16n8k8.f32.tf32.tf32.f32") for p in ("d01", "d23")],
    *[_mma("m8n8k4.f64.f64.f64.f64", p) for p in ("d0", "d1")],
]
SREGS = [
    _c("sreg_tid_ntid_ctaid", "special registers",
       "mov.u32 %t0, %tid.x; mov.u32 %t1, %tid.y; shl.b32 %t1, %t1, 7; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t1, %tid.z; shl.b32 %t1, %t1, 9; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t1, %ntid.x; shl.b32 %t1, %t1, 11; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t1, %ntid.y; shl.b32 %t1, %t1, 20; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t1, %ntid.z; shl.b32 %t1, %t1, 26; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t2, %ctaid.x; mov.u32 %t1, %nctaid.x; shl.b32 %t1, %t1, 16; "
       "or.b32 %t2, %t2, %t1; mov.b64 %d, {%t0, %t2};", "u32", "u64", extra=SMALL),
    _c("sreg_yz_laneid", "special registers",
       "mov.u32 %t0, %ctaid.y; mov.u32 %t1, %ctaid.z; shl.b32 %t1, %t1, 4; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t1, %nctaid.y; shl.b32 %t1, %t1, 8; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t1, %nctaid.z; shl.b32 %t1, %t1, 12; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t1, %laneid; shl.b32 %t1, %t1, 16; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t1, WARP_SZ; shl.b32 %t1, %t1, 24; or.b32 %t0, %t0, %t1; "
       "mov.u32 %t1, %laneid; and.b32 %t2, %r3, 31; xor.b32 %t1, %t1, %t2; "
       "shl.b32 %t1, %t1, 21; xor.b32 %d, %t0, %t1;", "u32", "u32", extra=SMALL),
]


# -- f16/bf16 arithmetic and directed rounding (cases; inputs in _half_inputs and
# _rounding_inputs) ---------------------------------------------------------------------------
def _half(name: str, body: str, t: str, arity: int, family: str, gen: str | None = None) -> Case:
    """A 16-bit float case on t (f16, f16x2, bf16, bf16x2): .b16 or .b32 registers."""
    k = "u32" if t.endswith("x2") else "u16"
    return _c(name, family, body, " ".join([k] * arity), k,
              gen=gen or ("bf16" if t.startswith("bf16") else "half16"))


def _fam(family: str, t: str) -> str:
    return f"{family} {'bf16' if t.startswith('bf16') else 'f16'}"


def _mods(m: tuple[str, ...]) -> str:
    return "".join("." + x for x in m)


def _tag(m: tuple[str, ...]) -> str:
    return "".join("_" + x.lower() for x in m)


HALF_ARITH = [
    *[_half(f"{op}{_tag(m)}_{t}", f"{op}{_mods(m)}.{t} %d, %a0, %a1;", t, 2,
            _fam("add/sub/mul", t))
      for op in ("add", "sub", "mul")
      for m, t in (((), "f16"), (("rn",), "f16x2"), (("rn", "ftz"), "f16"),
                   (("rn", "sat"), "f16"), (("ftz", "sat"), "f16x2"), (("rn",), "bf16"),
                   (("rn",), "bf16x2"))],
    *[_half(f"fma{_tag(m)}_{t}", f"fma{_mods(m)}.{t} %d, %a0, %a1, %a2;", t, 3,
            _fam("fma", t))
      for m, t in ((("rn",), "f16"), (("rn",), "f16x2"), (("rn", "ftz"), "f16"),
                   (("rn", "sat"), "f16"), (("rn", "relu"), "f16"),
                   (("rn", "ftz", "sat"), "f16x2"), (("rn",), "bf16"), (("rn",), "bf16x2"),
                   (("rn", "relu"), "bf16"))],
    *[_half(f"{op}{_tag(m)}_{t}", f"{op}{_mods(m)}.{t} %d, %a0;", t, 1, _fam("neg/abs", t),
            gen=None if t.endswith("x2") else "exhaustive16")
      for op in ("neg", "abs") for m, t in (((), "f16"), (("ftz",), "f16"), ((), "bf16"),
                                             (("ftz",), "f16x2"), ((), "bf16x2"))],
    *[_half(f"{op}{_tag(m)}_{t}", f"{op}{_mods(m)}.{t} %d, %a0, %a1;", t, 2,
            _fam("min/max", t))
      for op in ("min", "max")
      for m, t in (((), "f16"), (("ftz",), "f16"), (("NaN",), "f16"),
                   (("xorsign", "abs"), "f16"), (("NaN", "xorsign", "abs"), "f16x2"),
                   ((), "bf16"), (("NaN",), "bf16"), (("xorsign", "abs"), "bf16x2"),
                   ((), "f16x2"))],
]
# Variants that FLOAT_ARITH already has (with its own inputs) are not repeated.
DIRECTED = [c for c in [
    *[_c(f"{op}_{r}_{t}", f"{op} .rz/.rm/.rp",
         f"{op}.{r}.{t} %d, {', '.join(f'%a{i}' for i in range(n))};",
         " ".join([t] * n), t, gen="rounding")
      for op, n in (("add", 2), ("sub", 2), ("mul", 2), ("fma", 3), ("div", 2), ("rcp", 1),
                    ("sqrt", 1))
      for t in ("f32", "f64") for r in ("rz", "rm", "rp")],
    _c("mad_rm_f32", "mad .rz/.rm/.rp", "mad.rm.f32 %d, %a0, %a1, %a2;", "f32 f32 f32", "f32",
       gen="rounding"),
    _c("mad_rz_f64", "mad .rz/.rm/.rp", "mad.rz.f64 %d, %a0, %a1, %a2;", "f64 f64 f64", "f64",
       gen="rounding"),
    _c("add_rp_ftz_f32", "add .rz/.rm/.rp", "add.rp.ftz.f32 %d, %a0, %a1;", "f32 f32", "f32",
       gen="rounding"),
    _c("mul_rz_ftz_sat_f32", "mul .rz/.rm/.rp", "mul.rz.ftz.sat.f32 %d, %a0, %a1;", "f32 f32",
       "f32", gen="rounding"),
    _c("div_rm_ftz_f32", "div .rz/.rm/.rp", "div.rm.ftz.f32 %d, %a0, %a1;", "f32 f32", "f32",
       gen="rounding"),
] if c.name not in {x.name for x in FLOAT_ARITH}]


# setp/set on scalar f16 and bf16 (.b16 registers): ordered, unordered and NaN tests (PTX has no .ftz on bf16 compares).
_SETP_PAIR = f"selp.u32 %t1, 2, 0, %q2; {SELP} or.b32 %d, %d, %t1;"
_APPROX_HALF = {
    ("ex2", "f16"): Tolerance(ulp=2, half="f16", source="PTX ISA ex2.approx.f16: max relative "
                                                        "error 2^-9.9"),
    ("ex2", "bf16"): Tolerance(ulp=2, half="bf16", source="PTX ISA ex2.approx.ftz.bf16: max "
                                                          "relative error 2^-7"),
    ("tanh", "f16"): Tolerance(ulp=1, half="f16", source="PTX ISA tanh.approx.f16: max "
                                                         "relative error 2^-10.987"),
    ("tanh", "bf16"): Tolerance(ulp=1, half="bf16", source="PTX ISA tanh.approx.bf16: max "
                                                           "relative error 2^-8"),
}
# ex2.approx and tanh.approx on f16/bf16 and their pairs: exhaustive for the scalar forms.
HALF_APPROX = [
    _c(f"{op}_approx{'_ftz' if op == 'ex2' and t.startswith('bf') else ''}_{t}",
       "ex2/tanh .approx f16/bf16",
       f"{op}.approx{'.ftz' if op == 'ex2' and t.startswith('bf') else ''}.{t} %d, %a0;",
       "u32" if t.endswith("x2") else "u16", "u32" if t.endswith("x2") else "u16",
       gen=("bf16" if t.startswith("bf") else "half16") if t.endswith("x2") else "exhaustive16",
       tolerance=_APPROX_HALF[(op, t[:-2] if t.endswith("x2") else t)])
    for op in ("ex2", "tanh") for t in ("f16", "f16x2", "bf16", "bf16x2")]
SETP_HALF = [
    *[_c(f"setp_{cmp}_{t}", f"setp {t}", f"setp.{cmp}.{t} %q0, %a0, %a1; {SELP}", "u16 u16", "u32",
         gen="bf16" if t == "bf16" else "half16")
      for t, cmps in (("f16", ("lt", "geu", "ne", "nan")), ("bf16", ("ltu", "eq", "num")))
      for cmp in cmps],
    *[_c(f"setp_{cmp}_ftz_f16", "setp f16", f"setp.{cmp}.ftz.f16 %q0, %a0, %a1; {SELP}",
         "u16 u16", "u32", gen="half16") for cmp in ("lt", "equ", "ne")],
    # Packed pairs: p compares the low halves, q the high ones.
    *[_c(f"setp_{cmp.replace('.', '_')}_{t.replace('.', '_')}",
         "setp bf16x2" if "bf16" in t else "setp f16x2",
         f"{pre}setp.{cmp}.{t} %q0|%q2, %a0, %a1{c}; {_SETP_PAIR}", "u32 u32", "u32",
         gen="bf16" if "bf16" in t else "half16")
      for cmp, t, pre, c in (
          ("lt", "f16x2", "", ""), ("geu", "ftz.f16x2", "", ""), ("ne", "f16x2", "", ""),
          ("nan", "f16x2", "", ""),
          ("le.and", "f16x2", "and.b32 %t0, %a0, 1; setp.ne.u32 %q1, %t0, 0; ", ", !%q1"),
          ("gt", "bf16x2", "", ""), ("equ", "bf16x2", "", ""), ("num", "bf16x2", "", ""),
          ("lt.or", "bf16x2", "and.b32 %t0, %a1, 1; setp.ne.u32 %q1, %t0, 0; ", ", %q1"))],
]


CASES: list[Case] = [
    # -- integer bit manipulation ------------------------------------------------------
    _c("popc_b32", "popc", "popc.b32 %d, %a0;", "u32", "u32"),
    _c("popc_b64", "popc", "popc.b64 %d, %a0;", "u64", "u32"),
    _c("clz_b32", "clz", "clz.b32 %d, %a0;", "u32", "u32"),
    _c("clz_b64", "clz", "clz.b64 %d, %a0;", "u64", "u32"),
    _c("bfind_u32", "bfind", "bfind.u32 %d, %a0;", "u32", "u32"),
    _c("bfind_s32", "bfind", "bfind.s32 %d, %a0;", "u32", "u32"),
    _c("bfind_shiftamt_s64", "bfind", "bfind.shiftamt.s64 %d, %a0;", "u64", "u32"),
    _c("brev_b32", "brev", "brev.b32 %d, %a0;", "u32", "u32"),
    _c("brev_b64", "brev", "brev.b64 %d, %a0;", "u64", "u64"),
    _c("cnot_b32", "cnot", "cnot.b32 %d, %a0;", "u32", "u32", gen="small"),
    _c("bfe_u32", "bfe", "bfe.u32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32", gen="fields"),
    _c("bfe_s32", "bfe", "bfe.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32", gen="fields"),
    _c("bfe_s64", "bfe", "bfe.s64 %d, %a0, %t0, %t1;", "u64 u32 u32", "u64", gen="fields",
       extra={"pre": "mov.b32 %t0, %a1; mov.b32 %t1, %a2;"}),
    _c("bfe_u64", "bfe", "bfe.u64 %d, %a0, %t0, %t1;", "u64 u32 u32", "u64", gen="fields",
       extra={"pre": "mov.b32 %t0, %a1; mov.b32 %t1, %a2;"}),
    _c("bfi_b32", "bfi", "bfi.b32 %d, %a0, %a1, %t0, %t1;", "u32 u32 u32", "u32", gen="fields",
       extra={"pre": "and.b32 %t0, %a2, 255; shr.b32 %t1, %a2, 8;"}),
    _c("prmt_b32", "prmt", "prmt.b32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    *[_c(f"prmt_{m}", "prmt", f"prmt.b32.{m} %d, %a0, %a1, %a2;", "u32 u32 u32", "u32")
      for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")],
    *[_c(f"lop3_{lut:02x}", "lop3", f"lop3.b32 %d, %a0, %a1, %a2, {lut};", "u32 u32 u32", "u32")
      for lut in (0x00, 0x96, 0xe8, 0x1e, 0xf8, 0xff)],
    *[_c(f"shf_{d}_{m}", "shf", f"shf.{d}.{m}.b32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32",
         gen="shifts") for d in ("l", "r") for m in ("clamp", "wrap")],
    _c("szext_clamp_s32", "szext", "szext.clamp.s32 %d, %a0, %a1;", "u32 u32", "u32",
       gen="shifts"),
    _c("szext_wrap_u32", "szext", "szext.wrap.u32 %d, %a0, %a1;", "u32 u32", "u32",
       gen="shifts"),
    _c("bmsk_clamp", "bmsk", "bmsk.clamp.b32 %d, %a0, %a1;", "u32 u32", "u32", gen="shifts2"),
    _c("bmsk_wrap", "bmsk", "bmsk.wrap.b32 %d, %a0, %a1;", "u32 u32", "u32", gen="shifts2"),
    _c("fns_b32", "fns", "fns.b32 %d, %a0, %t0, %t1;", "u32 u32 u32", "u32", extra={
        "pre": "and.b32 %t0, %a1, 31; and.b32 %t1, %a2, 63; sub.s32 %t1, %t1, 32;",
        **SMALL}),
    # Bases 32-63 as well: no bit there, so NVIDIA answers 0xffffffff.
    _c("fns_b32_wide_base", "fns", "fns.b32 %d, %a0, %t0, %t1;", "u32 u32 u32", "u32", extra={
        "pre": "and.b32 %t0, %a1, 63; and.b32 %t1, %a2, 63; sub.s32 %t1, %t1, 32;",
        **SMALL}),
    _c("shl_b32", "shl/shr", "shl.b32 %d, %a0, %a1;", "u32 u32", "u32", gen="shifts"),
    _c("shr_s32", "shl/shr", "shr.s32 %d, %a0, %a1;", "u32 u32", "u32", gen="shifts"),
    *LOGIC,
    # -- integer arithmetic ----------------------------------------------------------------
    _c("mul24_lo_s32", "mul24/mad24", "mul24.lo.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("mul24_hi_u32", "mul24/mad24", "mul24.hi.u32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("mad24_lo_u32", "mul24/mad24", "mad24.lo.u32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("mad24_hi_sat_s32", "mul24/mad24", "mad24.hi.sat.s32 %d, %a0, %a1, %a2;",
       "u32 u32 u32", "u32"),
    _c("sad_u32", "sad", "sad.u32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("sad_s32", "sad", "sad.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("dp4a_s32_s32", "dp4a/dp2a", "dp4a.s32.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("dp4a_u32_s32", "dp4a/dp2a", "dp4a.u32.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("dp2a_lo_s32_u32", "dp4a/dp2a", "dp2a.lo.s32.u32 %d, %a0, %a1, %a2;", "u32 u32 u32",
       "u32"),
    _c("dp2a_hi_u32_u32", "dp4a/dp2a", "dp2a.hi.u32.u32 %d, %a0, %a1, %a2;", "u32 u32 u32",
       "u32"),
    _c("add_sat_s32", "add/sub .sat", "add.sat.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("sub_sat_s32", "add/sub .sat", "sub.sat.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("max_relu_s32", "min/max .relu", "max.relu.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("min_relu_s32", "min/max .relu", "min.relu.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("add_cc_chain", "add.cc/addc",
       "add.cc.u32 %t0, %a0, %a1; addc.cc.u32 %t1, %a1, %a2; addc.u32 %t2, 0, 0; "
       "xor.b32 %t1, %t1, %t0; shl.b32 %t2, %t2, 16; xor.b32 %d, %t1, %t2;", "u32 u32 u32", "u32"),
    _c("sub_cc_chain", "sub.cc/subc",
       "sub.cc.u32 %t0, %a0, %a1; subc.cc.u32 %t1, %a1, %a2; subc.u32 %t2, 0, 0; "
       "xor.b32 %t1, %t1, %t0; shl.b32 %t2, %t2, 16; xor.b32 %d, %t1, %t2;", "u32 u32 u32", "u32"),
    _c("mad_cc_chain", "mad.cc/madc",
       "mad.lo.cc.u32 %t0, %a0, %a1, %a2; madc.hi.cc.u32 %t1, %a0, %a1, %a2; "
       "addc.u32 %t2, 0, 0; xor.b32 %t1, %t1, %t0; shl.b32 %t2, %t2, 16; xor.b32 %d, %t1, %t2;",
       "u32 u32 u32", "u32"),
    *INT_ARITH,
    # -- float ------------------------------------------------------------------------------
    _c("rcp_rn_f32", "rcp/sqrt .rn", "rcp.rn.f32 %d, %a0;", "f32", "f32"),
    _c("rcp_rn_f64", "rcp/sqrt .rn", "rcp.rn.f64 %d, %a0;", "f64", "f64"),
    _c("sqrt_rn_f32", "rcp/sqrt .rn", "sqrt.rn.f32 %d, %a0;", "f32", "f32"),
    _c("sqrt_rn_f64", "rcp/sqrt .rn", "sqrt.rn.f64 %d, %a0;", "f64", "f64"),
    _c("rcp_approx_ftz_f32", "rcp/sqrt/rsqrt .approx", "rcp.approx.ftz.f32 %d, %a0;", "f32",
       "f32", tolerance=Tolerance(ulp=1, source="PTX ISA rcp.approx.f32: max 1 ulp")),
    _c("sqrt_approx_f32", "rcp/sqrt/rsqrt .approx", "sqrt.approx.f32 %d, %a0;", "f32", "f32",
       tolerance=Tolerance(ulp=2, source="PTX ISA sqrt.approx.f32: relative error 2^-23")),
    _c("rsqrt_approx_f32", "rcp/sqrt/rsqrt .approx", "rsqrt.approx.f32 %d, %a0;", "f32", "f32",
       tolerance=Tolerance(ulp=4, source="PTX ISA rsqrt.approx.f32: max relative error 2^-22.9")),
    _c("sin_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "sin.approx.f32 %d, %a0;", "f32", "f32",
       gen="angle", tolerance=Tolerance(abs=2.0 ** -19.5,
                                        source="PTX ISA sin.approx.f32: abs error 2^-20.5 in "
                                               "[-pi, pi]")),
    _c("cos_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "cos.approx.f32 %d, %a0;", "f32", "f32",
       gen="angle", tolerance=Tolerance(abs=2.0 ** -19.5,
                                        source="PTX ISA cos.approx.f32: abs error 2^-20.5 in "
                                               "[-pi, pi]")),
    _c("lg2_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "lg2.approx.f32 %d, %a0;", "f32", "f32",
       gen="positive", tolerance=Tolerance(ulp=4, abs=2.0 ** -21.6,
                                           source="PTX ISA lg2.approx.f32: abs error 2^-22.6 "
                                                  "(mantissa in [0.5, 2]), else 2 ulp")),
    _c("ex2_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "ex2.approx.f32 %d, %a0;", "f32", "f32",
       gen="exponent", tolerance=Tolerance(ulp=4, source="PTX ISA ex2.approx.f32: max 2 ulp")),
    _c("tanh_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "tanh.approx.f32 %d, %a0;", "f32",
       "f32", gen="exponent",
       tolerance=Tolerance(ulp=2 ** 13, abs=2.0 ** -10,
                           source="PTX ISA tanh.approx.f32: max relative error 2^-11")),
    *[_c(f"testp_{k}_f32", "testp", f"testp.{k}.f32 %q0, %a0; {SELP}", "f32", "u32")
      for k in ("finite", "infinite", "number", "notanumber", "normal", "subnormal")],
    _c("testp_subnormal_f64", "testp", f"testp.subnormal.f64 %q0, %a0; {SELP}", "f64", "u32"),
    _c("testp_normal_f64", "testp", f"testp.normal.f64 %q0, %a0; {SELP}", "f64", "u32"),
    _c("copysign_f32", "copysign", "copysign.f32 %d, %a0, %a1;", "f32 f32", "f32"),
    _c("min_f32", "min/max f32", "min.f32 %d, %a0, %a1;", "f32 f32", "f32", gen="pairs"),
    _c("max_f32", "min/max f32", "max.f32 %d, %a0, %a1;", "f32 f32", "f32", gen="pairs"),
    _c("min_nan_f32", "min/max .NaN", "min.NaN.f32 %d, %a0, %a1;", "f32 f32", "f32", gen="pairs"),
    _c("max_nan_f32", "min/max .NaN", "max.NaN.f32 %d, %a0, %a1;", "f32 f32", "f32", gen="pairs"),
    *FLOAT_ARITH,
    # -- compare and select ------------------------------------------------------------------
    _c("set_lt_u32_f32", "set", "set.lt.u32.f32 %d, %a0, %a1;", "f32 f32", "u32", gen="pairs"),
    _c("set_gtu_f32_f32", "set", "set.gtu.f32.f32 %w0, %a0, %a1; mov.b32 %d, %w0;", "f32 f32",
       "u32", gen="pairs"),
    _c("set_ne_and_s32", "set",
       "setp.ne.u32 %q1, %a2, 0; set.le.and.s32.s32 %d, %a0, %a1, %q1;", "u32 u32 u32", "u32"),
    _c("slct_s32_s32", "slct", "slct.b32.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("slct_f32_f32", "slct", "mov.b32 %w0, %a2; slct.b32.f32 %d, %a0, %a1, %w0;", "u32 u32 u32",
       "u32", gen="float_bits"),
    *COMPARE,
    # -- moves and conversions ----------------------------------------------------------------
    _c("mov_pack_b64", "mov pack/unpack", "mov.b64 %d, {%a0, %a1};", "u32 u32", "u64"),
    _c("mov_unpack_b32", "mov pack/unpack",
       "mov.b32 {%h0, %h1}, %a0; mov.b32 %d, {%h1, %h0};", "u32", "u32"),
    _c("cvt_rz_f32_f64", "cvt float narrowing .rz/.rm/.rp", "cvt.rz.f32.f64 %d, %a0;", "f64", "f32"),
    _c("cvt_rm_f32_f64", "cvt float narrowing .rz/.rm/.rp", "cvt.rm.f32.f64 %d, %a0;", "f64", "f32"),
    _c("cvt_rp_f32_f64", "cvt float narrowing .rz/.rm/.rp", "cvt.rp.f32.f64 %d, %a0;", "f64", "f32"),
    _c("cvt_rn_f16_f32", "cvt f16/bf16", "cvt.rn.f16.f32 %h0, %a0; cvt.u32.u16 %d, %h0;",
       "f32", "u32"),
    _c("cvt_rz_f16_f32", "cvt f16/bf16", "cvt.rz.f16.f32 %h0, %a0; cvt.u32.u16 %d, %h0;",
       "f32", "u32"),
    _c("cvt_rn_relu_f16_f32", "cvt f16/bf16",
       "cvt.rn.relu.f16.f32 %h0, %a0; cvt.u32.u16 %d, %h0;", "f32", "u32"),
    _c("cvt_rn_bf16_f32", "cvt f16/bf16", "cvt.rn.bf16.f32 %h0, %a0; cvt.u32.u16 %d, %h0;",
       "f32", "u32"),
    _c("cvt_f32_f16", "cvt f16/bf16", "mov.b16 %h0, %a0; cvt.f32.f16 %d, %h0;", "u16", "f32",
       gen="exhaustive16"),
    _c("cvt_rn_f16x2_f32", "cvt f16x2/bf16x2 pack", "cvt.rn.f16x2.f32 %d, %a0, %a1;",
       "f32 f32", "u32"),
    _c("cvt_rn_relu_f16x2_f32", "cvt f16x2/bf16x2 pack", "cvt.rn.relu.f16x2.f32 %d, %a0, %a1;",
       "f32 f32", "u32"),
    _c("cvt_rn_bf16x2_f32", "cvt f16x2/bf16x2 pack", "cvt.rn.bf16x2.f32 %d, %a0, %a1;",
       "f32 f32", "u32"),
    _c("cvt_rz_f32_s32", "cvt int->float .rz/.rm/.rp", "cvt.rz.f32.s32 %d, %a0;", "u32", "f32"),
    _c("cvt_rm_f32_u32", "cvt int->float .rz/.rm/.rp", "cvt.rm.f32.u32 %d, %a0;", "u32", "f32"),
    _c("cvt_rp_f32_s64", "cvt int->float .rz/.rm/.rp", "cvt.rp.f32.s64 %d, %a0;", "u64", "f32"),
    _c("cvt_rz_f64_u64", "cvt int->float .rz/.rm/.rp", "cvt.rz.f64.u64 %d, %a0;", "u64", "f64"),
    _c("cvt_sat_s8_s32", "cvt .sat int", "cvt.sat.s8.s32 %d, %a0;", "u32", "u32"),
    _c("cvt_sat_u16_s32", "cvt .sat int", "cvt.sat.u16.s32 %d, %a0;", "u32", "u32"),
    _c("cvt_sat_s32_u32", "cvt .sat int", "cvt.sat.s32.u32 %d, %a0;", "u32", "u32"),
    _c("cvt_rni_s32_f32", "cvt float->int", "cvt.rni.s32.f32 %d, %a0;", "f32", "u32"),
    *MOVES,
    *CVT,
    # -- warp level (full warps) ----------------------------------------------------------------
    _c("vote_ballot", "vote.sync", "and.b32 %t0, %a0, 1; setp.ne.u32 %q0, %t0, 0; "
       "vote.sync.ballot.b32 %d, %q0, -1;", "u32", "u32", gen="warp"),
    _c("vote_any_all_uni", "vote.sync", "setp.ne.u32 %q0, %a0, 0; "
       "vote.sync.any.pred %q1, %q0, -1; vote.sync.all.pred %q2, %q0, -1; "
       "vote.sync.uni.pred %q3, %q0, -1; selp.u32 %t0, 1, 0, %q1; selp.u32 %t1, 2, 0, %q2; "
       "selp.u32 %t2, 4, 0, %q3; or.b32 %t0, %t0, %t1; or.b32 %d, %t0, %t2;", "u32", "u32",
       gen="warp_sparse"),
    _c("activemask", "activemask", "activemask.b32 %d;", "u32", "u32", gen="warp"),
    *[_c(f"redux_{op}_{t}", "redux.sync", f"redux.sync.{op}.{t} %d, %a0, -1;", "u32", "u32",
         gen="warp") for op, t in (("add", "u32"), ("min", "s32"), ("max", "u32"),
                                   ("and", "b32"), ("or", "b32"), ("xor", "b32"))],
    _c("match_any_b32", "match.sync", "match.any.sync.b32 %d, %a0, -1;", "u32", "u32",
       gen="warp_small"),
    _c("match_all_b32", "match.sync", f"match.all.sync.b32 %t0|%q0, %a0, -1; {SELP} "
       "xor.b32 %d, %d, %t0;", "u32", "u32", gen="warp_uniformish"),
    _c("lanemasks", "special registers", "mov.u32 %t0, %laneid; mov.u32 %t1, %lanemask_lt; "
       "mov.u32 %t2, %lanemask_ge; shl.b32 %t0, %t0, 24; xor.b32 %t1, %t1, %t2; "
       "xor.b32 %d, %t1, %t0;", "u32", "u32", gen="warp"),
    *SREGS,
    *WARP,
    *MATRIX,
    *MEMORY,
    *ATOMICS,
    # -- calls and local memory ---------------------------------------------------------------
    _c("call_func", ".func/call",
       "{ .param .b32 param0; .param .b32 param1; st.param.b32 [param0], %a0; "
       "st.param.b32 [param1], %a1; .param .b32 retval0; "
       "call.uni (retval0), mix, (param0, param1); ld.param.b32 %d, [retval0]; }",
       "u32 u32", "u32",
       preamble=".func (.param .b32 r) mix(.param .b32 x, .param .b32 y)\n{\n"
                "\t.reg .b32 %v<4>;\n\tld.param.b32 %v0, [x];\n\tld.param.b32 %v1, [y];\n"
                "\tmul.lo.u32 %v2, %v0, 3;\n\txor.b32 %v3, %v2, %v1;\n"
                "\tst.param.b32 [r], %v3;\n\tret;\n}\n"),
    _c("local_depot", ".local", "mov.u64 %l1, depot; cvta.local.u64 %l0, %l1; "
       "st.local.u32 [%l1], %a0; st.u32 [%l0+4], %a1; and.b32 %t0, %a1, 4; "
       "cvt.u64.u32 %l2, %t0; add.u64 %l2, %l1, %l2; ld.local.u32 %d, [%l2];", "u32 u32", "u32",
       locals_=".local .align 8 .b8 depot[8];"),
    # -- control, sync, atomics, special registers ---------------------------------------------
    # Half-precision adds and 16-bit cas on the thread's own in0[i] (%rd2): the old value and
    # the word afterwards; each half of the word is one 16-bit atomic.
    *[_c(f"atom_add_noftz_{t}", "atom add f16/bf16",
         f"mov.b32 {{%s0, %s1}}, %a1; atom.global.add.noftz.{t} %s2, [%rd2], %s0; "
         f"atom.global.add.noftz.{t} %s3, [%rd2+2], %s1; ld.global.u32 %t0, [%rd2]; "
         "mov.b32 %t1, {%s2, %s3}; mov.b64 %d, {%t0, %t1};", "u32 u32", "u64", locals_=XREGS,
         extra=SMALL) for t in ("f16", "bf16")],
    *[_c(f"atom_add_noftz_{t}", "atom add f16/bf16",
         f"atom.global.add.noftz.{t} %t1, [%rd2], %a1; ld.global.u32 %t0, [%rd2]; "
         "mov.b64 %d, {%t0, %t1};", "u32 u32", "u64", extra=SMALL) for t in ("f16x2", "bf16x2")],
    _c("red_add_noftz_f16", "atom add f16/bf16", "mov.b32 {%s0, %s1}, %a1; "
       "red.global.add.noftz.f16 [%rd2+2], %s1; ld.global.u32 %d, [%rd2];", "u32 u32", "u32",
       locals_=XREGS, extra=SMALL),
    _c("red_add_noftz_bf16x2", "atom add f16/bf16", "red.add.noftz.bf16x2 [%rd2], %a1; "
       "ld.global.u32 %d, [%rd2];", "u32 u32", "u32", extra=SMALL),
    _c("atom_shared_add_noftz_f16", "atom add f16/bf16",
       "mov.u32 %t2, sh; shl.b32 %t3, %r3, 2; add.u32 %t2, %t2, %t3; st.shared.u32 [%t2], %a0; "
       "mov.b32 {%s0, %s1}, %a1; atom.shared.add.noftz.f16 %s2, [%t2+2], %s1; "
       "ld.shared.u32 %t0, [%t2]; cvt.u32.u16 %t1, %s2; mov.b64 %d, {%t0, %t1};", "u32 u32",
       "u64", locals_=f"{XREGS}\n\t{SHARED}", extra=SMALL),
    _c("atom_cas_b16", "atom cas", "mov.b32 {%s0, %s1}, %a0; and.b32 %t0, %a2, 1; "
       "setp.ne.u32 %g0, %t0, 0; mov.b32 {%s2, %s3}, %a1; selp.b16 %s2, %s1, %s2, %g0; "
       "atom.global.cas.b16 %s0, [%rd2+2], %s2, %s3; ld.global.u32 %t0, [%rd2]; "
       "cvt.u32.u16 %t1, %s0; mov.b64 %d, {%t0, %t1};", "u32 u32 u32", "u64", locals_=XREGS,
       extra=SMALL),
    # Named and counted barriers over the whole CTA (128 threads): neighbours' shared words.
    _c("bar_sync_named_counted", "bar/barrier",
       "mov.u32 %t0, sh; shl.b32 %t1, %r3, 2; add.u32 %t1, %t0, %t1; st.shared.u32 [%t1], %a0; "
       "bar.sync 1, 128; xor.b32 %t2, %r3, 32; shl.b32 %t2, %t2, 2; add.u32 %t2, %t0, %t2; "
       "ld.shared.u32 %t3, [%t2]; barrier.sync.aligned 2; st.shared.u32 [%t1], %t3; "
       "barrier.sync 3, %r2; xor.b32 %t2, %r3, 1; shl.b32 %t2, %t2, 2; add.u32 %t2, %t0, %t2; "
       "ld.shared.u32 %d, [%t2];", "u32", "u32", locals_=SHARED, extra=SMALL),
    # Warps 0-1 produce and arrive, warps 2-3 wait and consume.
    _c("bar_arrive_sync", "bar/barrier",
       "mov.u32 %t0, sh; shl.b32 %t1, %r3, 2; add.u32 %t1, %t0, %t1; setp.lt.u32 %q0, %r3, 64; "
       "mov.b32 %d, %a0; @%q0 st.shared.u32 [%t1], %a0; @%q0 bar.arrive 1, 128; "
       "@!%q0 bar.sync 1, 128; @!%q0 sub.u32 %t2, %t1, 256; @!%q0 ld.shared.u32 %d, [%t2];",
       "u32", "u32", locals_=SHARED, extra=SMALL),
    _c("bar_red_popc", "bar.red", "and.b32 %t0, %a0, 1; setp.ne.u32 %q0, %t0, 0; "
       "bar.red.popc.u32 %d, 0, %q0;", "u32", "u32", extra=SMALL),
    _c("bar_red_and_or", "bar.red", "and.b32 %t0, %a0, 255; setp.ne.u32 %q0, %t0, 0; "
       "bar.red.and.pred %q1, 1, %q0; barrier.red.or.pred %q2, 2, 128, !%q0; "
       "barrier.red.popc.aligned.u32 %t1, 3, %q1; selp.u32 %t2, 1, 0, %q1; "
       "selp.u32 %t3, 2, 0, %q2; or.b32 %t2, %t2, %t3; shl.b32 %t1, %t1, 8; "
       "or.b32 %d, %t1, %t2;", "u32", "u32", extra=SMALL),
    # elect.sync over a warp-uniform random mask (lane 0's input), by the lanes in it; and
    # over the full warp with the sink as d.
    _c("elect_sync_mask", "elect.sync", "shfl.sync.idx.b32 %t0, %a0, 0, 31, -1; "
       "mov.u32 %t1, %lanemask_eq; and.b32 %t2, %t0, %t1; setp.ne.u32 %q1, %t2, 0; "
       "mov.u32 %d, -1; @%q1 elect.sync %t3|%q0, %t0; @%q1 selp.u32 %t2, 256, 0, %q0; "
       "@%q1 or.b32 %d, %t3, %t2;", "u32", "u32", gen="warp"),
    _c("elect_sync_full", "elect.sync", "elect.sync _|%q0, -1; mov.u32 %t0, %laneid; "
       "selp.u32 %t1, 1, 0, %q0; shl.b32 %t0, %t0, 1; or.b32 %d, %t0, %t1;", "u32", "u32",
       gen="warp"),
    # Registers whose values are the machine's: only relations that always hold.
    _c("sreg_warpid_smid", "special registers",
       "mov.u32 %t0, %warpid; mov.u32 %t1, %nwarpid; setp.lt.u32 %q0, %t0, %t1; "
       "mov.u32 %t0, %smid; mov.u32 %t1, %nsmid; setp.lt.u32 %q1, %t0, %t1; "
       "setp.ne.u32 %q2, %t1, 0; selp.u32 %t2, 1, 0, %q0; selp.u32 %t3, 2, 0, %q1; "
       "or.b32 %t2, %t2, %t3; selp.u32 %t3, 4, 0, %q2; or.b32 %d, %t2, %t3;", "u32", "u32",
       extra=SMALL),
    _c("sreg_clock", "special registers",
       "mov.u64 %l0, %clock64; mul.lo.u32 %t0, %a0, %a0; mov.u64 %l1, %clock64; "
       "setp.ge.u64 %q0, %l1, %l0; mov.u32 %t1, %clock; mov.u32 %t2, %clock; "
       "sub.u32 %t2, %t2, %t1; setp.lt.u32 %q1, %t2, 0x40000000; selp.u32 %t0, 1, 0, %q0; "
       "selp.u32 %t1, 2, 0, %q1; or.b32 %d, %t0, %t1;", "u32", "u32", extra=SMALL),
    _c("sreg_globaltimer", "special registers",
       "mov.u64 %l0, %globaltimer; mov.u64 %l1, %globaltimer; setp.ge.u64 %q0, %l1, %l0; "
       "setp.ne.u64 %q1, %l0, 0; selp.u32 %t0, 1, 0, %q0; selp.u32 %t1, 2, 0, %q1; "
       "or.b32 %d, %t0, %t1;", "u32", "u32", extra=SMALL),
    _c("sreg_envreg", "special registers", "mov.u32 %t0, %envreg0; mov.u32 %t1, %envreg31; "
       "mov.b64 %d, {%t0, %t1};", "u32", "u64", extra=SMALL),
    _c("sreg_smem_size", "special registers",
       "mov.u32 %t2, sh; shl.b32 %t3, %r3, 2; add.u32 %t2, %t2, %t3; st.shared.u32 [%t2], %a0; "
       "mov.u32 %t0, %dynamic_smem_size; mov.u32 %t1, %total_smem_size; "
       "mov.b64 %d, {%t0, %t1};", "u32", "u64", locals_=SHARED, extra=SMALL),
    # brx.idx over a .branchtargets list, the index from the input.
    _c("brx_idx", "bra/brx.idx", "and.b32 %t0, %a0, 3; "
       "ts: .branchtargets BRX_0, BRX_1, BRX_2, BRX_3; brx.idx %t0, ts; "
       "BRX_0: mov.u32 %d, 11; bra.uni BRX_JOIN; BRX_1: xor.b32 %d, %a1, 22; bra.uni BRX_JOIN; "
       "BRX_2: add.u32 %d, %a1, 33; bra.uni BRX_JOIN; BRX_3: mov.u32 %d, %a0; "
       "BRX_JOIN: add.u32 %d, %d, 1;", "u32 u32", "u32", extra=SMALL),
    # A recursive .func: (a0 & 15)! modulo 2^32.
    _c("call_recursive", ".func/call", "and.b32 %t0, %a0, 15; { .param .b32 q0; "
       ".param .b32 s0; st.param.b32 [q0], %t0; call.uni (s0), fact, (q0); "
       "ld.param.b32 %d, [s0]; }", "u32", "u32", extra=SMALL,
       preamble=".func (.param .b32 r) fact(.param .b32 x)\n{\n\t.reg .b32 %v<4>;\n"
                "\t.reg .pred %vp;\n\tld.param.b32 %v0, [x];\n\tsetp.le.u32 %vp, %v0, 1;\n"
                "\t@%vp bra BASE;\n\tsub.u32 %v1, %v0, 1;\n\t{ .param .b32 p0; .param .b32 r0; "
                "st.param.b32 [p0], %v1; call.uni (r0), fact, (p0); ld.param.b32 %v2, [r0]; }\n"
                "\tmul.lo.u32 %v3, %v0, %v2;\n\tst.param.b32 [r], %v3;\n\tret;\nBASE:\n"
                "\tst.param.b32 [r], 1;\n\tret;\n}\n"),
    # A call through a function pointer picked per thread, with a .callprototype.
    _c("call_indirect", ".func/call",
       "and.b32 %t0, %a2, 1; setp.ne.u32 %q0, %t0, 0; mov.u64 %l0, f_mix; mov.u64 %l1, f_sub; "
       "selp.b64 %l0, %l0, %l1, %q0; { .param .b32 param0; .param .b32 param1; "
       ".param .b32 retval0; st.param.b32 [param0], %a0; st.param.b32 [param1], %a1; "
       "proto: .callprototype (.param .b32 _) _ (.param .b32 _, .param .b32 _); "
       "call (retval0), %l0, (param0, param1), proto; ld.param.b32 %d, [retval0]; }",
       "u32 u32 u32", "u32", extra=SMALL,
       preamble="".join(
           f".func (.param .b32 r) {f}(.param .b32 x, .param .b32 y)\n{{\n"
           "\t.reg .b32 %v<4>;\n\tld.param.b32 %v0, [x];\n\tld.param.b32 %v1, [y];\n"
           f"\t{op}\n\tst.param.b32 [r], %v3;\n\tret;\n}}\n"
           for f, op in (("f_mix", "mul.lo.u32 %v2, %v0, 3;\n\txor.b32 %v3, %v2, %v1;"),
                         ("f_sub", "sub.u32 %v3, %v0, %v1;")))),
    # -- f16/bf16 arithmetic and directed rounding
    *HALF_ARITH,
    *DIRECTED,
    # -- setp/set on f16 and bf16
    *SETP_HALF,
    *HALF_APPROX,
]


def case(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


# -- PTX text ------------------------------------------------------------------------------


def ptx(c: Case) -> str:
    regs = "\n".join(f"\t.reg .{KINDS[k][0]} %a{i};" for i, k in enumerate(c.inputs))
    loads = []
    for i, k in enumerate(c.inputs):
        size = np.dtype(KINDS[k][1]).itemsize
        loads.append(f"\tld.param.u64 %rd{i + 2}, [in{i}];\n"
                     f"\tmad.wide.u32 %rd{i + 2}, %r4, {size}, %rd{i + 2};\n"
                     f"\tld.global.{KINDS[k][0]} %a{i}, [%rd{i + 2}];")
    out_size = np.dtype(KINDS[c.output][1]).itemsize
    pre = str(c.extra.get("pre", ""))
    body = "\n".join(f"\t{s.strip()}" + ("" if s.strip() == "}" else ";")
                     for s in (pre + " " + c.body).split(";") if s.strip())
    return f""".version {c.extra.get("version", "8.0")}
.target sm_90
.address_size 64

{c.preamble}
.visible .entry k(.param .u64 out, .param .u64 in0, .param .u64 in1, .param .u64 in2,
\t.param .u32 n)
{{
{c.locals_}
\t.reg .pred %p<2>;
\t.reg .pred %q<4>;
\t.reg .b32 %r<6>;
\t.reg .b32 %t<4>;
\t.reg .f32 %w<2>;
\t.reg .b16 %h<2>;
\t.reg .b64 %rd<6>;
\t.reg .b64 %l<3>;
{regs}
\t.reg .{KINDS[c.output][0]} %d;
\tmov.u32 %r1, %ctaid.x;
\tmov.u32 %r2, %ntid.x;
\tmov.u32 %r3, %tid.x;
\tmad.lo.s32 %r4, %r1, %r2, %r3;
\tld.param.u32 %r5, [n];
\tsetp.ge.u32 %p1, %r4, %r5;
\t@%p1 bra DONE;
{chr(10).join(loads)}
{body}
\tld.param.u64 %rd1, [out];
\tmad.wide.u32 %rd1, %r4, {out_size}, %rd1;
\tst.global.{KINDS[c.output][0]} [%rd1], %d;
DONE:
\tret;
}}
"""


# -- inputs --------------------------------------------------------------------------------

U32_EDGES = [0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 0x7F,
             0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFF, 0x800000, 0xFFFFFF,
             0x1000000, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF,
             0x55555555, 0xAAAAAAAA, 0x12345678, 0xDEADBEEF]
F32_EDGES = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
             0x7FC00001, 0x7FA00000, 0xFFBFFFFF, 0x00000001, 0x80000001, 0x007FFFFF,
             0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000,
             0xBF800000, 0x3F000000, 0x3FC00000, 0x40000000, 0x3F800001, 0x33800000,
             0x47800000, 0x477FE000, 0x477FF000, 0x4F000000, 0xCF000000, 0x4F800000,
             0x5F000000, 0xDF000000, 0x3EAAAAAB, 0x40490FDB, 0xC0490FDB]
F64_EDGES = [0x0000000000000000, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
             0x7FF8000000000000, 0x7FF8000000000001, 0x7FF4000000000000, 0x0000000000000001,
             0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000,
             0xBFF0000000000000, 0x3FF0000010000000, 0x3FF0000008000000, 0x3FF0000018000000,
             0x36A0000000000000, 0x36A0000000000001, 0x3690000000000000, 0x47EFFFFFE0000000,
             0x47EFFFFFF0000000, 0x47F0000000000000, 0xC7EFFFFFF0000000, 0x380FFFFFFFFFFFFF,
             0x3810000000000000, 0x3FD5555555555555]
N_RANDOM = 4096


def _edge_grid(edges: list[int], arity: int, rng: np.random.Generator) -> list[np.ndarray]:
    e = np.array(edges, dtype=np.uint64)
    if arity == 1:
        return [e]
    if arity == 2:
        a, b = np.meshgrid(e, e, indexing="ij")
        return [a.ravel(), b.ravel()]
    return [rng.choice(e, 2048) for _ in range(arity)]


def _float_bits(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Random floats: half random bit patterns (every class), half ordinary magnitudes."""
    if kind == "f32":
        raw = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
        nice = rng.uniform(-1e4, 1e4, n).astype(np.float32).view(np.uint32)
        out = np.where(rng.random(n) < 0.5, raw, nice)
        return out.astype(np.uint64)
    raw = rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(
        0, 2, n, dtype=np.uint64)
    nice = rng.uniform(-1e6, 1e6, n).view(np.uint64)
    return np.where(rng.random(n) < 0.5, raw, nice)


def inputs(c: Case) -> list[np.ndarray]:
    """The input arrays of a case, each of the kind's dtype, padded to whole blocks."""
    rng = np.random.default_rng(_seed(c.name))
    arity = len(c.inputs)
    cols: list[np.ndarray]
    g = c.gen
    if g == "exhaustive16":
        cols = [np.arange(2 ** 16, dtype=np.uint64)]
    elif g == "f16pairs":  # every f16 in the low half, and (permuted) in the high half
        low = np.arange(2 ** 16, dtype=np.uint64)
        cols = [low | (rng.permutation(low) << np.uint64(16))]
    elif g.startswith("mma_"):  # small integers, four 16-bit or two 32-bit ones to a word
        n = 32 * 64
        cols = []
        for _ in c.inputs:
            v = rng.integers(-8, 9, (n, 4 if g in ("mma_f16", "mma_bf16") else 2))
            if g == "mma_f16":
                lanes = v.astype(np.float16).view(np.uint16).astype(np.uint64)
            elif g == "mma_bf16":
                lanes = (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
            else:
                lanes = v.astype(np.float32).view(np.uint32).astype(np.uint64)
            if g == "mma_f64":
                cols.append((v[:, 0] * 4 + v[:, 1]).astype(np.float64).view(np.uint64))
                continue
            width = 64 // lanes.shape[1]
            cols.append(sum(lanes[:, j] << np.uint64(width * j) for j in range(lanes.shape[1])))
    elif g.startswith("warp"):
        n = 32 * 64
        if g == "warp_small":
            cols = [rng.integers(0, 4, n, dtype=np.uint64)]
        elif g == "warp_sparse":
            warps = rng.integers(0, 3, n // 32)
            base = rng.integers(0, 2, n, dtype=np.uint64)
            cols = [np.where(np.repeat(warps, 32) == 0, 0, np.where(
                np.repeat(warps, 32) == 1, 1, base)).astype(np.uint64)]
        elif g == "warp_uniformish":
            v = np.repeat(rng.integers(0, 2 ** 32, n // 32, dtype=np.uint64), 32)
            flip = (rng.random(n) < 0.01) & np.repeat(rng.random(n // 32) < 0.5, 32)
            cols = [np.where(flip, v ^ np.uint64(1), v)]
        else:
            cols = [rng.integers(0, 2 ** 32, n, dtype=np.uint64) for _ in c.inputs]
    elif g in _HALF:
        cols = _half_inputs(c, rng)
    elif g == "rounding":
        cols = _rounding_inputs(c, rng)
    else:
        kinds = c.inputs
        cols = []
        n_random = int(c.extra.get("n_random", N_RANDOM))  # type: ignore[call-overload]
        for i, k in enumerate(kinds):
            if k == "u16":
                cols.append(rng.integers(0, 2 ** 16, n_random, dtype=np.uint64))
            elif k == "u32":
                cols.append(rng.integers(0, 2 ** 32, n_random, dtype=np.uint64))
            elif k == "u64":
                cols.append(rng.integers(0, 2 ** 63, n_random, dtype=np.uint64) * np.uint64(2)
                            + rng.integers(0, 2, n_random, dtype=np.uint64))
            else:
                cols.append(_float_bits(k, n_random, rng))
            if g in ("fields", "shifts", "shifts2") and i > 0:
                cols[i] = rng.integers(0, 80, n_random, dtype=np.uint64)
            if g == "fields" and i == 2 and c.name == "bfi_b32":
                cols[i] = rng.integers(0, 80, n_random, dtype=np.uint64) | (
                    rng.integers(0, 80, n_random, dtype=np.uint64) << np.uint64(8))
            if g == "shifts2" and i == 0:
                cols[i] = rng.integers(0, 80, n_random, dtype=np.uint64)
        if g == "angle":
            cols[0] = np.float32(rng.uniform(-np.pi, np.pi, n_random)).view(np.uint32).astype(
                np.uint64)
        elif g == "positive":
            cols[0] = cols[0] & np.uint64(0x7FFFFFFF)
        elif g == "exponent":
            cols[0] = np.float32(rng.uniform(-30, 30, n_random)).view(np.uint32).astype(np.uint64)
        elif g == "small":
            cols[0] = np.where(rng.random(n_random) < 0.5, np.uint64(0), cols[0])
        elif g == "float_bits":
            cols[2] = _float_bits("f32", n_random, rng)
        else:
            _more_inputs(g, kinds, cols, rng)
        # Edge cases, crossed for binary ops.
        edges = []
        for k in kinds:
            edges.append(F32_EDGES if k == "f32" else F64_EDGES if k == "f64" else
                         [e & 0xFFFF for e in U32_EDGES] if k == "u16" else
                         U32_EDGES + [e << 32 | e for e in U32_EDGES[-8:]] if k == "u64"
                         else U32_EDGES)
        if g == "wide":
            edges = [e + U64_EDGES if k == "u64" else e for e, k in zip(edges, kinds, strict=True)]
        if g == "smallint":
            pass  # block-wide float totals: only values whose sum is exact in any order
        elif g not in ("angle", "exponent", "positive"):
            grid = _edge_grid(edges[0], arity, rng) if arity <= 2 and all(
                e == edges[0] for e in edges) else [rng.choice(np.array(e, dtype=np.uint64),
                                                               1024) for e in edges]
            cols = [np.concatenate([g_, col]) for g_, col in zip(grid, cols, strict=True)]
        else:
            special = np.array(F32_EDGES[:17], dtype=np.uint64)
            cols[0] = np.concatenate([special, cols[0]])
    n = len(cols[0])
    padded = -(-n // BLOCK) * BLOCK
    out = []
    for k, col in zip(c.inputs, cols, strict=True):
        dtype = KINDS[k][1]
        bits = np.zeros(padded, dtype=np.uint64)
        bits[:n] = col
        width = np.dtype(dtype).itemsize * 8
        bits &= np.uint64((1 << width) - 1) if width < 64 else np.uint64(2 ** 64 - 1)
        int_type = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
        out.append(bits.astype(int_type).view(dtype))
    return out


U64_EDGES = [0x8000000000000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000001, 0xFFFFFFFFFFFFFFFE,
             0x0000000100000000, 0x00000000FFFFFFFF, 0xFFFFFFFF00000000, 0x0000FFFFFFFFFFFF,
             0xFFFFFFFF80000000, 0x000000007FFFFFFF, 0x0123456789ABCDEF]
_TIES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 127.5, 128.0, 255.5, 256.0, -128.5,
         -129.0, 32767.5, 32768.0, 65535.5, 65536.0, -32768.5, -32769.0, 2.0 ** 31 - 0.5,
         2.0 ** 31 - 1, 2.0 ** 31, 2.0 ** 32 - 0.5, 2.0 ** 32, -2.0 ** 31, -2.0 ** 31 - 1,
         -2.0 ** 31 - 0.5, 2.0 ** 63, 2.0 ** 63 - 1024, 2.0 ** 64, -2.0 ** 63, -2.0 ** 63 - 4096,
         2.0 ** 53 + 1, 8388608.5, 4194304.5, 16777217.0, 1e30, -1e30]


def _more_inputs(g: str, kinds: tuple[str, ...], cols: list[np.ndarray],
                 rng: np.random.Generator) -> None:
    """The generator modes of the issue 4 coverage cases, changing `cols` in place:
    ties (halves, and the limits of every integer type, for conversions), fp8 (magnitudes
    around the fp8 ranges), cas (the compare value equals the memory half of the time),
    incdec (atom.inc/dec bounds near the memory value), smallint (small integers, as floats
    for float kinds, so that sums are exact in any order), narrowints (the first two inputs
    mostly within the 2- to 16-bit ranges, for cvt.pack.sat)."""
    n = len(cols[0])
    if g == "ties":
        ft = np.float32 if kinds[0] == "f32" else np.float64
        it = np.uint32 if kinds[0] == "f32" else np.uint64
        halves = (rng.integers(-2 ** 12, 2 ** 12, n // 4) / 2.0).astype(ft)
        cols[0][: n // 4] = halves.view(it).astype(np.uint64)
        special = np.array(_TIES, dtype=ft).view(it).astype(np.uint64)
        cols[0] = np.concatenate([special, cols[0]])
    elif g == "fp8":
        for i in range(len(cols)):
            scale = 2.0 ** rng.integers(-24, 18, n)
            v = (rng.uniform(-1, 1, n) * scale).astype(np.float32)
            cols[i] = np.where(rng.random(n) < 0.75, v.view(np.uint32).astype(np.uint64),
                               cols[i])
    elif g == "narrowints":  # a and b mostly around the 2- to 16-bit ranges, either sign
        for i in range(min(2, len(cols))):
            magnitude = np.uint64(1) << rng.integers(1, 18, n).astype(np.uint64)
            v = rng.integers(-(2 ** 17), 2 ** 17, n) % magnitude.astype(np.int64)
            v = np.where(rng.random(n) < 0.5, v, -v).astype(np.int64)
            cols[i] = np.where(rng.random(n) < 0.75, v.astype(np.uint64) & np.uint64(0xFFFFFFFF),
                               cols[i])
    elif g == "fp8edges":
        edges = _fp8_edges()
        cols[0] = np.concatenate([edges, cols[0]])
        cols[1] = np.concatenate([rng.permutation(edges), cols[1]])
    elif g == "tf32":
        # Low 13 bits at and around tf32's rounding point (ties, just below and above),
        # and the values that round to infinity or carry into the exponent.
        low = rng.choice(np.array([0x1000, 0x0FFF, 0x1001, 0x0000, 0x1FFF, 0x0001, 0x3000],
                                  dtype=np.uint64), n)
        tied = (cols[0] & np.uint64(0xFFFFE000)) | low
        cols[0] = np.where(rng.random(n) < 0.5, tied, cols[0])
        special = np.array([0x7F7FF000, 0x7F7FEFFF, 0x7F7FE000, 0xFF7FF000, 0xFF7FF001,
                            0x00001000, 0x00003000, 0x80001000, 0x00002000, 0x007FF000,
                            0x7F800001, 0x7F801000, 0xFF800FFF, 0x7FC01000, 0x3F801000,
                            0x3F803000, 0xBF801000, 0xBF803000], dtype=np.uint64)
        cols[0] = np.concatenate([special, cols[0]])
    elif g == "cas":
        cols[1] = np.where(rng.random(n) < 0.5, cols[0], cols[1])
    elif g == "incdec":
        near = (cols[0] + rng.integers(-2, 3, n).astype(np.uint64)) & np.uint64(0xFFFFFFFF)
        pick = rng.random(n)
        cols[1] = np.where(pick < 0.4, near, np.where(pick < 0.6, np.uint64(0), cols[1]))
        cols[0] = np.where(rng.random(n) < 0.2, np.uint64(0), cols[0])
    elif g == "smallint":
        for i, k in enumerate(kinds):
            v = rng.integers(0, 1000, n)
            cols[i] = (v.astype(np.float32).view(np.uint32).astype(np.uint64) if k == "f32" else
                       v.astype(np.float64).view(np.uint64) if k == "f64" else
                       v.astype(np.uint64))


def _fp8_edges() -> np.ndarray:
    """f32 bit patterns around the values of E4M3 and E5M2: every finite code of both (both
    signs), the midpoint of each pair of neighbours (a tie: to even) and its f32 neighbours,
    the midpoints past the largest value (448 | 464, 57344 | 61440: where .satfinite clamps)
    and below the smallest subnormal (a tie with zero), then f32 subnormals, powers of two
    from 2^-30 to 2^20, the largest f32, infinities and NaNs with payloads."""
    values: list[float] = []
    midpoints: list[float] = []
    for e in (4, 5):
        m, bias = 7 - e, (1 << (e - 1)) - 1
        top = 0x7E if e == 4 else 0x7B
        codes = [(c & ((1 << m) - 1)) * 2.0 ** (1 - bias - m) if c >> m == 0 else
                 ((1 << m) + (c & ((1 << m) - 1))) * 2.0 ** ((c >> m) - bias - m)
                 for c in range(top + 1)]
        ulp_top = 2.0 ** ((top >> m) - bias - m)
        codes.append(codes[-1] + ulp_top)  # the next value E4M3/E5M2 would have
        codes.append(codes[-1] + ulp_top)
        values += codes[: top + 1]
        midpoints += [(x + y) / 2 for x, y in itertools.pairwise(codes)]
    bits = np.array(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    ties = np.array(midpoints, dtype=np.float32).view(np.uint32).astype(np.uint64)
    near = np.concatenate([bits, ties, ties + np.uint64(1), ties - np.uint64(1)])
    special = np.array([0x00000001, 0x00400000, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000,
                        0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0x7FA00000]
                       + [(127 + k) << 23 for k in range(-30, 21)], dtype=np.uint64)
    out = np.concatenate([near, special])
    return np.unique(np.concatenate([out, out | np.uint64(0x80000000)]))


# -- f16/bf16 arithmetic and directed rounding: inputs --------------------------------------
F16_EDGES = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7D00, 0x0001, 0x8001,
             0x03FF, 0x83FF, 0x0400, 0x8400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x3800, 0x3E00,
             0x4000, 0x3C01, 0x3BFF, 0x1400, 0x5BFF, 0x0200, 0x3555, 0x4248, 0xC248, 0x7800]
BF16_EDGES = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7FA0, 0x0001, 0x8001,
              0x007F, 0x807F, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x3F00, 0x3FC0,
              0x4000, 0x3F81, 0x3F7F, 0x3B80, 0x5F7F, 0x0040, 0x3EAB, 0x4049, 0xC049, 0x7F00]
_HALF = {"half16": (11, 15), "bf16": (8, 127)}  # precision and exponent bias of each format


def _half_values(g: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Random 16-bit floats: a third raw bit patterns (every class), the rest within 2^+-6 of
    1, so that sums round, tie and cancel."""
    p, bias = _HALF[g]
    raw = rng.integers(0, 2 ** 16, n, dtype=np.uint64)
    e = rng.integers(bias - 6, bias + 7, n, dtype=np.uint64)
    m = rng.integers(0, 2 ** (p - 1), n, dtype=np.uint64)
    s = rng.integers(0, 2, n, dtype=np.uint64)
    nice = (s << np.uint64(15)) | (e << np.uint64(p - 1)) | m
    return np.where(rng.random(n) < 1 / 3, raw, nice)


def _half_to_f64(g: str, bits: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if g == "bf16":
            return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)


def _fma_hard(g: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """(a, b, c) with a*b exactly halfway between two 16-bit floats and c tiny: rounding
    a*b + c to f32 (or f64) first and then to 16 bits would round the tie, not the sum."""
    p, _ = _HALF[g]
    a = _half_values(g, 64 * n, rng) & np.uint64(0x7FFF)
    b = _half_values(g, 64 * n, rng) & np.uint64(0x7FFF)
    with np.errstate(all="ignore"):
        prod = _half_to_f64(g, a) * _half_to_f64(g, b)  # exact: at most 22 bits
        m, _e = np.frexp(prod)
        scaled = m * 2.0 ** (p + 1)
        tie = np.isfinite(prod) & (prod > 2.0 ** -10) & (prod < 2.0 ** 10) & (
            scaled == np.floor(scaled)) & (np.fmod(scaled, 2) == 1)
    a, b = a[tie][:n], b[tie][:n]
    k = len(a)
    tiny = rng.choice(np.array([0x0001, 0x0002, 0x0003, 0x0010, 0x0100, 0x0200], np.uint64), k)
    c = tiny | (rng.integers(0, 2, k, dtype=np.uint64) << np.uint64(15))
    signs = rng.integers(0, 2, k, dtype=np.uint64) << np.uint64(15)
    return [a | signs, b, c ^ signs]


def _half_inputs(c: Case, rng: np.random.Generator) -> list[np.ndarray]:
    """Edge values crossed (binary ops) plus random values; fma adds the ties of _fma_hard.
    A u32 input (f16x2, bf16x2) packs two independent lanes."""
    g, arity = c.gen, len(c.inputs)
    n = int(c.extra.get("n_random", 2048))  # type: ignore[call-overload]
    edges = np.array(F16_EDGES if g == "half16" else BF16_EDGES, dtype=np.uint64)
    grid = _edge_grid(list(edges), arity, rng) if arity <= 2 else [
        rng.choice(edges, 1024) for _ in range(arity)]
    lanes = [np.concatenate([e, _half_values(g, n, rng)]) for e in grid]
    if arity == 3:
        lanes = [np.concatenate([x, h]) for x, h in zip(lanes, _fma_hard(g, 512, rng),
                                                       strict=True)]
    if c.inputs[0] == "u32":
        lanes = [x | (rng.permutation(x) << np.uint64(16)) for x in lanes]
    return lanes


def _float_make(kind: str, sign: np.ndarray, exp: np.ndarray, mant: np.ndarray) -> np.ndarray:
    """Bit patterns of normal floats sign * 1.mant * 2^exp (exp clamped to the normal range)."""
    p, bias = (24, 127) if kind == "f32" else (53, 1023)
    e = np.clip(exp + bias, 1, 2 * bias).astype(np.uint64)
    w = 32 if kind == "f32" else 64
    return (sign.astype(np.uint64) << np.uint64(w - 1)) | (e << np.uint64(p - 1)) | mant


def _rounding_inputs(c: Case, rng: np.random.Generator) -> list[np.ndarray]:
    """Inputs of the directed-rounding cases: the edge grid, random values, and values that
    make results round in interesting ways: close exponents (ties, cancellation, exact x + -x),
    products and quotients at and below the subnormal threshold, results at overflow, exact
    and near-exact square roots, fma with c cancelling a*b."""
    kind, arity = c.inputs[0], len(c.inputs)
    p, bias = (24, 127) if kind == "f32" else (53, 1023)
    emin, emax = 1 - bias, bias
    n = 512
    edges = F32_EDGES if kind == "f32" else F64_EDGES
    cols = _edge_grid(edges, arity, rng) if arity <= 2 else [
        rng.choice(np.array(edges, dtype=np.uint64), 1024) for _ in range(arity)]
    cols = [np.concatenate([x, _float_bits(kind, 2048, rng)]) for x in cols]

    def mant(k: int) -> np.ndarray:
        return rng.integers(0, 2 ** (p - 1), k, dtype=np.uint64)

    def sign(k: int) -> np.ndarray:
        return rng.integers(0, 2, k, dtype=np.uint64)

    groups: list[list[np.ndarray]] = []
    ea = rng.integers(-10, 11, n)
    if arity == 1:  # sqrt, rcp: exact squares, subnormals, huge
        half = rng.integers(0, 2 ** (p // 2), n, dtype=np.uint64) << np.uint64(p - 1 - p // 2)
        v = _float_make(kind, np.zeros(n), ea * 2, np.zeros(n, np.uint64)).view(
            np.float32 if kind == "f32" else np.float64)
        hv = _float_make(kind, np.zeros(n), np.zeros(n, np.int64), half).view(v.dtype)
        squares = (v * hv * hv).view(np.uint32 if kind == "f32" else np.uint64)
        sub = rng.integers(1, 2 ** (p - 1), n, dtype=np.uint64)
        big = _float_make(kind, np.zeros(n), rng.integers(emax - 4, emax + 1, n), mant(n))
        for x in (squares.astype(np.uint64), sub, big):
            groups.append([x])
    else:
        close = [_float_make(kind, sign(n), ea, mant(n)),
                 _float_make(kind, sign(n), ea + rng.integers(-p - 3, p + 4, n), mant(n))]
        a = _float_make(kind, sign(n), ea, mant(n))
        negs = [a, (a ^ (np.uint64(1) << np.uint64(31 if kind == "f32" else 63)))
                + rng.integers(0, 2, n, dtype=np.uint64)]
        e1 = rng.integers(emin // 2 - 20, -emin // 2 + 20, n)
        k = rng.integers(-2, p + 3, n)
        under_mul = [_float_make(kind, sign(n), e1, mant(n)),
                     _float_make(kind, sign(n), emin - k - e1, mant(n))]
        under_div = [_float_make(kind, sign(n), e1, mant(n)),
                     _float_make(kind, sign(n), e1 - emin + k, mant(n))]
        j = rng.integers(-1, 2, n)
        over_mul = [_float_make(kind, sign(n), e1, mant(n)),
                    _float_make(kind, sign(n), emax + j - e1, mant(n))]
        over_add = [_float_make(kind, np.zeros(n), np.full(n, emax), mant(n)),
                    _float_make(kind, np.zeros(n), emax - rng.integers(0, p + 2, n), mant(n))]
        groups = [close, negs, under_mul, under_div, over_mul, over_add]
        if arity == 3:
            f = np.float32 if kind == "f32" else np.float64
            for grp in groups:
                x, y = grp[0].view(f) if kind == "f64" else grp[0].astype(np.uint32).view(f), (
                    grp[1].view(f) if kind == "f64" else grp[1].astype(np.uint32).view(f))
                with np.errstate(all="ignore"):
                    prod = -(x.astype(np.float64) * y.astype(np.float64)).astype(f)
                bits = prod.view(np.uint32 if kind == "f32" else np.uint64).astype(np.uint64)
                grp.append(bits + rng.integers(0, 3, n, dtype=np.uint64) - np.uint64(1))
    return [np.concatenate([col, *(grp[i] for grp in groups)]) for i, col in enumerate(cols)]


def _seed(name: str) -> int:
    h = 2166136261
    for ch in name.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


def output_dtype(c: Case) -> type:
    return KINDS[c.output][1]


def compare(c: Case, got: np.ndarray, want: np.ndarray) -> tuple[str, int]:
    """('pass' | 'within-ulp' | 'mismatch', number of differing elements). Float NaNs compare
    equal whatever their payload (NVIDIA returns its canonical NaN; payloads are not part of
    what PTX specifies for arithmetic)."""
    if c.output in ("f32", "f64"):
        itype = np.uint32 if c.output == "f32" else np.uint64
        gb, wb = got.view(itype), want.view(itype)
        both_nan = np.isnan(got) & np.isnan(want)
        differ = (gb != wb) & ~both_nan
        if not differ.any():
            return "pass", 0
        tol = c.tolerance
        if tol is None:
            return "mismatch", int(differ.sum())
        g, w = got[differ].astype(np.float64), want[differ].astype(np.float64)
        ulp = np.spacing(np.abs(want[differ])).astype(np.float64)
        ok = (np.abs(g - w) <= tol.abs) | (np.abs(g - w) <= (tol.ulp + 1) * ulp)
        ok |= (g == w)  # +0 / -0
        return ("within-ulp" if ok.all() else "mismatch"), int((~ok).sum())
    tol = c.tolerance
    if tol is not None and tol.half:
        return _compare_half(tol, got, want)
    differ = got != want
    return ("pass" if not differ.any() else "mismatch"), int(differ.sum())


def _half_value(fmt: str, bits: np.ndarray) -> np.ndarray:
    """16-bit float bit patterns (uint64) as float64 values."""
    return _half_to_f64("bf16" if fmt == "bf16" else "half16", bits)


def _compare_half(tol: Tolerance, got: np.ndarray, want: np.ndarray) -> tuple[str, int]:
    """compare() for an .approx case with 16-bit float results (two lanes in a u32): a lane
    within (tol.ulp + 1) units in the last place of the golden lane passes; NaNs must agree
    bit for bit (NVIDIA's canonical 0x7fff), infinities and signs exactly."""
    lanes = 2 if got.dtype == np.uint32 else 1
    g = got.astype(np.uint64)
    w = want.astype(np.uint64)
    bad = np.zeros(len(got), dtype=bool)
    differ_any = np.zeros(len(got), dtype=bool)
    exp_mask = np.uint64(0x7F80 if tol.half == "bf16" else 0x7C00)
    for k in range(lanes):
        gl = (g >> np.uint64(16 * k)) & np.uint64(0xFFFF)
        wl = (w >> np.uint64(16 * k)) & np.uint64(0xFFFF)
        differ = gl != wl
        differ_any |= differ
        mag = wl & np.uint64(0x7FFF)
        special = (mag & exp_mask) == exp_mask  # NaN or infinity: exact
        with np.errstate(all="ignore"):
            gv, wv = _half_value(tol.half, gl), _half_value(tol.half, wl)
            ulp = _half_value(tol.half, np.minimum(mag + np.uint64(1), exp_mask)) - \
                _half_value(tol.half, mag)
            near = np.abs(gv - wv) <= (tol.ulp + 1) * ulp
        bad |= differ & (special | ~near | ((gl ^ wl) & np.uint64(0x8000) != 0) & (gv != wv))
    if not differ_any.any():
        return "pass", 0
    return ("within-ulp" if not bad.any() else "mismatch"), int(bad.sum())


def write_kernels() -> None:
    KERNELS.mkdir(exist_ok=True)
    for c in CASES:
        (KERNELS / f"{c.name}.ptx").write_text(ptx(c))


if __name__ == "__main__":
    write_kernels()
    print(f"wrote {len(CASES)} kernels to {KERNELS}")
