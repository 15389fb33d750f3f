"""Checks the LOD rules docs/textures.md gives for what zmlir still refuses,
tex.grad on cube maps and anisotropic filtering, against an H200's answers
(issue 19), and prints how many lines each reads as the H200 does:

    python3 tools/lod_rule_fits.py

- cube: tools/cube_grad_probe.h200.txt (2972 tex.grad.cube lookups on a
  64x64 cube map; 2.56 x each answer is the LOD in 1/256 steps). Finite
  differences of face coordinates, the cube unfolded over an edge when P +
  dP lies on a neighbouring face, fed to mipmap.py's 2D rule, without its
  dx +- dy term when either neighbour leaves P's face.
- aniso: tools/aniso_footprint_probe.h200.txt.gz's `lod` lines (2704, for
  maxAnisotropy 2 to 16): log2 of max(|det| / major, major / r), the
  fraction sharpened to floor(c + s (f - c)).

Both are models in numpy's f32, not what zmlir runs; a rule that reads
every line is one zmlir can implement (the docs say what each misses)."""

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
MAX_STEPS = 6 * 256  # both probes' textures have 7 levels


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


def footprint(dx: Sequence[np.float32], dy: Sequence[np.float32],
              diagonal: bool = True) -> np.float32:
    """mipmap.py's isotropic footprint length, with or without its dx +- dy term."""
    single = max(length(dx, mipmap._MANTISSA_9), length(dy, mipmap._MANTISSA_9))
    if not diagonal:
        return single
    sums = [F(a + b) for a, b in zip(dx, dy, strict=True)]
    differences = [F(a - b) for a, b in zip(dx, dy, strict=True)]
    longer = max(length(sums, mipmap._MANTISSA_8), length(differences, mipmap._MANTISSA_8))
    return max(single, F(longer * F(mipmap._DIAGONAL)))


def clamp_steps(s: int) -> int:
    return min(max(s, 0), MAX_STEPS)


# -- cube maps ------------------------------------------------------------------------


def major_axis(p: Sequence[np.float32]) -> tuple[int, int]:
    """The face of direction p: its major axis (ties to z, then y) and sign."""
    ax, ay, az = (abs(c) for c in p)
    m = 2 if az >= ax and az >= ay else 1 if ay >= ax else 0
    return m, 1 if p[m] >= 0 else -1


def sc_tc(r: Sequence[float], m: int, sign: int) -> tuple[float, float]:
    """The programming guide's sc, tc on face (m, sign) of a point whose
    major component is `sign` (already divided by |ma|)."""
    x, y, z = r
    if m == 0:
        return (-z if sign > 0 else z), -y
    if m == 1:
        return x, (z if sign > 0 else -z)
    return (x if sign > 0 else -x), -y


def unfolded(q: Sequence[np.float32], m: int, sign: int) -> list[float]:
    """q's position on the plane of face (m, sign), unfolded over the shared
    edge when q lies on a neighbouring face (the probe puts none on the
    opposite face)."""
    m2, sign2 = major_axis(q)
    r = [0.0, 0.0, 0.0]
    if m2 == m:
        for a in range(3):
            r[a] = float(F(q[a] * F(F(1) / abs(q[m]))))
    else:
        other = 3 - m - m2
        rcp = F(F(1) / abs(q[m2]))
        r[m2] = sign2 * (2 - float(F(F(sign * q[m]) * rcp)))
        r[other] = float(F(q[other] * rcp))
    r[m] = sign
    return r


def cube_gradient(p: Sequence[np.float32], d: Sequence[float], half_extent: float
                  ) -> tuple[list[np.float32], bool]:
    """A gradient in texels on p's face, and whether p + d leaves that face."""
    m, sign = major_axis(p)
    q = [F(a + F(b)) for a, b in zip(p, d, strict=True)]
    here, there = sc_tc(unfolded(p, m, sign), m, sign), sc_tc(unfolded(q, m, sign), m, sign)
    return ([F(F(F(b) - F(a)) * F(half_extent)) for a, b in zip(here, there, strict=True)],
            major_axis(q) != (m, sign))


def cube_lod(p: Sequence[float], dx: Sequence[float], dy: Sequence[float]) -> int:
    pf = [F(c) for c in p]
    gx, x_leaves = cube_gradient(pf, dx, 32.0)
    gy, y_leaves = cube_gradient(pf, dy, 32.0)
    return clamp_steps(steps(footprint(gx, gy, diagonal=not (x_leaves or y_leaves))))


def cube_differences() -> collections.Counter[int]:
    """Ours minus the H200's LOD, in 1/256 steps, over the cube probe's lines."""
    differences: collections.Counter[int] = collections.Counter()
    for line in (TOOLS / "cube_grad_probe.h200.txt").read_text().splitlines():
        if line.startswith("cube "):
            v = line.split()
            p, dx, dy = (list(map(float, v[k:k + 3])) for k in (2, 6, 10))
            differences[cube_lod(p, dx, dy) - round(float(v[14]) * 2.56)] += 1
    return differences


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
    report("cube", cube_differences())
    report("aniso", aniso_differences())
