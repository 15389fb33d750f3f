"""The undocumented export tables cudart asks for (export_slots.py)."""

from __future__ import annotations

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


@pytest.mark.parametrize("table, index", [("TOOLS_TLS", 2),
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
