"""`zmlir run`'s cudaDeviceGetAttribute (runtime/cuda/arch_preload.c): a
library holding an image of SASS alone for the reported architecture and
one of PTX alone (as libcurand does) is told an architecture it has no SASS
for; a library whose images hold SASS and PTX together, and the program
itself, get cudart's answer. Fake libraries (arch_preload/) over a fake
cudart reporting 8.0: no GPU and no NVIDIA library needed. The driver's
cuDeviceGetAttribute (runtime/cuda/fastpath.c) tells such a library that
asks it (as cuFFT's static cudart does) a major newer than all its SASS.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import tool

SOURCES = Path(__file__).resolve().parent / "arch_preload"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = tool("cc") or tool("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("arch_preload")

    def build(*args: str) -> None:
        subprocess.run([cc, *args], cwd=out, check=True, capture_output=True)

    build("-shared", "-fPIC", "-Wl,-soname,libcudart.so.13", "-o", "libcudart.so.13",
          str(SOURCES / "fake_cudart.c"))
    for name, function, flags in (("perarch", "per_arch", ["-DPER_ARCH"]),
                                  ("mixed", "mixed", [])):
        build("-shared", "-fPIC", *flags, f"-Dcompute_capability={function}_compute_capability",
              "-o", f"lib{name}.so", str(SOURCES / "library.c"), "-L.", "-l:libcudart.so.13")
    build("-o", "main", str(SOURCES / "main.c"), "-L.", "-lperarch", "-lmixed",
          "-l:libcudart.so.13", "-Wl,-rpath,$ORIGIN")
    return out / "main"


def test_only_a_per_architecture_library_is_told_another_architecture(program: Path,
                                                                       libdir: str) -> None:
    from zmlir.runtime.cuda.build import NVRTC_PRELOAD

    preload = Path(libdir) / NVRTC_PRELOAD
    if not preload.exists():
        pytest.skip("the preload library is not built")
    plain = subprocess.run([str(program)], capture_output=True, text=True, check=True)
    assert plain.stdout.splitlines() == ["per-arch library: 8.0", "mixed library: 8.0",
                                         "program: 8.0"]
    env = dict(os.environ, LD_PRELOAD=str(preload), ZMLIR_LOG="1")
    told = subprocess.run([str(program)], capture_output=True, text=True, check=True, env=env)
    assert told.stdout.splitlines() == ["per-arch library: 8.1", "mixed library: 8.0",
                                        "program: 8.0"]
    assert "libperarch.so keeps machine code an sm_80 device runs in images without PTX" in told.stderr
    assert "told compute capability 8.1" in told.stderr


@pytest.fixture(scope="module")
def driver_program(tmp_path_factory: pytest.TempPathFactory, libdir: str) -> Path:
    cc = tool("cc") or tool("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("arch_driver")

    def build(*args: str) -> None:
        subprocess.run([cc, "-DDRIVER", *args], cwd=out, check=True, capture_output=True)

    for name, function, flags in (("perarch", "per_arch", ["-DPER_ARCH"]),
                                  ("mixed", "mixed", [])):
        build("-shared", "-fPIC", *flags, f"-Dcompute_capability={function}_compute_capability",
              "-o", f"lib{name}.so", str(SOURCES / "library.c"), f"-L{libdir}", "-lcuda")
    build("-o", "main", str(SOURCES / "main.c"), "-L.", "-lperarch", "-lmixed", f"-L{libdir}",
          "-lcuda", "-Wl,-rpath,$ORIGIN")
    return out / "main"


def test_the_driver_tells_a_per_architecture_library_a_newer_major(driver_program: Path) -> None:
    env = dict(os.environ, ZMLIR_LOG="1")
    told = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(driver_program)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert told.returncode == 0, told.stderr[-2000:]
    # Our device is 8.9; the library's newest SASS is sm_80.
    assert told.stdout.splitlines() == ["per-arch library: 9.0", "mixed library: 8.9",
                                        "program: 8.9"]
    assert "libperarch.so keeps machine code an sm_89 device runs" in told.stderr
    assert "told compute capability 9.0 (newer than all its machine code)" in told.stderr
