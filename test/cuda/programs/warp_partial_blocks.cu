// Warps of blocks whose size is not a multiple of 32: the last warp of each
// block is short, and its lanes past the block's end do not exist. Warp
// collectives and __syncwarp there hear only the lanes that exist (CUDA
// treats the others as exited): masks built from them, and full masks for
// the votes, ballots and reductions. Every lane's results are checked, for
// block sizes from 1 to 129 warps' worth of partial lanes.
#include "check.h"
#include <vector>

constexpr int kResults = 14;  // per thread, in `out`

// The lanes of the caller's warp that exist.
__device__ unsigned existing_lanes() {
  int n = min(32, (int)(blockDim.x - (threadIdx.x & ~31u)));
  return n == 32 ? 0xffffffffu : (1u << n) - 1;
}

__global__ void collectives(const int* in, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  int v = in[t], n = __popc(existing_lanes());
  unsigned lanes = existing_lanes();
  int* o = out + t * kResults;
  o[0] = __activemask();
  o[1] = __ballot_sync(lanes, v & 1);
  o[2] = __all_sync(lanes, v >= 0);
  o[3] = __any_sync(lanes, v > 1000);
  o[4] = __reduce_add_sync(lanes, v);
  o[5] = __reduce_min_sync(lanes, v);
  o[6] = __reduce_or_sync(lanes, (unsigned)v);
  o[7] = __match_any_sync(lanes, v & 3);
  int same;
  o[8] = __match_all_sync(lanes, 5, &same);
  o[9] = same;
  o[10] = __shfl_sync(lanes, v, (lane + 1) % n);  // rotate over the lanes that exist
  o[11] = __shfl_up_sync(lanes, v, 1);
  // A full mask names the missing lanes too; they do not vote.
  o[12] = __ballot_sync(0xffffffffu, 1);
  o[13] = __all_sync(0xffffffffu, v >= 0) + 2 * __reduce_add_sync(0xffffffffu, 1);
}

// numba's inner warp reduction: a tree in shared memory, each level after
// __syncwarp, over the lanes that exist.
__global__ void tree_sum(const int* in, int* out) {
  extern __shared__ int s[];
  int t = threadIdx.x, lane = t & 31;
  unsigned lanes = existing_lanes();
  int n = __popc(lanes);
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncwarp(lanes);
  for (int width = 16; width > 0; width /= 2) {
    if (lane < width && lane + width < n) s[t] += s[t + width];
    __syncwarp(lanes);
  }
  if (lane == 0) out[blockIdx.x * 32 + t / 32] = s[t];
}

struct Expected {
  std::vector<int> collectives, sums;
};

static Expected reference(const std::vector<int>& in, int block, int grid) {
  Expected e{std::vector<int>(in.size() * kResults), std::vector<int>(grid * 32, -1)};
  for (int b = 0; b < grid; ++b)
    for (int base = 0; base < block; base += 32) {
      int n = std::min(32, block - base);
      const int* w = &in[b * block + base];
      unsigned lanes = n == 32 ? 0xffffffffu : (1u << n) - 1, ballot = 0, ors = 0;
      int all = 1, sum = 0, mn = w[0];
      for (int l = 0; l < n; ++l) {
        ballot |= (w[l] & 1u) << l;
        all &= w[l] >= 0;
        sum += w[l];
        mn = std::min(mn, w[l]);
        ors |= (unsigned)w[l];
      }
      e.sums[b * 32 + base / 32] = sum;
      for (int l = 0; l < n; ++l) {
        unsigned match = 0;
        for (int k = 0; k < n; ++k) match |= unsigned((w[k] & 3) == (w[l] & 3)) << k;
        int r[kResults] = {(int)lanes, (int)ballot, all, 0, sum, mn, (int)ors, (int)match,
                           (int)lanes, 1, w[(l + 1) % n], w[l > 0 ? l - 1 : l], (int)lanes,
                           all + 2 * n};
        std::copy(r, r + kResults, &e.collectives[(b * block + base + l) * kResults]);
      }
    }
  return e;
}

int main() {
  const char* names[kResults] = {"activemask", "ballot", "all", "any", "reduce_add", "reduce_min",
                                 "reduce_or", "match_any", "match_all", "match_all pred",
                                 "shfl rotate", "shfl_up", "ballot full mask",
                                 "all + 2 reduce_add, full mask"};
  const int grid = 3;
  for (int block : {32, 33, 40, 63, 64, 65, 100, 129}) {
    int n = block * grid;
    std::vector<int> in(n), got(n * kResults), sums(grid * 32, -1);
    for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 997;
    Expected want = reference(in, block, grid);
    int *din, *dout, *dsums;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, n * kResults * sizeof(int)));
    CHECK(cudaMalloc(&dsums, grid * 32 * sizeof(int)));
    CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dsums, 0xff, grid * 32 * sizeof(int)));
    collectives<<<grid, block>>>(din, dout);
    tree_sum<<<grid, block, block * sizeof(int)>>>(din, dsums);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), dout, n * kResults * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(sums.data(), dsums, grid * 32 * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n * kResults; ++i)
      EXPECT(got[i] == want.collectives[i], "block %d, thread %d, %s: %d, expected %d", block,
             i / kResults, names[i % kResults], got[i], want.collectives[i]);
    for (int i = 0; i < grid * 32; ++i)
      EXPECT(sums[i] == want.sums[i], "block %d, warp %d of block %d: tree sum %d, expected %d",
             block, i % 32, i / 32, sums[i], want.sums[i]);
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
    CHECK(cudaFree(dsums));
  }
  std::printf("PASS\n");
}
