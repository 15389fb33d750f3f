"""Builds our libcublas.so.13 and libcublasLt.so.13 next to libcuda.so.1.

Each is C (cublas/): our functions, compiled against NVIDIA's headers (the
nvidia-cublas wheel's, with the CUDA toolkit's cuda.h), each checked against
NVIDIA's prototype at compile time; the host BLAS is OpenBLAS (the
scipy-openblas32 wheel: bench/blas_sgemm.py measured it against oneMKL on
this CPU). Every function NVIDIA's library exports (cublas/nvidia_exports_*.txt)
is a jump through a slot that route.c fills on first call, from the backend
our driver runs on; this module generates those stubs and links.

    python -m zmlir.libraries.build [OUT_DIR]
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent / "cublas"
_SHARED_SOURCES = ("route.c", "engine.c")
# Our symbols' prefixes (engine.h: IMPL, IMPL_ALWAYS, NVIDIA_WRAPPER).
_PREFIXES = {"ours": "zmlir_impl_", "always": "zmlir_always_", "nvidia": "zmlir_forward_"}


@dataclass(frozen=True)
class Library:
    soname: str
    sources: tuple[str, ...]
    exports: str  # NVIDIA's exported names
    nvidia_needs: tuple[str, ...]  # NVIDIA's libraries it loads first (route.c)


LIBRARIES = (
    Library("libcublasLt.so.13", ("cublasLt.c",), "nvidia_exports_cublasLt.txt", ()),
    Library("libcublas.so.13", ("cublas.c",), "nvidia_exports_cublas.txt",
            ("libcublasLt.so.13",)),
)


class MissingDependency(RuntimeError):
    """What the build needs and this machine lacks (headers, the host BLAS)."""


def nvidia_wheel_dir() -> Path | None:
    """The nvidia-cublas wheel's folder (include/, lib/), if installed."""
    try:
        import nvidia  # namespace package of NVIDIA's wheels
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        folder = Path(root) / "cu13"
        if (folder / "include" / "cublas_api.h").exists():
            return folder
    return None


def cuda_include_dir() -> Path | None:
    """The CUDA toolkit's include/ (cuda.h, cuda_fp16.h, library_types.h)."""
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = os.environ.get("ZMLIR_REAL_NVCC") or shutil.which("nvcc")
    if nvcc:
        candidates.append(str(Path(os.path.realpath(nvcc)).parent.parent))
    candidates.append("/usr/local/cuda")
    for root in filter(None, candidates):
        if (Path(root) / "include" / "cuda.h").exists():
            return Path(root) / "include"
    return None


def _openblas() -> tuple[Path, Path, str]:
    try:
        import scipy_openblas32 as openblas
    except ImportError as err:
        raise MissingDependency("the host BLAS: pip install scipy-openblas32") from err
    return Path(openblas.get_include_dir()), Path(openblas.get_lib_dir()), openblas.get_library()


