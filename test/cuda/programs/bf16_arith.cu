#include "check.h"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cuda_bf16.h>
// __nv_bfloat16 arithmetic and conversions, checked bit for bit against a
// host reference (round to nearest even; NVIDIA's canonical NaN 0x7fff).
// On the SPIR-V target every bf16 value is an i16 and the arithmetic f32:
// LLVM's SPIR-V backend would need SPV_KHR_bfloat16 for a bfloat, which
// Intel's OpenCL CPU runtime lacks, and the module did not compile.

static float fromBits(uint16_t b) { uint32_t u = uint32_t(b) << 16; float f; std::memcpy(&f, &u, 4); return f; }

// A double rounded to bf16 with `mode` (0 nearest even, 1 towards zero,
// 2 down, 3 up); NaN 0x7fff.
static uint16_t roundDouble(double x, int mode) {
  if (x != x) return 0x7fff;
  uint64_t u; std::memcpy(&u, &x, 8);
  bool negative = u >> 63;
  double a = negative ? -x : x;
  if (a == 0) return negative ? 0x8000 : 0;
  if (a == INFINITY) return negative ? 0xff80 : 0x7f80;
  // Scale into the bf16 significand grid: a = m * 2^e, m in [2^7, 2^8).
  int e = 0; double m = a;
  while (m >= 256) { m /= 2; ++e; }
  while (m < 128 && e > -133) { m *= 2; --e; }  // subnormals: e = -133 at least
  double lo = double(uint64_t(m));
  double frac = m - lo;
  bool up;
  if (mode == 0) up = frac > 0.5 || (frac == 0.5 && (uint64_t(lo) & 1));
  else if (mode == 1) up = false;
  else up = frac > 0 && ((mode == 3) != negative);
  double r = std::ldexp(lo + (up ? 1 : 0), e);
  float f = float(r);  // exact, or the overflow to infinity
  if (r > 3.3895313892515355e38) f = INFINITY;
  uint32_t w; std::memcpy(&w, &f, 4);
  return uint16_t(w >> 16) | (negative ? 0x8000 : 0);
}

constexpr int N = 64;
constexpr int OUTS = 20;

__global__ void bf16_kernel(const float* x, const float* y, const int* k, uint16_t* out,
                            float* widened) {
  int i = threadIdx.x;
  __nv_bfloat16 a = __float2bfloat16(x[i]), b = __float2bfloat16(y[i]);
  uint16_t* o = out + i * OUTS;
  auto put = [&](int j, __nv_bfloat16 h) { o[j] = *reinterpret_cast<uint16_t*>(&h); };
  put(0, a);
  put(1, __float2bfloat16_rz(x[i]));
  put(2, __float2bfloat16_rd(x[i]));
  put(3, __float2bfloat16_ru(x[i]));
  put(4, __hadd(a, b));
  put(5, __hsub(a, b));
  put(6, __hmul(a, b));
  put(7, __hfma(a, b, __float2bfloat16(0.375f)));
  put(8, __hmax(a, b));
  put(9, __hmin(a, b));
  put(10, __hneg(a));
  put(11, __habs(b));
  put(12, __int2bfloat16_rn(k[i]));
  put(13, __int2bfloat16_rz(k[i]));
  put(14, __double2bfloat16(double(x[i]) * (1.0 + 1e-9)));
  __nv_bfloat162 p = __floats2bfloat162_rn(x[i], y[i]);
  __nv_bfloat162 q = __hfma2(p, p, p);
  put(15, q.x);
  put(16, q.y);
  __nv_bfloat16 sel = __hlt(a, b) ? a : b;
  put(17, sel);
  put(18, __ushort2bfloat16_rn(static_cast<unsigned short>(k[i])));
  put(19, __hgt(a, b) ? __float2bfloat16(1.0f) : __float2bfloat16(0.0f));
  widened[i] = __bfloat162float(a) + __bfloat162float(b);
}

__global__ void plain_kernel(int* out) { out[threadIdx.x] = threadIdx.x * 3; }

