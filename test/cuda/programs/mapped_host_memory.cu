// Zero-copy: kernels read and write page-locked host memory directly,
// allocated mapped (cudaHostAlloc) and registered (cudaHostRegister).
#include <cstdio>
#include <cstdlib>

#include "check.h"

__global__ void scale_add(const float *in, float *out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i] + 1.0f;
}

int main() {
  const int n = 4097;
  CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
  float *in = nullptr;
  CHECK(cudaHostAlloc(&in, n * sizeof(float), cudaHostAllocMapped));
  // 4 KiB-aligned like the pages cudaHostRegister pins.
  float *out = static_cast<float *>(std::aligned_alloc(4096, 4 * 4096 + 4096));
  CHECK(cudaHostRegister(out, 4 * 4096 + 4096, cudaHostRegisterMapped));
  for (int i = 0; i < n; ++i) {
    in[i] = static_cast<float>(i);
    out[i] = -1.0f;
  }
  float *d_in = nullptr, *d_out = nullptr;
  CHECK(cudaHostGetDevicePointer(&d_in, in, 0));
  CHECK(cudaHostGetDevicePointer(&d_out, out, 0));
  scale_add<<<(n + 255) / 256, 256>>>(d_in, d_out, 2.0f, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) {
    if (out[i] != 2.0f * i + 1.0f) {
      std::printf("out[%d] = %f, expected %f\n", i, out[i], 2.0f * i + 1.0f);
      return 1;
    }
  }
  CHECK(cudaHostUnregister(out));
  std::free(out);
  CHECK(cudaFreeHost(in));
  std::printf("PASS\n");
  return 0;
}
