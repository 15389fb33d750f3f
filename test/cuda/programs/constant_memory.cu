#include "check.h"
#include <vector>
// __constant__ and __device__ variables written and read from the host, and
// __constant__ data read through a generic pointer (cvta.const).
__constant__ float coeffs[4];
__device__ unsigned int hits;
__global__ void poly(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = ((coeffs[3] * v + coeffs[2]) * v + coeffs[1]) * v + coeffs[0];
    if (y[i] > 10.0f) atomicAdd(&hits, 1u);
  }
}
// A generic pointer that may hold __constant__ or global memory.
__device__ __noinline__ float sum4(const float* p) { return p[0] + p[1] + p[2] + p[3]; }
__global__ void sums(const float* x, float* out) {
  out[threadIdx.x] = sum4(threadIdx.x & 1 ? coeffs : x);
}
int main() {
  const int n = 1000;
  const float c[4] = {1.0f, -2.0f, 0.5f, 0.25f};
  CHECK(cudaMemcpyToSymbol(coeffs, c, sizeof(c)));
  unsigned int zero = 0;
  CHECK(cudaMemcpyToSymbol(hits, &zero, sizeof(zero)));
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = (i - 500) / 50.0f;
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, n * 4)); CHECK(cudaMalloc(&dy, n * 4));
  CHECK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
  poly<<<(n + 127) / 128, 128>>>(dx, dy, n);
  CHECK(cudaMemcpy(y.data(), dy, n * 4, cudaMemcpyDeviceToHost));
  unsigned int got_hits = 0, ref_hits = 0;
  CHECK(cudaMemcpyFromSymbol(&got_hits, hits, sizeof(got_hits)));
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    float ref = __builtin_fmaf(__builtin_fmaf(__builtin_fmaf(c[3], v, c[2]), v, c[1]), v, c[0]);
    EXPECT(y[i] == ref, "y[%d]=%.9g expected %.9g", i, y[i], ref);
    ref_hits += ref > 10.0f;
  }
  EXPECT(got_hits == ref_hits, "hits %u expected %u", got_hits, ref_hits);
  sums<<<1, 2>>>(dx, dy);
  float two[2];
  CHECK(cudaMemcpy(two, dy, sizeof two, cudaMemcpyDeviceToHost));
  EXPECT(two[0] == ((x[0] + x[1]) + x[2]) + x[3], "sum of x: %.9g", two[0]);
  EXPECT(two[1] == ((c[0] + c[1]) + c[2]) + c[3], "sum of coeffs: %.9g", two[1]);
  std::printf("PASS\n");
}
