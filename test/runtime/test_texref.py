"""Texture and surface references and mipmapped arrays through our
libcuda.so.1 (runtime/cuda/texref.py, texture.py): tools/texref_probe.cu's
hand-written PTX names `.texref`/`.surfref` variables, its host binds them
with cuTexRef*/cuSurfRef*; tools/mipmap_probe.cu reads mipmapped textures by
LOD and gradient. Both print line for line what an H200 printed
(tools/*.h200.txt: nvcc -arch=sm_90, NVIDIA's driver 580.159.04).
tools/samplerref_probe.cu (independent texture mode) and
tools/layered_mipmap_probe.cu (layered and cube-map mipmaps) have no H200
output yet: ours is checked against the documented rules."""

from __future__ import annotations

import math
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import REPO, tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

PROBE = REPO / "tools" / "texref_probe.cu"


TEXREF_GOLDEN = REPO / "tools" / "texref_probe.h200.txt"
MIPMAP_PROBE = REPO / "tools" / "mipmap_probe.cu"
MIPMAP_GOLDEN = REPO / "tools" / "mipmap_probe.h200.txt"
# Lines (by their first two words) where ours is not NVIDIA's on purpose or
# not yet (docs/textures.md, docs/driver-differences.md). Each must still
# differ: a fix shows here and its entry goes.
KNOWN_DIFFERENT = {
    "api GetFunction_query": "NVIDIA's driver (580.159.04) loads a kernel using "
                             "txq.num_mipmap_levels but cuModuleGetFunction answers NOT_FOUND; "
                             "ours runs it",
}
# Printed only where the query kernel loads, so only by ours.
OURS_ONLY = ["query_mipmapped levels 4 width 8 height 8", "query_plain levels 1 width 8 height 8"]


def run_probe(probe: Path, tmp_path: Path, libdir: str) -> list[str]:
    exe = tmp_path / probe.stem
    subprocess.run([tool("nvcc"), "-arch=sm_75", "-Wno-deprecated-declarations", str(probe),
                    "-o", str(exe), f"-L{libdir}", "-lcuda"], check=True, timeout=300)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout.splitlines()


def differences(ours: list[str], golden: list[str]) -> set[str]:
    """The keys (first two words) of the lines where ours and NVIDIA's differ."""
    assert len(ours) == len(golden), (ours, golden)
    keys = [" ".join(line.split()[:2]) for line in golden]
    assert [" ".join(line.split()[:2]) for line in ours] == keys
    return {key for key, a, b in zip(keys, ours, golden, strict=True) if a != b}


@pytest.mark.parametrize("probe, golden", [(PROBE, TEXREF_GOLDEN),
                                           (MIPMAP_PROBE, MIPMAP_GOLDEN)],
                         ids=["texref", "mipmap"])
def test_probe_matches_the_h200(probe: Path, golden: Path, tmp_path: Path, libdir: str) -> None:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    ours = run_probe(probe, tmp_path, libdir)
    expected = golden.read_text().splitlines()
    if probe == MIPMAP_PROBE:
        assert [line for line in ours if line in OURS_ONLY] == OURS_ONLY
        ours = [line for line in ours if line not in OURS_ONLY]
    known = {key for key in KNOWN_DIFFERENT if any(line.startswith(key + " ")
                                                   for line in expected)}
    assert differences(ours, expected) == known


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


GRADIENT_PROBE = REPO / "tools" / "mipmap_gradient_probe.cu"
GRADIENT_GOLDEN = REPO / "tools" / "mipmap_gradient_probe.h200.txt"


