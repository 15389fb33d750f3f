"""Builds NVIDIA's cuda-samples standalone with nvcc and runs them on zmlir.

The samples are not ours and are never committed: pass the path of a
checkout (https://github.com/NVIDIA/cuda-samples). Nothing is fetched.

  build CHECKOUT OUT [--arch sm_75] [--only a,b] [--jobs N]
      One directory per sample under OUT/<arch>/: its executable, built with
      `nvcc -arch=ARCH` from the sources its CMakeLists.txt names (no
      relocatable device code), the data files it reads, and for the
      driver-API samples the kernel fatbin it loads, built with PTX embedded
      (`-fatbin -arch=ARCH`); --cuda-libs names a folder with NVRTC's
      include/ and lib/ (NVIDIA's wheels nvidia-cuda-nvrtc and nvidia-curand:
      cuRAND's device API is headers only). Samples that need a library
      beyond cudart, NVRTC, cuBLAS and cuFFT (ours, zmlir/libraries/,
      against the nvidia-cublas and nvidia-cufft wheels' headers) and
      cuRAND (ours where the sample's generators are ours, else NVIDIA's
      libcurand.so.10, the nvidia-curand wheel) and cuSPARSE, cuSOLVER and
      nvJitLink (NVIDIA's, the nvidia-cusparse, nvidia-cusolver and
      nvidia-nvjitlink wheels, where installed), or graphics/MPI interop,
      are listed as skipped with why (OpenMP is GCC's).

  nvptx OUT [--arch sm_75] [--gpu sm_90]
      For the CUDA passthrough on a machine without LLVM (the H200): compiles
      with zmlir, to NVPTX for --gpu, every PTX the driver may pick from the
      built samples (their executables and the fatbin/PTX files they load,
      and for the samples that make PTX at run time, NVRTC's among them,
      what they loaded in one run here on the CPU) into OUT/ARCH/nvptx
      (runtime/backends/nvptx_cache.py), which `run --backend cuda` passes
      on as ZMLIR_NVPTX_CACHE.

  table RESULTS.json... --out FILE
      One table of several runs' JSON files (e.g. the CPU, the H200 through
      the passthrough, the H200 natively): program, features, each run's
      result, and the first cause of the first run that did not pass.

  run OUT [--arch sm_75] [--backend opencl] [--timeout 300] [--results FILE]
      Runs every built sample under `zmlir run` in its own directory (with
      --backend native: on NVIDIA's driver, without zmlir) and
      writes a Markdown table (program, result, first cause) and a JSON
      file beside it. A sample passes when it exits 0; 2 is the samples'
      EXIT_WAIVED. Exit status 1 if any sample failed, crashed or hung.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TIERS = ("0_Introduction", "1_Utilities", "2_Concepts_and_Techniques", "3_CUDA_Features",
         "4_CUDA_Libraries", "5_Domain_Specific", "6_Performance")
# What a sample links or includes -> why we skip it (not cudart, not NVRTC).
NEEDS = {
    r"CUDA::cublas": "cuBLAS", r"CUDA::cufft\b": "cuFFT", r"CUDA::curand": "cuRAND",
    # Device callbacks (cufftXtSetCallback): __device__ functions linked into
    # the static library's kernels; our cuFFT transforms on the host.
    r"CUDA::cufft_static": "NVIDIA's static cuFFT (device callbacks in its kernels)",
    r"CUDA::cusolver": "cuSOLVER", r"CUDA::cusparse": "cuSPARSE", r"CUDA::npp": "NPP",
    r"\bnvjpeg\b|\bnvJPEG\b": "nvJPEG", r"\b(OpenGL|GLUT|GLEW)\b": "OpenGL",
    r"\bEGL\b": "EGL", r"\bVulkan\b": "Vulkan", r"\bMPI\b": "MPI",
    r"\bOpenMP\b": "OpenMP", r"\bNVSCI\b|\bnvsci": "NvSci", r"\bFreeImage\b": "FreeImage",
    r"\bd3d1[12]|\bD3D1": "Direct3D", r"\bX11\b": "X11", r"\bcudla\b|\bcuDLA\b": "cuDLA",
    r"CUDA::nvml": "NVML", r"\bnvJitLink\b": "nvJitLink",
}
# Features of the second tier (issue 19): reported, not skipped.
FEATURES = {
    "textures": r"cudaTextureObject_t|texture<|cudaCreateTextureObject|cuTexObjectCreate"
                r"|surf2Dwrite|cudaSurfaceObject_t|cudaMallocArray|cudaMalloc3DArray",
    "graphs": r"cudaGraphCreate|cudaStreamBeginCapture|cuGraphCreate",
    "device heap": r"cudaLimitMallocHeapSize",
    "cooperative launch": r"cudaLaunchCooperativeKernel|grid\.sync\(\)",
    "multi-GPU/IPC": r"cudaIpc|cuIpc|cudaDeviceEnablePeerAccess|cuMemExportToShareableHandle",
}
EXIT_WAIVED = 2


@dataclass
class Sample:
    name: str
    tier: str
    path: Path
    sources: list[str]
    fatbins: list[tuple[str, str]]  # (output name, kernel source)
    libs: list[str]
    skip: str
    features: list[str]
    runtime_ptx: bool  # makes PTX while it runs (NVRTC, PTX text in its own sources)


def _cmake_sources(text: str, name: str) -> list[str]:
    match = re.search(r"add_executable\(\s*" + re.escape(name) + r"\s+([^)]*)\)", text)
    if not match:
        return []
    return [s for s in match.group(1).split() if re.search(r"\.(cu|cpp|c|cc)$", s)]


def discover(checkout: Path) -> list[Sample]:
    samples = []
    for tier in TIERS:
        for path in sorted((checkout / "Samples" / tier).iterdir()):
            cmake = path / "CMakeLists.txt"
            if not cmake.exists():
                continue
            text = cmake.read_text(errors="replace")
            code = " ".join(p.read_text(errors="replace") for p in path.iterdir()
                            if p.suffix in (".cu", ".cpp", ".cuh", ".h", ".c"))
            needs = sorted({why for pat, why in NEEDS.items() if re.search(pat, text)})
            cublas = _our_library("cublas_api.h", "libcublas.so.13") if "cuBLAS" in needs else []
            if cublas:  # ours: linked, not skipped
                needs.remove("cuBLAS")
            cufft = _our_library("cufft.h", "libcufft.so.12") if "cuFFT" in needs else []
            if cufft:  # ours, as cuBLAS
                needs.remove("cuFFT")
            curand = _curand(path) if "cuRAND" in needs else []
            if curand:
                needs.remove("cuRAND")
            # NVIDIA's own (no library of ours): their PTX runs through our compiler.
            nvidia = []
            for why, header, sonames in _NVIDIA_ONLY:
                flags = _nvidia_library(header, *sonames) if why in needs else []
                if flags:
                    needs.remove(why)
                    # RUNPATH: `zmlir run`'s library path (our libcublas) first;
                    # an NVRTC sample keeps the RPATH its builtins need (_build_one).
                    nvidia += flags if "CUDA::nvrtc" in text else [
                        *flags, "-Xlinker=--enable-new-dtags"]
            # GCC's OpenMP: host threads, each calling the driver.
            openmp = ["-Xcompiler=-fopenmp", "-lgomp"] if "OpenMP" in needs else []
            if openmp:
                needs.remove("OpenMP")
            sources = _cmake_sources(text, path.name)
            fatbins = []
            out = re.search(r'set\(CUDA_FATBIN_FILE\s+"\$\{CMAKE_CURRENT_BINARY_DIR\}/([^"]+)"', text)
            src = re.search(r'set\(CUDA_KERNEL_SOURCE\s+"\$\{CMAKE_CURRENT_SOURCE_DIR\}/([^"]+)"',
                            text)
            if out and src:
                fatbins.append((out.group(1), src.group(1)))
            ptx = re.search(r'set\(CUDA_PTX_FILE\s+"\$\{CMAKE_CURRENT_BINARY_DIR\}/([^"]+)"', text)
            if ptx and src:
                fatbins.append((ptx.group(1), src.group(1)))
            skip = ""
            if needs:
                skip = "needs " + ", ".join(needs)
            elif not sources:
                skip = "no executable in CMakeLists.txt (not for this platform)"
            libs = []
            if "CUDA::cuda_driver" in text:
                libs += [f"-L{_libcuda_dir()}", "-lcuda"]
            if "CUDA::nvrtc" in text:
                libs.append("-lnvrtc")
            if cublas:
                libs += [*cublas, "-lcublas"] + (["-lcublasLt"] if "CUDA::cublasLt" in text else [])
            if cufft:
                libs += [*cufft, "-lcufft"]
            libs += curand + nvidia + openmp
            features = [f for f, pat in FEATURES.items() if re.search(pat, code + text)]
            runtime_ptx = "CUDA::nvrtc" in text or "ptxdump" in text
            samples.append(Sample(path.name, tier, path, sources, fatbins, libs, skip, features,
                                  runtime_ptx))
    return samples


def _our_library(header: str, soname: str) -> list[str]:
    """nvcc's flags for one of our libraries (zmlir/libraries/: libcublas,
    libcufft), compiled against the header of NVIDIA's wheel that has
    `header` (nvidia-cublas: cublas_api.h, nvidia-cufft: cufft.h): its
    include/ and our library's folder; none where it is not built."""
    from zmlir.libraries.build import nvidia_wheel_dir

    wheel = nvidia_wheel_dir(header)
    libdir = Path(subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], check=True,
                                 capture_output=True, text=True).stdout.strip())
    if wheel is None or not (libdir / soname).exists():
        return []
    return [f"-I{wheel / 'include'}", f"-L{libdir}"]


