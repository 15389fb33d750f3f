"""Texture and surface references and mipmapped arrays through our
libcuda.so.1 (runtime/cuda/texref.py, texture.py): tools/texref_probe.cu's
hand-written PTX names `.texref`/`.surfref` variables, its host binds them
with cuTexRef*/cuSurfRef*. Checked here: what follows from the rules exactly
(point sampling, integer reads, surface bits, the API's documented answers);
the probe's other lines (linear filtering, unset defaults) await an H200's."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import REPO, tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

PROBE = REPO / "tools" / "texref_probe.cu"


def expected_lines() -> list[str]:
    lines = [
        "api same_handle 1",
        "api GetTexRef_unused 0",  # declared, used by no kernel
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
    # A 4x4 mipmapped array of 3 levels (100 k + x + 10 y) bound to tex_mip,
    # max LOD clamp 2, at (0.3, 0.6) at LOD 0, 1, 2, 3.
    lines += ["mipref getmipmapped_same 1 clamp 0 2", "mipref 0 21 0 0 0", "mipref 1 110 0 0 0",
              "mipref 2 200 0 0 0", "mipref 3 200 0 0 0"]
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


MIPMAP_PROBE = REPO / "tools" / "mipmap_probe.cu"
# tools/mipmap_probe.cu's 8x8 float array of 4 levels, texel (x, y) of level
# k = 100 k + x + 10 y, read at (0.3, 0.6) normalized: each level's texel there.
AT_LEVEL = [42, 121, 210, 300]
LODS = [0, 0.4, 0.6, 1, 1.4, 2, 3, 7, -2, 0.5, 1.5, 2.25]
TIES = {0.5, 1.5}  # where NVIDIA's nearest level awaits an H200's answer


def as_printed(value: float) -> str:
    """`value` as a float, printed by the probe's %.9g."""
    return f"{struct.unpack('<f', struct.pack('<f', value))[0]:.9g}"


def nearest_level(lod: float, bias: float = 0, low: float = 0, high: float = 3) -> int:
    return int(max(min(lod + bias, high, 3), low, 0) + 0.5)


def mipmap_lines() -> list[str]:
    lines = ["query_mipmapped levels 4 width 8 height 8", "query_plain levels 1 width 8 height 8"]
    cases = {"level_point": {}, "level_bias1": {"bias": 1}, "level_clamp1_2": {"low": 1, "high": 2},
             "level_maxclamp0": {"high": 0}}
    for tag, settings in cases.items():
        for i, lod in enumerate(LODS):
            if lod + settings.get("bias", 0) not in TIES:
                level = nearest_level(lod, **settings)
                lines.append(f"{tag} {i} 0.300000012 0.600000024 {as_printed(lod)} -> "
                             f"{AT_LEVEL[level]} 0 0 0")
    # A linear mipmap filter at a whole LOD reads that level alone.
    lines += [f"level_linear {i} 0.300000012 0.600000024 {lod:g} -> "
              f"{AT_LEVEL[nearest_level(lod)]} 0 0 0"
              for i, lod in enumerate(LODS) if lod == int(lod)]
    # Gradients of 1, 2, 4, 8 and 0.5 texels: LOD 0, 1, 2, 3, -1 (level 0).
    grads = ["0.125 0 0 0.125", "0.25 0 0 0.125", "0.5 0 0 0.25", "0 0.125 1 0",
             "0.0625 0 0 0.0625"]
    for tag in ("grad_point", "grad_linear"):
        lines += [f"{tag} {i} 0.300000012 0.600000024 {g} -> {AT_LEVEL[[0, 1, 2, 3, 0][i]]} 0 0 0"
                  for i, g in enumerate(grads)]
    return [*lines, "done"]


def test_mipmapped_textures(tmp_path: Path, libdir: str) -> None:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    exe = tmp_path / "mipmap_probe"
    subprocess.run([tool("nvcc"), "-arch=sm_75", str(MIPMAP_PROBE), "-o", str(exe),
                    f"-L{libdir}", "-lcuda"], check=True, timeout=300)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "FAIL" not in result.stdout
    ours = result.stdout.splitlines()
    missing = [line for line in mipmap_lines() if line not in ours]
    assert missing == []


_AFTER_UNLOAD = textwrap.dedent("""
    import ctypes, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    ptx = b".version 7.0\\n.target sm_75\\n.address_size 64\\n.global .texref t;\\n" \\
          b".visible .entry k() { ret; }\\n\\0"
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    mod, ref = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(mod), ptx) == 0
    assert lib.cuModuleGetTexRef(ctypes.byref(ref), mod, b"t") == 0
    before = lib.cuTexRefSetFilterMode(ref, 1)
    assert lib.cuModuleUnload(mod) == 0
    print(before, lib.cuTexRefSetFilterMode(ref, 0))
""")


def test_a_reference_outlived_by_its_module_writes_nothing(libdir: str) -> None:
    # Its descriptor variable is gone with the module: the setter says so
    # (CUDA_ERROR_INVALID_HANDLE) instead of writing into freed memory.
    result = subprocess.run([sys.executable, "-c", _AFTER_UNLOAD, libdir], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["0", "400"]
