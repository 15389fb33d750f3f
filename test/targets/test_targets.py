"""Each CUDA test kernel, compiled by nvcc to PTX and by zmlir to every
target, is accepted by that target's own validator."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support import CUDA_DIR, tool

import zmlir
from zmlir.targets.spirv import GRID_VARIANT_SUFFIX

SOURCES = sorted(p.name for p in CUDA_DIR.glob("*.cu"))
AMDGPU_ARCHS = ["gfx90a", "gfx942", "gfx1100"]
# The kernels of CUDA_DIR that run warp collectives (shuffles, ballots) or
# volatile accesses (warp-synchronous code: functionsUsingSubGroups).
WARP_KERNELS = {"block_reduce", "warp_ops", "_Z12wait_foreverPii"}


def _kernel_names(ptx: str) -> list[str]:
    return [line.split("(")[0].split()[-1] for line in ptx.splitlines()
            if ".entry" in line and not line.lstrip().startswith("//")]


@pytest.mark.parametrize("source", SOURCES)
def test_spirv_validates(source: str, nvcc_ptx, tmp_path: Path) -> None:
    if tool("spirv-val") is None:
        pytest.skip("spirv-val is not installed")
    module = zmlir.compile_module(nvcc_ptx(source), "spirv", filename=source)
    spv = tmp_path / "k.spv"
    spv.write_bytes(module.binary)
    result = subprocess.run([tool("spirv-val"), str(spv)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    dis = subprocess.run([tool("spirv-dis"), str(spv)], capture_output=True, text=True,
                         check=True).stdout
    # Each kernel is an entry point, and no other function is (an OpName or a
    # string with the kernel's name is no evidence of either) but kernels'
    # grid variants (IndexNoWrap.cpp: the kernel for grids below 2^21 blocks).
    entries = dict(re.findall(r'OpEntryPoint Kernel (%\S+) "([^"]+)"', dis))
    kernels = {name.removesuffix(GRID_VARIANT_SUFFIX) for name in entries.values()}
    assert sorted(kernels) == sorted(_kernel_names(nvcc_ptx(source)))
    assert sorted(module.kernels) == sorted(kernels)
    # A kernel with warp collectives asks for 32-wide sub-groups (a sub-group
    # is a CUDA warp); any other leaves the width to the runtime, which
    # vectorizes it at its own.
    for entry, name in entries.items():
        required = f"OpExecutionMode {entry} SubgroupSize 32" in dis
        assert required == (name.removesuffix(GRID_VARIANT_SUFFIX) in WARP_KERNELS), name


@pytest.mark.parametrize("arch", AMDGPU_ARCHS)
@pytest.mark.parametrize("source", SOURCES)
def test_amdgpu_code_object(source: str, arch: str, nvcc_ptx, tmp_path: Path) -> None:
    readelf = tool("llvm-readelf-22") or tool("llvm-readelf")
    if readelf is None:
        pytest.skip("llvm-readelf is not installed")
    ptx = nvcc_ptx(source)
    module = zmlir.compile_module(ptx, f"amdgpu:{arch}", filename=source)
    hsaco = tmp_path / "k.hsaco"
    hsaco.write_bytes(module.binary)
    notes = subprocess.run([readelf, "--notes", str(hsaco)], capture_output=True, text=True,
                           check=True).stdout
    assert f"amdgcn-amd-amdhsa--{arch}" in notes
    for name in _kernel_names(ptx):
        assert f".name:           {name}" in notes
    assert ".kernarg_segment_size:" in notes
    expected_wave = 64 if arch.startswith("gfx9") else 32
    assert f".wavefront_size: {expected_wave}" in notes


@pytest.mark.parametrize("source", SOURCES)
def test_nvptx_assembles(source: str, nvcc_ptx, tmp_path: Path) -> None:
    if tool("ptxas") is None:
        pytest.skip("ptxas is not installed")
    module = zmlir.compile_module(nvcc_ptx(source), "nvptx:sm_80", filename=source)
    ptx = tmp_path / "k.ptx"
    ptx.write_bytes(module.binary)
    result = subprocess.run([tool("ptxas"), "-arch=sm_80", str(ptx), "-o",
                             str(tmp_path / "k.cubin")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "k.cubin").stat().st_size > 0


def test_spirv_stays_valid_over_repeated_compiles(nvcc_ptx, tmp_path: Path) -> None:
    # LLVM 22's in-process SPIR-V backend produced duplicate ids for about one
    # module in six once a process had compiled a few; every compile must
    # validate.
    if tool("spirv-val") is None:
        pytest.skip("spirv-val is not installed")
    failures = []
    for i in range(12):
        source = SOURCES[i % len(SOURCES)]
        spv = tmp_path / f"{i}.spv"
        spv.write_bytes(zmlir.compile(nvcc_ptx(source), "spirv"))
        result = subprocess.run([tool("spirv-val"), str(spv)], capture_output=True, text=True)
        if result.returncode != 0:
            failures.append(f"{source}: {result.stdout.strip()}")
    assert not failures


def test_nvptx_keeps_managed_variables(nvcc_ptx, tmp_path: Path) -> None:
    # nvcc's `.global .attribute(.managed)` (__managed__) must survive to the
    # NVPTX output, or the real driver gives a device-only address the host
    # cannot touch; ptxas then marks the symbols managed in the cubin.
    ptx_in = nvcc_ptx("programs/managed_memory.cu")
    assert ".global .attribute(.managed) .align 4 .b8 counts[16];" in ptx_in
    module = zmlir.compile_module(ptx_in, "nvptx:sm_90", filename="managed_memory.ptx")
    out = module.binary.decode()
    declared = {m.group(2): bool(m.group(1)) for m in
                re.finditer(r"^\.visible \.global (\.attribute\(\.managed\) )?.*? (\w+)(?:\[\d+\])?;",
                            out, re.MULTILINE)}
    assert declared == {"counts": True, "scale": True}
    if tool("ptxas") is None:
        pytest.skip("ptxas is not installed")
    ptx, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    ptx.write_bytes(module.binary)
    result = subprocess.run([tool("ptxas"), "-arch=sm_90", str(ptx), "-o", str(cubin)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    readelf = tool("llvm-readelf-22") or tool("llvm-readelf")
    if readelf is not None:
        symbols = subprocess.run([readelf, "-s", str(cubin)], capture_output=True, text=True,
                                 check=True).stdout
        managed = {line.split()[-1] for line in symbols.splitlines()
                   if "[<other: 0x4>]" in line}  # ptxas's mark of a managed symbol
        assert managed == {"counts", "scale"}


@pytest.mark.parametrize("target", ["spirv", "amdgpu:gfx1100"])
def test_managed_variables_are_plain_globals_elsewhere(target: str, nvcc_ptx) -> None:
    # Off NVPTX a managed variable is ordinary device memory (the runtime
    # makes it host-accessible); no NVVM annotation leaks into the LLVM IR.
    module = zmlir.compile_module(nvcc_ptx("programs/managed_memory.cu"), target)
    assert "ptx.managed" in module.stages["std-mlir"]
    llvm_ir = module.stages["llvm-ir"]
    assert "@counts = addrspace(1) global [16 x i8]" in llvm_ir
    assert "nvvm.annotations" not in llvm_ir


@pytest.mark.parametrize("decl, message", [
    (".global .attribute(.unified(1, 2)) .u32 x;",
     "v.ptx:4:1: error: unsupported variable attribute '.unified(1, 2)' on 'x'"),
    (".shared .attribute(.managed) .u32 x;",
     "v.ptx:4:1: error: '.attribute(.managed)' on 'x' in .shared (only .global variables "
     "can be managed)"),
])
def test_variable_attributes_are_never_dropped(decl: str, message: str) -> None:
    source = f".version 9.0\n.target sm_80\n.address_size 64\n{decl}\n.visible .entry k()\n{{\n\tret;\n}}\n"
    with pytest.raises(zmlir.CompileError) as info:
        zmlir.compile_module(source, "nvptx:sm_90", filename="v.ptx")
    assert str(info.value) == message


def test_each_stage_run_is_timed() -> None:
    # CompiledModule.seconds: what bench/jit_speed.py splits a compile by; the
    # stages not run (asm, beside the binary; those after the one asked for)
    # have no time.
    source = ".version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
    compiled = zmlir.compile_module(source, "spirv")
    assert list(compiled.seconds) == ["ptx-mlir", "std-mlir", "llvm-mlir", "llvm-ir", "bin"]
    assert all(seconds >= 0 for seconds in compiled.seconds.values())
    assert list(zmlir.compile_module(source, "spirv", emit="std-mlir").seconds) == [
        "ptx-mlir", "std-mlir"]
