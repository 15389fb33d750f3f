// A block whose threads wait for a flag that no thread sets: a GPU hangs;
// where a block's threads take turns (the CPU backend), the launch fails
// (cudaErrorLaunchFailure, sticky) and the process goes on. Not one of
// programs/ (the passthrough runs those on a GPU).
#include "programs/check.h"

__global__ void wait_forever(int *out, int set) {
  __shared__ int flag;
  if (threadIdx.x == 0)
    flag = 0;
  __syncthreads();
  if (set && threadIdx.x == blockDim.x - 1)
    atomicExch(&flag, 1);
  while (*(volatile int *)&flag == 0) {
  }
  out[threadIdx.x] = 1;
}

int main() {
  int *d;
  CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  wait_forever<<<2, 64>>>(d, 1);  // the last thread opens it
  CHECK(cudaDeviceSynchronize());
  wait_forever<<<2, 64>>>(d, 0);
  cudaError_t sync = cudaDeviceSynchronize();
  std::printf("deadlocked block: %s\n", cudaGetErrorName(sync));
  EXPECT(sync == cudaErrorLaunchFailure, "sync returned %d", (int)sync);
  std::printf("PASS\n");
  return 0;
}