# Generators our libcurand does not make (zmlir/libraries/curand/).
_CURAND_NOT_OURS = re.compile(r"CURAND_RNG_(QUASI_\w+|PSEUDO_MTGP32|PSEUDO_MT19937)")


def _curand(sample: Path) -> list[str]:
    """nvcc's flags for cuRAND: NVIDIA's libcurand.so.10 (_nvidia_curand),
    found at run time before the library path (DT_RPATH), for a sample that
    uses a generator ours does not make (MTGP32, Sobol); else ours first where
    it is built, `zmlir run`'s library path coming before the rpath
    (DT_RUNPATH), NVIDIA's library where ours is not on the path."""
    flags = _nvidia_curand()
    code = " ".join(p.read_text(errors="replace") for p in sample.rglob("*")
                    if p.suffix in (".cu", ".cpp", ".cuh", ".h", ".c"))
    if not flags or _CURAND_NOT_OURS.search(code) or not _our_library("curand.h",
                                                                       "libcurand.so.10"):
        return [*flags, "-Xlinker=--disable-new-dtags"] if flags else []
    return [*flags, "-Xlinker=--enable-new-dtags"]


# Libraries of NVIDIA's alone, linked from their wheels (the sample's need,
# the header that finds the wheel, the libraries: CMake's CUDA::cusolver
# brings cuSPARSE, whose functions the cuSOLVER samples call), where
# installed: `pip install 'nvidia-cusparse==12.6.*' 'nvidia-cusolver==12.0.*'`
# (CUDA 13.0's).
_NVIDIA_ONLY = (("cuSPARSE", "cusparse.h", ("libcusparse.so.12",)),
                ("cuSOLVER", "cusolverDn.h", ("libcusolver.so.12", "libcusparse.so.12")),
                ("nvJitLink", "nvJitLink.h", ("libnvJitLink.so.13",)))


