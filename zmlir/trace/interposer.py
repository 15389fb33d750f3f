"""`zmlir trace -- ./app`: an libcuda.so.1 that forwards every driver API call
to NVIDIA's libcuda and logs it with the same Tracer as our runtime
(tracer.py), so the two traces of one program compare.

The library is built like our runtime's (cffi embedding, exporting the
declarations of api.py). At its first call it loads NVIDIA's library by
absolute path (ZMLIR_REAL_LIBCUDA, or searched in the usual places, never
ours) with RTLD_LOCAL | RTLD_DEEPBIND, and binds each export to a forwarder.

Calls that do not go through our exports are covered as follows:

- cuGetProcAddress(_v2): the returned pointer is compared with the real
  library's own exports (name, name_v2.._v4, each also _ptds/_ptsz). A match
  with a known signature is replaced by our traced export (or, for the
  per-thread variants, a traced callback to NVIDIA's variant). Other pointers
  are returned unchanged: calling them through a forwarder with a guessed
  signature could drop arguments. Each such symbol is noted once in the
  trace ({"event": "unwrapped_proc", "symbol": ...}).
- cuGetExportTable: for the tables export_tables.py knows, the application
  gets a copy of NVIDIA's table (its full length, read from slot 0 for sized
  tables) in which
    * slots with a known signature are traced forwarders;
    * INTEGRITY_CHECK slot 1 is answered here: cudart checks an HMAC over the
      table and function addresses *it* was given, which are now ours, so
      forwarding to NVIDIA would fail the check (integrity.py's algorithm,
      with NVIDIA's driver version and devices);
    * other slots of a known table (x86-64 only) go through an entry-only
      trampoline: it saves every argument register, logs the table, slot and
      the six integer argument registers (raw values, nothing dereferenced),
      restores them and jumps to NVIDIA's function with the stack untouched.
      This is safe whatever the real signature is; the result and duration
      are not recorded (the jump does not come back);
    * slots past the known length are copied verbatim, unlogged.
  Tables with an unknown UUID are returned unchanged, unlogged: we know
  neither their length nor which slots are functions, so any copy could be
  wrong. ZMLIR_TRACE_TABLES=off returns every table unchanged;
  ZMLIR_TRACE_TABLES=unknown also copies an unknown table whose slot 0 reads
  as a size, its slots that point into executable code going through the
  entry-only trampoline ("export_table:<UUID>:<slot>"): to find which slots
  NVIDIA's libraries call (a guess: a slot of code might be data).

The trace goes to ZMLIR_TRACE_INTERPOSER (set by `zmlir trace -o`), or
ZMLIR_TRACE; "%p" in the name becomes the process id.
"""

from __future__ import annotations

import os
import site
import struct
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path
from typing import Any

from zmlir.files import cache_dir, check_private_file, private_dir

SONAME = "libcuda.so.1"
MARKERS = (b"_zmlir_cuda", b"zmlir_shim_exports", b"_zmlir_interposer")
TRAMPOLINES = 1024
SEARCH_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu",
               "/lib64", "/usr/lib/aarch64-linux-gnu", "/usr/local/nvidia/lib64",
               "/usr/local/nvidia/lib", "/usr/lib/wsl/lib",
               "/run/nvidia/driver/usr/lib/x86_64-linux-gnu")


def default_dir() -> Path:
    return cache_dir() / "interposer" / f"py{sys.version_info[0]}{sys.version_info[1]}"


def _private_build_dir() -> Path:
    """default_dir() if no other user can write it or what it holds (the
    application loads the library from there), else a fresh temp dir."""
    directory = default_dir()
    try:
        for level in (directory.parent.parent, directory.parent, directory):
            private_dir(level)
        check_private_file(directory / SONAME)
        return directory
    except OSError as err:
        fresh = Path(tempfile.mkdtemp(prefix="zmlir-interposer-"))
        _log(f"{err}; building the interposer in {fresh}")
        return fresh


# -- build ------------------------------------------------------------------------------


