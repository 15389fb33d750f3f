"""Runs our unmodified CUDA test programs (test/cuda/programs) on a real
NVIDIA GPU through zmlir's CUDA passthrough backend (ZMLIR_BACKEND=cuda).

The NVIDIA machine may have nvcc and the driver but no LLVM/MLIR to run
zmlir's compiler, so the work is split in two:

  prepare DIR [--arch sm_90 ...]
      Here (nvcc + zmlir with LLVM 22): builds every program with nvcc, takes
      from each fatbin the PTX our driver will pick, compiles it with zmlir to
      NVPTX for each --arch (default sm_90, the H200) and stores it in
      DIR/nvptx keyed by the PTX's sha256 (see zmlir/runtime/backends/
      nvptx_cache.py). The binaries are kept in DIR/bin as well.

  run DIR [--prebuilt] [--python PY]
      On the NVIDIA machine: builds every program with nvcc (static and shared
      cudart; --prebuilt uses DIR/bin instead), checks that each one's PTX is
      in DIR/nvptx, runs it under `PY -m zmlir.cli run` with ZMLIR_BACKEND=cuda
      and ZMLIR_NVPTX_CACHE=DIR/nvptx, and prints PASS/FAIL per program and a
      total; exit status 1 if any failed. Logs go to DIR/logs, each with the
      backend's ZMLIR_LOG lines (device, NVIDIA driver path, module origin).

Both take `--only NAME,...`: those programs alone (a check of a few on a GPU,
with DIR/bin small enough to carry for --prebuilt).

The NVIDIA machine needs, besides nvcc and the driver: this repository at the
same path, a Python with numpy, and cffi + zstandard (+ setuptools to build
our libcuda.so.1 there against its own libpython), e.g. wheels downloaded
here with `pip download --only-binary=:all: --python-version 3.12 --platform
manylinux2014_x86_64 -d wheels cffi zstandard setuptools pycparser` and
installed there with `pip install --no-index --find-links wheels ...`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "test"))

from support.programs import Program, nvcc_arguments, programs  # noqa: E402

CUDARTS = ("static", "shared")
NVCC_ARCH = "sm_80"  # as test/runtime/test_runtime_cuda.py builds them
# Programs known not to run through the passthrough, with the reason: XFAIL
# when they fail (not counted as failures), XPASS (counted) when they pass.
PENDING: dict[str, str] = {}


def nvcc() -> str:
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("nvcc not found (PATH or /usr/local/cuda/bin)")


def build(program: Program, cudart: str, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / f"{program.name}.{cudart}"
    cmd = [nvcc(), f"-arch={NVCC_ARCH}", f"-cudart={cudart}", *nvcc_arguments(program),
           "-o", str(exe)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"nvcc failed for {program.name}:\n{result.stderr.strip()}")
    return exe


# -- the PTX our driver will load from a binary ----------------------------------

def elf_section(path: Path, wanted: str) -> bytes:
    """The contents of one section of a 64-bit little-endian ELF file."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(index: int) -> tuple[int, int, int]:
        base = shoff + index * shentsize
        name, = struct.unpack_from("<I", data, base)
        offset, size = struct.unpack_from("<QQ", data, base + 0x18)
        return name, offset, size

    _, names_offset, _ = header(shstrndx)
    for index in range(shnum):
        name, offset, size = header(index)
        end = data.index(b"\0", names_offset + name)
        if data[names_offset + name:end].decode() == wanted:
            return data[offset:offset + size]
    return b""


def ptx_keys(exe: Path) -> list[str]:
    """The nvptx_cache keys of the PTX the driver may pick from each fatbin in
    `exe` that has PTX (the same candidates and text as module._fatbin_ptx)."""
    from zmlir.runtime.cuda.module import keyed_ptx

    return [keyed_ptx(text)[1] for text in driver_ptx_texts(exe)]


