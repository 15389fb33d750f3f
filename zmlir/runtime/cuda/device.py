"""Initialization, versions, error strings and the device: one backend
device, presented as an sm_89-class GPU (attributes.py), ordinal 0, with no
peers."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import struct
from collections.abc import Callable
from typing import Any

from zmlir.runtime.cuda.attributes import DEVICE_ATTRIBUTE_MAX, device_attribute
from zmlir.runtime.cuda.constants import DRIVER_VERSION
from zmlir.runtime.cuda.errors import CUresult, message_of, name_of
from zmlir.runtime.cuda.state import DriverState, log

E = CUresult
_PCI_BUS_ID = "0000:00:00.0"


class DeviceAPI(DriverState):
    # -- init, versions, errors ---------------------------------------------

    def cuInit(self, flags: int) -> int:
        if flags != 0:
            return E.CUDA_ERROR_INVALID_VALUE
        with self.lock:
            if self.initialized:
                self.require_init()  # not in a child forked after cuInit
                return E.CUDA_SUCCESS
            from zmlir.runtime.backends import NoDevice, open_backend

            self.fast.keep_signal_dispositions(opening=True)
            try:
                self.device = open_backend()
            except NoDevice as err:
                log(f"no device: {err}")
                return E.CUDA_ERROR_NO_DEVICE
            finally:
                self.fast.keep_signal_dispositions(opening=False)
            self._prepare_module_loading()
            self.printf.device = self.device
            self.heaps.device = self.device
            self.stacks.device = self.device
            self.fast.set_backend(self.device)
            self.fast.install_fault_handler()  # chaining to the process's own
            self.initialized = True
            self.init_pid = os.getpid()
        return E.CUDA_SUCCESS

    def _prepare_module_loading(self) -> None:
        """Imports what loading a cached module needs now, at start-up, so a
        warm module load costs milliseconds (with cudart's lazy loading it
        is in a program's timed first launch)."""
        for decompressor in ("zstandard", "lz4.block"):  # nvcc's compressed fatbins
            with contextlib.suppress(ImportError):
                importlib.import_module(decompressor)
        try:
            import zmlir.compiled  # noqa: F401  (what a cache hit builds)
            from zmlir.runtime import cache
            from zmlir.targets import get_target

            get_target(self.device.target)
            cache.shared_cache()
            cache.compiler_fingerprint()
        except Exception as err:  # no compiler here: precompiled modules only
            if os.environ.get("ZMLIR_LOG"):
                log(f"module cache unavailable: {err}")

    def cuDriverGetVersion(self, version: Any) -> int:
        self.out(version, DRIVER_VERSION)
        return E.CUDA_SUCCESS

    def _error_string(self, table: Callable[[int], str | None], error: int, out: Any) -> int:
        text = table(error)
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        if text is None:
            out[0] = self.ffi.NULL
            return E.CUDA_ERROR_INVALID_VALUE
        cstr = self.ffi.new("char[]", text.encode())
        self.keepalive.append(cstr)
        out[0] = cstr
        return E.CUDA_SUCCESS

    def cuGetErrorName(self, error: int, out: Any) -> int:
        return self._error_string(name_of, error, out)

    def cuGetErrorString(self, error: int, out: Any) -> int:
        return self._error_string(message_of, error, out)

    # -- devices ------------------------------------------------------------

    def cuDeviceGetCount(self, count: Any) -> int:
        self.require_init()
        self.out(count, 1)
        return E.CUDA_SUCCESS

    def cuDeviceGet(self, device: Any, ordinal: int) -> int:
        self.check_device(ordinal)
        self.out(device, 0)
        return E.CUDA_SUCCESS

    def cuDeviceGetName(self, name: Any, length: int, dev: int) -> int:
        self.check_device(dev)
        if name == self.ffi.NULL or length <= 0:
            return E.CUDA_ERROR_INVALID_VALUE
        shown = self.device.device_name
        if not self.device.device_named_as_is:
            shown = f"zmlir {shown}"
        text = shown.encode()[: max(length - 1, 0)]
        self.ffi.memmove(name, text + b"\0", len(text) + 1)
        return E.CUDA_SUCCESS

    def cuDeviceGetUuid(self, uuid: Any, dev: int) -> int:
        self.check_device(dev)
        if uuid == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        digest = hashlib.md5(f"zmlir:{self.device.device_name}".encode()).digest()
        self.ffi.memmove(uuid, digest, 16)
        return E.CUDA_SUCCESS

    cuDeviceGetUuid_v2 = cuDeviceGetUuid

    def device_hash_info(self) -> bytes:
        """Per device: UUID, PCI domain, bus and device (the integrity check's input)."""
        uuid = self.ffi.new("CUuuid *")
        self.cuDeviceGetUuid(uuid, 0)
        # PCI_DOMAIN_ID, PCI_BUS_ID, PCI_DEVICE_ID, as cuDeviceGetAttribute answers them.
        pci = (device_attribute(attrib, self.device) for attrib in (50, 33, 34))
        return bytes(self.ffi.buffer(uuid, 16)) + struct.pack("<iii", *pci)

    def cuDeviceGetLuid(self, luid: Any, mask: Any, dev: int) -> int:
        self.check_device(dev)
        return self.unsupported("cuDeviceGetLuid", "LUIDs exist on Windows only")

    def cuDeviceTotalMem_v2(self, nbytes: Any, dev: int) -> int:
        self.check_device(dev)
        self.out(nbytes, self.total_memory())
        return E.CUDA_SUCCESS

    def cuDeviceGetAttribute(self, pi: Any, attrib: int, dev: int) -> int:
        self.check_device(dev)
        if not 0 < attrib < DEVICE_ATTRIBUTE_MAX:
            return E.CUDA_ERROR_INVALID_VALUE
        value = device_attribute(attrib, self.device)
        self.out(pi, value)
        self.fast.device_attribute(attrib, value)  # answered in C from now on
        if attrib in (75, 76):  # fastpath.c answers a caller from both
            other = 76 if attrib == 75 else 75
            self.fast.device_attribute(other, device_attribute(other, self.device))
        return E.CUDA_SUCCESS

    def cuDeviceComputeCapability(self, major: Any, minor: Any, dev: int) -> int:
        self.check_device(dev)
        self.out(major, device_attribute(75, self.device))
        self.out(minor, device_attribute(76, self.device))
        return E.CUDA_SUCCESS

    # -- one device: peers, PCI identity -------------------------------------------

    def cuDeviceCanAccessPeer(self, can: Any, dev: int, peer: int) -> int:
        self.check_device(dev)
        self.check_device(peer)
        self.out(can, 0)
        return E.CUDA_SUCCESS

    def cuDeviceGetP2PAttribute(self, value: Any, attrib: int, src: int, dst: int) -> int:
        self.check_device(src)
        self.check_device(dst)
        self.out(value, 0)
        return E.CUDA_SUCCESS

    def cuDeviceGetPCIBusId(self, bus_id: Any, length: int, dev: int) -> int:
        self.check_device(dev)
        if bus_id == self.ffi.NULL or length <= 0:
            return E.CUDA_ERROR_INVALID_VALUE
        text = _PCI_BUS_ID.encode()[: max(length - 1, 0)]
        self.ffi.memmove(bus_id, text + b"\0", len(text) + 1)
        return E.CUDA_SUCCESS

    def cuDeviceGetByPCIBusId(self, dev: Any, bus_id: Any) -> int:
        self.require_init()
        if self.ffi.string(bus_id).decode().lower() != _PCI_BUS_ID:
            return E.CUDA_ERROR_INVALID_DEVICE
        self.out(dev, 0)
        return E.CUDA_SUCCESS
