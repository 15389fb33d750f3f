"""Driver API tracing (ZMLIR_TRACE), module dumps (ZMLIR_DUMP_DIR), `zmlir
report` (summary, comparison, Perfetto) and the interposer of `zmlir trace`,
here forwarding to our own libcuda.so.1 in place of NVIDIA's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from support import PROGRAMS_DIR, tool

from zmlir.trace import report

# -- synthetic traces: the report's numbers ------------------------------------------------


def _line(seq: int, api: str, result: int | None = 0, dur: float = 1.0, **args: object) -> str:
    return json.dumps({"seq": seq, "tid": 7, "t": seq * 10.0, "dur": dur, "api": api,
                       "args": args, "result": result,
                       "result_name": None if result is None else f"R{result}"})


SYNTHETIC = [
    json.dumps({"trace": "zmlir", "version": 1, "driver": "zmlir", "pid": 1, "argv": ["./a"]}),
    _line(1, "cuGetProcAddress_v2", 500, symbol="cuNoSuch"),  # a probe: not a failure
    _line(2, "cuInit", 0, dur=100.0, flags=0),
    _line(3, "cuDeviceGetAttribute", 0, dur=2.0),
    _line(4, "cuDeviceGetAttribute", 0, dur=4.0),
    _line(5, "cuMemAlloc_v2", 0, dur=10.0, bytesize=4096),
    _line(6, "cuStreamQuery", 600),  # NOT_READY: not a failure
    _line(7, "cuModuleGetGlobal_v2", 801),  # the first failure
    _line(8, "export_table:TOOLS_TLS:2", 801),  # a tools hook cudart does without
    _line(9, "cuLaunchKernel", 0, dur=5.0, f="0x10", kernel="k", grid=[2, 1, 1],
          block=[64, 1, 1], hStream="0x0"),
    _line(10, "cuMemFree_v2", 1),
    _line(11, "export_table:CUDART_INTERFACE:1", None),
]


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(SYNTHETIC) + "\n")
    return path


def test_report_numbers(synthetic: Path) -> None:
    s = report.summarize(report.load(synthetic))
    assert s.calls == 11
    assert s.distinct_apis == 10
    assert s.per_api["cuDeviceGetAttribute"] == {"count": 2, "time_us": 6.0, "errors": 0}
    assert s.per_api["cuInit"]["time_us"] == 100.0
    assert s.not_supported == ["cuModuleGetGlobal_v2", "export_table:TOOLS_TLS:2"]
    assert s.failed == {"cuModuleGetGlobal_v2": {"R801": 1}, "cuMemFree_v2": {"R1": 1}}
    assert s.probes == {"export_table:TOOLS_TLS:2": 1}
    assert s.first_failure is not None
    assert (s.first_failure["index"], s.first_failure["api"]) == (6, "cuModuleGetGlobal_v2")
    assert s.first_failure["line"] == 8
    assert s.first_non_success["api"] == "cuGetProcAddress_v2"
    assert s.total_time_us == pytest.approx(127.0)
    assert s.malformed == []


def _probe_trace(tmp_path: Path, *lines: str) -> report.Summary:
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return report.summarize(report.load(path))


def test_report_skips_probes_libraries_make(tmp_path: Path) -> None:
    s = _probe_trace(
        tmp_path,
        _line(1, "cuGetProcAddress_v2", 500, symbol="", cudaVersion=0),  # cudart's: no name
        _line(2, "cuGetExportTable", 1, pExportTableId="f8cff951-2146-8b4e-b9e2-fb469e7c0dd9"),
        _line(3, "cuInit", 0),
        _line(4, "cuCtxGetDevice", 201),  # cuda.core: is a context current?
        _line(5, "export_table:CONTEXT_LOCAL_STORAGE:2", 400),
        _line(6, "cuDevicePrimaryCtxRetain", 0),
        _line(7, "cuCtxSetCurrent", 0),
        _line(8, "cuKernelGetParamInfo", 0, kernel="0x10", paramIndex=0),
        _line(9, "cuKernelGetParamInfo", 1, kernel="0x10", paramIndex=1),  # past the last
        _line(10, "cuKernelGetParamInfo", 1, kernel="0x20", paramIndex=3),  # a real failure
        _line(11, "cuCtxGetDevice", 201))
    assert s.probes == {"cuGetExportTable": 1, "cuCtxGetDevice": 1,
                        "export_table:CONTEXT_LOCAL_STORAGE:2": 1, "cuKernelGetParamInfo": 1}
    assert s.first_failure is not None and s.first_failure["index"] == 9
    assert s.failed == {"cuKernelGetParamInfo": {"R1": 1}, "cuCtxGetDevice": {"R201": 1}}
    assert s.not_found == [] and s.first_not_found is None


def test_report_names_a_refused_table_no_library_probes(tmp_path: Path) -> None:
    # CUDA 13.4+ cudart cannot start without table 21318c60: a real failure.
    s = _probe_trace(
        tmp_path,
        _line(1, "cuGetExportTable", 1, pExportTableId="f8cff951-2146-8b4e-b9e2-fb469e7c0dd9"),
        _line(2, "cuGetExportTable", 1, pExportTableId="21318c60-9714-3248-8ca6-41ff7324c8f2"))
    assert s.first_failure is not None and s.first_failure["index"] == 1
    assert s.first_failure["args"] == {"pExportTableId": "21318c60-9714-3248-8ca6-41ff7324c8f2"}
    assert s.probes == {"cuGetExportTable": 1}


def test_report_lists_names_looked_up_and_not_found(tmp_path: Path) -> None:
    s = _probe_trace(
        tmp_path,
        _line(1, "cuGetProcAddress_v2", 0, symbol="cuInit", cudaVersion=2000),
        _line(2, "cuGetProcAddress_v2", 500, symbol="cuFuture", cudaVersion=13050),
        _line(3, "cuGetProcAddress", 500, symbol="cuOther", cudaVersion=12000),
        _line(4, "cuGetProcAddress_v2", 500, symbol="cuFuture", cudaVersion=13050))
    assert s.not_found == ["cuFuture", "cuOther"]
    assert s.first_failure is None
    assert s.first_not_found is not None
    assert (s.first_not_found["index"], s.first_not_found["symbol"]) == (1, "cuFuture")
    text = report.format_summary(s, "p.jsonl")
    assert ("no failing call; first entry point looked up and not found: #1 (seq 2, line 2) "
            "cuFuture (CUDA 13050)") in text
    assert "looked up with cuGetProcAddress, not found (2): cuFuture, cuOther" in text


def test_report_cli_text_and_json(synthetic: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "report", str(synthetic)],
                         capture_output=True, text=True, check=True).stdout
    assert "11 calls across 10 APIs" in out
    assert "first failing call: #6 (seq 7, line 8) cuModuleGetGlobal_v2 -> R801" in out
    assert "CUDA_ERROR_NOT_SUPPORTED from 2 APIs" in out
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "report", "--json",
                          str(synthetic)], capture_output=True, text=True, check=True).stdout
    data = json.loads(out)[str(synthetic)]
    assert data["calls"] == 11 and data["distinct_apis"] == 10
    assert data["first_failure"]["api"] == "cuModuleGetGlobal_v2"


def test_malformed_lines_are_reported_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    lines = [SYNTHETIC[0], SYNTHETIC[2], "{not json", "[1, 2]", '{"seq": 3}',
             '{"seq": "x", "api": "cuInit"}', '{"seq": 4, "api": "cuInit", "dur": "slow"}',
             "", SYNTHETIC[5], '{"seq": 9, "api": "cuMemFree_v2", "result": 0, "tid"']
    path.write_bytes("\n".join(lines).encode() + b"\n\xff\xfe garbage\n")
    trace = report.load(path)
    assert [c.api for c in trace.calls] == ["cuInit", "cuMemAlloc_v2"]
    assert [n for n, _ in trace.malformed] == [3, 4, 5, 6, 7, 10, 11]
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "report", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "2 calls across 2 APIs" in result.stdout
    assert "malformed line 3: not JSON" in result.stdout
    assert "malformed line 5: no 'api' name" in result.stdout
    assert "malformed line 7: cuInit: 'dur' is not a number" in result.stdout
    assert "Traceback" not in result.stderr
    missing = subprocess.run([sys.executable, "-m", "zmlir.cli", "report",
                              str(tmp_path / "none.jsonl")], capture_output=True, text=True)
    assert missing.returncode == 1 and "cannot read" in missing.stderr


def test_compare_finds_the_divergence(synthetic: Path, tmp_path: Path) -> None:
    other = tmp_path / "b.jsonl"
    changed = list(SYNTHETIC)
    changed[7] = _line(7, "cuModuleGetGlobal_v2", 0)  # B's driver supports it
    changed[10] = _line(10, "cuMemFree", 0)  # same API, other ABI version
    other.write_text("\n".join(changed[:-1]) + "\n")
    c = report.compare(report.load(synthetic), report.load(other))
    assert c.diverge_at == 6
    assert c.count_diff == {"export_table:CUDART_INTERFACE:1": (1, 0)}
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "report", str(synthetic),
                          "--compare", str(other)], capture_output=True, text=True,
                         check=True).stdout
    assert "first divergence at call #6" in out
    assert ">> #6" in out
    same = report.compare(report.load(synthetic), report.load(synthetic))
    assert same.diverge_at is None


def test_perfetto_export(synthetic: Path, tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    subprocess.run([sys.executable, "-m", "zmlir.cli", "report", "--perfetto", str(out),
                    str(synthetic)], capture_output=True, text=True, check=True)
    events = json.loads(out.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    api = [e for e in slices if e["cat"] == "api"]
    assert len(api) == 11 and all(e["tid"] == 7 for e in api)
    device = [e for e in slices if e["cat"] == "device"]
    assert [e["name"] for e in device] == ["k"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {"thread 7", "stream 0 (legacy)"}


def test_launch_attributes_are_traced(tmp_path: Path) -> None:
    """cuLaunchKernelEx's record names each launch attribute (id and first
    words): whether a library's launch can stay in C depends on them."""
    import cffi

    from zmlir.runtime.cuda import api
    from zmlir.trace.tracer import Tracer

    ffi = cffi.FFI()
    ffi.cdef(api.TYPES)
    attrs = ffi.new("CUlaunchAttribute[2]")
    attrs[0].id = 4  # CLUSTER_DIMENSION
    ffi.cast("unsigned int *", attrs[0].value)[0:3] = [2, 1, 1]
    attrs[1].id = 6  # PROGRAMMATIC_STREAM_SERIALIZATION
    ffi.cast("unsigned int *", attrs[1].value)[0] = 1
    config = ffi.new("CUlaunchConfig *", {"gridDimX": 4, "gridDimY": 1, "gridDimZ": 1,
                                          "blockDimX": 32, "blockDimY": 1, "blockDimZ": 1,
                                          "attrs": attrs, "numAttrs": 2})
    path = tmp_path / "t.jsonl"
    tracer = Tracer(str(path), ffi)
    tracer.call("cuLaunchKernelEx", (config, ffi.cast("CUfunction", 0x10), ffi.NULL, ffi.NULL),
                lambda *args: 0)
    record = json.loads(path.read_text().splitlines()[1])
    assert record["args"]["config"]["attrs"] == [[4, 2, 1, 1], [6, 1, 0, 0]]


