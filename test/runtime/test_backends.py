"""The vendor backends (HIP, Level Zero, CUDA passthrough) on a machine with
none of their devices: each reports NoDevice with the library's own reason,
never a crash, and a program run on one gets cudart's "no CUDA-capable
device". Their launch paths are checked against a recording stand-in for the
vendor library; the precompiled-NVPTX store against a temporary directory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from ptx import spec
from support import PROGRAMS_DIR, tool

from tools import run_programs_passthrough
from zmlir.runtime.backends import NoDevice, _registry, nvptx_cache, open_backend
from zmlir.runtime.backends import cuda as cuda_backend
from zmlir.runtime.backends import hip as hip_backend
from zmlir.runtime.backends import level_zero as ze_backend
from zmlir.runtime.backends._vendor import OpenedLibrary

VENDOR_BACKENDS = ("hip", "level_zero", "cuda")


def _nvidia_driver_present() -> bool:
    candidates, _ = cuda_backend.driver_candidates()
    return any(os.path.exists(p) for p in candidates)


# -- opening with no device ---------------------------------------------------------

_OPEN = textwrap.dedent("""
    import sys
    from zmlir.runtime.backends import NoDevice, _registry
    try:
        _registry()[sys.argv[1]].open()
    except NoDevice as err:
        print("NoDevice:", err)
        sys.exit(0)
    print("opened")
