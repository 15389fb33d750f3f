#include "check.h"
#include <vector>
// __constant__ and __device__ variables written and read from the host.
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
  std::printf("PASS\n");
}
