"""cuDeviceGetAttribute, cuCtxGetCurrent, cuCtxGetDevice(_v2), cuKernelGetFunction and unchanged
shared-memory opt-ins (cuFuncSetAttribute) answered by the C fast path
(fastpath.c) once the Python driver has answered an attribute, and
cuStreamSynchronize / cuCtxSynchronize(_v2) under the passthrough: the same
values and errors as the Python path (ZMLIR_FAST_LAUNCH=0), on the CPU
backend and under the passthrough (a stand-in NVIDIA driver)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

_PROBE = textwrap.dedent("""
    import ctypes, json, os, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    lib.zmlir_fast_queries.restype = ctypes.c_ulonglong
    r = {}
    v = ctypes.c_int(-7)
    r["before_init"] = [lib.cuDeviceGetAttribute(ctypes.byref(v), 75, 0),
                        lib.cuCtxGetDevice(ctypes.byref(v))]
    assert lib.cuInit(0) == 0
    r["no_context"] = [lib.cuCtxGetDevice(ctypes.byref(v)),
                       lib.cuCtxGetDevice_v2(ctypes.byref(v), None)]
    def attributes():
        out = []
        for attrib in range(0, 150):
            v.value = -7
            out.append([lib.cuDeviceGetAttribute(ctypes.byref(v), attrib, 0), v.value])
        return out
    first = attributes()
    before = lib.zmlir_fast_queries()
    r["attributes"] = attributes()
    r["attributes_fast"] = lib.zmlir_fast_queries() - before
    assert r["attributes"] == first
    r["other_device"] = lib.cuDeviceGetAttribute(ctypes.byref(v), 75, 1)
    r["null"] = lib.cuDeviceGetAttribute(None, 75, 0)
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    before = lib.zmlir_fast_queries()
    d = ctypes.c_int(-7)
    r["device"] = [lib.cuCtxGetDevice(ctypes.byref(d)), d.value]
    d.value = -7
    r["device_v2"] = [lib.cuCtxGetDevice_v2(ctypes.byref(d), None), d.value]
    d.value = -7
    r["device_v2_ctx"] = [lib.cuCtxGetDevice_v2(ctypes.byref(d), ctx), d.value]
    r["device_null"] = lib.cuCtxGetDevice(None)
    r["device_fast"] = lib.zmlir_fast_queries() - before
    read, write = os.pipe()
    if os.fork() == 0:  # a forked child has no driver (NVIDIA's: NOT_INITIALIZED)
        codes = [lib.cuDeviceGetAttribute(ctypes.byref(v), 16, 0),
                 lib.cuCtxGetDevice(ctypes.byref(d))]
        os.write(write, json.dumps(codes).encode())
        os._exit(0)
    os.close(write)
    r["forked"] = json.loads(os.read(read, 100))
    os.wait()
    print(json.dumps(r))
""")


def _probe(libdir: str, **env: str) -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir], capture_output=True,
                            text=True, timeout=300, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_queries_take_the_c_path_with_the_same_answers(libdir: str, backend: str,
                                                       fake_nvidia_driver: Path) -> None:
    env = {"ZMLIR_BACKEND": backend}
    if backend == "cuda":
        env["ZMLIR_CUDA_DRIVER"] = str(fake_nvidia_driver)
    fast = _probe(libdir, **env)
    python = _probe(libdir, **env, ZMLIR_FAST_LAUNCH="0")
    # Every valid attribute (1 to 147) a second time: from C.
    assert fast["attributes_fast"] == 147 and python["attributes_fast"] == 0
    assert fast["device_fast"] == 2 and python["device_fast"] == 0  # cuCtxGetDevice(_v2, NULL)
    assert fast["attributes"][75] == [0, 9 if backend == "cuda" else 8]  # COMPUTE_CAPABILITY_MAJOR
    assert fast["attributes"][0][0] == 1 and fast["attributes"][148][0] == 1  # INVALID_VALUE
    assert fast["before_init"] == [3, 3]  # CUDA_ERROR_NOT_INITIALIZED
    assert fast["forked"] == [3, 3]
    assert fast["device"] == [0, 0] and fast["device_v2"] == [0, 0]
    assert fast["other_device"] == 101 and fast["null"] == 1  # INVALID_DEVICE, INVALID_VALUE
    for answers in (fast, python):
        answers.pop("attributes_fast"), answers.pop("device_fast")
    assert fast == python


_SYNC = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    lib.zmlir_fast_queries.restype = ctypes.c_ulonglong
    r = {"fast": {}}
    def counted(name, call):
        before = lib.zmlir_fast_queries()
        r[name] = call()
        r["fast"][name] = lib.zmlir_fast_queries() - before
    assert lib.cuInit(0) == 0
    counted("no_context", lambda: lib.cuCtxSynchronize())
    ctx = ctypes.c_void_p()
    other = ctypes.c_void_p()  # made current as it is created
    assert lib.cuCtxCreate_v2(ctypes.byref(other), 0, 0) == 0
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    stream = ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
    counted("context", lambda: lib.cuCtxSynchronize())
    counted("context_v2", lambda: lib.cuCtxSynchronize_v2(None))
    counted("context_v2_given", lambda: lib.cuCtxSynchronize_v2(ctx))  # cudart 13's
    counted("context_v2_unknown", lambda: lib.cuCtxSynchronize_v2(ctypes.c_void_p(0x999)))
    counted("context_v2_not_current", lambda: lib.cuCtxSynchronize_v2(other))
    counted("null_stream", lambda: lib.cuStreamSynchronize(None))
    counted("stream", lambda: lib.cuStreamSynchronize(stream))
    counted("unknown_stream", lambda: lib.cuStreamSynchronize(ctypes.c_void_p(0x999)))
    print(json.dumps(r))
""")


