"""NVIDIA's machine code for our NVPTX, cached (the CUDA passthrough).

The passthrough hands NVIDIA's driver zmlir's NVPTX (PTX text), which its JIT
assembles into machine code (a cubin) at every module load: ptxas's time, in
the first launch of every run (NVIDIA's own ComputeCache keeps that for the
application's PTX, not for ours). Once NVIDIA's linker (cuLinkCreate,
cuLinkAddData, cuLinkComplete) has assembled a module, its cubin is kept in
the JIT cache's blob table (runtime/cache.py: ZMLIR_CACHE=0 turns it off)
and the next load hands NVIDIA's driver the cubin.

The key is the NVPTX's hash, the GPU's compute capability and NVIDIA's
driver (its CUDA version, and the file's real path, size and modification
time: an upgraded driver, whose ptxas may assemble otherwise, never gets an
older one's cubin). A damaged entry fails its checksum, a cubin NVIDIA's
driver refuses is assembled again from the PTX and replaced: neither is
ever an error.

Off unless ZMLIR_MACHINE_CODE_CACHE=1: NVIDIA's linker compiles PTX as
relocatable code, which may differ from cuModuleLoadDataEx's whole-program
compile (stack frames of recursive functions, speed). On an H200 (session
32), recursion_local_memory, which passes through the passthrough without
this cache, faulted (700) with it on, with its stack raised to 32 KiB; a
cold run took 145 ms to its first launch, a warm one 1.6 ms (native 0.14).
Not on by default until a run there shows it harmless.
"""

from __future__ import annotations

import hashlib
import os

from zmlir.files import cache_enabled

ENV = "ZMLIR_MACHINE_CODE_CACHE"


def driver_identity(library_path: str, cuda_version: int) -> str:
    """NVIDIA's driver as the cache tells one from another."""
    real = os.path.realpath(library_path)
    try:
        st = os.stat(real)
        stamp = f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        stamp = "?"
    return f"{cuda_version}:{real}:{stamp}"


def key(nvptx: bytes, compute_capability: tuple[int, int], driver: str) -> str:
    digest = hashlib.sha256(b"nvidia-machine-code\0")
    for part in (nvptx, f"sm_{compute_capability[0]}{compute_capability[1]}".encode(),
                 driver.encode()):
        digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()


class MachineCodeCache:
    """Cubins by key, in the JIT cache's blob table; None where caches are off."""

    def __init__(self) -> None:
        from zmlir.runtime import cache

        self._blobs = cache.BlobCache(cache.shared_cache())
        # The database opened now, at cuInit, not in a program's timed first
        # launch (0.6 ms here; SQLite's connection is the calling thread's).
        self._blobs.get("")

    @classmethod
    def open(cls) -> MachineCodeCache | None:
        return cls() if cache_enabled() and os.environ.get(ENV, "").strip() == "1" else None

    def get(self, key: str) -> bytes | None:
        return self._blobs.get(key)

    def put(self, key: str, cubin: bytes) -> None:
        self._blobs.put(key, cubin)

