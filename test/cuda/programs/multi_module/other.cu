#include "../check.h"
__global__ void add_one(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1;
}
void launch_add_one(int* d, int n) {
  add_one<<<(n + 127) / 128, 128>>>(d, n);
  CHECK(cudaGetLastError());
}
