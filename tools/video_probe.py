"""Writes a CUDA program (to stdout): a table of PTX video instructions
(scalar vadd ... vset, vshl/vshr, vmad; SIMD vop2/vop4) over edge-case
operands, for recording an NVIDIA GPU's answers beside zmlir's model of them.

    python3 tools/video_probe.py > /tmp/video_probe.cu
    nvcc -arch=sm_90 /tmp/video_probe.cu -o probe && ./probe > h200.txt
    nvcc -arch=sm_75 -DNO_VMAD /tmp/video_probe.cu -o probe && zmlir run -- ./probe > ours.txt

Each line: the instruction, a b c, the device's result and the host model's
(zmlir's lowering, zmlir/lowering/Video.cpp, as written in
test/cuda/programs/video_instructions.cu); `!` marks a difference. vmad and
vshl/vshr .sat have no model (zmlir rejects them): their model column is
`--------`; -DNO_VMAD leaves them out.
"""

from __future__ import annotations

import itertools

SELS = {"": -1, ".b0": 0, ".b1": 1, ".b2": 2, ".b3": 3, ".h0": 4, ".h1": 5}
OPS = {"vadd": "ADD", "vsub": "SUB", "vabsdiff": "ABSDIFF", "vmin": "MIN", "vmax": "MAX"}
CMPS = ["eq", "ne", "lt", "le", "gt", "ge"]
TYPES = [".u32", ".s32"]


def scalar_cases() -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = []

    def add(op: str, model_op: str, cmp: str, d: str, a: str, b: str, sat: bool, tail: str,
            asel: str, bsel: str, dsel: str, clamp: str = "") -> None:
        mode = f".{clamp}" if clamp else ""
        cmp_part = f".{cmp}" if cmp else ""
        text = (f"{op}{d if op != 'vset' else ''}{a}{b}{cmp_part}{mode}{'.sat' if sat else ''}"
                f"{tail} %0{dsel}, %1{asel}, %2{bsel}" + (", %3" if tail or dsel else "") + ";")
        second = {"": "NONE", ".add": "S_ADD", ".min": "S_MIN", ".max": "S_MAX"}[tail]
        model = (f"ref_scalar({model_op}, {cmp.upper() or 'EQ'}, {int(d == '.s32')}, "
                 f"{int(a == '.s32')}, {int(b == '.s32')}, {int(sat)}, {second}, "
                 f"{int(clamp == 'clamp')}, {SELS[asel]}, {SELS[bsel]}, {SELS[dsel]}, a, b, c)")
        # vshl/vshr .sat: no model (zmlir rejects them), NVIDIA's answer only.
        cases.append((text, "" if sat and op in ("vshl", "vshr") else model))

    sels = list(SELS)
    # vadd in full: every type, source and destination selector, .sat.
    for d, a, b in itertools.product(TYPES, repeat=3):
        for i, asel in enumerate(sels):
            for dsel in sels:
                for sat in (False, True):
                    bsel = sels[(i + 3) % len(sels)]
                    add("vadd", "ADD", "", d, a, b, sat, "", asel, bsel, dsel)
    # The other operations: every type and .sat, selectors and tails in turn.
    tails = [("", ""), (".add", ""), (".min", ""), (".max", ""), ("", ".b0"), ("", ".b2"),
             ("", ".h1"), ("", ".b3")]
    pairs = [("", ""), (".b0", ".b3"), (".b1", ".h0"), (".h1", ".b2"), (".b3", ".h1"),
             (".h0", "")]
    n = 0
    for op in ("vsub", "vabsdiff", "vmin", "vmax"):
        for d, a, b in itertools.product(TYPES, repeat=3):
            for sat in (False, True):
                for k in range(6):
                    tail, dsel = tails[(n + k) % len(tails)]
                    asel, bsel = pairs[(n + 2 * k) % len(pairs)]
                    add(op, OPS[op], "", d, a, b, sat, tail, asel, bsel, dsel)
                n += 1
    # vset: no .sat, no dtype of its own (the result is 0 or 1, unsigned).
    for a, b in itertools.product(TYPES, repeat=2):
        for cmp in CMPS:
            for k in range(4):
                tail, dsel = tails[(n + k) % len(tails)]
                asel, bsel = pairs[(n + k) % len(pairs)]
                add("vset", "SET", cmp, ".u32", a, b, False, tail, asel, bsel, dsel)
            n += 1
    # vshl, vshr: b is .u32; .clamp or .wrap.
    for op in ("vshl", "vshr"):
        for d, a in itertools.product(TYPES, repeat=2):
            for clamp in ("clamp", "wrap"):
                for sat in (False, True):
                    for k in range(3):
                        tail, dsel = tails[(n + k) % len(tails)]
                        asel, bsel = pairs[(n + k) % len(pairs)]
                        add(op, "SHL" if op == "vshl" else "SHR", "", d, a, ".u32", sat, tail,
                            asel, bsel, dsel, clamp)
                    n += 1
    return cases


