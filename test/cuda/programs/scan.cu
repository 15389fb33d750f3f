#include "check.h"
#include <vector>
// Inclusive prefix sum: a Hillis-Steele scan per block in shared memory, then
// a second pass adds each block's total to the following blocks.
#define B 256
__global__ void block_scan(const int* in, int* out, int* block_sums, int n) {
  __shared__ int buf[2][B];
  int tid = threadIdx.x, i = blockIdx.x * B + tid;
  int cur = 0;
  buf[cur][tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < B; off <<= 1) {
    int v = buf[cur][tid];
    if (tid >= off) v += buf[cur][tid - off];
    buf[1 - cur][tid] = v;
    cur = 1 - cur;
    __syncthreads();
  }
  if (i < n) out[i] = buf[cur][tid];
  if (tid == B - 1) block_sums[blockIdx.x] = buf[cur][tid];
}
__global__ void add_offsets(int* out, const int* block_sums, int n) {
  int i = blockIdx.x * B + threadIdx.x;
  int offset = 0;
  for (int b = 0; b < blockIdx.x; ++b) offset += block_sums[b];
  if (i < n) out[i] += offset;
}
int main() {
  const int n = 10000, blocks = (n + B - 1) / B;
  std::vector<int> h(n), got(n);
  for (int i = 0; i < n; ++i) h[i] = (i % 11) - 5;
  int *din, *dout, *dsums;
  CHECK(cudaMalloc(&din, n * 4)); CHECK(cudaMalloc(&dout, n * 4));
  CHECK(cudaMalloc(&dsums, blocks * 4));
  CHECK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  block_scan<<<blocks, B>>>(din, dout, dsums, n);
  add_offsets<<<blocks, B>>>(dout, dsums, n);
  CHECK(cudaMemcpy(got.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  int acc = 0;
  for (int i = 0; i < n; ++i) { acc += h[i]; EXPECT(got[i] == acc, "out[%d]=%d expected %d", i, got[i], acc); }
  std::printf("PASS\n");
}
