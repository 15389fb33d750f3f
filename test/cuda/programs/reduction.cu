#include "check.h"
#include <vector>
__global__ void block_sum(const int* in, int* out, int n) {
  extern __shared__ int buf[];
  int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
  buf[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
    if (tid < s) buf[tid] += buf[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    int v = buf[tid];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    if (tid == 0) atomicAdd(out, v);
  }
}
int main() {
  const int n = 100003, block = 256;
  std::vector<int> h(n);
  long long ref = 0;
  for (int i = 0; i < n; ++i) { h[i] = (i * 37) % 101 - 50; ref += h[i]; }
  int *din, *dout;
  CHECK(cudaMalloc(&din, n * 4)); CHECK(cudaMalloc(&dout, 4));
  CHECK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dout, 0, 4));
  block_sum<<<(n + block - 1) / block, block, block * sizeof(int)>>>(din, dout, n);
  CHECK(cudaGetLastError());
  int got = 0;
  CHECK(cudaMemcpy(&got, dout, 4, cudaMemcpyDeviceToHost));
  EXPECT(got == ref, "sum %d expected %lld", got, ref);
  std::printf("PASS\n");
}
