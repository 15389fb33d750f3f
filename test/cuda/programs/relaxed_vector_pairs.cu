// An 8-byte `st.relaxed.gpu.v2.u32` (and a 16-byte `.v2.u64`) is never
// torn: a reader's `ld.relaxed.gpu.v2` sees both words of one store. cub's decoupled
// look-back (thrust::inclusive_scan, copy_if, ...) keeps {status, value}
// tile descriptors this way; when the pair was written as two 32-bit
// stores, a reader saw a new value with an old status and scans counted
// tiles twice (cuda-samples segmentationTreeThrust looped forever).
// One block publishes pairs {i, i * KEY}; the others read them concurrently
// and count pairs whose words disagree.
#include <vector>

#include "check.h"

constexpr unsigned KEY = 2654435761u;
constexpr unsigned WRITES = 1u << 21;
constexpr unsigned READS = 1u << 21;
constexpr unsigned BLOCKS = 4;

__device__ void store_pair(unsigned* p, unsigned a, unsigned b) {
  asm volatile("st.relaxed.gpu.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(a), "r"(b)
               : "memory");
}

__device__ void load_pair(const unsigned* p, unsigned& a, unsigned& b) {
  asm volatile("ld.relaxed.gpu.global.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(p)
               : "memory");
}

using u64 = unsigned long long;

__device__ void store_pair(u64* p, u64 a, u64 b) {
  asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b)
               : "memory");
}

__device__ void load_pair(const u64* p, u64& a, u64& b) {
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p)
               : "memory");
}

// torn[b]: pairs block b read whose second word is not its first * KEY;
// seen[b]: how many of its reads saw a pair while the writer was writing.
// The writer waits (a bounded while) for a reader to start and the readers
// for the first pair, so that reads and writes overlap where blocks run
// concurrently, without deadlock where they don't.
template <typename Word>
__global__ void publish_and_read(Word* pair, volatile unsigned* ready, unsigned* torn,
                                 unsigned* seen) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    for (unsigned spin = 0; spin < (1u << 26) && *ready == 0; ++spin) {}
    for (unsigned i = 1; i <= WRITES; ++i) store_pair(pair, Word(i), Word(i) * KEY);
    return;
  }
  *ready = 1;
  unsigned bad = 0, moved = 0;
  Word a = 0, b = 0;
  for (unsigned spin = 0; spin < (1u << 26) && a == 0; ++spin) load_pair(pair, a, b);
  for (unsigned r = 0; r < READS; ++r) {
    load_pair(pair, a, b);
    bad += b != a * KEY;
    moved += a != 0 && a != WRITES;
  }
  torn[blockIdx.x] = bad;
  seen[blockIdx.x] = moved;
}

// Rounds of one launch each; returns the torn reads, checks the last pair.
template <typename Word>
unsigned torn_reads(const char* what) {
  Word* pair;
  unsigned *ready, *torn, *seen;
  CHECK(cudaMalloc(&pair, 2 * sizeof(Word)));
  CHECK(cudaMalloc(&ready, sizeof(unsigned)));
  CHECK(cudaMalloc(&torn, BLOCKS * sizeof(unsigned)));
  CHECK(cudaMalloc(&seen, BLOCKS * sizeof(unsigned)));
  unsigned total_torn = 0, total_seen = 0;
  for (int round = 0; round < 4; ++round) {
    CHECK(cudaMemset(pair, 0, 2 * sizeof(Word)));
    CHECK(cudaMemset(ready, 0, sizeof(unsigned)));
    CHECK(cudaMemset(torn, 0, BLOCKS * sizeof(unsigned)));
    CHECK(cudaMemset(seen, 0, BLOCKS * sizeof(unsigned)));
    publish_and_read<Word><<<BLOCKS, 32>>>(pair, ready, torn, seen);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> t(BLOCKS), s(BLOCKS);
    std::vector<Word> last(2);
    CHECK(cudaMemcpy(t.data(), torn, BLOCKS * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(s.data(), seen, BLOCKS * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(last.data(), pair, 2 * sizeof(Word), cudaMemcpyDeviceToHost));
    EXPECT(last[0] == WRITES && last[1] == Word(WRITES) * KEY, "%s: wrong last pair", what);
    for (unsigned b = 1; b < BLOCKS; ++b) total_torn += t[b], total_seen += s[b];
  }
  std::printf("%s: torn pairs: %u of %u reads (%u while the writer wrote)\n", what, total_torn,
              4 * (BLOCKS - 1) * READS, total_seen);
  CHECK(cudaFree(pair));
  CHECK(cudaFree(ready));
  CHECK(cudaFree(torn));
  CHECK(cudaFree(seen));
  return total_torn;
}

int main() {
  unsigned torn32 = torn_reads<unsigned>("v2.u32"), torn64 = torn_reads<u64>("v2.u64");
  EXPECT(torn32 == 0 && torn64 == 0, "%u + %u reads saw the two words of different stores",
         torn32, torn64);
  std::printf("PASS\n");
  return 0;
}
