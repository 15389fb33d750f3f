"""Kernel speed on an NVIDIA GPU: nvcc's machine code against zmlir's NVPTX.

The same executables run twice on the GPU (bench/h200_kernel_speed.sh):
natively, on NVIDIA's driver with the sm_90 machine code nvcc put in them,
and under `zmlir run` through the CUDA passthrough (ZMLIR_BACKEND=cuda),
where the driver takes the compute_90 PTX beside that machine code and runs
what zmlir compiled it to (nvptx:sm_90, assembled by NVIDIA's driver). The
times are the programs' own: llm.c's dev/cuda programs time every kernel
with CUDA events (benchmark_kernel: L2 flushed, 10 to 1000 repetitions per
block size); of NVIDIA's cuda-samples those whose printed time comes from
CUDA events, and, apart, those that time a synchronized loop on the host.

  prepare WORK [--llmc CHECKOUT] [--samples DIR] [--cuda-libs DIR] [--only a,b]
      Here (nvcc, zmlir with LLVM): builds llm.c's dev/cuda programs as its
      Makefile does on an H200 (`-arch=sm_90`: sm_90 SASS and compute_90 PTX,
      bench/llmc.py's build), copies the chosen cuda-samples from DIR (built
      by `bench/cuda_samples.py build CHECKOUT OUT --arch sm_90`: DIR is
      OUT/sm_90), compiles every PTX the driver may pick from them to NVPTX
      for sm_90 into WORK/kernel_speed/nvptx (runtime/backends/
      nvptx_cache.py), writes the runs (WORK/kernel_speed/plan.txt) and packs
      it all into WORK/kernel_speed.tar.xz for the GPU machine. --only: those
      programs' runs alone (with matrixMul, which brings the GPU's clocks up).

  parse LOG... [--json FILE] [--md FILE]
      Reads the logs h200_kernel_speed.sh wrote (a later log's run of a
      program replaces an earlier one's; a program run several times in
      one log, ROUNDS=N, counts each time's median); per kernel the ratio of
      NVIDIA's time to zmlir's (native/zmlir: above 1, zmlir's is faster),
      their geometric mean over the event-timed kernels and the smallest;
      writes the JSON and the Markdown table. A zmlir run counts only where
      every module came from the NVPTX cache (ZMLIR_LOG's lines) and none
      fell back to NVIDIA's machine code, and the program passed.

  remaining PLAN LOG...
      The lines of PLAN (the tarball's plan.txt) those logs list as not run
      (time limit): the PLAN of the next call, for a run split over calls.

  sass WORK [--only a,b]
      Per kernel of each program (or those --only names), here: what ptxas
      -O3 -v for sm_90 makes of nvcc's PTX and of zmlir's NVPTX (the cache's):
      SASS instructions (bench/ftz_sass.py's count), registers, spill
      stores and loads, and their sums; the first place to look for a kernel
      below 0.9. --fresh compiles zmlir's side with this checkout instead
      (nvptx:sm_90), for a compiler change's before and after.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

GPU = "sm_90"
NAME = "kernel_speed"

# llm.c dev/cuda: the kernel variants run (argv[1]); the first is the
# program's default. Variants that are cuBLAS alone (matmul_forward 2, 3,
# trimat_forward 0) are left out; attention_backward's default, 1, repeats
# the whole softmax backward per row (minutes): 7 instead. nccl_all_reduce
# calls NCCL. layernorm_backward 10 and matmul_backward_bias 9 (an illegal
# address) and global_norm 4 (its grid_size < 1024 assertion on 132 SMs)
# fail natively on the H200: left out.
LLMC_RUNS: dict[str, list[list[str]]] = {
    "gelu_forward": [[], ["2"]],
    "gelu_backward": [[], ["2"]],
    "residual_forward": [[], ["2"]],
    "encoder_forward": [[], ["3"]],
    "encoder_backward": [[], ["2"]],
    "layernorm_forward": [[], ["6"]],
    "layernorm_backward": [[]],
    "fused_residual_forward": [[], ["6"]],
    "global_norm": [[]],
    "matmul_backward_bias": [[]],
    "crossentropy_forward": [[]],
    "permute": [[]],
    "adamw": [[], ["2"]],
    "classifier_fused": [[], ["5"]],
    "crossentropy_softmax_backward": [[]],
    "matmul_forward": [[], ["4"]],
    "matmul_backward": [[]],
    "trimat_forward": [[], ["4"]],
    # Each of these ran about a minute on the H200 (natively: 27, 51, 59 s).
    "attention_backward": [["7"]],
    "attention_forward": [[], ["6"]],
    "softmax_forward": [[], ["8"]],
}
# Where a variant's time is also NVIDIA's cuBLAS (its machine code on both sides).
LLMC_CUBLAS = {"attention_backward 7": "cuBLAS batched GEMMs and our softmax backward",
               "attention_forward 6": "cuBLAS batched GEMMs and our softmax",
               "matmul_backward": "cuBLAS GEMMs and our bias reduction"}
# "block_size 256 | time 0.0123 ms", "sqrt_block_size 16 | time ...",
# "block_size 64 time ...", and the programs without block sizes: "time gpu X ms".
LLMC_TIME = re.compile(r"^(?:sqrt_)?block_size\s+(?P<label>\d+)\s*\|?\s*time\s+(?P<t>[\d.]+)\s*ms"
                       r"|^time(?: gpu)?\s+(?P<t2>[\d.]+)\s*ms", re.M)

# cuda-samples whose printed time is CUDA events: name -> (arguments, patterns).
# A pattern's group t is the time; its unit scales it to ms; a group label
# names the kernel where one program prints several (else they are numbered).
Pattern = tuple[str, str]  # (regex, unit)
EVENT_SAMPLES: dict[str, list[tuple[list[str], list[Pattern]]]] = {
    "matrixMul": [([], [(r"Time=\s*(?P<t>[\d.]+) msec", "ms")])],
    "transpose": [([], [(r"transpose (?P<label>\w[\w -]*?)\s*, Throughput.*?Time = (?P<t>[\d.]+) ms",
                         "ms")])],
    "shfl_scan": [([], [(r"(?P<label>Time) \(ms\): (?P<t>[\d.]+)", "ms"),
                        (r"Method: (?P<label>[\w ]+?)\s+Time \(GPU Timer\): (?P<t>[\d.]+) ms",
                         "ms")])],
    "stereoDisparity": [([], [(r"GPU processing time : (?P<t>[\d.]+) \(ms\)", "ms")])],
    "interval": [([], [(r"Time per equation: (?P<t>[\d.eE+-]+) us", "us")])],
    "radixSortThrust": [([], [(r"radixSortThrust, Throughput.*?Time = (?P<t>[\d.]+) s", "s")])],
    "simpleStreams": [([], [(r"^kernel:\s+(?P<t>[\d.]+)", "ms")])],
    "globalToShmemAsyncCopy": [([f"-kernel={k}"], [(r"Time=\s*(?P<t>[\d.]+) msec", "ms")])
                               for k in range(8)],
    "bf16TensorCoreGemm": [([], [(r"^Time: (?P<t>[\d.]+) ms", "ms")])],
    "cudaTensorCoreGemm": [([], [(r"^Time: (?P<t>[\d.]+) ms", "ms")])],
    "dmmaTensorCoreGemm": [([], [(r"^Time: (?P<t>[\d.]+) ms", "ms")])],
    "immaTensorCoreGemm": [([], [(r"^Time: (?P<t>[\d.]+) ms", "ms")])],
    "tf32TensorCoreGemm": [([], [(r"^Time: (?P<t>[\d.]+) ms", "ms")])],
    "StreamPriorities": [([], [(r"launched to (?P<label>LOW|HI)\s+priority stream: (?P<t>[\d.]+) ms",
                                "ms")])],
    # 20 iterations of cudaMallocAsync x3, copies, a kernel, cudaFreeAsync x3
    # and a stream synchronisation, between two events.
    "streamOrderedAllocation": [([], [(r"Total elapsed time = (?P<t>[\d.]+) ms", "ms")])],
}
# cuda-samples that time a loop of launches on the host (sdkTimer after
# cudaDeviceSynchronize): a second figure, not in the goal's geomean.
HOST_SAMPLES: dict[str, list[tuple[list[str], list[Pattern]]]] = {
    "BlackScholes": [([], [(r"BlackScholesGPU\(\) time\s*: (?P<t>[\d.]+) msec", "ms")])],
    "binomialOptions": [([], [(r"binomialOptionsGPU\(\) time: (?P<t>[\d.]+) msec", "ms")])],
    "convolutionSeparable": [([], [(r"convolutionSeparable, Throughput.*?Time = (?P<t>[\d.]+) s",
                                    "s")])],
    "convolutionTexture": [([], [(r"Average (?P<label>convolution\w+GPU)\(\) time: (?P<t>[\d.]+) msecs",
                                  "ms")])],
    "fastWalshTransform": [([], [(r"GPU time: (?P<t>[\d.]+) ms", "ms")])],
    "histogram": [([], [(r"(?P<label>histogram\d+)\(\) time \(average\) : (?P<t>[\d.]+) sec", "s")])],
    "mergeSort": [([], [(r"^Time: (?P<t>[\d.]+) ms", "ms")])],
    "quasirandomGenerator": [([], [(r"(?P<label>quasirandomGenerator(?:-inverse)?), Throughput.*?"
                                    r"Time = (?P<t>[\d.]+) s", "s")])],
    "reduction": [([], [(r"Reduction, Throughput.*?Time = (?P<t>[\d.]+) s", "s")])],
    "scalarProd": [([], [(r"GPU time: (?P<t>[\d.]+) msecs", "ms")])],
    "scan": [([], [(r"scan, Throughput.*?Time = (?P<t>[\d.]+) s, Size = (?P<label>\d+) Elements",
                    "s")])],
    "sortingNetworks": [([], [(r"Average time: (?P<t>[\d.]+) ms", "ms")])],
    "dct8x8": [([], [(r"Processing time \((?P<label>CUDA[\w ]*?)\)\s*: (?P<t>[\d.]+) ms", "ms")])],
    "alignedTypes": [([], [(r"Avg\. time: (?P<t>[\d.]+) ms", "ms")])],
    "dxtc": [([], [(r"dxtc, Throughput.*?Time = (?P<t>[\d.]+) s", "s")])],
    "threadFenceReduction": [([], [(r"Average time: (?P<t>[\d.]+) ms", "ms")])],
    "eigenvalues": [([], [(r"Average time (?P<label>step [^:]+): (?P<t>[\d.]+) ms", "ms")])],
    "lineOfSight": [([], [(r"Average time: (?P<t>[\d.]+) ms", "ms")])],
    "MonteCarloMultiGPU": [([], [(r"Total time \(ms\.\): (?P<t>[\d.]+)", "ms")])],
    "reductionMultiBlockCG": [([], [(r"Average time: (?P<t>[\d.]+) ms", "ms")])],
    # Its three ways: a graph with new kernel node parameters (0), a graph
    # updated from a stream capture per iteration (1), stream launches (2).
    "jacobiCudaGraphs": [([f"-gpumethod={m}"], [(r"GPU Processing time: (?P<t>[\d.]+) \(ms\)",
                                                 "ms")]) for m in (0, 1, 2)],
}
UNIT_MS = {"ms": 1.0, "s": 1000.0, "us": 1e-3}
# Runs of half a minute or more a side on the H200 (a CPU reference, a naive
# kernel, wmma emulated under zmlir): after the others, so that a run cut
# short by its time limit loses few kernels.
SLOW = {"stereoDisparity", "bf16TensorCoreGemm", "cudaTensorCoreGemm", "dmmaTensorCoreGemm",
        "immaTensorCoreGemm", "tf32TensorCoreGemm", "attention_backward", "attention_forward",
        "softmax_forward"}
GOAL_GEOMEAN, GOAL_MIN = 0.97, 0.9


def run_id(program: str, args: list[str]) -> str:
    return " ".join([program, *args])


def plan() -> list[tuple[str, str, list[str]]]:
    """(suite, program, arguments) in the order the GPU machine runs them:
    the event-timed samples and llm.c's defaults first, host-timed last (a
    run cut short by its time limit loses those)."""
    runs = [("events", name, args) for name, variants in EVENT_SAMPLES.items()
            for args, _ in variants if name not in SLOW]
    runs += [("llmc", name, variants[0]) for name, variants in LLMC_RUNS.items()
             if name not in SLOW]
    runs += [("llmc", name, args) for name, variants in LLMC_RUNS.items()
             for args in variants[1:] if name not in SLOW]
    runs += [("events" if name in EVENT_SAMPLES else "llmc", name, args)
             for table in (EVENT_SAMPLES, LLMC_RUNS) for name, variants in table.items()
             if name in SLOW for args in (a if table is LLMC_RUNS else a[0] for a in variants)]
    runs += [("host", name, args) for name, variants in HOST_SAMPLES.items()
             for args, _ in variants]
    return runs


# -- prepare (here) ----------------------------------------------------------------

def prepare(work: Path, checkout: Path, samples: Path, cuda_libs: Path | None,
            only: set[str]) -> int:
    """Builds and packs the plan's programs (those named in `only`, if any,
    and matrixMul, which h200_kernel_speed.sh runs first for the clocks)."""
    if only:
        only = {*only, "matrixMul"}
    import llmc

    import zmlir
    from tools.run_programs_passthrough import driver_ptx_texts
    from zmlir.runtime.backends import nvptx_cache
    from zmlir.runtime.cuda.module import keyed_ptx

    root = work / NAME
    (root / "llmc").mkdir(parents=True, exist_ok=True)
    (root / "samples").mkdir(parents=True, exist_ok=True)
    if cuda_libs is not None:
        headers = cuda_libs / "include"
    else:
        from zmlir.libraries.build import nvidia_wheel_dir

        wheel = nvidia_wheel_dir()
        if wheel is None:
            raise SystemExit("no nvidia-cublas wheel installed: give --cuda-libs")
        headers = wheel / "include"
    libdir = llmc.our_libdir()
    exes: list[Path] = []
    for name in LLMC_RUNS:
        if only and name not in only:
            continue
        source = checkout / "dev" / "cuda" / f"{name}.cu"
        exe = root / "llmc" / name
        if not exe.exists() or exe.stat().st_mtime < source.stat().st_mtime:
            error = llmc.build(source, root / "llmc", GPU, headers, libdir)
            if error:
                raise SystemExit(f"{name}: nvcc: {error}")
        exes.append(exe)
    for name in [*EVENT_SAMPLES, *HOST_SAMPLES]:
        if only and name not in only:
            continue
        if not (samples / name / name).exists():
            raise SystemExit(f"{samples / name / name}: not built (bench/cuda_samples.py build "
                             f"--arch {GPU})")
        target = root / "samples" / name
        if not target.exists():
            shutil.copytree(samples / name, target,
                            ignore=shutil.ignore_patterns("zmlir-run.log"))
        exes.append(target / name)
    cache = root / "nvptx"
    failures = 0
    for exe in exes:
        texts = driver_ptx_texts(exe, relocatable=True, gpu_sm=int(GPU[3:]))
        if not texts:
            print(f"{exe.name}: no PTX the driver would pick")
            failures += 1
        for index, text in enumerate(texts):
            text, key = keyed_ptx(text)
            for target in nvptx_cache.targets(text, GPU):
                if (cache / f"{key}.{target.partition(':')[2]}.json").exists():
                    continue
                started = time.perf_counter()
                try:
                    compiled = zmlir.compile_module(text, target,
                                                    filename=f"{exe.name}.{index}.ptx")
                except zmlir.CompileError as err:
                    print(f"{exe.name}: module {index}: {str(err).splitlines()[0]}")
                    failures += 1
                    continue
                nvptx_cache.store(cache, key, compiled, source=f"{exe.name}.{index}.ptx")
                print(f"{exe.name}: module {index} compiled for {target} "
                      f"({time.perf_counter() - started:.0f} s)", flush=True)
    lines = []
    for suite, name, args in plan():
        if only and name not in only:
            continue
        folder = "llmc" if suite == "llmc" else f"samples/{name}"
        lines.append("\t".join([suite, folder, name, *args]))
    (root / "plan.txt").write_text("\n".join(lines) + "\n")
    tarball = work / f"{NAME}.tar.xz"
    subprocess.run(["tar", "-C", str(work), "-cJf", str(tarball), NAME], check=True)
    print(f"{tarball}: {tarball.stat().st_size / 2**20:.1f} MiB, {len(lines)} runs")
    return 1 if failures else 0


# -- parse (here, of the GPU machine's log) --------------------------------------------

@dataclass
class Side:
    rc: int = -1
    seconds: float = 0.0
    output: str = ""


@dataclass
class Run:
    suite: str
    program: str
    args: list[str]
    # Each side's runs in one log, in order (ROUNDS=N runs each N times).
    sides: dict[str, list[Side]] = field(default_factory=dict)


HEADER = re.compile(r"^=== (?P<side>native|zmlir) (?P<suite>\w+)\t(?P<run>[^\n]*?) rc=(?P<rc>-?\d+) "
                    r"seconds=(?P<s>[\d.]+)$", re.M)


def read_log(text: str) -> list[Run]:
    runs: dict[str, Run] = {}
    marks = list(HEADER.finditer(text))
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        words = mark.group("run").split("\t")
        key = mark.group("suite") + " " + " ".join(words)
        run = runs.setdefault(key, Run(mark.group("suite"), words[0], words[1:]))
        run.sides.setdefault(mark.group("side"), []).append(
            Side(int(mark.group("rc")), float(mark.group("s")), text[mark.end():end]))
    return list(runs.values())


def times(run: Run, output: str) -> dict[str, float]:
    """Label -> ms of each time the program printed."""
    found: dict[str, float] = {}
    if run.suite == "llmc":
        for m in LLMC_TIME.finditer(output):
            found[m.group("label") or "-"] = float(m.group("t") or m.group("t2"))
        return found
    table = EVENT_SAMPLES if run.suite == "events" else HOST_SAMPLES
    patterns = next(p for args, p in table[run.program] if args == run.args)
    for regex, unit in patterns:
        matches = list(re.finditer(regex, output, re.M))
        for number, m in enumerate(matches):
            label = m.groupdict().get("label") or (str(number + 1) if len(matches) > 1 else "-")
            found[label.strip()] = float(m.group("t")) * UNIT_MS[unit]
    return found


def median_times(run: Run, sides: list[Side]) -> dict[str, float]:
    """Label -> the median over the runs of each time every run printed (a
    short region's single run moves by more than the sides differ)."""
    each = [times(run, side.output) for side in sides]
    return {label: statistics.median(t[label] for t in each)
            for label in each[0] if all(label in t for t in each)}


# A module our driver did not find precompiled, then ran as NVIDIA's machine
# code: in llm.c's programs an image of NVIDIA's cuBLAS (named image@, where
# the program's own fatbins are fatbin@) that holds PTX besides its SASS.
_LIBRARY_MACHINE_CODE = re.compile(
    r"not in the NVPTX cache\n(?:zmlir: (?:unsupported: )?export table[^\n]*\n)*"
    r"zmlir: image@0x[0-9a-f]+\.sm_\d+: NVIDIA's machine code, loaded as it is")


def zmlir_trouble(run: Run, output: str) -> str:
    """Why a zmlir run does not count ("" where it does)."""
    misses = output.count("not in the NVPTX cache")
    if run.suite == "llmc":
        misses -= len(_LIBRARY_MACHINE_CODE.findall(output))
    if misses:
        return "a module not in the NVPTX cache"
    if "NVIDIA's machine code, loaded as it is" in output and run.suite != "llmc":
        return "a module fell back to NVIDIA's machine code"
    if "precompiled for nvptx" not in output:
        return "no module from the NVPTX cache"
    return ""


def passed(side: Side) -> bool:
    return side.rc == 0  # llm.c's programs exit 1 at a mismatch, the samples at a failure


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def _sig(value: float) -> float:
    """Four significant digits (a ratio of 1e-4 stays one)."""
    return float(f"{value:.4g}")


def analyse(logged: list[Run]) -> list[dict]:
    """One row per kernel of each planned run (a run the log lacks: not run)."""
    by_key = {(r.suite, r.program, tuple(r.args)): r for r in logged}
    runs = [by_key.get((suite, name, tuple(args)), Run(suite, name, args))
            for suite, name, args in plan()]
    rows = []
    for run in runs:
        native, ours = run.sides.get("native", []), run.sides.get("zmlir", [])
        name = run_id(run.program, run.args)
        base = {"suite": run.suite, "program": name}
        if not native or not ours:
            rows.append({**base, "kernel": name, "ratio": None, "why": "not run (time limit)"})
            continue
        rounds = min(len(native), len(ours))
        if rounds > 1:
            base["runs"] = rounds
        failed_native = next((side for side in native if not passed(side)), None)
        failed_ours = next((side for side in ours if not passed(side)), None)
        trouble = next(filter(None, (zmlir_trouble(run, side.output) for side in ours)), "")
        why = ("" if failed_native is None else f"native failed (exit {failed_native.rc})") or \
              ("" if failed_ours is None else f"zmlir failed (exit {failed_ours.rc})") or trouble
        t_native, t_ours = median_times(run, native), median_times(run, ours)
        labels = [label for label in t_native if label in t_ours]
        if not labels:
            rows.append({**base, "kernel": name, "ratio": None,
                         "why": why or "no time printed on both sides"})
            continue
        if run.suite == "llmc":  # one kernel: the geomean over its block sizes
            ratios = [t_native[lb] / t_ours[lb] for lb in labels if t_ours[lb] > 0]
            rows.append({**base, "kernel": name,
                         "ratio": None if why else _sig(geomean(ratios)),
                         "native_ms": {lb: t_native[lb] for lb in labels},
                         "zmlir_ms": {lb: t_ours[lb] for lb in labels},
                         "best_ratio": _sig(min(t_native.values()) / min(t_ours.values())),
                         "why": why, "note": LLMC_CUBLAS.get(name, "")})
            continue
        for lb in labels:
            kernel = name if lb == "-" else f"{name} / {lb}"
            ratio = t_native[lb] / t_ours[lb] if t_ours[lb] > 0 else None
            rows.append({**base, "kernel": kernel,
                         "ratio": None if why or ratio is None else _sig(ratio),
                         "native_ms": t_native[lb], "zmlir_ms": t_ours[lb], "why": why})
    return rows


def summary(rows: list[dict], suites: tuple[str, ...]) -> dict:
    measured = [r for r in rows if r["suite"] in suites and r["ratio"] is not None]
    values = [r["ratio"] for r in measured]
    low = min(measured, key=lambda r: r["ratio"]) if measured else None
    # Our code alone: less the kernels whose gap is the driver's or NVIDIA's (the reasons).
    code = [r["ratio"] for r in measured if r.get("cause") not in ("driver", "not ours")]
    return {"kernels": len(values), "geomean": _sig(geomean(values)) if values else None,
            "code_kernels": len(code), "code_geomean": _sig(geomean(code)) if code else None,
            "min": low["ratio"] if low else None, "min_kernel": low["kernel"] if low else None,
            "below_0.9": sorted(r["kernel"] for r in measured if r["ratio"] < GOAL_MIN),
            "unmeasured": sorted(r["kernel"] for r in rows
                                 if r["suite"] in suites and r["ratio"] is None)}


def parse(logs: list[Path], out_json: Path, out_md: Path, reasons: Path | None) -> int:
    texts = [path.read_text(errors="replace") for path in logs]
    logged = [run for text in texts for run in read_log(text)]  # a later log's run wins
    rows = analyse(logged)
    why_slow = json.loads(reasons.read_text()) if reasons and reasons.exists() else {}
    for row in rows:
        if row["kernel"] in why_slow and row["ratio"] is not None:
            row["cause"] = why_slow[row["kernel"]]["cause"]
    head = texts[0].split("=== ", 1)[0].strip().splitlines()
    goal = summary(rows, ("events", "llmc"))
    host = summary(rows, ("host",))
    names = [str(path.resolve().relative_to(REPO)) if path.resolve().is_relative_to(REPO)
             else path.name for path in logs]
    result = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "machine": head, "logs": names,
              "goal": {"geomean_at_least": GOAL_GEOMEAN, "min_at_least": GOAL_MIN},
              "events": goal, "host_timed": host, "kernels": rows, "reasons": why_slow}
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(result, indent=1) + "\n")
    out_md.write_text(markdown(result))
    for label, s in (("event-timed (goal)", goal), ("host-timed", host)):
        print(f"{label}: {s['kernels']} kernels, geomean native/zmlir {s['geomean']}, "
              f"min {s['min']} ({s['min_kernel']}), below 0.9: {len(s['below_0.9'])}, "
              f"unmeasured: {len(s['unmeasured'])}")
    return 0


