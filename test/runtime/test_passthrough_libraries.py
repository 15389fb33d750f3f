"""What NVIDIA's libraries, running on our driver under the CUDA passthrough,
are told by it (docs/passthrough-libraries.md), over the stand-in NVIDIA driver
(test/cuda/driver_api/fake_nvidia_driver.c): the module loading mode NVIDIA's
driver answers, and, only when asked (ZMLIR_VENDOR_TABLES), the vendor's own
private table for one we do not know."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_SCRIPT = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    assert lib.cuInit(0) == 0
    mode = ctypes.c_int(-1)
    r = {"mode": [lib.cuModuleGetLoadingMode(ctypes.byref(mode)), mode.value]}
    table = ctypes.c_void_p()
    code = lib.cuGetExportTable(ctypes.byref(table),
                                bytes.fromhex("f8cff95121468b4eb9e2fb469e7c0dd9"))
    r["table"] = [code, ctypes.cast(table, ctypes.POINTER(ctypes.c_uint64))[1]
                  if table.value else 0]
    print(json.dumps(r))
""")


def _run(libdir: str, env: dict[str, str]) -> dict:
    result = subprocess.run([sys.executable, "-c", _SCRIPT, libdir], capture_output=True,
                            text=True, timeout=120, env={**os.environ, **env})
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture
def passthrough(fake_nvidia_driver: Path) -> dict[str, str]:
    env = {"ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    for name in ("CUDA_MODULE_LOADING", "ZMLIR_VENDOR_TABLES"):
        env[name] = ""
    return env


def test_passthrough_loads_lazily_as_nvidias_driver_says(libdir: str,
                                                         passthrough: dict[str, str]) -> None:
    # Told eager, the runtime in NVIDIA's cuBLAS loaded its ~2800 images at
    # once (H200); NVIDIA's driver answers lazy but where asked for eager.
    assert _run(libdir, passthrough)["mode"] == [0, 2]  # CU_MODULE_LAZY_LOADING
    eager = {**passthrough, "CUDA_MODULE_LOADING": "EAGER"}
    assert _run(libdir, eager)["mode"] == [0, 1]


def test_vendor_tables_only_when_asked(libdir: str, passthrough: dict[str, str]) -> None:
    assert _run(libdir, passthrough)["table"] == [1, 0]  # CUDA_ERROR_INVALID_VALUE
    asked = {**passthrough, "ZMLIR_VENDOR_TABLES": "1"}
    assert _run(libdir, asked)["table"] == [0, 0xFA4E]  # the stand-in's own


_CUFFT_ASKS = textwrap.dedent("""
    import ctypes, json, struct, sys, uuid
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    PTX = "\\n".join([".version 8.0", ".target sm_80", ".address_size 64",
                      ".visible .entry first() { ret; }", ".visible .entry second() { ret; }",
                      ""]).encode() + bytes(1)
    elf = bytes([0x7f]) + b"ELF" + bytes(60)
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0

    def table(text):
        address = ctypes.c_void_p()
        key = (ctypes.c_ubyte * 16)(*uuid.UUID(text).bytes)
        assert lib.cuGetExportTable(ctypes.byref(address), key) == 0
        slots = ctypes.c_uint64.from_address(address.value).value // 8
        return (ctypes.c_void_p * slots).from_address(address.value)

    r = {}
    # TOOLS_CONTEXT slot 4: a context's unique id (cuCtxGetId's), ours; the
    # others NVIDIA's under the passthrough (the stand-in's answer 0xfa4N).
    tools = table("21318c60-9714-3248-8ca6-41ff7324c8f2")
    context_id = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                                  ctypes.POINTER(ctypes.c_uint64))(tools[4])
    ids = [ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()]
    r["context_id"] = [context_id(ctx, ids[0]), context_id(None, ids[1]),
                       lib.cuCtxGetId(ctx, ctypes.byref(ids[2]))]
    r["same_id"] = ids[0].value == ids[1].value == ids[2].value != 0
    # A context that is not ours (cuBLAS asks of NVIDIA's, from TOOLS_TLS):
    # the vendor's slot answers it (the stand-in's 0xfa44), where there is one.
    r["foreign_id"] = context_id(ctypes.c_void_p(0x5E3D029F600), ids[0])
    r["tools_size"] = len(tools)
    # NVIDIA's cuBLASLt in each GEMM: the current context (TOOLS_TLS slot
    # 2), the driver's object for a stream (TOOLS_CONTEXT slot 51: the NULL
    # stream legacy or per thread) and its id (slot 39).
    current = ctypes.c_void_p()
    tls = table("42d85a81-23f6-cb47-8298-f6e78a3aecdc")
    r["current"] = [ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(tls[2])(
        ctypes.byref(current)), current.value == ctx.value]
    r["streams"] = []
    if len(tools) > 51:  # the passthrough's stand-in has 7 slots
        stream, obj, sid = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
        assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
        stream_object = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_void_p, ctypes.c_int)(tools[51])
        stream_id = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_void_p)(tools[39])
        for handle, per_thread in ((None, 0), (None, 1), (stream.value, 0)):
            code = stream_object(ctx, handle, ctypes.byref(obj), per_thread)
            r["streams"].append([code, stream_id(ctx, obj, ctypes.byref(sid)),
                                 obj.value == (handle or 1 + per_thread),
                                 sid.value == obj.value])
    r["tools_slot5"] = ctypes.CFUNCTYPE(ctypes.c_int)(tools[5])()
    # MODULE_FUNCTIONS slot 7: callback(user, function) for each function
    # of a module, and how many (cuFFT loads one kernel a module).
    functions = table("6e163fbe-b958-444d-835c-e182aff1991e")
    Callback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
    each = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, Callback,
                            ctypes.c_void_p)(functions[7])
    r["functions_size"] = len(functions)
    for kind, image in (("ptx", PTX), ("cubin", elf)):
        mod = ctypes.c_void_p()
        code = lib.cuModuleLoadData(ctypes.byref(mod), image)
        if code:
            r[kind] = code
            continue
        found = []
        count = each(ctx, mod, Callback(lambda user, f: found.append(f)), None)
        names = []
        for f in found:
            name = ctypes.c_char_p()
            assert lib.cuFuncGetName(ctypes.byref(name), ctypes.c_void_p(f)) == 0
            direct = ctypes.c_void_p()
            assert lib.cuModuleGetFunction(ctypes.byref(direct), mod, name.value) == 0
            names.append([name.value.decode(), direct.value == f])
        r[kind] = [count, sorted(names)]
    r["unknown_module"] = each(ctx, ctypes.c_void_p(0x7777), Callback(lambda u, f: None), None)
    # cuBLASLt's 1734dc26-...: it calls slot 4 without checking that the
    # table was given (NVIDIA's own under the passthrough where NVIDIA's
    # driver has it; the stand-in has none: ours, whose slot 4 refuses).
    query = table("1734dc26-800d-4745-8726-c0f1e7dd8bca")
    outs = [ctypes.c_void_p(), ctypes.c_void_p()]
    r["lt_query"] = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(query[4])(
        ctypes.byref(outs[0]), ctypes.byref(outs[1]))
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_what_nvidias_cufft_asks(libdir: str, backend: str, fake_nvidia_driver: Path) -> None:
    # NVIDIA's cuFFT 12 fails its first plan (CUFFT_INTERNAL_ERROR) unless
    # the driver answers the table 6e163fbe-...: it finds the function of
    # each kernel module it loads with slot 7; then it asks the current
    # context's id (TOOLS_CONTEXT slot 4). Both ours, with our handles, on
    # every backend; under the passthrough the rest of TOOLS_CONTEXT is
    # NVIDIA's (docs/passthrough-libraries.md).
    env = {"ZMLIR_BACKEND": backend, "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    r = subprocess.run([sys.executable, "-c", _CUFFT_ASKS, libdir], capture_output=True,
                       text=True, timeout=300, env={**os.environ, **env})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    assert got["context_id"] == [0, 0, 0] and got["same_id"], got
    assert got["functions_size"] == 64 and got["unknown_module"] == 0, got
    assert got["lt_query"] == 801, got  # CUDA_ERROR_NOT_SUPPORTED
    if backend == "opencl":  # the stand-in has none of these: ours
        assert got["current"] == [0, True], got
        assert got["streams"] == [[0, 0, True, True]] * 3, got
    if backend == "cuda":
        assert got["tools_size"] == 7 and got["tools_slot5"] == 0xFA45, got  # the stand-in's
        assert got["foreign_id"] == 0xFA44, got
        assert got["cubin"] == [1, [["add_scalar", True]]], got
    else:
        assert got["tools_size"] == 95 and got["tools_slot5"] == 801, got  # NOT_SUPPORTED
        assert got["foreign_id"] == 400, got  # cuCtxGetId: CUDA_ERROR_INVALID_HANDLE
        assert got["ptx"] == [2, [["first", True], ["second", True]]], got
        assert got["cubin"] == 209, got  # CUDA_ERROR_NO_BINARY_FOR_GPU


_STREAM_TO_VENDOR_SLOT = textwrap.dedent("""
    import ctypes, json, sys, uuid
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    address = ctypes.c_void_p()
    key = (ctypes.c_ubyte * 16)(*uuid.UUID("21318c60-9714-3248-8ca6-41ff7324c8f2").bytes)
    assert lib.cuGetExportTable(ctypes.byref(address), key) == 0
    slot6 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(
        ctypes.c_void_p.from_address(address.value + 6 * 8).value)
    stream, other = ctypes.c_void_p(), ctypes.c_void_p()
    r = {"create": [lib.cuStreamCreate(ctypes.byref(stream), 1),  # CU_STREAM_NON_BLOCKING
                    lib.cuStreamCreateWithPriority(ctypes.byref(other), 0, -1)]}
    r["vendor_reads"] = [slot6(stream), slot6(other)]
    flags, priority, sid = ctypes.c_uint(), ctypes.c_int(), ctypes.c_ulonglong()
    r["ours"] = [lib.cuStreamGetFlags(stream, ctypes.byref(flags)), flags.value,
                 lib.cuStreamGetPriority(other, ctypes.byref(priority)), priority.value,
                 lib.cuStreamQuery(stream), lib.cuStreamSynchronize(stream),
                 lib.cuStreamGetId(stream, ctypes.byref(sid)), sid.value != 0]
    r["destroy"] = [lib.cuStreamDestroy_v2(stream), lib.cuStreamDestroy_v2(other),
                    lib.cuStreamDestroy_v2(stream)]
    print(json.dumps(r))
""")


@pytest.mark.parametrize("vendor", ["1", "0"])
def test_streams_are_nvidias_under_the_passthrough(libdir: str, passthrough: dict[str, str],
                                                   vendor: str) -> None:
    # NVIDIA's cuBLAS hands the stream of cublasSetStream to slots of
    # NVIDIA's private tables (TOOLS_CONTEXT is NVIDIA's under the
    # passthrough), which read it as NVIDIA's: with our own small-integer
    # handles the level-1 reductions, trsv, trsm and larger GEMMs crashed on
    # an H200 (SIGSEGV). So a stream created there is one of the vendor's
    # too (the stand-in's TOOLS_CONTEXT slot 6 accepts only its own), still
    # ours to every call of our driver; ZMLIR_VENDOR_STREAMS=0 keeps ours.
    env = {**passthrough, "ZMLIR_VENDOR_STREAMS": vendor}
    r = subprocess.run([sys.executable, "-c", _STREAM_TO_VENDOR_SLOT, libdir],
                       capture_output=True, text=True, timeout=120, env={**os.environ, **env})
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    assert got["create"] == [0, 0], got
    assert got["vendor_reads"] == ([0, 0] if vendor == "1" else [400, 400]), got
    assert got["ours"] == [0, 1, 0, -1, 0, 0, 0, True], got
    assert got["destroy"] == [0, 0, 400], got  # a destroyed stream: CUDA_ERROR_INVALID_HANDLE
