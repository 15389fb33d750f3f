"""bf16 conversions the lowering rounds itself (cvt.{rn,rz,rm,rp}.bf16 from f64 and from
integers, cvt.rn.bf16.f16), run as SPIR-V on the CPU and checked bit for bit against an exact
reference. On SPIR-V no `bfloat` may reach LLVM's SPIR-V backend (it needs SPV_KHR_bfloat16,
which Intel's OpenCL CPU runtime lacks): these conversions were `unsupported` (f64, directed
roundings of integers) or failed in llc (the others)."""

from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest
from ptx import spec
from support.fidelity import run_case

MAX_BF16 = Fraction(2**8 - 1, 2**7) * 2**127


def _bf16_bits(x: Fraction | float, mode: str) -> int:
    """x rounded once to bf16 with mode rn/rz/rm/rp, as bits; NaN 0x7fff."""
    if isinstance(x, float):
        if x != x:
            return 0x7FFF
        if x in (float("inf"), float("-inf")):
            return 0x7F80 | (0x8000 if x < 0 else 0)
        sign = 0x8000 if np.signbit(x) else 0
        x = Fraction(x)
    else:
        sign = 0x8000 if x < 0 else 0
    a = abs(x)
    if a == 0:
        return sign
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (max(e, -126) - 7)
    q = a / ulp
    lo = q.numerator // q.denominator
    rem = q - lo
    negative = sign != 0
    up = {"rn": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1),
          "rz": False, "rm": negative and rem > 0, "rp": not negative and rem > 0}[mode]
    value = (lo + up) * ulp
    if value > MAX_BF16:
        return sign | (0x7F80 if up or mode == "rn" else 0x7F7F)
    bits = int(np.array([float(value)], dtype=np.float32).view(np.uint32)[0]) >> 16
    return sign | bits


def _f64_inputs(rng: np.random.Generator) -> np.ndarray:
    edges = [0.0, -0.0, 1.0, 1.0 + 2.0**-8, 1.0 + 2.0**-8 + 2.0**-40, 1.0 + 3 * 2.0**-8,
             1.0 + 2.0**-8 - 2.0**-50, 3.3895313892515355e38, 3.39e38, 3.4e38, 1e300, -1e300,
             2.0**-133, 2.0**-134, 2.0**-134 * 1.0000001, 1e-300, np.inf, -np.inf, np.nan, -2.5]
    random = rng.standard_normal(512 - len(edges)) * 2.0 ** rng.integers(-140, 130, 512 - len(edges))
    return np.concatenate([np.array(edges), random]).astype(np.float64)


def _int_inputs(src: str, rng: np.random.Generator) -> np.ndarray:
    t = ("int" if src[0] == "s" else "uint") + src[1:]
    info = np.iinfo(np.dtype(t))
    edges = [0, 1, -1, 255, 256, 257, 16777217, 0x01018000, 0x01010000, 0x0101FFFF,
             info.max, info.min, info.max - 1, info.min + 1]
    edges = [v for v in edges if info.min <= v <= info.max]
    random = rng.integers(info.min, info.max, 512 - len(edges), dtype=np.dtype(t), endpoint=True)
    shift = rng.integers(0, info.bits - 1, 512 - len(edges)).astype(np.dtype(t))
    return np.concatenate([np.array(edges, dtype=t), random >> shift])


CONVERSIONS = [(mode, src) for mode in ("rn", "rz", "rm", "rp")
               for src in ("f64", "s32", "u32", "s64", "u64", "s16", "u16")]


@pytest.mark.parametrize("mode, src", CONVERSIONS)
def test_cvt_bf16_rounds_exactly(mode: str, src: str, device) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{mode}{src}".encode()))
    kind = {"s32": "u32", "s64": "u64", "s16": "u16"}.get(src, src)
    c = spec.Case(f"cvt_{mode}_bf16_{src}", "bf16 on SPIR-V",
                  f"cvt.{mode}.bf16.{src} %h0, %a0; cvt.u32.u16 %d, %h0;", (kind,), "u32")
    if src == "f64":
        values = _f64_inputs(rng)
        raw = values.view(np.uint64)
        want = [_bf16_bits(float(v), mode) for v in values]
    else:
        values = _int_inputs(src, rng)
        raw = values.astype({"u16": np.uint16, "u32": np.uint32, "u64": np.uint64}[kind])
        want = [_bf16_bits(Fraction(int(v)), mode) for v in values]
    got = run_case(device, c, [raw])
    np.testing.assert_array_equal(got, np.array(want, dtype=np.uint32),
                                  err_msg=f"cvt.{mode}.bf16.{src}")


def test_cvt_rn_bf16_f16(device) -> None:
    halves = np.arange(0, 1 << 16, 64, dtype=np.uint32).astype(np.uint16)
    c = spec.Case("cvt_rn_bf16_f16", "bf16 on SPIR-V",
                  "cvt.rn.bf16.f16 %h0, %a0; cvt.u32.u16 %d, %h0;", ("u16",), "u32")
    got = run_case(device, c, [halves])
    want = [_bf16_bits(float(v), "rn") for v in halves.view(np.float16)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.uint32))
