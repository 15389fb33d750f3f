"""Modules compiled a part at a time (zmlir/runtime/cuda/parted.py), through
our libcuda.so.1: a kernel we cannot lower fails alone, at
cuModuleGetFunction or at its launch, naming itself and the cause; a big
module's kernels compile at their first use, each part once into the JIT
cache; module variables are one object for every kernel and for the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("zmlir.runtime.backends.opencl.device")

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
# `wgmma` is valid PTX (sm_90a) that no target of ours lowers.
UNSUPPORTED = "wgmma.fence.sync.aligned;"
# A good kernel, and a bad one whose device function holds what we cannot lower.
MIXED = HEAD + f"""
.func bad_helper()
{{
  {UNSUPPORTED}
  ret;
}}

.visible .entry bad()
{{
  call.uni bad_helper, ();
  ret;
}}

.visible .entry good(.param .u64 out, .param .u32 v)
{{
  .reg .b32 %r<3>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [v];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2;
  add.u32 %r2, %r2, %r1;
  st.global.u32 [%rd3], %r2;
  ret;
}}
"""
BAD_LINE = MIXED.splitlines().index(f"  {UNSUPPORTED}") + 1

# Kernels sharing module variables (one part with them), one that shares
# none (a part of its own) and one never used, which we cannot lower: padded
# to a big module, compiled a part at a time.
SHARED = HEAD + f"""
.visible .global .align 4 .u32 counter;
.visible .const .align 4 .u32 scale;

.func bump_by(.param .u32 n)
{{
  .reg .b32 %r<3>; .reg .b64 %rd<2>;
  ld.param.u32 %r1, [n];
  mov.u64 %rd1, counter;
  atom.global.add.u32 %r2, [%rd1], %r1;
  ret;
}}

.visible .entry bump(.param .u64 unused, .param .u32 n)
{{
  .reg .b32 %r<2>;
  ld.param.u32 %r1, [n];
  {{ .param .b32 p; st.param.b32 [p], %r1; call.uni bump_by, (p); }}
  ret;
}}

.visible .entry read(.param .u64 out)
{{
  .reg .b32 %r<4>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.global.u32 %r1, [counter];
  ld.const.u32 %r2, [scale];
  mul.lo.u32 %r3, %r1, %r2;
  st.global.u32 [%rd1], %r3;
  ret;
}}

.visible .entry fill(.param .u64 out, .param .u32 v)
{{
  .reg .b32 %r<2>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [v];
  st.global.u32 [%rd1], %r1;
  ret;
}}

.visible .entry never()
{{
  {UNSUPPORTED}
  ret;
}}
""" + "".join(f"// padding {i:07d} {'.' * 100}\n" for i in range(11000))

_SCRIPT = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    ptx = open(sys.argv[2], "rb").read() + b"\\0"
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    r = {}
    d = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(d), 4 * 32) == 0

    def launch(f, *args):
        values = [ctypes.c_uint64(d.value)] + [ctypes.c_uint32(a) for a in args]
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        code = lib.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, params, None)
        assert lib.cuCtxSynchronize() == 0
        return code

    def read(n=32):
        h = (ctypes.c_uint32 * n)()
        assert lib.cuMemcpyDtoH_v2(h, d, 4 * n) == 0
        return list(h)

    def function(mod, name, get=lib.cuModuleGetFunction):
        f = ctypes.c_void_p()
        return get(ctypes.byref(f), mod, name), f

    def global_(mod, name):
        address, size = ctypes.c_uint64(), ctypes.c_size_t()
        code = lib.cuModuleGetGlobal_v2(ctypes.byref(address), ctypes.byref(size), mod, name)
        return code, address.value, size.value

    mod = ctypes.c_void_p()
    r["load"] = lib.cuModuleLoadData(ctypes.byref(mod), ptx)
    exec(sys.argv[3])
    print(json.dumps(r))
""")

_MIXED_STEPS = """
code, good = function(mod, b"good")
r["good"] = [code, launch(good, 5), read()]
r["bad"] = function(mod, b"bad")[0]
r["bad_again"] = function(mod, b"bad")[0]
lib_ = ctypes.c_void_p()
r["library"] = lib.cuLibraryLoadData(ctypes.byref(lib_), ptx, None, None, 0, None, None, 0)
code, kernel = function(lib_, b"bad", lib.cuLibraryGetKernel)
r["library_bad"] = [code, launch(kernel)]
code, kernel = function(lib_, b"good", lib.cuLibraryGetKernel)
r["library_good"] = [code, launch(kernel, 7), read(2)]
"""

