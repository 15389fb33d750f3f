#include "check.h"
#include <cstdint>
#include <cstdlib>
#include <vector>
// The PTX video instructions, checked against a host model written from the
// PTX ISA 9.0 pseudo-code (section 9.7.16), the scalar forms corrected to
// what an H200 computes: CUDA's SIMD intrinsics (nvcc
// 13 compiles __vabsdiffu4 and __vsadu2 to vabsdiff4/vabsdiff2.add, most
// of the others to plain arithmetic) and inline PTX for the forms nvcc
// does not emit: scalar vop with selectors, .sat, .add/.min/.max and
// destination merges; vshl/vshr; vset; SIMD selectors, masks, accumulate.

enum Op { ADD, SUB, AVRG, ABSDIFF, MIN, MAX, SET, SHL, SHR };
enum Cmp { EQ, NE, LT, LE, GT, GE };
enum Second { NONE, S_ADD, S_MIN, S_MAX };

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static int64_t lane_op(Op op, Cmp cmp, int64_t x, int64_t y) {
  switch (op) {
  case ADD: return x + y;
  case SUB: return x - y;
  case AVRG: return (x + y) >= 0 ? (x + y + 1) >> 1 : (x + y) >> 1;
  case ABSDIFF: return x > y ? x - y : y - x;
  case MIN: return x < y ? x : y;
  case MAX: return x > y ? x : y;
  case SET: {
    bool r = cmp == EQ ? x == y : cmp == NE ? x != y : cmp == LT ? x < y
           : cmp == LE ? x <= y : cmp == GT ? x > y : x >= y;
    return r ? 1 : 0;
  }
  default: std::abort();
  }
}

// partSelectSignExtend: sel -1 the word, 0-3 a byte, 4-5 a half-word.
static int64_t part(uint32_t x, int sel, bool sgn) {
  if (sel < 0) return sgn ? (int64_t)(int32_t)x : (int64_t)x;
  if (sel < 4) { uint32_t v = (x >> (8 * sel)) & 0xff; return sgn ? (int64_t)(int8_t)v : v; }
  uint32_t v = (x >> (16 * (sel - 4))) & 0xffff;
  return sgn ? (int64_t)(int16_t)v : v;
}

// The scalar forms as NVIDIA GPUs compute them (measured on an H200 with
// tools/video_probe.py; docs/video-instructions.md), not as the ISA's pseudo-code has it.
static uint32_t ref_scalar(Op op, Cmp cmp, bool ds, bool as, bool bs, bool sat, Second second,
                           bool clampMode, int asel, int bsel, int dsel, uint32_t a, uint32_t b,
                           uint32_t c) {
  int64_t ta = part(a, asel, as), tb = part(b, bsel, bs), tmp, compared;
  if (op == SHL || op == SHR) {  // (no .sat: zmlir rejects it)
    int64_t n = clampMode ? (tb > 32 ? 32 : tb) : (tb & 31);
    tmp = op == SHL ? (int64_t)((uint64_t)ta << n) : (ta >> n);
    // .min/.max see the exact shift; past bit 63 only its sign matters.
    compared = op == SHL && n == 32 && ta > INT32_MAX ? (int64_t)((uint64_t)ta << 31) : tmp;
  } else {
    tmp = compared = lane_op(op, cmp, ta, tb);
  }
  if (sat) {
    if (dsel >= 0) {  // the exact result read as unsigned, capped at the part's maximum
      int bits = dsel < 4 ? 8 : 16;
      uint64_t hi = ds ? (uint64_t(1) << (bits - 1)) - 1 : (uint64_t(1) << bits) - 1;
      tmp = (uint64_t)tmp > hi ? (int64_t)hi : tmp;
    } else {  // s32 clamps; u32 only raises a negative result to 0
      tmp = ds ? clamp64(tmp, INT32_MIN, INT32_MAX) : (tmp < 0 ? 0 : tmp);
    }
    compared = tmp;
  }
  if (second == S_ADD) tmp += c;
  if (second == S_MIN || second == S_MAX) {
    // vadd, vsub: their 32-bit result, signed; vset: atype's signedness.
    if (op == ADD || op == SUB) compared = (int32_t)(uint32_t)tmp;
    bool sgn = op == SET ? as : ds;
    bool cLess = sgn ? (int64_t)(int32_t)c < compared : (uint64_t)c < (uint64_t)compared;
    bool cWins = second == S_MIN ? cLess
                 : sgn ? compared < (int64_t)(int32_t)c : (uint64_t)compared < (uint64_t)c;
    if (cWins) tmp = sgn ? (int64_t)(int32_t)c : (int64_t)c;
  }
  uint32_t r = (uint32_t)tmp;
  if (dsel >= 0) {  // a byte or h0: the low bits placed there; h1: bits 31:16 kept
    int bits = dsel < 4 ? 8 : 16, shift = dsel < 4 ? 8 * dsel : 16 * (dsel - 4);
    uint32_t m = ((1u << bits) - 1) << shift;
    r = ((bits == 8 ? r << shift : r) & m) | (c & ~m);
  }
  return r;
}