# -- real traces of our test programs ---------------------------------------------------------


@pytest.fixture(scope="module")
def vector_add(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    out = tmp_path_factory.mktemp("trace") / "vector_add"
    subprocess.run([tool("nvcc"), "-arch=sm_80", f"-I{PROGRAMS_DIR}",
                    str(PROGRAMS_DIR / "vector_add.cu"), "-o", str(out)], check=True,
                   capture_output=True)
    return out


@pytest.fixture(scope="module")
def traced(vector_add: Path) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    trace = vector_add.parent / "vector_add.jsonl"
    dump = vector_add.parent / "dump"
    # The JIT cache would serve the module without compiling it (and so without a dump).
    env = dict(os.environ, ZMLIR_TRACE=str(trace), ZMLIR_DUMP_DIR=str(dump), ZMLIR_CACHE="0")
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(vector_add)],
                            capture_output=True, text=True, timeout=300, env=env)
    return trace, dump, result


def test_trace_of_vector_add(traced: tuple[Path, Path, subprocess.CompletedProcess[str]]) -> None:
    path, _, result = traced
    assert result.returncode == 0 and result.stdout.strip().endswith("PASS"), result.stderr
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["trace"] == "zmlir" and header["driver"] == "zmlir"
    records = [json.loads(line) for line in lines[1:]]
    assert sorted(r["seq"] for r in records) == list(range(1, len(records) + 1))
    assert all(isinstance(r["tid"], int) and r["dur"] >= 0 for r in records)
    apis = [r["api"] for r in records]
    # cudart resolves its entry points first, then initializes the driver.
    assert apis.index("cuInit") < apis.index("cuMemAlloc_v2")
    assert all(a.startswith(("cuGetProcAddress", "cuGetExportTable", "cuDriverGetVersion"))
               for a in apis[:apis.index("cuInit")])
    count = Counter(apis)
    assert count["cuMemAlloc_v2"] == 9 and count["cuMemFree_v2"] == 9  # 3 sizes x 3 buffers
    assert count["cuLaunchKernel"] == 3
    assert count["cuMemcpyHtoD_v2"] == 6 and count["cuMemcpyDtoH_v2"] == 3
    launches = [r for r in records if r["api"] == "cuLaunchKernel"]
    assert [r["args"]["grid"] for r in launches] == [[1, 1, 1], [4, 1, 1], [257, 1, 1]]
    assert all(r["args"]["block"] == [256, 1, 1] for r in launches)
    assert all(r["args"]["kernel"] == "_Z4vaddPKfS0_Pfi" for r in launches)
    assert all(r["result_name"] == "CUDA_SUCCESS" for r in launches)
    allocs = [r for r in records if r["api"] == "cuMemAlloc_v2"]
    assert [r["args"]["bytesize"] for r in allocs] == [4] * 3 + [4000] * 3 + [262148] * 3
    freed = {r["args"]["dptr"] for r in records if r["api"] == "cuMemFree_v2"}
    assert freed == {r["args"]["*dptr"] for r in allocs}
    copies = [r for r in records if r["api"] == "cuMemcpyHtoD_v2"]
    assert copies[0]["args"]["byteCount"] == 4 and copies[0]["args"]["dstDevice"].startswith("0x")
    # Export-table slots and cuGetProcAddress requests are in the trace too.
    assert "export_table:CUDART_INTERFACE:2" in count
    proc = next(r for r in records if r["api"] == "cuGetProcAddress_v2"
                and r["args"]["symbol"] == "cuInit")
    assert proc["result"] == 0 and proc["args"]["*pfn"].startswith("0x")
    # The report over the real trace agrees with the raw lines.
    s = report.summarize(report.load(path))
    assert s.calls == len(records) and s.distinct_apis == len(count)
    assert s.per_api["cuLaunchKernel"]["count"] == 3
    assert s.malformed == []
    # cudart's start-up probes (a refused export table, ...) are no failure.
    assert s.first_failure is None and s.failed == {} and s.not_found == []
    assert s.probes.get("cuGetExportTable") == 1


