"""Our libcublas.so.13 and libcublasLt.so.13 (zmlir/libraries/) on the CPU:
our own CUDA programs (test/libraries/cublas/), built with nvcc against
NVIDIA's headers and linked with -lcublas -lcublasLt as any application is,
check every call against a host reference and print PASS/FAIL per case; the
route (route.c) on a backend we do not serve; the exports."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import cublas_wheel, tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

SOURCES = Path(__file__).resolve().parent / "cublas"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, libdir: str) -> Path:
    wheel = cublas_wheel(libdir)
    out = tmp_path_factory.mktemp("cublas")
    for source in SOURCES.glob("*.cu"):
        subprocess.run([tool("nvcc"), "-arch=sm_80", f"-I{wheel / 'include'}", str(source),
                        "-o", str(out / source.stem), f"-L{libdir}", "-lcublas", "-lcublasLt"],
                       check=True, capture_output=True)
    return out


def _run(exe: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe), *args],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})


def _cases(result: subprocess.CompletedProcess[str]) -> tuple[list[str], list[str]]:
    passed = re.findall(r"^PASS (.+)$", result.stdout, re.M)
    failed = re.findall(r"^FAIL (.+)$", result.stdout, re.M)
    return passed, failed


def test_cublas_calls_match_the_host_reference(built: Path) -> None:
    result = _run(built / "cublas_api")
    passed, failed = _cases(result)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    # Every case ran: the handle, 9 transposes x 2 real and 4 complex GEMMs,
    # the Ex types, batches, level 1 and 2, the copies.
    assert len(passed) >= 81, result.stdout
    for case in ("device scalars, stream order", "GemmEx bf16", "GemmBatchedEx", "Hgemm",
                 "Cgemm op(2,2)", "Zgemm op(1,2)", "CgemmStridedBatched op(2,0)",
                 "GemmStridedBatchedEx c32 op(0,2)",
                 "Isamax (1-based)", "Sgeam", "Dtrsm_64", "environment mode",
                 "unsupported"):
        assert case in passed
    # The size ours cannot take was named once on stderr.
    assert result.stderr.count("cublasStrsm_v2_64: an integer beyond 32 bits") == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_level123_match_our_reference(built: Path) -> None:
    """Level 1, 2 and 3 beyond GEMM (blas.c), S/D/C/Z, both pointer modes,
    the Ex forms and NVIDIA's invalid-argument statuses, against loops of
    ours in complex double."""
    result = _run(built / "cublas_level123")
    passed, failed = _cases(result)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    assert len(passed) >= 200, result.stdout
    for case in ("Zswap", "Icamin device", "Crotg device", "Drotmg, rotm host",
                 "Cgbmv device C", "Csymv host upper", "Cher2 device", "Chemm device right",
                 "Zherk host op 2", "Cherkx device", "Ztrsm right device", "ZtrsmBatched host",
                 "Ztpmv", "Cdgmm left", "Ctrttp upper", "DgemmGroupedBatched", "CherkEx",
                 "AxpyEx f16 unsupported", "Csyrk op C", "gbmv lda < kl + ku + 1",
                 "GemmEx int8 -> int32 COMPUTE_32I", "GemmEx int8 -> f16 unsupported"):
        assert case in passed, case
    assert "Traceback" not in result.stderr


def test_cublaslt_epilogues_match_the_host_reference(built: Path) -> None:
    result = _run(built / "cublaslt_matmul")
    passed, failed = _cases(result)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    assert {"f32 bias", "f32 gelu_aux_bias batched", "bf16 gelu_aux_bias",
            "unsupported epilogue"} <= set(passed), result.stdout


def test_cublaslt_algorithms_and_pointer_arrays(built: Path) -> None:
    """cublasLtMatmulAlgoGetIds/Init/Check, the configuration's attributes,
    a matmul with a preset algorithm, a pointer-array batch, transforms,
    FP8 with scales and amax, complex (planar C_16F, C_64F)."""
    result = _run(built / "cublaslt_algo")
    passed, failed = _cases(result)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    assert {"AlgoConfig kept", "AlgoConfig id read-only", "AlgoCheck", "Matmul with a preset algo",
            "pointer-array batch", "strided and pointer arrays mixed",
            "MatrixTransform COL + COL^T to ROW", "MatrixTransform f32 to int8 COL32",
            "MatrixTransform COL4_4R2_8C unsupported", "FP8 E4M3 matmul with scales",
            "FP8 saturates at 448", "FP8 amax_d", "planar C_16F matmul, op C",
            "C_64F strided batch, device scalars", "int8 matmul COMPUTE_32I",
            "AlgoInit int8 to f16 unsupported"} <= set(passed), result.stdout


def test_batched_lu_matches_the_host_reference(built: Path) -> None:
    """cublas<S,D>getrfBatched and getriBatched (OpenBLAS's LAPACK): pivots,
    P A = L U, A inv(A) = I, a singular matrix's info, in a stream."""
    result = _run(built / "cublas_lu")
    passed, failed = _cases(result)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    # 2 precisions x (pivoted: 7 cases, unpivoted: 5), the refused lda.
    assert len(passed) == 25, result.stdout
    for case in ("D pivoted getrf pivots (1-based) #1", "S unpivoted getri A inv(A) = I #0",
                 "D pivoted singular: info 3 from getrf and getri",
                 "getrf lda < n is CUBLAS_STATUS_INVALID_VALUE"):
        assert case in passed
    assert "unsupported" not in result.stderr and "Traceback" not in result.stderr


def test_cublasxt_gemm_matches_the_host_reference(built: Path) -> None:
    """cublasXt<S,D>gemm on one device, host and device memory, blocking."""
    result = _run(built / "cublasxt_gemm")
    passed, failed = _cases(result)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    # 2 precisions x 4 transpose pairs x 2 memories, and 3 settings.
    assert len(passed) == 19, result.stdout
    assert {"Sgemm TN host memory", "Dgemm NT device memory", "block dimension kept"} <= set(
        passed), result.stdout
    assert "unsupported" not in result.stderr and "Traceback" not in result.stderr


def _nvidia_gemm(libdir: str, out: Path) -> tuple[Path, Path]:
    """cublas/nvidia/gemm.cu linked with NVIDIA's libcublas.so.13 by its path,
    as the wheel's users do; and the wheel's lib folder."""
    wheel = cublas_wheel(libdir)
    nvidia = wheel / "lib"
    if not (nvidia / "libcublas.so.13").exists():
        pytest.skip("NVIDIA's libcublas is not installed")
    exe = out / "gemm"
    subprocess.run([tool("nvcc"), "-arch=sm_80", f"-I{wheel / 'include'}",
                    str(SOURCES / "nvidia" / "gemm.cu"), "-o", str(exe), f"-L{nvidia}",
                    "-Xlinker", f"-rpath={nvidia}", "-Xlinker", "--disable-new-dtags",
                    "-l:libcublas.so.13"], check=True, capture_output=True)
    return exe, nvidia


def test_nvidias_cublas_runs_on_our_driver(libdir: str, tmp_path: Path) -> None:
    """NVIDIA's own libcublas.so.13 (the wheel's), linked by its path as the
    wheel's users do, on our driver on the CPU: our libcublasLt, found first
    on LD_LIBRARY_PATH, hands NVIDIA's libcublas NVIDIA's libcublasLt
    (route.c); its runtime loads lazily (told eager it loads ~2800 images in
    cublasCreate), finds its `deviceConstants` in an image of variables only,
    asks the current context and stream objects (TOOLS_TLS, TOOLS_CONTEXT)
    and, told compute capability 13.0, runs its PTX kernels."""
    exe, nvidia = _nvidia_gemm(libdir, tmp_path)
    result = _run(exe, ZMLIR_LOG="1")
    passed, failed = _cases(result)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    assert passed == ["cublasCreate (status 0)", *passed[1:]] and len(passed) == 3, result.stdout
    assert f"NVIDIA's libcublasLt.so.13 ({nvidia}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_nvidias_cublas_creates_its_handle_through_the_passthrough(
        libdir: str, tmp_path: Path, fake_nvidia_driver: Path) -> None:
    """NVIDIA's cuBLAS through the passthrough over the stand-in NVIDIA driver
    with an H100's attributes (FAKE_H100): cublasCreate opts a kernel in to
    232448 bytes of dynamic shared memory and asks its occupancy, which
    fastpath.c asks NVIDIA's driver; the opt-in must be NVIDIA's by then
    (0 blocks else, and cublasCreate failed with status 14 on an H100)."""
    exe, _ = _nvidia_gemm(libdir, tmp_path)
    result = _run(exe, "--create-only", ZMLIR_BACKEND="cuda", FAKE_H100="1",
                  ZMLIR_CUDA_DRIVER=str(fake_nvidia_driver))
    assert result.stdout.splitlines() == ["PASS cublasCreate (status 0)"], \
        result.stdout + result.stderr
    assert result.returncode == 0 and "Traceback" not in result.stderr