def _fmt(value: object) -> str:
    if isinstance(value, dict):
        return " ".join(f"{v:.4g}" for v in value.values())
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def markdown(result: dict) -> str:
    goal, host = result["events"], result["host_timed"]

    def verdict(s: dict) -> str:
        if not s["kernels"]:
            return "nothing measured"
        gap_mean = s["geomean"] - GOAL_GEOMEAN
        gap_min = s["min"] - GOAL_MIN
        code = (f"; less the {s['kernels'] - s['code_kernels']} whose gap is the driver's "
                f"or NVIDIA's cuBLAS (below), {s['code_geomean']:.3f} over {s['code_kernels']}"
                if s["code_kernels"] < s["kernels"] else "")
        return (f"geomean native/zmlir **{s['geomean']:.3g}** over {s['kernels']} kernels "
                f"(goal ≥ {GOAL_GEOMEAN}: {'met' if gap_mean >= 0 else f'short by {-gap_mean:.3f}'}), "
                f"smallest **{s['min']:.3g}** ({s['min_kernel']}; goal ≥ {GOAL_MIN}: "
                f"{'met' if gap_min >= 0 else f'short by {-gap_min:.3f}'}), "
                f"{len(s['below_0.9'])} below 0.9{code}")

    gpu = next((m.split(",")[0].removeprefix("NVIDIA ") for m in result["machine"]
                if m.startswith("NVIDIA ")), "NVIDIA GPU")
    lines = [f"# Kernel speed on an {gpu}: nvcc's machine code against zmlir's", "",
             f"Written by `bench/kernel_speed.py parse` ({result['date']}) from the logs of "
             "`bench/h200_kernel_speed.sh` (" + ", ".join(f"`{n}`" for n in result["logs"]) +
             "). The same executables, built with `nvcc -arch=sm_90` "
             "(sm_90 SASS and compute_90 PTX), run natively on NVIDIA's driver (its SASS) and "
             "under `zmlir run` through the CUDA passthrough (zmlir compiles the compute_90 PTX "
             "to NVPTX for sm_90; NVIDIA's driver assembles that). Times are the programs' own; "
             "ratio = native time / zmlir time (above 1: zmlir faster). An llm.c kernel's ratio "
             "is the geomean over its block sizes (each 10 to 1000 repetitions, L2 flushed).", "",
             "Machine: " + "; ".join(result["machine"]), "",
             f"- **Event-timed** (llm.c dev/cuda and cuda-samples timed with CUDA events; "
             f"the issue's goal): {verdict(goal)}.",
             f"- Host-timed cuda-samples (a synchronized loop on sdkTimer; not in the goal): "
             f"{verdict(host)}.", ""]
    if goal["unmeasured"] or host["unmeasured"]:
        lines += ["Not measured: " + ", ".join(goal["unmeasured"] + host["unmeasured"]) + ".", ""]
    reasons = result.get("reasons", {})
    if reasons:
        lines += ["## Kernels that were or are slower: why", "",
                  "Found by reading the code and `bench/kernel_speed.py sass` (ptxas -O3 for "
                  "sm_90 of nvcc's PTX and of ours: SASS instructions, registers, spills). "
                  "codegen: our NVPTX; driver: our driver's work inside the timed region; "
                  "not ours: NVIDIA's library on our driver.", ""]
        lines += [f"- **{k}** ({v['cause']}): {v['why']}." for k, v in reasons.items()]
        lines.append("")
    for suite, title in (("llmc", "llm.c dev/cuda (CUDA events)"),
                         ("events", "cuda-samples timed with CUDA events"),
                         ("host", "cuda-samples timed on the host")):
        lines += [f"## {title}", "", "| kernel | native ms | zmlir ms | native/zmlir | note |",
                  "|---|---|---|---|---|"]
        for r in (r for r in result["kernels"] if r["suite"] == suite):
            ratio = f"{r['ratio']:.3g}" if r["ratio"] else "-"
            if r["ratio"] and r["ratio"] < GOAL_MIN:
                ratio = f"**{ratio}**"
            runs = f"median of {r['runs']} runs" if r.get("runs") else ""
            note = "; ".join(x for x in (r.get("why", ""), r.get("note", ""), runs) if x)
            lines.append(f"| {r['kernel']} | {_fmt(r.get('native_ms', '-'))} | "
                         f"{_fmt(r.get('zmlir_ms', '-'))} | {ratio} | {note} |")
        lines.append("")
    return "\n".join(lines)