def test_dump_directory(traced: tuple[Path, Path, subprocess.CompletedProcess[str]]) -> None:
    _, dump, result = traced
    assert result.returncode == 0
    modules = [d for d in dump.iterdir() if d.is_dir()]
    assert len(modules) == 1
    module = modules[0]
    digest, _, kernel = module.name.partition("-")
    assert len(digest) == 16 and kernel == "_Z4vaddPKfS0_Pfi"
    files = {f.name for f in module.iterdir()}
    assert files == {"module.ptx", "spirv.ptx-mlir.mlir", "spirv.std-mlir.mlir",
                     "spirv.llvm-mlir.mlir", "spirv.ll", "spirv.spv", "spirv.json"}
    assert ".entry _Z4vaddPKfS0_Pfi" in (module / "module.ptx").read_text()
    assert "ptx." in (module / "spirv.ptx-mlir.mlir").read_text()
    assert "llvm.func" in (module / "spirv.llvm-mlir.mlir").read_text()
    assert "define" in (module / "spirv.ll").read_text()
    assert (module / "spirv.spv").read_bytes()[:4] == b"\x03\x02\x23\x07"  # SPIR-V magic
    info = json.loads((module / "spirv.json").read_text())
    assert info["error"] is None and info["hash"] == digest
    assert info["kernels"]["_Z4vaddPKfS0_Pfi"]["params"] == ["u64", "u64", "u64", "u32"]


