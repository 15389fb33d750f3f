"""Driver backends, chosen automatically or by ZMLIR_BACKEND.

Order when automatic: HIP, Level Zero (real GPUs first), then OpenCL. The
CUDA passthrough backend (the real NVIDIA driver underneath, kernels
recompiled through our NVPTX target) is used only when asked for.
"""

from __future__ import annotations

import os

from zmlir.runtime.backends.base import Backend, NoDevice


def _registry() -> dict[str, type[Backend]]:
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend

    backends: dict[str, type[Backend]] = {"opencl": OpenCLBackend}
    try:
        from zmlir.runtime.backends.hip import HIPBackend

        backends["hip"] = HIPBackend
    except ImportError:
        pass
    try:
        from zmlir.runtime.backends.level_zero import LevelZeroBackend

        backends["level_zero"] = LevelZeroBackend
    except ImportError:
        pass
    try:
        from zmlir.runtime.backends.cuda import CUDABackend

        backends["cuda"] = CUDABackend
    except ImportError:
        pass
    return backends


AUTOMATIC_ORDER = ("hip", "level_zero", "opencl")


def open_backend(name: str | None = None) -> Backend:
    """Opens the named backend, or the first that has a device."""
    registry = _registry()
    name = name or os.environ.get("ZMLIR_BACKEND") or None
    if name is not None:
        if name not in registry:
            raise NoDevice(f"unknown backend '{name}' (known: {', '.join(sorted(registry))})")
        return registry[name].open()
    reasons = []
    for candidate in AUTOMATIC_ORDER:
        cls = registry.get(candidate)
        if cls is None:
            continue
        try:
            return cls.open()
        except NoDevice as err:
            reasons.append(f"{candidate}: {err}")
    raise NoDevice("no backend has a device (" + "; ".join(reasons) + ")")


__all__ = ["AUTOMATIC_ORDER", "Backend", "NoDevice", "open_backend"]
