"""Driver backends, chosen automatically or by ZMLIR_BACKEND.

Order when automatic: HIP, Level Zero (real GPUs first), then OpenCL. The
CUDA passthrough backend (the real NVIDIA driver underneath, kernels
recompiled through our NVPTX target) is used only when asked for.
"""

from __future__ import annotations

import os

from zmlir.runtime.backends.base import Backend, NoDevice


def _load() -> tuple[dict[str, type[Backend]], dict[str, str]]:
    """The backends whose modules import, and why the others are unavailable.

    A backend's vendor library is opened by its open() (NoDevice when it is
    missing); importing the module needs only Python packages. A missing
    third-party module makes that backend unavailable; any other error
    while importing one is a bug and propagates."""
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend

    backends: dict[str, type[Backend]] = {"opencl": OpenCLBackend}
    unavailable: dict[str, str] = {}
    try:
        from zmlir.runtime.backends.hip import HIPBackend

        backends["hip"] = HIPBackend
    except ModuleNotFoundError as err:
        unavailable["hip"] = _missing_dependency(err)
    try:
        from zmlir.runtime.backends.level_zero import LevelZeroBackend

        backends["level_zero"] = LevelZeroBackend
    except ModuleNotFoundError as err:
        unavailable["level_zero"] = _missing_dependency(err)
    try:
        from zmlir.runtime.backends.cuda import CUDABackend

        backends["cuda"] = CUDABackend
    except ModuleNotFoundError as err:
        unavailable["cuda"] = _missing_dependency(err)
    return backends, unavailable


def _missing_dependency(err: ModuleNotFoundError) -> str:
    """Why a backend is unavailable, if `err` is a missing third-party module;
    re-raises `err` if the missing module is part of zmlir."""
    if err.name is None or err.name.partition(".")[0] == "zmlir":
        raise err
    return f"needs the Python module '{err.name}'"


def _registry() -> dict[str, type[Backend]]:
    return _load()[0]


AUTOMATIC_ORDER = ("hip", "level_zero", "opencl")


def open_backend(name: str | None = None) -> Backend:
    """Opens the named backend, or the first that has a device."""
    registry, unavailable = _load()
    name = name or os.environ.get("ZMLIR_BACKEND") or None
    if name is not None:
        if name in unavailable:
            raise NoDevice(f"backend '{name}' is unavailable: {unavailable[name]}")
        if name not in registry:
            raise NoDevice(f"unknown backend '{name}' (known: {', '.join(sorted(registry))})")
        return registry[name].open()
    reasons = []
    for candidate in AUTOMATIC_ORDER:
        cls = registry.get(candidate)
        if cls is None:
            reasons.append(f"{candidate}: {unavailable[candidate]}")
            continue
        try:
            return cls.open()
        except NoDevice as err:
            reasons.append(f"{candidate}: {err}")
    raise NoDevice("no backend has a device (" + "; ".join(reasons) + ")")


__all__ = ["AUTOMATIC_ORDER", "Backend", "NoDevice", "open_backend"]
