"""Modules and libraries: the PTX of a module image (plain PTX, a fatbin
or its wrapper; fatbin.py), compiled through the JIT cache for the backend's
target and loaded once per PTX text; their functions and variables."""

from __future__ import annotations

import os
import struct
import time
from typing import Any

from zmlir.frontend.importer.module import REFERENCE_PREFIXES
from zmlir.runtime.backends import nvptx_cache
from zmlir.runtime.cuda import cooperative, device_launch, devrt, fatbin
from zmlir.runtime.cuda.attributes import presented_sm
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.function import FunctionAPI
from zmlir.runtime.cuda.graph.conditional import define_device_runtime
from zmlir.runtime.cuda.native import NativeImage, NativeKernels
from zmlir.runtime.cuda.objects import Function, Module, UncompiledLibrary
from zmlir.runtime.cuda.parted import PartedModule, kernel_level, parted_when_loaded
from zmlir.runtime.cuda.state import log

E = CUresult
# How many compiled modules the driver keeps in memory for loads to come.
COMPILED_KEPT = 64
# Why a PTX text did not load where another of the image's, or its machine
# code, still may: it does not compile, or there is no compiler here.
_PTX_NOT_LOADED = (E.CUDA_ERROR_INVALID_PTX, E.CUDA_ERROR_JIT_COMPILER_NOT_FOUND)


def keyed_ptx(ptx: str) -> tuple[str, str]:
    """The text the driver compiles for `ptx` (what -rdc leaves to
    libcudadevrt defined) and its key, in the module table and in NVPTX
    caches made ahead of time (nvptx_cache): the one rule for both."""
    text = define_device_runtime(ptx)
    return text, nvptx_cache.ptx_key(text)


class JitLog:
    """The JIT options a module load reports back through (cuModuleLoadDataEx,
    cuLibraryLoadData): the info and error log buffers, filled with a
    NUL-terminated text whose length replaces the buffer-size option's value
    (as NVIDIA's driver does), and the wall time in milliseconds; and the
    register ceiling it asks for (CU_JIT_MAX_REGISTERS)."""

    MAX_REGISTERS, WALL_TIME, INFO_LOG, INFO_LOG_SIZE, ERROR_LOG, ERROR_LOG_SIZE = 0, 2, 3, 4, 5, 6

    def __init__(self, ffi: Any, count: int, options: Any, values: Any) -> None:
        self.ffi, self.values = ffi, values
        self.index: dict[int, int] = {}
        if count and options != ffi.NULL and values != ffi.NULL:
            self.index = {int(options[i]): i for i in range(count)}

    def __enter__(self) -> JitLog:
        self.start = time.perf_counter()
        return self

    def __exit__(self, kind: Any, error: Any, _: Any) -> None:
        self._write(self.INFO_LOG, self.INFO_LOG_SIZE, "")
        self._write(self.ERROR_LOG, self.ERROR_LOG_SIZE,
                    str(error) if isinstance(error, CudaError) else "")
        if self.WALL_TIME in self.index:
            slot = self.ffi.cast("float *", self.values + self.index[self.WALL_TIME])
            slot[0] = (time.perf_counter() - self.start) * 1000.0

    @property
    def max_registers(self) -> int:
        """CU_JIT_MAX_REGISTERS's value (an unsigned int in the pointer); 0: none."""
        if self.MAX_REGISTERS not in self.index:
            return 0
        value = self.values[self.index[self.MAX_REGISTERS]]
        return int(self.ffi.cast("uintptr_t", value)) & 0xFFFFFFFF

    def error(self, text: str) -> None:
        """`text` in the error log, outside a `with` (cuLinkAddData's)."""
        self._write(self.ERROR_LOG, self.ERROR_LOG_SIZE, text)

    def _write(self, buffer_option: int, size_option: int, text: str) -> None:
        if buffer_option not in self.index or size_option not in self.index:
            return
        buffer = self.values[self.index[buffer_option]]
        size_slot = self.index[size_option]
        capacity = int(self.ffi.cast("uintptr_t", self.values[size_slot]))
        if buffer == self.ffi.NULL or capacity == 0:
            return
        data = text.encode()[:capacity - 1] + b"\0"
        self.ffi.memmove(buffer, data, len(data))
        self.values[size_slot] = self.ffi.cast("void *", len(data) - 1)