def _nvidia_curand() -> list[str]:
    """nvcc's flags for NVIDIA's libcurand.so.10: the nvidia-curand wheel's,
    else the toolkit's (on a GPU machine), else none."""
    flags = _nvidia_library("curand.h", "libcurand.so.10")
    if flags:
        return flags
    return ["-lcurand"] if (_toolkit() / "lib64" / "libcurand.so").exists() else []


def _nvidia_library(header: str, *sonames: str) -> list[str]:
    """nvcc's flags for NVIDIA's libraries from the wheel that has `header`:
    its headers, the libraries, found again at run time through the rpath;
    none where a library is not installed."""
    from zmlir.libraries.build import nvidia_wheel_dir

    wheel = nvidia_wheel_dir(header)
    if wheel is None or not all((wheel / "lib" / soname).exists() for soname in sonames):
        return []
    lib = wheel / "lib"
    return [f"-I{wheel / 'include'}", f"-L{lib}", *[f"-l:{soname}" for soname in sonames],
            f"-Xlinker=-rpath={lib}"]


def _libcuda_dir() -> str:
    """Where to find a libcuda.so to link: the toolkit's stub if it has one,
    else ours (the same soname, libcuda.so.1, as NVIDIA's)."""
    toolkit = _toolkit()
    for stubs in (toolkit / "lib64" / "stubs", toolkit / "targets/x86_64-linux/lib/stubs"):
        if (stubs / "libcuda.so").exists():
            return str(stubs)
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], check=True,
                          capture_output=True, text=True).stdout.strip()