def test_gradient_lod_against_the_h200(tmp_path: Path, libdir: str) -> None:
    """tex.grad's LOD from 56 pairs of gradients, isotropic (maxAnisotropy 0
    and 1, which reads as 0), both mipmap filters: each line NVIDIA's. (The
    probe then asks for maxAnisotropy 4, which ours refuses: its run ends
    there.)"""
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    exe = tmp_path / "gradient_probe"
    subprocess.run([tool("nvcc"), "-arch=sm_75", str(GRADIENT_PROBE), "-o", str(exe),
                    f"-L{libdir}", "-lcuda"], check=True, timeout=300)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=300)
    ours = result.stdout.splitlines()
    assert ours[-1].startswith("FAIL cuTexObjectCreate") and " = 801 " in ours[-1]
    ours = ours[:-1]
    golden = GRADIENT_GOLDEN.read_text().splitlines()[:len(ours)]
    assert len(ours) == 19 + 4 * 56  # the level counts, then aniso 0 and 1
    assert ours == golden


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _printed(x: float) -> float:
    """`x` as the probes print it (%.9g), read back."""
    return float(f"{x:.9g}")


# -- layered and cube-map mipmapped arrays (tools/layered_mipmap_probe.cu) ---------
# Texel (x, y) of layer l at level k holds 1000 l + 100 k + x + 10 y; every
# texture filters by point within a level and clamps, with normalized
# coordinates.

LAYERED_PROBE = REPO / "tools" / "layered_mipmap_probe.cu"
# (levels, level 0's width, layers) of each probe array; a cube map's layers
# are its faces.
_LAYERED_ARRAYS = {"a1d": (5, 16, 2), "a2d": (4, 8, 3), "cube": (4, 8, 6), "acube": (3, 4, 12)}


def _index(coord: float, n: int) -> int:
    """Point filtering's texel along an axis of `n` texels, clamped: the
    coordinate truncated to 21 fraction bits, scaled (docs/textures.md)."""
    return min(max(math.floor(math.floor(coord * 2**21) / 2**21 * n), 0), n - 1)


def _cube_face(x: float, y: float, z: float) -> tuple[int, float, float]:
    """The face and its normalized coordinates (docs/textures.md: ties go to z, then y)."""
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax > ay and ax > az:
        face, s, t, m = (0, -z, -y, ax) if x >= 0 else (1, z, -y, ax)
    elif ay > az:
        face, s, t, m = (2, x, z, ay) if y >= 0 else (3, x, -z, ay)
    else:
        face, s, t, m = (4, x, -y, az) if z >= 0 else (5, -x, -y, az)
    return face, _f32((_f32(s / m) + 1) * 0.5), _f32((_f32(t / m) + 1) * 0.5)


def _layered_expected(kind: str, params: list[float], mip_linear: bool) -> float:
    """What a `level_*` line's lookup reads by the rules (point within a
    level; the nearest level, or two blended by the LOD's fraction
    truncated to 1/256)."""
    geometry = kind.split("_")[1]
    levels, width, layers = _LAYERED_ARRAYS[geometry]
    if geometry in ("cube", "acube"):
        cube, x, y, z, lod = params
        face, u, v = _cube_face(x, y, z)
        cubes = layers // 6
        layer = (min(int(cube), cubes - 1) * 6 if geometry == "acube" else 0) + face
    elif geometry == "a1d":
        layer, u, lod = params
        v = 0.0
    else:
        layer, u, v, lod = params
    layer = min(int(layer), layers - 1)
    lod = min(max(lod, 0.0), levels - 1)

    def texel(k: int) -> float:
        n = max(width >> k, 1)
        y = _index(v, n) if geometry != "a1d" else 0
        return 1000 * layer + 100 * k + _index(u, n) + 10 * y

    if not mip_linear:
        return texel(math.floor(lod + 0.5))
    first = math.floor(lod)
    weight = math.floor((lod - first) * 256) / 256
    a, b = texel(first), texel(min(first + 1, levels - 1))
    return _f32(a + weight * (b - a))


