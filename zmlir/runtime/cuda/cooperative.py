"""The grid barrier's workspace of cooperative launches where no NVIDIA
driver sets it. cooperative_groups reads the address of a `grid_workspace
{u32 wsSize; u32 barrier;}` from %envreg1:%envreg2 (its
details/driver_abi.h): NVIDIA's driver sets it for a cooperative launch,
and a grid whose address is NULL cannot sync (`grid_group::is_valid()`).
Off NVPTX the lowering reads the module's `__zmlir_grid_workspace` instead
(zmlir/lowering/SpecialRegisters.cpp): an i64 that holds 0, and around a
cooperative launch the address of the module's workspace, its barrier
word cleared (a grid that trapped mid-barrier leaves it counted). The
backend runs launches one at a time in one in-order queue (its copies are
in that order too), so one workspace per module serves all its launches."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.objects import Module

VARIABLE = "__zmlir_grid_workspace"
# grid_workspace: wsSize, barrier, as an H200's driver fills it for a
# cooperative launch (wsSize 16: tools/probe_envreg_grid.cu), padded to 16.
_WORKSPACE = struct.pack("<IIQ", 16, 0, 0)


def attach(device: Any, module: Module) -> None:
    """At load: the address of a module's `__zmlir_grid_workspace`, where
    its kernels read %envreg1 or %envreg2 (NVPTX modules read NVIDIA's)."""
    if VARIABLE.encode() not in module.compiled.binary:
        return
    try:
        module.grid_workspace_var, _ = device.global_variable(module.program, VARIABLE)
    except Exception as err:  # the backend's: it cannot reach the module's variable
        raise CudaError(CUresult.CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
                        f"the grid workspace pointer of {module.ptx_name}: {err}") from None


def launch(device: Any, module: Module, run: Callable[[], None]) -> None:
    """A cooperative launch of one of `module`'s kernels (`run`): the module's
    variable points at its workspace during it, and is 0 again after."""
    if not module.grid_workspace_var:
        run()
        return
    if not module.grid_workspace:
        module.grid_workspace = int(device.alloc(len(_WORKSPACE)))
    device.copy_to_device(module.grid_workspace, _WORKSPACE)
    device.copy_to_device(module.grid_workspace_var, struct.pack("<Q", module.grid_workspace))
    try:
        run()
    finally:
        device.copy_to_device(module.grid_workspace_var, bytes(8))


def detach(device: Any, module: Module) -> None:
    """At the module's unload: its workspace goes."""
    if module.grid_workspace:
        device.free(module.grid_workspace)
        module.grid_workspace = 0
    module.grid_workspace_var = 0
