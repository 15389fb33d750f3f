"""Device-side launches (CUDA dynamic parallelism) under the CUDA
passthrough: which PTX units an -rdc program links on a GPU that has
NVIDIA's SASS for its device runtime (an H200), and child grids run through
the passthrough over a stand-in NVIDIA driver
(test/cuda/driver_api/fake_nvidia_driver.c) whose `launch_add` kernel makes
a launch as a kernel linked with our libcudadevrt stand-in does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import tool
from support.programs import nvcc_arguments, programs

from tools.run_programs_passthrough import driver_ptx_texts
from zmlir.runtime.cuda import devrt, fatbin
from zmlir.runtime.cuda.module import keyed_ptx, relocatable_units

_PROGRAM_UNIT = """.version 8.0
.target sm_75
.address_size 64
.extern .func  (.param .b64 func_retval0) __cudaCDP2GetParameterBufferV2
(
	.param .b64 p0, .param .align 4 .b8 p1[12], .param .align 4 .b8 p2[12], .param .b32 p3
)
;
.visible .entry child() { ret; }
"""
# What NVIDIA's device runtime unit looks like to the linker: it defines
# the launch function (its real PTX is compute_121 only).
_RUNTIME_UNIT = """.version 9.0
.target sm_121
.address_size 64
.visible .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2(
	.param .b64 p0, .param .b64 p1
)
{ st.param.b32 [func_retval0], 0; ret; }
"""


def _ptx(sm: int, text: str) -> fatbin.Entry:
    data = text.encode()
    return fatbin.Entry(fatbin.KIND_PTX, sm, 0, data, len(data))


def _sass(sm: int) -> fatbin.Entry:
    return fatbin.Entry(fatbin.KIND_ELF, sm, 0, b"\x7fELF", 4)


def test_device_runtime_unit_links_as_the_stand_in_where_the_gpu_has_its_sass() -> None:
    # On an H200 (SASS for sm_90 beside the unit's compute_121 PTX) that PTX
    # is not a candidate: the unit must still be told apart, not dropped
    # (dropped, the link failed with an undefined reference: cuda-samples'
    # cdp* programs answered cudaErrorInvalidSource through the passthrough).
    program = [_sass(75), _ptx(75, _PROGRAM_UNIT)]
    runtime = [_sass(75), _sass(90), _ptx(121, _RUNTIME_UNIT), _sass(121)]
    cudart = [_sass(75)]  # machine code only: left out
    for native, presented in ((90, 90), (0, 80)):
        units = relocatable_units([program, runtime, cudart], native, presented)
        assert units == [(_PROGRAM_UNIT, "unit0.ptx"), devrt.unit()]


def test_a_device_runtime_unit_without_ptx_is_the_stand_in_too() -> None:
    program = [_ptx(75, _PROGRAM_UNIT)]
    units = relocatable_units([program, [_sass(90)]], 90, 90)
    assert units == [(_PROGRAM_UNIT, "unit0.ptx"), devrt.unit()]
    plain = _PROGRAM_UNIT.replace("__cudaCDP2GetParameterBufferV2", "my_function")
    assert relocatable_units([[_ptx(75, plain)]], 90, 90) == [(plain, "unit0.ptx")]


_PROBE = textwrap.dedent("""
    import ctypes, json, sys
    from zmlir.frontend.kernel_address import kernel_address
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    PTX = b'''
    .version 8.0
    .target sm_80
    .address_size 64
    .extern .func (.param .b64 r) __cudaCDP2GetParameterBufferV2(.param .b64 f,
        .param .align 4 .b8 g[12], .param .align 4 .b8 b[12], .param .b32 s);
    .visible .entry add_scalar(.param .u64 p, .param .u32 v)
    {
      .reg .b32 %r<5>; .reg .b64 %rd<4>;
      ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v];
      mov.u32 %r2, %tid.x; mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2;
      ld.global.u32 %r3, [%rd3]; add.s32 %r4, %r3, %r1; st.global.u32 [%rd3], %r4;
      ret;
    }
    .visible .entry launch_add(.param .u64 p, .param .u32 v, .param .u64 child)
    {
      .reg .b64 %rd<3>;
      mov.u64 %rd1, add_scalar;
      { .param .b64 f; .param .align 4 .b8 g[12]; .param .align 4 .b8 b[12]; .param .b32 s;
        .param .b64 r;
        st.param.b64 [f], %rd1; st.param.b32 [g], 1; st.param.b32 [g+4], 1;
        st.param.b32 [g+8], 1; st.param.b32 [b], 1; st.param.b32 [b+4], 1;
        st.param.b32 [b+8], 1; st.param.b32 [s], 0;
        call.uni (r), __cudaCDP2GetParameterBufferV2, (f, g, b, s); ld.param.b64 %rd2, [r]; }
      ret;
    }
    .visible .entry copy_words(.param .u64 dst, .param .u64 src, .param .u32 n)
    {
      ret;
    }
    '''
    r = {}
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    state, image, size = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_size_t()
    assert lib.cuLinkCreate_v2(0, None, None, ctypes.byref(state)) == 0
    assert lib.cuLinkAddData_v2(state, 1, PTX, len(PTX), b"launch.ptx", 0, None, None) == 0
    assert lib.cuLinkAddData_v2(state, 4, b"!<arch>\\n", 8, b"libcudadevrt.a", 0, None,
                                None) == 0  # CU_JIT_INPUT_LIBRARY
    assert lib.cuLinkComplete(state, ctypes.byref(image), ctypes.byref(size)) == 0
    mod, f = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(mod), image) == 0
    assert lib.cuLinkDestroy(state) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(f), mod, b"launch_add") == 0
    n = 32
    d = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(d), 4 * n) == 0
    assert lib.cuMemsetD32_v2(d, 0, n) == 0
    value = ctypes.c_uint32(5)
    words = (ctypes.c_uint32 * n)()
    def launch(name, child):
        address = ctypes.c_uint64(child)
        params = (ctypes.c_void_p * 3)(ctypes.addressof(d), ctypes.addressof(value),
                                       ctypes.addressof(address))
        code = lib.cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, None, params, None)
        sync = lib.cuCtxSynchronize()
        copy = lib.cuMemcpyDtoH_v2(words, d, 4 * n)
        r[name] = [code, sync, copy, list(words)]
    launch("child", kernel_address("add_scalar"))
    launch("again", kernel_address("add_scalar"))
    # copy_words: a device-side copy of n words (cudaMemcpyAsync)
    copy = ctypes.c_void_p()
    assert lib.cuModuleGetFunction(ctypes.byref(copy), mod, b"copy_words") == 0
    e = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(e), 4 * n) == 0
    assert lib.cuMemsetD32_v2(e, 0, n) == 0
    def copy_words(name, dst, src, count):
        dst, src, count = ctypes.c_uint64(dst), ctypes.c_uint64(src), ctypes.c_uint32(count)
        params = (ctypes.c_void_p * 3)(ctypes.addressof(dst), ctypes.addressof(src),
                                       ctypes.addressof(count))
        code = lib.cuLaunchKernel(copy, 1, 1, 1, 1, 1, 1, 0, None, params, None)
        sync = lib.cuCtxSynchronize()
        copied = lib.cuMemcpyDtoH_v2(words, e, 4 * n)
        r[name] = [code, sync, copied, list(words)]
    copy_words("copy", e.value + 8, d.value, n - 2)  # the words 10, to e[2:]
    copy_words("copy_outside", e.value, 64, n)  # from no memory of the device's
    launch("after_fault", kernel_address("add_scalar"))
    print(json.dumps(r))
