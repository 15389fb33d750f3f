"""The CUDA driver API of our libcuda.so.1: unmodified nvcc-built programs
(static and shared cudart) run under `zmlir run` on the CPU backend, and the
API's error paths return the documented codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support import ADD_SCALAR_PTX, CUDA_DIR, PROGRAMS_DIR, tool
from support.programs import CPU_PENDING, nvcc_arguments, programs

from zmlir.runtime.cuda import api

# A program is one .cu file, or a folder of .cu files linked together (with
# the nvcc flags in the folder's `nvcc_flags` file, e.g. -rdc=true).
PROGRAMS = {program.name: program for program in programs()}
# Programs that need what the CPU backend lacks: they must notice, say exactly
# this and exit with EXIT_WAIVED (they run and pass on the CUDA passthrough,
# tools/run_programs_passthrough.py).
EXIT_WAIVED = 2
WAIVED: dict[str, str] = {}

pytest.importorskip("zmlir.runtime.backends.opencl.device")


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    return tmp_path_factory.mktemp("programs")


def _build(program: str, cudart: str, out_dir: Path) -> Path:
    exe = out_dir / f"{program}.{cudart}"
    if not exe.exists():
        subprocess.run([tool("nvcc"), "-arch=sm_80", f"-cudart={cudart}",
                        *nvcc_arguments(PROGRAMS[program]), "-o", str(exe)],
                       check=True, capture_output=True)
    return exe


@pytest.mark.parametrize("cudart", ["static", "shared"])
@pytest.mark.parametrize("program", [
    # Known to fail here (strict xfail: a fixed one fails the test).
    pytest.param(p, marks=pytest.mark.xfail(reason=CPU_PENDING[p], strict=True))
    if p in CPU_PENDING
    else p for p in PROGRAMS])
def test_program_runs_unmodified(program: str, cudart: str, build_dir: Path, libdir: str) -> None:
    exe = _build(program, cudart, build_dir)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=300)
    assert "internal error" not in result.stderr
    assert "Traceback" not in result.stderr
    if program in WAIVED:
        assert (result.returncode, result.stdout.strip()) == (EXIT_WAIVED, WAIVED[program]), \
            result.stdout + result.stderr
        # Its kernel does not compile here, and the log says why.
        assert "error: unsupported special register '%envreg" in result.stderr
        return
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("PASS")


@pytest.mark.parametrize("gencode, expected", [
    # -arch=sm_90 with LZ4 (nvcc 12's default compression): PTX newer than
    # the capability we report still compiles.
    (["-gencode=arch=compute_90,code=[sm_90,compute_90]", "--compress-mode=speed"], "PASS"),
    # NVIDIA machine code only: the program starts; its launch fails as on a
    # GPU the binary was not built for.
    (["-gencode=arch=compute_90,code=sm_90"], "no kernel image is available"),
    # Relocatable device code (CMake's CUDA_SEPARABLE_COMPILATION): cudart
    # registers a version-2 wrapper listing each translation unit's fatbin.
    (["-arch=sm_80", "-rdc=true"], "PASS"),
])
def test_fatbin_forms(gencode: list[str], expected: str, build_dir: Path,
                                    libdir: str) -> None:
    exe = build_dir / f"vector_add.{abs(hash(tuple(gencode)))}"
    subprocess.run([tool("nvcc"), *gencode, f"-I{PROGRAMS_DIR}",
                    str(PROGRAMS_DIR / "vector_add.cu"), "-o", str(exe)],
                   check=True, capture_output=True)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=300)
    assert expected in result.stdout + result.stderr
    assert result.returncode == (0 if expected == "PASS" else 1), result.stdout + result.stderr


def test_without_zmlir_the_program_finds_no_driver(build_dir: Path) -> None:
    # The same binary with no libcuda at all: the runtime reports it, which
    # shows the passing runs above really went through our library.
    exe = _build("vector_add", "static", build_dir)
    result = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.returncode != 0
    assert "insufficient" in result.stderr + result.stdout or "no CUDA" in result.stderr


def _run_with_cache(exe: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ZMLIR_CACHE_DIR": str(cache)}
    env.pop("ZMLIR_CACHE", None)
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                          capture_output=True, text=True, timeout=300, env=env)


def test_unusable_cache_still_loads_modules(build_dir: Path, tmp_path: Path) -> None:
    # The cache directory is a file (blocks even root): modules compile
    # without the cache, the ICD file goes to a private temp dir, one warning.
    exe = _build("vector_add", "static", build_dir)
    (tmp_path / "cache").write_text("")
    result = _run_with_cache(exe, tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("PASS")
    warnings = [line for line in result.stderr.splitlines() if "warning: JIT cache" in line]
    assert len(warnings) == 1, result.stderr


def test_corrupt_icd_file_is_rewritten(build_dir: Path, tmp_path: Path) -> None:
    exe = _build("vector_add", "static", build_dir)
    assert _run_with_cache(exe, tmp_path).returncode == 0
    [icd_file] = (tmp_path / "icd").glob("*/intel.icd")
    icd_file.write_bytes(b"\xff\xfe not a path \0")
    (icd_file.parent / "planted.icd").write_text("/nonexistent/libplanted.so\n")
    result = _run_with_cache(exe, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("PASS")
    assert [p.name for p in icd_file.parent.glob("*.icd")] == ["intel.icd"]


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
    # JIT options: the info and error logs, their lengths written back.
    def load_with_logs(ptx):
        info, err = ctypes.create_string_buffer(b"?" * 63), ctypes.create_string_buffer(b"?" * 255)
        opts = (ctypes.c_int * 4)(3, 4, 5, 6)  # INFO_LOG_BUFFER(_SIZE_BYTES), ERROR_...
        vals = (ctypes.c_void_p * 4)(ctypes.cast(info, ctypes.c_void_p).value, 64,
                                     ctypes.cast(err, ctypes.c_void_p).value, 256)
        code = lib.cuModuleLoadDataEx(ctypes.byref(ctypes.c_void_p()), ptx, 4, opts, vals)
        return [code, info.value.decode(), vals[1] or 0, err.value.decode(), vals[3] or 0]
    head = b".version 7.0\\n.target sm_80\\n.address_size 64\\n.visible .entry k()\\n{\\n"
    r["jit_log_ok"] = load_with_logs(head + b" ret;\\n}\\n")
    r["jit_log_bad"] = load_with_logs(head + b" frobnicate.u32 %r1;\\n}\\n")
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
    # The symbol of the signature the caller's CUDA version declares.
    def proc(name, version):
        code = lib.cuGetProcAddress_v2(name, ctypes.byref(fn), version, 0, ctypes.byref(status))
        return [code, status.value, fn.value]
    def address(symbol):
        return ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
    r["proc_versions"] = [
        proc(b"cuMemPrefetchAsync", 8000)[2] == address("cuMemPrefetchAsync"),
        proc(b"cuMemPrefetchAsync", 12020)[2] == address("cuMemPrefetchAsync_v2"),
        proc(b"cuMemPrefetchAsync_ptsz", 13000)[2] == address("cuMemPrefetchAsync_v2"),
        proc(b"cuStreamGetCaptureInfo", 11030)[2] == address("cuStreamGetCaptureInfo_v2"),
        proc(b"cuCtxCreate", 3020)[2] == address("cuCtxCreate_v2"),
        proc(b"cuCtxCreate", 12050)[2] == address("cuCtxCreate_v4"),
        proc(b"cuGetProcAddress", 11030)[2] == address("cuGetProcAddress"),
        proc(b"cuCtxSynchronize", 2000)[2] == address("cuCtxSynchronize"),
        proc(b"cuCtxSynchronize", 13000)[2] == address("cuCtxSynchronize_v2"),
    ]
    dev13 = ctypes.c_int(-1)
    r["ctx_get_device_v2"] = [lib.cuCtxGetDevice_v2(ctypes.byref(dev13), ctx), dev13.value,
                              lib.cuCtxGetDevice_v2(ctypes.byref(dev13), ctypes.c_void_p(0xbad0))]
    # A signature we lack: NVIDIA's symbol, a stub saying it is not supported.
    r["proc_ctx_create_v3"] = proc(b"cuCtxCreate", 11040)[:2] + [
        fn.value == address("cuCtxCreate_v3")]
    # Every function NVIDIA's libcuda exports is there; those we do not
    # implement return CUDA_ERROR_NOT_SUPPORTED, also through cuGetProcAddress.
    names = [n for n in open(sys.argv[2]).read().split() if n.startswith("cu")]
    r["missing_exports"] = [n for n in names if not hasattr(lib, n)]
    r["unimplemented_export"] = lib.cuImportExternalMemory(None, None)
    code, found, pointer = proc(b"cuImportExternalMemory", 13000)
    r["proc_unimplemented"] = [code, found, ctypes.CFUNCTYPE(ctypes.c_int)(pointer)()]
    r["proc_too_old"] = proc(b"cuMemAdvise", 7000)[:2]
    luid, mask = (ctypes.c_char * 8)(), ctypes.c_uint()
    r["unsupported_api"] = lib.cuDeviceGetLuid(luid, ctypes.byref(mask), 0)
    # Memory pools
    pool, bad = ctypes.c_void_p(), ctypes.c_void_p(0xbad0)
    r["default_pool"] = lib.cuDeviceGetDefaultMemPool(ctypes.byref(pool), 0)
    r["destroy_default_pool"] = lib.cuMemPoolDestroy(pool)
    r["trim_bad_pool"] = lib.cuMemPoolTrimTo(bad, 0)
    value = ctypes.c_uint64(5)
    r["set_reserved_current"] = lib.cuMemPoolSetAttribute(pool, 5, ctypes.byref(value))
    r["unknown_pool_attribute"] = lib.cuMemPoolGetAttribute(pool, 99, ctypes.byref(value))
    r["alloc_from_bad_pool"] = lib.cuMemAllocFromPoolAsync(ctypes.byref(ptr), 64, bad, None)
    r["alloc_async_bad_stream"] = lib.cuMemAllocAsync(ctypes.byref(ptr), 64,
                                                      ctypes.c_void_p(0xdead0))
    r["free_async_unknown"] = lib.cuMemFreeAsync(ctypes.c_uint64(0x1234), None)
    # Null frees succeed on NVIDIA's driver (580, an H100): cuSPARSE's
    # cusparseDestroyCsrilu02Info frees a null buffer in stream order.
    r["free_async_null"] = lib.cuMemFreeAsync(ctypes.c_uint64(0), None)
    r["free_null"] = lib.cuMemFree_v2(ctypes.c_uint64(0))
    r["free_host_null"] = lib.cuMemFreeHost(None)
    class Props(ctypes.Structure):
        _fields_ = [("allocType", ctypes.c_int), ("handleTypes", ctypes.c_int),
                    ("locType", ctypes.c_int), ("locId", ctypes.c_int),
                    ("win32", ctypes.c_void_p), ("maxSize", ctypes.c_size_t),
                    ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 54)]
    r["pool_ipc"] = lib.cuMemPoolCreate(ctypes.byref(pool), ctypes.byref(Props(1, 1, 1, 0)))
    r["pool_ipc_fabric"] = lib.cuMemPoolCreate(ctypes.byref(pool),
                                               ctypes.byref(Props(1, 8, 1, 0)))
    r["pool_bad_type"] = lib.cuMemPoolCreate(ctypes.byref(pool), ctypes.byref(Props(0, 0, 1, 0)))
    r["pool_bad_device"] = lib.cuMemPoolCreate(ctypes.byref(pool),
                                               ctypes.byref(Props(1, 0, 1, 3)))
    # A pool of at most 4 KiB: the second 4 KiB allocation does not fit.
    r["small_pool"] = lib.cuMemPoolCreate(ctypes.byref(pool),
                                          ctypes.byref(Props(1, 0, 1, 0, None, 4096)))
    r["small_pool_first"] = lib.cuMemAllocFromPoolAsync(ctypes.byref(ptr), 4096, pool, None)
    r["small_pool_second"] = lib.cuMemAllocFromPoolAsync(ctypes.byref(ctypes.c_uint64()),
                                                         4096, pool, None)
    r["small_pool_free"] = lib.cuMemFreeAsync(ptr, None)
    r["small_pool_double_free"] = lib.cuMemFreeAsync(ptr, None)
    r["small_pool_again"] = lib.cuMemAllocFromPoolAsync(ctypes.byref(ptr), 4096, pool, None)
    r["pool_destroy"] = lib.cuMemPoolDestroy(pool)
    r["pool_destroy_twice"] = lib.cuMemPoolDestroy(pool)
    r["free_after_pool_destroyed"] = lib.cuMemFree_v2(ptr)
    print(json.dumps(r))
""")