// SIMD: sel lists, per lane from lane 0, the unit of {b, a} it reads.
static uint32_t ref_simd(int lanes, Op op, Cmp cmp, bool ds, bool as, bool bs, bool sat,
                         bool accumulate, const int* asel, const int* bsel, unsigned mask,
                         uint32_t a, uint32_t b, uint32_t c) {
  int bits = 32 / lanes;
  uint64_t pair = ((uint64_t)b << 32) | a;
  uint32_t merged = 0, acc = c, unit = (1u << bits) - 1;
  for (int i = 0; i < lanes; ++i) {
    auto lane = [&](int sel, bool sgn) {
      uint32_t v = (uint32_t)(pair >> (sel * bits)) & unit;
      return sgn ? (int64_t)(v ^ (1u << (bits - 1))) - (1 << (bits - 1)) : (int64_t)v;
    };
    int64_t t = lane_op(op, cmp, lane(asel[i], as), lane(bsel[i], bs));
    if (sat)
      t = ds ? clamp64(t, -(1 << (bits - 1)), (1 << (bits - 1)) - 1) : clamp64(t, 0, unit);
    if (mask >> i & 1) {
      acc += (uint32_t)t;
      merged |= ((uint32_t)t & unit) << (i * bits);
    } else {
      merged |= c & (unit << (i * bits));
    }
  }
  return accumulate ? acc : merged;
}

static const int B3210[] = {0, 1, 2, 3}, B7654[] = {4, 5, 6, 7}, B5170[] = {0, 7, 1, 5},
                 B0213[] = {3, 1, 2, 0}, H10[] = {0, 1}, H32[] = {2, 3}, H03[] = {3, 0},
                 H21[] = {1, 2};

#define PTX3(text)                                                                            \
  [](uint32_t a, uint32_t b, uint32_t c) {                                                    \
    uint32_t d = c;                                                                           \
    asm(text : "+r"(d) : "r"(a), "r"(b), "r"(c));                                             \
    return d;                                                                                 \
  }