# -- sass (here): what ptxas makes of each side's PTX ---------------------------------

PTXAS_FUNCTION = re.compile(r"Compiling entry function '(\w+)'")
PTXAS_REGISTERS = re.compile(r"Used (\d+) registers")
PTXAS_SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def ptxas_stats(ptx: str, work: Path, stem: str) -> dict[str, dict[str, int]]:
    """Kernel -> SASS instructions, registers, spill bytes of ptxas -O3 for GPU."""
    from ftz_sass import instruction_count, text_sections

    source, cubin = work / f"{stem}.ptx", work / f"{stem}.cubin"
    source.write_text(ptx)
    done = subprocess.run(["ptxas", f"-arch={GPU}", "-O3", "-v", str(source), "-o", str(cubin)],
                          check=True, capture_output=True, text=True)
    stats: dict[str, dict[str, int]] = {}
    kernel = ""
    for line in done.stderr.splitlines():
        if m := PTXAS_FUNCTION.search(line):
            kernel = m.group(1)
            stats[kernel] = {}
        elif kernel and (m := PTXAS_REGISTERS.search(line)):
            stats[kernel]["registers"] = int(m.group(1))
        elif kernel and (m := PTXAS_SPILLS.search(line)):
            stats[kernel]["spill_bytes"] = int(m.group(1)) + int(m.group(2))
    for name, code in text_sections(cubin.read_bytes()).items():
        stats.setdefault(name, {})["sass"] = instruction_count(code)
    return stats


