// Grid-wide synchronisation: one cooperative launch whose phases are
// separated by cooperative_groups::this_grid().sync(), each phase reading
// what other blocks wrote in the one before; then a grid one block larger
// than the occupancy allows must be refused (cudaErrorCooperativeLaunchTooLarge).
// A device without cooperative launch (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH
// = 0) cannot run it: the program says so and exits with EXIT_WAIVED.
#include <cooperative_groups.h>

#include <algorithm>
#include <vector>

#include "check.h"

namespace cg = cooperative_groups;

constexpr int EXIT_WAIVED = 2;  // as NVIDIA's samples: not run, not failed
constexpr int ROUNDS = 6;

// rank: every thread's grid rank. ring: ROUNDS + 1 rows of one word per
// block; row r + 1 of block b is row r of b plus row r of its neighbour.
// total: each block's sum of every other block's phase-1 word.
__global__ void phases(unsigned* rank, unsigned* ring, unsigned* total) {
  cg::grid_group grid = cg::this_grid();
  const unsigned blocks = gridDim.x, b = blockIdx.x;
  const unsigned long long me = grid.thread_rank();
  // Phase 1: every thread its own word, thread 0 of each block row 0.
  rank[me] = static_cast<unsigned>(me) * 3u + 1u;
  if (threadIdx.x == 0) ring[b] = b * b + 7u;
  grid.sync();
  // Phase 2: a word written by a thread of the next block.
  const unsigned long long next = (me + blockDim.x) % grid.size();
  const unsigned seen = rank[next];
  if (threadIdx.x == 0) {
    unsigned sum = 0;
    for (unsigned i = 0; i < blocks; ++i) sum += ring[i];
    total[b] = sum;
  }
  grid.sync();
  rank[me] = seen;  // everyone has read before anyone overwrites
  // Phases 3..: ROUNDS rounds, each needing the neighbour's previous one.
  for (int r = 0; r < ROUNDS; ++r) {
    if (threadIdx.x == 0) {
      const unsigned* src = ring + r * blocks;
      ring[(r + 1) * blocks + b] = src[b] + 2u * src[(b + 1) % blocks];
    }
    grid.sync();
  }
}

int main() {
  int device = 0, cooperative = -1, sms = 0;
  CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (cooperative == 0) {
    std::printf("WAIVED: no cooperative launch (cudaDevAttrCooperativeLaunch is 0)\n");
    return EXIT_WAIVED;
  }
  EXPECT(cooperative == 1, "cudaDevAttrCooperativeLaunch = %d", cooperative);
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int threads = 128;
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, phases, threads, 0));
  EXPECT(per_sm >= 1, "%d resident blocks per multiprocessor", per_sm);
  // Every block must be resident at once: at most the occupancy, at least 2
  // blocks so that the phases do cross blocks.
  const int blocks = std::min(sms * per_sm, 4 * sms);
  EXPECT(blocks >= 2, "%d multiprocessors x %d blocks", sms, per_sm);
  const int n = blocks * threads;

  unsigned *rank, *ring, *total;
  CHECK(cudaMalloc(&rank, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&ring, (ROUNDS + 1) * blocks * sizeof(unsigned)));
  CHECK(cudaMalloc(&total, blocks * sizeof(unsigned)));
  CHECK(cudaMemset(ring, 0xff, (ROUNDS + 1) * blocks * sizeof(unsigned)));
  void* args[] = {&rank, &ring, &total};
  CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(phases), blocks, threads, args, 0,
                                    nullptr));
  CHECK(cudaDeviceSynchronize());

  std::vector<unsigned> got_rank(n), got_ring((ROUNDS + 1) * blocks), got_total(blocks);
  CHECK(cudaMemcpy(got_rank.data(), rank, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_ring.data(), ring, got_ring.size() * sizeof(unsigned),
                   cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_total.data(), total, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));

  for (int i = 0; i < n; ++i) {
    const unsigned want = static_cast<unsigned>((i + threads) % n) * 3u + 1u;
    EXPECT(got_rank[i] == want, "rank[%d] = %u, want %u", i, got_rank[i], want);
  }
  std::vector<unsigned> ring_want((ROUNDS + 1) * blocks);
  unsigned sum = 0;
  for (int b = 0; b < blocks; ++b) sum += ring_want[b] = b * b + 7u;
  for (int b = 0; b < blocks; ++b)
    EXPECT(got_total[b] == sum, "total[%d] = %u, want %u", b, got_total[b], sum);
  for (int r = 0; r < ROUNDS; ++r)
    for (int b = 0; b < blocks; ++b)
      ring_want[(r + 1) * blocks + b] =
          ring_want[r * blocks + b] + 2u * ring_want[r * blocks + (b + 1) % blocks];
  for (size_t i = 0; i < ring_want.size(); ++i)
    EXPECT(got_ring[i] == ring_want[i], "ring[%zu] (round %zu, block %zu) = %u, want %u", i,
           i / blocks, i % blocks, got_ring[i], ring_want[i]);
  // Every block resident at once is the promise: one block more is refused.
  const int too_many = sms * per_sm + 1;
  const cudaError_t refused = cudaLaunchCooperativeKernel(reinterpret_cast<void*>(phases),
                                                          too_many, threads, args, 0, nullptr);
  EXPECT(refused == cudaErrorCooperativeLaunchTooLarge, "%d blocks: %s", too_many,
         cudaGetErrorName(refused));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(rank));
  CHECK(cudaFree(ring));
  CHECK(cudaFree(total));
  std::printf("%d blocks of %d threads, %d grid syncs\nPASS\n", blocks, threads, ROUNDS + 2);
}
