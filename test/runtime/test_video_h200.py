"""The scalar PTX video instructions under `zmlir run` against an NVIDIA H200's
answers: test/cuda/programs/video_scalar.h200.txt, an extract of
tools/video_probe.py's output on the H200 (every op, destination selector,
.sat and secondary operation; the lines where the PTX ISA's pseudo-code and
the hardware part first; then random operands). The program is generated
from the extract: one inline-PTX case per instruction, each run on its
recorded operands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import PROGRAMS_DIR, tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

GOLDEN = PROGRAMS_DIR / "video_scalar.h200.txt"


def _golden() -> list[tuple[str, int, int, int, int]]:
    rows = []
    for line in GOLDEN.read_text().splitlines():
        if line.startswith("#"):
            continue
        text, rest = line.split(";", 1)
        a, b, c, _, d = rest.split()
        rows.append((text + ";", int(a, 16), int(b, 16), int(c, 16), int(d, 16)))
    return rows


def _program(rows: list[tuple[str, int, int, int, int]]) -> str:
    texts = sorted({row[0] for row in rows})
    cases = "".join(f'  case {k}: asm("{t}" : "=r"(d) : "r"(a), "r"(b), "r"(c)); break;\n'
                    for k, t in enumerate(texts))
    index = {t: k for k, t in enumerate(texts)}
    inputs = ",\n".join(f"  {{{index[t]}, {a:#x}u, {b:#x}u, {c:#x}u}}" for t, a, b, c, _ in rows)
    return f"""#include <cstdio>
#include <cstdint>
struct In {{ uint32_t k, a, b, c; }};
static const In kIn[] = {{
{inputs}
}};
constexpr int N = sizeof kIn / sizeof kIn[0];
__global__ void probe(const In* in, uint32_t* out) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  uint32_t a = in[i].a, b = in[i].b, c = in[i].c, d = 0;
  switch (in[i].k) {{
{cases}  }}
  out[i] = d;
}}
int main() {{
  In* din; uint32_t* dout; static uint32_t out[N];
  if (cudaMalloc(&din, sizeof kIn) || cudaMalloc(&dout, sizeof out) ||
      cudaMemcpy(din, kIn, sizeof kIn, cudaMemcpyHostToDevice)) return 1;
  probe<<<(N + 127) / 128, 128>>>(din, dout);
  if (cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost)) return 2;
  for (int i = 0; i < N; ++i) std::printf("%08x\\n", out[i]);
  return 0;
}}
"""


def test_scalar_video_matches_h200(tmp_path: Path) -> None:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    rows = _golden()
    source = tmp_path / "video_scalar.cu"
    source.write_text(_program(rows))
    exe = tmp_path / "video_scalar"
    subprocess.run([tool("nvcc"), "-arch=sm_75", str(source), "-o", str(exe)], check=True,
                   capture_output=True)
    result = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    got = [int(x, 16) for x in result.stdout.split()]
    assert len(got) == len(rows)
    wrong = [f"{t} a={a:08x} b={b:08x} c={c:08x}: got {g:08x}, H200 {d:08x}"
             for (t, a, b, c, d), g in zip(rows, got, strict=True) if g != d]
    assert not wrong, "\n".join(wrong[:20])
