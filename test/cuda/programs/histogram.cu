#include "check.h"
#include <vector>
__global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[data[i]], 1u);
}
int main() {
  const int n = 1 << 20;
  std::vector<unsigned char> h(n);
  std::vector<unsigned int> ref(256, 0), got(256);
  for (int i = 0; i < n; ++i) { h[i] = (i * 2654435761u) >> 24; ref[h[i]]++; }
  unsigned char* dd; unsigned int* db;
  CHECK(cudaMalloc(&dd, n)); CHECK(cudaMalloc(&db, 256 * 4));
  CHECK(cudaMemcpy(dd, h.data(), n, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(db, 0, 256 * 4));
  histogram<<<64, 256>>>(dd, db, n);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got.data(), db, 256 * 4, cudaMemcpyDeviceToHost));
  for (int b = 0; b < 256; ++b) EXPECT(got[b] == ref[b], "bin %d: %u vs %u", b, got[b], ref[b]);
  std::printf("PASS\n");
}
