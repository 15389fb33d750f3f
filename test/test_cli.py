"""The `zmlir` command line: diagnostics, stages, no tracebacks, no partial output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import LIT_INPUTS, TEST_DIR

VADD = LIT_INPUTS / "vadd.ptx"


def run_zmlir(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zmlir.cli", *args], capture_output=True,
                          text=True, input=stdin)


def test_targets_lists_every_registered_target() -> None:
    out = run_zmlir("targets")
    assert out.returncode == 0
    names = [line.split(":")[0].split()[0] for line in out.stdout.splitlines()]
    assert names == ["amdgpu", "host", "nvptx", "spirv"]


@pytest.mark.parametrize("stage, marker", [
    ("ptx-mlir", "ptx.ld_param"),
    ("std-mlir", "gpu.func @vadd"),
    ("llvm-mlir", "llvm.func"),
    ("llvm-ir", "define"),
    ("asm", "OpEntryPoint"),
])
def test_every_stage_can_be_emitted(stage: str, marker: str) -> None:
    out = run_zmlir("compile", str(VADD), "--emit", stage)
    assert out.returncode == 0, out.stderr
    assert marker in out.stdout


def test_jobs_import_a_big_module_the_same(tmp_path: Path) -> None:
    """`-j 2` on a module past the streaming size (1 MB): worker processes,
    the same output as one process."""
    text = VADD.read_text()
    head, body = text.split(".visible", 1)
    copies = [f".visible{body}".replace("vadd", f"vadd{i}") for i in range(1_100_000 // len(body))]
    big = tmp_path / "big.ptx"
    big.write_text(head + "".join(copies))
    outs = [run_zmlir("compile", str(big), "--emit", "ptx-mlir", "-j", jobs) for jobs in "12"]
    assert [o.returncode for o in outs] == [0, 0], outs[1].stderr
    assert outs[0].stdout == outs[1].stdout and outs[0].stdout.count("func.func") == len(copies)


def test_malformed_ptx_is_one_diagnostic_and_no_output(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 9.0\n.target sm_80\n.address_size 64\n"
                   ".visible .entry k()\n{\n\tadd.s32 %r1 %r2;\n}\n")
    out_file = tmp_path / "out.spv"
    out = run_zmlir("compile", str(bad), "-o", str(out_file))
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"{bad}:6:")
    assert ": error: " in lines[0]
    assert "Traceback" not in out.stderr
    assert not out_file.exists()
    assert list(tmp_path.iterdir()) == [bad]


def test_unsupported_instruction_is_one_diagnostic(tmp_path: Path) -> None:
    src = tmp_path / "unsupported.ptx"
    src.write_text(".version 9.0\n.target sm_80\n.address_size 64\n"
                   ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n"
                   "\tmov.u32 %r1, 1;\n\tstmatrix.sync.aligned.m8n8.x1.shared.b16 [%r1], {%r1};"
                   "\n\tret;\n}\n")
    out = run_zmlir("compile", str(src), "-o", str(tmp_path / "o.spv"))
    assert out.returncode == 1
    assert out.stderr.strip() == (f"{src}:8:2: error: unsupported instruction "
                                  "'stmatrix.sync.aligned.m8n8.x1.shared.b16'")


def test_unsupported_lowering_points_at_the_ptx_line(tmp_path: Path) -> None:
    # Imports fine, but only NVIDIA's driver sets %envreg0.
    src = tmp_path / "envreg.ptx"
    src.write_text(".version 9.0\n.target sm_80\n.address_size 64\n"
                   ".visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<3>;\n"
                   "\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %envreg0;\n"
                   "\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n")
    out = run_zmlir("compile", str(src), "-o", str(tmp_path / "o.spv"))
    assert out.returncode == 1
    assert out.stderr.strip() == (f"{src}:9:2: error: unsupported special register "
                                  "'%envreg0' on target 'spirv' (set by NVIDIA's driver)")
    assert not (tmp_path / "o.spv").exists()


FIB_PTX = (
    ".version 9.0\n.target sm_80\n.address_size 64\n"
    ".func (.param .b32 r) fib(.param .b32 n)\n{\n\t.reg .pred %p;\n\t.reg .b32 %r<6>;\n"
    "\tld.param.b32 %r1, [n];\n\tsetp.lt.s32 %p, %r1, 2;\n\tmov.b32 %r5, %r1;\n"
    "\t@%p bra DONE;\n\tadd.s32 %r2, %r1, -1;\n"
    "\t{ .param .b32 a; .param .b32 b; st.param.b32 [a], %r2;\n"
    "\tcall.uni (b), fib, (a);\n\tld.param.b32 %r3, [b]; }\n"
    "\tadd.s32 %r2, %r1, -2;\n"
    "\t{ .param .b32 a; .param .b32 b; st.param.b32 [a], %r2;\n"
    "\tcall.uni (b), fib, (a);\n\tld.param.b32 %r4, [b]; }\n"
    "\tadd.s32 %r5, %r3, %r4;\nDONE:\n\tst.param.b32 [r], %r5;\n\tret;\n}\n"
    ".visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<2>;\n"
    "\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n"
    "\t{ .param .b32 a; .param .b32 b; st.param.b32 [a], %r1;\n"
    "\tcall.uni (b), fib, (a);\n\tld.param.b32 %r2, [b]; }\n"
    "\tSHUFFLE\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n")


def test_recursion_compiles_except_in_a_kernel_that_needs_whole_warps(tmp_path: Path) -> None:
    # fib calls itself. Intel's OpenCL CPU runtime runs it in a kernel that
    # asks for no sub-group size and faults compiling it into one vectorized
    # 32 wide (a shuffle makes the kernel need whole warps); the host CPU and
    # NVPTX run it either way.
    plain, shuffles = tmp_path / "fib.ptx", tmp_path / "fib_shfl.ptx"
    plain.write_text(FIB_PTX.replace("\tSHUFFLE", ""))
    shuffles.write_text(FIB_PTX.replace("SHUFFLE", "shfl.sync.bfly.b32 %r2, %r2, 1, 31, -1;\n"))
    assert run_zmlir("compile", str(plain), "-o", str(tmp_path / "a.spv")).returncode == 0
    out = run_zmlir("compile", str(shuffles), "-o", str(tmp_path / "o.spv"))
    assert out.returncode == 1
    assert out.stderr.strip() == (
        f"{shuffles}:14:2: error: unsupported recursive call of 'fib' in kernel 'k' on target "
        "'spirv': Intel's CPU runtime faults on recursion in a kernel that needs 32-wide "
        "sub-groups (warp operations or volatile memory)")
    assert not (tmp_path / "o.spv").exists()
    for target in ("host", "nvptx"):
        assert run_zmlir("compile", "-t", target, str(shuffles), "-o",
                         str(tmp_path / f"o.{target}")).returncode == 0


def test_recursion_with_local_memory_compiles_on_spirv(tmp_path: Path) -> None:
    # Intel's CPU runtime gives fib's .local array one instance that every
    # recursive call would share (fib(10) passing results through it gave 5):
    # on SPIR-V its frames live on the driver's software stacks instead
    # (test/lit/Target/spirv-recursion-local-memory.ptx has the IR).
    local = tmp_path / "fib_local.ptx"
    local.write_text(FIB_PTX.replace("\tSHUFFLE", "").replace(
        "\t.reg .pred %p;\n", "\t.local .align 4 .b8 scratch[8];\n\t.reg .pred %p;\n", 1).replace(
        "\tadd.s32 %r5, %r3, %r4;\n", "\tst.local.u32 [scratch], %r3;\n\tadd.s32 %r5, %r3, %r4;\n"))
    out = run_zmlir("compile", str(local), "-o", str(tmp_path / "o.spv"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "o.spv").stat().st_size > 0
    assert run_zmlir("compile", "-t", "host", str(local), "-o", str(tmp_path / "o.so")).returncode == 0


def test_unknown_target_is_an_error() -> None:
    out = run_zmlir("compile", str(VADD), "-t", "amdgpu:sm_80")
    assert out.returncode == 1
    assert "bad AMDGPU architecture 'sm_80'" in out.stderr
    assert "Traceback" not in out.stderr


def test_invalid_importer_output_is_an_internal_error(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """MLIR from the importer that does not parse is our bug: said so, at the PTX line the
    broken MLIR line came from, never as an error in the user's file at MLIR coordinates."""
    import zmlir.compiler
    from zmlir.cli import main

    real = zmlir.compiler.import_module

    def broken(parsed, filename):  # type: ignore[no-untyped-def]
        text = real(parsed, filename)
        return text.replace("ptx.ret", "ptx.ret junk", 1)

    monkeypatch.setattr(zmlir.compiler, "import_module", broken)
    assert main(["compile", str(VADD), "--emit", "ptx-mlir"]) == 1
    err = capsys.readouterr().err
    ptx_line = next(i for i, line in enumerate(VADD.read_text().splitlines(), 1)
                    if line.strip().startswith("ret"))
    assert err.startswith(f"{VADD}:{ptx_line}:"), err
    assert "error: internal error: the importer produced invalid MLIR: " in err
    assert "of its output: `ptx.ret junk`" in err


REGRESSIONS = TEST_DIR / "fuzz_regressions"


@pytest.mark.parametrize("name", sorted(p.name for p in REGRESSIONS.glob("*.ptx")))
def test_fuzz_regressions_end_cleanly(name: str, tmp_path: Path) -> None:
    # Inputs the fuzzer once hung or crashed the importer on: each now ends
    # quickly with success or one diagnostic.
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "compile",
                          str(REGRESSIONS / name), "--emit=ptx-mlir", "-o",
                          str(tmp_path / "out.mlir")], capture_output=True, text=True, timeout=60)
    assert out.returncode in (0, 1), out.stderr
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr
    if out.returncode == 1:
        assert len(out.stderr.strip().splitlines()) == 1
        assert ": error: " in out.stderr


def test_output_to_a_device_writes_through_it(tmp_path: Path) -> None:
    # `-o /dev/null` must write to the device, not replace it with a file.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    out = run_zmlir("compile", str(VADD), "--emit", "ptx-mlir", "-o", str(fifo))
    data = reader.communicate(timeout=60)[0]
    assert out.returncode == 0, out.stderr
    assert b"ptx.ld_param" in data
    assert fifo.is_fifo()
