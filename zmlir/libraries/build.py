"""Builds our libcublas.so.13, libcublasLt.so.13, libcufft.so.12 and
libcurand.so.10 next to libcuda.so.1.

Each is C (cublas/, cufft/, curand/): our functions, compiled against NVIDIA's
headers (the nvidia-cublas, nvidia-cufft and nvidia-curand wheels', with the
CUDA toolkit's cuda.h), each checked against NVIDIA's prototype at compile
time. cuRAND's generators are CUDA C++ of ours (curand/kernels.cu) over
NVIDIA's device API, compiled to PTX by nvcc here and embedded in the library,
which loads it through the driver API. The host BLAS is
OpenBLAS (the scipy-openblas32 wheel: bench/blas_sgemm.py measured it against
oneMKL on this CPU); the host FFT is oneMKL's DFTI (the mkl wheel:
bench/results/cufft.md measured it against FFTW). Every function NVIDIA's
library exports (<dir>/nvidia_exports_*.txt) is a jump through a slot that
common/route.c fills on first call, from the backend our driver runs on; this
module generates those stubs and links.

libzmlir_sycl_blas.so (sycl/sycl_blas.cpp), oneMKL's SYCL BLAS for our
libcublas's GEMMs under ZMLIR_LIBRARY_ROUTE=sycl, is built beside them where
ZMLIR_SYCL_ROOT names Intel's SYCL runtime and oneMKL's SYCL BLAS laid out by
tools/sycl_root.sh (docs/library-backends.md), and left out elsewhere.

    python -m zmlir.libraries.build [OUT_DIR] [--allow-missing] [--only SONAME]
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

from zmlir.libraries import ilp64

ROOT = Path(__file__).resolve().parent
COMMON = ROOT / "common"
# Our symbols' prefixes (route.h: IMPL, IMPL_ALWAYS).
_PREFIXES = {"ours": "zmlir_impl_", "always": "zmlir_always_"}


@dataclass(frozen=True)
class Library:
    soname: str
    directory: str  # its sources' folder under zmlir/libraries/
    sources: tuple[str, ...]  # there, besides common/route.c
    exports: str  # NVIDIA's exported names, in `directory`
    host: str | None  # the host library it runs on: "blas", "fft", or none
    api: str  # its name in messages
    not_supported: tuple[int, str]  # its NOT_SUPPORTED status: value, name
    header: str  # a header of NVIDIA's wheel, to find its include/
    # CUDA C++ of ours (in `directory`) compiled to PTX by nvcc and embedded
    # as `zmlir_<directory>_ptx`: such a library needs only the driver API,
    # and is ours on every driver (common/route.c).
    kernels: str | None = None
    # NVIDIA's library (and one of its symbols) whose presence, instead of
    # ours, makes ours NVIDIA's: its library beside it (common/route.c).
    vendor_partner: tuple[str, str] | None = None
    # Its `_64` functions over our 32-bit ones where the header allows
    # (ilp64.py).
    ilp64: bool = False


_CUBLAS_NOT_SUPPORTED = (15, "CUBLAS_STATUS_NOT_SUPPORTED")
LIBRARIES = (
    Library("libcublasLt.so.13", "cublas", ("engine.c", "cublasLt.c"),
            "nvidia_exports_cublasLt.txt", "blas", "cuBLASLt", _CUBLAS_NOT_SUPPORTED,
            "cublas_api.h", vendor_partner=("libcublas.so.13", "cublasCreate_v2")),
    Library("libcublas.so.13", "cublas", ("engine.c", "cublas.c", "blas.c"),
            "nvidia_exports_cublas.txt", "blas", "cuBLAS", _CUBLAS_NOT_SUPPORTED, "cublas_api.h",
            ilp64=True),
    Library("libcufft.so.12", "cufft", ("cufft.c",), "nvidia_exports_cufft.txt", "fft",
            "cuFFT", (16, "CUFFT_NOT_SUPPORTED"), "cufft.h"),
    # cuRAND has no "not supported" status; ARCH_MISMATCH ("GPU does not
    # support requested feature") says it best.
    Library("libcurand.so.10", "curand", ("curand.c",), "nvidia_exports_curand.txt", None,
            "cuRAND", (204, "CURAND_STATUS_ARCH_MISMATCH"), "curand.h", kernels="kernels.cu"),
)


class MissingDependency(RuntimeError):
    """What the build needs and this machine lacks (headers, the host BLAS)."""


def nvidia_wheel_dir(header: str = "cublas_api.h") -> Path | None:
    """The folder (include/, lib/) of NVIDIA's wheel that has `header`
    (nvidia-cublas: cublas_api.h, nvidia-cufft: cufft.h), if installed."""
    try:
        import nvidia  # namespace package of NVIDIA's wheels
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        folder = Path(root) / "cu13"
        if (folder / "include" / header).exists():
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


def _openblas() -> tuple[list[str], list[str]]:
    """OpenBLAS's compile flags and link arguments."""
    try:
        import scipy_openblas32 as openblas
    except ImportError as err:
        raise MissingDependency("the host BLAS: pip install scipy-openblas32") from err
    lib = openblas.get_lib_dir()
    return ([f"-I{openblas.get_include_dir()}", "-DZMLIR_BLAS_PREFIX=scipy_"],
            [f"-L{lib}", f"-l{openblas.get_library()}", f"-Wl,-rpath,{lib}"])