def test_passthrough_synchronizations_take_the_c_path(libdir: str,
                                                      fake_nvidia_driver: Path) -> None:
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}

    def run(**extra: str) -> dict[str, Any]:
        result = subprocess.run([sys.executable, "-c", _SYNC, libdir], capture_output=True,
                                text=True, timeout=300, env={**env, **extra})
        assert result.returncode == 0, result.stderr
        assert "internal error" not in result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    fast, python = run(), run(ZMLIR_FAST_LAUNCH="0")
    assert fast["fast"] == {"no_context": 0, "context": 1, "context_v2": 1,
                            "context_v2_given": 1, "context_v2_unknown": 0,
                            "context_v2_not_current": 0, "null_stream": 1, "stream": 1,
                            "unknown_stream": 0}
    assert set(python.pop("fast").values()) == {0}
    fast.pop("fast")
    assert fast == python
    assert fast["no_context"] == 201 and fast["unknown_stream"] == 400
    assert fast["context_v2_unknown"] != 0
    assert all(fast[k] == 0 for k in ("context", "context_v2", "context_v2_given",
                                      "context_v2_not_current", "null_stream", "stream"))
    # NVIDIA's synchronisation failing (a kernel's fault): the Python path's answer.
    faulted, faulted_python = run(FAKE_SYNC_RESULT="700"), run(FAKE_SYNC_RESULT="700",
                                                               ZMLIR_FAST_LAUNCH="0")
    assert set(faulted.pop("fast").values()) == {0}
    faulted_python.pop("fast")
    assert faulted == faulted_python
    assert faulted["context"] == 700 and faulted["stream"] == 700


# A created stream's synchronisation under the passthrough is NVIDIA's of the
# stream alone, never the context's (another stream's kernel may wait for the
# host): in C while no call of the Python driver has ended since the last
# synchronisation of the context there or the stream's last one in Python,
# else in the Python driver, which first waits for the event after its last
# work on NVIDIA's NULL stream (what it does for a stream may be there).
_STREAM_SYNC = textwrap.dedent("""
    import ctypes, json, os, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    fake = ctypes.CDLL(os.environ["ZMLIR_CUDA_DRIVER"])
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    stream = ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
    lib.zmlir_fast_queries.restype = ctypes.c_ulonglong
    def asked(call):
        # the stand-in's synchronisations during `call`: [context, stream],
        # and whether it took the C path
        before, after = (ctypes.c_ulonglong * 2)(), (ctypes.c_ulonglong * 2)()
        fast = lib.zmlir_fast_queries()
        fake.fake_synchronizations(before)
        assert call() == 0
        fake.fake_synchronizations(after)
        return [after[0] - before[0], after[1] - before[1], lib.zmlir_fast_queries() - fast]
    lo, hi = ctypes.c_int(), ctypes.c_int()
    r = {}
    r["stream_first"] = asked(lambda: lib.cuStreamSynchronize(stream))
    r["stream_again"] = asked(lambda: lib.cuStreamSynchronize(stream))
    r["python_call"] = asked(lambda: lib.cuCtxGetStreamPriorityRange(ctypes.byref(lo),
                                                                     ctypes.byref(hi)))
    r["stream_after_python"] = asked(lambda: lib.cuStreamSynchronize(stream))
    r["stream_then"] = asked(lambda: lib.cuStreamSynchronize(stream))
    r["null_stream"] = asked(lambda: lib.cuStreamSynchronize(None))
    r["context"] = asked(lambda: lib.cuCtxSynchronize())
    r["stream_after_context"] = asked(lambda: lib.cuStreamSynchronize(stream))
    print(json.dumps(r))
""")


