"""The undocumented export tables cudart asks for (export_slots.py)."""

from __future__ import annotations

import subprocess
import sys

import cffi
import pytest

from zmlir.runtime.cuda import export_slots
from zmlir.runtime.cuda.export_tables import BY_NAME

NOT_SUPPORTED = 801


class _Driver:
    """What a slot stub needs of the driver."""

    def __init__(self) -> None:
        self.ffi = cffi.FFI()
        self.ffi.cdef("typedef int CUresult;")
        self.tracer = None
        self.logged: list[str] = []

    def unsupported(self, api_name: str, why: str) -> int:
        self.logged.append(api_name)
        return NOT_SUPPORTED


@pytest.mark.parametrize("table, index", [("TOOLS_TLS", 3),
                                          ("TOOLS_RUNTIME_CALLBACK_HOOKS", 4)])
def test_tools_hooks_answer_quietly(table: str, index: int,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # cudart calls these on many runs (at exit) and does without them: the
    # answer is NOT_SUPPORTED, logged only when the user asks for the log.
    driver = _Driver()
    monkeypatch.delenv("ZMLIR_LOG", raising=False)
    assert export_slots._stub(driver, BY_NAME[table], index)() == NOT_SUPPORTED
    assert driver.logged == []
    monkeypatch.setenv("ZMLIR_LOG", "1")
    assert export_slots._stub(driver, BY_NAME[table], index)() == NOT_SUPPORTED
    assert driver.logged == [f"export table {table} slot {index}"]


def test_unknown_slots_of_other_tables_are_logged(monkeypatch: pytest.MonkeyPatch) -> None:
    driver = _Driver()
    monkeypatch.delenv("ZMLIR_LOG", raising=False)
    assert export_slots._stub(driver, BY_NAME["CUDART_INTERFACE"], 3)() == NOT_SUPPORTED
    assert driver.logged == ["export table CUDART_INTERFACE slot 3"]


_TABLE_PROBE = """
import ctypes, sys, uuid
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
assert lib.cuInit(0) == 0
for text in sys.argv[2:]:
    table = ctypes.c_void_p()
    key = (ctypes.c_ubyte * 16)(*uuid.UUID(text).bytes)
    code = lib.cuGetExportTable(ctypes.byref(table), key)
    slots = list((ctypes.c_uint64 * 95).from_address(table.value)) if code == 0 else []
    print(code, slots[0] if slots else None, all(slots[1:]))
"""


def test_cuda_13_4_runtime_table(libdir: str) -> None:
    # CUDA 13.4+ runtimes (cuda-bindings 13.5's static cudart) ask for this
    # table at start-up and fail every runtime call with cudaErrorInvalidValue
    # when it is refused; they call none of its slots on our driver.
    result = subprocess.run([sys.executable, "-c", _TABLE_PROBE, libdir,
                             "21318c60-9714-3248-8ca6-41ff7324c8f2", "0" * 32],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"0 {95 * 8} True", "1 None True"]


_CUDART_START_PROBE = """
import ctypes, sys, uuid
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
assert lib.cuInit(0) == 0
table = ctypes.c_void_p()
key = (ctypes.c_ubyte * 16)(*uuid.UUID("6bd5fb6c-5bf4-e74a-8987-d93912fd9df9").bytes)
assert lib.cuGetExportTable(ctypes.byref(table), key) == 0
size = ctypes.c_uint64.from_address(table.value).value
slots = (ctypes.c_void_p * (size // 8)).from_address(table.value)
print(size, ctypes.CFUNCTYPE(ctypes.c_int)(slots[12])())
"""


def test_cuda_13_5_runtime_start_check(libdir: str) -> None:
    # CUDA 13.5's libcudart.so.13 calls CUDART_INTERFACE's slot 12 in its
    # first runtime call (cudaGetDevice: cupy.random's curandCreateGenerator)
    # and fails unless it answers 0; a 10-slot table made it call past the
    # end (a segmentation fault).
    result = subprocess.run([sys.executable, "-c", _CUDART_START_PROBE, libdir],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(13 * 8), "0"]