LANE_SELS = {2: ["", ".h10", ".h32", ".h03", ".h21"],
             4: ["", ".b3210", ".b7654", ".b5170", ".b0213"]}
MASKS = {2: [("", 3), (".h0", 1), (".h1", 2)],
         4: [("", 15), (".b20", 5), (".b31", 10), (".b3", 8), (".b0", 1)]}


def lane_map(sel: str, lanes: int, default_first: int) -> str:
    """The units of the pair {b, a} that lanes 0, 1, ... read, as a model
    array's name: a selector lists them from the last lane down."""
    units = [int(ch) for ch in reversed(sel[2:])] if sel else \
        list(range(default_first, default_first + lanes))
    return "M" + "".join(map(str, units))


def simd_cases() -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = []
    n = 0
    ops = [*OPS.items(), ("vavrg", "AVRG"), ("vset", "SET")]
    for lanes in (2, 4):
        for op, model_op in ops:
            for d, a, b in itertools.product(TYPES, repeat=3):
                if op == "vset" and d == ".s32":
                    continue
                for sat in ((False,) if op == "vset" else (False, True)):
                    for k in range(3):
                        asel = LANE_SELS[lanes][(n + k) % 5]
                        bsel = LANE_SELS[lanes][(n + 2 * k + 1) % 5]
                        accumulate = (n + k) % 4 == 3 and not sat  # (.sat.add: illegal)
                        mask_text, mask = ("", 2**lanes - 1) if accumulate else \
                            MASKS[lanes][(n + k) % len(MASKS[lanes])]
                        cmp = CMPS[(n + k) % 6] if op == "vset" else ""
                        text = (f"{op}{lanes}{d if op != 'vset' else ''}{a}{b}"
                                f"{'.' + cmp if cmp else ''}{'.sat' if sat else ''}"
                                f"{'.add' if accumulate else ''} %0{mask_text}, %1{asel}, "
                                f"%2{bsel}, %3;")
                        model = (f"ref_simd({lanes}, {model_op}, {cmp.upper() or 'EQ'}, "
                                 f"{int(d == '.s32' and op != 'vset')}, {int(a == '.s32')}, "
                                 f"{int(b == '.s32')}, {int(sat)}, {int(accumulate)}, "
                                 f"{lane_map(asel, lanes, 0)}, {lane_map(bsel, lanes, lanes)}, "
                                 f"{mask}, a, b, c)")
                        cases.append((text, model))
                    n += 1
    return cases


def vmad_cases() -> list[str]:
    cases = []
    for d, a, b in itertools.product(TYPES, repeat=3):
        for scale in ("", ".shr7", ".shr15"):
            for sat in ("", ".sat"):
                for signs in (("", "", ""), ("-", "", ""), ("", "-", ""), ("", "", "-")):
                    na, nb, nc = signs
                    # A negated product or c makes the result signed.
                    cases.append(f"vmad{d}{a}{b}{sat}{scale} %0, {na}%1.h0, {nb}%2.b1, {nc}%3;")
        cases.append(f"vmad{d}{a}{b}.po %0, %1.b0, %2.h1, %3;")
    return cases


HEADER = r'''// Generated by tools/video_probe.py: PTX video instructions over edge-case
// operands, the device's answer beside the host model of zmlir's lowering.
//
//   nvcc -arch=sm_90 video_probe.cu -o probe && ./probe > h200.txt
//   nvcc -arch=sm_75 -DNO_VMAD video_probe.cu -o probe && zmlir run -- ./probe > ours.txt
//
// Each line: the instruction, a b c, the device's result, the model's, and
// `!` where they differ (vmad: no model yet, `--------`).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

enum Op { ADD, SUB, AVRG, ABSDIFF, MIN, MAX, SET, SHL, SHR };
enum Cmp { EQ, NE, LT, LE, GT, GE };
enum Second { NONE, S_ADD, S_MIN, S_MAX };
'''

MODEL_START = "static int64_t clamp64"
MODEL_END = "static const int B3210"


def model_source() -> str:
    """The host model, as test/cuda/programs/video_instructions.cu has it."""
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "test" / "cuda" / "programs" /
            "video_instructions.cu").read_text()
    return text[text.index(MODEL_START):text.index(MODEL_END)]


