#!/usr/bin/env python3
"""JIT speed: PTX to a loaded OpenCL program, cold and warm, against ptxas.

    .venv/bin/python bench/jit_speed.py [--quick] [--all] [--only a,b]
        [--llmc /work/src/llm.c] [--samples /work/samples/sm_90]
        [--timeout 300] [--out bench/results/jit_speed.json]

The corpus is real PTX: llm.c's dev/cuda kernels (nvcc -arch=sm_80 --ptx
with llm.c's own options, bench/llmc.py; built into build/bench/jit_speed)
and the cuda-samples built by bench/cuda_samples.py (the PTX the CPU
driver would pick from each executable and its module files). Identical
texts are measured once. Modules of BIG_BYTES or more (Intel's build of
one takes minutes here) only with --all; --quick takes a few small ones.

For each module, in a fresh process with a fresh, empty JIT cache
(ZMLIR_CACHE_DIR in a temporary directory):

- cold: the driver's load path (module.keyed_ptx, runtime.cache's
  compile_cached, the OpenCL backend's load: clBuildProgram of our SPIR-V,
  its binary stored), split by the compiler's own stage timing
  (CompiledModule.seconds: the frontend's parse and import `ptx-mlir`, the
  lowering `std-mlir`, to the LLVM dialect `llvm-mlir`, translation and our
  fix-ups `llvm-ir`, llc to SPIR-V `bin`) and Intel's clBuildProgram;
- warm: then in a second fresh process on the same cache, the same load:
  a JIT cache hit, the program from Intel's own binary (the first load of
  the process, and the least of REPEAT more; the better of two processes);
- `ptxas -O3 -arch=sm_90` on the same PTX in the same run, the baseline.

With --variants, each module is also built without its kernels' second
forms (grid variants; the linear-block copies of 510732c), to say what
they cost Intel's build (a run half again as long).

Each process's start (importing zmlir, opening the OpenCL device) is not in
the figures, nor are lark's parse tables (built on a cache directory's first
parse, once, not per module: timed apart before the cold load); both are
reported once. Times are wall seconds on a shared
machine. Writes the JSON (--out) and a markdown page beside it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

WORK = REPO / "build" / "bench" / "jit_speed"
RESULTS = REPO / "bench" / "results" / "jit_speed.json"
PTXAS = "/usr/local/cuda/bin/ptxas"
# The compiler's stages (CompiledModule.seconds), then Intel's build.
STAGES = ("ptx-mlir", "std-mlir", "llvm-mlir", "llvm-ir", "bin")
STAGE_NAMES = {"ptx-mlir": "parse+import", "std-mlir": "lower to std",
               "llvm-mlir": "to LLVM dialect", "llvm-ir": "LLVM IR + fix-ups",
               "bin": "llc to SPIR-V", "cl_build": "clBuildProgram",
               "other": "the driver's rest (keys, caches, Intel's binary)"}
BIG_BYTES = 300_000
QUICK = ("llmc/gelu_forward", "llmc/layernorm_forward", "llmc/softmax_forward",
         "samples/matrixMul", "samples/scan", "samples/histogram.1", "samples/shfl_scan")
REPEAT = 3


@dataclass
class Module:
    name: str  # suite/program, .N for a program's N-th module
    path: Path  # its PTX


# -- the corpus ------------------------------------------------------------------

def llmc_sources(checkout: Path) -> list[Path]:
    """llm.c's dev/cuda programs that call no library but cuBLAS (bench/llmc.py)."""
    import llmc

    return [s for s in sorted((checkout / "dev" / "cuda").glob("*.cu"))
            if llmc.needs_library(s) is None]


