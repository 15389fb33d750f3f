// assert() in a kernel: each failing thread prints NVIDIA's message
// (file:line: function: block: [x,y,z], thread: [x,y,z] Assertion `...`
// failed.) at the next synchronisation, which returns cudaErrorAssert; the
// error is sticky, as after __trap(). test_device_assert
// (test/runtime/test_runtime_cuda.py) checks the exact messages.
#include <cassert>
#include "check.h"

__device__ __noinline__ void check_value(const int *values, int i) {
  assert(values[i] >= 0 && "values must not be negative");
}

__global__ void check_all(const int *values, int n, bool report) {
  int i = blockIdx.y * blockDim.x * gridDim.x + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    check_value(values, i);
  if (report && i == 0)  // (once a thread failed, NVIDIA may end the others anywhere)
    printf("thread 0 passed its check\n");
}

__global__ void fill(int *out, int value) { out[threadIdx.x] = value; }

int main() {
  int h[64], *d;
  for (int i = 0; i < 64; ++i)
    h[i] = i;
  CHECK(cudaMalloc(&d, sizeof(h)));
  CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
  check_all<<<dim3(1, 2), 32>>>(d, 64, true);  // no thread fails
  CHECK(cudaDeviceSynchronize());
  std::printf("host: no assert yet\n");
  // Threads 5 (block [0,0,0]) and 42 (block [0,1,0], thread [10,0,0]) fail.
  h[5] = h[42] = -1;
  CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
  check_all<<<dim3(1, 2), 32>>>(d, 64, false);
  std::printf("host: launched\n");
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("host: cudaDeviceSynchronize: %s (%s)\n", cudaGetErrorName(sync),
              cudaGetErrorString(sync));
  EXPECT(sync == cudaErrorAssert, "sync returned %d", (int)sync);
  cudaError_t copy = cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
  EXPECT(copy == cudaErrorAssert, "a later copy returned %d", (int)copy);
  fill<<<1, 64>>>(d, 4);
  cudaError_t later = cudaDeviceSynchronize();
  EXPECT(later == cudaErrorAssert, "a later launch's sync returned %d", (int)later);
  std::printf("PASS\n");
  return 0;
}
