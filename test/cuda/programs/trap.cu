// __trap() in a kernel: the launch returns, the next synchronization reports
// cudaErrorLaunchFailure ("unspecified launch failure"), and the error is
// sticky: later copies and launches fail the same way. The process lives on.
#include "check.h"

__global__ void fill(int *out, int value) { out[threadIdx.x] = value; }

__global__ void check_index(int *out, int n) {
  if (threadIdx.x >= n)
    __trap();
  out[threadIdx.x] = 1;
}

int main() {
  int *d, h[64];
  CHECK(cudaMalloc(&d, sizeof(h)));
  fill<<<1, 64>>>(d, 3);
  CHECK(cudaDeviceSynchronize());
  check_index<<<1, 64>>>(d, 64);  // no thread traps
  CHECK(cudaDeviceSynchronize());
  check_index<<<1, 64>>>(d, 40);  // threads 40..63 trap
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("cudaDeviceSynchronize after __trap(): %s (%s)\n", cudaGetErrorName(sync),
              cudaGetErrorString(sync));
  EXPECT(sync == cudaErrorLaunchFailure, "sync returned %d", (int)sync);
  cudaError_t copy = cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
  EXPECT(copy == cudaErrorLaunchFailure, "a later copy returned %d", (int)copy);
  fill<<<1, 64>>>(d, 4);
  cudaError_t later = cudaDeviceSynchronize();
  EXPECT(later == cudaErrorLaunchFailure, "a later launch's sync returned %d", (int)later);
  std::printf("PASS\n");
  return 0;
}
