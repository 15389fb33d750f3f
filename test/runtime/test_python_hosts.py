"""Our libcuda.so.1 inside a Python host (docs/python-hosts.md): a CPython of
another minor version than zmlir's own, in a fresh virtualenv with nothing
installed, drives the driver through ctypes (python_host/client.py), also
after reading a capsule attribute first (as `import torch` does: cffi's
embedding start-up in the host's interpreter hung there). The driver runs in
its own link-map namespace, so neither the host's version nor its imports
matter; cuGetProcAddress still hands out the exported functions, and device
printf comes out in order with the host's C stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

HERE = Path(__file__).resolve().parent / "python_host"
PYENV = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
EXPECTED = ["proc address exported 0", "host: launching", "device: 1024 threads",
            "host: synchronized", "OK"]


def _other_python() -> Path | None:
    """A CPython >= 3.9 of another minor version than ours, or None."""
    ours = f"{sys.version_info.major}.{sys.version_info.minor}."
    for version in ("3.12", "3.13", "3.10", "3.9"):
        if ours.startswith(version + "."):
            continue
        for candidate in sorted(PYENV.glob(f"{version}.*"), reverse=True):
            python = candidate / "bin" / "python3"
            if python.exists():
                return python
    return None


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the venv's python, the kernel's PTX)."""
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    python = _other_python()
    if python is None:
        pytest.skip(f"no CPython >= 3.9 other than {sys.version_info[:2]} under {PYENV}")
    work = tmp_path_factory.mktemp("python_host")
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(work / "venv")], check=True)
    ptx = work / "kernel.ptx"
    subprocess.run([tool("nvcc"), "-arch=sm_80", "-ptx", str(HERE / "kernel.cu"), "-o",
                    str(ptx)], check=True, capture_output=True)
    return work / "venv" / "bin" / "python", ptx


def _run(host: tuple[Path, Path], *args: str,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    python, ptx = host
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(python),
                           str(HERE / "client.py"), str(ptx), *args],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def _check(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == EXPECTED, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "cffi" not in result.stderr, result.stderr


def test_another_minor_version(host: tuple[Path, Path]) -> None:
    python, _ = host
    version = subprocess.run([str(python), "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout
    assert version.strip() != str(tuple(sys.version_info[:2]))
    _check(_run(host))


def test_capsule_read_first(host: tuple[Path, Path]) -> None:
    _check(_run(host, "--capsule-first"))


def test_our_own_version_capsule_first(host: tuple[Path, Path]) -> None:
    """zmlir's own interpreter as the host: the same private namespace."""
    _check(_run((Path(sys.executable), host[1]), "--capsule-first"))


def test_c_host_in_its_own_namespace(tmp_path: Path) -> None:
    """A C host with the implementation forced into a namespace: cudart (its
    export tables, cuGetProcAddress) works, and device printf still comes out
    in order with the host's buffered C stdout (printf.py writes through the
    host's, not the namespace's C library), exactly as without a namespace."""
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    programs = Path(__file__).resolve().parents[1] / "cuda" / "programs"
    exe = tmp_path / "device_printf"
    subprocess.run([tool("nvcc"), "-arch=sm_80", f"-I{programs}",
                    str(programs / "device_printf.cu"), "-o", str(exe)],
                   check=True, capture_output=True)
    outputs = []
    for mode in ("own", "shared"):
        result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                                capture_output=True, text=True, timeout=300,
                                env={**os.environ, "ZMLIR_LINK_NAMESPACE_MODE": mode})
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        outputs.append(result.stdout)
    own, shared = (output.splitlines() for output in outputs)
    assert own[0] == "host: default, printf FIFO 8650752 bytes"
    # The ordered parts (how many lines fit the full FIFO varies between runs).
    launched = own.index("host: per_thread launched")
    assert own[:launched + 1] == shared[:shared.index("host: per_thread launched") + 1]
    assert own[own.index("host: freeing"):] == shared[shared.index("host: freeing"):]
    assert own[-1] == "PASS"


def test_host_threads(host: tuple[Path, Path]) -> None:
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(host[0]),
                             str(HERE / "threads.py")], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["OK"], result.stdout + result.stderr


def test_first_call_on_a_later_thread(host: tuple[Path, Path]) -> None:
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(host[0]),
                             str(HERE / "first_call_on_thread.py")], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["OK"], result.stdout + result.stderr


def test_fork_after_init(host: tuple[Path, Path]) -> None:
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(host[0]),
                             str(HERE / "fork_after_init.py")], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["OK"], result.stdout + result.stderr


_BLAS_THREADS_HOST = r"""
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  void *lib = dlopen(argv[1], RTLD_NOW);
  int (*init)(unsigned) = lib ? (int (*)(unsigned))dlsym(lib, "cuInit") : NULL;
  if (init == NULL || init(0) != 0)
    return 1;
  int threads = 0;
  DIR *tasks = opendir("/proc/self/task");
  for (struct dirent *e; (e = readdir(tasks)) != NULL;)
    threads += e->d_name[0] != '.';
  const char *setting = getenv("OPENBLAS_NUM_THREADS");
  printf("%d %s\n", threads, setting ? setting : "unset");
  return 0;
}
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS starts no thread on one core")
def test_no_blas_threads_of_ours(tmp_path: Path, libdir: str) -> None:
    """Our interpreter's numpy starts no OpenBLAS thread per core, whatever
    the host asks of its own BLAS, and the host's setting is left as it was:
    a C host (our interpreter in its namespace) and a Python host (in one of
    its own)."""
    exe = tmp_path / "blas_threads"
    (tmp_path / "blas_threads.c").write_text(_BLAS_THREADS_HOST)
    subprocess.run(["cc", "-o", str(exe), str(tmp_path / "blas_threads.c"), "-ldl"], check=True)
    python_host = ("import ctypes, os, sys; lib = ctypes.CDLL(sys.argv[1]); "
                   "assert lib.cuInit(0) == 0; getenv = ctypes.CDLL(None).getenv; "
                   "getenv.restype = ctypes.c_char_p; "
                   "print(len(os.listdir('/proc/self/task')), "
                   "(getenv(b'OPENBLAS_NUM_THREADS') or b'unset').decode())")
    library = str(Path(libdir) / "libcuda.so.1")
    for command in ([str(exe), library], [sys.executable, "-c", python_host, library]):
        seen = []
        for setting in (None, "1", "2"):
            env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
            if setting:
                env["OPENBLAS_NUM_THREADS"] = setting
            result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
            assert result.returncode == 0, result.stdout + result.stderr
            threads, left = result.stdout.split()
            assert left == (setting or "unset")
            seen.append(threads)
        assert len(set(seen)) == 1, (command[0], seen)