def _helpers_c() -> str:
    tramps = []
    for k in range(TRAMPOLINES):
        save_x = "\n".join(f"    movdqu %xmm{i}, {16 * i}(%rsp)" for i in range(8))
        load_x = "\n".join(f"    movdqu {16 * i}(%rsp), %xmm{i}" for i in range(8))
        tramps.append(f"""
    .globl zmlir_tramp_{k}
    .hidden zmlir_tramp_{k}
    .type zmlir_tramp_{k}, @function
zmlir_tramp_{k}:
    push %rdi
    push %rsi
    push %rdx
    push %rcx
    push %r8
    push %r9
    push %rax
    sub $128, %rsp
{save_x}
    mov ${k}, %edi
    lea 128(%rsp), %rsi
    call zmlir_slot_entry
{load_x}
    add $128, %rsp
    pop %rax
    pop %r9
    pop %r8
    pop %rcx
    pop %rdx
    pop %rsi
    pop %rdi
    jmp *(zmlir_slot_real+{8 * k})(%rip)
""")
    decls = "\n".join(f"extern void zmlir_tramp_{k}(void);" for k in range(TRAMPOLINES))
    asm = "".join('"' + line + '\\n"\n' for t in tramps for line in t.splitlines())
    table = ", ".join(f"(void *)zmlir_tramp_{k}" for k in range(TRAMPOLINES))
    return f"""
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
void zmlir_slot_called(int k, unsigned long long *regs);
#include <stdint.h>
void *zmlir_real_open(const char *path) {{
    return dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
}}
void *zmlir_real_sym(void *handle, const char *name) {{ return dlsym(handle, name); }}
const char *zmlir_dlerror(void) {{ return dlerror(); }}
#if defined(__x86_64__)
__attribute__((visibility("hidden"))) void *zmlir_slot_real[{TRAMPOLINES}];
__attribute__((visibility("hidden"), used)) void zmlir_slot_entry(int k, unsigned long long *regs) {{
    zmlir_slot_called(k, regs);
}}
__asm__(".text\\n"
{asm}
);
{decls}
static void *const zmlir_trampolines[] = {{ {table} }};
int zmlir_trampoline_count(void) {{ return {TRAMPOLINES}; }}
void *zmlir_trampoline(int k, void *real) {{
    if (k < 0 || k >= {TRAMPOLINES}) return 0;
    zmlir_slot_real[k] = real;
    return zmlir_trampolines[k];
}}
#else
int zmlir_trampoline_count(void) {{ return 0; }}
void *zmlir_trampoline(int k, void *real) {{ return 0; }}
#endif
"""


_HELPERS_CDEF = """
void *zmlir_real_open(const char *path);
void *zmlir_real_sym(void *handle, const char *name);
const char *zmlir_dlerror(void);
int zmlir_trampoline_count(void);
void *zmlir_trampoline(int k, void *real);
"""


def _init_code(paths: list[str], package_root: str) -> str:
    return f"""
import os, site, sys, types
app_path = os.environ.pop("ZMLIR_APP_PYTHONPATH", None)
if app_path is None:
    os.environ.pop("PYTHONPATH", None)
else:
    os.environ["PYTHONPATH"] = app_path
for p in {paths!r}:
    site.addsitedir(p)
try:  # the full package when its toolchain is here; else only what tracing needs
    import zmlir
except Exception:
    for name in [m for m in sys.modules if m == "zmlir" or m.startswith("zmlir.")]:
        del sys.modules[name]
    package = types.ModuleType("zmlir")
    package.__path__ = [{os.path.join(package_root, "zmlir")!r}]
    sys.modules["zmlir"] = package
from _zmlir_interposer import ffi, lib
from zmlir.trace import interposer
interposer.bind(ffi, lib)
"""


def build(out_dir: Path | None = None, verbose: bool = False) -> Path:
    import cffi

    from zmlir.runtime.cuda import api
    from zmlir.runtime.cuda import build as libcuda

    out = Path(out_dir) if out_dir else default_dir()
    out.mkdir(parents=True, exist_ok=True)
    package_root = str(Path(__file__).resolve().parents[2])
    paths = [package_root, *site.getsitepackages(), site.getusersitepackages(),
             str(Path(cffi.__file__).resolve().parents[1])]
    paths = [p for i, p in enumerate(paths) if p and p not in paths[:i]]
    ffibuilder = cffi.FFI()
    ffibuilder.embedding_api(api.TYPES + api.FUNCTIONS
                             + "void zmlir_slot_called(int k, unsigned long long *regs);\n")
    ffibuilder.cdef(_HELPERS_CDEF)
    preinit = libcuda.preinit_c(paths, "zmlir_interposer_preinit")
    ffibuilder.set_source("_zmlir_interposer", api.TYPES + _helpers_c() + preinit,
                          extra_link_args=[
                              f"-Wl,-soname,{SONAME}", "-ldl",
                              f"-L{sysconfig.get_config_var('LIBDIR')}",
                              f"-Wl,-rpath,{sysconfig.get_config_var('LIBDIR')}"])
    ffibuilder.embedding_init_code(_init_code(paths, package_root))
    with tempfile.TemporaryDirectory(prefix="zmlir-interposer-") as tmp:
        target = Path(ffibuilder.compile(tmpdir=tmp, target=SONAME, verbose=verbose))
        final = out / SONAME
        os.replace(target, final)
    link = out / "libcuda.so"
    if not link.exists():
        link.symlink_to(SONAME)
    return final


