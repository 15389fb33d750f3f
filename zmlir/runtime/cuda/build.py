"""Builds our libcuda.so.1 and the driver it loads.

libzmlir_cuda.so is a C shared library (cffi embedding) whose exported driver
API functions run the Python driver in driver.py; it starts an embedded
Python interpreter on first call, and the paths baked in at build time let it
find this package and its dependencies without any environment set by the
application. libcuda.so.1 is shim.c: it loads that library (into a link-map
namespace of its own in a Python host: docs/python-hosts.md) and exports
every driver function as a jump into it.
"""

from __future__ import annotations

import os
import platform
import shlex
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from zmlir.runtime.cuda import api

SONAME = "libcuda.so.1"
# The driver itself; libcuda.so.1 is the shim that loads it (shim.c).
IMPLEMENTATION = "libzmlir_cuda.so"
# Written by shim.c in C, not forwarded by a stub.
_SHIM_OWN = ("cuGetProcAddress", "cuGetProcAddress_v2")
# Preloaded by `zmlir run`: NVRTC compiles and nvJitLink links for a real GPU
# give PTX (nvrtc_preload.c, nvjitlink_preload.c), dlopen-ed ones too
# (dlsym_preload.c).
NVRTC_PRELOAD = "libzmlir_nvrtc_preload.so"
PRELOAD_SOURCES = ("dlsym_preload.c", "nvrtc_preload.c", "nvjitlink_preload.c",
                   "arch_preload.c")


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
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
static void __attribute__((constructor)) {name}(void) {{
    /* In a link-map namespace of its own (shim.c), libpython, our dependency,
     * is already in the namespace's global scope, and glibc cannot add to
     * that scope (before 2.37 it crashes). */
    Dl_info self;
    struct link_map *map = NULL;
    Lmid_t namespace = LM_ID_BASE;
    if (dladdr1((void *)&{name}, &self, (void **)&map, RTLD_DL_LINKMAP) && map)
        dlinfo(map, RTLD_DI_LMID, &namespace);
    if (namespace == LM_ID_BASE) {{
        dlopen("{libpython}", RTLD_NOW | RTLD_GLOBAL);
    }} else {{
        /* This namespace's environment, which the host never sees: the
         * host's Python settings are not ours. */
        setenv("ZMLIR_LINK_NAMESPACE", "1", 1);
        unsetenv("PYTHONHOME");
        unsetenv("PYTHONPATH");
    }}
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
# Our interpreter's numpy does no BLAS: its OpenBLAS would start a thread per
# core (15 on a 16-core host, each spinning at first). The host's setting back
# once it is loaded. Not in the host's own interpreter (ZMLIR_LINK_NAMESPACE_MODE
# =shared in a Python host), whose numpy is the host's.
if os.environ.get("ZMLIR_LINK_NAMESPACE_MODE") != "shared" and "numpy" not in sys.modules:
    host_blas_threads = os.environ.get("OPENBLAS_NUM_THREADS")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        if host_blas_threads is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = host_blas_threads
from _zmlir_cuda import ffi, lib
# The JIT cache's key, before the driver imports any of the compiler.
from zmlir.runtime import cache
cache.fingerprint_compiler()
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
    fast_path = "".join((here / name).read_text()
                        for name in ("namespace.c", "faults.c", "fastpath.c"))
    prototypes = "\n".join(line for line in python_bodies.splitlines()
                           if api.PYTHON_BODY_PREFIX in line)
    source = (api.TYPES + preinit_c(paths) + prototypes + "\n" + api.UNSUPPORTED_API
              + fast_path + api.unimplemented_stubs_c())
    ffibuilder.set_source("_zmlir_cuda", source, extra_compile_args=["-O2", f"-I{here}"],
                          extra_link_args=[
        f"-Wl,-soname,{IMPLEMENTATION}",
        f"-L{sysconfig.get_config_var('LIBDIR')}",
        f"-Wl,-rpath,{sysconfig.get_config_var('LIBDIR')}",
    ])
    ffibuilder.embedding_init_code(_init_code(paths))
    with tempfile.TemporaryDirectory(prefix="zmlir-libcuda-") as tmp:
        target = ffibuilder.compile(tmpdir=tmp, target=IMPLEMENTATION, verbose=verbose)
        os.replace(Path(target), out / IMPLEMENTATION)
    final = _build_shim(out)
    link = out / "libcuda.so"
    if not link.exists():
        link.symlink_to(SONAME)
    _build_nvrtc_preload(out)
    from zmlir.runtime.backends.cuda_ffi import write_ffi_module

    write_ffi_module()  # the passthrough's declarations, parsed once here
    return final


# Ours that libcuda.so.1 exports too: the launches, event, memory and query
# calls the C fast path took (tests).
_SHIM_DIAGNOSTICS = ("zmlir_fast_launches", "zmlir_fast_events", "zmlir_fast_memory_calls",
                     "zmlir_fast_queries")


def exported_names() -> list[str]:
    """Every function libcuda.so.1 exports: ours, NVIDIA's others, diagnostics."""
    return [*api.function_names(), *api.unimplemented_names(), *_SHIM_DIAGNOSTICS]


def shim_c() -> str:
    """shim.c and what it needs: the names, a stub per name, their addresses."""
    names = exported_names()
    index = {name: i for i, name in enumerate(names)}
    stubs = [name for name in names if name not in _SHIM_OWN]
    head = (f"#define ZMLIR_SHIM_COUNT {len(names)}\n"
            f'#define ZMLIR_SHIM_IMPL "{IMPLEMENTATION}"\n'
            f"#define ZMLIR_SHIM_PROC {index['cuGetProcAddress']}\n"
            f"#define ZMLIR_SHIM_PROC2 {index['cuGetProcAddress_v2']}\n")
    body = (Path(__file__).resolve().parent / "shim.c").read_text()
    listing = "".join(f'  "{name}",\n' for name in names)
    declarations = "".join(f"extern void {name}(void);\n" for name in stubs)
    addresses = "".join(f"  (void *)&{name},\n" for name in names)
    return (head + body + "const char *const zmlir_shim_names[] = {\n" + listing + "};\n"
            + declarations
            + "void *const zmlir_shim_exports[] = {\n" + addresses + "};\n"
            + "__asm__(\n" + "".join(_stub_asm(name, index[name]) for name in stubs) + ");\n")


def _stub_asm(name: str, slot: int) -> str:
    """An exported function that jumps to the implementation's: arguments,
    return address and stack stay the caller's."""
    jump = [line.format(offset=8 * slot) for line in _STUB_JUMP[platform.machine()]]
    lines = [".text", f".globl {name}", f".type {name}, @function", f"{name}:", *jump,
             f".size {name}, .-{name}"]
    return "".join(f'"{line}\\n"\n' for line in lines)


# The jump through zmlir_shim_slots[slot], per machine.
_STUB_JUMP = {
    "x86_64": ["jmp *zmlir_shim_slots+{offset}(%rip)"],
    "aarch64": ["adrp x16, zmlir_shim_slots", "add x16, x16, :lo12:zmlir_shim_slots",
                "ldr x16, [x16, #{offset}]", "br x16"],
}


def _build_shim(out: Path) -> Path:
    compiler = shlex.split(sysconfig.get_config_var("CC") or "cc")
    partial = out / (SONAME + ".part")
    with tempfile.TemporaryDirectory(prefix="zmlir-shim-") as tmp:
        source = Path(tmp) / "shim.c"
        source.write_text(shim_c())
        subprocess.run([*compiler, "-shared", "-fPIC", "-O2", f"-Wl,-soname,{SONAME}", "-o",
                        str(partial), str(source), "-ldl"], check=True)
    final = out / SONAME
    os.replace(partial, final)
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
