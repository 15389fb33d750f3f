"""%globaltimer's calibration (zmlir/runtime/cuda/globaltimer.py): the fixed-point words
a SPIR-V kernel scales its device clock with, and the measurement against the host's
clock on Intel's OpenCL CPU runtime. test/cuda/programs/globaltimer.cu checks the same
through the driver, with a spin of known length."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from zmlir.runtime.cuda.globaltimer import Calibration, measure

# Rates of real clocks: Intel's CPU runtime (1 ns), a 2.6 GHz TSC, a 19.2 MHz and a
# 12.5 MHz GPU timestamp counter, a 1 kHz one.
RATES = [1.0, 1.0004, 1 / 2.6, 1e3 / 19.2, 80.0, 1e6]


@pytest.mark.parametrize("ns_per_tick", RATES)
def test_words_scale_ticks_without_overflow(ns_per_tick: float) -> None:
    c = Calibration.of(ticks0=123456789, ns0=1_796_000_000_000_000_000, ns_per_tick=ns_per_tick)
    assert 0 < c.mult < 1 << 32 and 0 <= c.shift <= 32
    # An hour, and a day, of ticks: within 1 ns per ms of the exact product.
    for seconds in (0.001, 1.0, 3600.0, 86400.0):
        d = int(seconds * 1e9 / ns_per_tick)
        exact = c.ns0 + d * ns_per_tick
        assert abs(c.nanoseconds(c.ticks0 + d) - exact) <= 1 + seconds * 1e3


def test_identity_words_are_the_raw_ticks() -> None:
    # What SPIRVTargetInfo.cpp initialises the module's words to.
    identity = Calibration(0, 0, 1 << 31, 31)
    for ticks in (0, 1, (1 << 32) - 1, 1 << 32, 22_701_008_572_239, (1 << 63) + 5):
        assert identity.nanoseconds(ticks) == ticks


def test_a_clock_that_does_not_count_is_refused() -> None:
    with pytest.raises(ValueError):
        Calibration.of(0, 0, 0.0)


def test_the_cpu_runtime_clock_is_calibrated_to_the_host_clock() -> None:
    pytest.importorskip("cffi", reason="the OpenCL backend needs cffi")
    from zmlir.runtime.backends.opencl import icd

    try:
        icd.find_runtime_library()
    except icd.IntelRuntimeNotFound as exc:
        pytest.skip(f"Intel OpenCL CPU runtime not installed: {exc}")
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend
    from zmlir.runtime.cache import compile_cached
    from zmlir.runtime.cuda import globaltimer

    backend = OpenCLBackend.open()
    try:
        c = measure(backend)
        assert abs(c.mult / 2**c.shift - 1.0) < 0.01  # Intel's CPU runtime counts nanoseconds
        # A raw reading, put through the words, lies between the host's clock before and
        # after it (CLOCK_REALTIME, as NVIDIA's %globaltimer and the host target's).
        compiled = compile_cached(globaltimer._PTX, backend.target, "t.ptx")
        kernel = backend.kernel(backend.load(compiled), globaltimer._KERNEL)
        out = backend.alloc(8)
        before = time.time_ns()
        backend.launch(kernel, compiled.kernels[globaltimer._KERNEL], (1, 1, 1), (1, 1, 1),
                       [np.uint64(out)], 0)
        backend.synchronize()
        after = time.time_ns()
        ticks = int(np.frombuffer(backend.copy_from_device(out, 8), dtype=np.uint64)[0])
        backend.free(out)
        assert before - 2_000_000 <= c.nanoseconds(ticks) <= after + 2_000_000
    finally:
        backend.close()


# Through our libcuda.so.1: two modules read %globaltimer (one as its halves);
# each reading lies within the host's CLOCK_REALTIME around its launch.
_DRIVER = textwrap.dedent("""
    import ctypes, json, sys, time
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    HEAD = b".version 7.0\\n.target sm_75\\n.address_size 64\\n"
    WHOLE = HEAD + b'''.visible .entry k(.param .u64 p) {
      .reg .b64 %rd<3>; ld.param.u64 %rd1, [p];
      mov.u64 %rd2, %globaltimer; st.global.u64 [%rd1], %rd2; ret; }'''
    HALVES = HEAD + b'''.visible .entry k(.param .u64 p) {
      .reg .b32 %r<3>; .reg .b64 %rd<3>; ld.param.u64 %rd1, [p];
      mov.u32 %r1, %globaltimer_lo; mov.u32 %r2, %globaltimer_hi;
      st.global.v2.u32 [%rd1], {%r1, %r2}; ret; }'''
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    d = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(d), 8) == 0
    params = (ctypes.c_void_p * 1)(ctypes.addressof(d))
    out = []
    for ptx in (WHOLE, HALVES):
        mod, f = ctypes.c_void_p(), ctypes.c_void_p()
        assert lib.cuModuleLoadData(ctypes.byref(mod), ptx) == 0
        assert lib.cuModuleGetFunction(ctypes.byref(f), mod, b"k") == 0
        before = time.time_ns()
        assert lib.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, params, None) == 0
        assert lib.cuCtxSynchronize() == 0
        after = time.time_ns()
        t = ctypes.c_uint64()
        assert lib.cuMemcpyDtoH_v2(ctypes.byref(t), d, 8) == 0
        out.append([before, t.value, after])
    print(json.dumps(out))
""")


def test_the_driver_calibrates_every_module(libdir: str) -> None:
    result = subprocess.run([sys.executable, "-c", _DRIVER, libdir], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "zmlir:" not in result.stderr, result.stderr
    for before, reading, after in json.loads(result.stdout.strip().splitlines()[-1]):
        assert before - 5_000_000 <= reading <= after + 5_000_000, (before, reading, after)
