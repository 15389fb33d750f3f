"""The CUDA driver API of our libcuda.so.1: unmodified nvcc-built programs
(static and shared cudart) run under `zmlir run` on the CPU backend, and the
API's error paths return the documented codes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import tool

PROGRAMS_DIR = Path(__file__).parent / "cuda" / "programs"
# A program is one .cu file, or a folder of .cu files linked together.
PROGRAMS = sorted([p.stem for p in PROGRAMS_DIR.glob("*.cu")]
                  + [p.name for p in PROGRAMS_DIR.iterdir() if p.is_dir()])
# Programs expected to fail, with the reason (strict xfail: a fixed one fails the test).
PENDING: dict[str, str] = {}

pytest.importorskip("zmlir.runtime.launcher")


@pytest.fixture(scope="module")
def libdir() -> str:
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    return tmp_path_factory.mktemp("programs")


def _build(program: str, cudart: str, out_dir: Path) -> Path:
    exe = out_dir / f"{program}.{cudart}"
    folder = PROGRAMS_DIR / program
    sources = sorted(folder.glob("*.cu")) if folder.is_dir() else [PROGRAMS_DIR / f"{program}.cu"]
    if not exe.exists():
        subprocess.run([tool("nvcc"), "-arch=sm_80", f"-cudart={cudart}", f"-I{PROGRAMS_DIR}",
                        *map(str, sources), "-o", str(exe)], check=True, capture_output=True)
    return exe


@pytest.mark.parametrize("cudart", ["static", "shared"])
@pytest.mark.parametrize("program", [
    pytest.param(p, marks=pytest.mark.xfail(reason=PENDING[p], strict=True)) if p in PENDING
    else p for p in PROGRAMS])
def test_program_runs_unmodified(program: str, cudart: str, build_dir: Path, libdir: str) -> None:
    exe = _build(program, cudart, build_dir)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("PASS")
    assert "internal error" not in result.stderr
    assert "Traceback" not in result.stderr


def test_without_zmlir_the_program_finds_no_driver(build_dir: Path) -> None:
    # The same binary with no libcuda at all: the runtime reports it, which
    # shows the passing runs above really went through our library.
    exe = _build("vector_add", "static", build_dir)
    result = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.returncode != 0
    assert "insufficient" in result.stderr + result.stdout or "no CUDA" in result.stderr


_PROBE = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    r = {}
    ptr = ctypes.c_uint64()
    r["alloc_before_init"] = lib.cuMemAlloc_v2(ctypes.byref(ptr), 64)
    r["init_bad_flags"] = lib.cuInit(1)
    r["init"] = lib.cuInit(0)
    r["count_null"] = lib.cuDeviceGetCount(None)
    count = ctypes.c_int()
    r["count"] = (lib.cuDeviceGetCount(ctypes.byref(count)), count.value)
    dev = ctypes.c_int()
    r["device_out_of_range"] = lib.cuDeviceGet(ctypes.byref(dev), 5)
    r["alloc_without_context"] = lib.cuMemAlloc_v2(ctypes.byref(ptr), 64)
    ctx = ctypes.c_void_p()
    r["retain"] = lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0)
    r["set_current"] = lib.cuCtxSetCurrent(ctx)
    r["alloc"] = lib.cuMemAlloc_v2(ctypes.byref(ptr), 64)
    r["alloc_zero"] = lib.cuMemAlloc_v2(ctypes.byref(ptr), 0)
    buf = (ctypes.c_char * 128)()
    r["copy_past_end"] = lib.cuMemcpyHtoD_v2(ptr, buf, 128)
    r["free"] = lib.cuMemFree_v2(ptr)
    r["double_free"] = lib.cuMemFree_v2(ptr)
    stream = ctypes.c_void_p(0xdead0)
    r["sync_bad_stream"] = lib.cuStreamSynchronize(stream)
    func = ctypes.c_void_p(0xbad0)
    r["launch_bad_function"] = lib.cuLaunchKernel(func, 1, 1, 1, 1, 1, 1, 0, None, None,
                                                  None)
    name = ctypes.c_char_p()
    r["error_name"] = (lib.cuGetErrorName(801, ctypes.byref(name)), name.value.decode())
    r["error_name_unknown"] = lib.cuGetErrorName(12345, ctypes.byref(name))
    fn = ctypes.c_void_p()
    status = ctypes.c_int()
    r["proc_known"] = (lib.cuGetProcAddress_v2(b"cuMemAlloc", ctypes.byref(fn), 13000, 0,
                                               ctypes.byref(status)), status.value,
                       fn.value == ctypes.cast(lib.cuMemAlloc_v2, ctypes.c_void_p).value)
    r["proc_unknown"] = (lib.cuGetProcAddress_v2(b"cuNoSuchThing", ctypes.byref(fn), 13000, 0,
                                                 ctypes.byref(status)), status.value)
    r["unsupported_api"] = lib.cuDeviceGetDefaultMemPool(ctypes.byref(fn), 0)
    print(json.dumps(r))
""")


