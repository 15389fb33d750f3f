"""x86_length.h, the instruction length faults.c skips a kernel's unanswerable
access by (a write to read-only memory, a non-canonical address): a wrong
length would run the kernel from the middle of an instruction. Each form
of encoding it decodes, against LLVM's assembler (llvm-mc's encodings).

Checked once more widely by hand (session 39): every instruction of numpy's
_multiarray_umath (1.7 M, 172 k EVEX), libintelocl.so and libc (12 M) as
llvm-objdump splits them, and Intel's CPU code for two kernels of the
cuda-samples' reduction (CL_CONFIG_DUMP_ASM, zmm, masked and gathered
accesses): no length differed."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support import tool

HEADER = Path(__file__).resolve().parents[2] / "zmlir" / "runtime" / "cuda" / "x86_length.h"

# One per form: prefixes, REX, immediates of each size, ModRM/SIB/displacement
# forms, the 0F, 0F38 and 0F3A maps, VEX (2 and 3 bytes), EVEX (maps 1, 2,
# 3, 5; masks, gathers, scatters, compressed displacements), AMX.
INSTRUCTIONS = """
movl %eax, (%rdi)
movq 0x12345678(%rip), %rax
movl %ecx, -8(%rbp,%rdx,4)
movl %ecx, 0x1000(,%rdx,8)
movq %fs:0x28, %rax
addl $1, (%rax)
addl $0x12345, 16(%rax)
addw $0x1234, 16(%rax)
addq $-2, %rsp
addb $5, %al
addl $0x100000, %eax
addw $0x1000, %ax
movabsq $0x123456789abcdef0, %rax
movl $0x12345678, %r9d
movw $0x1234, %cx
movb $7, %dil
movabsq 0x1122334455667788, %rax
movl 0x11223344, %eax
movq $-1, (%rax,%rbx)
movw $1, (%rax)
movb $1, 0x11(%rsp)
testb $1, (%rdi)
testl $0x10000, 8(%rdi)
testw $0x100, %si
notl (%rax)
shll $3, 4(%rax)
shrq %cl, %rdx
imull $1000, %ecx, %edx
imulq $-3, (%rsi), %rdi
lock addl %eax, (%rdx)
lock cmpxchgq %rcx, 8(%rdi)
rep movsb
leaq 0x10(%rsp), %rdi
pushq $0x12345
pushq $1
retq $16
enter $16, $1
callq 0x1000
jmp 0x10
je 0x10
jne 0x12345
nopw %cs:(%rax,%rax)
nopl (%rax)
movzbl (%rax), %ecx
movswq 2(%rax), %rdx
cmovgel (%rdx), %eax
sete 1(%rax)
btl $5, (%rax)
shldl $4, %eax, (%rcx)
imull 4(%rax), %ecx
cpuid
rdtsc
bswapq %r12
movups %xmm0, (%rax)
movaps 16(%rsp), %xmm9
movss %xmm1, (%rax,%rcx,4)
pshufd $0x1b, (%rax), %xmm2
cmpltps (%rcx), %xmm3
pinsrw $2, (%rax), %xmm1
pshufb 16(%rax), %xmm5
pextrd $1, %xmm0, 4(%rax)
roundps $4, (%rax), %xmm1
fldl 8(%rsp)
vmovups %ymm0, (%rax)
vmovups %ymm12, 0x100(%rax,%r9,4)
vpermq $0x4e, (%rax), %ymm1
vpshufd $0x1b, 32(%rax), %ymm2
vpgatherdd %ymm2, (%rax,%ymm1,4), %ymm0
vmaskmovps %ymm1, %ymm2, (%rdi)
vcmpltps (%rax), %ymm1, %ymm2
vfmadd231ps (%rax), %ymm1, %ymm2
vzeroupper
vmovups %zmm0, (%rax)
vmovups %zmm1, 0x40(%rax) {%k1}
vmovdqu32 %zmm2, 0x12345(%rax,%rcx,4) {%k2}
vpscatterdd %zmm0, (%rax,%zmm1,4) {%k1}
vgatherdps 8(%rax,%zmm1,4), %zmm0 {%k1}
vpscatterqq %zmm3, -64(%rdi,%zmm2,8) {%k3}
vpternlogd $0xff, (%rax), %zmm1, %zmm1
vcmpps $1, (%rax){1to16}, %zmm1, %k1
vpshufd $0x1b, 64(%rax), %zmm2
vaddps 0x80(%rax){1to16}, %zmm1, %zmm2
vpermt2d (%rax), %zmm1, %zmm2
vextractf32x4 $1, %zmm0, 16(%rax)
vcompressps %zmm0, (%rax) {%k1}
vaddph 0x40(%rax), %zmm1, %zmm2
tileloadd (%rax,%rcx,4), %tmm0
"""

HARNESS = r"""
#include <stdio.h>
#include "x86_length.h"
int main(void) {
  char line[256];
  while (fgets(line, sizeof line, stdin)) {
    uint8_t code[32];
    unsigned n = 0, byte;
    int used;
    for (const char *s = line; n < 16 && sscanf(s, " %x%n", &byte, &used) == 1; s += used)
      code[n++] = (uint8_t)byte;
    for (unsigned i = n; i < sizeof code; ++i)
      code[i] = 0xcc; /* what follows the instruction: int3 */
    printf("%u\n", zmlir_x86_length(code));
  }
  return 0;
}
"""


def _encodings(mc: str) -> list[tuple[str, list[int]]]:
    done = subprocess.run([mc, "-triple=x86_64-unknown-linux-gnu", "-show-encoding",
                           "-mattr=+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512fp16,+amx-tile"],
                          input=INSTRUCTIONS, capture_output=True, text=True, check=True)
    found = re.findall(r"^\s*(\S.*?)\s*# encoding: \[([^\]]*)\]", done.stdout, re.M)
    return [(text, [int(b, 16) for b in encoding.split(",")]) for text, encoding in found]


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("x86_length")
    (folder / "harness.c").write_text(HARNESS)
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", f"-I{HEADER.parent}", "-o",
                    str(folder / "harness"), str(folder / "harness.c")], check=True)
    return folder / "harness"


def _lengths(harness: Path, codes: list[list[int]]) -> list[int]:
    lines = "".join(" ".join(f"{b:02x}" for b in code) + "\n" for code in codes)
    done = subprocess.run([str(harness)], input=lines, capture_output=True, text=True,
                          check=True)
    return [int(n) for n in done.stdout.split()]


def test_lengths_match_llvms_encodings(harness: Path) -> None:
    mc = tool("llvm-mc")
    if mc is None:
        pytest.skip("no llvm-mc")
    encoded = _encodings(mc)
    assert len(encoded) == len(INSTRUCTIONS.strip().splitlines())
    got = _lengths(harness, [code for _, code in encoded])
    wrong = [(text, len(code), n) for (text, code), n in zip(encoded, got, strict=True)
             if n != len(code)]
    assert not wrong, wrong


def test_what_is_no_instruction_is_not_skipped(harness: Path) -> None:
    # push es (06), aaa (37) and a VEX map beyond 0F3A exist only outside
    # 64-bit mode; 15 prefixes make no instruction.
    assert _lengths(harness, [[0x06], [0x37], [0xc4, 0xe4, 0x7d, 0x10, 0x00],
                              [0x66] * 15 + [0x90]]) == [0, 0, 0, 0]
