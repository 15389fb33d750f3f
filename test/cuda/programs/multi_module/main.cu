#include "../check.h"
#include <vector>
// Two translation units, each with its own fatbin: two modules at run time.
void launch_add_one(int* d, int n);   // defined in other.cu
__global__ void times_three(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 3;
}
int main() {
  const int n = 777;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = i;
  int* d; CHECK(cudaMalloc(&d, n * 4));
  CHECK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
  times_three<<<(n + 63) / 64, 64>>>(d, n);
  launch_add_one(d, n);
  CHECK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT(h[i] == 3 * i + 1, "h[%d]=%d", i, h[i]);
  std::printf("PASS\n");
}
