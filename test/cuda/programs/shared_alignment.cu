// Shared and local arrays declared with alignments of 64 to 1024 bytes
// (numba's cuda.shared.array(alignment=256), TMA buffers): each thread
// checks that every array's generic address is aligned as declared, in
// every block, next to a small array and before dynamic shared memory
// aligned to 128, and that the arrays hold what the block wrote.
#include <cstdint>

#include "check.h"

constexpr int THREADS = 64;

// The address through inline PTX: nvcc cannot fold the remainder to 0 from
// the declared alignment.
__device__ unsigned misaligned(const void *p, unsigned align, unsigned bit) {
  uint64_t address;
  asm volatile("mov.b64 %0, %1;" : "=l"(address) : "l"(p));
  return (address % align) ? bit : 0u;
}

__global__ void aligned(unsigned *bad, unsigned *sums) {
  __shared__ int small[3];
  __shared__ __align__(256) double big[50];
  __shared__ __align__(1024) unsigned char huge[40];
  __shared__ __align__(64) float mid[THREADS];
  extern __shared__ __align__(128) unsigned dyn[];
  __align__(256) double local[7];
  const unsigned t = threadIdx.x;
  if (t < 3) small[t] = t;
  if (t < 50) big[t] = t + blockIdx.x;
  if (t < 40) huge[t] = static_cast<unsigned char>(t);
  mid[t] = 2.0f * t;
  dyn[t] = 3 * t;
  for (int i = 0; i < 7; ++i) local[(i + t) % 7] = ((i + t) % 7) * t;
  __syncthreads();
  unsigned m = misaligned(big, 256, 1) | misaligned(huge, 1024, 2) | misaligned(mid, 64, 4) |
               misaligned(dyn, 128, 8) | misaligned(local, 256, 16);
  bad[blockIdx.x * THREADS + t] = m;
  if (t == 0) {
    double sum = small[0] + small[1] + small[2] + local[6];
    for (int i = 0; i < 50; ++i) sum += big[i];
    for (int i = 0; i < 40; ++i) sum += huge[i];
    for (int i = 0; i < THREADS; ++i) sum += mid[i] + dyn[i];
    sums[blockIdx.x] = static_cast<unsigned>(sum);
  }
}

int main() {
  const int blocks = 4, n = blocks * THREADS;
  unsigned *bad, *sums, h_bad[n], h_sums[blocks];
  CHECK(cudaMalloc(&bad, sizeof h_bad));
  CHECK(cudaMalloc(&sums, sizeof h_sums));
  aligned<<<blocks, THREADS, THREADS * sizeof(unsigned)>>>(bad, sums);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h_bad, bad, sizeof h_bad, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(h_sums, sums, sizeof h_sums, cudaMemcpyDeviceToHost));
  const char *names[] = {"big (256)", "huge (1024)", "mid (64)", "dyn (128)", "local (256)"};
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 5; ++k)
      EXPECT(!(h_bad[i] & (1u << k)), "thread %d: %s is misaligned", i, names[k]);
  for (int b = 0; b < blocks; ++b) {
    // 0+1+2, 6*0 (thread 0's local), 50 b + 1225, 780, 2*2016 + 3*2016
    const unsigned want = 3 + 50 * b + 1225 + 780 + 5 * 2016;
    EXPECT(h_sums[b] == want, "block %d: sum %u, expected %u", b, h_sums[b], want);
  }
  std::printf("PASS\n");
  return 0;
}