def test_a_created_streams_synchronization_is_the_streams(libdir: str,
                                                          fake_nvidia_driver: Path) -> None:
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}

    def run(**extra: str) -> dict[str, Any]:
        result = subprocess.run([sys.executable, "-c", _STREAM_SYNC, libdir],
                                capture_output=True, text=True, timeout=300,
                                env={**env, **extra})
        assert result.returncode == 0, result.stderr
        assert "internal error" not in result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    context, stream, python = [1, 0, 1], [0, 1, 1], [0, 1, 0]
    streams = {"stream_first": python,  # after the Python calls that made it
               "stream_again": stream,  # none since the last in Python
               "python_call": [0, 0, 0],
               "stream_after_python": python, "stream_then": stream,
               "null_stream": context, "context": context,
               "stream_after_context": stream}
    assert run() == streams
    # The Python path's own, the same synchronisations.
    assert run(ZMLIR_FAST_LAUNCH="0") == {
        call: [*asked[:2], 0] for call, asked in streams.items()}


def _backend_env(backend: str, fake_nvidia_driver: Path) -> dict[str, str]:
    env = {**os.environ, "ZMLIR_BACKEND": backend}
    if backend == "cuda":
        env["ZMLIR_CUDA_DRIVER"] = str(fake_nvidia_driver)
    return env


def _fast_and_python(probe: str, libdir: str, env: dict[str, str]) -> tuple[dict[str, Any],
                                                                             dict[str, Any]]:
    """`probe`'s answers on the C path and on the Python path (ZMLIR_FAST_LAUNCH=0),
    each less its "fast" counts, which the Python path's must all be 0."""
    support = str(Path(__file__).resolve().parents[1])

    def run(**extra: str) -> dict[str, Any]:
        result = subprocess.run([sys.executable, "-c", probe, libdir, support],
                                capture_output=True, text=True, timeout=300,
                                env={**env, **extra})
        assert result.returncode == 0, result.stderr
        assert "internal error" not in result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    fast, python = run(), run(ZMLIR_FAST_LAUNCH="0")
    assert set(python.pop("fast").values()) == {0}
    return fast, python


# The probes' start: our driver initialised, the primary context current.
_IN_CONTEXT = textwrap.dedent("""
    import ctypes, json, sys
    sys.path.insert(0, sys.argv[2])
    from support import ADD_SCALAR_PTX
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    lib.zmlir_fast_queries.restype = ctypes.c_ulonglong
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
""")

