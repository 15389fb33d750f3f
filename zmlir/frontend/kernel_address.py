"""What `mov.u64 %rd, kernel` gives: a kernel's address as device code sees
it (the handle a device-side launch names its child grid by, CUDA dynamic
parallelism). No target runs a kernel through a pointer, so it is a value
only the driver reads back: a tag and a hash of the kernel's name, the same
in every compile and in every part of a module compiled a part at a time
(runtime/cuda/device_launch.py maps it back to the kernel)."""

from __future__ import annotations

_TAG = 0x7A6B << 48  # "zk"; device function addresses are 0x7a6d... (lowering/Calls.cpp)
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3


def kernel_address(name: str) -> int:
    """The address of kernel `name` (FNV-1a of its name in the low 48 bits)."""
    digest = _FNV_OFFSET
    for byte in name.encode():
        digest = ((digest ^ byte) * _FNV_PRIME) & (2**64 - 1)
    return _TAG | (digest & (2**48 - 1))
