// %dynamic_smem_size and %total_smem_size read in a kernel with a static
// __shared__ array, launched with a different dynamic shared size each time.
#include "check.h"

__global__ void sizes(unsigned *out, int n) {
  __shared__ unsigned tile[256];
  extern __shared__ unsigned dyn[];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i;
  dyn[0] = i;
  __syncthreads();
  unsigned dynamic, total;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic));
  asm volatile("mov.u32 %0, %%total_smem_size;" : "=r"(total));
  if (i < n) {
    out[2 * i] = dynamic + (tile[threadIdx.x ^ 1] ^ (i ^ 1)) + (dyn[0] - dyn[0]);
    out[2 * i + 1] = total;
  }
}

int main() {
  const int n = 256;
  unsigned *d, h[2 * n];
  CHECK(cudaMalloc(&d, sizeof(h)));
  for (unsigned dynamic : {4u, 1000u, 8192u}) {
    sizes<<<n / 64, 64, dynamic>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
      EXPECT(h[2 * i] == dynamic, "thread %d: %%dynamic_smem_size %u, launched with %u", i,
             h[2 * i], dynamic);
      // %total_smem_size counts the static array too, in whole 128-byte
      // allocation units (the H200: 2048 for the static 2048 bytes of the
      // sreg_smem_size case, 1152 for 1024 + 4 here).
      unsigned want = (dynamic + 1024 + 127) / 128 * 128;
      EXPECT(h[2 * i + 1] == want, "thread %d: %%total_smem_size %u, want %u", i,
             h[2 * i + 1], want);
    }
  }
  // Above 48 KiB with the opt-in, as tensor-core kernels do: up to the
  // device's MaxSharedMemoryPerBlockOptin (compute capability 8.0: 163 KiB).
  int optin = 0;
  CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  EXPECT(optin >= 96 * 1024, "MaxSharedMemoryPerBlockOptin %d", optin);
  unsigned large = 96 * 1024;
  CHECK(cudaFuncSetAttribute(sizes, cudaFuncAttributeMaxDynamicSharedMemorySize, large));
  sizes<<<n / 64, 64, large>>>(d, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT(h[0] == large, "%%dynamic_smem_size %u, launched with %u", h[0], large);
  CHECK(cudaFree(d));
  std::printf("PASS\n");
  return 0;
}