def driver_ptx_texts(exe: Path, relocatable: bool = False, gpu_sm: int = 0) -> list[str]:
    """The PTX texts the driver may compile for `exe`'s fatbins: each one's
    candidates. With `relocatable` (-rdc) also its translation units' (in
    __nv_relfatbin) as the driver takes them (module.relocatable_units):
    linked into one text (link_relocatable), or one unit's candidates; as on
    a GPU of compute capability `gpu_sm` through the passthrough (presented
    as it is, NVIDIA's SASS for it runs), 0: on the CPU backend."""
    from zmlir.runtime.cuda import fatbin
    from zmlir.runtime.cuda.constants import COMPUTE_CAPABILITY
    from zmlir.runtime.cuda.errors import CudaError
    from zmlir.runtime.cuda.module import link_relocatable, relocatable_units

    reported_sm = gpu_sm or COMPUTE_CAPABILITY[0] * 10 + COMPUTE_CAPABILITY[1]

    def fatbins(section: bytes) -> list[list[fatbin.Entry]]:
        magic = struct.pack("<I", fatbin.FATBIN_MAGIC)
        found, offset = [], section.find(magic)
        while offset >= 0:
            size = fatbin.fatbin_size(section[offset:offset + 16])
            with contextlib.suppress(fatbin.FatbinError):  # not one we read
                found.append(fatbin.parse(section[offset:offset + size]))
            offset = section.find(magic, offset + size)
        return found

    def candidates(entries: list[fatbin.Entry]) -> list[str]:
        try:
            # Every candidate: the driver takes the first that compiles.
            return [e.ptx_text() for e in fatbin.ptx_candidates(entries, reported_sm)]
        except fatbin.FatbinError:
            # SASS only (static cudart brings one of its own): nothing we could
            # run, and nothing the program's kernels need.
            return []

    texts = [text for entries in fatbins(elf_section(exe, ".nv_fatbin"))
             for text in candidates(entries)]
    if not relocatable:
        return texts
    units = fatbins(elf_section(exe, "__nv_relfatbin"))
    linked = relocatable_units(units, gpu_sm, reported_sm)
    if len(linked) == 1:
        texts += [text for entries in units for text in candidates(entries)]
    elif linked:
        try:
            texts.append(link_relocatable(linked))
        except CudaError as err:  # the driver answers the same: nothing to compile
            print(f"{exe.name}: its units do not link: {str(err).splitlines()[0]}")
    return texts


# -- prepare (here) -----------------------------------------------------------------

def selected(only: str | None) -> list[Program]:
    """Every program, or those named in `only` (comma-separated)."""
    found = programs()
    if only is None:
        return found
    names = set(only.split(","))
    unknown = names - {p.name for p in found}
    if unknown:
        raise SystemExit(f"no such program: {', '.join(sorted(unknown))}")
    return [p for p in found if p.name in names]


def prepare(directory: Path, archs: list[str], only: str | None = None) -> int:
    import zmlir
    from zmlir.runtime.backends import nvptx_cache
    from zmlir.runtime.cuda.module import keyed_ptx

    cache_dir = directory / "nvptx"
    failures = 0
    for program in selected(only):
        for cudart in CUDARTS:
            exe = build(program, cudart, directory / "bin")
            relocatable = any(f.startswith("-rdc=true") for f in program.flags)
            texts = {text: None for arch in archs
                     for text in driver_ptx_texts(exe, relocatable, int(arch[3:]))}
            for index, text in enumerate(texts):
                text, key = keyed_ptx(text)
                for target in (t for arch in archs for t in nvptx_cache.targets(text, arch)):
                    if (cache_dir / f"{key}.{target.partition(':')[2]}.json").exists():
                        continue
                    name = f"{program.name}.{index}.ptx"
                    try:
                        compiled = zmlir.compile_module(text, target, filename=name)
                    except zmlir.CompileError as err:
                        print(f"{program.name}: cannot compile for {target}: {err}")
                        failures += 1
                        continue
                    nvptx_cache.store(cache_dir, key, compiled, source=name)
                    print(f"{program.name:20s} module {index} {target}: {key[:16]}…")
    print(f"prepared {len(list(cache_dir.glob('*.json')))} modules in {cache_dir}")
    return 1 if failures else 0


# -- run (on the NVIDIA machine) --------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    name: str
    passed: bool
    detail: str
    seconds: float
    backend: str = ""  # the backend's ZMLIR_LOG line: device, driver, cache


