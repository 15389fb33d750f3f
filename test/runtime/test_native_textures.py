"""NVIDIA's textures under the CUDA passthrough (ZMLIR_NATIVE_TEXTURES=1,
docs/textures.md; here over test/cuda/driver_api/fake_nvidia_driver.c):
arrays, texture and surface objects are NVIDIA's, their handles the
application's, the copies to and from arrays NVIDIA's, and kernels are
compiled with NVIDIA's texture instructions (nvptx:sm_90+native-textures).
Without the switch all of it stays ours: our descriptors, read in software."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

_SCRIPT = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    fake = ctypes.CDLL(sys.argv[2])
    fake.fake_texture_calls.restype = ctypes.c_ulonglong
    fake.fake_module_ptx.restype = ctypes.c_char_p
    fake.fake_is_array.argtypes = [ctypes.c_void_p]
    u64, size_t, vp = ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_void_p
    assert lib.cuInit(0) == 0
    ctx = vp()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0

    class ArrayDesc(ctypes.Structure):
        _fields_ = [("Width", size_t), ("Height", size_t), ("Format", ctypes.c_int),
                    ("NumChannels", ctypes.c_uint)]

    class Memcpy2D(ctypes.Structure):
        _fields_ = [(side + name, t) for side in ("src", "dst") for name, t in (
            ("XInBytes", size_t), ("Y", size_t), ("MemoryType", ctypes.c_int), ("Host", vp),
            ("Device", u64), ("Array", vp), ("Pitch", size_t))] + [
            ("WidthInBytes", size_t), ("Height", size_t)]

    class ResourceDesc(ctypes.Structure):
        _fields_ = [("resType", ctypes.c_int), ("res", u64 * 16), ("flags", ctypes.c_uint)]

    r = {}
    # A 4 x 2 float array, written and read back through cuMemcpy2D.
    array = vp()
    r["create"] = lib.cuArrayCreate_v2(ctypes.byref(array), ctypes.byref(ArrayDesc(4, 2, 0x20, 1)))
    r["nvidias_array"] = fake.fake_is_array(array)
    data = (ctypes.c_float * 8)(*range(1, 9))
    back = (ctypes.c_float * 8)()
    up = Memcpy2D(srcMemoryType=1, srcHost=ctypes.cast(data, vp), srcPitch=16, dstMemoryType=3,
                  dstArray=array, WidthInBytes=16, Height=2)
    down = Memcpy2D(srcMemoryType=3, srcArray=array, dstMemoryType=1,
                    dstHost=ctypes.cast(back, vp), dstPitch=16, WidthInBytes=16, Height=2)
    r["copies"] = [lib.cuMemcpy2D_v2(ctypes.byref(up)), lib.cuMemcpy2D_v2(ctypes.byref(down))]
    r["back"] = list(back)
    got = ArrayDesc()
    r["descriptor"] = [lib.cuArrayGetDescriptor_v2(ctypes.byref(got), array), got.Width,
                       got.Height, got.Format]
    # A 1D array by offset.
    line = vp()
    lib.cuArrayCreate_v2(ctypes.byref(line), ctypes.byref(ArrayDesc(4, 0, 0x03, 1)))
    words, out = (ctypes.c_uint32 * 2)(7, 9), (ctypes.c_uint32 * 2)()
    r["by_offset"] = [lib.cuMemcpyHtoA_v2(line, size_t(4), words, size_t(8)),
                      lib.cuMemcpyAtoH_v2(out, line, size_t(4), size_t(8)), list(out)]
    # Texture and surface objects over it.
    res = ResourceDesc(0)
    res.res[0] = array.value
    tex_desc = (ctypes.c_ubyte * 104)()
    tex, surf = u64(), u64()
    r["tex"] = lib.cuTexObjectCreate(ctypes.byref(tex), ctypes.byref(res), tex_desc, None)
    r["surf"] = lib.cuSurfObjectCreate(ctypes.byref(surf), ctypes.byref(res))
    r["handles"] = [tex.value, surf.value]
    got_res = ResourceDesc()
    r["resource"] = [lib.cuTexObjectGetResourceDesc(ctypes.byref(got_res), tex),
                     got_res.res[0] == array.value]
    r["texref"] = lib.cuModuleGetTexRef(ctypes.byref(vp()), vp(0x40), b"t")
    r["destroy"] = [lib.cuTexObjectDestroy(tex), lib.cuSurfObjectDestroy(surf),
                    lib.cuArrayDestroy(array), lib.cuArrayDestroy(line)]
    r["nvidia_calls"] = fake.fake_texture_calls()
    # A kernel that samples: what NVIDIA's driver is given.
    ptx = b'''
    .version 8.0
    .target sm_90
    .address_size 64
    .visible .entry sample(.param .u64 out, .param .u64 t)
    {
        .reg .f32 %f<6>;
        .reg .b64 %rd<3>;
        ld.param.u64 %rd1, [out];
        ld.param.u64 %rd2, [t];
        mov.f32 %f1, 0f3F000000;
        tex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd2, {%f1, %f1}];
        st.global.f32 [%rd1], %f2;
        ret;
    }
    '''
    module, fn = vp(), vp()
    r["load"] = [lib.cuModuleLoadData(ctypes.byref(module), ptx),
                 lib.cuModuleGetFunction(ctypes.byref(fn), module, b"sample")]
    loaded = (fake.fake_module_ptx() or b"").decode()
    r["loaded_sample"] = ".entry sample(" in loaded
    r["native_tex"] = "tex.2d.v4.f32.f32" in loaded
    print(json.dumps(r))
""")


