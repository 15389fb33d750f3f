"""The `zmlir` command line: compile PTX, list targets."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import traceback
from collections.abc import Sequence

from zmlir.diagnostics import CompileError
from zmlir.files import write_atomically

# The compiler (and LLVM) loads only for the commands that compile: `run` and
# `libdir` work where only the runtime is installed.


def _cmd_compile(args: argparse.Namespace) -> int:
    if args.input == "-":
        text, filename = sys.stdin.read(), "<stdin>"
    else:
        with open(args.input, encoding="utf-8", errors="replace") as f:
            text = f.read()
        filename = args.input
    if args.jobs > 1:
        from zmlir.frontend import stream

        if len(text) >= stream.STREAM_MIN_BYTES:  # streamed, in workers
            stream.start_workers()  # their server imports the frontend while MLIR loads
    from zmlir.compiler import compile_module

    module = compile_module(text, args.target, emit=args.emit, filename=filename,
                            jobs=max(1, args.jobs))
    result = module.stages[args.emit]
    data = result if isinstance(result, bytes) else result.encode()
    if args.output in (None, "-"):
        if args.emit == "bin" and not module.target.binary_is_text and sys.stdout.isatty():
            raise CompileError("refusing to write a binary to a terminal; use -o FILE",
                               filename)
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        write_atomically(args.output, data)
    return 0


def _cmd_targets(_: argparse.Namespace) -> int:
    from zmlir.targets import targets

    for name, cls in sorted(targets().items()):
        arch = f" (default arch {cls.default_arch})" if cls.default_arch else ""
        doc = ((cls.__module__ and sys.modules[cls.__module__].__doc__) or "").strip()
        summary = doc.splitlines()[0] if doc else ""
        print(f"{name}{arch}: {summary}")
    return 0


def _ensure_libcuda() -> str:
    """The directory holding our libcuda.so.1 and our cuBLAS, built on first use
    (cuBLAS where its headers and the host BLAS are installed)."""
    from zmlir.libraries import build as libraries
    from zmlir.runtime.cuda import build

    directory = build.library_dir()
    if not all((directory / name).exists() for name in (build.SONAME, build.IMPLEMENTATION)):
        build.build()
    if not libraries.built(directory):
        # Each library its dependencies allow, once: one that cannot be built
        # here (no oneMKL for cuFFT) is said under ZMLIR_LOG and tried again
        # at the next run, without rebuilding the others.
        try:
            libraries.build(allow_missing=True, only_missing=True,
                            quiet=not os.environ.get("ZMLIR_LOG"))
        except libraries.MissingDependency as err:  # what every library needs
            if os.environ.get("ZMLIR_LOG"):
                print(f"zmlir: no cuBLAS, cuBLASLt or cuFFT: {err} is missing", file=sys.stderr)
        except subprocess.CalledProcessError as err:  # a program without them still runs
            print(f"zmlir: warning: building cuBLAS/cuFFT failed: {err}", file=sys.stderr)
    return str(directory)


def _cmd_libdir(_: argparse.Namespace) -> int:
    print(_ensure_libcuda())
    return 0


def _nvcc_standin(env: dict[str, str]) -> None:
    """Where NVIDIA's nvcc is on PATH, puts ours before it: `nvcc --cubin`
    (pycuda's SourceModule) gives PTX (runtime/cuda/nvcc_standin.py), in a
    view of the toolkit (made in zmlir's cache; where it cannot be, in none)."""
    from zmlir.files import cache_dir, private_dir
    from zmlir.runtime.cuda import nvcc_standin

    real = env.get("ZMLIR_REAL_NVCC") or nvcc_standin.real_nvcc(env.get("PATH", ""))
    if real is None or not os.access(nvcc_standin.SCRIPT, os.X_OK):
        return
    try:
        for level in (cache_dir(), cache_dir() / "nvcc"):
            private_dir(level)
        ours = nvcc_standin.toolkit_view(real, str(cache_dir() / "nvcc"))
    except OSError:
        ours = os.path.dirname(nvcc_standin.SCRIPT)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != ours]
    env["PATH"] = os.pathsep.join((ours, *path))
    env["ZMLIR_REAL_NVCC"] = real
    env["ZMLIR_PYTHON"] = sys.executable


def _cmd_run(args: argparse.Namespace) -> int:
    command = [a for a in args.command if a != "--"] if args.command[:1] == ["--"] else args.command
    if not command:
        raise ValueError("zmlir run: no program given (usage: zmlir run -- ./app [args])")
    env = dict(os.environ)
    libdir = _ensure_libcuda()
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (libdir, env.get("LD_LIBRARY_PATH", "")) if p)
    # NVRTC compiles for a real GPU hand out PTX (runtime/cuda/nvrtc_preload.c).
    from zmlir.runtime.cuda.build import NVRTC_PRELOAD

    preload = os.path.join(libdir, NVRTC_PRELOAD)
    if os.path.exists(preload):
        env["LD_PRELOAD"] = " ".join(p for p in (preload, env.get("LD_PRELOAD", "")) if p)
    _nvcc_standin(env)
    sys.stdout.flush()
    try:
        os.execvpe(command[0], command, env)
    except FileNotFoundError:
        raise ValueError(f"zmlir run: program not found: {command[0]}") from None
    return 0  # not reached


