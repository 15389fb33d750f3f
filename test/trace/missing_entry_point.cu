// A program built for a newer driver: it needs a driver entry point ours does
// not have, looks it up through the runtime (cuGetProcAddress underneath), and
// stops without it. No driver call fails; `zmlir report` must still name the
// name it did not get.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void touch(int *p) { *p = 1; }

int main() {
  int *d = nullptr;
  if (cudaMalloc(&d, sizeof(int)) != cudaSuccess)
    return 2;
  touch<<<1, 1>>>(d);
  cudaDeviceSynchronize();
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  cudaError_t err = cudaGetDriverEntryPointByVersion("cuZmlirFutureEntryPoint", &fn, 13000,
                                                     cudaEnableDefault, &found);
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::printf("cuZmlirFutureEntryPoint: not available\n");
    return 1;
  }
  return 0;
}
