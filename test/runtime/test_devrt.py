"""Our stand-in for NVIDIA's device runtime library (runtime/cuda/devrt.py,
cudadevrt.ptx): which link inputs are that library, what the stand-in
defines, and the error for a device runtime function it lacks. The
cooperative launch through it runs in test/cuda/driver_api/link_cudadevrt.cu."""

from __future__ import annotations

from pathlib import Path

import pytest

from zmlir.compiler import compile_module
from zmlir.frontend.link import LinkError, link_ptx
from zmlir.runtime.cuda import devrt

# NVIDIA's own, where a toolkit is installed: a host archive of one member.
NVIDIA_LIBRARY = Path("/usr/local/cuda/lib64/libcudadevrt.a")


def _archive(*members: tuple[str, bytes]) -> bytes:
    """A GNU `ar` archive: members with names over 15 characters go through
    the long-name table, as NVIDIA's cuda_device_runtime.o does."""
    long_names = b"".join(name.encode() + b"/\n" for name, _ in members if len(name) > 15)
    out = b"!<arch>\n"
    entries = [("/", b"\0\0\0\0")] + ([("//", long_names)] if long_names else [])
    offset = 0
    for name, body in members:
        if len(name) > 15:
            entries.append((f"/{offset}", body))
            offset += len(name) + 2
        else:
            entries.append((f"{name}/", body))
    for name, body in entries:
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{644:<8}{len(body):<10}`\n".encode() + body
        out += b"\n" if len(body) % 2 else b""
    return out


@pytest.mark.parametrize("label", ["libcudadevrt.a", "/opt/cuda/lib64/libcudadevrt.a",
                                   "cudadevrt.lib"])
def test_the_library_by_its_name(label: str) -> None:
    assert devrt.is_cudadevrt(label, b"anything")


def test_an_archive_of_device_runtime_objects_by_its_members() -> None:
    assert devrt.is_cudadevrt("copy.a", _archive(("cuda_device_runtime.o", b"\x7fELF...")))
    # Another archive, or one with other objects too, is not the library.
    assert not devrt.is_cudadevrt("libmine.a", _archive(("mine.o", b"\x7fELF")))
    assert not devrt.is_cudadevrt("mixed.a", _archive(("cuda_device_runtime.o", b"x"),
                                                      ("kernels_of_mine.o", b"y")))
    assert not devrt.is_cudadevrt("x.a", b"!<arch>\ngarbage that is no member header")
    assert not devrt.is_cudadevrt("code.ptx", b".version 8.0\n")


@pytest.mark.skipif(not NVIDIA_LIBRARY.exists(), reason="no CUDA toolkit's libcudadevrt.a")
def test_nvidia_library_by_its_contents() -> None:
    assert devrt.is_cudadevrt("renamed.a", NVIDIA_LIBRARY.read_bytes())


def test_the_stand_in_defines_grid_groups_and_device_side_launches() -> None:
    assert devrt.provided() == {"cudaCGGetIntrinsicHandle", "cudaCGSynchronize",
                                "cudaCGSynchronizeGrid", "cudaCGGetSize", "cudaCGGetRank",
                                "__cudaCDP2GetParameterBufferV2", "__cudaCDP2LaunchDeviceV2",
                                "cudaGetParameterBufferV2", "cudaLaunchDeviceV2",
                                "__cudaCDP2StreamCreateWithFlags", "__cudaCDP2StreamDestroy",
                                "__cudaCDP2GetLastError", "__cudaCDP2PeekAtLastError",
                                "__cudaCDP2MemcpyAsync", "cudaMemcpyAsync",
                                "__cudaCDP2GetErrorString", "cudaGetErrorString"}
    # It compiles for the CPU: its grid workspace and launch queue are the
    # module's variables.
    ir = str(compile_module(devrt.unit()[0], "spirv", emit="llvm-ir").stages["llvm-ir"])
    assert "__zmlir_grid_workspace" in ir and "__zmlir_device_launches" in ir


def test_nvidia_device_runtime_unit_is_told_from_a_program_unit() -> None:
    # What -rdc -lcudadevrt puts beside a program's units (compute_121 PTX
    # that defines the launch functions), and a program that declares them.
    library = (".version 9.0\n.target sm_121\n.address_size 64\n"
               ".visible .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2(\n"
               "\t.param .b64 p0,\n\t.param .b64 p1\n)\n{\n\tret;\n}\n")
    program = (".version 9.0\n.target sm_80\n.address_size 64\n"
               ".extern .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2\n"
               "(\n\t.param .b64 p0,\n\t.param .b64 p1\n)\n;\n")
    assert devrt.is_device_runtime_ptx(library)
    assert not devrt.is_device_runtime_ptx(program)
    assert devrt.is_device_runtime_ptx(devrt.unit()[0])  # ours takes its place


def test_another_device_runtime_function_is_named_as_unsupported() -> None:
    launcher = """.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 r) cudaDeviceSynchronize();
.visible .entry k()
{
\t.reg .b32 %r<2>;
\t{ .param .b32 r; call.uni (r), cudaDeviceSynchronize, (); ld.param.b32 %r1, [r]; }
\tret;
}
"""
    with pytest.raises(LinkError) as caught:
        link_ptx([(launcher, "launcher.ptx"), devrt.unit()])
    why = devrt.unsupported(str(caught.value))
    assert why is not None and "'cudaDeviceSynchronize'" in why
    assert "cudaCGSynchronize" in why and "dynamic parallelism" in why
    # An undefined function of the program's own is not the device runtime's.
    assert devrt.unsupported("Undefined reference to 'scale' in 'k.ptx'") is None