_SHARED_STEPS = """
code, address, size = global_(mod, b"counter")
r["counter"] = [code, size]
assert lib.cuMemcpyHtoD_v2(ctypes.c_uint64(address), (ctypes.c_uint32 * 1)(40), 4) == 0
code, scale, size = global_(mod, b"scale")
assert lib.cuMemcpyHtoD_v2(ctypes.c_uint64(scale), (ctypes.c_uint32 * 1)(3), 4) == 0
code, bump = function(mod, b"bump")
r["bump"] = [code, launch(bump, 1)]  # 32 threads add 1 each
code, read_ = function(mod, b"read")
r["read"] = [code, launch(read_), read(1)]
code, fill = function(mod, b"fill")
r["fill"] = [code, launch(fill, 9), read(1)]
h = (ctypes.c_uint32 * 1)()
assert lib.cuMemcpyDtoH_v2(h, ctypes.c_uint64(address), 4) == 0
r["counter_after"] = [h[0], global_(mod, b"counter")[1] == address]
"""


def _run(libdir: str, tmp_path: Path, ptx: str, steps: str,
         **env: str) -> tuple[dict[str, object], str]:
    source = tmp_path / "module.ptx"
    source.write_text(ptx)
    result = subprocess.run([sys.executable, "-c", _SCRIPT, libdir, str(source), steps],
                            capture_output=True, text=True, timeout=600,
                            env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


@pytest.fixture
def cache_dir(tmp_path: Path) -> str:
    return str(tmp_path / "cache")


def test_a_kernel_we_cannot_lower_fails_alone(libdir: str, tmp_path: Path,
                                              cache_dir: str) -> None:
    r, log = _run(libdir, tmp_path, MIXED, _MIXED_STEPS, ZMLIR_CACHE_DIR=cache_dir)
    assert r["load"] == 0
    assert r["good"] == [0, 0, [i + 5 for i in range(32)]]
    assert r["bad"] == r["bad_again"] == 218  # CUDA_ERROR_INVALID_PTX
    # The library's kernel fails where it is first used: its launch.
    assert r["library"] == 0
    assert r["library_bad"] == [0, 218]
    assert r["library_good"] == [0, 0, [7, 8]]
    # Named, with the place of the cause, once: the library's load finds
    # the module compiled (as far as it compiles).
    cause = f"cannot compile kernel bad of module.ptx: module.ptx:{BAD_LINE}:3: error: unsupported"
    assert log.count(cause) == 1, log
    assert "good" not in log, log


def test_malformed_ptx_fails_at_load(libdir: str, tmp_path: Path, cache_dir: str) -> None:
    malformed = MIXED.replace("ld.param.u64 %rd1, [out];", "ld.param.u64 %rd1 [out];")
    r, log = _run(libdir, tmp_path, malformed, "", ZMLIR_CACHE_DIR=cache_dir)
    assert r["load"] == 218
    assert "module.ptx:" in log and "error: expected" in log, log


def test_kernels_of_a_big_module_share_its_variables(libdir: str, tmp_path: Path,
                                                     cache_dir: str) -> None:
    r, log = _run(libdir, tmp_path, SHARED, _SHARED_STEPS, ZMLIR_CACHE_DIR=cache_dir,
                  ZMLIR_LOG="1")
    assert r["load"] == 0
    assert r["counter"] == [0, 4]
    assert r["bump"] == [0, 0]
    assert r["read"] == [0, 0, [(40 + 32) * 3]]  # the host's writes and bump's adds
    assert r["fill"] == [0, 0, [9]]
    assert r["counter_after"] == [72, True]
    # Two parts compiled (the variables' with bump and read, then fill's);
    # `never`, which we cannot lower, never is.
    compiled = [line for line in log.splitlines() if "part of module.ptx" in line]
    assert len(compiled) == 2, log
    assert not any("never" in line for line in compiled) and "kernel never" not in log


def test_a_second_run_finds_the_parts_in_the_jit_cache(libdir: str, tmp_path: Path,
                                                       cache_dir: str) -> None:
    logs = []
    for _ in range(2):
        r, log = _run(libdir, tmp_path, SHARED, _SHARED_STEPS, ZMLIR_CACHE_DIR=cache_dir,
                      ZMLIR_LOG="1")
        assert r["read"] == [0, 0, [216]]
        logs.append([line for line in log.splitlines() if "part of module.ptx" in line])
    assert len(logs[0]) == len(logs[1]) == 2
    assert all("compiled" in line for line in logs[0]), logs
    assert all("from the JIT cache" in line for line in logs[1]), logs


def test_a_big_module_checks_what_lies_outside_its_bodies_at_load(
        libdir: str, tmp_path: Path, cache_dir: str) -> None:
    bad_variable = SHARED.replace(".const .align 4 .u32 scale;", ".const .align 4 .u32 scale[;")
    r, log = _run(libdir, tmp_path, bad_variable, "", ZMLIR_CACHE_DIR=cache_dir)
    assert r["load"] == 218
    line = SHARED.splitlines().index(".visible .const .align 4 .u32 scale;") + 1
    assert f"module.ptx:{line}:" in log, log
    # A body's syntax error fails the kernels that reach it, at their use.
    bad_body = SHARED.replace(UNSUPPORTED, "add.u32 %r1 %r1;")
    steps = 'code, fill = function(mod, b"fill")\nr["fill"] = [code, launch(fill, 4), read(1)]\n' \
        'r["never"] = function(mod, b"never")[0]\n'
    r, log = _run(libdir, tmp_path, bad_body, steps, ZMLIR_CACHE_DIR=cache_dir)
    assert r == {"load": 0, "fill": [0, 0, [4]], "never": 218}
    assert "cannot compile kernel never of module.ptx: module.ptx:" in log, log


def _instances(count: int) -> str:
    """A template's `count` instances: kernel fill_k stores v + k."""
    return HEAD + "".join(f"""
.visible .entry fill_{k}(.param .u64 out, .param .u32 v)
{{
  .reg .b32 %r<2>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [v];
  add.u32 %r1, %r1, {k};
  st.global.u32 [%rd1], %r1;
  ret;
}}
""" for k in range(count))


@pytest.mark.parametrize("count", [7, 8])
def test_a_module_of_many_kernels_compiles_those_launched(libdir: str, tmp_path: Path,
                                                          cache_dir: str, count: int) -> None:
    """A small module of 8 kernels or more is parted when it loads (a
    program launches a few of a template's instances); below, compiled whole."""
    steps = 'code, f = function(mod, b"fill_3")\nr["fill"] = [code, launch(f, 10), read(1)]\n'
    r, log = _run(libdir, tmp_path, _instances(count), steps, ZMLIR_CACHE_DIR=cache_dir,
                  ZMLIR_LOG="1")
    assert r == {"load": 0, "fill": [0, 0, [13]]}
    compiled = [line for line in log.splitlines() if "part of module.ptx" in line]
    if count < 8:
        assert compiled == [], log
    else:
        assert len(compiled) == 1 and "with fill_3: compiled" in compiled[0], log


VARIABLES_ONLY = """
.version 9.0
.target sm_120
.address_size 64
.global .align 16 .b8 constants[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64};
"""

_VARIABLES_STEPS = """
lib_ = ctypes.c_void_p()
r["library"] = lib.cuLibraryLoadData(ctypes.byref(lib_), ptx, None, None, 0, None, None, 0)
address, size = ctypes.c_uint64(), ctypes.c_size_t()
r["global"] = [lib.cuLibraryGetGlobal(ctypes.byref(address), ctypes.byref(size), lib_,
                                      b"constants"), size.value]
h = (ctypes.c_float * 4)()
r["copy"] = lib.cuMemcpyDtoH_v2(h, address, 16)
r["values"] = list(h)
"""


def test_a_module_of_variables_only(libdir: str, tmp_path: Path, cache_dir: str) -> None:
    """NVIDIA's cuBLAS keeps `cublas::internal::deviceConstants` in a fatbin
    image of its own and reads it with cuLibraryGetGlobal as cublasCreate
    starts: the variable is found, with its initial value."""
    r, _ = _run(libdir, tmp_path, VARIABLES_ONLY, _VARIABLES_STEPS, ZMLIR_CACHE_DIR=cache_dir)
    assert r["load"] == 0 and r["library"] == 0
    assert r["global"] == [0, 16] and r["copy"] == 0
    assert r["values"] == [1.0, 2.0, 3.0, 4.0]