def _exports(library: Library) -> list[str]:
    lines = (line.strip() for line in (HERE / library.exports).read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _defined(objects: list[Path]) -> dict[str, dict[str, str]]:
    """Our functions in the objects, by kind (_PREFIXES) and exported name."""
    out = subprocess.run(["nm", "--defined-only", *map(str, objects)], check=True,
                         capture_output=True, text=True).stdout
    found: dict[str, dict[str, str]] = {kind: {} for kind in _PREFIXES}
    for symbol in re.findall(r" [TtDd] (\w+)$", out, re.M):
        for kind, prefix in _PREFIXES.items():
            if symbol.startswith(prefix):
                found[kind][symbol[len(prefix):]] = symbol
    return found


def exports_c(library: Library, names: list[str], defined: dict[str, dict[str, str]]) -> str:
    """The export table route.c reads, and one stub per exported name: a
    jump through its slot, or, while the slot is empty, to the binder."""
    unknown = sorted(set().union(*defined.values()) - set(names))
    if unknown:
        raise ValueError(f"{library.soname}: not NVIDIA's exports: {', '.join(unknown)}")
    lines = ['#include "route.h"', ""]
    for kind in _PREFIXES:
        lines += [f"extern char {symbol}[];" for symbol in defined[kind].values()]
    lines.append(f'const char zmlir_library_name[] = "{library.soname}";')
    needs = "".join(f'"{n}", ' for n in library.nvidia_needs)
    lines.append(f"const char *const zmlir_nvidia_needs[] = {{{needs}0}};")
    lines.append(f"const unsigned zmlir_export_count = {len(names)};")
    lines.append(f"void *zmlir_slots[{len(names)}];")
    lines.append("const struct zmlir_export zmlir_exports[] = {")
    for name in names:
        ours = defined["ours"].get(name) or defined["always"].get(name) or "0"
        always = int(name in defined["always"])
        nvidia = defined["nvidia"].get(name, "0")
        lines.append(f'  {{"{name}", {ours}, {always}, {nvidia}}},')
    lines.append("};")
    asm = []
    for index, name in enumerate(names):
        asm += [".text", f".globl {name}", f".type {name}, @function", f"{name}:",
                f"  movq zmlir_slots+{8 * index}(%rip), %r11", "  testq %r11, %r11",
                "  jz 1f", "  jmp *%r11", f"1: movl ${index}, %r11d",
                "  jmp zmlir_bind_trampoline", f".size {name}, .-{name}"]
    lines.append("__asm__(\n" + "".join(f'"{line}\\n"\n' for line in asm) + ");")
    return "\n".join(lines) + "\n"


def _compiler() -> list[str]:
    return shlex.split(sysconfig.get_config_var("CC") or "cc")


def build_library(library: Library, out: Path, libcuda: Path, verbose: bool = False) -> Path:
    wheel, cuda_include = nvidia_wheel_dir(), cuda_include_dir()
    if wheel is None:
        raise MissingDependency("NVIDIA's cuBLAS headers: pip install 'nvidia-cublas==13.0.*'")
    if cuda_include is None:
        raise MissingDependency("the CUDA toolkit's headers (cuda.h): set CUDA_HOME")
    blas_include, blas_lib, blas_name = _openblas()
    flags = ["-std=gnu11", "-O2", "-fPIC", "-fvisibility=hidden", "-Wall", "-Werror",
             f"-I{HERE}", f"-I{wheel / 'include'}", f"-I{cuda_include}", f"-I{blas_include}",
             "-DZMLIR_BLAS_PREFIX=scipy_", f'-DZMLIR_NVIDIA_LIBDIR="{wheel / "lib"}"']
    names = _exports(library)
    with tempfile.TemporaryDirectory(prefix="zmlir-cublas-") as tmp:
        objects = []
        for source in (*_SHARED_SOURCES, *library.sources):
            obj = Path(tmp) / (Path(source).stem + ".o")
            command = [*_compiler(), *flags, "-c", str(HERE / source), "-o", str(obj)]
            if verbose:
                print(" ".join(command))
            subprocess.run(command, check=True)
            objects.append(obj)
        stubs = Path(tmp) / "exports.c"
        stubs.write_text(exports_c(library, names, _defined(objects)))
        script = Path(tmp) / "exports.map"
        script.write_text(f"{library.soname} {{\n  global:\n"
                          + "".join(f"    {n};\n" for n in names) + "  local: *;\n};\n")
        partial = out / (library.soname + ".part")
        command = [*_compiler(), *flags, "-shared", str(stubs), *map(str, objects),
                   f"-Wl,-soname,{library.soname}", f"-Wl,--version-script={script}",
                   str(libcuda), f"-L{blas_lib}", f"-l{blas_name}",
                   f"-Wl,-rpath,{blas_lib}", "-Wl,-rpath,$ORIGIN", "-ldl", "-lpthread", "-lm",
                   "-o", str(partial)]
        if verbose:
            print(" ".join(command))
        subprocess.run(command, check=True)
    final = out / library.soname
    os.replace(partial, final)
    link = out / library.soname.rsplit(".", 1)[0]  # libcublas.so, for -lcublas
    if not link.is_symlink():
        link.unlink(missing_ok=True)
        link.symlink_to(library.soname)
    return final


def build(out_dir: Path | None = None, verbose: bool = False) -> list[Path]:
    """Both libraries, into our libcuda.so.1's folder (which must be built)."""
    from zmlir.runtime.cuda import build as libcuda

    out = out_dir or libcuda.library_dir()
    driver = libcuda.library_dir() / libcuda.SONAME
    if not driver.exists():
        raise MissingDependency(f"our {libcuda.SONAME}: python -m zmlir.runtime.cuda.build")
    out.mkdir(parents=True, exist_ok=True)
    return [build_library(library, out, driver, verbose) for library in LIBRARIES]


def built(directory: Path) -> bool:
    return all((directory / library.soname).exists() for library in LIBRARIES)


if __name__ == "__main__":
    try:
        for path in build(Path(sys.argv[1]) if len(sys.argv) > 1 else None, verbose=True):
            print(path)
    except MissingDependency as err:
        sys.exit(f"zmlir: cannot build cuBLAS: {err} is missing")