def linked_ptx(units: list[tuple[str, str]]) -> str:
    """One PTX text of several translation units ((text, name) each), as
    nvlink would link them; units that do not link (a name defined twice,
    an undefined reference) are CUDA_ERROR_INVALID_SOURCE with the linker's
    diagnostic, as NVIDIA's JIT linker answers."""
    from zmlir.diagnostics import CompileError  # the frontend loads when a link needs it

    try:
        from zmlir.frontend.link import link_ptx

        return link_ptx(units).text
    except CompileError as err:
        raise CudaError(E.CUDA_ERROR_INVALID_SOURCE, str(err)) from None
    except ImportError as err:  # a driver installed without the compiler's dependencies
        raise CudaError(E.CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
                        f"the PTX linker is unavailable ({err})") from None


def ceiling_ptx(ptx: str, max_registers: int) -> str:
    """`ptx` with a JIT option's register ceiling as its kernels' `.maxnreg`
    (0: none, `ptx` as it is). Text that does not scan is left for the
    compiler to say what is wrong with it."""
    if max_registers <= 0:
        return ptx
    from zmlir.diagnostics import CompileError
    from zmlir.frontend.link import with_register_ceiling

    try:
        return with_register_ceiling(ptx, max_registers)
    except CompileError:
        return ptx


def unit_ptx_candidates(entries: list[fatbin.Entry], native_sm: int,
                        reported_sm: int) -> list[fatbin.Entry]:
    """The PTX entries of one fatbin the driver tries, in order, on a device
    presenting `reported_sm` whose backend runs NVIDIA's SASS for
    `native_sm` (0: none); FatbinError if there is none."""
    if native_sm and any(e.kind == fatbin.KIND_ELF and e.sm == native_sm for e in entries):
        # PTX newer than a GPU with its own SASS here is not for it
        # (NVIDIA's libraries: compute_120 PTX beside sm_90 SASS).
        entries = [e for e in entries if e.kind == fatbin.KIND_ELF or e.sm <= native_sm]
    return fatbin.ptx_candidates(entries, reported_sm)


def relocatable_units(units: list[list[fatbin.Entry]], native_sm: int,
                      reported_sm: int) -> list[tuple[str, str]]:
    """The PTX units ((text, name) each) the driver links for a program
    built with -rdc, from its translation units' fatbins: each unit's best
    PTX, named by its place, not its address (the linked text is the JIT
    cache's and the NVPTX cache's key); units of machine code only (cudart's
    own, a library's) are left out. NVIDIA's device runtime (-lcudadevrt)
    links as our stand-in, recognised by any of its PTX entries: the one it
    has is compute_121, which a GPU with the unit's own SASS (an H200) does
    not take (unit_ptx_candidates)."""
    linked: list[tuple[str, str]] = []
    for entries in units:
        if any(e.is_ptx and devrt.is_device_runtime_ptx(e.ptx_text()) for e in entries):
            linked.append(devrt.unit())
            continue
        try:
            candidates = unit_ptx_candidates(entries, native_sm, reported_sm)
        except fatbin.FatbinError:
            continue
        linked.append((candidates[0].ptx_text(), f"unit{len(linked)}.ptx"))
    if devrt.unit() not in linked and any(devrt.declares_provided(text) for text, _ in linked):
        linked.append(devrt.unit())  # the library's unit had no PTX: a toolkit's build
    return linked


def _has_candidates(entries: list[fatbin.Entry], native_sm: int, reported_sm: int) -> bool:
    try:
        return bool(unit_ptx_candidates(entries, native_sm, reported_sm))
    except fatbin.FatbinError:
        return False


def link_relocatable(units: list[tuple[str, str]]) -> str:
    """`linked_ptx` of relocatable_units' units; a device runtime function
    our stand-in lacks is CUDA_ERROR_NOT_SUPPORTED naming it."""
    try:
        return linked_ptx(units)
    except CudaError as err:
        why = devrt.unsupported(str(err)) if devrt.unit() in units else None
        if why is None:
            raise
        raise CudaError(E.CUDA_ERROR_NOT_SUPPORTED, why) from None