def llmc_ptx(source: Path, out: Path, headers: Path | None) -> Path | str:
    """`source`'s PTX (nvcc --ptx -arch=sm_80, llm.c's options), built into
    `out` unless it is there and newer; or nvcc's last error line."""
    import llmc

    ptx = out / f"{source.stem}.ptx"
    if ptx.exists() and ptx.stat().st_mtime >= source.stat().st_mtime:
        return ptx
    out.mkdir(parents=True, exist_ok=True)
    command = ["nvcc", *llmc.nvcc_flags(source), "-arch=sm_80", "--ptx",
               *([f"-I{headers}"] if headers else []), str(source), "-o", str(ptx)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        ptx.unlink(missing_ok=True)
        return (done.stderr.strip().splitlines() or ["nvcc failed"])[-1][:200]
    return ptx


def sample_texts(samples: Path) -> dict[str, list[str]]:
    """Each built sample's PTX texts, as the CPU driver would pick them."""
    import cuda_samples

    manifest = json.loads((samples / "manifest.json").read_text())
    return {name: cuda_samples._module_ptx(samples / name, 0)
            for name, entry in manifest.items() if entry["built"]}


def named_texts(texts: dict[str, list[str]], suite: str) -> dict[str, str]:
    """`suite/program` for a program's one text, `suite/program.N` for
    each of several; a text seen before (same bytes) is left out."""
    named: dict[str, str] = {}
    seen: set[str] = set()
    for program, modules in texts.items():
        for index, text in enumerate(modules):
            digest = hashlib.sha256(text.encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            named[f"{suite}/{program}" + (f".{index}" if len(modules) > 1 else "")] = text
    return named


def select(sizes: dict[str, int], only: set[str], quick: bool, everything: bool,
           big: int = BIG_BYTES) -> tuple[list[str], list[str]]:
    """The modules to measure and those left out as too big (--all takes
    them): by --only (a name or its program's name), else --quick's, else
    every module below `big` bytes."""
    def program(name: str) -> str:
        return re.sub(r"\.\d+$", "", name.partition("/")[2])

    if only:
        chosen = [n for n in sizes if n in only or n.partition("/")[2] in only
                  or program(n) in only]
        return chosen, []
    if quick:
        return [n for n in sizes if n in QUICK], []
    left = [] if everything else [n for n, size in sizes.items() if size >= big]
    return [n for n in sizes if n not in left], left


def corpus(args: argparse.Namespace) -> dict[str, str]:
    """name -> PTX text of every module found."""
    from zmlir.libraries.build import nvidia_wheel_dir

    wheel = nvidia_wheel_dir()
    headers = wheel / "include" if wheel else None
    llmc_texts: dict[str, list[str]] = {}
    for source in llmc_sources(args.llmc):
        built = llmc_ptx(source, WORK / "llmc", headers)
        if isinstance(built, str):
            print(f"llmc/{source.stem}: nvcc: {built}", flush=True)
            continue
        llmc_texts[source.stem] = [built.read_text()]
    return {**named_texts(llmc_texts, "llmc"), **named_texts(sample_texts(args.samples),
                                                               "samples")}


# -- one module's load, in a fresh process -----------------------------------------

def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _ir_shape(llvm_ir: str) -> dict[str, int]:
    """The kernels of the LLVM IR and how many lines of it are second forms
    of a kernel: grid variants (`__zmlir_grid31`), and the linear-block
    copies of a body (kernels reading get_global_offset(1), each half
    copy; SPIRVTargetInfo.cpp's readBlockShapeOfLinearLaunches)."""
    shape = {"kernels": 0, "grid_variants": 0, "linear_copies": 0, "lines": 0,
             "grid_variant_lines": 0, "linear_copy_lines": 0}
    for function in re.split(r"^(?=define )", llvm_ir, flags=re.M)[1:]:
        lines = function.count("\n")
        shape["lines"] += lines
        if "spir_kernel" not in function.partition("\n")[0]:
            continue
        shape["kernels"] += 1
        if "__zmlir_grid31" in function.partition("(")[0]:
            shape["grid_variants"] += 1
            shape["grid_variant_lines"] += lines
        elif "@_Z17get_global_offsetj(i32 1)" in function:
            shape["linear_copies"] += 1
            shape["linear_copy_lines"] += lines // 2
    return shape


def child(mode: str, path: Path) -> dict[str, object]:
    """Loads the PTX at `path` as the driver does (cold: compiled and built;
    warm: from the caches), in this process; its figures."""
    started = time.perf_counter()
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend
    from zmlir.runtime.cache import compile_cached
    from zmlir.runtime.cuda.module import keyed_ptx

    if mode.startswith("cold"):  # the compiler too, not only what a cache hit needs
        import zmlir.compiler  # noqa: F401
        from zmlir.frontend.parser import _parser
    backend = OpenCLBackend.open()
    device = backend.device
    text = path.read_text()
    out: dict[str, object] = {"startup": time.perf_counter() - started}
    tables = 0.0
    if mode.startswith("cold"):
        # lark's parse tables, built on the first parse where the cache
        # directory has none (once per cache, not per module): apart.
        began = time.perf_counter()
        _parser()
        tables = time.perf_counter() - began
    builds: list[float] = []
    build_spirv = device.load_spirv

    def timed_build(spirv: bytes, options: str = "") -> object:
        began = time.perf_counter()
        try:
            return build_spirv(spirv, options)
        finally:
            builds.append(time.perf_counter() - began)

    device.load_spirv = timed_build

    def load() -> tuple[float, float, object, object]:
        cpu, began = _cpu(), time.perf_counter()
        ptx, _ = keyed_ptx(text)
        compiled = compile_cached(ptx, backend.target, path.name)
        program = backend.load(compiled)
        return time.perf_counter() - began, _cpu() - cpu, compiled, program

    seconds, cpu, compiled, program = load()
    out.update(seconds=seconds, cpu=cpu, stages=dict(compiled.seconds),
               cl_build=sum(builds), tables=tables,
               spirv_bytes=len(compiled.binary), cl_binary_bytes=len(program.binary()),
               kernels=len(compiled.kernels))
    if mode.startswith("cold"):
        out["shape"] = _ir_shape(str(compiled.stages.get("llvm-ir", "")))
        if compiled.seconds == {} or builds == []:
            out["error"] = "not compiled: was the cache empty?"
        if mode == "cold-variants":
            out["without_second_forms"] = without_second_forms(
                device, keyed_ptx(text)[0], str(compiled.stages.get("llvm-ir", "")))
    else:
        again = []
        for _ in range(REPEAT):
            again.append(load()[0])
        out["again"] = min(again)
        if builds:
            out["error"] = "rebuilt from SPIR-V: Intel's binary was not used"
    return out


# The linear-block copy's test (SPIRVTargetInfo.cpp's launchedLinear).
LINEAR_TEST = re.compile(r"call i64 @_Z17get_global_offsetj\(i32 1\)")


def without_second_forms(device: Any, ptx: str, llvm_ir: str) -> dict[str, float]:
    """What kernels' second forms cost Intel's build (--variants): the
    module compiled for SPIR-V without grid variants (a target whose
    grid_variants is off) and built; and its LLVM IR with the test that
    picks a linear-block copy made 0 (what every launch of a
    one-dimensional block reads), which Intel's build folds, dropping the
    copy, through llc and built."""
    from zmlir.compiler import compile_module
    from zmlir.targets.spirv import SPIRVTarget

    class NoGridVariants(SPIRVTarget):
        grid_variants = False

    compiled = compile_module(ptx, NoGridVariants())
    began = time.perf_counter()
    device.load_spirv(compiled.binary)
    out = {"compile_s": sum(compiled.seconds.values()),
           "cl_build_s": time.perf_counter() - began, "spirv_bytes": len(compiled.binary)}
    if LINEAR_TEST.search(llvm_ir):
        spirv = SPIRVTarget().emit_binary(LINEAR_TEST.sub("add i64 0, 0", llvm_ir))
        began = time.perf_counter()
        device.load_spirv(spirv)
        out["cl_build_no_linear_s"] = time.perf_counter() - began
    return out


def measure(mode: str, path: Path, cache: Path, timeout: int) -> dict[str, object]:
    """child(mode, path) in a fresh process on the JIT cache `cache`."""
    env = dict(os.environ, ZMLIR_CACHE_DIR=str(cache), ZMLIR_BACKEND="opencl")
    env.pop("ZMLIR_CACHE", None)
    env.pop("ZMLIR_DUMP_DIR", None)
    try:
        done = subprocess.run([sys.executable, __file__, "--child", mode, str(path)],
                              capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {timeout} s"}
    if done.returncode:
        lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit {done.returncode}"]
        return {"error": lines[-1][:300]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def ptxas(path: Path, timeout: int) -> dict[str, object]:
    """ptxas -O3 -arch=sm_90 on the PTX at `path`: wall and CPU seconds."""
    cubin = path.with_suffix(".cubin")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    try:
        done = subprocess.run([PTXAS, "-O3", "-arch=sm_90", str(path), "-o", str(cubin)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {timeout} s"}
    seconds = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cubin.unlink(missing_ok=True)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["ptxas failed"])[-1][:300]}
    return {"seconds": seconds, "cpu": (after.ru_utime - before.ru_utime)
            + (after.ru_stime - before.ru_stime)}


# -- the run -------------------------------------------------------------------------

def ratio(ours: float | None, theirs: float | None) -> float | None:
    return round(ours / theirs, 2) if ours is not None and theirs else None


def row(name: str, size: int, cold: dict, warm: dict, base: dict) -> dict[str, object]:
    stages = dict(cold.get("stages", {}))  # type: ignore[call-overload]
    if "cl_build" in cold:
        stages["cl_build"] = cold["cl_build"]
        # The rest: the PTX's key, the caches' reads and writes, Intel's binary.
        stages["other"] = max(0.0, cold["seconds"] - sum(stages.values()))
    errors = [f"{what}: {r['error']}" for what, r in
              (("cold", cold), ("warm", warm), ("ptxas", base)) if "error" in r]
    return {"name": name, "ptx_bytes": size,
            "cold_s": cold.get("seconds"), "cold_cpu_s": cold.get("cpu"),
            "stages_s": {k: round(v, 4) for k, v in stages.items()},
            "warm_first_s": warm.get("seconds"), "warm_s": warm.get("again"),
            "ptxas_s": base.get("seconds"), "ptxas_cpu_s": base.get("cpu"),
            "cold_over_ptxas": ratio(cold.get("seconds"), base.get("seconds")),  # type: ignore
            "warm_over_ptxas": ratio(warm.get("again"), base.get("seconds")),  # type: ignore
            "spirv_bytes": cold.get("spirv_bytes"), "cl_binary_bytes": cold.get("cl_binary_bytes"),
            "kernels": cold.get("kernels"), "shape": cold.get("shape"),
            "startup_s": {"cold": cold.get("startup"), "warm": warm.get("startup")},
            "tables_s": cold.get("tables"),
            "without_second_forms": cold.get("without_second_forms"),
            "errors": errors}


def totals(rows: list[dict]) -> dict[str, object]:
    """Sums over the modules every measurement of which succeeded."""
    ok = [r for r in rows if not r["errors"]]
    mb = sum(r["ptx_bytes"] for r in ok) / 1e6

    def total(key: str) -> float:
        return sum(r[key] for r in ok)

    stages = {s: sum(r["stages_s"].get(s, 0.0) for r in ok) for s in (*STAGES, "cl_build", "other")}
    cold, warm, first, base = (total("cold_s"), total("warm_s"), total("warm_first_s"),
                               total("ptxas_s"))
    return {"modules": len(ok), "failed": len(rows) - len(ok), "ptx_mb": round(mb, 3),
            "cold_s": round(cold, 2), "cold_cpu_s": round(total("cold_cpu_s"), 2),
            "warm_first_s": round(first, 3), "warm_s": round(warm, 3),
            "ptxas_s": round(base, 2), "ptxas_cpu_s": round(total("ptxas_cpu_s"), 2),
            "cold_mb_per_s": round(mb / cold, 4) if cold else None,
            "warm_mb_per_s": round(mb / warm, 2) if warm else None,
            "ptxas_mb_per_s": round(mb / base, 4) if base else None,
            "cold_over_ptxas": ratio(cold, base), "warm_over_ptxas": ratio(warm, base),
            "warm_first_over_ptxas": ratio(first, base),
            "stages_s": {k: round(v, 2) for k, v in stages.items()},
            "stage_share": {k: round(v / cold, 3) if cold else None for k, v in stages.items()},
            "compiler_over_ptxas": ratio(sum(stages[s] for s in STAGES), base),
            "cl_build_over_ptxas": ratio(stages["cl_build"], base),
            "second_forms": second_forms(ok),
            "spirv_mb": round(sum(r["spirv_bytes"] for r in ok) / 1e6, 3),
            "cl_binary_mb": round(sum(r["cl_binary_bytes"] for r in ok) / 1e6, 3)}


def second_forms(rows: list[dict]) -> dict[str, object]:
    """How much of the LLVM IR is kernels' second forms (grid variants,
    linear-block copies), and where --variants measured it, what the grid
    variants cost Intel's build."""
    shapes = [r["shape"] for r in rows if r["shape"]]
    lines = sum(s["lines"] for s in shapes) or 1
    out: dict[str, object] = {
        key: sum(s[key] for s in shapes) for key in ("kernels", "grid_variants", "linear_copies")}
    out["grid_variant_share"] = round(sum(s["grid_variant_lines"] for s in shapes) / lines, 3)
    out["linear_copy_share"] = round(sum(s["linear_copy_lines"] for s in shapes) / lines, 3)
    measured = [r for r in rows if r.get("without_second_forms")
                and r["shape"]["grid_variants"]]
    if measured:
        with_them = sum(r["stages_s"]["cl_build"] for r in measured)
        without = sum(r["without_second_forms"]["cl_build_s"] for r in measured)
        out["measured"] = {"modules": len(measured), "cl_build_s": round(with_them, 2),
                           "cl_build_without_s": round(without, 2),
                           "spirv_bytes": sum(r["spirv_bytes"] for r in measured),
                           "spirv_bytes_without": sum(r["without_second_forms"]["spirv_bytes"]
                                                      for r in measured)}
    linear = [r for r in rows if (r.get("without_second_forms") or {}).get(
        "cl_build_no_linear_s") is not None]
    if linear:
        out["measured_linear"] = {
            "modules": len(linear),
            "cl_build_s": round(sum(r["stages_s"]["cl_build"] for r in linear), 2),
            "cl_build_without_s": round(sum(r["without_second_forms"]["cl_build_no_linear_s"]
                                            for r in linear), 2)}
    return out


def _fmt(value: object, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if value < 100 else f"{value:.0f}"
    return str(value)


def markdown(result: dict) -> str:
    t = result["total"]
    lines = [
        "# JIT speed: PTX to a loaded program, against ptxas",
        "",
        f"`bench/jit_speed.py` on {result['machine']} ({result['cores']} cores), "
        f"{result['date']}, zmlir {result['commit']}: {t['modules']} modules, "
        f"{t['ptx_mb']} MB of PTX ({t['failed']} failed; not measured: "
        f"{', '.join(result['left_out']) or 'none'}; --all takes modules of {BIG_BYTES // 1000} KB "
        "or more). Cold: a fresh process, every cache "
        "empty, PTX to a built cl_program; warm: a second fresh process, the JIT cache's "
        "hit and Intel's own binary (its first load, and the least of three more; the "
        "better of two such processes); "
        "ptxas: `ptxas -O3 -arch=sm_90` on the same PTX. Wall seconds; a process's start "
        f"(~{result['startup_s']:.2f} s) and lark's parse tables, built once per cache "
        f"directory ({result['tables_s']:.2f} s), are in none of them.",
        "",
        "## Total",
        "",
        "| | seconds | MB/s | over ptxas |",
        "|---|---|---|---|",
        f"| cold | {_fmt(t['cold_s'])} | {_fmt(t['cold_mb_per_s'], 4)} | "
        f"{_fmt(t['cold_over_ptxas'])} |",
        f"| ... our compiler (parse to SPIR-V) | "
        f"{_fmt(sum(t['stages_s'][s] for s in STAGES))} | | "
        f"{_fmt(t['compiler_over_ptxas'])} |",
        f"| ... Intel's clBuildProgram | {_fmt(t['stages_s']['cl_build'])} | | "
        f"{_fmt(t['cl_build_over_ptxas'])} |",
        f"| warm, a process's first load | {_fmt(t['warm_first_s'], 3)} | | "
        f"{_fmt(t['warm_first_over_ptxas'], 3)} |",
        f"| warm | {_fmt(t['warm_s'], 3)} | {_fmt(t['warm_mb_per_s'])} | "
        f"{_fmt(t['warm_over_ptxas'], 3)} |",
        f"| ptxas -O3 sm_90 | {_fmt(t['ptxas_s'])} | {_fmt(t['ptxas_mb_per_s'], 4)} | 1 |",
        "",
        "Where the cold time goes:",
        "",
        "| stage | seconds | share |",
        "|---|---|---|",
    ]
    lines += [f"| {STAGE_NAMES[s]} (`{s}`) | {_fmt(t['stages_s'][s])} | "
              f"{(t['stage_share'][s] or 0) * 100:.1f}% |" for s in (*STAGES, "cl_build", "other")]
    forms = t["second_forms"]
    lines += ["", f"Kernels' second forms: of {forms['kernels']} SPIR-V kernels "
              f"{forms['grid_variants']} are grid variants (`__zmlir_grid31`, "
              f"{forms['grid_variant_share'] * 100:.0f}% of the LLVM IR's lines) and "
              f"{forms['linear_copies']} have a linear-block copy of their body "
              f"(510732c; about {forms['linear_copy_share'] * 100:.0f}% of the lines)."]
    if "measured" in forms:
        m = forms["measured"]
        lines += ["", f"Built without grid variants (--variants, {m['modules']} modules that "
                  f"have some): clBuildProgram {m['cl_build_without_s']} s instead of "
                  f"{m['cl_build_s']} s, SPIR-V {m['spirv_bytes_without'] / 1e3:.0f} KB "
                  f"instead of {m['spirv_bytes'] / 1e3:.0f} KB."]
    if "measured_linear" in forms:
        m = forms["measured_linear"]
        lines += ["", f"Without the linear-block copies (--variants, {m['modules']} modules "
                  "that have some; the test that picks the copy made 0 in the LLVM IR, which "
                  f"Intel's build folds): clBuildProgram {m['cl_build_without_s']} s instead "
                  f"of {m['cl_build_s']} s."]
    compiler = sum(t["stages_s"][s] for s in STAGES)
    lines += ["", f"What dominates: Intel's clBuildProgram, "
              f"{t['stage_share']['cl_build'] * 100:.0f}% of the cold time "
              f"({t['cl_build_over_ptxas']}x ptxas alone); our compiler, parse to SPIR-V, is "
              f"{compiler / t['cold_s'] * 100:.0f}% ({t['compiler_over_ptxas']}x ptxas), its "
              f"largest stage {STAGE_NAMES[max(STAGES, key=lambda s: t['stages_s'][s])]}."]
    biggest = sorted(result["modules"], key=lambda r: -r["ptx_bytes"])[:5]
    lines += ["", "The biggest modules: " + "; ".join(
        f"{r['name']} {r['ptx_bytes'] / 1e3:.0f} KB, cold {_fmt(r['cold_s'])} s "
        f"(clBuildProgram {_fmt(r['stages_s'].get('cl_build'))} s), ptxas "
        f"{_fmt(r['ptxas_s'])} s" for r in biggest) + "."]
    lines += ["", f"SPIR-V {t['spirv_mb']} MB from {t['ptx_mb']} MB of PTX; Intel's "
              f"binaries {t['cl_binary_mb']} MB.", "", "## Per module (slowest cold first)", "",
              "| module | PTX KB | cold s | parse+import | lower | llvm | llc | clBuild | "
              "warm ms | ptxas s | cold/ptxas | warm/ptxas | SPIR-V KB | kernels (grid var., "
              "linear copies) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(result["modules"], key=lambda r: -(r["cold_s"] or 0)):
        s = r["stages_s"]
        shape = r["shape"] or {}
        llvm = (s.get("llvm-mlir") or 0) + (s.get("llvm-ir") or 0)
        lines.append(
            f"| {r['name']} | {r['ptx_bytes'] / 1e3:.0f} | {_fmt(r['cold_s'])} | "
            f"{_fmt(s.get('ptx-mlir'))} | {_fmt(s.get('std-mlir'))} | {_fmt(llvm)} | "
            f"{_fmt(s.get('bin'))} | {_fmt(s.get('cl_build'))} | "
            f"{_fmt(r['warm_s'] * 1e3 if r['warm_s'] is not None else None, 1)} | "
            f"{_fmt(r['ptxas_s'])} | {_fmt(r['cold_over_ptxas'])} | "
            f"{_fmt(r['warm_over_ptxas'], 3)} | "
            f"{_fmt(r['spirv_bytes'] / 1e3 if r['spirv_bytes'] else None, 0)} | "
            f"{shape.get('kernels', '-')} ({shape.get('grid_variants', '-')}, "
            f"{shape.get('linear_copies', '-')}) |")
    failed = [r for r in result["modules"] if r["errors"]]
    if failed:
        lines += ["", "Failed:", ""] + [f"- {r['name']}: {'; '.join(r['errors'])}"
                                        for r in failed]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PTX"), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a few small modules")
    parser.add_argument("--all", action="store_true", help=f"modules of {BIG_BYTES} bytes "
                        "or more too")
    parser.add_argument("--only", default="", help="modules or programs, comma-separated")
    parser.add_argument("--variants", action="store_true", help="also build each module "
                        "without grid variants, and without linear-block copies (what they "
                        "cost Intel's build)")
    parser.add_argument("--update", action="store_true", help="keep --out's other modules' "
                        "rows (a module measured again, or one left out before)")
    parser.add_argument("--list", action="store_true", help="the corpus, measured nothing")
    parser.add_argument("--llmc", type=Path, default=Path("/work/src/llm.c"))
    parser.add_argument("--samples", type=Path, default=Path("/work/samples/sm_90"))
    parser.add_argument("--timeout", type=int, default=300, help="seconds per step")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], Path(args.child[1]))))
        return 0
    texts = corpus(args)
    sizes = {name: len(text.encode()) for name, text in texts.items()}
    chosen, left = select(sizes, {o for o in args.only.split(",") if o}, args.quick, args.all)
    if args.list:
        for name in texts:
            print(f"{sizes[name]:>9} {name}{'' if name in chosen else '  (left out)'}")
        return 0
    print(f"{len(chosen)} modules, {sum(sizes[n] for n in chosen) / 1e6:.2f} MB of PTX"
          + (f"; left out (--all): {', '.join(left)}" if left else ""), flush=True)
    if not chosen:
        print("no module chosen")
        return 1
    rows: list[dict] = []
    kept = []  # --update: the other modules' rows of --out
    if args.update and args.out.exists():
        kept = [r for r in json.loads(args.out.read_text())["modules"]
                if r["name"] not in chosen and r["name"] in texts]
    with tempfile.TemporaryDirectory(prefix="jit_speed.") as scratch:
        for index, name in enumerate(chosen):
            path = Path(scratch) / f"m{index}.ptx"
            path.write_text(texts[name])
            cache = Path(scratch) / f"cache{index}"
            # --variants builds each module twice more.
            cold = measure("cold-variants" if args.variants else "cold", path, cache,
                           args.timeout * (3 if args.variants else 1))
            warm: dict = {}
            if "error" not in cold:  # twice: the least of each figure
                warms = [measure("warm", path, cache, args.timeout) for _ in range(2)]
                warm = next((w for w in warms if "error" in w), None) or {
                    k: min(w[k] for w in warms) if k in ("seconds", "again", "startup")
                    else warms[0][k] for k in warms[0]}
            shutil.rmtree(cache, ignore_errors=True)
            rows.append(row(name, sizes[name], cold, warm, ptxas(path, args.timeout)))
            r = rows[-1]
            print(f"{name}: {sizes[name] / 1e3:.0f} KB cold {_fmt(r['cold_s'])} s "
                  f"(clBuild {_fmt(r['stages_s'].get('cl_build'))}) warm "
                  f"{_fmt(r['warm_s'], 4)} s ptxas {_fmt(r['ptxas_s'])} s"
                  + (f" [{'; '.join(r['errors'])}]" if r["errors"] else ""), flush=True)
            # Written after each module: a run cut short keeps what it measured.
            done = sorted(rows + kept, key=lambda r: list(texts).index(r["name"]))
            names = {r["name"] for r in done}
            result = write(args.out, done, [n for n in texts if n not in names] if args.update
                           else [*left, *chosen[index + 1:]])
    t = result["total"]
    print(f"total {t['ptx_mb']} MB: cold {t['cold_s']} s ({t['cold_over_ptxas']}x ptxas; "
          f"compiler {t['compiler_over_ptxas']}x, clBuild {t['cl_build_over_ptxas']}x), warm "
          f"{t['warm_s']} s ({t['warm_over_ptxas']}x), ptxas {t['ptxas_s']} s")
    return 1 if t["failed"] else 0


def write(out: Path, rows: list[dict], left: list[str]) -> dict:
    """The results of `rows` (`left`: the modules not measured) to `out`
    and its markdown page, whose hand-written `## Notes` stay."""
    startups = [v for r in rows for v in r["startup_s"].values() if v is not None]
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    result = {"machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
              "date": time.strftime("%Y-%m-%d"), "commit": commit,
              "load_average": os.getloadavg()[0], "left_out": left,
              "startup_s": min(startups) if startups else 0.0,
              "tables_s": max((r["tables_s"] or 0.0 for r in rows), default=0.0),
              "total": totals(rows), "modules": rows}
    cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text())
    if cpu:
        result["machine"] = cpu.group(1).strip()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    page = out.with_suffix(".md")
    notes = page.read_text().partition("\n## Notes\n") if page.exists() else ("", "", "")
    page.write_text(markdown(result) + (notes[1] + notes[2] if notes[1] else ""))
    return result

if __name__ == "__main__":
    sys.exit(main())