int main() {
  float x[N], y[N];
  int k[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (i - 20) * 0.731f + i * 1e-3f;
    y[i] = 1.0f / (i + 0.37f) - 0.5f;
    k[i] = (i * 2654435761u) >> (i % 13);
  }
  x[1] = NAN; y[2] = NAN; x[3] = 3.4e38f; x[4] = -3.4e38f; x[5] = 1.0e-40f; x[6] = -0.0f;
  x[7] = 1.00390625f;  // a tie: 1 + 2^-8
  x[8] = 1.01171875f;  // a tie the other way: 1 + 3 * 2^-8
  k[9] = 0x7fffffff; k[10] = -0x7fffffff - 1; k[11] = 16777217; k[12] = 0x01018000;
  float *dx, *dy, *dw; int *dk, *dp; uint16_t* dout;
  CHECK(cudaMalloc(&dx, sizeof x)); CHECK(cudaMalloc(&dy, sizeof y)); CHECK(cudaMalloc(&dk, sizeof k));
  CHECK(cudaMalloc(&dout, N * OUTS * 2)); CHECK(cudaMalloc(&dw, N * 4)); CHECK(cudaMalloc(&dp, N * 4));
  CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dk, k, sizeof k, cudaMemcpyHostToDevice));
  // The module's kernel without bf16 runs too.
  plain_kernel<<<1, N>>>(dp);
  CHECK(cudaGetLastError());
  bf16_kernel<<<1, N>>>(dx, dy, dk, dout, dw);
  CHECK(cudaGetLastError());
  uint16_t out[N * OUTS]; float widened[N]; int plain[N];
  CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(widened, dw, sizeof widened, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(plain, dp, sizeof plain, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; ++i) {
    EXPECT(plain[i] == i * 3, "plain_kernel[%d] = %d", i, plain[i]);
    uint16_t a = roundDouble(x[i], 0), b = roundDouble(y[i], 0);
    double fa = fromBits(a), fb = fromBits(b);
    bool nan = fa != fa || fb != fb;
    uint16_t p0 = roundDouble(x[i], 0), p1 = roundDouble(y[i], 0);
    double q0 = fromBits(p0), q1 = fromBits(p1);
    // Packed fma of small values: the products are exact in double.
    uint16_t want[OUTS] = {
        a, roundDouble(x[i], 1), roundDouble(x[i], 2), roundDouble(x[i], 3),
        roundDouble(fa + fb, 0), roundDouble(fa - fb, 0), roundDouble(fa * fb, 0),
        roundDouble(fa * fb + 0.375, 0),
        // max/min: a NaN operand gives the other; -0 below +0.
        fa != fa ? b : fb != fb ? a : (fa > fb || (fa == fb && !(a & 0x8000))) ? a : b,
        fa != fa ? b : fb != fb ? a : (fa < fb || (fa == fb && (a & 0x8000))) ? a : b,
        uint16_t(fa != fa ? 0x7fff : a ^ 0x8000), uint16_t(fb != fb ? 0x7fff : b & 0x7fff),
        roundDouble(double(k[i]), 0), roundDouble(double(k[i]), 1),
        roundDouble(double(x[i]) * (1.0 + 1e-9), 0),
        roundDouble(q0 * q0 + q0, 0), roundDouble(q1 * q1 + q1, 0),
        nan ? b : (fa < fb ? a : b),
        roundDouble(double(static_cast<unsigned short>(k[i])), 0),
        uint16_t(fa > fb ? 0x3f80 : 0)};
    for (int j = 0; j < OUTS; ++j) {
      // Operations on a NaN give a NaN; NVIDIA's is 0x7fff (abs/neg keep the
      // payload: only compare NaN-ness there).
      uint16_t got = out[i * OUTS + j];
      bool gotNaN = (got & 0x7fff) > 0x7f80, wantNaN = (want[j] & 0x7fff) > 0x7f80;
      if (wantNaN || gotNaN) {
        EXPECT(gotNaN && wantNaN, "x=%a y=%a k=%d result %d: got %#06x, want %#06x", x[i], y[i],
               k[i], j, got, want[j]);
        if (j != 10 && j != 11 && j < 15)
          EXPECT(got == 0x7fff, "result %d of x=%a y=%a: NaN %#06x, not 0x7fff", j, x[i], y[i], got);
        continue;
      }
      EXPECT(got == want[j], "x=%a y=%a k=%d result %d: got %#06x, want %#06x", x[i], y[i], k[i],
             j, got, want[j]);
    }
    float w = float(fa + fb);
    EXPECT(std::memcmp(&w, &widened[i], 4) == 0 || (w != w && widened[i] != widened[i]),
           "widened %d: %a, want %a", i, widened[i], w);
  }
  std::printf("PASS\n");
  return 0;
}
