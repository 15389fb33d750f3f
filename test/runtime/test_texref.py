"""Texture and surface references and mipmapped arrays through our
libcuda.so.1 (runtime/cuda/texref.py, texture.py): tools/texref_probe.cu's
hand-written PTX names `.texref`/`.surfref` variables, its host binds them
with cuTexRef*/cuSurfRef*. Checked here: what follows from the rules exactly
(point sampling, integer reads, surface bits, the API's documented answers);
the probe's other lines (linear filtering, unset defaults) await an H200's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO, tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

PROBE = REPO / "tools" / "texref_probe.cu"


def expected_lines() -> list[str]:
    lines = [
        "api same_handle 1",
        "api GetTexRef_missing 500",  # CUDA_ERROR_NOT_FOUND
        "api GetTexRef_of_surfref 500",
        "api GetSurfRef_of_texref 500",
        "api GetGlobal_of_texref 500",  # a reference is no global variable
        "api SetArray_flags0 1",  # Flags must be CU_TRSA_OVERRIDE_FORMAT
        "arr getarray_same 1 format 32 1",
    ]
    # A 4x3 float array, texel (x, y) = x + 10 y; missing channels read 0.
    centres = [(x + 0.5, y + 0.5, x + 10 * y) for y in range(3) for x in range(4)]
    clamped = [(-3, 0.5, 0), (7.5, 2.5, 23), (2.5, -1, 2), (1.25, 9, 21)]
    for i, (u, v, r) in enumerate(centres + clamped):
        lines.append(f"arr_point_clamp {i} {u:g} {v:g} {r} 0 0 0")
    # Normalized, wrapped: 1.125 * 4 = 4.5 is texel 0; -0.125 * 4 texel 3.
    wrapped = [(1.125, 0.5, 10), (-0.125, 0.5, 13), (0.375, 0.5, 11), (0.625, 1.5, 12)]
    lines += [f"arr_point_wrap {i} {u:g} {v:g} {r} 0 0 0" for i, (u, v, r) in enumerate(wrapped)]
    lines.append("arr border 1.5 2.5 3.5 4.5")
    # Outside, the border colour's first channel only (a one-channel array).
    bordered = [(-0.125, 0.5, 1.5), (0.125, 0.5, 10), (0.875, 1.25, 1.5)]
    lines += [f"arr_point_border {i} {u:g} {v:g} {r:g} 0 0 0"
              for i, (u, v, r) in enumerate(bordered)]
    # Linear filtering exactly at a texel's centre is that texel.
    lines.append("arr_linear 0 0.375 0.5 11 0 0 0")
    # cuTexRefSetAddress: no alignment offset; ints read as ints.
    lines.append("lin offset 0 getaddress_same 1")
    lines += [f"lin {i} {i * i - 5} 0 0 0" for i in range(8)]
    lines += [f"pitch {x} {y} {3 * x + 50 * y} 0 0 0" for y in range(2) for x in range(5)]
    lines += ["api SurfRefSetArray_of_texture_array 1",  # no CUDA_ARRAY3D_SURFACE_LDST
              "surf getarray_same 1"]
    # surf_write stores x + 100 y + 7 at (x, y); surf_read reads (3 - x, y).
    lines += [f"surf {x} {y} {3 - x + 100 * y + 7} {x + 100 * y + 7}"
              for y in range(2) for x in range(4)]
    lines += ["query arr 4 3 lin 8 surf 4 2 pitch 5 2",
              "api TexRefCreate 0", "api TexRefDestroy 0", "api MipmappedArrayCreate 0"]
    extents = [(8, 4), (4, 2), (2, 1), (1, 1)]
    lines += [f"mip level {k} rc 0 {w} {h} 0 format 32 channels 1 same 1"
              for k, (w, h) in enumerate(extents)]
    lines += ["mip level 4 rc 1", "api MipmappedArrayCreate_too_many_levels 1",
              "api MipmappedArrayDestroy 0", "done"]
    return lines


def test_texture_references_and_mipmapped_arrays(tmp_path: Path, libdir: str) -> None:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    exe = tmp_path / "texref_probe"
    subprocess.run([tool("nvcc"), "-arch=sm_75", "-Wno-deprecated-declarations", str(PROBE),
                    "-o", str(exe), f"-L{libdir}", "-lcuda"], check=True, timeout=300)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    ours = result.stdout.splitlines()
    assert "FAIL" not in result.stdout
    missing = [line for line in expected_lines() if line not in ours]
    assert missing == []
