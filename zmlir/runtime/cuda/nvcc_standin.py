"""`zmlir run`'s nvcc: NVIDIA's, but a cubin request gives a PTX fatbin.

Libraries that compile CUDA C++ at run time by calling `nvcc --cubin`
(pycuda's SourceModule) load the result with cuModuleLoadData. A cubin is
SASS, NVIDIA machine code no PTX JIT can run; `zmlir run` puts this
stand-in first on PATH (`bin/nvcc`, run by zmlir's Python with nothing but
the standard library; its directory is in a view of NVIDIA's toolkit,
toolkit_view, for the libraries that find the toolkit from nvcc's place),
and it asks the real nvcc (`$ZMLIR_REAL_NVCC`, else
the next `nvcc` on PATH) for a fatbin holding the PTX of the virtual
architecture instead, written where the cubin would be. cuModuleLoadData
takes either. Everything else goes to nvcc unchanged, but `--version`
says that a cubin is PTX here: compilers that cache cubins keyed on it
(pycuda) never hand a real GPU's cubin to zmlir, nor ours to a real GPU.
"""

from __future__ import annotations

import os
import shutil
import sys

VERSION_NOTE = "zmlir run: --cubin gives a fatbin of PTX (zmlir/runtime/cuda/nvcc_standin.py)"

_ARCH = ("-arch", "--gpu-architecture")
_CODE = ("-code", "--gpu-code")
_GENCODE = ("-gencode", "--generate-code")
_OUTPUT = ("-o", "--output-file")
# nvcc options that take a value as the next argument (those that matter
# for telling the input files apart from option values).
_VALUED = {*_ARCH, *_CODE, *_GENCODE, *_OUTPUT, "-I", "-D", "-U", "-L", "-l", "-x", "-std",
           "-ccbin", "--compiler-bindir", "-Xcompiler", "--compiler-options", "-Xptxas",
           "--ptxas-options", "-Xlinker", "--linker-options", "-maxrregcount",
           "--maxrregcount", "-include", "--pre-include", "-isystem", "--system-include",
           "-odir", "--output-directory", "-t", "--threads", "-G", "--include-path",
           "--define-macro", "--undefine-macro", "--library", "--library-path",
           "--x", "--std", "-rdc", "--relocatable-device-code", "-ftz", "-prec-div",
           "-prec-sqrt", "-fmad", "--ftz", "--prec-div", "--prec-sqrt", "--fmad"}
_VALUED -= {"-G"}  # a flag


def _virtual(arch: str) -> str:
    """compute_XX for sm_XX (a virtual architecture stays as it is)."""
    return "compute_" + arch.removeprefix("sm_") if arch.startswith("sm_") else arch


def _split(arg: str, names: tuple[str, ...]) -> tuple[str, str | None] | None:
    """(name, value) when `arg` is one of `names`, its value joined by '=' or
    to come in the next argument (None); else None."""
    for name in names:
        if arg == name:
            return name, None
        if arg.startswith(name + "="):
            return name, arg[len(name) + 1:]
    return None


def _gencode(value: str) -> str:
    """`arch=compute_XX,code=...` → its PTX only: `arch=compute_XX,code=compute_XX`."""
    fields = dict(part.split("=", 1) for part in value.split(",") if "=" in part)
    arch = _virtual(fields.get("arch", ""))
    return f"arch={arch},code={arch}"


def rewrite(args: list[str]) -> list[str]:
    """nvcc's arguments with `--cubin` asking for a PTX fatbin instead (the
    same arguments when they ask for something else)."""
    if not any(a in ("--cubin", "-cubin") for a in args):
        return args
    out: list[str] = []
    inputs: list[str] = []
    has_output = False
    i = 0
    while i < len(args):
        arg = args[i]
        value: str | None
        if arg in ("--cubin", "-cubin"):
            out.append("--fatbin")
        elif (hit := _split(arg, _ARCH)) is not None:
            value = hit[1] if hit[1] is not None else (args[i + 1] if i + 1 < len(args) else "")
            i += hit[1] is None
            out.append(f"-arch={_virtual(value)}")
        elif (hit := _split(arg, _CODE)) is not None:
            i += hit[1] is None  # the code is the arch's PTX
        elif (hit := _split(arg, _GENCODE)) is not None:
            value = hit[1] if hit[1] is not None else (args[i + 1] if i + 1 < len(args) else "")
            i += hit[1] is None
            out.append(f"-gencode={_gencode(value)}")
        else:
            hit = _split(arg, _OUTPUT)
            has_output = has_output or hit is not None
            out.append(arg)
            if arg in _VALUED and i + 1 < len(args):
                i += 1
                out.append(args[i])
            elif not arg.startswith("-"):
                inputs.append(arg)
        i += 1
    if not has_output and len(inputs) == 1:
        stem = os.path.splitext(os.path.basename(inputs[0]))[0]
        out += ["-o", stem + ".cubin"]  # where nvcc would put the cubin
    return out


SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "nvcc")


def real_nvcc(path: str | None = None) -> str | None:
    """NVIDIA's nvcc: `$ZMLIR_REAL_NVCC`, else the first on PATH that is not us."""
    named = os.environ.get("ZMLIR_REAL_NVCC")
    if named:
        return named
    ours = os.path.realpath(SCRIPT)
    for directory in (path or os.environ.get("PATH", "")).split(os.pathsep):
        found = shutil.which("nvcc", path=directory) if directory else None
        if found and os.path.realpath(found) != ours:
            return found
    return None


def toolkit_view(real: str, base: str) -> str:
    """A directory under `base` that looks like the toolkit `real` (NVIDIA's
    nvcc) is in, but whose bin/nvcc is us: what is found from nvcc's place
    on PATH (its `../include`, `../lib64`: pycuda's libcudadevrt.a, CuPy's
    CUDA_PATH) is what it would be without us. Each entry is a symlink to
    the toolkit's, made again where it changed. Returns its bin directory."""
    import hashlib

    root = os.path.dirname(os.path.dirname(os.path.abspath(real)))
    view = os.path.join(base, hashlib.sha256(root.encode()).hexdigest()[:16])
    _mirror(root, view, skip="bin")
    _mirror(os.path.join(root, "bin"), os.path.join(view, "bin"), skip="nvcc")
    _link(SCRIPT, os.path.join(view, "bin", "nvcc"))
    return os.path.join(view, "bin")


def _mirror(source: str, view: str, skip: str) -> None:
    os.makedirs(view, 0o700, exist_ok=True)
    names = set(os.listdir(source)) - {skip}
    for name in names:
        _link(os.path.join(source, name), os.path.join(view, name))
    for name in set(os.listdir(view)) - names - {skip}:
        if os.path.islink(os.path.join(view, name)):
            os.unlink(os.path.join(view, name))  # gone from the toolkit


def _link(target: str, link: str) -> None:
    """`link` -> `target`, replaced atomically where it points elsewhere."""
    if os.path.islink(link) and os.readlink(link) == target:
        return
    temporary = f"{link}.{os.getpid()}.tmp"
    os.symlink(target, temporary)
    os.replace(temporary, link)


def main(argv: list[str]) -> int:
    nvcc = real_nvcc()
    if nvcc is None:
        print("nvcc (zmlir run's stand-in): no NVIDIA nvcc found on PATH", file=sys.stderr)
        return 127
    if any(a in ("--version", "-V") for a in argv):
        sys.stdout.flush()
        import subprocess

        code = subprocess.call([nvcc, *argv])
        print(VERSION_NOTE, flush=True)
        return code
    os.execv(nvcc, [nvcc, *rewrite(argv)])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