def sass(work: Path, only: set[str], fresh: bool = False) -> int:
    import tempfile

    from tools.run_programs_passthrough import driver_ptx_texts
    from zmlir.runtime.backends import nvptx_cache
    from zmlir.runtime.cuda.module import keyed_ptx

    root = work / NAME
    exes = [root / "llmc" / n for n in LLMC_RUNS]
    exes += [root / "samples" / n / n for n in [*EVENT_SAMPLES, *HOST_SAMPLES]]
    scratch = Path(tempfile.mkdtemp(prefix="kernel_speed_sass_"))
    print("| program | kernel | SASS nvcc | SASS zmlir | regs nvcc | regs zmlir "
          "| spill bytes nvcc | spill bytes zmlir |")
    print("|---|---|---|---|---|---|---|---|")
    totals = {"kernels": 0, "sass": [0, 0], "registers": [0, 0], "more": 0, "fewer": 0}
    for exe in exes:
        if only and exe.name not in only:
            continue
        for index, text in enumerate(driver_ptx_texts(exe, relocatable=True, gpu_sm=int(GPU[3:]))):
            text, key = keyed_ptx(text)
            # What the passthrough runs by default: a module with texture
            # instructions uses NVIDIA's (+native-textures, the last).
            target = nvptx_cache.targets(text, GPU)[-1]
            ours = root / "nvptx" / f"{key}.{target.split(':', 1)[1]}.ptx"
            if fresh:
                import zmlir

                try:
                    ours_text = zmlir.compile_module(text, target,
                                                     filename=f"{exe.name}.{index}.ptx").binary
                except zmlir.CompileError as err:
                    print(f"{exe.name}: module {index}: {str(err).splitlines()[0]}")
                    continue
                ours_text = ours_text.decode() if isinstance(ours_text, bytes) else ours_text
            elif ours.exists():
                ours_text = ours.read_text(errors="replace")
            else:
                continue
            theirs_stats = ptxas_stats(text, scratch, f"{exe.name}.{index}.nvcc")
            ours_stats = ptxas_stats(ours_text, scratch, f"{exe.name}.{index}.zmlir")
            for kernel in sorted(theirs_stats):
                a, b = theirs_stats[kernel], ours_stats.get(kernel, {})
                print(f"| {exe.name} | {kernel[:60]} | {a.get('sass', '-')} | {b.get('sass', '-')} "
                      f"| {a.get('registers', '-')} | {b.get('registers', '-')} "
                      f"| {a.get('spill_bytes', 0)} | {b.get('spill_bytes', '-')} |", flush=True)
                if "sass" in b and "registers" in b and "registers" in a:
                    totals["kernels"] += 1
                    totals["sass"][0] += a["sass"]
                    totals["sass"][1] += b["sass"]
                    totals["registers"][0] += a["registers"]
                    totals["registers"][1] += b["registers"]
                    totals["more"] += b["registers"] > a["registers"]
                    totals["fewer"] += b["registers"] < a["registers"]
    print(f"\n{totals['kernels']} kernels: SASS nvcc {totals['sass'][0]}, zmlir "
          f"{totals['sass'][1]}; registers nvcc {totals['registers'][0]}, zmlir "
          f"{totals['registers'][1]}; zmlir more registers in {totals['more']}, "
          f"fewer in {totals['fewer']}")
    return 0


