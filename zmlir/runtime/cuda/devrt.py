"""NVIDIA's device runtime, libcudadevrt.a, in a link: our PTX stand-in.

libcudadevrt.a is a host archive whose one object (cuda_device_runtime.o)
carries the device runtime as SASS only, which we cannot run. Programs link
it for the grid group functions PTX calls (numba-cuda links it into every
kernel that calls `cg.this_grid()`), so where a cuLink* input is that
library (by its file name, or an archive of cuda_device_runtime objects)
the linker links our own PTX unit instead, cudadevrt.ptx: the cudaCG*
functions, on the grid barrier of cooperative launches (cooperative.py),
and device-side launches (cudaGetParameterBufferV2, cudaLaunchDeviceV2)
and copies (cudaMemcpyAsync between device addresses), which the driver
runs after the launching grid (device_launch.py), and cudaGetErrorString. A
program built with -rdc and -lcudadevrt carries the library's own PTX as
one of its units (compute_121 only, calling NVIDIA's driver-internal
syscalls): that unit is replaced by ours too (`is_device_runtime_ptx`). A
reference to any other device runtime function (device-side cudaMalloc,
events, ...) stays undefined and fails the link naming it (`unsupported`).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path, PurePath

_UNIT = Path(__file__).with_name("cudadevrt.ptx")
_UNIT_NAME = "zmlir's libcudadevrt (cudadevrt.ptx)"
_ARCHIVE_MAGIC = b"!<arch>\n"
_MEMBER = "cuda_device_runtime"
# The device runtime's functions (cuda_device_runtime_api.h): cudaXxx and
# the CDP2 entry points they map to, __cudaCDP2Xxx.
_DEVICE_RUNTIME_NAME = re.compile(r"(?:__)?cuda[A-Z0-9]\w*")
_UNDEFINED = re.compile(r"Undefined reference to '([^']+)'")
# NVIDIA's device runtime unit defines its launch function; a program's
# own PTX only declares it (.extern).
_DEFINES_LAUNCH = re.compile(r"^\.visible\s+\.func\s*(?:\([^)]*\))?\s*__cudaCDP2LaunchDeviceV2\s*\(",
                             re.M)


@cache
def unit() -> tuple[str, str]:
    """Our stand-in's PTX unit, (text, name) as the linker takes units."""
    return _UNIT.read_text(), _UNIT_NAME


@cache
def provided() -> frozenset[str]:
    """The device runtime functions the stand-in defines."""
    return frozenset(re.findall(r"\.visible \.func \([^)]*\) (\w+)\(", unit()[0]))


def is_cudadevrt(label: str, data: bytes) -> bool:
    """Whether a link input is NVIDIA's device runtime library: named
    libcudadevrt (`libcudadevrt.a`, a path to it, `cudadevrt.lib`), or an
    archive whose members are all cuda_device_runtime objects."""
    stem = PurePath(label).name.split(".", 1)[0]
    if stem in ("libcudadevrt", "cudadevrt"):
        return True
    members = _archive_members(data)
    return bool(members) and all(PurePath(m).name.startswith(_MEMBER) for m in members)


def is_device_runtime_ptx(text: str) -> bool:
    """Whether a translation unit's PTX is NVIDIA's device runtime (the unit
    libcudadevrt.a brings into a program linked with -rdc)."""
    return _DEFINES_LAUNCH.search(text) is not None


def declares_provided(text: str) -> bool:
    """Whether a unit's PTX declares (`.extern`) a function the stand-in
    defines: it was linked with the device runtime."""
    return any(re.search(rf"^\.extern\s+\.func\b[^;{{]*\b{name}\s*\(", text, re.M)
               for name in provided())


def unsupported(message: str) -> str | None:
    """For a link error of the stand-in's link: why an undefined device
    runtime function is one (None when the error is another)."""
    match = _UNDEFINED.search(message)
    if not match or not _DEVICE_RUNTIME_NAME.fullmatch(match.group(1)):
        return None
    name = match.group(1)
    return (f"{message}: '{name}' is a function of NVIDIA's device runtime (libcudadevrt), "
            f"of which zmlir provides only {', '.join(sorted(provided()))}; the rest of "
            "the device runtime (CUDA dynamic parallelism's device-side memory "
            "management, events, ...) is not supported")


def _archive_members(data: bytes) -> list[str]:
    """The member names of a System V (GNU) `ar` archive, [] if `data` is
    not one; the symbol index and the long-name table are not members."""
    if not data.startswith(_ARCHIVE_MAGIC):
        return []
    names: list[str] = []
    long_names = b""
    pos = len(_ARCHIVE_MAGIC)
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        if header[58:60] != b"`\n":
            return []  # not an archive member header: not an archive we know
        name = header[:16].decode("ascii", "replace").rstrip()
        try:
            size = int(header[48:58])
        except ValueError:
            return []
        body = data[pos + 60:pos + 60 + size]
        if name == "//":
            long_names = body
        elif name.startswith("/") and name[1:].isdigit():
            start = int(name[1:])
            end = long_names.find(b"/\n", start)
            names.append(long_names[start:end if end >= 0 else None].decode("ascii", "replace"))
        elif name not in ("/", "/SYM64/"):
            names.append(name.rstrip("/"))
        pos += 60 + size + (size & 1)
    return names
