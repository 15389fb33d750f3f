#include "check.h"
#include <vector>
// A call graph of device functions the compiler keeps as calls.
__device__ __noinline__ int square(int x) { return x * x; }
__device__ __noinline__ int cube(int x) { return square(x) * x; }
__device__ __noinline__ int collatz_steps(int x) {
  int steps = 0;
  while (x != 1 && steps < 1000) { x = (x & 1) ? 3 * x + 1 : x / 2; ++steps; }
  return steps;
}
__global__ void kernel(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = cube(i % 10) + collatz_steps(i + 1);
}
int main() {
  const int n = 500;
  int* d; CHECK(cudaMalloc(&d, n * 4));
  kernel<<<(n + 127) / 128, 128>>>(d, n);
  std::vector<int> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    int x = i + 1, steps = 0;
    while (x != 1 && steps < 1000) { x = (x & 1) ? 3 * x + 1 : x / 2; ++steps; }
    int ref = (i % 10) * (i % 10) * (i % 10) + steps;
    EXPECT(h[i] == ref, "out[%d]=%d expected %d", i, h[i], ref);
  }
  std::printf("PASS\n");
}