def _toolkit() -> Path:
    """The CUDA toolkit nvcc belongs to (nvcc on PATH may be a wrapper)."""
    dry = subprocess.run([_nvcc(), "--dryrun", "-c", "-x", "cu", "/dev/null", "-o", "/dev/null"],
                         capture_output=True, text=True).stderr
    top = re.search(r"TOP=(\S+)", dry)
    return Path(top.group(1)).resolve() if top else Path(_nvcc()).resolve().parent.parent


def _nvcc() -> str:
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("nvcc not found (PATH or /usr/local/cuda/bin)")


def _missing_data(checkout: Path, sample: Path) -> list[str]:
    """The files of the sample's data/ that git has and the checkout lacks
    (a snapshot of the repository may leave files out: dwtHaar1D's
    signal.dat was, and the sample failed, on the CPU and the H200 alike)."""
    try:
        listed = subprocess.run(["git", "-C", str(checkout), "ls-tree", "-r", "--name-only",
                                 "HEAD", "--", str(sample.relative_to(checkout) / "data")],
                                capture_output=True, text=True, timeout=60)
    except (OSError, ValueError, subprocess.SubprocessError):
        return []
    if listed.returncode != 0:  # no git checkout: nothing to compare with
        return []
    return [Path(name).name for name in listed.stdout.splitlines()
            if not (checkout / name).exists()]


def _build_one(sample: Sample, checkout: Path, out: Path, arch: str,
               cuda_libs: Path | None) -> dict:
    target = out / sample.name
    shutil.rmtree(target, ignore_errors=True)
    # Data, kernel sources for NVRTC and headers: the sample's own files.
    if sample.skip:
        return {"name": sample.name, "built": False, "why": sample.skip}
    shutil.copytree(sample.path, target, ignore=shutil.ignore_patterns("doc", "*.md"))
    for data in list((target / "data").glob("*")) if (target / "data").is_dir() else []:
        if data.is_file():
            shutil.copy(data, target / data.name)
    # Toolkit headers an NVRTC sample reads at run time, copied as its CMake does.
    include = _toolkit() / "include"
    text = (sample.path / "CMakeLists.txt").read_text()
    for header, dest in re.findall(r"\$\{CUDA_INCLUDE_DIR\}/(\S+)(?:\s+\$\{CMAKE_CURRENT_BINARY_DIR\}"
                                   r"/(\S+))?", text):
        source = include / header
        if source.is_dir():
            shutil.copytree(source, target / (dest or source.name), dirs_exist_ok=True)
        elif source.is_file():
            shutil.copy(source, target / source.name)
    nvcc = _nvcc()
    common = [f"-arch={arch}", "-std=c++17", "-Wno-deprecated-gpu-targets", "--extended-lambda",
              f"-I{checkout / 'Common'}", f"-I{sample.path}", f"-I{sample.path / 'inc'}"]
    if cuda_libs:  # NVRTC's and cuRAND's device headers from NVIDIA's wheels (nvidia/cu13)
        common += [f"-I{cuda_libs / 'include'}", f"-L{cuda_libs / 'lib'}"]
        if "CUDA::nvrtc" in text:
            # DT_RPATH, not RUNPATH: libnvrtc finds its builtins library through it. Only
            # there: the folder may hold NVIDIA's libcublas too, which a DT_RPATH would
            # put before ours (`zmlir run`'s library path).
            common += [f"-Xlinker=-rpath={cuda_libs / 'lib'}", "-Xlinker=--disable-new-dtags"]
    steps = [[nvcc, *common, "-fatbin", "-o", str(target / fat), str(sample.path / src)]
             for fat, src in sample.fatbins if fat.endswith(".fatbin")]
    steps += [[nvcc, *common, "-ptx", "-o", str(target / fat), str(sample.path / src)]
              for fat, src in sample.fatbins if fat.endswith(".ptx")]
    libs = sample.libs
    if cuda_libs and not (cuda_libs / "lib" / "libnvrtc.so").exists():
        # The wheel has the versioned library alone.
        libs = ["-l:libnvrtc.so.13" if lib == "-lnvrtc" else lib for lib in libs]
    steps.append([nvcc, *common, *[str(sample.path / s) for s in sample.sources],
                  "-o", str(target / sample.name), *libs])
    for cmd in steps:
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0 and "separate compilation mode" in result.stderr:
            # Dynamic parallelism: CMake's CUDA_SEPARABLE_COMPILATION brings it.
            cmd = [*cmd, "-rdc=true", "-lcudadevrt"]
            result = subprocess.run(cmd, capture_output=True, text=True)
            sample.features.append("dynamic parallelism")
        if result.returncode != 0:
            why = next((ln for ln in result.stderr.splitlines() if "error" in ln),
                       result.stderr.strip()[-200:])
            return {"name": sample.name, "built": False, "why": f"nvcc: {why.strip()}"}
    missing = _missing_data(checkout, sample.path)
    return {"name": sample.name, "built": True, "why": "",
            **({"missing_data": missing} if missing else {})}


