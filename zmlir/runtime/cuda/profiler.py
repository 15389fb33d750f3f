"""Profiler control: cuProfilerStart/Stop. No profiler is attached to our
driver, so they only check the context, as NVIDIA's driver does when no tool
is collecting (samples call them around their timed loops; zmlir's own
tracer is ZMLIR_TRACE's, on for the whole run)."""

from __future__ import annotations

from zmlir.runtime.cuda.errors import CUresult
from zmlir.runtime.cuda.state import DriverState

E = CUresult


class ProfilerAPI(DriverState):
    def cuProfilerStart(self) -> int:
        self.current_context()
        return E.CUDA_SUCCESS

    def cuProfilerStop(self) -> int:
        self.current_context()
        return E.CUDA_SUCCESS