def mkl_dirs() -> tuple[Path, Path] | None:
    """oneMKL's include/ and lib/ (the mkl and mkl-include wheels install them
    into the environment's prefix), if installed."""
    prefix = Path(sys.prefix)
    include, lib = prefix / "include", prefix / "lib"
    if (include / "mkl_dfti.h").exists() and (lib / "libmkl_rt.so.3").exists():
        return include, lib
    return None


def _mkl() -> tuple[list[str], list[str]]:
    """oneMKL's compile flags and link arguments (its single dynamic library;
    the threading layer is chosen at run time, cufft.c)."""
    dirs = mkl_dirs()
    if dirs is None:
        raise MissingDependency("the host FFT: pip install mkl mkl-include")
    include, lib = dirs
    return ([f"-I{include}", f'-DZMLIR_MKL_LIBDIR="{lib}"'],
            [str(lib / "libmkl_rt.so.3"), f"-Wl,-rpath,{lib}"])


_HOST_LIBRARIES = {"blas": _openblas, "fft": _mkl}


def _exports(library: Library) -> list[str]:
    path = ROOT / library.directory / library.exports
    lines = (line.strip() for line in path.read_text().splitlines())
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
    lines.append(f"const unsigned zmlir_export_count = {len(names)};")
    lines.append(f"void *zmlir_slots[{len(names)}];")
    lines.append("const struct zmlir_export zmlir_exports[] = {")
    for name in names:
        ours = defined["ours"].get(name) or defined["always"].get(name) or "0"
        always = int(name in defined["always"])
        lines.append(f'  {{"{name}", {ours}, {always}}},')
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


_WHEELS = {"cublas_api.h": "'nvidia-cublas==13.0.*'", "cufft.h": "'nvidia-cufft==12.0.*'",
           "curand.h": "'nvidia-curand==10.4.*'"}