// Each case: the device computation, then the host model's.
#define CASES(X)                                                                              \
  X(__vadd4(a, b), ref_simd(4, ADD, EQ, 0, 0, 0, 0, 0, B3210, B7654, 15, a, b, 0))             \
  X(__vsubss2(a, b), ref_simd(2, SUB, EQ, 1, 1, 1, 1, 0, H10, H32, 3, a, b, 0))                \
  X(__vabsdiffu4(a, b), ref_simd(4, ABSDIFF, EQ, 0, 0, 0, 0, 0, B3210, B7654, 15, a, b, 0))    \
  X(__vabsdiffs2(a, b), ref_simd(2, ABSDIFF, EQ, 0, 1, 1, 0, 0, H10, H32, 3, a, b, 0))         \
  X(__vavgu4(a, b), ref_simd(4, AVRG, EQ, 0, 0, 0, 0, 0, B3210, B7654, 15, a, b, 0))           \
  X(__vavgs2(a, b), ref_simd(2, AVRG, EQ, 1, 1, 1, 0, 0, H10, H32, 3, a, b, 0))                \
  X(__vmaxu4(a, b), ref_simd(4, MAX, EQ, 0, 0, 0, 0, 0, B3210, B7654, 15, a, b, 0))            \
  X(__vmins2(a, b), ref_simd(2, MIN, EQ, 1, 1, 1, 0, 0, H10, H32, 3, a, b, 0))                 \
  X(__vsetgtu4(a, b), ref_simd(4, SET, GT, 0, 0, 0, 0, 0, B3210, B7654, 15, a, b, 0))          \
  X(__vcmpgtu4(a, b), ref_simd(4, SET, GT, 0, 0, 0, 0, 0, B3210, B7654, 15, a, b, 0) * 0xffu)  \
  X(__vsads4(a, b), ref_simd(4, ABSDIFF, EQ, 0, 1, 1, 0, 1, B3210, B7654, 15, a, b, 0))        \
  X(__vsadu2(a, b), ref_simd(2, ABSDIFF, EQ, 0, 0, 0, 0, 1, H10, H32, 3, a, b, 0))             \
  X(PTX3("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;")(a, b, c),                                \
    ref_simd(4, ABSDIFF, EQ, 0, 0, 0, 0, 1, B3210, B7654, 15, a, b, c))                        \
  X(PTX3("vabsdiff4.u32.u32.u32 %0, %1, %2, %3;")(a, b, c),                                    \
    ref_simd(4, ABSDIFF, EQ, 0, 0, 0, 0, 0, B3210, B7654, 15, a, b, c))                        \
  X(PTX3("vadd4.s32.s32.u32.sat %0.b20, %1.b5170, %2.b0213, %3;")(a, b, c),                    \
    ref_simd(4, ADD, EQ, 1, 1, 0, 1, 0, B5170, B0213, 5, a, b, c))                             \
  X(PTX3("vsub4.u32.s32.s32.sat %0.b31, %1, %2, %3;")(a, b, c),                                \
    ref_simd(4, SUB, EQ, 0, 1, 1, 1, 0, B3210, B7654, 10, a, b, c))                            \
  X(PTX3("vavrg2.s32.s32.s32 %0.h1, %1.h03, %2.h21, %3;")(a, b, c),                            \
    ref_simd(2, AVRG, EQ, 1, 1, 1, 0, 0, H03, H21, 2, a, b, c))                                \
  X(PTX3("vmax2.s32.u32.s32.add %0, %1, %2, %3;")(a, b, c),                                    \
    ref_simd(2, MAX, EQ, 1, 0, 1, 0, 1, H10, H32, 3, a, b, c))                                 \
  X(PTX3("vsub2.s32.s32.s32.add %0.h0, %1, %2, %3;")(a, b, c),                                 \
    ref_simd(2, SUB, EQ, 1, 1, 1, 0, 1, H10, H32, 1, a, b, c))                                 \
  X(PTX3("vset4.s32.u32.le %0, %1, %2, %3;")(a, b, c),                                         \
    ref_simd(4, SET, LE, 0, 1, 0, 0, 0, B3210, B7654, 15, a, b, c))                            \
  X(PTX3("vset2.s32.s32.ne.add %0, %1.h10, %2.h10, %3;")(a, b, c),                             \
    ref_simd(2, SET, NE, 0, 1, 1, 0, 1, H10, H10, 3, a, b, c))                                 \
  X(PTX3("vmin4.u32.u32.s32 %0.b3, %1, %2, %3;")(a, b, c),                                     \
    ref_simd(4, MIN, EQ, 0, 0, 1, 0, 0, B3210, B7654, 8, a, b, c))                             \
  X(PTX3("vadd.s32.u32.s32.sat %0, %1.b1, %2.h1;")(a, b, c),                                   \
    ref_scalar(ADD, EQ, 1, 0, 1, 1, NONE, 0, 1, 5, -1, a, b, c))                               \
  X(PTX3("vsub.u32.s32.u32.sat %0, %1, %2;")(a, b, c),                                         \
    ref_scalar(SUB, EQ, 0, 1, 0, 1, NONE, 0, -1, -1, -1, a, b, c))                             \
  X(PTX3("vabsdiff.s32.s32.s32.add %0, %1.h0, %2.b2, %3;")(a, b, c),                           \
    ref_scalar(ABSDIFF, EQ, 1, 1, 1, 0, S_ADD, 0, 4, 2, -1, a, b, c))                          \
  X(PTX3("vmin.s32.s32.u32.max %0, %1, %2.b3, %3;")(a, b, c),                                  \
    ref_scalar(MIN, EQ, 1, 1, 0, 0, S_MAX, 0, -1, 3, -1, a, b, c))                             \
  X(PTX3("vmax.u32.u32.u32.sat.min %0, %1.h1, %2.h0, %3;")(a, b, c),                           \
    ref_scalar(MAX, EQ, 0, 0, 0, 1, S_MIN, 0, 5, 4, -1, a, b, c))                              \
  X(PTX3("vadd.s32.s32.s32.sat %0.b2, %1.b0, %2.b3, %3;")(a, b, c),                            \
    ref_scalar(ADD, EQ, 1, 1, 1, 1, NONE, 0, 0, 3, 2, a, b, c))                                \
  X(PTX3("vsub.u32.u32.u32 %0.h1, %1, %2, %3;")(a, b, c),                                      \
    ref_scalar(SUB, EQ, 0, 0, 0, 0, NONE, 0, -1, -1, 5, a, b, c))                              \
  X(PTX3("vshl.u32.u32.u32.clamp.add %0, %1.b0, %2.b1, %3;")(a, b, c),                         \
    ref_scalar(SHL, EQ, 0, 0, 0, 0, S_ADD, 1, 0, 1, -1, a, b, c))                              \
  X(PTX3("vshr.s32.s32.u32.wrap %0, %1, %2;")(a, b, c),                                        \
    ref_scalar(SHR, EQ, 1, 1, 0, 0, NONE, 0, -1, -1, -1, a, b, c))                             \
  X(PTX3("vshl.s32.s32.u32.clamp %0.h1, %1.h1, %2.b0, %3;")(a, b, c),                          \
    ref_scalar(SHL, EQ, 1, 1, 0, 0, NONE, 1, 5, 0, 5, a, b, c))                                \
  X(PTX3("vadd.u32.u32.s32.sat %0.b1, %1.b0, %2.b3, %3;")(a, b, c),                            \
    ref_scalar(ADD, EQ, 0, 0, 1, 1, NONE, 0, 0, 3, 1, a, b, c))                                \
  X(PTX3("vsub.s32.u32.u32.min %0, %1, %2, %3;")(a, b, c),                                     \
    ref_scalar(SUB, EQ, 1, 0, 0, 0, S_MIN, 0, -1, -1, -1, a, b, c))                            \
  X(PTX3("vmax.s32.u32.s32.max %0, %1, %2, %3;")(a, b, c),                                     \
    ref_scalar(MAX, EQ, 1, 0, 1, 0, S_MAX, 0, -1, -1, -1, a, b, c))                            \
  X(PTX3("vset.s32.s32.ge.min %0, %1, %2, %3;")(a, b, c),                                      \
    ref_scalar(SET, GE, 0, 1, 1, 0, S_MIN, 0, -1, -1, -1, a, b, c))                            \
  X(PTX3("vshl.u32.u32.u32.wrap.max %0, %1.b0, %2.b3, %3;")(a, b, c),                          \
    ref_scalar(SHL, EQ, 0, 0, 0, 0, S_MAX, 0, 0, 3, -1, a, b, c))                              \
  X(PTX3("vset.s32.u32.lt %0, %1.b2, %2;")(a, b, c),                                           \
    ref_scalar(SET, LT, 0, 1, 0, 0, NONE, 0, 2, -1, -1, a, b, c))                              \
  X(PTX3("vset.u32.u32.ge.add %0, %1, %2.h1, %3;")(a, b, c),                                   \
    ref_scalar(SET, GE, 0, 0, 0, 0, S_ADD, 0, -1, 5, -1, a, b, c))                             \
  X(PTX3("vset.s32.s32.eq %0.b1, %1.b1, %2.b1, %3;")(a, b, c),                                 \
    ref_scalar(SET, EQ, 0, 1, 1, 0, NONE, 0, 1, 1, 1, a, b, c))