def remaining(plan: Path, logs: list[Path]) -> int:
    """Prints the lines of `plan` that the logs list as not run (time limit):
    the PLAN file of the next call of h200_kernel_speed.sh."""
    text = "".join(log.read_text(errors="replace") for log in logs)
    not_run = {m[1].strip() for m in re.finditer(r"not run \(time limit\): ([^\n]*)", text)}
    for line in plan.read_text().splitlines():
        suite, _folder, name, *args = line.split("\t")
        if " ".join([suite, name, *args]) in not_run:
            print(line)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("work", type=Path)
    p.add_argument("--llmc", type=Path, default=Path("/work/src/llm.c"))
    p.add_argument("--samples", type=Path, default=Path("/work/samples/sm_90"))
    p.add_argument("--cuda-libs", type=Path)
    p.add_argument("--only", default="", help="programs (a,b): a rerun of some")
    r = sub.add_parser("parse")
    r.add_argument("logs", type=Path, nargs="+", help="logs of h200_kernel_speed.sh, in order")
    r.add_argument("--json", type=Path, default=REPO / "bench/results/h200/kernel_speed.json")
    r.add_argument("--md", type=Path, default=REPO / "bench/results/kernel_speed_h200.md")
    r.add_argument("--reasons", type=Path,
                   default=REPO / "bench/results/h200/kernel_speed_reasons.json",
                   help="a JSON object: kernel -> {cause: codegen|driver|not ours, why}")
    m = sub.add_parser("remaining")
    m.add_argument("plan", type=Path, help="the tarball's plan.txt")
    m.add_argument("logs", type=Path, nargs="+")
    q = sub.add_parser("sass")
    q.add_argument("work", type=Path)
    q.add_argument("--only", default="")
    q.add_argument("--fresh", action="store_true",
                   help="compile zmlir's side now (this checkout), not the cache's")
    args = parser.parse_args()
    if args.command == "sass":
        return sass(args.work.resolve(), {n for n in args.only.split(",") if n}, args.fresh)
    if args.command == "remaining":
        return remaining(args.plan, args.logs)
    if args.command == "prepare":
        return prepare(args.work.resolve(), args.llmc, args.samples, args.cuda_libs,
                       {n for n in args.only.split(",") if n})
    return parse(args.logs, args.json, args.md, args.reasons)


if __name__ == "__main__":
    sys.exit(main())