def _nvcc() -> str:
    """NVIDIA's nvcc (not `zmlir run`'s stand-in)."""
    for candidate in (os.environ.get("ZMLIR_REAL_NVCC"), shutil.which("nvcc"),
                      "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise MissingDependency("nvcc (the CUDA toolkit's compiler)")


def kernels_c(library: Library, include: Path, tmp: Path, verbose: bool = False) -> Path:
    """The library's kernels as PTX for compute_75 (every backend of ours
    loads it; NVIDIA's driver compiles it for its GPU), in a C file."""
    assert library.kernels
    ptx = tmp / "kernels.ptx"
    command = [_nvcc(), "-ptx", "-arch=compute_75", f"-I{include}",
               str(ROOT / library.directory / library.kernels), "-o", str(ptx)]
    if verbose:
        print(" ".join(command))
    subprocess.run(command, check=True)
    data = ptx.read_bytes() + b"\0"
    rows = (",".join(str(b) for b in data[i:i + 64]) for i in range(0, len(data), 64))
    source = tmp / "kernels_ptx.c"
    source.write_text(f"const char zmlir_{library.directory}_ptx[{len(data)}] = {{\n"
                      + ",\n".join(rows) + "};\n")
    return source


def _compile(source: Path, tmp: Path, flags: list[str], verbose: bool) -> Path:
    obj = tmp / (source.stem + ".o")
    command = [*_compiler(), *flags, "-c", str(source), "-o", str(obj)]
    if verbose:
        print(" ".join(command))
    subprocess.run(command, check=True)
    return obj


def build_library(library: Library, out: Path, libcuda: Path, verbose: bool = False) -> Path:
    wheel, cuda_include = nvidia_wheel_dir(library.header), cuda_include_dir()
    if cuda_include is None:
        raise MissingDependency("the CUDA toolkit's headers (cuda.h): set CUDA_HOME")
    if wheel is None and (cuda_include / library.header).exists():
        wheel = cuda_include.parent  # the toolkit's own (include/)
    elif wheel is None:
        raise MissingDependency(f"NVIDIA's {library.api} headers: "
                                f"pip install {_WHEELS[library.header]}")
    host_flags, host_link = _HOST_LIBRARIES[library.host]() if library.host else ([], [])
    here = ROOT / library.directory
    status, status_name = library.not_supported
    flags = ["-std=gnu11", "-O2", "-fPIC", "-fvisibility=hidden", "-Wall", "-Werror",
             f"-I{here}", f"-I{COMMON}", f"-I{wheel / 'include'}", f"-I{cuda_include}",
             *host_flags, f"-DZMLIR_NOT_SUPPORTED={status}", f'-DZMLIR_NOT_SUPPORTED_NAME="{status_name}"',
             f'-DZMLIR_API_NAME="{library.api}"']
    if library.kernels:
        flags.append("-DZMLIR_OURS_ON_EVERY_DRIVER")
    if library.vendor_partner:
        partner, symbol = library.vendor_partner
        flags += [f'-DZMLIR_VENDOR_PARTNER="{partner}"',
                  f'-DZMLIR_VENDOR_PARTNER_SYMBOL="{symbol}"']
    names = _exports(library)
    with tempfile.TemporaryDirectory(prefix="zmlir-libraries-") as tmp:
        objects = []
        sources = [COMMON / "route.c", *(here / name for name in library.sources)]
        if library.kernels:
            sources.append(kernels_c(library, wheel / "include", Path(tmp), verbose))
        for source in sources:
            objects.append(_compile(source, Path(tmp), flags, verbose))
        if library.ilp64:
            wide = Path(tmp) / "ilp64.c"
            header = (wheel / "include" / library.header).read_text()
            wide.write_text(ilp64.wrappers_c(header, set(_defined(objects)["ours"])))
            objects.append(_compile(wide, Path(tmp), flags, verbose))
        stubs = Path(tmp) / "exports.c"
        stubs.write_text(exports_c(library, names, _defined(objects)))
        script = Path(tmp) / "exports.map"
        script.write_text(f"{library.soname} {{\n  global:\n"
                          + "".join(f"    {n};\n" for n in names) + "  local: *;\n};\n")
        partial = out / (library.soname + ".part")
        command = [*_compiler(), *flags, "-shared", str(stubs), *map(str, objects),
                   f"-Wl,-soname,{library.soname}", f"-Wl,--version-script={script}",
                   str(libcuda), *host_link, "-Wl,-rpath,$ORIGIN", "-ldl", "-lpthread", "-lm",
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


SYCL_PLUGIN = "libzmlir_sycl_blas.so"


# Where `make bootstrap` lays out the SYCL route's dependencies (Makefile).
DEFAULT_SYCL_ROOT = Path(__file__).resolve().parents[2] / ".sycl"


def sycl_root() -> Path | None:
    """ZMLIR_SYCL_ROOT, else the checkout's .sycl, where it holds what the
    SYCL route builds on (tools/sycl_root.sh lays it out); None where
    neither does."""
    path = Path(os.environ.get("ZMLIR_SYCL_ROOT") or DEFAULT_SYCL_ROOT)
    needed = ("include/sycl/sycl.hpp", "include/oneapi/mkl/blas.hpp", "lib/libsycl.so.9",
              "lib/libmkl_sycl_blas.so.6", "lib/libur_adapter_opencl.so.0")
    return path if all((path / n).exists() for n in needed) else None


def build_sycl_plugin(out: Path, verbose: bool = False) -> Path:
    """libzmlir_sycl_blas.so: host C++ (no kernels of its own) against
    Intel's SYCL headers, linked with oneMKL's SYCL BLAS and the CPU oneMKL
    it calls on a CPU device (ILP64, TBB threads: the OpenCL CPU runtime's)."""
    root, dirs = sycl_root(), mkl_dirs()
    if root is None:
        raise MissingDependency("Intel's SYCL runtime and oneMKL's SYCL BLAS: set "
                                "ZMLIR_SYCL_ROOT (tools/sycl_root.sh DIR)")
    if dirs is None:
        raise MissingDependency("oneMKL's headers: pip install mkl mkl-include")
    lib = root / "lib"
    partial = out / (SYCL_PLUGIN + ".part")
    compiler = os.environ.get("CXX") or shutil.which("g++-12") or "g++"
    command = [compiler, "-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
               "-Wall", "-Werror", "-Wno-deprecated-declarations",
               "-DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING", "-DMKL_ILP64",
               f'-DZMLIR_SYCL_LIBDIR="{lib}"', "-isystem", str(root / "include"), "-isystem",
               str(dirs[0]), str(ROOT / "sycl" / "sycl_blas.cpp"), f"-L{lib}", "-l:libmkl_sycl_blas.so.6",
               "-l:libmkl_intel_ilp64.so.3", "-l:libmkl_tbb_thread.so.3", "-l:libmkl_core.so.3",
               "-l:libtbb.so.12", "-l:libsycl.so.9", f"-Wl,-rpath,{lib}", "-o", str(partial)]
    if verbose:
        print(" ".join(command))
    subprocess.run(command, check=True)
    final = out / SYCL_PLUGIN
    os.replace(partial, final)
    return final


def build(out_dir: Path | None = None, verbose: bool = False,
          allow_missing: bool = False, only_missing: bool = False,
          quiet: bool = False, only: str | None = None) -> list[Path]:
    """Our libraries, into our libcuda.so.1's folder (which must be built).
    With `allow_missing`, a library whose dependencies this machine lacks is
    left out, saying so on stderr unless `quiet` (an NVIDIA machine without
    oneMKL still gets our cuBLAS); with `only_missing`, one already built is
    kept; with `only`, the library of that soname alone."""
    from zmlir.runtime.cuda import build as libcuda

    out = out_dir or libcuda.library_dir()
    driver = libcuda.library_dir() / libcuda.SONAME
    if not driver.exists():
        raise MissingDependency(f"our {libcuda.SONAME}: python -m zmlir.runtime.cuda.build")
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for library in LIBRARIES:
        if only_missing and (out / library.soname).exists():
            continue
        if only and library.soname != only:
            continue
        try:
            made.append(build_library(library, out, driver, verbose))
        except MissingDependency as err:
            # A library of kernels needs nvcc, which a machine may well lack:
            # its programs then find NVIDIA's library, if anywhere.
            if not allow_missing and not library.kernels:
                raise
            if not quiet:
                print(f"zmlir: {library.soname} not built: {err} is missing", file=sys.stderr)
    # The SYCL route's plugin where asked for (ZMLIR_SYCL_ROOT), never
    # needed; `--only libzmlir_sycl_blas.so` says what it lacks.
    if only == SYCL_PLUGIN or (only is None and sycl_root() is not None
                               and not (only_missing and (out / SYCL_PLUGIN).exists())):
        made.append(build_sycl_plugin(out, verbose))
    return made


def built(directory: Path) -> bool:
    return all((directory / library.soname).exists() for library in LIBRARIES)


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--allow-missing"]
    only = None
    if "--only" in arguments:
        at = arguments.index("--only")
        only, arguments = arguments[at + 1], arguments[:at] + arguments[at + 2:]
    try:
        for path in build(Path(arguments[0]) if arguments else None, verbose=True,
                          allow_missing="--allow-missing" in sys.argv, only=only):
            print(path)
    except MissingDependency as err:
        sys.exit(f"zmlir: cannot build our CUDA libraries: {err} is missing")
