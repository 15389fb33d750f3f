"""Texture and surface references and mipmapped arrays through our
libcuda.so.1 (runtime/cuda/texref.py, texture.py): tools/texref_probe.cu's
hand-written PTX names `.texref`/`.surfref` variables, its host binds them
with cuTexRef*/cuSurfRef*; tools/mipmap_probe.cu reads mipmapped textures by
LOD and gradient. Both print line for line what an H200 printed
(tools/*.h200.txt: nvcc -arch=sm_90, NVIDIA's driver 580.159.04)."""

from __future__ import annotations

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
    "grad_linear 5": "tex.grad's LOD from non-axis-aligned gradients: NVIDIA's length "
                     "approximation is not ours (tools/mipmap_gradient_probe.h200.txt)",
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