def test_driver_api_error_paths(libdir: str) -> None:
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r["alloc_before_init"] == 3  # CUDA_ERROR_NOT_INITIALIZED
    assert r["init_bad_flags"] == 1  # CUDA_ERROR_INVALID_VALUE
    assert r["init"] == 0
    assert r["count_null"] == 1
    assert r["count"] == [0, 1]
    assert r["device_out_of_range"] == 101  # CUDA_ERROR_INVALID_DEVICE
    assert r["alloc_without_context"] == 201  # CUDA_ERROR_INVALID_CONTEXT
    assert r["retain"] == 0 and r["set_current"] == 0 and r["alloc"] == 0
    assert r["alloc_zero"] == 1
    assert r["copy_past_end"] == 1
    assert r["free"] == 0
    assert r["double_free"] == 1
    assert r["sync_bad_stream"] == 400  # CUDA_ERROR_INVALID_HANDLE
    assert r["launch_bad_function"] == 400
    assert r["error_name"] == [0, "CUDA_ERROR_NOT_SUPPORTED"]
    assert r["error_name_unknown"] == 1
    assert r["proc_known"] == [0, 0, True]
    assert r["proc_unknown"] == [500, 1]  # CUDA_ERROR_NOT_FOUND, symbol not found
    assert r["unsupported_api"] == 801
    assert "cuDeviceGetDefaultMemPool" in result.stderr


DRIVER_API_DIR = Path(__file__).parent / "cuda" / "driver_api"


@pytest.mark.parametrize("program", sorted(p.stem for p in DRIVER_API_DIR.glob("*.cu")))
def test_driver_api_program(program: str, build_dir: Path, libdir: str) -> None:
    # Programs written against the driver API link with -lcuda: ours.
    exe = build_dir / f"driver_api.{program}"
    subprocess.run([tool("nvcc"), str(DRIVER_API_DIR / f"{program}.cu"), "-o", str(exe),
                    f"-L{libdir}", "-lcuda"], check=True, capture_output=True)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("PASS")


_ATTRIBUTES = textwrap.dedent("""
    import ctypes, json, os, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    assert lib.cuInit(0) == 0
    def attr(a):
        v = ctypes.c_int()
        assert lib.cuDeviceGetAttribute(ctypes.byref(v), a, 0) == 0
        return v.value
    print(json.dumps({"sm": attr(16), "warp": attr(10), "threads": attr(1),
                      "major": attr(75), "minor": attr(76), "cpus": os.cpu_count()}))
""")


def test_device_attributes_describe_the_backend_device(libdir: str) -> None:
    result = subprocess.run([sys.executable, "-c", _ATTRIBUTES, libdir], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r["warp"] == 32 and r["threads"] == 1024
    assert (r["major"], r["minor"]) == (8, 0)
    # The CPU device's compute units are its cores.
    assert 1 <= r["sm"] <= r["cpus"]
