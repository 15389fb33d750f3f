"""Compares the SASS of nvcc's fast-math PTX with zmlir's NVPTX for it.

  python bench/ftz_sass.py INPUT... [--arch sm_90] [-I DIR ...] [--keep DIR]
      [--ours-ptx NAME=FILE ...]

INPUT is a .cu (built with `nvcc -O3 --use_fast_math -ptx`, as llm.c builds
its kernels) or nvcc's .ptx. Each module's PTX is compiled by zmlir for
nvptx:ARCH; ptxas (-O3) assembles both, and per kernel the table gives the
SASS instructions of each (the kernel's .text section of the cubin, less
the trailing padding: there is no disassembler here), and in the PTX the
`.ftz` f32 instructions of each and the subnormal tests zmlir's output still
has (`and.b32 x, 2139095040`: a software flush-to-zero, or any other test of
an f32 exponent). --ours-ptx NAME=FILE counts FILE as zmlir's PTX for input
NAME instead of compiling it (an earlier compiler's output, for a before and
after).
"""

from __future__ import annotations

import argparse
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from zmlir.compiler import compile_module  # noqa: E402

FTZ_F32 = re.compile(r"^\s*(?:@!?%\w+\s+)?[a-z0-9]+(?:\.\w+)*\.ftz(?:\.\w+)*\.f32\b", re.M)
EXPONENT_MASK = re.compile(r"\band\.b32\s+[^;]*,\s*2139095040;")
ENTRY = re.compile(r"^\.(?:visible\s+|weak\s+)?\.entry\s+(\w+)", re.M)
INSTRUCTION_BYTES = 16  # sm_70 and later


def text_sections(cubin: bytes) -> dict[str, bytes]:
    """The `.text.<kernel>` sections of an ELF64 cubin, by kernel name."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize)
               for i in range(shnum)]
    names = headers[shstrndx]
    strtab = cubin[names[4]:names[4] + names[5]]
    out = {}
    for name_offset, _type, _flags, _addr, offset, size, *_ in headers:
        name = strtab[name_offset:strtab.index(b"\0", name_offset)].decode()
        if name.startswith(".text."):
            out[name[len(".text."):]] = cubin[offset:offset + size]
    return out


def instruction_count(code: bytes) -> int:
    """Instructions in a kernel's code, less the run of NOPs padding its end
    (the last instruction, repeated)."""
    words = [code[i:i + INSTRUCTION_BYTES] for i in range(0, len(code), INSTRUCTION_BYTES)]
    if len(words) > 1 and words[-1] == words[-2]:
        padding = words[-1]
        while words and words[-1] == padding:
            words.pop()
    return len(words)


def sass_counts(ptx: str, arch: str, work: Path, stem: str) -> dict[str, int]:
    source = work / f"{stem}.ptx"
    cubin = work / f"{stem}.cubin"
    source.write_text(ptx)
    subprocess.run(["ptxas", f"-arch={arch}", "-O3", str(source), "-o", str(cubin)],
                   check=True, capture_output=True, text=True)
    return {name: instruction_count(code)
            for name, code in text_sections(cubin.read_bytes()).items()}


def function_bodies(ptx: str) -> dict[str, str]:
    """Each kernel's text, from its .entry to the next function."""
    starts = [(m.start(), m.group(1)) for m in ENTRY.finditer(ptx)]
    bodies = {}
    for index, (start, name) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(ptx)
        bodies[name] = ptx[start:end]
    return bodies


def nvcc_ptx(source: Path, arch: str, includes: list[str], work: Path) -> str:
    out = work / f"{source.stem}.nvcc.ptx"
    cmd = ["nvcc", f"-arch={arch}", "-O3", "--use_fast_math", "-std=c++17", "-ptx",
           str(source), "-o", str(out)] + [f"-I{d}" for d in includes]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out.read_text()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", type=Path)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("-I", dest="includes", action="append", default=[])
    parser.add_argument("--keep", type=Path, help="a folder to keep the PTX and cubins in")
    parser.add_argument("--ours-ptx", action="append", default=[], metavar="NAME=FILE")
    args = parser.parse_args()
    given = dict(item.split("=", 1) for item in args.ours_ptx)
    work = args.keep or Path(tempfile.mkdtemp(prefix="ftz_sass_"))
    work.mkdir(parents=True, exist_ok=True)
    print("| module | kernel | SASS nvcc | SASS zmlir | .ftz nvcc | .ftz zmlir "
          "| exponent tests zmlir |")
    print("|---|---|---|---|---|---|---|")
    for source in args.inputs:
        theirs = (source.read_text() if source.suffix == ".ptx"
                  else nvcc_ptx(source, args.arch, args.includes, work))
        stem = source.name.split(".")[0]
        if stem in given:
            ours = Path(given[stem]).read_text()
        else:
            ours = compile_module(theirs, f"nvptx:{args.arch}", filename=str(source)).binary
            ours = ours.decode() if isinstance(ours, bytes) else ours
            (work / f"{stem}.zmlir.ptx").write_text(ours)
        sass_theirs = sass_counts(theirs, args.arch, work, f"{stem}.nvcc")
        sass_ours = sass_counts(ours, args.arch, work, f"{stem}.zmlir")
        bodies_theirs, bodies_ours = function_bodies(theirs), function_bodies(ours)
        for name in sorted(bodies_theirs):
            body = bodies_ours.get(name, "")
            print(f"| {stem} | {name} | {sass_theirs.get(name, '-')} | {sass_ours.get(name, '-')} "
                  f"| {len(FTZ_F32.findall(bodies_theirs[name]))} | {len(FTZ_F32.findall(body))} "
                  f"| {len(EXPONENT_MASK.findall(body))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
