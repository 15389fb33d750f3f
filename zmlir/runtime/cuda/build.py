"""Builds our libcuda.so.1: a C shared library (cffi embedding) whose
exported driver API functions run the Python driver in driver.py.

The library starts an embedded Python interpreter on first call; the paths
baked in at build time let it find this package and its dependencies without
any environment set by the application.
"""

from __future__ import annotations

import os
import shlex
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from zmlir.runtime.cuda import api

SONAME = "libcuda.so.1"
# Preloaded by `zmlir run`: NVRTC compiles and nvJitLink links for a real GPU
# give PTX (nvrtc_preload.c, nvjitlink_preload.c), dlopen-ed ones too
# (dlsym_preload.c).
NVRTC_PRELOAD = "libzmlir_nvrtc_preload.so"
PRELOAD_SOURCES = ("dlsym_preload.c", "nvrtc_preload.c", "nvjitlink_preload.c")


def library_dir() -> Path:
    """Where the built library lives (inside the installed package)."""
    return Path(__file__).resolve().parent / "lib"


def preinit_c(paths: list[str], name: str = "zmlir_preinit") -> str:
    """C run when the application loads the library, before Python starts.

    The application dlopens us without RTLD_GLOBAL, so libpython's symbols
    would be invisible to Python's own extension modules: load it again
    globally. And the interpreter must import this package's dependencies
    (cffi's backend first of all) from our environment: PYTHONPATH says so
    until the init code restores the application's value.
    """
    libpython = Path(sysconfig.get_config_var("LIBDIR")) / sysconfig.get_config_var(
        "INSTSONAME")
    joined = ":".join(paths)
    return f"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static void __attribute__((constructor)) {name}(void) {{
    dlopen("{libpython}", RTLD_NOW | RTLD_GLOBAL);
    const char *old = getenv("PYTHONPATH");
    static char value[16384];
    if (old) {{
        setenv("ZMLIR_APP_PYTHONPATH", old, 1);
        snprintf(value, sizeof value, "%s:%s", "{joined}", old);
    }} else {{
        unsetenv("ZMLIR_APP_PYTHONPATH");
        snprintf(value, sizeof value, "%s", "{joined}");
    }}
    setenv("PYTHONPATH", value, 1);
}}
"""


def _init_code(paths: list[str]) -> str:
    opencl = str(Path(sys.prefix) / "lib" / "libintelocl.so")
    return f"""
import os
import site
import sys
app_path = os.environ.pop("ZMLIR_APP_PYTHONPATH", None)
if app_path is None:
    os.environ.pop("PYTHONPATH", None)
else:
    os.environ["PYTHONPATH"] = app_path
for p in {paths!r}:
    site.addsitedir(p)
# The OpenCL runtime installed in the environment we were built from.
if os.path.exists({opencl!r}):
    os.environ.setdefault("ZMLIR_OPENCL_ICD", {opencl!r})
from _zmlir_cuda import ffi, lib
from zmlir.runtime.cuda import driver
driver.bind(ffi, lib)
"""


def build(out_dir: Path | None = None, verbose: bool = False) -> Path:
    import cffi

    out = out_dir or library_dir()
    out.mkdir(parents=True, exist_ok=True)
    package_root = str(Path(__file__).resolve().parents[3])
    paths = [package_root, *site.getsitepackages()]
    ffibuilder = cffi.FFI()
    python_bodies = api.python_declarations()
    ffibuilder.embedding_api(api.TYPES + python_bodies + api.UNSUPPORTED_API)
    # The launch fast path is C (fastpath.c): its exported functions call
    # their Python bodies (declared first) when the fast path does not apply.
    ffibuilder.cdef(api.fast_path_declarations() + api.UNSUPPORTED_ADDRESS_API)
    here = Path(__file__).resolve().parent
    fast_path = (here / "faults.c").read_text() + (here / "fastpath.c").read_text()
    prototypes = "\n".join(line for line in python_bodies.splitlines()
                           if api.PYTHON_BODY_PREFIX in line)
    source = (api.TYPES + preinit_c(paths) + prototypes + "\n" + api.UNSUPPORTED_API
              + fast_path + api.unimplemented_stubs_c())
    ffibuilder.set_source("_zmlir_cuda", source, extra_compile_args=["-O2"], extra_link_args=[
        f"-Wl,-soname,{SONAME}",
        f"-L{sysconfig.get_config_var('LIBDIR')}",
        f"-Wl,-rpath,{sysconfig.get_config_var('LIBDIR')}",
    ])
    ffibuilder.embedding_init_code(_init_code(paths))
    with tempfile.TemporaryDirectory(prefix="zmlir-libcuda-") as tmp:
        target = ffibuilder.compile(tmpdir=tmp, target=SONAME, verbose=verbose)
        built = Path(target)
        final = out / SONAME
        os.replace(built, final)
    link = out / "libcuda.so"
    if not link.exists():
        link.symlink_to(SONAME)
    _build_nvrtc_preload(out)
    return final


def _build_nvrtc_preload(out: Path) -> None:
    here = Path(__file__).resolve().parent
    sources = [str(here / name) for name in PRELOAD_SOURCES]
    compiler = shlex.split(sysconfig.get_config_var("CC") or "cc")
    partial = out / (NVRTC_PRELOAD + ".part")
    subprocess.run([*compiler, "-shared", "-fPIC", "-O2", "-o", str(partial), *sources,
                    "-ldl", "-lpthread"], check=True)
    os.replace(partial, out / NVRTC_PRELOAD)


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else None, verbose=True))
