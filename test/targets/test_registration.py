"""A target registered from outside the zmlir package: the compiler, its stage
list and `--emit` take it with nothing in zmlir changed (docs/adding-a-target.md)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support import LIT_INPUTS, tool

import zmlir
from zmlir.targets import Stage, base, get_target, targets
from zmlir.targets.spirv import SPIRVTarget


class ValidatedSPIRV(SPIRVTarget):
    """SPIR-V with one more stage: spirv-val's verdict on the binary."""

    name = "spirv-validated"

    def stages(self) -> list[Stage]:
        def validate(binary: bytes) -> tuple[bytes, str]:
            run = subprocess.run([tool("spirv-val") or "spirv-val", "-"], input=binary,
                                 capture_output=True)
            verdict = "valid" if run.returncode == 0 else run.stderr.decode(errors="replace")
            return binary, verdict

        return [*super().stages(), Stage("spirv-val", validate)]


@pytest.fixture
def registered(monkeypatch):
    # A registry of this test's own: the target is gone after it.
    monkeypatch.setattr(base, "_REGISTRY", dict(targets()))
    base.register(ValidatedSPIRV)
    return ValidatedSPIRV


def test_outside_target_compiles_through_its_own_stage(registered) -> None:
    if tool("spirv-val") is None and shutil.which("spirv-val") is None:
        pytest.skip("spirv-val is not installed")
    assert "spirv-validated" in targets()
    target = get_target("spirv-validated")
    assert target.stage_names()[-2:] == ("bin", "spirv-val")
    ptx = (LIT_INPUTS / "vadd.ptx").read_text()
    module = zmlir.compile_module(ptx, "spirv-validated", emit="spirv-val")
    assert module.stages["spirv-val"] == "valid"
    # The stages before it ran as for SPIR-V; assembly, asked for by no one, did not.
    assert module.stages["bin"][:4] == b"\x03\x02\x23\x07"
    assert "asm" not in module.stages
    assert module.kernels["vadd"].param_count == 4


def test_a_stage_another_target_lacks_is_refused(registered) -> None:
    ptx = (LIT_INPUTS / "vadd.ptx").read_text()
    with pytest.raises(ValueError, match="unknown stage 'spirv-val' for target 'spirv'"):
        zmlir.compile_module(ptx, "spirv", emit="spirv-val")


def test_a_name_is_registered_once(registered) -> None:
    with pytest.raises(RuntimeError, match="registered twice"):
        base.register(ValidatedSPIRV)
