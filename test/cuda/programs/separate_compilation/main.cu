// Relocatable device code across translation units (nvcc -rdc=true, CMake's
// CUDA_SEPARABLE_COMPILATION): a kernel calling a function, reading a
// variable and using a template another unit also instantiates. Each unit
// has a static helper of the same name that does something else.
#include <cstdio>
#include "check.h"
#include "shared.h"

extern __device__ int bias;
static __device__ __noinline__ int helper(int x) { return x + 1; }
__device__ int table[4] = {1, 2, 3, 4};

__global__ void combine(int* out) {
  int i = threadIdx.x;
  out[i] = scale(square(i)) + bias + table[i & 3] + helper(i);
}

int main() {
  const int n = 64;
  int* d;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  combine<<<1, n>>>(d);
  CHECK(cudaGetLastError());
  int h[n];
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    // scale(x) = 3x + helper(3) of other.cu (2*3), bias 105.
    int want = 3 * i * i + 6 + 105 + (i & 3) + 1 + i + 1;
    if (h[i] != want) {
      printf("out[%d] = %d, expected %d\n", i, h[i], want);
      return 1;
    }
  }
  CHECK(cudaFree(d));
  printf("PASS\n");
  return 0;
}