def test_dump_of_a_failing_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("zmlir._native")
    import zmlir

    monkeypatch.setenv("ZMLIR_DUMP_DIR", str(tmp_path))
    ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry broken( {\n"
    with pytest.raises(zmlir.CompileError):
        zmlir.compile_module(ptx, "spirv")
    (module,) = tmp_path.iterdir()
    assert (module / "module.ptx").read_text() == ptx
    assert json.loads((module / "spirv.json").read_text())["error"]


_ERROR_PROBE = textwrap.dedent("""
    import ctypes, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    ptr = ctypes.c_uint64()
    lib.cuMemAlloc_v2(ctypes.byref(ptr), 64)
    lib.cuInit(0)
    lib.cuDeviceGetLuid((ctypes.c_char * 8)(), ctypes.byref(ctypes.c_uint()), 0)
    lib.cuImportExternalMemory(None, None)  # one of NVIDIA's exports we have no body for
    name = ctypes.c_char_p()
    lib.cuGetErrorName(801, ctypes.byref(name))
""")


def test_trace_records_failures(tmp_path: Path) -> None:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    libdir = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], capture_output=True,
                            text=True, check=True).stdout.strip()
    path = tmp_path / "t.%p.jsonl"
    result = subprocess.run([sys.executable, "-c", _ERROR_PROBE, libdir], capture_output=True,
                            text=True, timeout=120, env=dict(os.environ, ZMLIR_TRACE=str(path)))
    assert result.returncode == 0, result.stderr
    (written,) = tmp_path.glob("t.*.jsonl")  # %p became the process id
    records = [json.loads(line) for line in written.read_text().splitlines()[1:]]
    assert [(r["api"], r["result_name"]) for r in records] == [
        ("cuMemAlloc_v2", "CUDA_ERROR_NOT_INITIALIZED"), ("cuInit", "CUDA_SUCCESS"),
        ("cuDeviceGetLuid", "CUDA_ERROR_NOT_SUPPORTED"),
        ("cuImportExternalMemory", "CUDA_ERROR_NOT_SUPPORTED"), ("cuGetErrorName", "CUDA_SUCCESS")]
    # A failed call's output parameter is the pointer, not what it points to.
    assert set(records[0]["args"]) == {"dptr", "bytesize"} and records[0]["args"]["bytesize"] == 64
    assert records[4]["args"] == {"error": 801, "*pStr": "CUDA_ERROR_NOT_SUPPORTED"}
    s = report.summarize(report.load(written))
    assert s.first_failure["index"] == 0
    assert s.not_supported == ["cuDeviceGetLuid", "cuImportExternalMemory"]