def build(checkout: Path, out: Path, arch: str, only: set[str], jobs: int,
          cuda_libs: Path | None) -> int:
    out = out / arch
    out.mkdir(parents=True, exist_ok=True)
    samples = [s for s in discover(checkout) if not only or s.name in only]
    with ThreadPoolExecutor(jobs) as pool:
        built = list(pool.map(lambda s: _build_one(s, checkout, out, arch, cuda_libs), samples))
    manifest = {s.name: {**r, "tier": s.tier, "features": s.features,
                         "runtime_ptx": s.runtime_ptx}
                for s, r in zip(samples, built, strict=True)}
    old = out / "manifest.json"
    if only and old.exists():
        manifest = {**json.loads(old.read_text()), **manifest}
    old.write_text(json.dumps(manifest, indent=1))
    for r in built:
        missing = r.get("missing_data")
        print(f"{r['name']:40s} {'built' if r['built'] else r['why']}"
              + (f"; data missing from the checkout: {', '.join(missing)}" if missing else ""))
    return 0


@dataclass
class Outcome:
    name: str
    tier: str
    result: str  # PASS, WAIVED, FAIL, CRASH, HANG, SKIP, BUILD
    cause: str
    seconds: float
    features: list[str]


_CAUSE = re.compile(r"unsupported|error|Error|ERROR|FAIL|fail|mismatch|Mismatch|not supported"
                    r"|exception|Segmentation|Abort|abort|differ|incorrect|wrong", re.ASCII)


