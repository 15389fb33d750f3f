// CUDA's 32-bit global index wraps as on NVIDIA's hardware.
// `blockIdx.x * 1024 + threadIdx.x` is unsigned 32-bit math made an int:
// past 2^31 it is negative. For grids of fewer than 2^21 blocks in x the CPU
// backend runs a variant of the kernel that computes the index in 64 bits
// (zmlir-index-no-wrap's grid variants), where it cannot wrap; a larger grid
// must run the kernel itself. Only the last four blocks store, each at
// out[i + shift], which the wrapped index puts at out[1024 k] and an index
// that did not wrap 16 GiB past `out` (a fault).
#include "check.h"

__global__ void store_block(int *out, long long shift, unsigned int first) {
  int i = blockIdx.x * 1024 + threadIdx.x;
  if (blockIdx.x >= first)
    out[i + shift] = blockIdx.x;
}

// Launches `blocks` one-thread blocks and checks that the last four stored
// their numbers at out[0], out[1024], out[2048] and out[3072].
static void run(int *out, unsigned int blocks, long long shift) {
  CHECK(cudaMemset(out, 0xff, 4096 * sizeof(int)));
  store_block<<<blocks, 1>>>(out, shift, blocks - 4);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  int got[4096];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int k = 0; k < 4; ++k) {
    unsigned int block = blocks - 4 + k;
    EXPECT(got[1024 * k] == (int)block, "grid %u: out[%d] = %d, not block %u", blocks, 1024 * k,
           got[1024 * k], block);
  }
}

int main() {
  int *out;
  CHECK(cudaMalloc(&out, 4096 * sizeof(int)));
  // 2^21 + 4 blocks: the last four have i = -2^31 + 1024 k.
  run(out, (1u << 21) + 4, 1ll << 31);
  // 2^21 - 1 blocks (the largest grid of the variant): i = 2^31 - 5120 + 1024 k.
  run(out, (1u << 21) - 1, -((1ll << 31) - 5120));
  CHECK(cudaFree(out));
  std::printf("PASS\n");
}