def run_one(exe: Path, python: str, cache_dir: Path, log_dir: Path) -> Outcome:
    # ZMLIR_LOG: the backend says which device and driver ran, and where
    # each module came from; it goes to the log.
    env = dict(os.environ, ZMLIR_BACKEND="cuda", ZMLIR_NVPTX_CACHE=str(cache_dir),
               ZMLIR_LOG="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    start = time.perf_counter()
    try:
        result = subprocess.run([python, "-m", "zmlir.cli", "run", "--", str(exe)], env=env,
                                capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return Outcome(exe.name, False, "timed out after 300 s", time.perf_counter() - start)
    seconds = time.perf_counter() - start
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / f"{exe.name}.log").write_text(
        f"exit {result.returncode}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}")
    passed = result.returncode == 0 and result.stdout.strip().endswith("PASS")
    lines = (result.stderr.strip() or result.stdout.strip() or f"exit {result.returncode}")
    detail = "" if passed else lines.splitlines()[-1]
    backend = next((line for line in result.stderr.splitlines()
                    if line.startswith("zmlir: cuda backend: ") and "through" in line), "")
    return Outcome(exe.name, passed, detail, seconds, backend)


def run(directory: Path, prebuilt: bool, python: str, only: str | None = None) -> int:
    cache_dir = directory / "nvptx"
    if not cache_dir.is_dir():
        raise SystemExit(f"{cache_dir} does not exist: run `prepare {directory}` first")
    outcomes = []
    for program in selected(only):
        for cudart in CUDARTS:
            label = f"{program.name}.{cudart}"
            try:
                exe = directory / "bin" / label if prebuilt else \
                    build(program, cudart, directory / "build")
            except RuntimeError as err:
                outcomes.append(Outcome(label, False, str(err).splitlines()[0], 0.0))
                print(f"FAIL {label}: {outcomes[-1].detail}", flush=True)
                continue
            missing = _missing_keys(exe, cache_dir)
            if missing:
                outcomes.append(Outcome(label, False, "PTX not in the NVPTX cache (failed to "
                                        "compile in prepare, or this nvcc emits other PTX): "
                                        + ", ".join(missing), 0.0))
                print(f"FAIL {label}: {outcomes[-1].detail}", flush=True)
                continue
            outcome = run_one(exe, python, cache_dir, directory / "logs")
            if outcome.backend and not any(o.backend for o in outcomes):
                print(outcome.backend, flush=True)
            pending = PENDING.get(program.name)
            verdict = "PASS" if outcome.passed else "FAIL"
            if pending is not None:
                verdict = "XPASS" if outcome.passed else "XFAIL"
                outcome = Outcome(outcome.name, not outcome.passed, outcome.detail or pending,
                                  outcome.seconds, outcome.backend)
                if verdict == "XPASS":  # fixed: say so, and count it as a failure here
                    outcome = Outcome(outcome.name, False, f"passes now: remove it from "
                                      f"PENDING ({pending})", outcome.seconds, outcome.backend)
            outcomes.append(outcome)
            tail = f": {outcome.detail}" if outcome.detail else ""
            print(f"{verdict} {label} ({outcome.seconds:.2f} s){tail}", flush=True)
    passed = sum(o.passed for o in outcomes)
    print(f"total: {passed}/{len(outcomes)} passed under ZMLIR_BACKEND=cuda "
          f"(expected failures count as passed: {', '.join(sorted(PENDING)) or 'none'})")
    return 0 if passed == len(outcomes) else 1


def _missing_keys(exe: Path, cache_dir: Path) -> list[str]:
    try:
        keys = ptx_keys(exe)
    except ImportError as err:  # e.g. zstandard absent: let the driver report it
        print(f"note: cannot check {exe.name}'s PTX keys here ({err})")
        return []
    return [k[:16] for k in keys if not any(cache_dir.glob(f"{k}.sm_*.json"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="build and precompile NVPTX (needs zmlir + LLVM)")
    p.add_argument("directory", type=Path)
    p.add_argument("--arch", action="append", help="NVPTX architecture (default: sm_90)")
    r = sub.add_parser("run", help="run every program under ZMLIR_BACKEND=cuda")
    r.add_argument("directory", type=Path)
    r.add_argument("--prebuilt", action="store_true", help="use DIR/bin, do not run nvcc")
    r.add_argument("--python", default=sys.executable, help="the Python that runs zmlir")
    for command in (p, r):
        command.add_argument("--only", metavar="NAME,...", help="these programs only")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    directory = args.directory.resolve()
    if args.command == "prepare":
        return prepare(directory, args.arch or ["sm_90"], args.only)
    return run(directory, args.prebuilt, args.python, args.only)


if __name__ == "__main__":
    sys.exit(main())
