"""Device printf and assert output: the driver's printf buffer.

A module compiled with calls of `vprintf` or `__assertfail` on a target
without NVIDIA's own (zmlir/lowering/DeviceServices.h) has two variables:
`__zmlir_printf` (the buffer's address and the module's id, set here when the
module loads) and `__zmlir_printf_formats` (its formats, read here). Its
threads append records to one buffer the whole driver shares, so output keeps
the order of launches across modules.

As on NVIDIA's driver, the buffer is flushed at the synchronisation points:
cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize, blocking copies,
cuMemFree, module loads and unloads (cuModuleUnload; not cuLibraryUnload,
which cudart calls as the process exits), cuCtxDestroy and primary context
reset (cudaDeviceReset), and before a host function or stream callback runs.
Launches are none, and neither is the process's exit: what a kernel printed
after the last synchronisation point is never printed, as on an H200 (the
primary context's last release, cudart's at exit, discards it). printf output
goes to the C library's `stdout` (in order with the application's own
printf), a failed assert's message to its `stderr`, as NVIDIA's driver
writes them.

The buffer holds CU_LIMIT_PRINTF_FIFO_SIZE bytes of records (NVIDIA's
default, minimum and rounding, below); a record that does not fit is
dropped, so a full buffer keeps the first lines. (NVIDIA's FIFO wraps: an
H200 printed a jumble of later lines, in no order; ours never does.) Like
NVIDIA's driver, the limit can be set only until the context launched a
kernel that calls printf or assert; later it is CUDA_ERROR_INVALID_VALUE,
until the context's reset. A flush reads the buffer through the backend's
queue, after the kernels launched before it: it sees their records complete.

Kernels launch while a flush runs (other host threads', through fastpath.c
too), so a flush never empties the buffer they write: it first moves the
modules' states to a second buffer (the writes of the states, queued after
every kernel launched before them, precede every kernel launched after),
then reads and empties the first, which no kernel writes any more. The next
flush moves them back.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import re
import struct
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from zmlir.runtime import printf as fmt

if TYPE_CHECKING:
    from zmlir.runtime.cuda.objects import Function, Module

STATE_NAME = "__zmlir_printf"  # kPrintfStateName
FORMATS_NAME = "__zmlir_printf_formats"  # kPrintfFormatsName
# CU_LIMIT_PRINTF_FIFO_SIZE: what NVIDIA's driver (580, CUDA 13) reports on an
# H200 by default, the least it sets (asked for less, 0 included), and the
# multiple it rounds a size up to.
DEFAULT_FIFO_SIZE = 8650752
MIN_FIFO_SIZE = 512 << 10
FIFO_GRANULE = 256


def fifo_size(requested: int) -> int:
    """The FIFO size NVIDIA's driver sets when asked for `requested` bytes."""
    return max(MIN_FIFO_SIZE, -(-requested // FIFO_GRANULE) * FIFO_GRANULE)


def write_stream(data: bytes, name: str = "stdout") -> None:
    """Writes through the C library's `stdout` or `stderr`, which the
    application's own printf buffers, and flushes it."""
    libc = ctypes.CDLL(None)
    if not os.environ.get("ZMLIR_LINK_NAMESPACE"):
        stream = ctypes.c_void_p.in_dll(libc, name)
        libc.fwrite(data, 1, len(data), stream)
        libc.fflush(stream)
        return
    # In a namespace of our own (shim.c) our C library's stdout is not the
    # host's: write through the host's (namespace.c).
    host = libc.zmlir_host_symbol
    host.restype, host.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
    stream = ctypes.c_void_p.from_address(host(name.encode())).value
    fwrite = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t,
                              ctypes.c_void_p)(host(b"fwrite"))
    fflush = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(host(b"fflush"))
    fwrite(data, 1, len(data), stream)
    fflush(stream)


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_FUNCTION = re.compile(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$%][\w$%]*)")
_CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([A-Za-z_$%][\w$%]*)")
SERVICES = ("vprintf", "__assertfail")


def printf_kernels(ptx: str) -> frozenset[str]:
    """The kernels of `ptx` that call printf or assert, directly or through
    its functions (an indirect call may reach any function)."""
    return kernels_calling(ptx, SERVICES)


