"""%globaltimer where kernels read a device clock of no known unit.

On SPIR-V (Target.globaltimer_word) a kernel reads %globaltimer as the
device-scope clock (OpReadClockKHR: ticks of the device's own counter, the
same for every work-item) put through its module's calibration, four i64
words {ticks0, ns0, mult, shift}:

    %globaltimer = ns0 + (ticks - ticks0) * mult / 2^shift

(zmlir/targets/spirv/SPIRVTargetInfo.cpp; mult < 2^32 and shift <= 32, so
the kernel needs no 128-bit product). The words start as the identity (the
raw ticks); here the driver measures the device clock against the host's once
per process and writes them into each module that has them as it loads, so
every module counts nanoseconds since the Unix epoch (as NVIDIA's
%globaltimer and the host target's, CLOCK_REALTIME) at the host's rate, on
one clock.

The measurement is a kernel of its own: a %globaltimer module left at the
identity, launched a few times at each end of a short host interval; of each
end's launches the one that took the least host time places its reading
best (in the middle of its launch).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# The calibration kernel: one thread writes %globaltimer, which its module
# (never calibrated) reads as the device clock's raw ticks.
_KERNEL = "__zmlir_read_globaltimer"
_PTX = f""".version 7.0
.target sm_75
.address_size 64
.visible .entry {_KERNEL}(.param .u64 out)
{{
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [out];
	mov.u64 %rd2, %globaltimer;
	st.global.u64 [%rd1], %rd2;
	ret;
}}
"""
# Host time between the two ends of the measurement, and launches per end:
# a launch of ~50 us in 20 ms places the rate within ~0.3%. On a loaded
# machine a launch's window widens to milliseconds: each end takes more
# launches for a tight one (up to MAX_LAUNCHES), and the span grows with
# the widest window kept (SPAN_PER_WINDOW of them), so the rate stays
# within ~0.5% (a 20 ms span with 2 ms windows put a reading 11 ms off
# half a second later).
SPAN_S = 0.02
LAUNCHES = 5
MAX_LAUNCHES = 50
TIGHT_NS = 200_000
SPAN_PER_WINDOW = 200


@dataclass(frozen=True)
class Calibration:
    """The module words: nanoseconds = ns0 + (ticks - ticks0) * mult / 2^shift."""

    ticks0: int
    ns0: int
    mult: int
    shift: int

    @staticmethod
    def of(ticks0: int, ns0: int, ns_per_tick: float) -> Calibration:
        """The words for a clock of `ns_per_tick` that read `ticks0` at `ns0`:
        the largest shift (32 at most) that keeps mult below 2^32."""
        if not 0 < ns_per_tick < 2.0**31:
            raise ValueError(f"a device clock of {ns_per_tick} ns per tick")
        shift = 32
        while shift > 0 and round(ns_per_tick * 2**shift) >= 1 << 32:
            shift -= 1
        return Calibration(ticks0, ns0, round(ns_per_tick * 2**shift), shift)

    def nanoseconds(self, ticks: int) -> int:
        """What a calibrated kernel reads at `ticks` (its arithmetic, in 64 bits)."""
        mask = (1 << 64) - 1
        d = (ticks - self.ticks0) & mask
        high = (((d >> 32) * self.mult) << (32 - self.shift)) & mask
        low = (((d & 0xFFFFFFFF) * self.mult) & mask) >> self.shift
        return (self.ns0 + high + low) & mask

    def words(self) -> bytes:
        return struct.pack("<4Q", self.ticks0 & ((1 << 64) - 1), self.ns0, self.mult, self.shift)


class GlobalTimer:
    """Calibrates the device clock on first need and writes each module's words."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.calibration: Calibration | None = None
        self.failed = False  # measured once and failed: modules keep the raw ticks

    def attach(self, backend: Any, module: Any) -> None:
        """At load: gives a module that reads %globaltimer the calibration."""
        word = getattr(module.compiled.target, "globaltimer_word", None)
        if not word or word.encode() not in module.compiled.binary:
            return
        calibration = self.calibrate(backend)
        if calibration is None:
            return
        try:
            address, _ = backend.global_variable(module.program, word)
            backend.copy_to_device(address, calibration.words())
        except Exception as err:  # the backend's: logged, not fatal
            self.log(f"%globaltimer of {module.ptx_name} counts the device clock's raw "
                     f"ticks: {err}")

    def calibrate(self, backend: Any) -> Calibration | None:
        if self.calibration is None and not self.failed:
            try:
                self.calibration = measure(backend)
            except Exception as err:  # the backend's or the compiler's: logged, not fatal
                self.failed = True
                self.log(f"%globaltimer counts the device clock's raw ticks: measuring it "
                         f"failed ({err})")
        return self.calibration


def measure(backend: Any, span_s: float = SPAN_S) -> Calibration:
    """The calibration of `backend`'s clock against the host's, `span_s` apart."""
    from zmlir.runtime.cache import compile_cached

    compiled = compile_cached(_PTX, backend.target, "globaltimer-calibration.ptx")
    program = backend.load(compiled)
    kernel = backend.kernel(program, _KERNEL)
    info = compiled.kernels[_KERNEL]
    out = backend.alloc(8)

    def reading() -> tuple[int, int, int]:
        """(host monotonic ns, device ticks, window ns) of the tightest of
        LAUNCHES launches, or of more until one is tight."""
        best: tuple[int, int, int] | None = None
        for attempt in range(MAX_LAUNCHES):
            if attempt >= LAUNCHES and best is not None and best[0] <= TIGHT_NS:
                break
            backend.synchronize()
            before = time.monotonic_ns()
            backend.launch(kernel, info, (1, 1, 1), (1, 1, 1), [np.uint64(out)], 0)
            backend.synchronize()
            after = time.monotonic_ns()
            ticks = struct.unpack("<Q", backend.copy_from_device(out, 8))[0]
            if best is None or after - before < best[0]:
                best = (after - before, (before + after) // 2, ticks)
        assert best is not None
        return best[1], best[2], best[0]

    try:
        host0, ticks0, window0 = reading()
        time.sleep(max(span_s, SPAN_PER_WINDOW * window0 / 1e9))
        host1, ticks1, window1 = reading()
        if host1 - host0 < SPAN_PER_WINDOW * window1:  # the far end was the loose one
            time.sleep(SPAN_PER_WINDOW * window1 / 1e9)
            host1, ticks1, _ = reading()
    finally:
        backend.free(out)
    if ticks1 <= ticks0:
        raise ValueError(f"the device clock did not advance in {span_s * 1e3:g} ms "
                         f"({ticks0} then {ticks1})")
    epoch = time.time_ns() - time.monotonic_ns()
    return Calibration.of(ticks0, host0 + epoch, (host1 - host0) / (ticks1 - ticks0))