def test_driver_api_error_paths(libdir: str) -> None:
    exports = Path(api.__file__).with_name("nvidia_exports.txt")
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir, str(exports)],
                            capture_output=True, text=True, timeout=120)
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
    assert r["jit_log_ok"] == [0, "", 0, "", 0]
    code, _, _, error_log, error_length = r["jit_log_bad"]
    assert code == 218 and "module.ptx:6:" in error_log  # CUDA_ERROR_INVALID_PTX
    assert error_length == len(error_log)
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
    assert r["proc_versions"] == [True] * 9
    assert r["ctx_get_device_v2"] == [0, 0, 400]
    assert r["proc_ctx_create_v3"] == [0, 0, True]
    assert r["missing_exports"] == []
    assert r["unimplemented_export"] == 801 and "cuImportExternalMemory" in result.stderr
    assert r["proc_unimplemented"] == [0, 0, 801] and "cuImportExternalMemory" in result.stderr
    assert r["proc_too_old"] == [500, 2]  # CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
    assert r["unsupported_api"] == 801
    assert "cuDeviceGetLuid" in result.stderr
    assert r["default_pool"] == 0
    assert r["destroy_default_pool"] == 1
    assert r["trim_bad_pool"] == 400
    assert r["set_reserved_current"] == 1 and r["unknown_pool_attribute"] == 1
    assert r["alloc_from_bad_pool"] == 400 and r["alloc_async_bad_stream"] == 400
    assert r["free_async_unknown"] == 1
    assert r["free_async_null"] == r["free_null"] == r["free_host_null"] == 0
    # IPC pools by POSIX file descriptor (mempool_ipc.py); fabric handles not.
    assert r["pool_ipc"] == 0
    assert r["pool_ipc_fabric"] == 801 and "cuMemPoolCreate" in result.stderr
    assert r["pool_bad_type"] == 1 and r["pool_bad_device"] == 101
    assert r["small_pool"] == 0 and r["small_pool_first"] == 0
    assert r["small_pool_second"] == 2  # CUDA_ERROR_OUT_OF_MEMORY
    assert r["small_pool_free"] == 0 and r["small_pool_double_free"] == 1
    assert r["small_pool_again"] == 0  # the freed block, reused
    # Destroyed with an allocation outstanding: that one is freed later.
    assert r["pool_destroy"] == 0 and r["pool_destroy_twice"] == 400
    assert r["free_after_pool_destroyed"] == 0


DRIVER_API_DIR = CUDA_DIR / "driver_api"


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
    name = ctypes.create_string_buffer(256)
    assert lib.cuDeviceGetName(name, 256, 0) == 0
    print(json.dumps({"sm": attr(16), "warp": attr(10), "threads": attr(1),
                      "major": attr(75), "minor": attr(76), "fp32_per_fp64": attr(87),
                      "cpus": os.cpu_count(), "name": name.value.decode()}))
""")


def test_device_attributes_describe_the_backend_device(libdir: str) -> None:
    result = subprocess.run([sys.executable, "-c", _ATTRIBUTES, libdir], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r["warp"] == 32 and r["threads"] == 1024
    assert (r["major"], r["minor"]) == (8, 9)
    assert r["fp32_per_fp64"] == 2  # numba's cuda.detect() printed 0
    # The CPU device's compute units are its cores.
    assert 1 <= r["sm"] <= r["cpus"]
    assert r["name"].startswith("zmlir ")  # a device of zmlir's


def test_passthrough_device_keeps_nvidias_name(libdir: str, fake_nvidia_driver: Path) -> None:
    """Programs look GPUs up by name (llm.c's table for its MFU printed -100%)."""
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    result = subprocess.run([sys.executable, "-c", _ATTRIBUTES, libdir], capture_output=True,
                            text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1])["name"] == "fake NVIDIA GPU"


# The C launch fast path (zmlir/runtime/cuda/fastpath.c): which launches it
# takes (zmlir_fast_launches counts them) and that everything else still gets
# the Python path's validation and results.
_FAST = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    lib.zmlir_fast_launches.restype = ctypes.c_ulonglong
    PTX = @ADD_SCALAR_PTX@
    r = {}
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    mod, f = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(mod), PTX) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(f), mod, b"add_scalar") == 0
    n = 64
    d = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(d), 4 * n) == 0
    assert lib.cuMemsetD32_v2(d, 0, n) == 0
    value = ctypes.c_uint32(1)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(d), ctypes.addressof(value))
    def launch(name, stream=None, block=n, shared=0, extra=None, fn=None):
        before = lib.zmlir_fast_launches()
        code = lib.cuLaunchKernel(fn or f, 1, 1, 1, block, 1, 1, shared, stream, params,
                                  extra)
        r[name] = [code, lib.zmlir_fast_launches() - before]
    def total():
        h = (ctypes.c_uint32 * n)()
        assert lib.cuCtxSynchronize() == 0
        assert lib.cuMemcpyDtoH_v2(h, d, 4 * n) == 0
        assert len(set(h)) == 1, list(h)
        return h[0]
    launch("legacy_stream")
    launch("per_thread_stream", stream=ctypes.c_void_p(2))
    s = ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(s), 0) == 0
    launch("created_stream", stream=s)
    cfg = (ctypes.c_uint * 7)(1, 1, 1, n, 1, 1, 0)
    class Config(ctypes.Structure):
        _fields_ = [("dims", ctypes.c_uint * 7), ("stream", ctypes.c_void_p),
                    ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]
    before = lib.zmlir_fast_launches()
    r["launch_ex"] = [lib.cuLaunchKernelEx(ctypes.byref(Config(cfg, None, None, 0)), f,
                                           params, None), lib.zmlir_fast_launches() - before]
    r["sum_after_fast"] = total()
    launch("bad_function", fn=ctypes.c_void_p(0xbad0))
    launch("stream_as_function", fn=s)
    launch("bad_stream", stream=ctypes.c_void_p(0xdead0))
    launch("block_too_large", block=2048)
    size = ctypes.c_size_t(12)
    extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(d), 2, ctypes.addressof(size), 0)
    launch("params_and_extra", extra=extra)
    launch("shared_too_large", shared=1 << 30)
    # Capture: the launch is recorded (the Python path; under the passthrough
    # NVIDIA's capture), then replayed by the graph.
    assert lib.cuStreamBeginCapture_v2(s, 0) == 0
    launch("captured", stream=s)
    launch("legacy_while_capturing")
    graph, exe = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuStreamEndCapture(s, ctypes.byref(graph)) == 0
    assert lib.cuGraphInstantiateWithFlags(ctypes.byref(exe), graph, 0) == 0
    assert lib.cuGraphLaunch(exe, s) == 0
    launch("after_capture", stream=s)
    assert lib.cuStreamDestroy_v2(s) == 0
    launch("destroyed_stream", stream=s)
    r["sum_after_slow"] = total()
    assert lib.cuCtxSetCurrent(None) == 0
    launch("no_context")
    assert lib.cuCtxSetCurrent(ctx) == 0
    launch("context_again")
    import threading
    def other_thread():
        assert lib.cuCtxSetCurrent(ctx) == 0
        launch("other_thread_first")
        launch("other_thread_second")
    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    r["sum"] = total()
    print(json.dumps(r))
