#include "check.h"
#include <vector>
__global__ void saxpy(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}
int main() {
  const int n = 100000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) { x[i] = i % 13; y[i] = i % 7; }
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, n * 4)); CHECK(cudaMalloc(&dy, n * 4));
  CHECK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y.data(), n * 4, cudaMemcpyHostToDevice));
  saxpy<<<32, 128>>>(n, 3.0f, dx, dy);
  CHECK(cudaMemcpy(y.data(), dy, n * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT(y[i] == 3.0f * (i % 13) + (i % 7), "y[%d]=%f", i, y[i]);
  std::printf("PASS\n");
}