def test_report_of_a_program_missing_an_entry_point(tmp_path: Path) -> None:
    # The program stops for want of an entry point; no driver call fails.
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    program = tmp_path / "missing"
    subprocess.run([tool("nvcc"), "-arch=sm_80", str(Path(__file__).with_name(
        "missing_entry_point.cu")), "-o", str(program)], check=True, capture_output=True)
    trace = tmp_path / "missing.jsonl"
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(program)],
                            capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, ZMLIR_TRACE=str(trace)))
    assert result.returncode == 1 and "not available" in result.stdout, result.stderr
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "report", str(trace)],
                         capture_output=True, text=True, check=True).stdout
    assert "no failing call; first entry point looked up and not found:" in out, out
    assert "cuZmlirFutureEntryPoint (CUDA 13000)" in out
    assert "looked up with cuGetProcAddress, not found (1): cuZmlirFutureEntryPoint" in out
    assert "skipped" in out and "cuGetExportTable x1" in out


# -- the interposer, with our driver standing in for NVIDIA's --------------------------------


def test_interposer_over_our_driver(vector_add: Path, traced: tuple[Path, Path, object],
                                    tmp_path: Path) -> None:
    pytest.importorskip("cffi")
    from zmlir.trace import interposer

    libdir = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], capture_output=True,
                            text=True, check=True).stdout.strip()
    ours = os.path.join(libdir, "libcuda.so.1")
    assert interposer._is_ours(ours)  # the search would never pick it
    built = interposer.build(tmp_path / "lib")
    assert interposer._is_ours(str(built))
    trace = tmp_path / "nvidia.jsonl"
    # Our driver tells the application's runtime eager and any other caller
    # lazy (fastpath.c); behind the interposer the caller is the interposer.
    # Asked for eager, every caller gets it, as the application did in `traced`.
    env = dict(os.environ, LD_LIBRARY_PATH=str(built.parent), ZMLIR_REAL_LIBCUDA=ours,
               ZMLIR_TRACE_INTERPOSER=str(trace), CUDA_MODULE_LOADING="EAGER")
    env.pop("ZMLIR_TRACE", None)
    result = subprocess.run([str(vector_add)], capture_output=True, text=True, timeout=300,
                            env=env)
    assert result.returncode == 0 and "PASS" in result.stdout, result.stderr
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[0]["driver"] == "nvidia"
    calls = [r for r in records if "api" in r]
    apis = Counter(r["api"] for r in calls)
    assert apis["cuLaunchKernel"] == 3 and apis["cuMemAlloc_v2"] == 9
    assert all(r["args"]["kernel"] == "_Z4vaddPKfS0_Pfi" for r in calls
               if r["api"] == "cuLaunchKernel")
    # Answered by the interposer itself (cudart checks it against the addresses it got).
    assert apis["export_table:INTEGRITY_CHECK:1"] >= 1
    # Unknown slots of known tables: logged on entry by the trampolines.
    entry_only = [r for r in calls if r.get("entry_only")]
    assert all(r["result"] is None and "reg0" in r["args"] for r in entry_only)
    # Same program, same calls: the comparison with zmlir's own trace finds no divergence.
    ours_trace, _, _ = traced
    c = report.compare(report.load(ours_trace), report.load(trace))
    assert c.diverge_at is None, report.format_comparison(c)