def _first_cause(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in lines:
        if _CAUSE.search(line):
            return line[:160]
    return (lines[-1] if lines else "")[:160]


def _run_one(name: str, entry: dict, out: Path, backend: str, timeout: int) -> Outcome:
    features = entry.get("features", [])
    if not entry["built"]:
        kind = "SKIP" if entry["why"].startswith(("needs", "no executable")) else "BUILD"
        return Outcome(name, entry["tier"], kind, entry["why"], 0.0, features)
    env = dict(os.environ, ZMLIR_BACKEND=backend)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    if backend == "cuda":  # NVPTX compiled ahead of time here (the `nvptx` command)
        env["ZMLIR_NVPTX_CACHE"] = str(out / "nvptx")
    cmd = [sys.executable, "-m", "zmlir.cli", "run", "--", f"./{name}"]
    if backend == "native":  # NVIDIA's own driver, for the baseline
        cmd = [f"./{name}"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=out / name, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        stdout, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, _ = proc.communicate()
        result, cause = "HANG", f"no exit after {timeout} s"
    else:
        rc = proc.returncode
        text = stdout.decode(errors="replace")
        uncompiled = next((ln for ln in text.splitlines() if "zmlir: cannot compile" in ln), "")
        if rc == 0 and uncompiled:
            # Exit 0 without checking launches: its kernels never ran.
            result, cause = "FAIL", "exit 0, but " + uncompiled.strip()[:140]
        elif rc == 0:
            result, cause = "PASS", ""
        elif rc == EXIT_WAIVED:
            result, cause = "WAIVED", _first_cause(stdout.decode(errors="replace"))
        elif rc < 0 or rc >= 128:
            sig = -rc if rc < 0 else rc - 128
            result = "CRASH"
            cause = f"signal {signal.Signals(sig).name}: " + _first_cause(
                stdout.decode(errors="replace"))
        else:
            result, cause = "FAIL", _first_cause(stdout.decode(errors="replace"))
    seconds = time.perf_counter() - start
    if result != "PASS" and entry.get("missing_data"):  # the likelier cause
        cause = f"data missing from the checkout ({', '.join(entry['missing_data'])}): {cause}"
    (out / name / "zmlir-run.log").write_bytes(stdout)
    return Outcome(name, entry["tier"], result, cause, round(seconds, 1), features)


def _module_ptx(sample_dir: Path, gpu_sm: int) -> list[str]:
    """Every PTX text the driver may pick from the sample's executable (an
    -rdc one's units linked as the driver links them on that GPU) and the
    module files it loads."""
    sys.path.insert(0, str(REPO))
    from tools.run_programs_passthrough import driver_ptx_texts
    from zmlir.runtime.cuda import fatbin

    texts = driver_ptx_texts(sample_dir / sample_dir.name, relocatable=True, gpu_sm=gpu_sm)
    for path in sorted(sample_dir.glob("*.fatbin")):
        data = path.read_bytes()
        texts += [e.ptx_text() for e in fatbin.ptx_candidates(fatbin.parse(data), 80)]
    texts += [p.read_text() for p in sorted(sample_dir.glob("*.ptx"))]
    return texts


def _runtime_ptx(sample_dir: Path, timeout: int) -> list[str]:
    """The PTX a sample makes while it runs (NVRTC's output, PTX held in its
    own sources): what the driver compiled in one run here on the CPU, with
    every compiled module dumped (zmlir/dump.py). NVRTC gives the same PTX
    on the NVIDIA machine when it is the same release."""
    with tempfile.TemporaryDirectory() as dump:
        env = dict(os.environ, ZMLIR_BACKEND="opencl", ZMLIR_DUMP_DIR=dump, ZMLIR_CACHE="0")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
        try:
            subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--",
                            f"./{sample_dir.name}"], cwd=sample_dir, env=env, timeout=timeout,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            print(f"{sample_dir.name}: no exit after {timeout} s; keeping what it loaded")
        return [p.read_text() for p in sorted(Path(dump).glob("*/module.ptx"))]


def nvptx(out: Path, arch: str, gpu: str, only: set[str], timeout: int) -> int:
    import zmlir
    from zmlir.runtime.backends import nvptx_cache
    from zmlir.runtime.cuda.module import keyed_ptx

    out = out / arch
    cache = out / "nvptx"
    manifest = json.loads((out / "manifest.json").read_text())
    failures = 0
    for name, entry in manifest.items():
        if not entry["built"] or (only and name not in only):
            continue
        texts = _module_ptx(out / name, int(gpu[3:]))
        if entry.get("runtime_ptx"):
            texts += _runtime_ptx(out / name, timeout)
        for index, text in enumerate(texts):
            text, key = keyed_ptx(text)
            if (cache / f"{key}.{gpu}.json").exists():
                continue
            try:
                compiled = zmlir.compile_module(text, f"nvptx:{gpu}", filename=f"{name}.{index}.ptx")
            except zmlir.CompileError as err:
                print(f"{name}: module {index}: {str(err).splitlines()[0]}")
                failures += 1
                continue
            nvptx_cache.store(cache, key, compiled, source=f"{name}.{index}.ptx")
            print(f"{name}: module {index} compiled for {gpu}", flush=True)
    return 1 if failures else 0


def run(out: Path, arch: str, backend: str, timeout: int, results: Path, only: set[str],
        jobs: int) -> int:
    out = out / arch
    manifest = json.loads((out / "manifest.json").read_text())
    names = [n for n in manifest if not only or n in only]
    with ThreadPoolExecutor(jobs) as pool:
        outcomes = list(pool.map(lambda n: _run_one(n, manifest[n], out, backend, timeout),
                                 names))
    for o in outcomes:
        print(f"{o.name:40s} {o.result:6s} {o.seconds:6.1f}s {o.cause}", flush=True)
    if only and results.with_suffix(".json").exists():
        previous = {o["name"]: o for o in json.loads(results.with_suffix(".json").read_text())}
        previous.update({o.name: asdict(o) for o in outcomes})
        outcomes = [Outcome(**o) for o in previous.values()]
    write_results(outcomes, results, arch, backend)
    bad = [o for o in outcomes if o.result in ("FAIL", "CRASH", "HANG")]
    return 1 if bad else 0


def write_results(outcomes: list[Outcome], results: Path, arch: str, backend: str) -> None:
    results.parent.mkdir(parents=True, exist_ok=True)
    results.with_suffix(".json").write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.result] = counts.get(o.result, 0) + 1
    lines = [f"# cuda-samples, `nvcc -arch={arch}`, zmlir backend `{backend}`", "",
             "Written by `bench/cuda_samples.py run`. " +
             ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), "",
             "| program | tier | result | seconds | features | first cause |",
             "|---|---|---|---|---|---|"]
    for o in sorted(outcomes, key=lambda o: (o.tier, o.name)):
        cause = o.cause.replace("|", "\\|")
        lines.append(f"| {o.name} | {o.tier.split('_', 1)[0]} | {o.result} | {o.seconds} | "
                     f"{', '.join(o.features)} | {cause} |")
    results.write_text("\n".join(lines) + "\n")