def test_layered_and_cube_mipmaps(tmp_path: Path, libdir: str) -> None:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    printed = run_probe(LAYERED_PROBE, tmp_path, libdir)
    # The driver's answers ("api ..."): every load and lookup works here.
    assert [a for a in printed if a.startswith("api ") and not a.endswith((" 0", " 0 link 0"))] \
        == ["api GetLevel_acube_3 1"]  # only 3 levels: INVALID_VALUE
    lines = [a for a in printed if not a.startswith("api ")]
    assert lines[0] == f"acube_level2 1 1 12 flags {1 | 4}"
    assert lines[-1] == "done"
    # txq's width, height and depth of each kind of texture are an H200's: a
    # layered 1D texture's layers are its height, a cube map's depth 0, a
    # layered one's its cubes. Its driver finds no kernel asking for
    # array_size or num_mipmap_levels ("-"); ours answers them.
    queries = [a for a in lines if a.startswith("query_")]
    extent = [a for a in queries if a.split()[1] in ("width", "height", "depth")]
    h200 = (REPO / "tools" / "layered_mipmap_probe.h200.txt").read_text().splitlines()
    assert extent == [a for a in h200 if a.startswith("query_") and a.split()[1] in
                      ("width", "height", "depth")]
    assert len(extent) == 30 and len(queries) == 50
    # tex.grad on a cube map reads the H200's LOD on each of the 12 lines
    # (docs/textures.md's rule; tools/cube_grad_probe.cu checks it finely).
    grad_cube = [a for a in lines if a.startswith("grad_cube")]
    assert grad_cube == [a for a in h200 if a.startswith("grad_cube")]
    assert len(grad_cube) == 13 and grad_cube[0] == "grad_cube_usable 1"
    checked = 0
    for line in lines[1:-1]:
        if line in queries or line in grad_cube:
            continue
        head, result = line.split(" -> ")
        kind, _, *params = head.split()
        values = [float(v) for v in result.split()]
        assert values[1:] == [0.0, 0.0, 0.0], line
        if kind == "grad_a2d":
            # Axis-aligned gradients of power-of-two texel lengths: the LOD
            # is exact, log2 of the length in level-0 texels.
            layer, u, v, dudx, dvdx, dudy, dvdy = (float(p) for p in params)
            lod = math.log2(max(math.hypot(dudx, dvdx), math.hypot(dudy, dvdy)) * 8)
            expected = _layered_expected("level_a2d", [layer, u, v, lod], False)
        else:
            expected = _layered_expected(kind, [_f32(float(p)) for p in params],
                                         kind.endswith("_mip_linear"))
        assert values[0] == _printed(expected), line
        checked += 1
    assert checked == 11 + 2 * 9 + 2 * 9 + 6 + 4


# -- independent texture mode (tools/samplerref_probe.cu) ----------------------------
# A 4x4 float texture, texel (x, y) = x + 10 y, read through samplers:
# (address modes, linear, force_unnormalized_coords). The reference's own
# linear filter and wrap modes must not show.

SAMPLERREF_PROBE = REPO / "tools" / "samplerref_probe.cu"
_WRAP, _CLAMP, _MIRROR, _BORDER = 0, 1, 2, 3
_SAMPLERS = {
    "s_point": ((_CLAMP, _CLAMP), False, False), "s_linear": ((_CLAMP, _CLAMP), True, False),
    "s_wrap": ((_WRAP, _WRAP), False, False), "s_mirror": ((_MIRROR, _MIRROR), False, False),
    "s_border": ((_BORDER, _BORDER), True, False), "s_mixed": ((_WRAP, _BORDER), False, False),
    "s_unnorm": ((_CLAMP, _CLAMP), True, True), "s_default": ((_CLAMP, _CLAMP), False, False),
}
# txq's answers: PTX's enums (filter nearest 0, linear 1; address wrap 0,
# mirror 1, clamp_ogl 2, clamp_to_edge 3, clamp_to_border 4).
_TXQ_MODES = {_WRAP: 0, _MIRROR: 1, _CLAMP: 3, _BORDER: 4}


