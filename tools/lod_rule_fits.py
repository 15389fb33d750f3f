"""Checks the LOD rule docs/textures.md gives for what zmlir still refuses,
anisotropic filtering, against an H200's answers (issue 19), and prints
how many lines it reads as the H200 does:

    python3 tools/lod_rule_fits.py

tools/aniso_footprint_probe.h200.txt.gz's `lod` lines (2704, for
maxAnisotropy 2 to 16): log2 of max(|det| / major, major / r), the fraction
sharpened to floor(c + s (f - c)). (The cube-map rule it modelled too is
mipmap.py's now; test_texture_lod.py runs tools/cube_grad_probe.cu.)

A model in numpy's f32, not what zmlir runs; a rule that reads every line
is one zmlir can implement (the docs say what it misses)."""

from __future__ import annotations

import collections
import gzip
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from zmlir.frontend.importer import mipmap

TOOLS = Path(__file__).resolve().parent
F = np.float32
MAX_STEPS = 6 * 256  # the probe's textures have 7 levels


def cut(x: np.float32, mask: int) -> np.float32:
    """`x` with its low mantissa bits cleared (mipmap.py's cut)."""
    bits = np.array([x], dtype=F).view(np.uint32)[0] & np.uint32(mask & 0xFFFFFFFF)
    return np.array([bits], dtype=np.uint32).view(F)[0]


def length(v: Sequence[np.float32], mask: int) -> np.float32:
    """mipmap.py's length of a 2D vector: max cut to `mask` + 11/32 min."""
    a, b = abs(F(v[0])), abs(F(v[1]))
    return F(cut(max(a, b), mask) + F(min(a, b) * F(mipmap._MINOR)))


def steps(x: np.float32) -> int:
    """256 log2 of `x` as an H200 takes it (mipmap.py's table)."""
    if x == 0:
        return -32512
    bits = int(np.array([F(x)], dtype=F).view(np.uint32)[0])
    return ((bits >> 23) - 127) * 256 + mipmap._LOG2_STEPS[(bits >> 15) & 0xFF]


def footprint(dx: Sequence[np.float32], dy: Sequence[np.float32]) -> np.float32:
    """mipmap.py's isotropic footprint length."""
    single = max(length(dx, mipmap._MANTISSA_9), length(dy, mipmap._MANTISSA_9))
    sums = [F(a + b) for a, b in zip(dx, dy, strict=True)]
    differences = [F(a - b) for a, b in zip(dx, dy, strict=True)]
    longer = max(length(sums, mipmap._MANTISSA_8), length(differences, mipmap._MANTISSA_8))
    return max(single, F(longer * F(mipmap._DIAGONAL)))


def clamp_steps(s: int) -> int:
    return min(max(s, 0), MAX_STEPS)


# -- anisotropic filtering ------------------------------------------------------------

# maxAnisotropy -> (256 log2 of the ratio it allows, s, c).
ANISOTROPY = {2: (256, 1.5, 126), 3: (256, 1.5, 126), 4: (512, 1.75, 126),
              5: (512, 1.75, 126), 6: (656, 1.75, 126), 8: (768, 2, 128),
              12: (912, 2, 128), 16: (1024, 2, 128)}


def aniso_lod(anisotropy: int, dx: Sequence[float], dy: Sequence[float]) -> int:
    ratio, s, c = ANISOTROPY[anisotropy]
    gx, gy = [F(v) for v in dx], [F(v) for v in dy]
    major = footprint(gx, gy)
    det = abs(F(F(gx[0] * gy[1]) - F(gx[1] * gy[0])))
    lod = max(steps(F(det / major)), steps(major) - ratio)
    if lod <= 0:
        return 0
    whole, fraction = divmod(lod, 256)
    return clamp_steps(256 * whole + min(max(math.floor(c + s * (fraction - c)), 0), 256))


def aniso_differences() -> collections.Counter[int]:
    """Ours minus the H200's LOD, in 1/256 steps, over the `lod` lines."""
    differences: collections.Counter[int] = collections.Counter()
    text = gzip.decompress((TOOLS / "aniso_footprint_probe.h200.txt.gz").read_bytes()).decode()
    for line in text.splitlines():
        if line.startswith("lod "):
            v = line.split()
            dx, dy = [float(v[6]), float(v[7])], [float(v[9]), float(v[10])]
            differences[aniso_lod(int(v[2]), dx, dy) - round(float(v[12]) * 2.56)] += 1
    return differences


def report(name: str, differences: collections.Counter[int]) -> None:
    total = sum(differences.values())
    print(f"{name}: {differences[0]} of {total} exact; ours - H200's, in 1/256 steps: "
          f"{dict(sorted(differences.items()))}")


if __name__ == "__main__":
    report("aniso", aniso_differences())