def kernels_calling(ptx: str, services: tuple[str, ...]) -> frozenset[str]:
    """The kernels of `ptx` that call one of `services` (functions the
    module does not define), directly or through its functions (an indirect
    call may reach any function)."""
    if not any(s in ptx for s in services):
        return frozenset()
    ptx = _COMMENTS.sub(" ", ptx)
    bodies: dict[str, str] = {}
    entries: set[str] = set()
    for m in _FUNCTION.finditer(ptx):
        depth, i = 0, m.end()
        while i < len(ptx) and not (depth == 0 and ptx[i] in "{;"):
            depth += {"(": 1, ")": -1}.get(ptx[i], 0)
            i += 1
        if i >= len(ptx) or ptx[i] == ";":
            continue  # a declaration
        start, depth = i, 0
        for i in range(start, len(ptx)):
            depth += {"{": 1, "}": -1}.get(ptx[i], 0)
            if depth == 0:
                break
        bodies[m[1]] = ptx[start:i + 1]
        if m[0].startswith(".entry"):
            entries.add(m[1])
    calls = {name: {c for c in _CALL.findall(body)} for name, body in bodies.items()}
    direct = {name for name, callees in calls.items()
              if any(c in services and c not in bodies for c in callees)}
    uses = set(direct)
    if direct:  # an indirect call (through a register) may reach them
        uses |= {name for name, callees in calls.items() if any(c[0] == "%" for c in callees)}
    changed = True
    while changed:
        changed = False
        for name, callees in calls.items():
            if name not in uses and callees & uses:
                uses.add(name)
                changed = True
    return frozenset(uses & entries)