_OPT_IN = _IN_CONTEXT + textwrap.dedent("""
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(module), ADD_SCALAR_PTX + b"\\0") == 0
    assert lib.cuModuleGetFunction(ctypes.byref(fn), module, b"add_scalar") == 0
    r = {"fast": {}}
    def counted(name, call):
        before = lib.zmlir_fast_queries()
        r[name] = call()
        r["fast"][name] = lib.zmlir_fast_queries() - before
    def get(attrib):
        v = ctypes.c_int(-7)
        return [lib.cuFuncGetAttribute(ctypes.byref(v), attrib, fn), v.value]
    default = get(8)[1]
    # MAX_DYNAMIC_SHARED_SIZE_BYTES as it is (NVIDIA's default), changed, as it is again.
    counted("default", lambda: lib.cuFuncSetAttribute(fn, 8, default))
    counted("raise", lambda: lib.cuFuncSetAttribute(fn, 8, 65536))
    counted("again", lambda: lib.cuFuncSetAttribute(fn, 8, 65536))
    counted("kernel_again", lambda: lib.cuKernelSetAttribute(8, 65536, fn, 0))
    counted("kernel_other_device", lambda: lib.cuKernelSetAttribute(8, 65536, fn, 1))
    r["value"] = get(8)
    out = ctypes.c_void_p()
    counted("kernel_function", lambda: [lib.cuKernelGetFunction(ctypes.byref(out), fn),
                                        out.value == fn.value])
    counted("unknown_kernel", lambda: lib.cuKernelGetFunction(ctypes.byref(out),
                                                              ctypes.c_void_p(0x999)))
    counted("too_large", lambda: lib.cuFuncSetAttribute(fn, 8, 1 << 30))
    counted("negative", lambda: lib.cuFuncSetAttribute(fn, 8, -1))
    counted("carveout", lambda: lib.cuFuncSetAttribute(fn, 9, 50))
    counted("unknown_function", lambda: lib.cuFuncSetAttribute(ctypes.c_void_p(0x999), 8, 0))
    r["after"] = [get(8), get(9)]
    # A launch using the window opted in to (64 KiB dynamic), then after lowering it.
    p = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(p), 4096) == 0
    v = ctypes.c_uint32(1)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(p), ctypes.addressof(v))
    r["launch_64k"] = lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 65536, None, params, None)
    counted("lower", lambda: lib.cuFuncSetAttribute(fn, 8, 1024))
    r["launch_64k_lowered"] = lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 65536, None, params,
                                                 None)
    r["sync"] = lib.cuCtxSynchronize()
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_unchanged_shared_memory_opt_in_takes_the_c_path(libdir: str, backend: str,
                                                         fake_nvidia_driver: Path) -> None:
    fast, python = _fast_and_python(_OPT_IN, libdir, _backend_env(backend, fake_nvidia_driver))
    # The calls that change nothing are C's, and under the passthrough a new
    # value within the device's limit too (NVIDIA's function opted in there);
    # the answers are the Python path's.
    changes = 1 if backend == "cuda" else 0
    assert fast["fast"] == {"default": 1, "raise": changes, "again": 1, "kernel_again": 1,
                            "kernel_other_device": 0, "too_large": 0, "negative": 0,
                            "carveout": 0, "unknown_function": 0, "lower": changes,
                            "kernel_function": 1, "unknown_kernel": 0}
    fast.pop("fast")
    assert fast == python
    assert fast["value"] == [0, 65536] and fast["after"] == [[0, 65536], [0, 50]]
    assert fast["too_large"] == 1 and fast["negative"] == 1  # CUDA_ERROR_INVALID_VALUE
    assert fast["unknown_function"] == 400  # CUDA_ERROR_INVALID_HANDLE
    assert fast["kernel_function"] == [0, True] and fast["unknown_kernel"] == 400
    assert fast["launch_64k"] == 0 and fast["launch_64k_lowered"] == 1
    assert fast["sync"] == 0


_LIBRARY = _IN_CONTEXT + textwrap.dedent("""
    library = ctypes.c_void_p()
    assert lib.cuLibraryLoadData(ctypes.byref(library), ADD_SCALAR_PTX + b"\\0", None, None, 0,
                                 None, None, 0) == 0
    r = {"fast": {}}
    def counted(name, call):
        before = lib.zmlir_fast_queries()
        r[name] = call()
        r["fast"][name] = lib.zmlir_fast_queries() - before
    kernel, again = ctypes.c_void_p(), ctypes.c_void_p()
    counted("kernel", lambda: lib.cuLibraryGetKernel(ctypes.byref(kernel), library,
                                                     b"add_scalar"))
    counted("again", lambda: lib.cuLibraryGetKernel(ctypes.byref(again), library,
                                                    b"add_scalar"))
    r["same"] = kernel.value == again.value != None
    counted("unknown_name", lambda: lib.cuLibraryGetKernel(ctypes.byref(again), library,
                                                           b"no_such_kernel"))
    counted("null_name", lambda: lib.cuLibraryGetKernel(ctypes.byref(again), library, None))
    func = ctypes.c_void_p()
    r["function"] = [lib.cuKernelGetFunction(ctypes.byref(func), kernel),
                     func.value == kernel.value]
    r["unload"] = lib.cuLibraryUnload(library)
    counted("after_unload", lambda: lib.cuLibraryGetKernel(ctypes.byref(again), library,
                                                           b"add_scalar"))
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_a_librarys_kernels_take_the_c_path(libdir: str, backend: str,
                                            fake_nvidia_driver: Path) -> None:
    """cuLibraryGetKernel of a library we compiled: its kernels are made as it
    loads and answered in C, with the Python path's answers."""
    fast, python = _fast_and_python(_LIBRARY, libdir, _backend_env(backend, fake_nvidia_driver))
    assert fast.pop("fast") == {"kernel": 1, "again": 1, "unknown_name": 0, "null_name": 0,
                                "after_unload": 0}
    assert fast == python
    assert fast["kernel"] == 0 and fast["same"] and fast["function"] == [0, True]
    assert fast["unknown_name"] == 500 and fast["null_name"] == 1  # NOT_FOUND, INVALID_VALUE
    assert fast["unload"] == 0 and fast["after_unload"] == 400  # INVALID_HANDLE


_PRINTS = _IN_CONTEXT + textwrap.dedent(r"""
    PTX = b'''
    .version 8.0
    .target sm_80
    .address_size 64
    .extern .func (.param .b32 func_retval0) vprintf (.param .b64 p0, .param .b64 p1);
    .global .align 1 .b8 hello[10] = {104, 101, 108, 108, 111, 32, 37, 100, 10, 0};
    .visible .entry say(.param .u32 n)
    {
      .reg .b32 %r<3>; .reg .pred %p<2>; .reg .b64 %rd<5>;
      .local .align 4 .b8 __local_depot0[4];
      ld.param.u32 %r1, [n];
      mov.u32 %r2, %tid.x;
      setp.ne.s32 %p1, %r2, %r1;
      @%p1 bra DONE;
      mov.u64 %rd1, hello;
      cvta.global.u64 %rd2, %rd1;
      mov.u64 %rd3, __local_depot0;
      cvta.local.u64 %rd4, %rd3;
      st.local.u32 [%rd3], %r1;
      {
      .param .b64 param0; st.param.b64 [param0], %rd2;
      .param .b64 param1; st.param.b64 [param1], %rd4;
      .param .b32 retval0;
      call.uni (retval0), vprintf, (param0, param1);
      }
    DONE:
      ret;
    }
    '''
    lib.zmlir_fast_launches.restype = ctypes.c_ulonglong
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(module), PTX + b"\0") == 0
    assert lib.cuModuleGetFunction(ctypes.byref(fn), module, b"say") == 0
    r = {"fast": []}
    for n in (1000, 1000, 7, 1000):  # thread 7 prints "hello 7"
        value = ctypes.c_uint32(n)
        params = (ctypes.c_void_p * 1)(ctypes.addressof(value))
        before = lib.zmlir_fast_launches()
        assert lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, params, None) == 0
        r["fast"].append(lib.zmlir_fast_launches() - before)
    r["sync"] = lib.cuCtxSynchronize()
    # cuCtxSetLimit(PRINTF_FIFO_SIZE) after a printf kernel ran: NVIDIA's refusal.
    r["fifo"] = lib.cuCtxSetLimit(1, 1 << 20)
    sys.stdout.flush()
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_printf_kernels_take_the_c_path_once_the_fifo_is_fixed(libdir: str, backend: str,
                                                              fake_nvidia_driver: Path) -> None:
    """A kernel that calls printf (or assert, as llm.c's kernels do) launches
    through Python until the first launch has fixed the printf FIFO's size,
    then through C; its output still comes at the synchronization."""
    support = str(Path(__file__).resolve().parents[1])
    result = subprocess.run([sys.executable, "-c", _PRINTS, libdir, support], capture_output=True,
                            text=True, timeout=300, env=_backend_env(backend, fake_nvidia_driver))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    r = json.loads(lines[-1])
    assert r["fast"] == [0, 1, 1, 1] and r["sync"] == 0
    assert r["fifo"] == 1  # CUDA_ERROR_INVALID_VALUE: the size is fixed
    if backend == "opencl":  # the stand-in NVIDIA driver runs no kernel
        assert lines[:-1] == ["hello 7"]


_CONTEXT_ID = _IN_CONTEXT + textwrap.dedent("""
    import uuid
    address = ctypes.c_void_p()
    key = (ctypes.c_ubyte * 16)(*uuid.UUID("21318c60-9714-3248-8ca6-41ff7324c8f2").bytes)
    assert lib.cuGetExportTable(ctypes.byref(address), key) == 0
    slot = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64))(
        ctypes.c_void_p.from_address(address.value + 4 * 8).value)
    r = {"fast": {}}
    def counted(name, ctx, out=True):
        value = ctypes.c_uint64(7)
        before = lib.zmlir_fast_queries()
        r[name] = [slot(ctx, ctypes.byref(value) if out else None), value.value]
        r["fast"][name] = lib.zmlir_fast_queries() - before
    # cuBLASLt's asks in each GEMM: NVIDIA's context (from NVIDIA's TOOLS_TLS),
    # the first through Python, which finds it is no context of ours.
    foreign = ctypes.c_void_p(0x5E3D029F600)
    for n in range(3):
        counted(f"foreign{n}", foreign)
    counted("current", ctx)
    counted("null", None)
    counted("null_out", ctx, out=False)
    counted("unknown_small", ctypes.c_void_p(0x1008))
    stream = ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
    counted("stream", stream)
    other = ctypes.c_void_p()
    assert lib.cuCtxCreate_v2(ctypes.byref(other), 0, 0) == 0
    counted("created_current", other)
    counted("created_null", None)
    counted("primary_not_current", ctx)
    r["ids_differ"] = r["created_current"][1] != r["primary_not_current"][1]
    assert lib.cuCtxDestroy_v2(other) == 0
    counted("destroyed", other)
    counted("after_destroy_null", None)
    counted("foreign_again", foreign)
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_context_ids_take_the_c_path(libdir: str, backend: str,
                                     fake_nvidia_driver: Path) -> None:
    """TOOLS_CONTEXT slot 4 (a context's unique id), which NVIDIA's cuBLASLt
    asks in each GEMM of NVIDIA's own context: the current
    context's id, and under the passthrough NVIDIA's answer for NVIDIA's
    contexts once the Python body found one, from C; every answer the
    Python path's."""
    fast, python = _fast_and_python(_CONTEXT_ID, libdir, _backend_env(backend, fake_nvidia_driver))
    vendor = backend == "cuda"  # the stand-in's TOOLS_CONTEXT: its slot 4 answers 0xfa44
    assert fast.pop("fast") == {
        "foreign0": 0, "foreign1": int(vendor), "foreign2": int(vendor), "current": 1,
        "null": 1, "null_out": 0, "unknown_small": 0, "stream": 0, "created_current": 1,
        "created_null": 1, "primary_not_current": 0, "destroyed": 0,
        "after_destroy_null": 1, "foreign_again": int(vendor)}
    assert fast == python
    assert fast["current"] == fast["null"] == [0, fast["current"][1]] and fast["current"][1]
    assert fast["ids_differ"] and fast["created_null"] == fast["created_current"]
    assert fast["foreign0"][0] == (0xFA44 if vendor else 400)  # INVALID_HANDLE: ours
    assert fast["null_out"][0] == 1  # CUDA_ERROR_INVALID_VALUE
    assert fast["after_destroy_null"] == fast["current"]  # the primary context again


_CURRENT = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    lib.zmlir_fast_queries.restype = ctypes.c_ulonglong
    r = {"fast": {}}
    def counted(name):
        out = ctypes.c_void_p(0x5)
        before = lib.zmlir_fast_queries()
        code = lib.cuCtxGetCurrent(ctypes.byref(out))
        r["fast"][name] = lib.zmlir_fast_queries() - before
        r[name] = [code, out.value]
    assert lib.cuInit(0) == 0
    major = ctypes.c_int()  # as cudart first asks: the process is then the fast path's
    assert lib.cuDeviceGetAttribute(ctypes.byref(major), 75, 0) == 0
    counted("none")
    ctx, other = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    counted("primary")
    assert lib.cuCtxCreate_v2(ctypes.byref(other), 0, 0) == 0
    counted("created")
    assert lib.cuCtxPopCurrent_v2(None) == 0
    counted("popped")
    assert lib.cuCtxPushCurrent_v2(other) == 0
    assert lib.cuCtxDestroy_v2(other) == 0
    counted("destroyed")
    r["null_out"] = lib.cuCtxGetCurrent(None)
    r["ids"] = [ctx.value, other.value]
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_the_current_context_takes_the_c_path(libdir: str, backend: str,
                                              fake_nvidia_driver: Path) -> None:
    """cuCtxGetCurrent, which cudart asks around many calls: from C while
    the fast path knows the calling thread's context (in the process that
    answered an attribute), Python's answer otherwise (none yet, one
    destroyed), the same answers either way."""
    fast, python = _fast_and_python(_CURRENT, libdir, _backend_env(backend, fake_nvidia_driver))
    assert fast.pop("fast") == {"none": 0, "primary": 1, "created": 1, "popped": 1,
                                "destroyed": 1}

    def named(run: dict[str, Any]) -> dict[str, Any]:  # each run's handles by name
        names = {run["ids"][0]: "primary", run["ids"][1]: "created", None: None}
        return {k: [v[0], names.get(v[1], v[1])] if isinstance(v, list) and k != "ids" else v
                for k, v in run.items() if k != "ids"}

    assert named(fast) == named(python) == {
        "none": [0, None], "primary": [0, "primary"], "created": [0, "created"],
        "popped": [0, "primary"],
        "destroyed": [0, "primary"],  # destroying the current context pops it
        "null_out": 1}  # CUDA_ERROR_INVALID_VALUE


_LAUNCH_EX = _IN_CONTEXT + textwrap.dedent("""
    lib.zmlir_fast_launches.restype = ctypes.c_ulonglong
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(module), ADD_SCALAR_PTX + b"\\0") == 0
    assert lib.cuModuleGetFunction(ctypes.byref(fn), module, b"add_scalar") == 0
    p = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(p), 4096) == 0
    assert lib.cuMemsetD8_v2(p, 0, 4096) == 0

    class Attribute(ctypes.Structure):
        _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4),
                    ("value", ctypes.c_uint * 16)]

    class Config(ctypes.Structure):
        _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                    ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p),
                    ("attrs", ctypes.POINTER(Attribute)), ("count", ctypes.c_uint)]

    def config(grid, attributes):
        attrs = (Attribute * max(len(attributes), 1))()
        for i, (ident, value) in enumerate(attributes):
            attrs[i].id = ident
            attrs[i].value[:len(value)] = value
        return Config((grid, 1, 1), (32, 1, 1), 0, None, attrs, len(attributes))

    v = ctypes.c_uint32(1)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(p), ctypes.addressof(v))

    def extra(size, value=1):
        buffer = (ctypes.c_ubyte * 16)()
        ctypes.memmove(buffer, ctypes.byref(p), 8)
        ctypes.memmove(ctypes.addressof(buffer) + 8, ctypes.byref(ctypes.c_uint32(value)), 4)
        length = ctypes.c_size_t(size)
        keep.extend([buffer, length])
        return (ctypes.c_void_p * 5)(1, ctypes.addressof(buffer), 2, ctypes.addressof(length), 0)

    keep = []
    r = {"fast": {}}
    def counted(name, call):
        before = lib.zmlir_fast_launches()
        r[name] = call()
        r["fast"][name] = lib.zmlir_fast_launches() - before
    ex = lambda c, args=params, packed=None: lib.cuLaunchKernelEx(ctypes.byref(c), fn, args, packed)
    counted("plain", lambda: ex(config(1, [])))
    # cuBLAS's: hints (programmatic stream serialization, priority) and a cluster.
    counted("hints", lambda: ex(config(1, [(6, [1]), (8, [0]), (4, [1, 1, 1]), (2, [0])])))
    counted("cluster", lambda: ex(config(2, [(4, [2, 1, 1]), (6, [1])])))
    counted("cluster_uneven", lambda: ex(config(3, [(4, [2, 1, 1])])))
    counted("cooperative", lambda: ex(config(1, [(2, [1])])))
    counted("cooperative_unset", lambda: ex(config(1, [(2, [1]), (2, [0])])))
    counted("preferred_cluster", lambda: ex(config(2, [(11, [2, 1, 1])])))
    counted("unknown_attribute", lambda: ex(config(1, [(12, [1])])))
    # Parameters packed in `extra`, as cuBLAS launches its kernels.
    counted("extra", lambda: ex(config(1, []), None, extra(16)))
    counted("extra_cluster", lambda: ex(config(2, [(4, [2, 1, 1])]), None, extra(12)))
    counted("extra_short", lambda: ex(config(1, []), None, extra(8)))
    counted("extra_and_params", lambda: ex(config(1, []), params, extra(16)))
    counted("launch_extra", lambda: lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None,
                                                       extra(16, 5)))
    # A struct of 300 bytes by value (NVIDIA's cuBLAS kernels take one such).
    BIG = (b".version 8.0\\n.target sm_80\\n.address_size 64\\n"
           b".visible .entry big(.param .align 8 .b8 s[300]) { ret; }\\n\\0")
    big_module, big = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(big_module), BIG) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(big), big_module, b"big") == 0
    struct = (ctypes.c_ubyte * 300)()
    big_params = (ctypes.c_void_p * 1)(ctypes.addressof(struct))
    counted("big_struct", lambda: lib.cuLaunchKernel(big, 1, 1, 1, 32, 1, 1, 0, None,
                                                     big_params, None))
    r["sync"] = lib.cuCtxSynchronize()
    out = (ctypes.c_uint32 * 32)()
    assert lib.cuMemcpyDtoH_v2(out, p, 128) == 0
    r["out"] = list(out)
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_launches_with_attributes_and_extra_take_the_c_path(libdir: str, backend: str,
                                                            fake_nvidia_driver: Path) -> None:
    """NVIDIA's cuBLAS launches its sm_90 kernels with cuLaunchKernelEx, a
    cluster, hints and its parameters packed in `extra`: under the
    passthrough those go to NVIDIA's driver from C, with the Python path's
    answers; what C does not take (a cooperative launch, an uneven grid of
    clusters, a short `extra`) the Python path answers as before."""
    fast, python = _fast_and_python(_LAUNCH_EX, libdir, _backend_env(backend, fake_nvidia_driver))
    cuda = int(backend == "cuda")
    assert fast.pop("fast") == {
        "plain": 1, "hints": 1, "cluster": cuda, "cluster_uneven": 0, "cooperative": 0,
        "cooperative_unset": 1, "preferred_cluster": 0, "unknown_attribute": 0,
        "extra": cuda, "extra_cluster": cuda, "extra_short": 0, "extra_and_params": 0,
        "launch_extra": cuda, "big_struct": cuda}
    assert fast == python
    assert fast["plain"] == fast["hints"] == fast["extra"] == fast["launch_extra"] == 0
    assert fast["big_struct"] == 0
    assert fast["cluster"] == fast["extra_cluster"] == (0 if cuda else 801)  # NOT_SUPPORTED
    assert fast["cluster_uneven"] == (912 if cuda else 801)  # INVALID_CLUSTER_SIZE
    assert fast["extra_short"] == fast["extra_and_params"] == 1  # INVALID_VALUE
    assert fast["sync"] == 0


_CUBLAS_ASKS = _IN_CONTEXT + textwrap.dedent("""
    v = ctypes.c_int()
    assert lib.cuDeviceGetAttribute(ctypes.byref(v), 16, 0) == 0  # the process is known
    r = {"fast": {}}
    def counted(name, call):
        before = lib.zmlir_fast_queries()
        r[name] = call()
        r["fast"][name] = lib.zmlir_fast_queries() - before
    def capture(stream, v3=False):
        status, graph, deps = ctypes.c_int(-1), ctypes.c_void_p(1), ctypes.c_void_p(1)
        count, ident = ctypes.c_size_t(7), ctypes.c_uint64(7)
        if v3:
            edges = ctypes.c_void_p(1)
            code = lib.cuStreamGetCaptureInfo_v3(stream, ctypes.byref(status),
                                                 ctypes.byref(ident), ctypes.byref(graph),
                                                 ctypes.byref(deps), ctypes.byref(edges),
                                                 ctypes.byref(count))
            return [code, status.value, graph.value, deps.value, edges.value, count.value]
        code = lib.cuStreamGetCaptureInfo_v2(stream, ctypes.byref(status), ctypes.byref(ident),
                                             ctypes.byref(graph), ctypes.byref(deps),
                                             ctypes.byref(count))
        return [code, status.value, graph.value, deps.value, count.value, ident.value != 7]
    stream, other = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
    assert lib.cuStreamCreate(ctypes.byref(other), 0) == 0
    for name, s in (("null", None), ("legacy", 1), ("per_thread", 2),
                    ("stream", stream.value), ("unknown", 0x999)):
        counted(f"capture_{name}", lambda: capture(ctypes.c_void_p(s) if s else None))
    counted("capture_v3", lambda: capture(stream, v3=True))
    status = ctypes.c_int(-1)
    counted("capture_v1", lambda: [lib.cuStreamGetCaptureInfo(stream, ctypes.byref(status),
                                                              None), status.value])
    assert lib.cuStreamBeginCapture_v2(other, 2) == 0  # RELAXED
    counted("capturing", lambda: capture(other)[:2])
    counted("capturing_elsewhere", lambda: capture(stream))
    graph = ctypes.c_void_p()
    assert lib.cuStreamEndCapture(other, ctypes.byref(graph)) == 0
    counted("after_capture", lambda: capture(stream))
    # NVIDIA's machine code (the stand-in's cubin: add_scalar): its attributes.
    elf = bytes([0x7f]) + b"ELF" + bytes(60)
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    if lib.cuModuleLoadData(ctypes.byref(module), elf) == 0:
        assert lib.cuModuleGetFunction(ctypes.byref(fn), module, b"add_scalar") == 0
        def get(attrib, kernel=False):
            value = ctypes.c_int(-7)
            code = (lib.cuKernelGetAttribute(ctypes.byref(value), attrib, fn, 0) if kernel
                    else lib.cuFuncGetAttribute(ctypes.byref(value), attrib, fn))
            return [code, value.value]
        counted("native_shared", lambda: get(1))
        counted("native_threads", lambda: get(0, kernel=True))
        counted("native_carveout_set", lambda: lib.cuKernelSetAttribute(9, 50, fn, 0))
        counted("native_carveout", lambda: get(9))
        counted("native_cluster_set", lambda: lib.cuFuncSetAttribute(fn, 14, 1))
        counted("native_optin_set", lambda: lib.cuFuncSetAttribute(fn, 8, 1024))
        counted("native_null", lambda: lib.cuFuncGetAttribute(None, 1, fn))
    # Ours (PTX we compiled): our compiler's answers, in Python.
    ours = ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(module), ADD_SCALAR_PTX + b"\\0") == 0
    assert lib.cuModuleGetFunction(ctypes.byref(ours), module, b"add_scalar") == 0
    value = ctypes.c_int(-7)
    counted("ours_threads", lambda: [lib.cuFuncGetAttribute(ctypes.byref(value), 0, ours),
                                     value.value])
    counted("ours_carveout_set", lambda: lib.cuFuncSetAttribute(ours, 9, 50))
    print(json.dumps(r))
""")


@pytest.mark.parametrize("backend", ["opencl", "cuda"])
def test_cublas_per_call_asks_take_the_c_path(libdir: str, backend: str,
                                              fake_nvidia_driver: Path) -> None:
    """What NVIDIA's cuBLAS asks in every GEMM besides its launch: whether
    its stream captures (5 cuStreamGetCaptureInfo_v2) and, under the
    passthrough, its kernel's attributes (up to 32 cuKernelGetAttribute, a
    cuKernelSetAttribute), answered in C with the Python path's answers;
    under the passthrough during a capture too (NVIDIA's driver captures)."""
    fast, python = _fast_and_python(_CUBLAS_ASKS, libdir,
                                    _backend_env(backend, fake_nvidia_driver))
    cuda = int(backend == "cuda")
    expected = {"capture_null": 1, "capture_legacy": 1, "capture_per_thread": 1,
                "capture_stream": 1, "capture_unknown": 0, "capture_v3": 1, "capture_v1": 1,
                "capturing": 0, "capturing_elsewhere": 0, "after_capture": 1,
                "ours_threads": 0, "ours_carveout_set": 0}
    if cuda:  # the stand-in's capture (fastpath.c: stream capture), its machine code
        expected.update({"capturing": 1, "capturing_elsewhere": 1, "native_shared": 1, "native_threads": 1, "native_carveout_set": 1,
                         "native_carveout": 1, "native_cluster_set": 1, "native_optin_set": 1,
                         "native_null": 0})
    assert fast.pop("fast") == expected
    assert fast == python
    assert fast["capture_null"] == [0, 0, None, None, 0, False]  # NONE, nothing captured
    assert fast["capture_v3"] == [0, 0, None, None, None, 0]
    assert fast["capture_unknown"][0] == 400 and fast["capturing"] == [0, 1]  # ACTIVE
    if cuda:
        assert fast["native_shared"] == [0, 1234] and fast["native_carveout"] == [0, 50]
        assert fast["native_null"] == 1  # INVALID_VALUE