def _is_ours(path: str) -> bool:
    try:
        if os.path.getsize(path) > 16 << 20:
            return False
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return True
    return any(m in data for m in MARKERS)


def _executable_ranges() -> list[tuple[int, int]]:
    """This process's mappings of executable code (/proc/self/maps)."""
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) > 1 and "x" in fields[1]:
                lo, hi = fields[0].split("-")
                ranges.append((int(lo, 16), int(hi, 16)))
    return ranges


def find_real_libcuda() -> str | None:
    """NVIDIA's libcuda.so.1: ZMLIR_REAL_LIBCUDA, else the usual places (never ours)."""
    explicit = os.environ.get("ZMLIR_REAL_LIBCUDA")
    if explicit:
        return explicit
    candidates = [os.path.join(d, SONAME) for d in SEARCH_DIRS]
    try:
        import subprocess

        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                             timeout=10).stdout
        candidates += [line.split("=>")[-1].strip() for line in out.splitlines()
                       if SONAME in line and "=>" in line]
    except (OSError, subprocess.SubprocessError):
        pass
    for path in candidates:
        if "/stubs/" in path or not os.path.exists(path):
            continue
        if not _is_ours(os.path.realpath(path)):
            return os.path.realpath(path)
    return None


def run(command: list[str], output: str, real: str | None = None) -> int:
    """zmlir trace: builds the interposer if needed and runs `command` under it."""
    if not command:
        raise ValueError("zmlir trace: no program given (usage: zmlir trace -- ./app [args])")
    real = real or find_real_libcuda()
    if real is None:
        raise ValueError("zmlir trace: NVIDIA's libcuda.so.1 not found "
                         "(set ZMLIR_REAL_LIBCUDA or pass --real-libcuda)")
    directory = _private_build_dir()
    if not (directory / SONAME).exists() or (directory / SONAME).stat().st_mtime < \
            Path(__file__).stat().st_mtime:
        build(directory)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(directory), env.get("LD_LIBRARY_PATH", "")) if p)
    env["ZMLIR_REAL_LIBCUDA"] = real
    env["ZMLIR_TRACE_INTERPOSER"] = os.path.abspath(output)
    sys.stdout.flush()
    try:
        os.execvpe(command[0], command, env)
    except FileNotFoundError:
        raise ValueError(f"zmlir trace: program not found: {command[0]}") from None
    return 0  # not reached


# -- runtime (inside the application) -----------------------------------------------------


def _log(message: str) -> None:
    print(f"zmlir trace: {message}", file=sys.stderr, flush=True)


