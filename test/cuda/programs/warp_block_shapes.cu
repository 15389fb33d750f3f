// Warps of blocks of more than one row whose width is not a multiple of 32:
// CUDA's warps are 32 consecutive linear thread ids (x fastest, then y, then
// z), so a warp of a 16x2 block holds both rows and one of a 5x7x3 block
// spans rows and planes. Shuffles, ballots, reductions and %laneid follow
// the linear id; threadIdx and blockDim stay the block's own, in the kernel
// and in a device function it calls (not inlined), and in a kernel that
// uses no warp operation calling the same function. The dynamic shared
// memory of those blocks is whole.
#include "check.h"
#include <vector>

constexpr int kResults = 12;  // per thread, in `out`

__device__ __noinline__ int shape_of_thread() {
  return ((threadIdx.z * 8 + threadIdx.y) * 64 + threadIdx.x) * 4096 +
         (blockDim.z * 64 + blockDim.y) * 64 + blockDim.x;
}

__device__ int linear_id() {
  return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

// The lanes of the caller's warp that exist.
__device__ unsigned existing_lanes() {
  int size = blockDim.x * blockDim.y * blockDim.z;
  int n = min(32, size - (linear_id() & ~31));
  return n == 32 ? 0xffffffffu : (1u << n) - 1;
}

__global__ void warps(int* out) {
  extern __shared__ int window[];
  int size = blockDim.x * blockDim.y * blockDim.z, t = linear_id();
  int* o = out + (blockIdx.x * size + t) * kResults;
  unsigned lanes = existing_lanes(), lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  int n = __popc(lanes);
  window[t] = 1000 + t;
  __syncthreads();
  o[0] = lane;
  o[1] = __shfl_sync(lanes, (int)threadIdx.y, 16 % n);
  o[2] = __shfl_sync(lanes, t, (lane + 1) % n);
  o[3] = __shfl_xor_sync(lanes, (int)(threadIdx.z * 100 + threadIdx.y * 10 + threadIdx.x),
                         lane + 1 < n ? 1 : 0);
  o[4] = __ballot_sync(lanes, threadIdx.y & 1);
  o[5] = __reduce_add_sync(lanes, (int)threadIdx.x);
  o[6] = __any_sync(lanes, threadIdx.z == 1);
  o[7] = shape_of_thread();
  o[8] = blockDim.x * blockDim.y * blockDim.z;
  o[9] = window[size - 1 - t];
  o[10] = t / 32;
  o[11] = __match_any_sync(lanes, threadIdx.y);
}

// No warp operation: its blocks keep their shape; the device function is
// shared with the kernel above.
__global__ void plain(int* out) {
  int size = blockDim.x * blockDim.y * blockDim.z;
  out[blockIdx.x * size + linear_id()] = shape_of_thread();
}

struct Thread {
  int x, y, z, t;
};

int main() {
  const char* names[kResults] = {"%laneid", "shfl of threadIdx.y from lane 16", "shfl rotate",
                                 "shfl_xor", "ballot of threadIdx.y & 1",
                                 "reduce_add of threadIdx.x", "any threadIdx.z == 1",
                                 "device function's threadIdx and blockDim", "block size",
                                 "dynamic shared memory", "warp", "match_any of threadIdx.y"};
  const int grid = 3;
  const dim3 blocks[] = {dim3(16, 2), dim3(8, 4, 2), dim3(24, 3), dim3(5, 7, 3), dim3(1, 64),
                         dim3(33, 2), dim3(48, 2, 2), dim3(64, 2), dim3(96), dim3(7, 1, 5)};
  for (dim3 block : blocks) {
    int size = block.x * block.y * block.z, n = size * grid;
    std::vector<Thread> threads(size);
    for (int z = 0; z < (int)block.z; ++z)
      for (int y = 0; y < (int)block.y; ++y)
        for (int x = 0; x < (int)block.x; ++x) {
          int t = (z * block.y + y) * block.x + x;
          threads[t] = {x, y, z, t};
        }
    std::vector<int> want(size * kResults);
    for (int t = 0; t < size; ++t) {
      int base = t & ~31, lanes = std::min(32, size - base), lane = t - base;
      const Thread* w = &threads[base];
      const Thread& me = threads[t];
      unsigned ballot = 0, match = 0;
      int sum = 0, any = 0;
      for (int l = 0; l < lanes; ++l) {
        ballot |= unsigned(w[l].y & 1) << l;
        match |= unsigned(w[l].y == me.y) << l;
        sum += w[l].x;
        any |= w[l].z == 1;
      }
      const Thread& partner = w[lane + 1 < lanes ? lane ^ 1 : lane];
      int r[kResults] = {lane,
                         w[16 % lanes].y,
                         w[(lane + 1) % lanes].t,
                         partner.z * 100 + partner.y * 10 + partner.x,
                         (int)ballot,
                         sum,
                         any,
                         ((me.z * 8 + me.y) * 64 + me.x) * 4096 +
                             (int)((block.z * 64 + block.y) * 64 + block.x),
                         size,
                         1000 + size - 1 - t,
                         t / 32,
                         (int)match};
      std::copy(r, r + kResults, &want[t * kResults]);
    }
    int* dout;
    CHECK(cudaMalloc(&dout, n * kResults * sizeof(int)));
    CHECK(cudaMemset(dout, 0xff, n * kResults * sizeof(int)));
    warps<<<grid, block, size * sizeof(int)>>>(dout);
    CHECK(cudaGetLastError());
    std::vector<int> got(n * kResults);
    CHECK(cudaMemcpy(got.data(), dout, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n * kResults; ++i) {
      int t = i / kResults % size, k = i % kResults;
      EXPECT(got[i] == want[t * kResults + k],
             "block (%u,%u,%u), block %d, thread (%d,%d,%d): %s: %d, expected %d", block.x,
             block.y, block.z, i / kResults / size, threads[t].x, threads[t].y, threads[t].z,
             names[k], got[i], want[t * kResults + k]);
    }
    plain<<<grid, block>>>(dout);
    CHECK(cudaMemcpy(got.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i)
      EXPECT(got[i] == want[i % size * kResults + 7],
             "plain kernel, block (%u,%u,%u), thread %d: %d, expected %d", block.x, block.y,
             block.z, i % size, got[i], want[i % size * kResults + 7]);
    CHECK(cudaFree(dout));
  }
  std::printf("PASS\n");
}
