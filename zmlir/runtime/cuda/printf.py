"""Device printf and assert output: the driver's printf buffer.

A module compiled with calls of `vprintf` or `__assertfail` on a target
without NVIDIA's own (zmlir/lowering/DeviceServices.h) has two variables:
`__zmlir_printf` (the buffer's address and the module's id, set here when the
module loads) and `__zmlir_printf_formats` (its formats, read here). Its
threads append records to one buffer the whole driver shares, so output keeps
the order of launches across modules.

As on NVIDIA's driver, the buffer is flushed to the host's stdout (the C
library's `stdout`, so the output stays in order with the application's own
printf) at the synchronisation points: cuCtxSynchronize, cuStreamSynchronize,
cuEventSynchronize, blocking copies, module loads and unloads, context
destruction and primary context reset, and before a host function or stream
callback runs. It holds CU_LIMIT_PRINTF_FIFO_SIZE bytes of records (1 MiB by
default); a record that does not fit is dropped. Work runs synchronously
here, so a flush after the backend's synchronize sees every record complete.
"""

from __future__ import annotations

import contextlib
import ctypes
import struct
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from zmlir.runtime import printf as fmt

if TYPE_CHECKING:
    from zmlir.runtime.cuda.objects import Module

STATE_NAME = "__zmlir_printf"  # kPrintfStateName
FORMATS_NAME = "__zmlir_printf_formats"  # kPrintfFormatsName
DEFAULT_FIFO_SIZE = 1 << 20


def write_stdout(data: bytes) -> None:
    """Writes through the C library's stdout, which the application's own
    printf buffers, and flushes it."""
    libc = ctypes.CDLL(None)
    stream = ctypes.c_void_p.in_dll(libc, "stdout")
    libc.fwrite(data, 1, len(data), stream)
    libc.fflush(stream)


class DevicePrintf:
    """The printf buffer of one driver (one device)."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.device: Any = None  # backends.Backend, set at cuInit
        self.buffer = 0  # the device address of the buffer, 0 until a module needs one
        self.capacity = DEFAULT_FIFO_SIZE  # bytes of records
        self.states: list[int] = []  # each module's __zmlir_printf
        self.formats: dict[int, list[fmt.Format | None]] = {}  # by module id
        self._held = 0
        self._dropped = 0  # records dropped so far (logged once)

    # -- modules ------------------------------------------------------------------

    def attach(self, module: Module) -> None:
        """At load: gives a module with printf records the buffer and an id."""
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
        module_id = len(self.formats) + 1
        self.formats[module_id] = formats
        self._allocate()
        self.states.append(state)
        self.device.copy_to_device(state, struct.pack("<QQ", self.buffer, module_id))

    def _allocate(self) -> None:
        if self.buffer:
            return
        self.buffer = self.device.alloc(fmt.BUFFER_HEADER + self.capacity)
        # Zeros where no record is: a record reserved past the capacity is
        # never written, and the walk over the records stops at a zero size.
        self.device.memset(self.buffer, 0, fmt.BUFFER_HEADER + self.capacity)
        self.device.copy_to_device(self.buffer, struct.pack("<QQ", 0, self.capacity))

    def set_capacity(self, nbytes: int) -> None:
        """CU_LIMIT_PRINTF_FIFO_SIZE: what is in the buffer is printed first;
        the modules loaded so far move to the new buffer."""
        self.flush()
        self.capacity = nbytes
        if not self.buffer:
            return
        self.device.free(self.buffer)
        self.buffer = 0
        self._allocate()
        for state in self.states:
            self.device.copy_to_device(state, struct.pack("<Q", self.buffer))

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
        """Prints the records so far and empties the buffer (the device is
        idle: work is synchronous)."""
        if not self.buffer or (self._held and not even_held):
            return
        head, capacity = struct.unpack("<QQ", self.device.copy_from_device(self.buffer, 16))
        if head == 0:
            return
        used = min(head, capacity)
        data = self.device.copy_from_device(self.buffer + fmt.BUFFER_HEADER, used)
        self.device.memset(self.buffer + fmt.BUFFER_HEADER, 0, used)
        self.device.copy_to_device(self.buffer, struct.pack("<Q", 0))
        out, bad = fmt.decode(data, self._format)
        if out:
            write_stdout(out)
        if bad:
            self.log(f"device printf: {bad} record(s) could not be read")
        if head > capacity and not self._dropped:
            self.log(f"device printf: the buffer's {capacity} bytes are full, later output is "
                "dropped (cudaDeviceSetLimit(cudaLimitPrintfFifoSize) sets its size)")
        self._dropped += head > capacity

    def _format(self, module: int, index: int) -> fmt.Format | None:
        formats = self.formats.get(module)
        return formats[index] if formats is not None and 0 <= index < len(formats) else None