""")


@pytest.mark.parametrize("name", VENDOR_BACKENDS)
def test_registered(name: str) -> None:
    assert name in _registry()


def test_a_backend_missing_a_python_dependency_is_unavailable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VENDOR_BACKENDS:  # imported again, now without cffi
        monkeypatch.delitem(sys.modules, f"zmlir.runtime.backends.{name}", raising=False)
    monkeypatch.setitem(sys.modules, "cffi", None)
    assert "hip" not in _registry()
    with pytest.raises(NoDevice, match="'hip' is unavailable: needs the Python module 'cffi'"):
        open_backend("hip")


def test_a_broken_backend_module_is_an_error_not_an_unknown_backend(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "zmlir.runtime.backends.hip", None)
    with pytest.raises(ImportError, match=r"zmlir\.runtime\.backends\.hip"):
        _registry()


@pytest.mark.parametrize("name", ["hip", "level_zero"])
def test_open_without_device_is_a_clean_no_device(name: str) -> None:
    # In a child process: a crash inside the vendor library would show as a
    # signal exit here instead of taking pytest down.
    result = subprocess.run([sys.executable, "-c", _OPEN, name], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    if result.stdout.startswith("opened"):
        pytest.skip(f"this machine has a {name} device")
    message = result.stdout.removeprefix("NoDevice: ").strip()
    assert "Traceback" not in result.stderr
    # Either the library is missing (paths listed) or it said why there is no device.
    assert ("not found; tried:" in message
            or message.startswith(("no HIP device: ", "no Level Zero device: "))), message


def test_hip_library_present_reports_its_error() -> None:
    if not any(os.path.exists(f"/usr/lib/x86_64-linux-gnu/{n}")
               for n in ("libamdhip64.so.5", "libamdhip64.so.6")):
        pytest.skip("libamdhip64 is not installed")
    with pytest.raises(NoDevice, match=r"^no HIP device: hipError\w+"):
        hip_backend.HIPBackend.open()


def test_level_zero_loader_present_reports_its_error() -> None:
    if not os.path.exists("/usr/lib/x86_64-linux-gnu/libze_loader.so.1"):
        pytest.skip("libze_loader is not installed")
    with pytest.raises(NoDevice, match=r"^no Level Zero device: (zeInit: ZE_RESULT_\w+|.*0 d)"):
        ze_backend.LevelZeroBackend.open()


@pytest.mark.parametrize("module, cls", [(hip_backend, "HIPBackend"),
                                         (ze_backend, "LevelZeroBackend")])
def test_missing_library_lists_the_paths_tried(module: Any, cls: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "LIBRARY_CANDIDATES", ("/nonexistent/libvendor.so.1",
                                                       "libzmlir-no-such-vendor.so.9"))
    monkeypatch.delenv("ZMLIR_HIP_LIBRARY", raising=False)
    monkeypatch.delenv("ZMLIR_LEVEL_ZERO_LIBRARY", raising=False)
    with pytest.raises(NoDevice) as err:
        getattr(module, cls).open()
    text = str(err.value)
    assert "not found; tried: /nonexistent/libvendor.so.1 (no such file); " \
           "libzmlir-no-such-vendor.so.9 (" in text


def test_cuda_without_nvidia_driver_lists_the_paths_tried(
        monkeypatch: pytest.MonkeyPatch) -> None:
    if _nvidia_driver_present():
        pytest.skip("this machine has NVIDIA's driver")
    monkeypatch.setenv("ZMLIR_CUDA_DRIVER", "/nonexistent/nvidia/libcuda.so.1")
    with pytest.raises(NoDevice) as err:
        cuda_backend.CUDABackend.open()
    text = str(err.value)
    assert text.startswith("NVIDIA CUDA driver (libcuda.so.1)")
    assert "/nonexistent/nvidia/libcuda.so.1 (no such file)" in text
    assert "/usr/local/nvidia/lib64/libcuda.so.1" in text


def test_cuda_never_opens_our_own_libcuda(monkeypatch: pytest.MonkeyPatch) -> None:
    from zmlir.runtime.cuda.build import SONAME, library_dir

    ours = str(library_dir() / SONAME)
    monkeypatch.setenv("ZMLIR_CUDA_DRIVER", ours)
    candidates, skipped = cuda_backend.driver_candidates()
    assert ours in skipped and ours not in candidates


@pytest.mark.parametrize("cc, arch", [((9, 0), "sm_90"), ((8, 6), "sm_86"), ((8, 9), "sm_89"),
                                      ((10, 0), "sm_100"), ((12, 1), "sm_121"),
                                      ((13, 0), "sm_121"), ((9, 1), "sm_90")])
def test_nvptx_arch_is_capped_at_llvm(cc: tuple[int, int], arch: str) -> None:
    assert cuda_backend.nvptx_arch(*cc) == arch


# -- a program on a backend with no device ------------------------------------------

@pytest.fixture(scope="module")
def vector_add(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    exe = tmp_path_factory.mktemp("backends") / "vector_add"
    subprocess.run([tool("nvcc"), "-arch=sm_80", f"-I{PROGRAMS_DIR}",
                    str(PROGRAMS_DIR / "vector_add.cu"), "-o", str(exe)], check=True,
                   capture_output=True)
    return exe


@pytest.mark.parametrize("name", VENDOR_BACKENDS)
def test_program_on_backend_without_device(name: str, vector_add: Path) -> None:
    if name == "cuda" and _nvidia_driver_present():
        pytest.skip("this machine has NVIDIA's driver")
    env = dict(os.environ, ZMLIR_BACKEND=name)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(vector_add)],
                            capture_output=True, text=True, timeout=300, env=env)
    output = result.stdout + result.stderr
    if result.returncode == 0:
        pytest.skip(f"this machine has a {name} device")
    assert "no CUDA-capable device" in output, output
    assert "zmlir: no device: " in result.stderr
    assert "Traceback" not in output


# -- launches, against a recording stand-in for the vendor library -----------------------

class RecordingLib:
    """Answers every call with success (0), records it, and lets a test fill
    output parameters through `effects`."""

    def __init__(self, **effects: Any) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.effects = effects

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> int:
            self.calls.append((name, args))
            effect = self.effects.get(name)
            if effect is not None:
                effect(*args)
            return 0
        return call

    def named(self, name: str) -> list[tuple[Any, ...]]:
        return [args for called, args in self.calls if called == name]


def _info(static: int, count: int) -> SimpleNamespace:
    return SimpleNamespace(static_shared_bytes=static, param_count=count, linear_blocks=False)


def test_level_zero_launch_sets_window_as_local_argument() -> None:
    def properties(kernel: Any, props: Any) -> None:
        props.numKernelArgs = 3  # two parameters + the shared-memory window

    lib = RecordingLib(zeKernelGetProperties=properties)
    ffi = ze_backend._get_ffi()
    info = ze_backend.ZeDeviceInfo("fake", 8, 1024, 65536, 1 << 30)
    backend = ze_backend.LevelZeroBackend(OpenedLibrary(lib, "fake"), ffi.NULL, ffi.NULL, info,
                                          ffi.NULL, ffi.NULL)
    kernel = backend.kernel(ze_backend.ZeProgram(ffi.NULL), "k")
    assert lib.named("zeKernelSetIndirectAccess")[0][1] == 0x7
    backend.launch(kernel, _info(256, 2), (4, 2), (32, 4, 1),
                   [np.uint64(0x1000), np.float32(2.0)], 100)
    args = lib.named("zeKernelSetArgumentValue")
    assert [(a[1], a[2]) for a in args] == [(0, 8), (1, 4), (2, 356)]
    assert args[2][3] == ffi.NULL
    assert lib.named("zeKernelSetGroupSize")[0][1:] == (32, 4, 1)
    groups = lib.named("zeCommandListAppendLaunchKernel")[0][2]
    assert (groups.groupCountX, groups.groupCountY, groups.groupCountZ) == (4, 2, 1)
    with pytest.raises(ValueError, match="takes 3 arguments"):
        backend.launch(kernel, _info(0, 1), (1,), (1,), [np.uint64(1)], 0)
    with pytest.raises(ValueError, match="exceeds"):
        backend.launch(kernel, _info(65536, 2), (1,), (1,), [np.uint64(1), np.float32(0)], 4)


def test_level_zero_passes_window_size_as_global_offset() -> None:
    # A module that reads %total_smem_size gets the window's size as its
    # global offset in x; one that does not never calls the extension.
    import zmlir

    def properties(kernel: Any, props: Any) -> None:
        props.numKernelArgs = 5  # four parameters + the shared-memory window

    ffi = ze_backend._get_ffi()
    info = ze_backend.ZeDeviceInfo("fake", 8, 1024, 65536, 1 << 30)
    offsets = {}
    for name in ("sreg_smem_size", "brx_idx"):
        module = zmlir.compile_module(spec.ptx(spec.case(name)), "spirv")
        lib = RecordingLib(zeKernelGetProperties=properties)
        backend = ze_backend.LevelZeroBackend(OpenedLibrary(lib, "fake"), ffi.NULL, ffi.NULL,
                                              info, ffi.NULL, ffi.NULL)
        program = backend.load(module)
        backend.launch(backend.kernel(program, "k"), module.kernels["k"], (1,), (32,),
                       [np.uint64(1)] * 3 + [np.uint32(32)], 100)
        offsets[name] = [a[1:] for a in lib.named("zeKernelSetGlobalOffsetExp")]
    assert offsets == {"sreg_smem_size": [(2048 + 100, 0, 0)], "brx_idx": []}


def test_hip_launch_passes_static_plus_dynamic_shared() -> None:
    ffi = hip_backend._get_ffi()
    seen: list[tuple[int, int]] = []

    def read_params(*args: Any) -> None:
        # The runtime copies the parameters during the call, so read them then.
        params = args[9]
        seen.append((ffi.cast("uint64_t *", params[0])[0], ffi.cast("int32_t *", params[1])[0]))

    lib = RecordingLib(hipModuleLaunchKernel=read_params)
    backend = hip_backend.HIPBackend(OpenedLibrary(lib, "fake"), 0, "fake", "gfx1100", 48,
                                     65536, 1024, 1 << 30)
    assert backend.target == "amdgpu:gfx1100"
    backend.launch(hip_backend.HIPKernel("k", ffi.NULL), _info(1024, 2), (3, 1, 1), (64,),
                   [np.uint64(0xDEAD0000), np.int32(-5)], 512)
    call = lib.named("hipModuleLaunchKernel")[0]
    assert call[1:8] == (3, 1, 1, 64, 1, 1, 1536)
    assert seen == [(0xDEAD0000, -5)]


def test_cuda_launch_opts_in_above_48k_once() -> None:
    lib = RecordingLib()
    ffi = cuda_backend._get_ffi()
    info = cuda_backend.CUDADeviceInfo("fake H200", (9, 0), 132, 1024, 232448, 1 << 30)
    backend = cuda_backend.CUDABackend(OpenedLibrary(lib, "fake"), 0, ffi.NULL, info)
    assert backend.target == "nvptx:sm_90"
    kernel = cuda_backend.CUDAKernel("k", ffi.NULL)
    for _ in range(2):
        backend.launch(kernel, _info(40960, 1), (2,), (128,), [np.uint64(16)], 16384)
    assert lib.named("cuFuncSetAttribute") == [(ffi.NULL, 8, 57344)]
    launches = lib.named("cuLaunchKernel")
    assert len(launches) == 2 and launches[0][1:8] == (2, 1, 1, 128, 1, 1, 57344)
    backend.launch(kernel, _info(0, 1), (1,), (1,), [np.uint64(16)], 0)
    assert lib.named("cuLaunchKernel")[-1][7] == 0
    with pytest.raises(ValueError, match="exceeds"):
        backend.launch(kernel, _info(232448, 1), (1,), (1,), [np.uint64(16)], 1)


def test_passthrough_reports_the_real_memory_model() -> None:
    # An H200 answers PAGEABLE_MEMORY_ACCESS (88) 0: a program told 1 hands
    # its kernels malloc'd memory and gets 700 (cuda-samples' systemWideAtomics).
    from zmlir.runtime.cuda.attributes import device_attribute

    ffi = cuda_backend._get_ffi()
    info = cuda_backend.CUDADeviceInfo("fake H200", (9, 0), 132, 1024, 232448, 1 << 30,
                                       memory_model={88: 0, 89: 1, 100: 0})
    backend = cuda_backend.CUDABackend(OpenedLibrary(RecordingLib(), "fake"), 0, ffi.NULL, info)
    assert [device_attribute(a, backend) for a in (88, 89, 100, 83)] == [0, 1, 0, 1]


# -- precompiled NVPTX ---------------------------------------------------------------

def _compiled(target: str) -> SimpleNamespace:
    kernel = SimpleNamespace(param_count=2, static_shared_bytes=64, params=("u64", "f32"),
                             ptx_arch=75, local_bytes=16, const_bytes=4, max_threads=128,
                             max_registers=40)
    return SimpleNamespace(target=target, binary=b".version 7.8\n.target sm_80\n",
                           kernels={"k": kernel})


def test_nvptx_cache_round_trip_and_arch_choice(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ptx = ".version 8.0\n.target sm_80\n.entry k()\n{\n ret;\n}\n"
    key = nvptx_cache.ptx_key(ptx)
    import hashlib

    assert key == hashlib.sha256(ptx.encode()).hexdigest()  # the driver's module key
    nvptx_cache.store(tmp_path, key, _compiled("nvptx:sm_80"), source="t.ptx")
    nvptx_cache.store(tmp_path, key, _compiled("nvptx:sm_90"))
    assert nvptx_cache.lookup(tmp_path, key, "sm_90").target == "nvptx:sm_90"
    assert nvptx_cache.lookup(tmp_path, key, "sm_89").target == "nvptx:sm_80"
    assert nvptx_cache.lookup(tmp_path, key, "sm_75") is None
    assert nvptx_cache.lookup(tmp_path, "0" * 64, "sm_90") is None
    found = nvptx_cache.lookup(tmp_path, key, "sm_100")
    assert found is not None and found.binary.startswith(b".version")
    # What cuFuncGetAttribute answers from it too: thrust's dispatch fails with
    # "invalid device function" where PTX_VERSION is not the PTX's own (75).
    assert found.kernels["k"] == nvptx_cache.CachedKernel("k", 2, 64, ("u64", "f32"), 75, 16, 4,
                                                          128, 40)
    # The backend consults it for the key the driver computed.
    monkeypatch.setenv(nvptx_cache.ENV, str(tmp_path))
    info = cuda_backend.CUDADeviceInfo("fake", (9, 0), 1, 1024, 49152, 1 << 30)
    backend = cuda_backend.CUDABackend(OpenedLibrary(RecordingLib(), "fake"), 0,
                                       cuda_backend._get_ffi().NULL, info)
    cached = backend.precompiled(key, ptx)
    assert cached is not None and cached.target == "nvptx:sm_90"
    assert backend.precompiled("f" * 64, ptx) is None


def test_nvptx_cache_keeps_native_textures_apart(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # A module compiled for NVIDIA's texture instructions reads NVIDIA's
    # objects, one compiled without them our descriptors: a lookup takes only
    # the kind the backend compiles for (ZMLIR_NATIVE_TEXTURES).
    key = "t" * 64
    nvptx_cache.store(tmp_path, key, _compiled("nvptx:sm_80+native-textures"))
    assert nvptx_cache.lookup(tmp_path, key, "sm_90") is None
    assert nvptx_cache.lookup(tmp_path, key, "sm_90+native-textures").target == \
        "nvptx:sm_80+native-textures"
    nvptx_cache.store(tmp_path, key, _compiled("nvptx:sm_90"))
    assert nvptx_cache.lookup(tmp_path, key, "sm_90").target == "nvptx:sm_90"
    assert nvptx_cache.lookup(tmp_path, key, "sm_90+native-textures").target == \
        "nvptx:sm_80+native-textures"
    monkeypatch.setenv(nvptx_cache.ENV, str(tmp_path))
    info = cuda_backend.CUDADeviceInfo("fake", (9, 0), 1, 1024, 49152, 1 << 30)
    textures = "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];"
    # Native textures are the default; a module without texture
    # instructions keeps the plain target, whose entries it shares.
    for native, target in ((None, "nvptx:sm_80+native-textures"),
                           ("1", "nvptx:sm_80+native-textures"), ("0", "nvptx:sm_90")):
        if native is None:
            monkeypatch.delenv(cuda_backend.NATIVE_TEXTURES_ENV, raising=False)
        else:
            monkeypatch.setenv(cuda_backend.NATIVE_TEXTURES_ENV, native)
        backend = cuda_backend.CUDABackend(OpenedLibrary(RecordingLib(), "fake"), 0,
                                           cuda_backend._get_ffi().NULL, info)
        assert backend.vendor_textures == (native != "0")
        assert backend.target == "nvptx:sm_90"
        assert backend.target_for(textures) == "nvptx:sm_90" + \
            ("+native-textures" if native != "0" else "")
        assert backend.target_for("add.s32 %r1, %r2, %r3;") == "nvptx:sm_90"
        assert backend.precompiled(key, textures).target == target
        assert backend.precompiled(key, "ret;").target == "nvptx:sm_90"


@pytest.mark.parametrize("damage", ["{not json", '{"target": "nvptx:sm_90"}', "[]",
                                    '{"target": 1, "kernels": {}}', "\udcff"])
def test_nvptx_cache_damaged_entry_is_skipped(tmp_path: Path, damage: str) -> None:
    # What the directory holds is read back, not trusted: a damaged newer
    # entry falls back to the older one, or to compiling.
    nvptx_cache.store(tmp_path, "k" * 64, _compiled("nvptx:sm_80"))
    nvptx_cache.store(tmp_path, "k" * 64, _compiled("nvptx:sm_90"))
    (tmp_path / f"{'k' * 64}.sm_90.json").write_bytes(damage.encode(errors="surrogateescape"))
    assert nvptx_cache.lookup(tmp_path, "k" * 64, "sm_90").target == "nvptx:sm_80"
    (tmp_path / f"{'k' * 64}.sm_80.ptx").unlink()
    assert nvptx_cache.lookup(tmp_path, "k" * 64, "sm_90") is None


def test_passthrough_tool_finds_the_ptx_the_driver_loads(vector_add: Path) -> None:
    texts = run_programs_passthrough.driver_ptx_texts(vector_add)
    assert len(texts) == 1 and ".entry" in texts[0]
    assert run_programs_passthrough.ptx_keys(vector_add) == [nvptx_cache.ptx_key(texts[0])]