def test_other_backends_answer_not_supported(built: Path) -> None:
    """Level Zero (a device here or not): cuBLAS answers CUBLAS_STATUS_NOT_SUPPORTED
    (15) and says why on stderr; the process neither crashes nor hangs."""
    result = _run(built / "cublaslt_matmul", ZMLIR_BACKEND="level_zero")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "cublasLtCreate(&lt) -> 15" in result.stdout
    assert "CUBLAS_STATUS_NOT_SUPPORTED" in result.stderr and "Traceback" not in result.stderr


def test_exports_are_nvidias(libdir: str) -> None:
    """Every function NVIDIA's libraries export is exported, with NVIDIA's
    symbol version, and nothing else."""
    from zmlir.libraries import build

    for library in build.LIBRARIES:
        path = Path(libdir) / library.soname
        if not path.exists():
            pytest.skip("our cuBLAS is not built")
        out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True,
                             check=True).stdout
        ours = {m.group(2): m.group(1) for m in
                re.finditer(r"\bDF \.text\s+\S+\s+(\S+)\s+(\w+)$", out, re.M)}
        assert set(ours) == set(build._exports(library))
        assert set(ours.values()) == {library.soname}


_VENDOR_PROBE = """
import ctypes, sys
lt = ctypes.CDLL(sys.argv[1] + "/libcublasLt.so.13")
lt.cublasLtGetVersion.restype = ctypes.c_size_t
handle = ctypes.c_void_p()
print(lt.cublasLtGetVersion(), lt.cublasLtCreate(ctypes.byref(handle)), handle.value,
      lt.cublasLtDestroy(handle))
"""