class Interposer:
    def __init__(self, ffi: Any, lib: Any) -> None:
        from zmlir.runtime.cuda import api
        from zmlir.trace.tracer import SIGNATURES, Tracer

        self.ffi, self.lib = ffi, lib
        self.signatures = SIGNATURES
        self.exported = set(api.function_names())
        path = find_real_libcuda()
        if path is None:
            raise RuntimeError("NVIDIA's libcuda.so.1 not found (set ZMLIR_REAL_LIBCUDA)")
        self.handle = lib.zmlir_real_open(path.encode())
        if self.handle == ffi.NULL:
            raise RuntimeError(f"cannot load {path}: "
                               f"{ffi.string(lib.zmlir_dlerror()).decode(errors='replace')}")
        self.real_path = path
        out = os.environ.get("ZMLIR_TRACE_INTERPOSER") or os.environ.get("ZMLIR_TRACE") \
            or "zmlir-trace.%p.jsonl"
        out = out.replace("%p", str(os.getpid()))
        self.tracer = Tracer(out, ffi, driver="nvidia", kernel_name=self._kernel_name)
        self.tracer.event("real_driver", path=path)
        self.real: dict[str, Any] = {}
        self._symbols: dict[str, int] = {}
        self._proc_cache: dict[int, Any] = {}
        self._unwrapped: set[str] = set()
        self._tables: dict[bytes, Any] = {}
        self._keep: list[Any] = []
        self._slots: list[tuple[str, int]] = []  # trampoline k -> (api name, slot)
        self._lock = threading.Lock()
        self.wrap_tables = os.environ.get("ZMLIR_TRACE_TABLES", "wrap") != "off"
        self.wrap_unknown = os.environ.get("ZMLIR_TRACE_TABLES") == "unknown"

    def fn_type(self, name: str) -> Any:
        ret, params = self.signatures[name]
        text = ", ".join(f"{t} {n}" for t, n in params) or "void"
        return self.ffi.typeof(f"{ret}(*)({text})")

    def symbol(self, name: str) -> int:
        address = self._symbols.get(name)
        if address is None:
            ptr = self.lib.zmlir_real_sym(self.handle, name.encode())
            address = self._symbols[name] = int(self.ffi.cast("uintptr_t", ptr))
        return address

    def bind(self) -> None:
        ffi = self.ffi
        special = {"cuGetProcAddress": self._get_proc_address,
                   "cuGetProcAddress_v2": self._get_proc_address,
                   "cuGetExportTable": self._get_export_table}
        for name in self.signatures:
            address = self.symbol(name)
            real = ffi.cast(self.fn_type(name), address) if address else None
            self.real[name] = real
            ffi.def_extern(name=name)(self._forwarder(name, real, special.get(name)))

    def _forwarder(self, name: str, real: Any, special: Any) -> Any:
        tracer = self.tracer

        if real is None:
            def missing(*args: Any) -> int:
                return tracer.call(name, args, lambda *a: 801)  # CUDA_ERROR_NOT_SUPPORTED
            return missing
        body = (lambda *a: special(real, *a)) if special else real

        def forward(*args: Any) -> Any:
            return tracer.call(name, args, body)
        return forward

    def _kernel_name(self, handle: int) -> str | None:
        fn = self.real.get("cuFuncGetName")
        if fn is None:
            return None
        out = self.ffi.new("char **")
        if fn(out, self.ffi.cast("void *", handle)) != 0 or out[0] == self.ffi.NULL:
            return None
        return self.ffi.string(out[0]).decode("utf-8", "replace")

    # -- cuGetProcAddress -----------------------------------------------------------------

    def _get_proc_address(self, real: Any, symbol: Any, pfn: Any, *rest: Any) -> int:
        code = real(symbol, pfn, *rest)
        ffi = self.ffi
        if code == 0 and symbol != ffi.NULL and pfn != ffi.NULL and pfn[0] != ffi.NULL:
            try:
                pfn[0] = self.wrap_proc(ffi.string(symbol).decode(), pfn[0])
            except Exception as err:
                _log(f"cannot wrap {symbol!r}: {type(err).__name__}: {err}")
        return code

    def wrap_proc(self, requested: str, pointer: Any) -> Any:
        ffi = self.ffi
        address = int(ffi.cast("uintptr_t", pointer))
        with self._lock:
            cached = self._proc_cache.get(address)
            if cached is not None:
                return cached
            wrapped = self._wrap_proc(requested, address) or self._trampoline_proc(
                requested, pointer) or pointer
            self._proc_cache[address] = wrapped
            return wrapped

    def _wrap_proc(self, requested: str, address: int) -> Any:
        ffi = self.ffi
        stems = [requested] + [f"{requested}_v{v}" for v in range(2, 5)]
        for stem in stems:
            for suffix in ("", "_ptds", "_ptsz"):
                candidate = stem + suffix
                if self.symbol(candidate) != address:
                    continue
                if candidate in self.exported:
                    return ffi.cast("void *", ffi.addressof(self.lib, candidate))
                base = candidate[: -len(suffix)] if suffix else candidate
                if base in self.signatures:
                    ftype = self.fn_type(base)
                    real = ffi.cast(ftype, address)
                    tracer = self.tracer
                    callback = ffi.callback(ftype, lambda *a, _n=candidate, _r=real, _tr=tracer:
                                            _tr.call(_n, a, _r), error=999)
                    self._keep.append(callback)
                    return ffi.cast("void *", callback)
        if requested not in self._unwrapped:
            self._unwrapped.add(requested)
            self.tracer.event("unwrapped_proc", symbol=requested, address=hex(address))
        return None

    def _trampoline_proc(self, requested: str, pointer: Any) -> Any:
        """NVIDIA's cuGetProcAddress hands out internal entry points that are not
        its exported symbols, so the ABI version behind a pointer is unknown:
        log such calls on entry (name and argument registers), forward untouched."""
        if len(self._slots) >= self.lib.zmlir_trampoline_count():
            return None
        known = [n for n in [requested] + [f"{requested}_v{v}" for v in range(2, 5)]
                 if n in self.signatures]
        params = self.signatures[known[0]][1] if len(known) == 1 else None
        k = len(self._slots)
        self._slots.append((requested, params))
        return self.lib.zmlir_trampoline(k, pointer)

    # -- export tables -----------------------------------------------------------------

    def _get_export_table(self, real: Any, ptable: Any, table_id: Any) -> int:
        code = real(ptable, table_id)
        ffi = self.ffi
        if code == 0 and self.wrap_tables and ptable != ffi.NULL and table_id != ffi.NULL \
                and ptable[0] != ffi.NULL:
            key = bytes(ffi.buffer(table_id, 16))
            try:
                with self._lock:
                    wrapped = self._tables.get(key)
                    if wrapped is None:
                        wrapped = self._tables[key] = self._wrap_table(key, ptable[0])
                if wrapped is not False:
                    ptable[0] = wrapped
            except Exception as err:
                _log(f"export table left unwrapped: {type(err).__name__}: {err}")
        return code

    def _wrap_table(self, key: bytes, pointer: Any) -> Any:
        from zmlir.runtime.cuda.export_tables import BY_UUID

        table = BY_UUID.get(key)
        if table is None:
            return self._wrap_unknown(key, pointer) if self.wrap_unknown else False
        ffi = self.ffi
        real = ffi.cast("void **", pointer)
        length = table.length
        if table.sized:
            size = int(ffi.cast("uintptr_t", real[0]))
            if size % ffi.sizeof("void *") == 0 and 0 < size <= 4096:
                length = max(size // ffi.sizeof("void *"), 1)
        extra = 0 if table.sized else 8  # unsized: keep what may follow, verbatim
        copy = ffi.new("void *[]", length + extra)
        for i in range(length + extra):
            copy[i] = real[i]
        self._keep.append(copy)
        for i in range(1 if table.sized else 0, min(length, table.length)):
            slot = table.slots.get(i)
            name = f"export_table:{table.name}:{i}"
            if table.name == "INTEGRITY_CHECK" and i == 1:
                copy[i] = self._integrity_slot(name, slot.signature)
            elif slot is not None:
                ftype = ffi.typeof(slot.signature.replace("(", "(*)(", 1))
                target = ffi.cast(ftype, real[i])
                tracer = self.tracer
                error = None if slot.signature.startswith("void(") else 999
                kwargs = {} if error is None else {"error": error}
                callback = ffi.callback(ftype, lambda *a, _n=name, _t=target, _s=slot.signature,
                                        _tr=tracer: _tr.call(_n, a, _t, signature=_s),
                                        **kwargs)
                self._keep.append(callback)
                copy[i] = ffi.cast("void *", callback)
            elif (not table.opaque and real[i] != ffi.NULL
                  and len(self._slots) < self.lib.zmlir_trampoline_count()):
                k = len(self._slots)
                self._slots.append((name, None))
                copy[i] = self.lib.zmlir_trampoline(k, real[i])
        return ffi.cast("void *", copy)

    def _wrap_unknown(self, key: bytes, pointer: Any) -> Any:
        """A copy of a table we do not know (ZMLIR_TRACE_TABLES=unknown), its
        slots of code logged on entry; False where slot 0 is no size."""
        import uuid

        ffi = self.ffi
        real = ffi.cast("void **", pointer)
        size = int(ffi.cast("uintptr_t", real[0]))
        if size % ffi.sizeof("void *") or not 2 * ffi.sizeof("void *") <= size <= 4096:
            self.tracer.event("unknown_table", uuid=str(uuid.UUID(bytes=key)), slot0=hex(size))
            return False
        length = size // ffi.sizeof("void *")
        code = _executable_ranges()
        copy = ffi.new("void *[]", length)
        name = str(uuid.UUID(bytes=key)).upper()
        for i in range(length):
            copy[i] = real[i]
            address = int(ffi.cast("uintptr_t", real[i]))
            if i and any(lo <= address < hi for lo, hi in code) \
                    and len(self._slots) < self.lib.zmlir_trampoline_count():
                self._slots.append((f"export_table:{name}:{i}", None))
                copy[i] = self.lib.zmlir_trampoline(len(self._slots) - 1, real[i])
        self._keep.append(copy)
        self.tracer.event("unknown_table", uuid=name, slots=length)
        return ffi.cast("void *", copy)

    def slot_called(self, k: int, regs: Any) -> None:
        name, params = self._slots[k]
        # regs: rax, r9, r8, rcx, rdx, rsi, rdi (the order the trampoline pushed them)
        values = [int(regs[6 - i]) for i in range(6)]
        if params is not None:  # then the return address, then the stack arguments
            values += [int(regs[8 + i]) for i in range(max(len(params) - 6, 0))]
        if params is None:
            args: dict[str, Any] = {f"reg{i}": hex(v) for i, v in enumerate(values)}
        else:  # one known ABI: name the register arguments (nothing is dereferenced
            args = {}  # but input strings, which the driver reads anyway)
            for (ctype, pname), value in zip(params, values, strict=False):
                bare = ctype.removeprefix("const ")
                if bare in ("int", "unsigned int", "CUdevice", "unsigned char",
                            "unsigned short", "CUresult"):
                    args[pname] = value & 0xFFFFFFFF
                elif bare in ("size_t", "unsigned long long"):
                    args[pname] = value
                elif ctype == "const char *" and value:
                    args[pname] = self.ffi.string(self.ffi.cast("char *", value), 4096).decode(
                        "utf-8", "replace")
                else:
                    args[pname] = hex(value)
            self.tracer.annotate(name, args, None)
        self.tracer.entry(name, args)

    def _integrity_slot(self, name: str, signature: str) -> Any:
        ffi = self.ffi
        tracer = self.tracer
        holder: list[Any] = []

        def answer(version: int, seconds: int, result: Any) -> int:
            digest = self._integrity(version, seconds, holder[0])
            result[0], result[1] = digest
            return 0

        ftype = ffi.typeof(signature.replace("(", "(*)(", 1))
        callback = ffi.callback(ftype, lambda *a: tracer.call(name, a, answer,
                                                              signature=signature), error=999)
        holder.append(int(ffi.cast("uintptr_t", callback)))
        self._keep.append(callback)
        return ffi.cast("void *", callback)

    def _integrity(self, version: int, seconds: int, fn_address: int) -> tuple[int, int]:
        from zmlir.runtime.cuda import integrity

        fixed = integrity.fixed_answer(version)
        if fixed is not None:
            return fixed
        ffi = self.ffi
        cudart = self._table_address("CUDART_INTERFACE")
        check = self._table_address("INTEGRITY_CHECK")
        driver_version = ffi.new("int *")
        self.real["cuDriverGetVersion"](driver_version)
        devices = b""
        count = ffi.new("int *")
        self.real["cuDeviceGetCount"](count)
        for dev in range(count[0]):
            uuid = ffi.new("CUuuid *")
            self.real["cuDeviceGetUuid"](uuid, dev)
            values = []
            for attribute in (50, 33, 34):  # PCI domain, bus, device
                value = ffi.new("int *")
                self.real["cuDeviceGetAttribute"](value, attribute, dev)
                values.append(value[0])
            devices += bytes(ffi.buffer(uuid, 16)) + struct.pack("<iii", *values)
        return integrity.answer(driver_version[0], version, cudart, check, fn_address, seconds,
                                devices)

    def _table_address(self, name: str) -> int:
        from zmlir.runtime.cuda.export_tables import BY_NAME

        key = BY_NAME[name].key
        wrapped = self._tables.get(key)
        if not wrapped:
            return 0
        return int(self.ffi.cast("uintptr_t", wrapped))


_INSTANCE: Interposer | None = None


def bind(ffi: Any, lib: Any) -> None:
    global _INSTANCE
    try:
        _INSTANCE = Interposer(ffi, lib)
        _INSTANCE.bind()
    except Exception as err:
        _log(f"cannot start: {type(err).__name__}: {err}")
        raise

    @ffi.def_extern(name="zmlir_slot_called")
    def _slot_called(k: int, regs: Any) -> None:
        try:
            _INSTANCE.slot_called(k, regs)  # type: ignore[union-attr]
        except Exception as err:
            _log(f"slot log failed: {type(err).__name__}: {err}")
