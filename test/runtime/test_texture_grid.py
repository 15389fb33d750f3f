"""tools/texture_grid.cu's fetches on the CPU backend equal an H200's, bit
for bit (tools/texture_grid.h200.txt.gz: NVIDIA's output; docs/textures.md)."""

from __future__ import annotations

import gzip
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from support import REPO, tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

GRID = REPO / "tools" / "texture_grid.cu"
GOLDEN = REPO / "tools" / "texture_grid.h200.txt.gz"
# Cases whose arithmetic is not yet NVIDIA's (docs/textures.md, "Fidelity"),
# with how many of their lines differ: a fix (or a regression) changes the
# count, so that the entry is updated or dropped.
KNOWN_DIFFERENT = {
    "char2-linear": (20, "signed 8-bit filtering: 21 channels one step off near a half step"),
    "half-linear": (2, "the filter's rounding to half: 0.6 and 0.8 ulp below the exact sum"),
}


def by_case(text: str) -> dict[str, list[str]]:
    cases: dict[str, list[str]] = defaultdict(list)
    for line in text.splitlines():
        cases[line.split()[0]].append(line)
    return cases


def zmlir_output(source: Path, tmp_path: Path) -> str:
    """What `source` (one of tools/'s probes), built by nvcc, prints under
    `zmlir run`."""
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    exe = tmp_path / source.stem
    subprocess.run([tool("nvcc"), "-arch=sm_75", str(source), "-o", str(exe)], check=True,
                   timeout=300)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_texture_grid_matches_the_h200(tmp_path: Path) -> None:
    ours = by_case(zmlir_output(GRID, tmp_path))
    golden = by_case(gzip.decompress(GOLDEN.read_bytes()).decode())
    assert ours.keys() == golden.keys()
    differing = {case: sum(a != b for a, b in zip(ours[case], lines, strict=False)) for case, lines in
                 golden.items() if ours[case] != lines}
    assert differing == {case: n for case, (n, _) in KNOWN_DIFFERENT.items()}


def test_3d_linear_weights_match_the_h200(tmp_path: Path) -> None:
    """Every corner weight of 5,832 3D linear fetches (tools/texture_weights3d.cu)
    equals an H200's; the model before 2026-12-04 (one rounded product per
    corner) differed in 3,129 of them."""
    ours = zmlir_output(REPO / "tools" / "texture_weights3d.cu", tmp_path)
    golden = gzip.decompress((REPO / "tools" / "texture_weights3d.h200.txt.gz").read_bytes())
    differing = [(line, theirs) for line, theirs in
                 zip(ours.splitlines(), golden.decode().splitlines(), strict=True) if line != theirs]
    assert differing == []


def test_1d_linear_fetches_match_the_h200(tmp_path: Path) -> None:
    """1D arrays filter as 2D ones of height 1 under the y address mode, and
    mipmapped textures read normalized coordinates, as an H200 does
    (tools/texture_1d.cu)."""
    ours = zmlir_output(REPO / "tools" / "texture_1d.cu", tmp_path)
    assert ours == (REPO / "tools" / "texture_1d.h200.txt").read_text()
