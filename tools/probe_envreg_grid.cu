// What NVIDIA's driver puts in %envreg1:%envreg2 (cooperative groups' grid
// workspace pointer) in a plain and in a cooperative launch, and what the
// workspace holds (wsSize, barrier). An H200 (driver 580.159.04): 0 in a
// plain launch; in a cooperative one a workspace with wsSize 16, barrier 0.
// Ours the same (runtime/cuda/cooperative.py), at the module's workspace.
//   nvcc -arch=sm_90 tools/probe_envreg_grid.cu -o /tmp/probe_envreg_grid && /tmp/probe_envreg_grid
#include <cstdio>
__global__ void k(unsigned* out) {
  unsigned r1, r2;
  asm volatile("mov.u32 %0, %%envreg1;" : "=r"(r1));
  asm volatile("mov.u32 %0, %%envreg2;" : "=r"(r2));
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    out[0] = r1; out[1] = r2;
    unsigned long long p = ((unsigned long long)r1 << 32) | r2;
    if (p) { out[2] = ((volatile unsigned*)p)[0]; out[3] = ((volatile unsigned*)p)[1]; }
  }
}
int main() {
  unsigned* o; unsigned h[4];
  cudaMalloc(&o, 16);
  void* args[] = {&o};
  for (int coop = 0; coop < 2; ++coop) {
    for (int run = 0; run < 2; ++run) {
      cudaMemset(o, 0, 16);
      cudaError_t e = coop ? cudaLaunchCooperativeKernel((void*)k, 2, 64, args, 0, nullptr)
                           : (k<<<2, 64>>>(o), cudaGetLastError());
      cudaDeviceSynchronize();
      cudaMemcpy(h, o, 16, cudaMemcpyDeviceToHost);
      printf("%s run %d: launch %d envreg1 %#x envreg2 %#x wsSize %u barrier %#x\n",
             coop ? "cooperative" : "plain", run, e, h[0], h[1], h[2], h[3]);
    }
  }
}