class DevicePrintf:
    """The printf buffer of one driver (one device)."""

    def __init__(self, log: Callable[[str], None],
                 sync_work: Callable[[int], None] = lambda delta: None) -> None:
        self.log = log
        # Told +1 while a buffer exists, whose output synchronisations flush
        # (FastPath.sync_work).
        self.sync_work = sync_work
        self.device: Any = None  # backends.Backend, set at cuInit
        self.buffer = 0  # the device address of the buffer, 0 until a module needs one
        self.spare = 0  # the other buffer, a flush's (0 until the first flush with output)
        self.capacity = DEFAULT_FIFO_SIZE  # bytes of records
        self.locked = False  # a kernel with printf or assert was launched: no more resizing
        self.ended = False  # the primary context ended: what the buffer holds is never printed
        self.states: dict[int, int] = {}  # each module's __zmlir_printf, by module id
        self.formats: dict[int, list[fmt.Format | None]] = {}  # by module id
        self._ids = itertools.count(1)
        self._held = 0
        self._dropped = 0  # records dropped so far (logged once)

    # -- modules ------------------------------------------------------------------

    def attach(self, module: Module, ptx: str) -> None:
        """At load: gives a module with printf records the buffer and an id,
        and names its kernels that call printf or assert."""
        module.printf_kernels = printf_kernels(ptx)
        if FORMATS_NAME.encode() not in module.compiled.binary:
            return
        state, _ = self.device.global_variable(module.program, STATE_NAME)
        table, size = self.device.global_variable(module.program, FORMATS_NAME)
        formats: list[fmt.Format | None] = []
        for text in self.device.copy_from_device(table, size).split(b"\0")[:-1]:
            try:
                formats.append(fmt.parse(text))
            except fmt.FormatError as err:  # the compiler rejects these: not ours
                self.log(f"printf format {text!r} of {module.ptx_name}: {err}")
                formats.append(None)
        module_id = next(self._ids)
        self.formats[module_id] = formats
        self._allocate()
        self.states[module_id] = state
        module.printf_id = module_id
        self.device.copy_to_device(state, struct.pack("<QQ", self.buffer, module_id))

    def detach(self, module: Module) -> None:
        """At the module's unload (after the flush its unload makes)."""
        self.states.pop(module.printf_id, None)
        self.formats.pop(module.printf_id, None)
        module.printf_id = 0

    def _allocate(self) -> None:
        if self.buffer:
            return
        self.buffer = self._new_buffer()
        self.sync_work(+1)

    def _new_buffer(self) -> int:
        address = self.device.alloc(fmt.BUFFER_HEADER + self.capacity)
        # Zeros where no record is: a record reserved past the capacity is
        # never written, and the walk over the records stops at a zero size.
        self.device.memset(address, 0, fmt.BUFFER_HEADER + self.capacity)
        self.device.copy_to_device(address, struct.pack("<QQ", 0, self.capacity))
        return address

    def _swap(self) -> int:
        """Moves the modules' states to the spare buffer; returns the one
        they held, which no kernel launched from now on writes."""
        if not self.spare:
            self.spare = self._new_buffer()
        for state in self.states.values():
            self.device.copy_to_device(state, struct.pack("<Q", self.spare))
        self.buffer, self.spare = self.spare, self.buffer
        return self.spare

    def launched(self, function: Function) -> None:
        """At a launch: once a kernel that calls printf or assert ran, the
        FIFO's size is fixed (as on NVIDIA's driver)."""
        if function.name in function.module.printf_kernels:
            self.locked = True

    def reset(self) -> None:
        """The primary context's reset: a new context sets the size again."""
        self.locked = False
        self.ended = False
        self.set_capacity(DEFAULT_FIFO_SIZE)

    def context_ended(self) -> None:
        """The primary context's last release (cudart's, as the process
        exits): no flush, and no device work (the backend may be going)."""
        self.ended = True

    def context_started(self) -> None:
        """The primary context's first retain: after one ended, its output
        is never printed and the size is the default again."""
        if self.ended:
            self.discard()
            self.reset()

    def set_capacity(self, nbytes: int) -> bool:
        """CU_LIMIT_PRINTF_FIFO_SIZE: False once a kernel that calls printf
        or assert was launched (CUDA_ERROR_INVALID_VALUE, the size stays).
        Else what is in the buffer is printed first; the modules loaded so far
        move to a new buffer of NVIDIA's size for `nbytes` (fifo_size)."""
        if self.locked:
            return False
        self.flush()
        nbytes = fifo_size(nbytes)
        if nbytes == self.capacity:
            return True
        self.capacity = nbytes
        if not self.buffer:
            return True
        for address in (self.buffer, self.spare):
            if address:
                self.device.free(address)
        self.buffer = self.spare = 0
        self.sync_work(-1)
        self._allocate()
        for state in self.states.values():
            self.device.copy_to_device(state, struct.pack("<Q", self.buffer))
        return True

    # -- output ---------------------------------------------------------------------

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """No flush inside (work of an asynchronous call run at once)."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1

    def flush(self, *, even_held: bool = False) -> None:
        """Prints the records so far and empties the buffer (read through
        the backend's queue: after the kernels launched before)."""
        if not self.buffer or self.ended or (self._held and not even_held):
            return
        head, _ = struct.unpack("<QQ", self.device.copy_from_device(self.buffer, 16))
        if head == 0:
            return
        # Kernels launched from now on write the spare; the records of those
        # launched before are complete when the reads below run (in order).
        full = self._swap()
        head, capacity = struct.unpack("<QQ", self.device.copy_from_device(full, 16))
        used = min(head, capacity)
        data = self.device.copy_from_device(full + fmt.BUFFER_HEADER, used)
        self.device.memset(full + fmt.BUFFER_HEADER, 0, used)
        self.device.copy_to_device(full, struct.pack("<Q", 0))
        outputs, bad = fmt.decode_records(data, self._format)
        # In order, each run of records of one stream with one write.
        run, stream = bytearray(), "stdout"
        for format_, text in outputs:
            name = "stderr" if format_.is_assert else "stdout"
            if name != stream and run:
                write_stream(bytes(run), stream)
                run.clear()
            run += text
            stream = name
        if run:
            write_stream(bytes(run), stream)
        if bad:
            self.log(f"device printf: {bad} record(s) could not be read")
        if head > capacity and not self._dropped:
            self.log(f"device printf: the buffer's {capacity} bytes are full, later output is "
                "dropped (cudaDeviceSetLimit(cudaLimitPrintfFifoSize) sets its size)")
        self._dropped += head > capacity

    def discard(self) -> None:
        """Empties the buffers without printing them."""
        for address in (self.buffer, self.spare):
            if not address:
                continue
            head, capacity = struct.unpack("<QQ", self.device.copy_from_device(address, 16))
            if head:
                self.device.memset(address + fmt.BUFFER_HEADER, 0, min(head, capacity))
                self.device.copy_to_device(address, struct.pack("<Q", 0))

    def _format(self, module: int, index: int) -> fmt.Format | None:
        formats = self.formats.get(module)
        return formats[index] if formats is not None and 0 <= index < len(formats) else None