def _run(libdir: str, fake: Path, native: bool) -> dict:
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake),
           "ZMLIR_NATIVE_TEXTURES": "1" if native else "0"}
    result = subprocess.run([sys.executable, "-c", _SCRIPT, libdir, str(fake)],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    r = json.loads(result.stdout.splitlines()[-1])
    r["stderr"] = result.stderr
    return r


def test_textures_are_nvidias_with_the_switch(libdir: str, fake_nvidia_driver: Path) -> None:
    r = _run(libdir, fake_nvidia_driver, native=True)
    # Each call reached NVIDIA's driver (the stand-in refuses handles not its
    # own with CUDA_ERROR_INVALID_HANDLE, 400) and its handles came back.
    assert r["create"] == 0 and r["nvidias_array"] == 1
    assert r["copies"] == [0, 0] and r["back"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert r["descriptor"] == [0, 4, 2, 0x20]
    assert r["by_offset"] == [0, 0, [7, 9]]
    assert r["tex"] == 0 and r["surf"] == 0
    assert r["handles"] == [0x7E000001, 0x7E000002]
    assert r["resource"] == [0, True]
    assert r["texref"] == 801  # CUDA_ERROR_NOT_SUPPORTED, logged
    assert "cuModuleGetTexRef" in r["stderr"]
    assert r["destroy"] == [0, 0, 0, 0]
    assert r["nvidia_calls"] == 14
    assert r["load"] == [0, 0]
    assert r["loaded_sample"] and r["native_tex"]


def test_textures_stay_ours_without_the_switch(libdir: str, fake_nvidia_driver: Path) -> None:
    r = _run(libdir, fake_nvidia_driver, native=False)
    assert r["create"] == 0 and r["nvidias_array"] == 0
    assert r["copies"] == [0, 0] and r["back"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert r["by_offset"] == [0, 0, [7, 9]]
    assert r["tex"] == 0 and r["surf"] == 0
    assert 0x7E000001 not in r["handles"]  # our descriptors' addresses
    assert r["resource"] == [0, True]
    assert r["destroy"] == [0, 0, 0, 0]
    assert r["nvidia_calls"] == 0
    assert r["load"] == [0, 0]
    assert r["loaded_sample"] and not r["native_tex"]  # the sampler's code in its place