def table(runs: list[Path], out: Path) -> int:
    loaded = [(path.stem, {o["name"]: o for o in json.loads(path.read_text())})
              for path in runs]
    names = sorted({n for _, run in loaded for n in run},
                   key=lambda n: next((r[n]["tier"], n) for _, r in loaded if n in r))
    counts = []
    for label, run in loaded:
        tally: dict[str, int] = {}
        for o in run.values():
            tally[o["result"]] = tally.get(o["result"], 0) + 1
        counts.append(f"- `{label}`: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    lines = ["# cuda-samples on zmlir", "",
             "Written by `bench/cuda_samples.py table` from the runs below (each written by",
             "`bench/cuda_samples.py run`). PASS: exit 0 with every kernel module compiled;",
             "WAIVED: the sample's own EXIT_WAIVED; SKIP: needs a library or graphics API",
             "beyond cudart, NVRTC, cuRAND, our cuBLAS and cuFFT and NVIDIA's cuSPARSE,",
             "cuSOLVER and nvJitLink.", "", *counts, "",
             "| program | tier | features | " + " | ".join(label for label, _ in loaded)
             + " | first cause |",
             "|---|---|---|" + "---|" * len(loaded) + "---|"]
    for name in names:
        rows = [run.get(name) for _, run in loaded]
        first = next(r for r in rows if r)
        cause = next((r["cause"] for r in rows if r and r["result"] not in ("PASS",)), "")
        lines.append(f"| {name} | {first['tier'].split('_', 1)[0]} | "
                     f"{', '.join(first['features'])} | "
                     + " | ".join(r["result"] if r else "-" for r in rows)
                     + f" | {cause.replace('|', '/')[:150]} |")
    out.write_text("\n".join(lines) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("checkout", type=Path)
    b.add_argument("out", type=Path)
    b.add_argument("--cuda-libs", type=Path, help="a folder with include/ and lib/ of NVIDIA's "
                   "library wheels (nvidia/cu13), for NVRTC")
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--backend", default="opencl")
    r.add_argument("--timeout", type=int, default=300)
    r.add_argument("--results", type=Path)
    t = sub.add_parser("table")
    t.add_argument("runs", type=Path, nargs="+")
    t.add_argument("--out", type=Path, required=True)
    n = sub.add_parser("nvptx")
    n.add_argument("out", type=Path)
    n.add_argument("--gpu", default="sm_90")
    n.add_argument("--timeout", type=int, default=300,
                   help="for the CPU run that collects the PTX a sample makes at run time")
    for p in (b, r, n):
        p.add_argument("--arch", default="sm_75")
        p.add_argument("--only", default="")
        p.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if args.command == "table":
        return table(args.runs, args.out)
    only = {n for n in args.only.split(",") if n}
    if args.command == "nvptx":
        return nvptx(args.out.resolve(), args.arch, args.gpu, only, args.timeout)
    if args.command == "build":
        return build(args.checkout.resolve(), args.out.resolve(), args.arch, only, args.jobs,
                     args.cuda_libs)
    results = args.results or REPO / "bench" / "results" / f"cuda_samples_{args.arch}_{args.backend}.md"
    return run(args.out.resolve(), args.arch, args.backend, args.timeout, results, only, args.jobs)


if __name__ == "__main__":
    sys.exit(main())
