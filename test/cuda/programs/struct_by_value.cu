#include "check.h"
#include <cstdint>
#include <vector>
// Structs passed and returned by value through device functions the compiler
// keeps as calls: nvcc passes them as aggregate .param byte arrays
// (`.param .align 8 .b8 p[24]`), written and read with st.param/ld.param at
// offsets, and mixed-width fields (a byte, a short, a double) at odd places.
struct Sample {
  double weight;
  int16_t count;
  uint8_t flag;
  float scale;
  int32_t id;
};
struct Pair { float lo; float hi; };
__device__ __noinline__ Sample blend(Sample a, Sample b, int i) {
  Sample r;
  r.weight = a.weight * 0.5 + b.weight;
  r.count = static_cast<int16_t>(a.count - b.count);
  r.flag = static_cast<uint8_t>(a.flag ^ b.flag ^ (i & 0xff));
  r.scale = a.scale * b.scale;
  r.id = a.id + 3 * b.id;
  return r;
}
__device__ __noinline__ Pair split(Sample s) {
  Pair p;
  p.lo = s.scale - 1.0f;
  p.hi = static_cast<float>(s.count) + static_cast<float>(s.flag);
  return p;
}
__global__ void kernel(const Sample* in, Sample* out, Pair* pairs, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Sample s = blend(in[i], in[n - 1 - i], i);
    out[i] = s;
    pairs[i] = split(s);
  }
}
int main() {
  const int n = 300;
  std::vector<Sample> h(n);
  for (int i = 0; i < n; ++i)
    h[i] = Sample{0.25 * i - 7.0, static_cast<int16_t>(i * 97 - 20000),
                  static_cast<uint8_t>(i * 13), 1.0f + 0.125f * (i % 17), -1000 + 7 * i};
  Sample *din, *dout; Pair* dpairs;
  CHECK(cudaMalloc(&din, n * sizeof(Sample)));
  CHECK(cudaMalloc(&dout, n * sizeof(Sample)));
  CHECK(cudaMalloc(&dpairs, n * sizeof(Pair)));
  CHECK(cudaMemcpy(din, h.data(), n * sizeof(Sample), cudaMemcpyHostToDevice));
  kernel<<<(n + 127) / 128, 128>>>(din, dout, dpairs, n);
  CHECK(cudaGetLastError());
  std::vector<Sample> got(n);
  std::vector<Pair> pairs(n);
  CHECK(cudaMemcpy(got.data(), dout, n * sizeof(Sample), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(pairs.data(), dpairs, n * sizeof(Pair), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    const Sample &a = h[i], &b = h[n - 1 - i];
    double weight = a.weight * 0.5 + b.weight;
    int16_t count = static_cast<int16_t>(a.count - b.count);
    uint8_t flag = static_cast<uint8_t>(a.flag ^ b.flag ^ (i & 0xff));
    float scale = a.scale * b.scale;
    int32_t id = a.id + 3 * b.id;
    EXPECT(got[i].weight == weight && got[i].count == count && got[i].flag == flag &&
               got[i].scale == scale && got[i].id == id,
           "out[%d] = {%g, %d, %d, %g, %d}, expected {%g, %d, %d, %g, %d}", i, got[i].weight,
           got[i].count, got[i].flag, got[i].scale, got[i].id, weight, count, flag, scale, id);
    float lo = scale - 1.0f, hi = static_cast<float>(count) + static_cast<float>(flag);
    EXPECT(pairs[i].lo == lo && pairs[i].hi == hi, "pairs[%d] = {%g, %g}, expected {%g, %g}", i,
           pairs[i].lo, pairs[i].hi, lo, hi);
  }
  std::printf("PASS\n");
}
