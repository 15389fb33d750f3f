#include "check.h"
#include <cstdint>
#include <vector>
// Initialized device variables larger than one SPIR-V composite constant
// takes (65535 words), like cuRAND's 100 KiB precalc_xorwow_matrix: a table
// of 25600 words, and a struct holding addresses (an initializer with
// relocations) next to 70000 bytes. LLVM's SPIR-V backend needed
// SPV_INTEL_long_composites for them. Addresses into the middle of
// variables that hold addresses, or of split ones, crashed Intel's OpenCL
// compiler.
constexpr int kWords = 25600;
constexpr int kBytes = 70000;

struct Words {
  uint32_t v[kWords];
};
constexpr Words makeWords() {
  Words w{};
  uint32_t x = 2463534242u;
  for (int i = 0; i < kWords; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    w.v[i] = x;
  }
  return w;
}

struct Bytes {
  uint8_t v[kBytes];
};
constexpr Bytes makeBytes() {
  Bytes b{};
  for (int i = 0; i < kBytes; ++i)
    b.v[i] = static_cast<uint8_t>(i * 7 + i / 256);
  return b;
}

__device__ const Words words = makeWords();

struct WithAddresses {
  const uint32_t* first;
  const uint32_t* last;
  Bytes bytes;
};
__device__ const WithAddresses tagged = {&words.v[0], &words.v[kWords - 1], makeBytes()};
__device__ const uint32_t* const pair[2] = {&words.v[1], &words.v[2]};
__device__ const uint32_t* const* const second = &pair[1];
__device__ const uint8_t* const last_byte = &tagged.bytes.v[kBytes - 1];

__global__ void read(uint32_t* out_words, uint8_t* out_bytes, uint32_t* ends) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kBytes; i += gridDim.x * blockDim.x) {
    if (i < kWords)
      out_words[i] = words.v[i];
    out_bytes[i] = tagged.bytes.v[i];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    ends[0] = *tagged.first;
    ends[1] = *tagged.last;
    ends[2] = **second;
    ends[3] = *last_byte;
  }
}

int main() {
  constexpr Words expected_words = makeWords();
  constexpr Bytes expected_bytes = makeBytes();
  uint32_t *dwords, *dends;
  uint8_t* dbytes;
  CHECK(cudaMalloc(&dwords, kWords * sizeof(uint32_t)));
  CHECK(cudaMalloc(&dbytes, kBytes));
  CHECK(cudaMalloc(&dends, 4 * sizeof(uint32_t)));
  read<<<64, 256>>>(dwords, dbytes, dends);
  CHECK(cudaGetLastError());
  std::vector<uint32_t> got_words(kWords), ends(4);
  std::vector<uint8_t> got_bytes(kBytes);
  CHECK(cudaMemcpy(got_words.data(), dwords, kWords * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_bytes.data(), dbytes, kBytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(ends.data(), dends, 4 * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kWords; ++i)
    EXPECT(got_words[i] == expected_words.v[i], "words[%d] = %u, expected %u", i, got_words[i],
           expected_words.v[i]);
  for (int i = 0; i < kBytes; ++i)
    EXPECT(got_bytes[i] == expected_bytes.v[i], "bytes[%d] = %u, expected %u", i, got_bytes[i],
           expected_bytes.v[i]);
  EXPECT(ends[0] == expected_words.v[0] && ends[1] == expected_words.v[kWords - 1],
         "ends = {%u, %u}, expected {%u, %u}", ends[0], ends[1], expected_words.v[0],
         expected_words.v[kWords - 1]);
  EXPECT(ends[2] == expected_words.v[2], "**second = %u, expected %u", ends[2],
         expected_words.v[2]);
  EXPECT(ends[3] == expected_bytes.v[kBytes - 1], "*last_byte = %u, expected %u", ends[3],
         expected_bytes.v[kBytes - 1]);
  // The host sees the same bytes through the symbol.
  uint32_t middle = 0;
  CHECK(cudaMemcpyFromSymbol(&middle, words, sizeof middle, 12345 * sizeof(uint32_t)));
  EXPECT(middle == expected_words.v[12345], "words[12345] from the host = %u, expected %u",
         middle, expected_words.v[12345]);
  std::printf("PASS\n");
}