class ModuleAPI(FunctionAPI):
    # -- loading --------------------------------------------------------------

    def _image_ptx(self, image: Any) -> list[tuple[str, str]]:
        """The PTX texts of a module image in memory, with a name for
        diagnostics each, in the order to try them (fatbin.ptx_candidates)."""
        address = self.ptr(image)
        if address == 0:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "null module image")
        head = bytes(self.ffi.buffer(self.ffi.cast("char *", address), 16))
        magic = struct.unpack_from("<I", head)[0]
        wrapper = self._fatbin_wrapper(address)
        if wrapper is not None:
            version, data, prelinked = wrapper
            if version == 2:
                return self._relocatable_ptx(prelinked)
            if version != 1:
                raise CudaError(E.CUDA_ERROR_INVALID_IMAGE,
                                f"fatbin wrapper version {version} is not supported")
            return self._fatbin_ptx(data)
        if magic == fatbin.FATBIN_MAGIC:
            return self._fatbin_ptx(address)
        if head.startswith(b"\x7fELF"):
            why = "module image is NVIDIA machine code (cubin), not PTX"
            # Said once, without ZMLIR_LOG: the usual cause is fixable (and
            # not said where the backend runs it, _native_module).
            if why not in self.warned and not self.device.native_sm():
                from zmlir.runtime.cuda.build import NVRTC_PRELOAD

                self.warned.add(why)
                hint = "" if NVRTC_PRELOAD in os.environ.get("LD_PRELOAD", "") else (
                    ", or run the program under `zmlir run`, whose NVRTC, nvJitLink and nvcc "
                    "hand out PTX where a cubin is asked for")
                log(f"{why}: zmlir runs PTX; build for a virtual architecture "
                    f"(compute_XX){hint}")
            raise CudaError(E.CUDA_ERROR_NO_BINARY_FOR_GPU, why)
        text = self.ffi.string(self.ffi.cast("char *", address)).decode("utf-8", "replace")
        return [(text, "module.ptx")]

    def _fatbin_wrapper(self, address: int) -> tuple[int, int, int] | None:
        """(version, data, prelinked) of the fatbin wrapper cudart registers
        (__fatBinC_Wrapper_t) at `address`; None if it is not one."""
        head = self.ffi.cast("char *", address)
        if struct.unpack("<I", bytes(self.ffi.buffer(head, 4)))[0] != fatbin.WRAPPER_MAGIC:
            return None  # read no further: a PTX string may be shorter than a wrapper
        _, version, data, prelinked = struct.unpack("<IIQQ", bytes(self.ffi.buffer(head, 24)))
        return version, data, prelinked

    def _relocatable_ptx(self, prelinked: int) -> list[tuple[str, str]]:
        """The PTX of a program built with relocatable device code (-rdc,
        CMake's CUDA_SEPARABLE_COMPILATION): cudart registers a version-2
        wrapper whose data is nvlink's output (machine code only) and whose
        second field is the NULL-terminated list of the translation units'
        own fatbins, each with its PTX, which we link (frontend.link) as
        nvlink linked their machine code."""
        addresses = []
        array = self.ffi.cast("unsigned long long *", prelinked)
        while prelinked and array[len(addresses)]:
            addresses.append(int(array[len(addresses)]))
        units: dict[int, list[fatbin.Entry]] = {}
        for address in addresses:
            try:
                units[address] = self._fatbin_entries(address)
            except CudaError:
                continue  # not a fatbin we read: nothing of it can be linked
        native, presented = self.device.native_sm(), presented_sm(self.device)
        linked = relocatable_units(list(units.values()), native, presented)
        if not linked:
            raise CudaError(E.CUDA_ERROR_NO_BINARY_FOR_GPU,
                            "relocatable device code with no PTX in any translation unit")
        if len(linked) == 1 and linked[0] != devrt.unit():
            # One unit: every candidate of it, as a plain fatbin's.
            address = next(a for a, entries in units.items()
                           if _has_candidates(entries, native, presented))
            return self._named_candidates(address, units[address])
        try:
            return [(link_relocatable(linked), "rdc-linked.ptx")]
        except CudaError as err:
            # A device runtime function we lack: named once, without ZMLIR_LOG.
            if err.code == E.CUDA_ERROR_NOT_SUPPORTED and str(err) not in self.warned:
                self.warned.add(str(err))
                log(str(err))
            raise

    def _fatbin_entries(self, address: int) -> list[fatbin.Entry]:
        """The entries of the fatbin at `address`."""
        header = bytes(self.ffi.buffer(self.ffi.cast("char *", address), 16))
        try:
            size = fatbin.fatbin_size(header)
            return fatbin.parse(bytes(self.ffi.buffer(self.ffi.cast("char *", address), size)))
        except fatbin.FatbinError as err:
            raise CudaError(E.CUDA_ERROR_NO_BINARY_FOR_GPU, str(err)) from None

    def _fatbin_ptx(self, address: int) -> list[tuple[str, str]]:
        return self._named_candidates(address, self._fatbin_entries(address))

    def _named_candidates(self, address: int,
                          entries: list[fatbin.Entry]) -> list[tuple[str, str]]:
        """The PTX candidates of the fatbin at `address`, named by it."""
        try:
            candidates = unit_ptx_candidates(entries, self.device.native_sm(),
                                             presented_sm(self.device))
        except fatbin.FatbinError as err:
            raise CudaError(E.CUDA_ERROR_NO_BINARY_FOR_GPU, str(err)) from None
        return [(e.ptx_text(), f"fatbin@0x{address:x}.sm_{e.sm}.ptx") for e in candidates]

    def load_module(self, image: Any, max_registers: int = 0) -> int:
        """A module of `image`; `max_registers` (a JIT option's ceiling) is
        written into its PTX as each kernel's `.maxnreg`."""
        self.require_init()
        self.sync_point()
        try:
            candidates = self._image_ptx(image)
        except CudaError as err:
            if err.code != E.CUDA_ERROR_NO_BINARY_FOR_GPU:
                raise
            return self._add_module(self._native_module(image, err))
        first_error: CudaError | None = None
        for ptx, name in candidates:
            try:
                module = self._load_ptx(ceiling_ptx(ptx, max_registers), name)
            except CudaError as err:
                # PTX for another architecture may use what we cannot lower
                # where an older one does not: try the next; report the first.
                if err.code not in _PTX_NOT_LOADED:
                    raise
                first_error = first_error or err
                continue
            return self._add_module(module)
        assert first_error is not None
        return self._add_module(self._native_module(image, first_error))

    def _add_module(self, module: Module) -> int:
        handle = self.handles.add(module)
        module.handle = module.handle or handle
        return handle

    def _native_module(self, image: Any, error: CudaError) -> Module:
        """A module of the NVIDIA machine code in `image`, where the backend
        runs it as it is (native.py) and nothing of its PTX loaded; else
        `error`, why its PTX did not load."""
        sm = self.device.native_sm()
        if not sm:
            raise error
        address = self.ptr(image)
        wrapper = self._fatbin_wrapper(address)
        if wrapper is not None:  # its fatbin (-rdc: nvlink's, the whole program's)
            address = wrapper[1]
        try:
            program = self.device.load_native(address)
        except CudaError as native_error:
            if native_error.code != E.CUDA_ERROR_NO_BINARY_FOR_GPU:
                raise
            # No SASS for this GPU either: why the PTX failed, said once even
            # without ZMLIR_LOG (an application that does not check its
            # launches would otherwise go on with kernels that never ran).
            why = f"{error} (and the image has no NVIDIA machine code for sm_{sm})"
            if why not in self.warned:
                self.warned.add(why)
                log(f"a module cannot load: {why}")
            raise error from None
        self.fast.register_exit()
        name = f"image@0x{address:x}.sm_{sm}"
        if os.environ.get("ZMLIR_LOG"):
            log(f"{name}: NVIDIA's machine code, loaded as it is ({error})")
        return Module(name, NativeImage(program.target, NativeKernels(self.device, program)),
                      program)

    def _load_ptx(self, ptx: str, name: str) -> Module:
        """A new module of `ptx`: as in NVIDIA's driver, each load has its own
        variables, initialised afresh (loading the same image twice gives two;
        unloading one and loading it again, a new one). Only the compiled
        module is shared, from the last COMPILED_KEPT."""
        ptx, key = keyed_ptx(ptx)
        compiled = self.compiled_by_hash.pop(key, None)
        if compiled is None:
            # A backend may hold modules compiled ahead of time (the CUDA
            # passthrough on machines without our compiler).
            compiled = self.device.precompiled(key, ptx)
            if compiled is None:
                compiled = self._compile(ptx, name, key)
        self.compiled_by_hash[key] = compiled
        while len(self.compiled_by_hash) > COMPILED_KEPT:
            del self.compiled_by_hash[next(iter(self.compiled_by_hash))]
        if isinstance(compiled, PartedModule):
            return Module(name, compiled, None)  # its parts load as they are first used
        return self._loaded(name, compiled, ptx)

    def _loaded(self, name: str, compiled: Any, ptx: str) -> Module:
        """A new module of `compiled`, a module compiled whole or a part of
        one, from `ptx`."""
        program = self.device.load(compiled)
        self.fast.register_exit()  # after what the backend loaded for it
        module = Module(name, compiled, program)
        module.trap_word = self._trap_word(module)
        with self.lock:
            self.globaltimer.attach(self.device, module)
        self._attach_printf(module, ptx)
        try:
            with self.lock:
                stack = self.context_stack()
                context = stack[-1] if stack else self.primary_context()
                self.heaps.attach(module, ptx, context)
                self.stacks.attach(module, context)
            cooperative.attach(self.device, module)
            device_launch.attach(self.device, module)
        except CudaError:
            self._release(module)
            raise
        return module

    def _trap_word(self, module: Module) -> int:
        """The address of the module's trap word (0: it has none), the
        variable a thread executing `trap` sets where its target's `trap`
        works that way (Target.trap_word: SPIR-V); its Export linkage names
        it in the binary. A precompiled module names its target only."""
        word = getattr(module.compiled.target, "trap_word", None)
        if not word or word.encode() not in module.compiled.binary:
            return 0
        address, size = self.device.global_variable(module.program, word)
        self.allocations.add(address, size, owned=False)
        return address

    def _attach_printf(self, module: Module, ptx: str) -> None:
        """Gives a module with device printf or assert its printf buffer
        (printf.py); where the backend cannot, the module still loads and its
        output is lost, which the log says."""
        try:
            with self.lock:
                self.printf.attach(module, ptx)
        except Exception as err:  # the backend's error: reported, not fatal
            log(f"device printf output of {module.ptx_name} is lost: {err}")

    def _compile(self, ptx: str, name: str, key: str) -> Any:
        """The module compiled whole, or parted (parted.py): a big one, one
        of many kernels, or one with kernels we cannot compile."""
        from zmlir.diagnostics import CompileError

        try:
            from zmlir.runtime.cache import compile_cached

            if parted_when_loaded(ptx):
                parted = self._parted(ptx, name)
                if parted is not None:
                    return parted
            return compile_cached(ptx, self.device.target_for(ptx), name)
        except CompileError as err:
            try:
                parted = self._parted(ptx, name) if kernel_level(err) else None
            except CompileError:
                parted = None
            if parted is not None and parted.partition.function_at(err.loc.line) is not None:
                parted.fail(err, parted.kernels)
                return parted
            log(f"cannot compile {name}: {err}")
            raise CudaError(E.CUDA_ERROR_INVALID_PTX, str(err)) from None
        except ImportError as err:
            if not self.device.native_sm():  # else its machine code may still load
                log(f"module {key} is not precompiled and zmlir's compiler is unavailable "
                    f"({err})")
            raise CudaError(E.CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "compiler unavailable") from None

    def _parted(self, ptx: str, name: str) -> PartedModule | None:
        """`ptx` to be compiled a part at a time; None if it cannot be parted
        (a CompileError if its declarations do not parse)."""
        from zmlir.runtime.cache import cached_partition, compile_cached

        index = cached_partition(ptx, name)
        if index is None:
            return None
        target = self.device.target_for(ptx)
        return PartedModule(name, index, lambda text: compile_cached(text, target, name), log)

    def _part(self, module: Module, name: str) -> Module:
        """The loaded part of parted `module` that holds kernel or stateful
        variable `name`, compiled and loaded now if it was not."""
        parted = module.compiled
        with parted.loading:  # one load of each part, whichever thread asks first
            roots, compiled = parted.part(name)
            piece = module.parts.get(roots)
            if piece is None:
                piece = self._loaded(module.ptx_name, compiled,
                                     parted.partition.part_text(roots))
                piece.handle = module.handle
                module.parts[roots] = piece
        return piece

    def module_variable(self, module: Module, name: str) -> tuple[int, int]:
        """(address, size) of module variable `name` as the backend gives it
        (in a parted module, its part's: loaded now if it was not)."""
        if isinstance(module.compiled, PartedModule):
            return self.device.global_variable(self._part(module, name).program, name)
        return self.device.global_variable(module.program, name)

    def _is_texref(self, module: Module, name: str) -> bool:
        """Whether `name` is a `.texref` of `module` (NVIDIA's
        cuModuleGetGlobal answers INVALID_VALUE for one, not NOT_FOUND)."""
        try:
            self.module_variable(module, REFERENCE_PREFIXES["texref"] + name)
        except Exception:  # the backend's: no such variable
            return False
        return True

    def _bind(self, module: Module, fn: Function) -> None:
        """Binds kernel `fn` of parted `module` (Function.pending)."""
        piece = self._part(module, fn.name)
        fn.module, fn.pending = piece, None
        fn.bound_info = piece.compiled.kernels[fn.name]
        fn.bound_kernel = self.device.kernel(piece.program, fn.name)
        self.fast_register(fn)

    def _parted_function(self, module: Module, name: str, bind: bool) -> int:
        """The handle of kernel `name` of parted `module`, bound now
        (cuModuleGetFunction: its part is compiled and loaded) or at its
        first use (cuLibraryGetKernel)."""
        fn = module.functions.get(name)
        if fn is None:
            if name not in module.compiled.kernels:
                raise CudaError(E.CUDA_ERROR_NOT_FOUND, f"no kernel named {name!r}")
            fn = Function(module, name, None, None)
            fn.pending = lambda f: self._bind(module, f)
            fn.handle = self.handles.add(fn)
            module.functions[name] = fn
        if bind and fn.pending is not None:
            fn.pending(fn)
        return fn.handle

    def kernel_names(self, module: Module) -> list[str]:
        """The kernels of `module`: our compiler's, or, of NVIDIA's machine
        code, as NVIDIA's driver lists them."""
        if isinstance(module.compiled, NativeImage):
            return self.device.native_kernel_names(module.program)
        return list(module.compiled.kernels)

    def module_function_handles(self, hmod: Any) -> list[int]:
        """A handle for each kernel of module `hmod`, as cuModuleGetFunction
        gives it (a parted module's are bound at their first use)."""
        self.require_init()
        module = self.handles.get(self.ptr(hmod), Module)
        if isinstance(module.compiled, PartedModule):
            return [self._parted_function(module, name, bind=False)
                    for name in self.kernel_names(module)]
        return [self.function(module, name) for name in self.kernel_names(module)]

    # -- modules --------------------------------------------------------------

    def cuModuleLoadData(self, pmodule: Any, image: Any) -> int:
        self.out(pmodule, self.handle_ptr(self.load_module(image)))
        return E.CUDA_SUCCESS

    def cuModuleLoadDataEx(self, pmodule: Any, image: Any, n: int, options: Any,
                           values: Any) -> int:
        with JitLog(self.ffi, n, options, values) as jit:
            self.out(pmodule, self.handle_ptr(self.load_module(image, jit.max_registers)))
        return E.CUDA_SUCCESS

    cuModuleLoadFatBinary = cuModuleLoadData

    def cuModuleLoad(self, pmodule: Any, fname: Any) -> int:
        """A module from a file: PTX, a fatbin or a cubin, as cuModuleLoadData."""
        if fname == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        try:
            with open(self.ffi.string(fname), "rb") as f:
                data = f.read()
        except OSError:
            return E.CUDA_ERROR_FILE_NOT_FOUND
        return self.cuModuleLoadData(pmodule, self.ffi.from_buffer(data + b"\0"))

    def cuModuleUnload(self, hmod: Any) -> int:
        self.require_init()
        self.sync_point()
        return self._unload(hmod)

    def _unload(self, hmod: Any) -> int:
        module = self.handles.remove(self.ptr(hmod), Module)
        self.fast.forget_library(self.ptr(hmod))
        if not any(other is module for other in self.handles.all(Module)):
            # Its functions go with it (a launch of one is CUDA_ERROR_INVALID_HANDLE,
            # as in NVIDIA's driver); the compiled module stays cached for a reload,
            # which gets new function handles.
            for fn in module.functions.values():
                self.handles.remove(fn.handle, Function)
                self.fast.forget(fn.handle)
            module.functions.clear()
            self._release(module)
        return E.CUDA_SUCCESS

    def _release(self, module: Module) -> None:
        """Gives back what a module held once its last handle is unloaded:
        its variables' ranges, its printf state, its program (its parts')."""
        for piece in module.parts.values():
            self._release(piece)
        module.parts.clear()
        if not self.fast.launches_done():
            self.device.synchronize()  # its kernels may still run
        if module.trap_word:  # its last look at its word, before the word goes
            self.take_kernel_errors()
            self.traps.forget(module)
        for address in [*module.globals.values(), module.trap_word]:
            if address:
                self.allocations.forget(address)
        module.globals.clear()
        with self.lock:
            self.printf.detach(module)
            self.heaps.detach(module)
            self.stacks.detach(module)
        cooperative.detach(self.device, module)
        device_launch.detach(self.device, module)
        try:
            if module.program is not None:
                self.device.unload(module.program)
        except Exception as err:  # the backend's: a device that already failed, or shut down
            if os.environ.get("ZMLIR_LOG"):
                log(f"unloading {module.ptx_name}: {err}")

    def cuModuleGetFunction(self, hfunc: Any, hmod: Any, name: Any) -> int:
        self.require_init()
        module = self.handles.get(self.ptr(hmod), Module)
        if name == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(hfunc, self.handle_ptr(self._kernel_handle(module, name, bind=True)))
        return E.CUDA_SUCCESS

    def _kernel_handle(self, module: Module, name: Any, bind: bool) -> int:
        kernel = self.ffi.string(name).decode()
        if isinstance(module.compiled, PartedModule):
            return self._parted_function(module, kernel, bind)
        return self.function(module, kernel)

    def cuModuleGetGlobal_v2(self, dptr: Any, nbytes: Any, hmod: Any, name: Any) -> int:
        self.require_init()
        module = self.handles.get(self.ptr(hmod), Module)
        if name == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        var = self.ffi.string(name).decode()
        address = module.globals.get(var)
        if address is None:
            try:
                address, size = self.module_variable(module, var)
            except Exception as err:
                if os.environ.get("ZMLIR_LOG"):
                    log(f"cuModuleGetGlobal({var!r}): {err}")
                return E.CUDA_ERROR_INVALID_VALUE if self._is_texref(module, var) \
                    else E.CUDA_ERROR_NOT_FOUND
            module.globals[var] = address
            # Module variables are device memory for copies and range checks.
            self.allocations.add(address, size, owned=False)
        if dptr != self.ffi.NULL:
            dptr[0] = address
        if nbytes != self.ffi.NULL:
            nbytes[0] = self.allocations.size_of(address)
        return E.CUDA_SUCCESS

    def cuModuleGetLoadingMode(self, mode: Any) -> int:
        # NVIDIA's answer: lazy unless CUDA_MODULE_LOADING=EAGER. Told
        # eager, the runtime inside NVIDIA's cuBLAS loads its ~2800 images
        # as cublasCreate starts (docs/passthrough-libraries.md), which on
        # a backend compiling PTX is hours; told lazy it loads an image at
        # the first use of one of its kernels. fastpath.c tells the
        # application's own runtime eager all the same.
        lazy = (self.initialized
                and os.environ.get("CUDA_MODULE_LOADING", "").upper() != "EAGER")
        self.out(mode, 2 if lazy else 1)  # CU_MODULE_LAZY_LOADING, CU_MODULE_EAGER_LOADING
        return E.CUDA_SUCCESS

    # -- libraries ------------------------------------------------------------

    # Libraries are modules loaded on first use in CUDA; we load eagerly,
    # and one that does not compile fails at its first use (UncompiledLibrary).
    def cuLibraryLoadData(self, plib: Any, code: Any, jit_options: Any, jit_values: Any,
                          n_jit: int, *library_options: Any) -> int:
        try:
            with JitLog(self.ffi, n_jit, jit_options, jit_values) as jit:
                handle = self.load_module(code, jit.max_registers)
        except CudaError as err:
            if err.code not in (*_PTX_NOT_LOADED, E.CUDA_ERROR_NO_BINARY_FOR_GPU,
                                E.CUDA_ERROR_NOT_SUPPORTED, E.CUDA_ERROR_INVALID_SOURCE):
                raise
            handle = self.handles.add(UncompiledLibrary(err))
        else:
            self._library_kernels(handle)
        self.out(plib, self.handle_ptr(handle))
        return E.CUDA_SUCCESS

    def _library_kernels(self, handle: int) -> None:
        """Makes the functions of a library we compiled now, as it loads
        (cudart asks for each at its first use, often timed), and hands them
        to fastpath.c's cuLibraryGetKernel. Not for NVIDIA's machine code
        (its libraries' images hold hundreds of kernels, most never used)
        nor parted libraries (each kernel compiled at its first use)."""
        module = self.handles.get(handle, Module)
        if not self.fast.on or isinstance(module.compiled, (NativeImage, PartedModule)):
            return
        for name in module.compiled.kernels:
            try:
                kernel = self.function(module, name)
            except CudaError:  # said again at its first use, by the Python path
                continue
            self.fast.library_kernel(handle, name, kernel)

    def _library(self, lib: Any) -> None:
        """Raises the compile error of a library that did not compile."""
        obj = self.handles.find(self.ptr(lib))
        if isinstance(obj, UncompiledLibrary):
            if obj.error.code == E.CUDA_ERROR_NO_BINARY_FOR_GPU:
                self._machine_code_only(str(obj.error))
            raise obj.error

    def _machine_code_only(self, why: str) -> None:
        """Says once, without ZMLIR_LOG, that a kernel asked for has SASS
        only; outside `zmlir run`, that a library choosing its images by
        the compute capability (libcurand) gets its PTX under it
        (arch_preload.c)."""
        from zmlir.runtime.cuda.build import NVRTC_PRELOAD

        if "machine code only" in self.warned:
            return
        self.warned.add("machine code only")
        hint = ""
        if NVRTC_PRELOAD not in os.environ.get("LD_PRELOAD", ""):
            hint = ("; a library that picks its images by the compute capability, as "
                    "libcurand does, loads its PTX when the program runs under `zmlir run`")
        log(f"a kernel was asked of a module image with NVIDIA machine code only ({why}){hint}")

    def cuLibraryUnload(self, lib: Any) -> int:
        self.require_init()
        if isinstance(self.handles.find(self.ptr(lib)), UncompiledLibrary):
            self.handles.remove(self.ptr(lib), UncompiledLibrary)
            return E.CUDA_SUCCESS
        # No synchronisation point, unlike cuModuleUnload: cudart unloads its
        # libraries as the process exits, where NVIDIA's driver prints no
        # device printf output (an H200 printed nothing of a kernel launched
        # just before main returned).
        self.require_init()
        return self._unload(lib)

    def cuLibraryGetKernel(self, pkernel: Any, lib: Any, name: Any) -> int:
        # A kernel of a parted library is compiled at its first use: cudart
        # asks for every kernel it registered as it starts.
        self._library(lib)
        self.require_init()
        module = self.handles.get(self.ptr(lib), Module)
        if name == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(pkernel, self.handle_ptr(self._kernel_handle(module, name, bind=False)))
        return E.CUDA_SUCCESS

    def cuLibraryGetModule(self, pmod: Any, lib: Any) -> int:
        self._library(lib)
        self.handles.get(self.ptr(lib), Module)
        self.out(pmod, lib)
        return E.CUDA_SUCCESS

    def cuLibraryGetGlobal(self, dptr: Any, nbytes: Any, lib: Any, name: Any) -> int:
        self._library(lib)
        return self.cuModuleGetGlobal_v2(dptr, nbytes, lib, name)

    def cuLibraryGetManaged(self, dptr: Any, nbytes: Any, lib: Any, name: Any) -> int:
        # A __managed__ variable: the host reads and writes it through this
        # address, so it must be the module variable's own, host-accessible
        # memory (on the CUDA passthrough: the real driver's managed memory).
        self.require_init()
        self._library(lib)
        address, size = self.ffi.new("CUdeviceptr *"), self.ffi.new("size_t *")
        code = self.cuModuleGetGlobal_v2(address, size, lib, name)
        if code != E.CUDA_SUCCESS:
            return code
        if not self.device.host_accessible(int(address[0])):
            var = self.ffi.string(name).decode()
            return self.unsupported("cuLibraryGetManaged", f"__managed__ variable {var!r}: "
                                    f"the {self.device.name} backend's module variable is "
                                    "not host-accessible")
        if dptr != self.ffi.NULL:
            dptr[0] = address[0]
        if nbytes != self.ffi.NULL:
            nbytes[0] = size[0]
        return E.CUDA_SUCCESS
