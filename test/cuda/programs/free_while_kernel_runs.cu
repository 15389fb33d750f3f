// cudaFree waits for the kernels that may still use the memory, as
// NVIDIA's does: libcurand frees its generator's states right after
// launching the kernel that reads them (curandDestroyGenerator after
// curandGenerateUniform; cuda-samples MC_EstimatePiP). Launches return
// while their kernels run, so a free that did not wait would unmap the
// pages under a running kernel (CUDA_ERROR_ILLEGAL_ADDRESS). One buffer of
// each kind: above the small-allocation size (memory of its own) and a
// small one (a slot of a shared slab).
#include "check.h"
#include "waits.h"

// Every thread spins a while, then reads and writes its part of `data`.
__global__ void late_touch(unsigned* data, size_t n, unsigned long long ns, unsigned* sums) {
  unsigned long long start = now_ns();
  while (now_ns() - start < ns) {
  }
  unsigned sum = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    sum += data[i];
    data[i] = sum;
  }
  atomicAdd(sums, sum);
}

static void free_while_running(size_t bytes, unsigned* sums) {
  size_t n = bytes / sizeof(unsigned);
  unsigned* data;
  CHECK(cudaMalloc(&data, bytes));
  CHECK(cudaMemset(data, 0, bytes));
  late_touch<<<16, 64>>>(data, n, 100ull * 1000 * 1000, sums);
  CHECK(cudaGetLastError());
  CHECK(cudaFree(data));  // the kernel is still spinning
  CHECK(cudaDeviceSynchronize());
}

int main() {
  unsigned* sums;
  CHECK(cudaMallocManaged(&sums, sizeof *sums));
  *sums = 1;
  free_while_running(8u << 20, sums);  // above the slab size
  free_while_running(4096, sums);      // a slab slot
  EXPECT(*sums == 1, "the kernels added %u to a sum of zeros", *sums - 1);
  std::printf("PASS\n");
  return 0;
}