""").replace("@ADD_SCALAR_PTX@", repr(ADD_SCALAR_PTX))


def _fast_probe(libdir: str, **env: str) -> tuple[dict[str, list[int]], str]:
    import os

    result = subprocess.run([sys.executable, "-c", _FAST, libdir], capture_output=True,
                            text=True, timeout=300, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_launch_fast_path_takes_registered_launches_only(libdir: str, backend: str,
                                                         fake_nvidia_driver: Path) -> None:
    # "cuda": the passthrough over a stand-in NVIDIA driver, kernels compiled
    # to NVPTX here; its launches run add_scalar on host memory.
    env = {"ZMLIR_BACKEND": backend}
    if backend == "cuda":
        env["ZMLIR_CUDA_DRIVER"] = str(fake_nvidia_driver)
    r, _ = _fast_probe(libdir, **env)
    # [CUresult, launches that took the C path]
    assert r["legacy_stream"] == [0, 1]
    assert r["per_thread_stream"] == [0, 1]
    assert r["created_stream"] == [0, 1]
    assert r["launch_ex"] == [0, 1]
    assert r["sum_after_fast"] == 4  # each fast launch added 1 to every element
    assert r["bad_function"] == [400, 0]  # CUDA_ERROR_INVALID_HANDLE, from the Python path
    assert r["stream_as_function"] == [400, 0]
    assert r["bad_stream"] == [400, 0]
    assert r["block_too_large"] == [1, 0]  # CUDA_ERROR_INVALID_VALUE
    assert r["params_and_extra"] == [1, 0]
    assert r["shared_too_large"] == [1, 0]
    # Recorded, not run: by the Python path, or by NVIDIA's capture from C.
    assert r["captured"] == [0, int(backend == "cuda")]
    assert r["legacy_while_capturing"] == [0, 0]  # runs, through Python while any capture is on
    assert r["after_capture"] == [0, 1]
    assert r["destroyed_stream"] == [400, 0]
    # 4 fast + legacy_while_capturing + the graph's replay + after_capture.
    assert r["sum_after_slow"] == 7
    assert r["no_context"] == [201, 0]  # CUDA_ERROR_INVALID_CONTEXT
    assert r["context_again"] == [0, 1]
    # A thread's first launch through the passthrough finds the real driver's
    # context not current in that thread: the Python path makes it current.
    assert r["other_thread_first"] == [0, 0 if backend == "cuda" else 1]
    assert r["other_thread_second"] == [0, 1]
    assert r["sum"] == 10


_FAST_F64 = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    lib.zmlir_fast_launches.restype = ctypes.c_ulonglong
    PTX = b'''
    .version 9.0
    .target sm_80
    .address_size 64
    .visible .entry add(.param .u64 p, .param .f64 v)
    {
      .reg .f64 %fd<3>; .reg .b64 %rd<4>; .reg .b32 %r<2>;
      ld.param.u64 %rd1, [p]; ld.param.f64 %fd1, [v];
      mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, 8; add.s64 %rd3, %rd1, %rd2;
      ld.global.f64 %fd2, [%rd3]; add.f64 %fd2, %fd2, %fd1; st.global.f64 [%rd3], %fd2;
      ret;
    }
    '''
    assert lib.cuInit(0) == 0
    ctx, mod, f = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    assert lib.cuModuleLoadData(ctypes.byref(mod), PTX) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(f), mod, b"add") == 0
    d = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(d), 8 * 32) == 0
    assert lib.cuMemsetD32_v2(d, 0, 64) == 0
    v = ctypes.c_double(1.5)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(d), ctypes.addressof(v))
    before = lib.zmlir_fast_launches()
    for _ in range(3):
        assert lib.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, params, None) == 0
    fast = lib.zmlir_fast_launches() - before
    h = (ctypes.c_double * 32)()
    assert lib.cuCtxSynchronize() == 0
    assert lib.cuMemcpyDtoH_v2(h, d, 8 * 32) == 0
    print(json.dumps({"fast": fast, "values": sorted(set(h))}))
""")