""")


def test_child_grids_run_through_the_passthrough(libdir: str,
                                                 fake_nvidia_driver: Path) -> None:
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    # [launch, synchronize, copy, the words]: each launch_add's child added 5.
    assert r["child"] == [0, 0, 0, [5] * 32]
    assert r["again"] == [0, 0, 0, [10] * 32]
    # A device-side copy runs through the passthrough in its place.
    assert r["copy"] == [0, 0, 0, [0, 0] + [10] * 30]
    # One from memory the device does not reach faults, loudly.
    assert r["copy_outside"][:3] == [0, 700, 700]  # CUDA_ERROR_ILLEGAL_ADDRESS
    assert "a device-side copy by copy_words of 128 bytes" in result.stderr
    assert r["after_fault"][:3] == [700, 700, 700]


def test_an_unknown_child_fails_the_context(libdir: str, fake_nvidia_driver: Path) -> None:
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    probe = _PROBE.replace('launch("child", kernel_address("add_scalar"))',
                           'launch("unknown_child", kernel_address("no_such_kernel"))')
    probe = probe[:probe.index('launch("again"')] + "print(json.dumps(r))\n"
    result = subprocess.run([sys.executable, "-c", probe, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    # The launch itself succeeded; the context now holds the failure.
    assert r["unknown_child"][:3] == [0, 719, 719]  # CUDA_ERROR_LAUNCH_FAILED
    assert "a device-side launch by launch_add cannot run" in result.stderr


def test_an_rdc_program_loads_the_module_the_nvptx_cache_is_made_of(
        tmp_path: Path, fake_nvidia_driver: Path) -> None:
    # test/cuda/programs/device_launch built as cuda-samples' cdp* are
    # (-rdc -lcudadevrt, sm_75): through the passthrough of a compute
    # capability 9.0 GPU its units link (NVIDIA's device runtime as our
    # stand-in) into the very text whose NVPTX the H200 runs from
    # ZMLIR_NVPTX_CACHE (tools/run_programs_passthrough.driver_ptx_texts,
    # which bench/cuda_samples.py's `nvptx` step uses).
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    program = next(p for p in programs() if p.name == "device_launch")
    exe = tmp_path / "device_launch"
    subprocess.run([tool("nvcc"), "-arch=sm_75", *nvcc_arguments(program), "-o", str(exe)],
                   check=True, capture_output=True)
    linked = driver_ptx_texts(exe, relocatable=True, gpu_sm=90)[-1]
    assert ".global .align 8 .u64 __zmlir_device_launches" in linked  # the stand-in's
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver),
           "ZMLIR_LOG": "1", "ZMLIR_NVPTX_CACHE": str(tmp_path / "no_cache")}
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=600, env=env)
    assert "Undefined reference" not in result.stderr
    # The stand-in driver runs none of its kernels: what it checks fails,
    # but the module it launched from is the one the cache is keyed by.
    assert f"module {keyed_ptx(linked)[1][:16]} not in the NVPTX cache" in result.stderr
