// Warp collectives around divergent control flow must execute exactly where
// the program puts them, with the lanes that reach them there: a shuffle
// whose result only a branch uses (numba's reductions write `v` in
// `if lane == 0`), collectives in device functions that are not inlined,
// each half of a warp shuffling in its own branch with its own mask, masks
// from a ballot used inside the branch they describe, and __syncwarp over a
// few lanes in a branch. Every lane's results are checked.
#include "check.h"
#include <vector>

constexpr int kBlock = 96, kGrid = 2, kResults = 8;

__device__ __noinline__ int warp_sum(int v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __noinline__ unsigned odd_lanes(int v) { return __ballot_sync(0xffffffffu, v & 1); }

__global__ void divergent(const int* in, int* out) {
  __shared__ int s[kBlock];
  int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  int v = in[t];
  int* o = out + t * kResults;
  for (int r = 0; r < kResults; ++r) o[r] = -1;

  // 0: shuffles whose results only lane 0 uses.
  int sum = v;
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  int next = __shfl_down_sync(0xffffffffu, v, 1);
  if (lane == 0) o[0] = sum + next;

  // 1: the same through device functions.
  int fsum = warp_sum(v);
  unsigned odd = odd_lanes(v);
  if (lane == 0) o[1] = fsum ^ (int)odd;

  // 2: each half-warp in its own branch, with its own mask: the lower half
  // sums in 16-lane segments, the upper half swaps neighbours.
  if (lane < 16) {
    int h = v;
    for (int offset = 8; offset > 0; offset /= 2) h += __shfl_down_sync(0x0000ffffu, h, offset, 16);
    o[2] = h;
  } else {
    o[2] = __shfl_xor_sync(0xffff0000u, v, 1);
  }

  // 3: a mask from a ballot, used by the lanes it names inside the branch
  // it describes (cuda-samples' reduce7 pattern, each source lane named).
  unsigned low = __ballot_sync(0xffffffffu, lane < 8);
  if (lane < 8) {
    int h = v;
    for (int offset = 4; offset > 0; offset /= 2) h += __shfl_down_sync(low, h, offset, 8);
    o[3] = h;
  }

  // 4: lanes leave a loop at different trips; each trip's lanes broadcast
  // the value of the lowest of them.
  int acc = 0;
  unsigned looping = 0xffffffffu;
  for (int trip = 0; trip < 4; ++trip) {
    unsigned stay = __ballot_sync(looping, lane % 4 >= trip);
    if (lane % 4 < trip) break;
    acc += __shfl_sync(stay, v, __ffs(stay) - 1);
    looping = stay;
  }
  o[4] = acc;

  // 5: four lanes exchange through shared memory under __syncwarp(0xf).
  if (lane < 4) {
    s[threadIdx.x] = v;
    __syncwarp(0xfu);
    int partner = s[threadIdx.x ^ 1];
    __syncwarp(0xfu);
    s[threadIdx.x] = partner * 2;
    __syncwarp(0xfu);
    o[5] = s[threadIdx.x ^ 2];
  }

  // 6: a vote and a match in a branch, over the lanes it holds.
  if (lane & 1) {
    unsigned odds = 0xaaaaaaaau;
    o[6] = __all_sync(odds, v >= 0) + 2 * __popc(__match_any_sync(odds, v & 1));
  }

  // 7: a shuffle result only the lanes of the other branch's mask use.
  int up = __shfl_up_sync(0xffffffffu, v, 2);
  if (lane >= 2 && lane < 6) o[7] = up;
}

int main() {
  const int n = kBlock * kGrid;
  std::vector<int> in(n), got(n * kResults), want(n * kResults, -1);
  for (int i = 0; i < n; ++i) in[i] = (i * 40503) % 1009;
  for (int base = 0; base < n; base += 32) {
    const int* w = &in[base];
    int sum = 0;
    unsigned odd = 0;
    for (int l = 0; l < 32; ++l) {
      sum += w[l];
      odd |= (w[l] & 1u) << l;
    }
    for (int l = 0; l < 32; ++l) {
      int* e = &want[(base + l) * kResults];
      if (l == 0) {
        e[0] = sum + w[1];
        e[1] = sum ^ (int)odd;
      }
      if (l >= 16) e[2] = w[l ^ 1];  // the lower half below
      int acc = 0;
      for (int trip = 0; trip < 4 && l % 4 >= trip; ++trip) acc += w[trip];
      e[4] = acc;
      if (l < 4) e[5] = w[l ^ 2 ^ 1] * 2;
      if (l & 1) {
        int same = 0;
        for (int k = 1; k < 32; k += 2) same += (w[k] & 1) == (w[l] & 1);
        e[6] = 1 + 2 * same;
      }
      if (l >= 2 && l < 6) e[7] = w[l - 2];
    }
    // Segmented shfl_down sums: lane l of a segment of `width` lanes ends with
    // the tree sum the offsets give it (lanes past the segment keep theirs).
    for (int width : {16, 8}) {
      std::vector<int> h(w, w + width);
      for (int offset = width / 2; offset > 0; offset /= 2) {
        std::vector<int> before = h;
        for (int l = 0; l < width; ++l) h[l] += l + offset < width ? before[l + offset] : before[l];
      }
      for (int l = 0; l < width; ++l) want[(base + l) * kResults + (width == 16 ? 2 : 3)] = h[l];
    }
  }
  int *din, *dout;
  CHECK(cudaMalloc(&din, n * sizeof(int)));
  CHECK(cudaMalloc(&dout, n * kResults * sizeof(int)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  divergent<<<kGrid, kBlock>>>(din, dout);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(got.data(), dout, n * kResults * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n * kResults; ++i)
    EXPECT(got[i] == want[i], "thread %d, case %d: %d, expected %d", i / kResults, i % kResults,
           got[i], want[i]);
  std::printf("PASS\n");
}