def _axis(coord: float, n: int, mode: int, normalized: bool, linear: bool,
          gather: bool) -> tuple[list[tuple[int, bool]], int]:
    """The texel indices along an axis (with whether each is in range) and
    the second's weight in 1/256 (docs/textures.md's rules)."""
    u = math.floor(coord * 2**21) / 2**21 * n if normalized else coord
    if mode in (_WRAP, _MIRROR) and not normalized:
        mode = _CLAMP
    if linear and mode == _CLAMP and not gather:
        u = min(max(u, 0.5), n - 0.5)
    t = u - 0.5 if linear else u
    first = math.floor(t)
    weight = math.floor((t - first) * 256 + 0.5)
    indices = []
    for i in (first, first + 1):
        if mode == _WRAP:
            indices.append((i % n, True))
        elif mode == _MIRROR:
            p = i % (2 * n)
            indices.append((p if p < n else 2 * n - 1 - p, True))
        else:
            clamped = min(max(i, 0), n - 1)
            indices.append((clamped, mode != _BORDER or clamped == i))
    return indices, weight


def _sampled(kind: str, sampler: str, normalized: bool, u: float, v: float) -> list[float]:
    """What `tex` (the four channels) or `tld4.r` (the footprint) reads."""
    modes, linear, unnormalized = _SAMPLERS[sampler]
    normalized = normalized and not unnormalized
    gather = kind == "tld4"
    axes = [_axis(c, 4, m, normalized, linear or gather, gather)
            for c, m in zip((u, v), modes, strict=True)]

    def texel(bits: int) -> float:
        (x, x_in), (y, y_in) = axes[0][0][bits & 1], axes[1][0][bits >> 1]
        return x + 10 * y if x_in and y_in else 0.0

    if gather:
        return [texel(b) for b in (2, 3, 1, 0)]
    if not linear:
        return [texel(0), 0.0, 0.0, 0.0]
    total = 0.0
    for bits in range(4):
        wx, wy = axes[0][1], axes[1][1]
        product = (wx if bits & 1 else 256 - wx) * (wy if bits >> 1 else 256 - wy) / 256
        # Ties round up where the corner's bits agree, down where they differ.
        weight = math.floor(product + 0.5) if bits in (0, 3) else math.ceil(product - 0.5)
        total += weight * texel(bits)
    return [_f32(total / 256), 0.0, 0.0, 0.0]


def test_samplerref_independent_mode(tmp_path: Path, libdir: str) -> None:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    printed = run_probe(SAMPLERREF_PROBE, tmp_path, libdir)
    # Ours loads every module (NVIDIA's driver 580 refuses those with a
    # .samplerref: tools/samplerref_probe.h200.txt) but the one whose sampler
    # asks for clamp_ogl; ptxas's cubins are not ours to load.
    loads = [a for a in printed if a.startswith("api ") and "ptxas_cubin" not in a]
    assert [a for a in loads if not a.endswith(" 0")] == ["api ModuleLoadDataEx_ogl 218",
                                                          "api link_ogl 218"]
    assert "api ModuleLoadDataEx_samplers 0" in loads
    lines = [a for a in printed if not a.startswith(("api ", "step_", "jit log"))]
    assert lines[-1] == "done"
    lookups = queries = 0
    for line in lines[:-1]:
        words = line.split()
        kind, sampler_tag = words[0].split("_", 1)
        sampler, tag = sampler_tag.rsplit("_", 1)
        if kind == "txq":
            modes, linear, unnormalized = _SAMPLERS[sampler]
            assert words[1:] == [
                "filter", str(int(linear)), "addr0", str(_TXQ_MODES[modes[0]]),
                "addr1", str(_TXQ_MODES[modes[1]]), "force_unnormalized", str(int(unnormalized)),
                "tex_width", "4", "tex_normalized", str(int(tag == "norm"))], line
            queries += 1
            continue
        u, v = float(words[2]), float(words[3])
        got = [float(w) for w in words[5:]]
        expected = _sampled(kind, sampler, tag == "norm", _f32(u), _f32(v))
        assert got == [_printed(x) for x in expected], line
        lookups += 1
    # 8 samplers, 2 bindings: 12 coordinates each for tex and tld4, one query.
    assert (lookups, queries) == (2 * 8 * 2 * 12, 2 * 8)