# NVIDIA's libcublasLt as far as the probe calls it (no cublasLtDestroy).
_FAKE_NVIDIA_CUBLASLT = """
int cublasLtCreate(void **handle) { *handle = (void *)0x1234; return 0; }
unsigned long cublasLtGetVersion(void) { return 424242; }
"""


def test_passthrough_hands_calls_to_nvidias_library(libdir: str, tmp_path: Path,
                                                    fake_nvidia_driver: Path) -> None:
    """Under the passthrough our library opens NVIDIA's (found through
    ZMLIR_NVIDIA_LIBRARY_PATH first) and every call goes there, versions
    included; a function NVIDIA's lacks answers NOT_SUPPORTED (15), named."""
    from zmlir.libraries import build

    if not build.built(Path(libdir)):
        pytest.skip("our cuBLAS is not built")
    cc = tool("cc") or tool("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "fake.c").write_text(_FAKE_NVIDIA_CUBLASLT)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp_path / "libcublasLt.so.13"),
                    str(tmp_path / "fake.c")], check=True, capture_output=True)
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver),
           "ZMLIR_NVIDIA_LIBRARY_PATH": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", _VENDOR_PROBE, libdir], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["424242", "0", str(0x1234), "15"], result.stderr
    assert "has no cublasLtDestroy" in result.stderr and "Traceback" not in result.stderr