def _cmd_report(args: argparse.Namespace) -> int:
    from zmlir.trace.report import main as report

    return report(args.traces, args.compare, args.json, args.perfetto, args.top, args.exact)


def _cmd_trace(args: argparse.Namespace) -> int:
    from zmlir.trace.interposer import run

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    return run(command, args.output, args.real_libcuda)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="zmlir", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile", help="compile a PTX file")
    c.add_argument("input", help="PTX file, or - for standard input")
    c.add_argument("--target", "-t", default="spirv",
                   help="spirv, nvptx[:sm_XX] or amdgpu:gfxNNN (default: spirv)")
    c.add_argument("--emit", default="bin",
                   help="stage to stop at: ptx-mlir, std-mlir, llvm-mlir, llvm-ir, asm or bin "
                        "(default), or one the target adds")
    c.add_argument("-o", "--output", help="output file (default: standard output)")
    c.add_argument("-j", "--jobs", type=int, default=1,
                   help="worker processes importing a big module's functions (default: 1)")
    c.set_defaults(func=_cmd_compile)
    t = sub.add_parser("targets", help="list the code generation targets")
    t.set_defaults(func=_cmd_targets)
    r = sub.add_parser("run", help="run a CUDA program on zmlir's driver: zmlir run -- ./app")
    r.add_argument("command", nargs=argparse.REMAINDER, help="the program and its arguments")
    r.set_defaults(func=_cmd_run)
    lib = sub.add_parser("libdir", help="print the directory of zmlir's libcuda.so.1")
    lib.set_defaults(func=_cmd_libdir)
    rep = sub.add_parser("report", help="summarize driver API traces (ZMLIR_TRACE files)")
    rep.add_argument("traces", nargs="*", help="trace files (.jsonl)")
    rep.add_argument("--compare", metavar="B.jsonl", help="where the (first) trace and B diverge")
    rep.add_argument("--exact", action="store_true",
                     help="--compare: calls must also agree on key arguments (sizes, kernels)")
    rep.add_argument("--perfetto", metavar="OUT.json", help="write a Chrome/Perfetto trace")
    rep.add_argument("--json", action="store_true", help="machine-readable output")
    rep.add_argument("--top", type=int, help="show only the N most called APIs")
    rep.set_defaults(func=_cmd_report)
    tr = sub.add_parser("trace", help="trace a program on NVIDIA's driver: zmlir trace -- ./app")
    tr.add_argument("-o", "--output", default="zmlir-trace.jsonl", help="the trace file")
    tr.add_argument("--real-libcuda", help="NVIDIA's libcuda.so.1 (default: searched)")
    tr.add_argument("command", nargs=argparse.REMAINDER, help="the program and its arguments")
    tr.set_defaults(func=_cmd_trace)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CompileError as err:
        print(err, file=sys.stderr)
        return 1
    except (OSError, ValueError) as err:
        print(f"zmlir: error: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # a bug of ours: one line, details on request
        if os.environ.get("ZMLIR_DEBUG"):
            traceback.print_exc()
        print(f"zmlir: internal error: {type(err).__name__}: {err} "
              "(set ZMLIR_DEBUG=1 for details)", file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
