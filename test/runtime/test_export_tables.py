"""The undocumented export tables cudart asks for (export_slots.py)."""

from __future__ import annotations

import os
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


# Each probe's start: our driver, and export_table(uuid) -> (code, table address).
_PROBE_PRELUDE = """
import ctypes, sys, uuid
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
assert lib.cuInit(0) == 0

def export_table(text):
    table = ctypes.c_void_p()
    key = (ctypes.c_ubyte * 16)(*uuid.UUID(text).bytes)
    return lib.cuGetExportTable(ctypes.byref(table), key), table.value
"""

_TABLE_PROBE = _PROBE_PRELUDE + """
for text in sys.argv[2:]:
    code, table = export_table(text)
    slots = list((ctypes.c_uint64 * 95).from_address(table)) if code == 0 else []
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


_CUDART_START_PROBE = _PROBE_PRELUDE + """
code, table = export_table("6bd5fb6c-5bf4-e74a-8987-d93912fd9df9")
assert code == 0
size = ctypes.c_uint64.from_address(table).value
slots = (ctypes.c_void_p * (size // 8)).from_address(table)
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


_CONTEXT_CHECK_PROBE = _PROBE_PRELUDE + """
code, table = export_table("263e8860-7cd2-6143-92f6-bbd5006dfa7e")
assert code == 0
slot = (ctypes.c_void_p * 4).from_address(table)[2]
check = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint),
                         ctypes.POINTER(ctypes.c_void_p))(slot)
failed, detail = ctypes.c_uint(7), ctypes.c_void_p(8)
code = check(None, ctypes.byref(failed), ctypes.byref(detail))
# A C body lies in our library's code (in the driver's own link-map
# namespace); a Python body is a cffi callback's trampoline.
home = ""
for line in open("/proc/self/maps"):
    fields = line.split()
    low, high = (int(x, 16) for x in fields[0].split("-"))
    if low <= slot < high:
        home = fields[-1] if len(fields) > 5 else ""
print(code, failed.value, detail.value, home.endswith("/libzmlir_cuda.so"))
"""


@pytest.mark.parametrize("traced, in_c", [(False, True), (True, False)])
def test_context_check_slot_answers_in_c(libdir: str, tmp_path, traced: bool,
                                         in_c: bool) -> None:
    # cudart 13 asks UNKNOWN_CHECKS' slot 2 in every cudaDeviceSynchronize;
    # through Python a device synchronize after a small graph took 17.3-17.8
    # us on an H100, 11.3 in C (11.0-11.4 natively; session 47's probes). A
    # trace records it, so there it stays Python's.
    env = {**os.environ, "ZMLIR_BACKEND": "opencl"}
    if traced:
        env["ZMLIR_TRACE"] = str(tmp_path / "trace.jsonl")
    result = subprocess.run([sys.executable, "-c", _CONTEXT_CHECK_PROBE, libdir],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "0", "None", str(in_c)]