#define COUNT_ONE(dev, host) +1
constexpr int kCases = 0 CASES(COUNT_ONE);

__global__ void video(const uint32_t* in, uint32_t* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
  int k = 0;
#define DEVICE_ONE(dev, host) out[(k++) * n + i] = (dev);
  CASES(DEVICE_ONE)
}

int main() {
  const int n = 4096;
  std::vector<uint32_t> in(3 * n);
  static const uint32_t edges[] = {0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff,
                                   0x80000000u, 0xffffffffu, 0x80808080u, 0x7f7f7f7f, 31, 32, 33};
  uint32_t seed = 12345;
  for (int i = 0; i < 3 * n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    in[i] = i < 3 * 256 ? edges[(i / 3 + (i % 3) * (i / 48)) % 16] : seed;
  }
  uint32_t *din, *dout;
  CHECK(cudaMalloc(&din, in.size() * 4));
  CHECK(cudaMalloc(&dout, size_t(kCases) * n * 4));
  CHECK(cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  video<<<n / 128, 128>>>(din, dout, n);
  CHECK(cudaGetLastError());
  std::vector<uint32_t> out(size_t(kCases) * n);
  CHECK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    uint32_t a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
    int k = 0;
#define HOST_ONE(dev, host)                                                                   \
  {                                                                                           \
    uint32_t want = (host), got = out[size_t(k) * n + i];                                     \
    EXPECT(got == want, "case %d (%s): a=%08x b=%08x c=%08x: got %08x, want %08x", k, #dev, a, \
           b, c, got, want);                                                                  \
    ++k;                                                                                      \
  }
    CASES(HOST_ONE)
  }
  std::printf("%d video cases x %d inputs\nPASS\n", kCases, n);
  return 0;
}