def test_interposer_is_built_only_where_no_other_user_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # `zmlir trace` puts the application's libcuda.so.1 there: a directory
    # (or library) someone else could write is replaced by a fresh one.
    from zmlir.trace import interposer

    monkeypatch.setenv("ZMLIR_CACHE_DIR", str(tmp_path / "cache"))
    directory = interposer._private_build_dir()
    assert directory == interposer.default_dir() and directory.is_dir()
    directory.chmod(0o777)
    fresh = interposer._private_build_dir()
    assert fresh != directory and fresh.stat().st_mode & 0o777 == 0o700
    assert "other users may write" in capsys.readouterr().err
    fresh.rmdir()
    directory.chmod(0o700)
    (directory / interposer.SONAME).write_bytes(b"")
    (directory / interposer.SONAME).chmod(0o666)
    fresh = interposer._private_build_dir()
    assert fresh != directory
    fresh.rmdir()


def test_interposer_copies_an_unknown_table_when_asked(fake_nvidia_driver: Path,
                                                       tmp_path: Path) -> None:
    # ZMLIR_TRACE_TABLES=unknown: a table we do not know, whose slot 0 reads
    # as a size, is copied, its slots of code logged on entry; the stand-in's
    # f8cff951 table (16 bytes: its size, then 0xfa4e) has no code, so its
    # word comes through as it is.
    pytest.importorskip("cffi")
    from zmlir.trace import interposer

    built = interposer.build(tmp_path / "lib")
    trace = tmp_path / "nvidia.jsonl"
    script = textwrap.dedent("""
        import ctypes, sys
        lib = ctypes.CDLL(sys.argv[1])
        assert lib.cuInit(0) == 0
        table = ctypes.c_void_p()
        assert lib.cuGetExportTable(ctypes.byref(table),
                                    bytes.fromhex("f8cff95121468b4eb9e2fb469e7c0dd9")) == 0
        print(hex(ctypes.cast(table, ctypes.POINTER(ctypes.c_uint64))[1]))
    """)
    for tables, copied in (("unknown", True), ("wrap", False)):
        env = dict(os.environ, ZMLIR_REAL_LIBCUDA=str(fake_nvidia_driver),
                   ZMLIR_TRACE_INTERPOSER=str(trace), ZMLIR_TRACE_TABLES=tables)
        result = subprocess.run([sys.executable, "-c", script, str(built)], capture_output=True,
                                text=True, timeout=120, env=env)
        assert result.returncode == 0 and result.stdout.strip() == "0xfa4e", result.stderr
        events = [json.loads(line) for line in trace.read_text().splitlines()]
        unknown = [e for e in events if e.get("event") == "unknown_table"]
        assert unknown == ([{**unknown[0], "uuid": "F8CFF951-2146-8B4E-B9E2-FB469E7C0DD9",
                             "slots": 2}] if copied else [])
