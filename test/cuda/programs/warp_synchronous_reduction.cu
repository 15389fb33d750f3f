// A block reduction whose last warp passes partial sums through volatile
// shared memory with no __syncwarp, as CUDA's own samples did before CUDA 9:
// it relies on a warp's threads running in lockstep, and GPUs run it so.
#include "check.h"
#include <vector>

__global__ void block_sums(const int *in, int *out) {
  __shared__ int s[128];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * 128 + t];
  __syncthreads();
  if (t < 64)
    s[t] += s[t + 64];
  __syncthreads();
  if (t < 32) {
    volatile int *v = s;
    v[t] += v[t + 32];
    v[t] += v[t + 16];
    v[t] += v[t + 8];
    v[t] += v[t + 4];
    v[t] += v[t + 2];
    v[t] += v[t + 1];
  }
  if (t == 0)
    out[blockIdx.x] = s[0];
}

int main() {
  const int blocks = 64, n = blocks * 128;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i)
    h[i] = (i * 7) % 13;
  int *d, *o;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  CHECK(cudaMalloc(&o, blocks * sizeof(int)));
  CHECK(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  block_sums<<<blocks, 128>>>(d, o);
  CHECK(cudaGetLastError());
  std::vector<int> r(blocks);
  CHECK(cudaMemcpy(r.data(), o, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    int sum = 0;
    for (int i = 0; i < 128; ++i)
      sum += h[b * 128 + i];
    EXPECT(r[b] == sum, "block %d: %d, expected %d", b, r[b], sum);
  }
  std::printf("PASS\n");
}