def main() -> None:
    scalar, simd = scalar_cases(), simd_cases()
    modelled = [case for case in scalar + simd if case[1]]
    vmad = [text for text, model in scalar if not model] + vmad_cases()
    out = [HEADER, model_source()]
    maps = sorted({name for _, model in simd for name in model.split(", ") if name[0] == "M" and name[1:].isdigit()})
    for name in maps:
        out.append(f"static const int {name}[] = {{{', '.join(name[1:])}}};\n")
    out.append("static const uint32_t kValues[] = {0x80, 0x7f, 0xff, 0x180, 0xffffff80u, 0x8000,\n"
               "    0x7fff, 0xffff, 0x18000, 0x7fffffff, 0x80000000u, 0xffffffffu, 0x80808080u,\n"
               "    0x7f7f7f7f, 0x12345678, 0xfedcba98u, 0, 1, 31, 32, 33};\n"
               "// (a, b, c) triples: indices into kValues.\n"
               "static const int kTriples[][3] = {{0, 0, 0}, {4, 4, 4}, {3, 0, 13}, {1, 2, 0},\n"
               "    {2, 1, 12}, {5, 6, 7}, {8, 5, 14}, {9, 10, 11}, {10, 9, 0}, {11, 11, 15},\n"
               "    {12, 13, 9}, {13, 12, 10}, {14, 15, 16}, {15, 14, 17}, {0, 18, 4},\n"
               "    {4, 19, 12}, {12, 20, 0}, {7, 3, 1}};\n"
               "constexpr int kTripleCount = sizeof kTriples / sizeof kTriples[0];\n")
    out.append(f"constexpr int kModelled = {len(modelled)};\n")
    out.append("#ifdef NO_VMAD\nconstexpr int kVmad = 0;\n#else\n"
               f"constexpr int kVmad = {len(vmad)};\n#endif\n")
    out.append("static const char* const kText[] = {\n")
    for text, _ in modelled:
        out.append(f'  "{text}",\n')
    for text in vmad:
        out.append(f'  "{text}",\n')
    out.append("};\n\n#define PTX(text) asm(text : \"=r\"(d) : \"r\"(a), \"r\"(b), \"r\"(c))\n")
    out.append("__global__ void probe(const uint32_t* in, uint32_t* out, int cases) {\n"
               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (i >= cases * kTripleCount) return;\n"
               "  int k = i / kTripleCount;\n"
               "  uint32_t a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2], d = 0;\n"
               "  switch (k) {\n")
    for k, (text, _) in enumerate(modelled):
        out.append(f'  case {k}: PTX("{text}"); break;\n')
    out.append("#ifndef NO_VMAD\n")
    for k, text in enumerate(vmad):
        out.append(f'  case {len(modelled) + k}: PTX("{text}"); break;\n')
    out.append("#endif\n  }\n  out[i] = d;\n}\n\n")
    out.append("static uint32_t model(int k, uint32_t a, uint32_t b, uint32_t c) {\n"
               "  switch (k) {\n")
    for k, (_, model) in enumerate(modelled):
        out.append(f"  case {k}: return {model};\n")
    out.append("  }\n  std::abort();\n}\n\n")
    out.append(r'''int main() {
  int cases = kModelled + kVmad, n = cases * kTripleCount;
  std::vector<uint32_t> in(3 * size_t(n)), out(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 3; ++j) in[3 * i + j] = kValues[kTriples[i % kTripleCount][j]];
  uint32_t *din, *dout;
  if (cudaMalloc(&din, in.size() * 4) || cudaMalloc(&dout, out.size() * 4) ||
      cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice))
    return std::fprintf(stderr, "cuda setup failed\n"), 1;
  probe<<<(n + 127) / 128, 128>>>(din, dout, cases);
  if (cudaGetLastError() || cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost))
    return std::fprintf(stderr, "probe kernel failed\n"), 1;
  int differ = 0;
  for (int i = 0; i < n; ++i) {
    int k = i / kTripleCount;
    uint32_t a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
    if (k < kModelled) {
      uint32_t m = model(k, a, b, c);
      differ += m != out[i];
      std::printf("%-52s %08x %08x %08x : %08x %08x%s\n", kText[k], a, b, c, out[i], m,
                  m != out[i] ? " !" : "");
    } else {
      std::printf("%-52s %08x %08x %08x : %08x --------\n", kText[k], a, b, c, out[i]);
    }
  }
  std::fprintf(stderr, "%d lines, %d differ from the model\n", n, differ);
  return 0;
}
''')
    print("".join(out), end="")


if __name__ == "__main__":
    main()