def test_launch_fast_path_takes_kernels_with_double_parameters(libdir: str) -> None:
    # numpy's dtype(None) is float64: `None in [float64, ...]` held, and
    # every kernel with an .f64 parameter took the Python path.
    result = subprocess.run([sys.executable, "-c", _FAST_F64, libdir], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r == {"fast": 3, "values": [4.5]}


@pytest.mark.parametrize("env", ["ZMLIR_FAST_LAUNCH", "ZMLIR_TRACE"])
def test_launch_fast_path_off_gives_the_same_results(libdir: str, env: str,
                                                     tmp_path: Path) -> None:
    value = "0" if env == "ZMLIR_FAST_LAUNCH" else str(tmp_path / "calls.jsonl")
    r, _ = _fast_probe(libdir, **{env: value})
    fast = _fast_probe(libdir)[0]
    assert all(counts[1] == 0 for key, counts in r.items() if isinstance(counts, list))
    assert {k: v[0] if isinstance(v, list) else v for k, v in r.items()} == \
        {k: v[0] if isinstance(v, list) else v for k, v in fast.items()}
    if env == "ZMLIR_TRACE":
        calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
        launches = [c for c in calls if c.get("api") == "cuLaunchKernel"]
        assert len(launches) == 17 and launches[0]["args"]["kernel"] == "add_scalar"



def test_trace_with_the_fast_path_on_holds_what_reached_python(libdir: str,
                                                              tmp_path: Path) -> None:
    # ZMLIR_TRACE_FAST_PATH=1: launches the C path took are not in the trace,
    # those it handed to Python (bad handles, the capture) are, with answers.
    trace = tmp_path / "calls.jsonl"
    r, _ = _fast_probe(libdir, ZMLIR_TRACE=str(trace), ZMLIR_TRACE_FAST_PATH="1")
    assert r == _fast_probe(libdir)[0]
    calls = [json.loads(line) for line in trace.read_text().splitlines()][1:]
    launches = [c for c in calls if c.get("api") == "cuLaunchKernel"]
    slow = sum(1 for v in r.values() if isinstance(v, list) and v[1] == 0)
    assert len(launches) == slow == 10
    assert [c["result"] for c in launches].count(400) == 4  # the handles it refused
    assert any(c.get("api") == "cuModuleLoadData" for c in calls)

# The event calls' C fast path (fastpath.c): under the passthrough (the
# stand-in NVIDIA driver, whose elapsed time is 1 ms per launch between two
# records) an event's record, query, synchronisation and elapsed time go to
# the real driver's event from its creation on (zmlir_fast_events counts
# them), until it is recorded into a capture; everything else takes the
# Python path with its answers, on OpenCL every call.
_EVENTS = _FAST[:_FAST.index("def launch(name")] + textwrap.dedent("""
    import threading
    lib.zmlir_fast_events.restype = ctypes.c_ulonglong
    def launch(stream=None):
        assert lib.cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, stream, params, None) == 0
    r["calls"] = {}  # how many calls of each function call() made
    def call(name, function, *args):  # [CUresult, event calls that took the C path]
        before = lib.zmlir_fast_events()
        code = getattr(lib, function)(*args)
        r[name] = [code, lib.zmlir_fast_events() - before]
        r["calls"][function] = r["calls"].get(function, 0) + 1
    ms = ctypes.c_float()
    def elapsed(name, a, b, function="cuEventElapsedTime"):
        ms.value = -1.0
        call(name, function, ctypes.byref(ms), a, b)
        r[name + "_ms"] = ms.value
    def event(flags=0):
        e = ctypes.c_void_p()
        assert lib.cuEventCreate(ctypes.byref(e), flags) == 0
        return e
    start, stop, untimed, fresh = event(), event(), event(2), event()
    call("query_unrecorded", "cuEventQuery", fresh)
    elapsed("elapsed_unrecorded", fresh, fresh)
    call("first_record", "cuEventRecord", start, None)
    launch()
    call("stop_first_record", "cuEventRecord", stop, None)
    elapsed("elapsed_first", start, stop)
    call("record_again", "cuEventRecord", start, None)
    launch(); launch(); launch()
    call("record_with_flags", "cuEventRecordWithFlags", stop, None, 0)
    call("record_external_outside_capture", "cuEventRecordWithFlags", stop, None, 1)
    call("synchronize", "cuEventSynchronize", stop)
    call("query", "cuEventQuery", stop)
    elapsed("elapsed", start, stop)
    elapsed("elapsed_v2", start, stop, "cuEventElapsedTime_v2")
    call("untimed_record", "cuEventRecord", untimed, None)
    call("untimed_record_again", "cuEventRecord", untimed, None)
    elapsed("elapsed_untimed", start, untimed)
    call("elapsed_null", "cuEventElapsedTime", None, start, stop)
    call("record_bad_event", "cuEventRecord", ctypes.c_void_p(0xbad0), None)
    s, s2 = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(s), 0) == 0
    assert lib.cuStreamCreate(ctypes.byref(s2), 0) == 0
    call("record_created_stream", "cuEventRecord", start, s)
    call("record_bad_stream", "cuEventRecord", start, ctypes.c_void_p(0xdead0))
    # A fork and a join through events in a capture: the recording is
    # Python's (a fork point), and the graph gets both kernels, one edge;
    # an external record is an event record node after both (3 edges), which
    # records the event at each of the graph's launches.
    assert lib.cuStreamBeginCapture_v2(s, 0) == 0
    launch(s)
    call("record_captured", "cuEventRecord", start, s)
    call("query_while_capturing", "cuEventQuery", untimed)
    assert lib.cuStreamWaitEvent(s2, start, 0) == 0
    launch(s2)
    call("record_join", "cuEventRecord", stop, s2)
    assert lib.cuStreamWaitEvent(s, stop, 0) == 0
    call("record_external", "cuEventRecordWithFlags", untimed, s, 1)
    graph, exe = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuStreamEndCapture(s, ctypes.byref(graph)) == 0
    count = ctypes.c_size_t()
    assert lib.cuGraphGetNodes(graph, None, ctypes.byref(count)) == 0
    nodes = (ctypes.c_void_p * count.value)()
    assert lib.cuGraphGetNodes(graph, nodes, ctypes.byref(count)) == 0
    kind = ctypes.c_int()
    r["graph_node_types"] = sorted(
        kind.value for node in nodes
        if lib.cuGraphNodeGetType(ctypes.c_void_p(node), ctypes.byref(kind)) == 0)
    assert lib.cuGraphGetEdges(graph, None, None, ctypes.byref(count)) == 0
    r["graph_edges"] = count.value
    assert lib.cuGraphInstantiateWithFlags(ctypes.byref(exe), graph, 0) == 0
    assert lib.cuGraphLaunch(exe, s) == 0
    call("untimed_after_graph", "cuEventQuery", untimed)
    call("after_capture_first", "cuEventRecord", start, None)  # Python's again
    launch()
    call("after_capture_second", "cuEventRecord", stop, None)
    call("after_capture_third", "cuEventRecord", stop, None)
    elapsed("elapsed_after_capture", start, stop)
    def other_thread():
        assert lib.cuCtxSetCurrent(ctx) == 0
        call("other_thread_first", "cuEventRecord", start, None)
        call("other_thread_second", "cuEventRecord", start, None)
    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert lib.cuCtxSetCurrent(None) == 0
    call("no_context", "cuEventQuery", start)
    assert lib.cuCtxSetCurrent(ctx) == 0
    call("context_again", "cuEventQuery", start)
    # A memory pool is settled at synchronisations: from its creation on,
    # cuEventSynchronize is Python's (but for the passthrough's default
    # pool, NVIDIA's own, which has nothing of ours to settle).
    pool = ctypes.c_void_p()
    assert lib.cuDeviceGetDefaultMemPool(ctypes.byref(pool), 0) == 0
    call("synchronize_with_pool", "cuEventSynchronize", stop)
    assert lib.cuEventDestroy_v2(stop) == 0
    call("record_destroyed", "cuEventRecord", stop, None)
    h = (ctypes.c_uint32 * n)()
    assert lib.cuCtxSynchronize() == 0
    assert lib.cuMemcpyDtoH_v2(h, d, 4 * n) == 0
    r["sum"] = h[0]
    print(json.dumps(r))
""")


def _probe(script: str, libdir: str, **env: str) -> dict[str, Any]:
    """What probe `script` printed last (JSON), run in a process of its own
    with `env` added to ours; it must exit cleanly."""
    result = subprocess.run([sys.executable, "-c", script, libdir], capture_output=True,
                            text=True, timeout=300, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _passthrough(fake_nvidia_driver: Path, **env: str) -> dict[str, str]:
    """The environment of the passthrough over the stand-in NVIDIA driver."""
    return {"ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver), **env}


def _events_probe(libdir: str, **env: str) -> dict[str, Any]:
    return _probe(_EVENTS, libdir, **env)


def _codes(r: dict[str, Any]) -> dict[str, Any]:
    """The probe's answers without the fast path's counts and the times."""
    return {k: v[0] if isinstance(v, list) else v for k, v in r.items() if not k.endswith("_ms")}


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_event_fast_path_takes_events_outside_captures(libdir: str, backend: str,
                                                       fake_nvidia_driver: Path) -> None:
    env = {"ZMLIR_BACKEND": backend}
    if backend == "cuda":
        env["ZMLIR_CUDA_DRIVER"] = str(fake_nvidia_driver)
    r = _events_probe(libdir, **env)
    fast = int(backend == "cuda")  # OpenCL: every event call is Python's
    # Never recorded: the real driver's never-recorded event answers.
    assert r["query_unrecorded"] == [0, fast]
    assert r["elapsed_unrecorded"] == [400, 0]  # CUDA_ERROR_INVALID_HANDLE
    # A first record is C's too: a program's first timed region holds no Python.
    assert r["first_record"] == [0, fast] and r["stop_first_record"] == [0, fast]
    if backend == "cuda":
        assert r["elapsed_first"] == [0, fast]
    else:  # the kernel between may still run: NVIDIA's CUDA_ERROR_NOT_READY then
        assert r["elapsed_first"] in ([0, 0], [600, 0])
    assert r["record_again"] == [0, fast]
    assert r["record_with_flags"] == [0, fast]
    # flags: Python's, with an H200's answer outside a capture (ILLEGAL_STATE)
    assert r["record_external_outside_capture"] == [401, 0]
    assert r["synchronize"] == [0, fast]
    assert r["query"] == [0, fast]
    assert r["elapsed"] == [0, fast] and r["elapsed_v2"] == [0, fast]
    if backend == "cuda":  # the real driver's times: 1 ms per launch between the records
        assert (r["elapsed_first_ms"], r["elapsed_ms"], r["elapsed_v2_ms"]) == (1.0, 3.0, 3.0)
        assert r["elapsed_after_capture_ms"] == 1.0
    else:  # the markers' device times
        assert r["elapsed_ms"] >= 0.0
        assert r["elapsed_first_ms"] >= 0.0 or r["elapsed_first"][0] == 600
    assert r["untimed_record"] == [0, fast] and r["untimed_record_again"] == [0, fast]
    assert r["elapsed_untimed"] == [400, 0]  # CU_EVENT_DISABLE_TIMING: Python's answer
    assert r["elapsed_null"] == [400, 0]  # an H200 answers CUDA_ERROR_INVALID_HANDLE
    assert r["record_bad_event"] == [400, 0]
    assert r["record_created_stream"] == [0, fast]
    assert r["record_bad_stream"] == [400, 0]
    assert r["record_captured"] == [0, 0] and r["record_join"] == [0, 0]
    assert r["query_while_capturing"] == [0, 0]
    assert r["record_external"] == [0, 0]
    # Two kernel nodes and an event record node (CU_GRAPH_NODE_TYPE_EVENT_RECORD).
    assert (r["graph_node_types"], r["graph_edges"]) == ([0, 0, 7], 3)
    # On OpenCL the graph's and the launch's kernels may still run: an H200's
    # answer then is CUDA_ERROR_NOT_READY.
    ready = [[0, fast]] if backend == "cuda" else [[0, 0], [600, 0]]
    assert r["untimed_after_graph"] in ready
    # Both were forgotten when recorded into the capture: Python's first again.
    assert r["after_capture_first"] == [0, 0] and r["after_capture_second"] == [0, 0]
    assert r["after_capture_third"] == [0, fast] and r["elapsed_after_capture"] in ready
    # A thread's first record through the passthrough finds the real context
    # not current in that thread (201): the Python path makes it current.
    assert r["other_thread_first"] == [0, 0] and r["other_thread_second"] == [0, fast]
    # The kernel launched after the capture may still run on OpenCL (above).
    assert r["no_context"] in ([[0, 0]] if backend == "cuda" else ready)
    assert r["context_again"] in ready
    assert r["synchronize_with_pool"] == ([0, fast] if backend == "cuda" else [0, 0])
    assert r["record_destroyed"] == [400, 0]
    assert r["sum"] == 7  # 5 launches and the graph's 2


@pytest.mark.parametrize("env", ["ZMLIR_FAST_LAUNCH", "ZMLIR_TRACE"])
def test_event_fast_path_off_gives_the_same_answers(libdir: str, env: str, tmp_path: Path,
                                                    fake_nvidia_driver: Path) -> None:
    passthrough = _passthrough(fake_nvidia_driver)
    value = "0" if env == "ZMLIR_FAST_LAUNCH" else str(tmp_path / "calls.jsonl")
    r = _events_probe(libdir, **passthrough, **{env: value})
    fast = _events_probe(libdir, **passthrough)
    assert all(v[1] == 0 for v in r.values() if isinstance(v, list))
    assert _codes(r) == _codes(fast)
    assert {k: v for k, v in r.items() if k.endswith("_ms")} == \
        {k: v for k, v in fast.items() if k.endswith("_ms")}
    if env == "ZMLIR_TRACE":  # every event call is in the trace, with its answer
        calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
        names = [c.get("api") for c in calls]
        assert r["calls"]["cuEventRecord"] > 10
        for function, count in r["calls"].items():
            assert names.count(function) == count, function
        bad = [c for c in calls if c.get("api") == "cuEventRecord" and c.get("result") == 400]
        assert len(bad) == 3


# Streams through the passthrough (the stand-in NVIDIA driver, whose streams
# count the launches, event records and waits they were given): a created
# stream is one of the real driver's with its priority, and its kernels and
# event records go there, on the C path and on Python's alike, so that
# streams run at once; a wait on an event is the real driver's. The
# occupancy of a registered function is the real driver's, from C.
_STREAMS = _FAST[:_FAST.index("def launch(name")] + textwrap.dedent("""
    import os
    fake = ctypes.CDLL(os.environ["ZMLIR_CUDA_DRIVER"])
    lib.zmlir_fast_queries.restype = ctypes.c_ulonglong
    def work(stream):  # the stand-in's priority, launches, records and waits of it
        out = (ctypes.c_ulonglong * 4)()
        assert fake.fake_stream_work(stream, out) == 0
        return [ctypes.c_longlong(out[0]).value, *out[1:]]
    def launch(stream):
        assert lib.cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, stream, params, None) == 0
    lo, hi = ctypes.c_int(), ctypes.c_int()
    assert lib.cuCtxGetStreamPriorityRange(ctypes.byref(lo), ctypes.byref(hi)) == 0
    urgent, plain = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuStreamCreateWithPriority(ctypes.byref(urgent), 1, hi.value) == 0
    assert lib.cuStreamCreate(ctypes.byref(plain), 0) == 0
    e = ctypes.c_void_p()
    assert lib.cuEventCreate(ctypes.byref(e), 0) == 0
    launch(urgent); launch(urgent); launch(plain); launch(None)
    assert lib.cuEventRecord(e, urgent) == 0
    assert lib.cuStreamWaitEvent(plain, e, 0) == 0
    launch(plain)
    r["query"] = lib.cuStreamQuery(urgent)
    assert lib.cuStreamSynchronize(plain) == 0
    r["urgent"], r["plain"] = work(urgent), work(plain)
    r["priority"] = hi.value
    h = (ctypes.c_uint32 * n)()
    assert lib.cuMemcpyDtoH_v2(h, d, 4 * n) == 0
    r["sum"] = h[0]
    blocks = ctypes.c_int()
    before = lib.zmlir_fast_queries()
    r["occupancy"] = [lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        ctypes.byref(blocks), f, 64, 2048), blocks.value]
    r["occupancy_flags"] = [lib.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        ctypes.byref(blocks), f, 64, 1024, 1), blocks.value]
    r["occupancy_bad_block"] = lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        ctypes.byref(blocks), f, 0, 0)
    r["occupancy_in_c"] = lib.zmlir_fast_queries() - before
    print(json.dumps(r))
""")


@pytest.mark.parametrize("fast", ["1", "0"])
def test_passthrough_streams_run_their_kernels_in_the_real_driver(
        libdir: str, fast: str, fake_nvidia_driver: Path) -> None:
    r = _probe(_STREAMS, libdir, **_passthrough(fake_nvidia_driver, ZMLIR_FAST_LAUNCH=fast))
    assert r["priority"] < 0  # the range's greatest
    # [priority, launches, event records, waits]; the urgent stream is a
    # non-blocking one: the Python path's launch on the NULL stream is
    # fenced with it (an event recorded in it, a wait on the NULL stream's).
    fenced = 1 if fast == "0" else 0
    assert r["urgent"] == [r["priority"], 2, 1 + fenced, fenced]
    assert r["plain"] == [0, 2, 0, 1]
    assert r["query"] == 0 and r["sum"] == 5
    # The stand-in's 2 blocks and one per KiB asked; add_scalar has no static
    # shared memory. A block of 0 threads: Python's CUDA_ERROR_INVALID_VALUE.
    assert r["occupancy"] == [0, 4] and r["occupancy_flags"] == [0, 3]
    assert r["occupancy_bad_block"] == 1
    assert r["occupancy_in_c"] == (2 if fast == "1" else 0)


# A non-blocking stream is NVIDIA's non-blocking stream (its work overlaps
# the legacy stream's as natively); our own work on NVIDIA's NULL stream (here
# the Python path's blocking copy) is ordered with it by events both ways:
# the NULL stream waits for it, and it for the NULL stream. A blocking stream
# orders itself and takes no event; the NULL stream's own launches none.
_NON_BLOCKING = _FAST[:_FAST.index("def launch(name")] + textwrap.dedent("""
    import os
    fake = ctypes.CDLL(os.environ["ZMLIR_CUDA_DRIVER"])
    fake.fake_null_waits.restype = ctypes.c_ulonglong
    def waits(stream):
        out = (ctypes.c_ulonglong * 4)()
        assert fake.fake_stream_work(stream, out) == 0
        return out[3]
    detached, blocking = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(detached), 1) == 0
    assert lib.cuStreamCreate(ctypes.byref(blocking), 0) == 0
    r["flags"] = [fake.fake_stream_flags(detached), fake.fake_stream_flags(blocking)]
    out = ctypes.c_uint()
    assert lib.cuStreamGetFlags(detached, ctypes.byref(out)) == 0
    r["reported"] = out.value
    def counts():
        return [fake.fake_null_waits(), waits(detached), waits(blocking)]
    before = counts()
    assert lib.cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, None, params, None) == 0
    r["null_launch"] = [a - b for a, b in zip(counts(), before)]
    before = counts()
    h = (ctypes.c_uint32 * n)()
    assert lib.cuMemcpyDtoH_v2(h, d, 4 * n) == 0
    r["python_copy"] = [a - b for a, b in zip(counts(), before)]
    assert lib.cuStreamDestroy_v2(detached) == 0
    before = [fake.fake_null_waits(), waits(blocking)]
    assert lib.cuMemcpyDtoH_v2(h, d, 4 * n) == 0
    r["after_destroy"] = [fake.fake_null_waits() - before[0], waits(blocking) - before[1]]
    print(json.dumps(r))
""")


def test_passthrough_non_blocking_streams_are_nvidias(libdir: str,
                                                      fake_nvidia_driver: Path) -> None:
    # ZMLIR_FAST_LAUNCH=0: every call is the Python path's.
    r = _probe(_NON_BLOCKING, libdir, **_passthrough(fake_nvidia_driver, ZMLIR_FAST_LAUNCH="0"))
    assert r["flags"] == [1, 0] and r["reported"] == 1
    # [the NULL stream's waits, the non-blocking stream's, the blocking one's]
    assert r["null_launch"] == [1, 1, 0]  # the Python path's launch on the NULL stream
    assert r["python_copy"] == [1, 1, 0]
    assert r["after_destroy"] == [0, 0]


# Asynchronous copies through the passthrough: NVIDIA's, on the stream's own
# stream (the stand-in counts them per stream), the host not waiting for
# them (fastpath.c); a copy NVIDIA's refuses takes the Python path, which
# reports it; a capture records them. With the fast path off every copy is
# the Python path's blocking one, with the same results.
_ASYNC_COPIES = _FAST[:_FAST.index("def launch(name")] + textwrap.dedent("""
    import os
    fake = ctypes.CDLL(os.environ["ZMLIR_CUDA_DRIVER"])
    fake.fake_stream_copies.restype = ctypes.c_ulonglong
    s = ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(s), 1) == 0
    src = (ctypes.c_uint32 * n)(*range(n))
    back = (ctypes.c_uint32 * n)()
    e = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(e), 4 * n) == 0
    r["htod"] = lib.cuMemcpyHtoDAsync_v2(d, src, 4 * n, s)
    r["dtod"] = lib.cuMemcpyDtoDAsync_v2(e, d, 4 * n, s)
    r["unified"] = lib.cuMemcpyAsync(d, e, 4 * n, None)
    r["dtoh"] = lib.cuMemcpyDtoHAsync_v2(back, d, 4 * n, s)
    r["null_destination"] = lib.cuMemcpyDtoDAsync_v2(ctypes.c_uint64(0), d, 4 * n, None)
    fake.fake_stream_fills.restype = ctypes.c_ulonglong
    r["fill"] = [lib.cuMemsetD32Async(e, 7, n, s), fake.fake_stream_fills(s)]
    assert lib.cuStreamSynchronize(s) == 0
    r["values"] = list(back)[:3] + [back[n - 1]]
    r["copies"] = [fake.fake_stream_copies(s), fake.fake_stream_copies(None)]
    assert lib.cuStreamBeginCapture_v2(s, 0) == 0
    r["captured"] = lib.cuMemcpyHtoDAsync_v2(d, back, 4 * n, s)
    graph = ctypes.c_void_p()
    assert lib.cuStreamEndCapture(s, ctypes.byref(graph)) == 0
    r["after_capture"] = [fake.fake_stream_copies(s), fake.fake_stream_copies(None)]
    print(json.dumps(r))
""")


@pytest.mark.parametrize("fast", ["1", "0"])
def test_passthrough_async_copies_are_nvidias_on_their_stream(
        libdir: str, fast: str, fake_nvidia_driver: Path) -> None:
    r = _probe(_ASYNC_COPIES, libdir,
               **_passthrough(fake_nvidia_driver, ZMLIR_FAST_LAUNCH=fast))
    assert [r["htod"], r["dtod"], r["unified"], r["dtoh"]] == [0, 0, 0, 0]
    assert r["null_destination"] == 1  # CUDA_ERROR_INVALID_VALUE
    assert r["values"] == [0, 1, 2, 63]
    # [on the created stream, on the NULL stream]: 3 and 1 of NVIDIA's
    # asynchronous copies; the Python path's are its blocking ones.
    assert r["copies"] == ([3, 1] if fast == "1" else [0, 0])
    assert r["captured"] == 0 and r["after_capture"] == r["copies"]
    # A fill in the stream: NVIDIA's on the stream's own (the C path).
    assert r["fill"] == [0, 1 if fast == "1" else 0]


# A kernel opted in to more than 48 KiB of dynamic shared memory
# (cudaFuncSetAttribute, inside immaTensorCoreGemm's timed region): under the
# passthrough NVIDIA's function is opted in at once, in C (through Python it
# took 67-89 us of the region on an H100, 12-16 natively), so that the launch
# that follows is fastpath.c's; the same value again changes nothing; the
# attribute reads back; a smaller value is NVIDIA's too, and a launch above it
# is refused.
_SHARED_OPTIN = _FAST[:_FAST.index("def launch(name")] + textwrap.dedent("""
    import os
    fake = ctypes.CDLL(os.environ["ZMLIR_CUDA_DRIVER"])
    fake.fake_shared_optins.restype = ctypes.c_ulonglong
    lib.zmlir_fast_queries.restype = ctypes.c_ulonglong
    window = 64 * 1024
    def launch(shared=window):
        before = lib.zmlir_fast_launches()
        code = lib.cuLaunchKernel(f, 1, 1, 1, n, 1, 1, shared, None, params, None)
        return [code, lib.zmlir_fast_launches() - before]
    def set_optin(value):
        before = lib.zmlir_fast_queries()
        code = lib.cuFuncSetAttribute(f, 8, value)
        return [code, fake.fake_shared_optins(), lib.zmlir_fast_queries() - before]
    r["set"] = set_optin(window)
    r["launch"] = launch()
    r["set_again"] = set_optin(window)
    r["launch_again"] = launch()
    v = ctypes.c_int()
    r["read_back"] = [lib.cuFuncGetAttribute(ctypes.byref(v), 8, f), v.value]
    r["lower"] = set_optin(window // 2)
    r["launch_above"] = launch()
    r["launch_within"] = launch(window // 2)
    h = (ctypes.c_uint32 * n)()
    assert lib.cuCtxSynchronize() == 0
    assert lib.cuMemcpyDtoH_v2(h, d, 4 * n) == 0
    r["sum"] = h[0]
    print(json.dumps(r))
""")


def test_passthrough_shared_optin_leaves_the_launch_on_the_fast_path(
        libdir: str, fake_nvidia_driver: Path) -> None:
    r = _probe(_SHARED_OPTIN, libdir, **_passthrough(fake_nvidia_driver))
    # [result, NVIDIA's opt-ins so far, answered in C]
    assert r["set"] == [0, 1, 1] and r["set_again"] == [0, 1, 1]
    assert r["launch"] == [0, 1] and r["launch_again"] == [0, 1]
    assert r["read_back"] == [0, 64 * 1024]
    assert r["lower"] == [0, 2, 1]
    assert r["launch_above"] == [1, 0]  # CUDA_ERROR_INVALID_VALUE, from Python
    assert r["launch_within"] == [0, 1]
    assert r["sum"] == 3


# A block freed in a created stream (cuMemFreeAsync) is pending on that
# stream, which the pool asks NVIDIA's driver about at synchronisations;
# once the stream is destroyed nothing may ask of it any more (NVIDIA's
# driver crashed reading a destroyed stream: graphMemoryNodes on an H100;
# the stand-in answers CUDA_ERROR_INVALID_HANDLE).
_DESTROYED_STREAM_POOL = _FAST[:_FAST.index("def launch(name")] + textwrap.dedent("""
    import os
    fake = ctypes.CDLL(os.environ["ZMLIR_CUDA_DRIVER"])
    fake.fake_managed_allocations.restype = ctypes.c_ulonglong
    s = ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(s), 1) == 0
    p = ctypes.c_uint64()
    managed = fake.fake_managed_allocations()
    assert lib.cuMemAllocAsync(ctypes.byref(p), 4096, s) == 0
    r["managed"] = fake.fake_managed_allocations() - managed  # NVIDIA's device memory
    assert lib.cuMemFreeAsync(p, s) == 0
    r["destroy"] = lib.cuStreamDestroy_v2(s)
    r["synchronize"] = lib.cuCtxSynchronize()
    q = ctypes.c_uint64()
    r["alloc_again"] = [lib.cuMemAllocAsync(ctypes.byref(q), 4096, None), q.value == p.value]
    r["stream_synchronize"] = lib.cuStreamSynchronize(None)
    print(json.dumps(r))
""")


def test_passthrough_pool_forgets_a_destroyed_stream(libdir: str,
                                                    fake_nvidia_driver: Path) -> None:
    r = _probe(_DESTROYED_STREAM_POOL, libdir, **_passthrough(fake_nvidia_driver))
    # The block is free once the stream's work is done: taken again.
    assert r == {"managed": 0, "destroy": 0, "synchronize": 0, "alloc_again": [0, True],
                 "stream_synchronize": 0}, r


# Cooperative launches: through the passthrough (a stand-in NVIDIA driver that
# allows 2 resident blocks on each of its 4 multiprocessors), and refused on
# the OpenCL CPU backend, which reports the attribute 0.
_COOPERATIVE = _FAST[:_FAST.index("r = {}")] + textwrap.dedent("""
    import os
    r = {}
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    mod, f = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(mod), PTX) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(f), mod, b"add_scalar") == 0
    v = ctypes.c_int()
    assert lib.cuDeviceGetAttribute(ctypes.byref(v), 95, 0) == 0
    r["attribute"] = v.value
    assert lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(v), f, 32, 0) == 0
    r["occupancy"] = v.value
    d = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(d), 128) == 0
    assert lib.cuMemsetD32_v2(d, 0, 32) == 0
    value = ctypes.c_uint32(3)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(d), ctypes.addressof(value))
    def coop(grid):
        return lib.cuLaunchCooperativeKernel(f, grid, 1, 1, 32, 1, 1, 0, None, params)
    r["grid_8"] = coop(8)
    r["grid_9"] = coop(9)
    assert lib.cuDeviceGetAttribute(ctypes.byref(v), 16, 0) == 0  # MULTIPROCESSOR_COUNT
    r["sms"] = v.value
    r["grid_fit"] = coop(r["occupancy"] * r["sms"])
    r["grid_over"] = coop(r["occupancy"] * r["sms"] + 1)
    class Attr(ctypes.Structure):
        _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4),
                    ("value", ctypes.c_uint * 16)]
    class Config(ctypes.Structure):
        _fields_ = [("dims", ctypes.c_uint * 7), ("stream", ctypes.c_void_p),
                    ("attrs", ctypes.POINTER(Attr)), ("numAttrs", ctypes.c_uint)]
    def ex(*attrs):
        array = (Attr * len(attrs))(*[Attr(i, b"", (ctypes.c_uint * 16)(*v)) for i, v in attrs])
        config = Config((ctypes.c_uint * 7)(2, 1, 1, 32, 1, 1, 0), None, array, len(attrs))
        return lib.cuLaunchKernelEx(ctypes.byref(config), f, params, None)
    r["ex_cooperative"] = ex((2, [1]))
    r["ex_priority"] = ex((8, [1]))
    r["ex_cluster_1"] = ex((4, [1, 1, 1]))
    r["ex_cluster_2"] = ex((4, [2, 1, 1]))
    r["ex_unknown"] = ex((99, [0]))
    r["ex_cluster_3"] = ex((4, [3, 1, 1]))  # the grid of 2 is not whole clusters
    # Clusters with the arguments in one buffer (`extra`), as NVIDIA's
    # cuBLASLt launches its sm_90 GEMMs.
    import struct
    packed = ctypes.create_string_buffer(struct.pack("<QI4x", d.value, 3))
    packed_size = ctypes.c_size_t(16)
    extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(packed), 2,
                                  ctypes.addressof(packed_size), 0)
    array = (Attr * 1)(Attr(4, b"", (ctypes.c_uint * 16)(2, 1, 1)))
    config = Config((ctypes.c_uint * 7)(2, 1, 1, 32, 1, 1, 0), None, array, 1)
    r["ex_cluster_extra"] = lib.cuLaunchKernelEx(ctypes.byref(config), f, None, extra)
    assert lib.cuDeviceGetAttribute(ctypes.byref(v), 120, 0) == 0  # CLUSTER_LAUNCH
    r["cluster_attribute"] = v.value
    config = Config((ctypes.c_uint * 7)(2, 1, 1, 32, 1, 1, 0), ctypes.c_void_p(0x5),
                    (Attr * 1)(Attr(4, b"", (ctypes.c_uint * 16)(2, 1, 1))), 1)
    v.value = 0
    r["max_clusters"] = [lib.cuOccupancyMaxActiveClusters(ctypes.byref(v), f,
                                                          ctypes.byref(config)), v.value]
    h = (ctypes.c_uint32 * 32)()
    assert lib.cuCtxSynchronize() == 0
    assert lib.cuMemcpyDtoH_v2(h, d, 128) == 0
    r["value"] = h[0]
    offset, size = ctypes.c_size_t(), ctypes.c_size_t()
    r["param_info"] = [[lib.cuFuncGetParamInfo(f, i, ctypes.byref(offset), ctypes.byref(size)),
                        offset.value, size.value] for i in range(3)]
    class Location(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]
    r["prefetch"] = lib.cuMemPrefetchAsync_v2(d, 128, Location(1, 0), 0, None)
    r["prefetch_past_end"] = lib.cuMemPrefetchAsync_v2(d, 129, Location(1, 0), 0, None)
    r["prefetch_bad_device"] = lib.cuMemPrefetchAsync_v2(d, 128, Location(1, 7), 0, None)
    r["advise"] = lib.cuMemAdvise_v2(d, 128, 1, Location(1, 0))
    r["advise_unknown"] = lib.cuMemAdvise_v2(d, 128, 99, Location(1, 0))
    e = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(e), 128) == 0
    r["peer_copy"] = lib.cuMemcpyPeer(e, ctx, d, ctx, 128)
    r["peer_copy_bad_context"] = lib.cuMemcpyPeer(e, ctypes.c_void_p(0xbad0), d, ctx, 128)
    h2 = (ctypes.c_uint32 * 32)()
    assert lib.cuMemcpyDtoH_v2(h2, e, 128) == 0
    r["peer_value"] = h2[0]
    s = ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(s), 0) == 0
    attr = (ctypes.c_int * 16)(-1)
    r["stream_set_priority"] = lib.cuStreamSetAttribute(s, 8, attr)
    out = (ctypes.c_int * 16)()
    r["stream_get_priority"] = [lib.cuStreamGetAttribute(s, 8, out), out[0]]
    r["stream_get_unknown"] = lib.cuStreamGetAttribute(s, 4, out)
    r["graph_upload_bad"] = lib.cuGraphUpload(ctypes.c_void_p(0xbad0), s)
    fake = os.environ.get("ZMLIR_CUDA_DRIVER")
    if fake:
        r["cooperative_launches"] = ctypes.CDLL(fake).fake_cooperative_launches()
        r["cluster_launches"] = ctypes.CDLL(fake).fake_cluster_launches()
    print(json.dumps(r))
""")


def test_real_driver_errors_reach_the_application(libdir: str,
                                                 fake_nvidia_driver: Path) -> None:
    # A fault in a kernel under NVIDIA's driver (trap: CUDA_ERROR_LAUNCH_FAILED,
    # 719) must come back as the driver's own code, not as an internal error.
    import os

    probe = _FAST[:_FAST.index("mod, f = ")] + "print(lib.cuCtxSynchronize())\n"
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver),
           "FAKE_SYNC_RESULT": "719"}
    result = subprocess.run([sys.executable, "-c", probe, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["719"]
    assert "internal error" not in result.stderr


_NATIVE = textwrap.dedent("""
    import ctypes, json, struct, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    PTX = "\\n".join([
        ".version 9.0", ".target sm_120", ".address_size 64",
        ".visible .entry add_scalar(.param .u64 p, .param .u32 v)", "{",
        "  .reg .b32 %r<5>; .reg .b64 %rd<4>;",
        "  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v];",
        "  mov.u32 %r2, %tid.x;", "  mul.wide.u32 %rd2, %r2, 4;",
        "  add.s64 %rd3, %rd1, %rd2;", "  ld.global.u32 %r3, [%rd3];",
        "  add.s32 %r4, %r3, %r1;", "  st.global.u32 [%rd3], %r4;", "  ret;", "}", ""
    ]).encode() + bytes(1)
    elf = bytes([0x7f]) + b"ELF" + bytes(60)
    def entry(kind, sm, payload):
        return struct.pack("<HHIIIIIIIIIQQQ", kind, 0x101, 64, len(payload), 0, len(payload),
                           0, 0, sm, 0, 0, 0x11, 0, len(payload)) + payload
    def fatbin(*entries):
        body = b"".join(entries)
        return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body
    images = {"cubin": elf, "fatbin": fatbin(entry(2, 90, elf)),
              # NVIDIA's libraries: SASS for the GPU and PTX for a newer one.
              "fatbin_newer_ptx": fatbin(entry(2, 90, elf), entry(1, 120, PTX))}
    r = {}
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    # A private table of NVIDIA's (cuBLAS asks for this one): ours alone
    # answer, on every backend. NVIDIA's own, handed out under the
    # passthrough, crashed NVIDIA's cuFFT (its functions take NVIDIA's
    # objects, not ours).
    table = ctypes.c_void_p()
    code = lib.cuGetExportTable(ctypes.byref(table),
                                bytes.fromhex("f8cff95121468b4eb9e2fb469e7c0dd9"))
    r["vendor_table"] = [code, table.value or 0]
    for kind, image in images.items():
        mod, f, g = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        r[kind] = out = {"load": lib.cuModuleLoadData(ctypes.byref(mod), image)}
        if out["load"]:
            continue
        assert lib.cuModuleGetFunction(ctypes.byref(f), mod, b"add_scalar") == 0
        out["missing"] = lib.cuModuleGetFunction(ctypes.byref(g), mod, b"other")
        value = ctypes.c_int()
        assert lib.cuFuncGetAttribute(ctypes.byref(value), 1, f) == 0
        out["shared_size"] = value.value
        offset, size = ctypes.c_size_t(), ctypes.c_size_t()
        assert lib.cuFuncGetParamInfo(f, 1, ctypes.byref(offset), ctypes.byref(size)) == 0
        out["param1"] = [offset.value, size.value]
        n = 32
        d = ctypes.c_uint64()
        assert lib.cuMemAlloc_v2(ctypes.byref(d), 4 * n) == 0
        assert lib.cuMemsetD32_v2(d, 5, n) == 0
        v = ctypes.c_uint32(3)
        params = (ctypes.c_void_p * 2)(ctypes.addressof(d), ctypes.addressof(v))
        out["launch"] = lib.cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, None, params, None)
        h = (ctypes.c_uint32 * n)()
        assert lib.cuCtxSynchronize() == 0
        assert lib.cuMemcpyDtoH_v2(h, d, 4 * n) == 0
        out["values"] = sorted(set(h))
        if kind == "cubin":
            assert lib.cuFuncSetAttribute(f, 9, 50) == 0
            assert lib.cuFuncGetAttribute(ctypes.byref(value), 9, f) == 0
            out["carveout"] = value.value
            # NVIDIA's cuBLAS opts its kernel in, then asks its occupancy
            # (fastpath.c asks NVIDIA's): the opt-in is NVIDIA's by then.
            assert lib.cuKernelSetAttribute(8, 90000, f, 0) == 0
            blocks = ctypes.c_int()
            out["occupancy_opted_in"] = [
                lib.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                    ctypes.byref(blocks), f, 32, 90000, 0), blocks.value]
        assert lib.cuModuleUnload(mod) == 0
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_machine_code_runs_where_the_backend_runs_it(libdir: str, backend: str,
                                                      fake_nvidia_driver: Path) -> None:
    # An image with NVIDIA machine code for the GPU and no PTX we load
    # (NVIDIA's libraries, SASS-only builds): loaded as it is through the
    # passthrough, its kernels described by NVIDIA's driver (native.py);
    # CUDA_ERROR_NO_BINARY_FOR_GPU elsewhere. PTX for a newer GPU beside the
    # SASS is not taken where the SASS runs.
    env = {**os.environ, "ZMLIR_BACKEND": backend, "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    result = subprocess.run([sys.executable, "-c", _NATIVE, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    ran = {"load": 0, "missing": 500, "param1": [8, 4], "launch": 0, "values": [8]}
    if backend == "opencl":
        assert r["vendor_table"] == [1, 0]  # CUDA_ERROR_INVALID_VALUE: no such table
        assert r["cubin"] == r["fatbin"] == {"load": 209}  # NO_BINARY_FOR_GPU
        assert r["fatbin_newer_ptx"] == {**ran, "shared_size": 0}  # its PTX, compiled here
        return
    assert r["vendor_table"] == [1, 0]
    # NVIDIA's answer (the stand-in's 1234), not our compiler's.
    assert r["cubin"] == {**ran, "shared_size": 1234, "carveout": 50,
                          "occupancy_opted_in": [0, 2 + 90000 // 1024]}
    assert r["fatbin"] == r["fatbin_newer_ptx"] == {**ran, "shared_size": 1234}


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_malloc_heap_limit(libdir: str, backend: str, fake_nvidia_driver: Path) -> None:
    # CU_LIMIT_MALLOC_HEAP_SIZE: the driver's own heap on the CPU backend
    # (cuda/heap.py); under the passthrough NVIDIA's, whose malloc NVPTX
    # modules call (the stand-in rounds to 1 KiB).
    import os

    probe = _FAST[:_FAST.index("mod, f = ")] + textwrap.dedent("""
        size = ctypes.c_size_t()
        print(lib.cuCtxGetLimit(ctypes.byref(size), 2), size.value)
        print(lib.cuCtxSetLimit(2, ctypes.c_size_t(3000000)))
        print(lib.cuCtxGetLimit(ctypes.byref(size), 2), size.value)
    """)
    env = {**os.environ, "ZMLIR_BACKEND": backend}
    if backend == "cuda":
        env["ZMLIR_CUDA_DRIVER"] = str(fake_nvidia_driver)
    result = subprocess.run([sys.executable, "-c", probe, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    set_to = 3000000 if backend == "opencl" else 3000000 + 1024 - 3000000 % 1024
    assert result.stdout.split() == ["0", str(8 << 20), "0", "0", str(set_to)]


@pytest.mark.parametrize("busy", [False, True])
def test_stream_query_asks_nvidias_queue(libdir: str, busy: bool,
                                         fake_nvidia_driver: Path) -> None:
    # Under the passthrough launches are NVIDIA's and return while their
    # kernels run, unwatched by our driver: cuStreamQuery is NOT_READY while
    # NVIDIA's NULL stream is (the stand-in's, under FAKE_STREAM_BUSY).
    import os

    probe = _FAST[:_FAST.index("mod, f = ")] + textwrap.dedent("""
        print(lib.cuStreamQuery(None))
    """)
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    if busy:
        env["FAKE_STREAM_BUSY"] = "1"
    result = subprocess.run([sys.executable, "-c", probe, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["600" if busy else "0"]


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_stack_size_limit(libdir: str, backend: str, fake_nvidia_driver: Path) -> None:
    # CU_LIMIT_STACK_SIZE: the driver's software stacks on the CPU backend
    # (cuda/stacks.py, rounded to 16 as an H200 does); under the passthrough
    # NVIDIA's, which NVPTX modules' local memory is on (the stand-in
    # rounds to 256 bytes).
    import os

    probe = _FAST[:_FAST.index("mod, f = ")] + textwrap.dedent("""
        size = ctypes.c_size_t()
        print(lib.cuCtxGetLimit(ctypes.byref(size), 0), size.value)
        print(lib.cuCtxSetLimit(0, ctypes.c_size_t(3000)))
        print(lib.cuCtxGetLimit(ctypes.byref(size), 0), size.value)
    """)
    env = {**os.environ, "ZMLIR_BACKEND": backend}
    if backend == "cuda":
        env["ZMLIR_CUDA_DRIVER"] = str(fake_nvidia_driver)
    result = subprocess.run([sys.executable, "-c", probe, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    set_to = 3008 if backend == "opencl" else 3072
    assert result.stdout.split() == ["0", "1024", "0", "0", str(set_to)]


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_cooperative_launch(libdir: str, backend: str, fake_nvidia_driver: Path) -> None:
    import os

    env = {**os.environ, "ZMLIR_BACKEND": backend}
    if backend == "cuda":
        env["ZMLIR_CUDA_DRIVER"] = str(fake_nvidia_driver)
        # The probe reads the stand-in's counter: the copy the driver loaded
        # only if the driver shares the host's namespace (docs/python-hosts.md).
        env["ZMLIR_LINK_NAMESPACE_MODE"] = "shared"
    result = subprocess.run([sys.executable, "-c", _COOPERATIVE, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r["ex_priority"] == 0 and r["ex_cluster_1"] == 0  # hints; clusters of one block
    assert r["ex_unknown"] == 801 and "launch attribute 99" in result.stderr
    # add_scalar(u64 p, u32 v): offsets in the packed buffer; no third parameter.
    assert r["param_info"] == [[0, 0, 8], [0, 8, 4], [1, 8, 4]]
    assert r["prefetch"] == 0 and r["advise"] == 0
    assert r["prefetch_past_end"] == 1 and r["prefetch_bad_device"] == 101
    assert r["advise_unknown"] == 1
    assert r["peer_copy"] == 0 and r["peer_value"] == r["value"]
    assert r["peer_copy_bad_context"] == 400
    assert r["stream_set_priority"] == 0 and r["stream_get_priority"] == [0, -1]
    assert r["stream_get_unknown"] == 1  # clusters are launch attributes, not stream ones
    # NVIDIA's driver dereferences a bogus CUgraphExec (SIGSEGV on the H200);
    # ours refuses it as every bad graph handle: CUDA_ERROR_INVALID_VALUE.
    assert r["graph_upload_bad"] == 1
    if backend == "cuda":
        assert r["attribute"] == 1 and r["occupancy"] == 2  # the real driver's answers
        assert r["grid_8"] == 0
        assert r["grid_9"] == 720  # CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, passed through
        assert r["grid_fit"] == 0 and r["grid_over"] == 720
        assert r["ex_cooperative"] == 0 and r["cooperative_launches"] == 3
        # A device of compute capability 9.0 (the stand-in's) launches
        # clusters: NVIDIA's driver gets the cluster's dimensions, and says
        # how many are resident (for the driver's copy of the config,
        # without the stream).
        assert r["cluster_attribute"] == 1 and r["ex_cluster_2"] == 0
        assert r["ex_cluster_extra"] == 0
        assert r["cluster_launches"] == 2 and r["ex_cluster_3"] == 912
        assert r["max_clusters"] == [0, 3]
        # grid_8, grid_fit, ex_cooperative, ex_priority, ex_cluster_1,
        # ex_cluster_2, ex_cluster_extra: the stand-in adds 3 once a launch.
        assert r["value"] == 7 * 3
    else:
        # One block per compute unit (the CPU runtime's threads) is resident.
        assert r["attribute"] == 1 and r["occupancy"] == 1
        # No thread-block clusters on an sm_89-class device.
        assert r["cluster_attribute"] == 0 and r["ex_cluster_2"] == 801
        assert r["ex_cluster_extra"] == 801
        assert r["max_clusters"] == [801, 0] and "thread block clusters" in result.stderr
        assert r["grid_fit"] == 0 and r["grid_over"] == 720
        fits = {grid: code == 0 for grid, code in
                ((8, r["grid_8"]), (9, r["grid_9"]), (2, r["ex_cooperative"]))}
        assert fits == {8: r["sms"] >= 8, 9: r["sms"] >= 9, 2: r["sms"] >= 2}
        assert all(r[k] == 720 for k, grid in (("grid_8", 8), ("grid_9", 9), ("ex_cooperative", 2))
                   if not fits[grid])
        # Each block adds 3: grid_fit's, those of the cooperative grids that
        # fit, and ex_priority's and ex_cluster_1's 2.
        blocks = r["sms"] + sum(grid for grid, fit in fits.items() if fit) + 2 * 2
        assert r["value"] == 3 * blocks


# __managed__ variables through cuLibraryGetManaged: on the OpenCL CPU backend
# every module variable is host memory; through the passthrough the real
# driver's managed memory (here the stand-in's managed arena, where it puts
# the variables our NVPTX declares `.attribute(.managed)`), and a plain
# variable, device memory there, is refused rather than handed to the host.
_MANAGED = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    PTX = b'''
    .version 9.0
    .target sm_80
    .address_size 64
    .global .attribute(.managed) .align 4 .u32 counts[4];
    .global .align 4 .u32 plain[2];
    .visible .entry bump()
    {
      .reg .b32 %r<2>;
      atom.global.add.u32 %r1, [counts], 1;
      ret;
    }
    '''
    r = {}
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    library = ctypes.c_void_p()
    assert lib.cuLibraryLoadData(ctypes.byref(library), PTX, None, None, 0, None, None, 0) == 0
    def managed(name):
        d, n = ctypes.c_uint64(), ctypes.c_size_t()
        code = lib.cuLibraryGetManaged(ctypes.byref(d), ctypes.byref(n), library, name)
        return [code, n.value], d.value
    r["counts"], counts = managed(b"counts")
    r["plain"], _ = managed(b"plain")
    r["missing"], _ = managed(b"nothing")
    if r["counts"][0] == 0:
        host = (ctypes.c_uint32 * 4).from_address(counts)  # the host writes it directly
        host[0] = 41
        host[3] = 7
        d = ctypes.c_uint64()
        n = ctypes.c_size_t()
        assert lib.cuModuleGetGlobal_v2(ctypes.byref(d), ctypes.byref(n), library, b"counts") == 0
        r["same_address"] = d.value == counts
        h = (ctypes.c_uint32 * 4)()
        assert lib.cuMemcpyDtoH_v2(h, ctypes.c_uint64(counts), 16) == 0
        r["read_back"] = list(h)
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_managed_variables(libdir: str, backend: str, fake_nvidia_driver: Path) -> None:
    import os

    env = {**os.environ, "ZMLIR_BACKEND": backend, "ZMLIR_LOG": "1"}
    if backend == "cuda":
        env["ZMLIR_CUDA_DRIVER"] = str(fake_nvidia_driver)
    result = subprocess.run([sys.executable, "-c", _MANAGED, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r["counts"] == [0, 16]
    assert r["same_address"] is True
    assert r["read_back"] == [41, 0, 0, 7]
    assert r["missing"] == [500, 0]  # CUDA_ERROR_NOT_FOUND
    if backend == "cuda":
        assert r["plain"] == [801, 0]  # CUDA_ERROR_NOT_SUPPORTED, by name:
        assert ("cuLibraryGetManaged (__managed__ variable 'plain': the cuda backend's "
                "module variable is not host-accessible)") in result.stderr
    else:
        assert r["plain"] == [0, 8]


def test_kernel_that_does_not_compile_fails_at_its_first_use(libdir: str) -> None:
    # cudart loads every fatbin at start-up: a library whose kernel we
    # cannot lower (valid PTX) loads, the kernel is reported, and fails
    # (CUDA_ERROR_INVALID_PTX) at its launch; a module's, at
    # cuModuleGetFunction (runtime/cuda/parted.py).
    script = _FAST[:_FAST.index("r = {}")] + textwrap.dedent("""
        BAD = PTX.replace(b"mov.u32 %r2, %tid.x;", b"mov.u32 %r2, %envreg3;")
        assert lib.cuInit(0) == 0
        ctx = ctypes.c_void_p()
        assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
        assert lib.cuCtxSetCurrent(ctx) == 0
        r = {}
        library, k = ctypes.c_void_p(), ctypes.c_void_p()
        r["load"] = lib.cuLibraryLoadData(ctypes.byref(library), BAD, None, None, 0, None,
                                          None, 0)
        r["kernel"] = lib.cuLibraryGetKernel(ctypes.byref(k), library, b"add_scalar")
        d, n = ctypes.c_uint64(), ctypes.c_size_t()
        assert lib.cuMemAlloc_v2(ctypes.byref(d), 4) == 0
        value = ctypes.c_uint32(1)
        params = (ctypes.c_void_p * 2)(ctypes.addressof(d), ctypes.addressof(value))
        r["launch"] = lib.cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, None, params, None)
        r["module"] = lib.cuLibraryGetModule(ctypes.byref(k), library)
        r["global"] = lib.cuLibraryGetGlobal(ctypes.byref(d), ctypes.byref(n), library, b"x")
        r["unload"] = lib.cuLibraryUnload(library)
        r["unload_again"] = lib.cuLibraryUnload(library)
        mod, f = ctypes.c_void_p(), ctypes.c_void_p()
        r["module_load"] = lib.cuModuleLoadData(ctypes.byref(mod), BAD)
        r["function"] = lib.cuModuleGetFunction(ctypes.byref(f), mod, b"add_scalar")
        print(json.dumps(r))
    """)
    result = subprocess.run([sys.executable, "-c", script, libdir], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "load": 0, "kernel": 0, "launch": 218, "module": 0, "global": 500, "unload": 0,
        "unload_again": 400, "module_load": 0, "function": 218}
    assert "cannot compile kernel add_scalar of module.ptx: module.ptx:" in result.stderr
    assert "error: unsupported special register '%envreg3'" in result.stderr


# `trap`, brx.idx past its .branchtargets and an indirect call to an address
# that is no function (both trap), and a wait on an mbarrier phase that no
# thread can complete any more (a GPU would hang; the CPU backend, whose
# waits are block barriers, sees the barrier's word unchanged after one):
# the launch returns, the context holds the sticky CUDA_ERROR_LAUNCH_FAILED
# (719) for later synchronizations, copies and launches, and the process
# lives on. Each kernel in a fresh process.
_TRAP = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    PTX = b'''
    .version 8.0
    .target sm_80
    .address_size 64
    .func (.param .b32 r) twice(.param .b32 x)
    {
      .reg .b32 %v<2>;
      ld.param.b32 %v0, [x]; add.u32 %v1, %v0, %v0; st.param.b32 [r], %v1; ret;
    }
    .func (.param .b32 r) guarded(.param .b32 x)
    {
      .reg .b32 %v<2>; .reg .pred %p;
      ld.param.b32 %v0, [x]; setp.eq.u32 %p, %v0, 7; @%p trap;
      st.param.b32 [r], %v0; ret;
    }
    .visible .entry store(.param .u64 p, .param .u32 v)
    {
      .reg .b32 %r<3>; .reg .b64 %rd<3>;
      ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v]; mov.u32 %r2, %tid.x;
      mad.wide.u32 %rd2, %r2, 4, %rd1; st.global.u32 [%rd2], %r1; ret;
    }
    .visible .entry trap_in_kernel(.param .u64 p, .param .u32 v)
    {
      .reg .b32 %r<3>; .reg .b64 %rd<3>; .reg .pred %q;
      ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v]; mov.u32 %r2, %tid.x;
      setp.eq.u32 %q, %r2, %r1; @%q trap;
      mad.wide.u32 %rd2, %r2, 4, %rd1; st.global.u32 [%rd2], %r1; ret;
    }
    .visible .entry brkpt_in_kernel(.param .u64 p, .param .u32 v)
    {
      .reg .b32 %r<3>; .reg .b64 %rd<3>; .reg .pred %q;
      ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v]; mov.u32 %r2, %tid.x;
      setp.eq.u32 %q, %r2, %r1; @%q brkpt;
      mad.wide.u32 %rd2, %r2, 4, %rd1; st.global.u32 [%rd2], %r1; ret;
    }
    .visible .entry trap_in_function(.param .u64 p, .param .u32 v)
    {
      .reg .b32 %r<4>; .reg .b64 %rd<3>;
      ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v]; mov.u32 %r2, %tid.x;
      add.u32 %r1, %r1, %r2;
      { .param .b32 a; .param .b32 b; st.param.b32 [a], %r1; call.uni (b), guarded, (a);
        ld.param.b32 %r3, [b]; }
      mad.wide.u32 %rd2, %r2, 4, %rd1; st.global.u32 [%rd2], %r3; ret;
    }
    .visible .entry brx_past_targets(.param .u64 p, .param .u32 v)
    {
      .reg .b32 %r<3>; .reg .b64 %rd<3>;
      ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v];
      ts: .branchtargets A, B;
      brx.idx %r1, ts;
    A: mov.u32 %r2, 1; bra.uni J;
    B: mov.u32 %r2, 2;
    J: st.global.u32 [%rd1], %r2; ret;
    }
    .visible .entry call_bad_address(.param .u64 p, .param .u32 v)
    {
      .reg .b32 %r<3>; .reg .b64 %rd<4>;
      ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v];
      mov.u64 %rd2, twice; cvt.u64.u32 %rd3, %r1; add.u64 %rd2, %rd2, %rd3;
      { .param .b32 a; .param .b32 b; st.param.b32 [a], %r1;
        proto: .callprototype (.param .b32 _) _ (.param .b32 _);
        call (b), %rd2, (a), proto; ld.param.b32 %r2, [b]; }
      st.global.u32 [%rd1], %r2; ret;
    }
    .visible .entry mbarrier_spin(.param .u64 p, .param .u32 v)
    {
      .shared .align 8 .b64 bar;
      .reg .b32 %r<3>; .reg .b64 %rd<4>; .reg .pred %q, %done;
      ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v]; mov.u32 %r2, %tid.x;
      setp.eq.u32 %q, %r2, 0; @%q mbarrier.init.shared.b64 [bar], %r1;
      bar.sync 0;
      mbarrier.arrive.shared.b64 %rd3, [bar];
    WAIT: mbarrier.test_wait.shared.b64 %done, [bar], %rd3; @!%done bra WAIT;
      mad.wide.u32 %rd2, %r2, 4, %rd1; st.global.u32 [%rd2], %r1; ret;
    }
    .visible .entry unvectorized_shuffle(.param .u64 p, .param .u32 v)
    {
      .shared .align 4 .b32 flag[32];
      .reg .b32 %r<5>; .reg .b64 %rd<5>; .reg .pred %q;
      ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v]; mov.u32 %r2, %tid.x;
      mov.u64 %rd3, flag; cvta.shared.u64 %rd3, %rd3;
      mul.wide.u32 %rd4, %r2, 4; add.u64 %rd3, %rd3, %rd4;
      st.u32 [%rd3], %r1;
    SPIN: ld.acquire.cta.u32 %r3, [%rd3]; setp.ne.u32 %q, %r3, %r1; @%q bra SPIN;
      shfl.sync.bfly.b32 %r4, %r2, 1, 31, -1;
      mad.wide.u32 %rd2, %r2, 4, %rd1; st.global.u32 [%rd2], %r4; ret;
    }
    \\x00'''
    r = {}
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    mod = ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(mod), PTX) == 0
    def function(name):
        f = ctypes.c_void_p()
        assert lib.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()) == 0
        return f
    buf = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(buf), 256) == 0
    def launch(f, v):
        p, value = ctypes.c_uint64(buf.value), ctypes.c_uint32(v)
        params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(p), ctypes.c_void_p),
                                       ctypes.cast(ctypes.byref(value), ctypes.c_void_p))
        return lib.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, params, None)
    store = function("store")
    r["before"] = [launch(store, 5), lib.cuCtxSynchronize()]
    r["launch"] = launch(function(sys.argv[2]), int(sys.argv[3]))
    r["ctx_sync"] = lib.cuCtxSynchronize()
    r["stream_sync"] = lib.cuStreamSynchronize(None)
    host = (ctypes.c_uint32 * 64)()
    r["copy"] = lib.cuMemcpyDtoH_v2(host, buf, 256)
    r["values"] = list(host)[:32]
    r["later_launch"] = launch(store, 6)
    print(json.dumps(r))
""")


@pytest.mark.parametrize("kernel, value", [("trap_in_kernel", 3), ("trap_in_function", 0),
                                           ("brx_past_targets", 2), ("call_bad_address", 1),
                                           ("brkpt_in_kernel", 3), ("mbarrier_spin", 33)])
def test_trap_fails_the_context_with_launch_failed(libdir: str, kernel: str, value: int) -> None:
    result = subprocess.run([sys.executable, "-c", _TRAP, libdir, kernel, str(value)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    del r["values"]
    assert r == {"before": [0, 0], "launch": 0, "ctx_sync": 719, "stream_sync": 719,
                 "copy": 719, "later_launch": 719}
    assert f"kernel {kernel} executed trap" in result.stderr


def test_unvectorized_warps_fail_the_launch_or_are_right(libdir: str) -> None:
    # Intel's OpenCL CPU runtime runs a kernel spinning on an acquire load
    # through a generic address unvectorized, with one-lane sub-groups: its
    # shuffle would read each lane's own value. The kernel notices (its
    # sub-groups are narrower than a warp) and the launch fails; a runtime
    # that vectorizes it gives the right lanes. Never a wrong result.
    result = subprocess.run([sys.executable, "-c", _TRAP, libdir, "unvectorized_shuffle", "7"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    if r["ctx_sync"] == 0:
        assert r["values"] == [lane ^ 1 for lane in range(32)]
    else:
        assert (r["launch"], r["ctx_sync"], r["later_launch"]) == (0, 719, 719)
        assert ("kernel unvectorized_shuffle ran in sub-groups narrower than a warp"
                in result.stderr)


@pytest.mark.parametrize("kernel, value", [("trap_in_kernel", 99), ("trap_in_function", 100),
                                           ("brx_past_targets", 1), ("call_bad_address", 0),
                                           ("brkpt_in_kernel", 99), ("mbarrier_spin", 32)])
def test_no_trap_no_error(libdir: str, kernel: str, value: int) -> None:
    # The same kernels where nothing traps: the context stays usable.
    result = subprocess.run([sys.executable, "-c", _TRAP, libdir, kernel, str(value)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    del r["values"]
    assert r == {"before": [0, 0], "launch": 0, "ctx_sync": 0, "stream_sync": 0, "copy": 0,
                 "later_launch": 0}
