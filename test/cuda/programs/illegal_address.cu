// A kernel writing to an address nothing is mapped at: the launch succeeds,
// the next synchronising call returns cudaErrorIllegalAddress, and so does
// every later call (sticky), as on NVIDIA's driver; the process lives on.
#include <cstdint>
#include <cstdio>

__global__ void wild_write(int* p) { p[threadIdx.x * 1024 + blockIdx.x * 65536] = 42; }

int main() {
  int* wild = reinterpret_cast<int*>(uintptr_t{0x100000000000});  // 16 TiB: unmapped
  wild_write<<<4, 64>>>(wild);
  cudaError_t launched = cudaGetLastError();
  cudaError_t synced = cudaDeviceSynchronize();
  void* p = nullptr;
  cudaError_t later = cudaMalloc(&p, 256);
  if (launched != cudaSuccess || synced != cudaErrorIllegalAddress ||
      later != cudaErrorIllegalAddress) {
    printf("launch %d, synchronize %d, later cudaMalloc %d\n", launched, synced, later);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
