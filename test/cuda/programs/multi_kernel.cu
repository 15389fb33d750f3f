#include "check.h"
#include <vector>
// Several kernels in one module, launched in sequence on the same data.
__global__ void fill(int* x, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v + i;
}
__global__ void square(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * x[i];
}
__global__ void negate_odd(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n && (i & 1)) x[i] = -x[i];
}
int main() {
  const int n = 3000;
  int* d; CHECK(cudaMalloc(&d, n * 4));
  fill<<<(n + 63) / 64, 64>>>(d, 5, n);
  square<<<(n + 127) / 128, 128>>>(d, n);
  negate_odd<<<(n + 255) / 256, 256>>>(d, n);
  std::vector<int> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    int v = (5 + i) * (5 + i); if (i & 1) v = -v;
    EXPECT(h[i] == v, "h[%d]=%d expected %d", i, h[i], v);
  }
  std::printf("PASS\n");
}
