// A cuda::pipeline whose threads have roles (cuda::pipeline_role): one warp
// produces, copying tiles into a ring of stages, while the block's other
// warps consume them, each side waiting for the other at its own waits
// (producer_acquire, consumer_wait) as NVIDIA's globalToShmemAsyncCopy
// -kernel=3 does. The CPU backend runs a block's threads one after another
// between barriers, so its producers and consumers wait apart. Checked
// against the host.
#include <cuda/pipeline>
#include <cooperative_groups.h>
#include <vector>

#include "check.h"

// A __shared__ pipeline state has a constructor: make_pipeline()
// initialises it (as NVIDIA's samples do).
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace cg = cooperative_groups;

constexpr int kWidth = 32;    // a tile's row, and the block's width
constexpr int kConsumers = 3; // rows of consumers; one more row produces
constexpr int kStages = 2;
constexpr int kTiles = 6;

// Block kWidth x (kConsumers + 1): row kConsumers copies tile after tile of
// kConsumers rows; consumer (x, y) sums its element of each tile, weighted
// by the tile's number.
__global__ void roles(const int* in, int* out) {
  __shared__ int ring[kStages][kConsumers][kWidth];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, kStages> state;
  auto block = cg::this_thread_block();
  bool producer = threadIdx.y == kConsumers;
  auto pipe = cuda::make_pipeline(block, &state,
                                  producer ? cuda::pipeline_role::producer
                                           : cuda::pipeline_role::consumer);
  const int* tiles = in + blockIdx.x * kTiles * kConsumers * kWidth;
  if (producer) {
    for (int tile = 0; tile < kTiles; ++tile) {
      pipe.producer_acquire();
      for (int row = 0; row < kConsumers; ++row)
        cuda::memcpy_async(&ring[tile % kStages][row][threadIdx.x],
                           &tiles[(tile * kConsumers + row) * kWidth + threadIdx.x],
                           sizeof(int), pipe);
      pipe.producer_commit();
    }
    return;
  }
  int acc = 0;
  for (int tile = 0; tile < kTiles; ++tile) {
    pipe.consumer_wait();
    acc += ring[tile % kStages][threadIdx.y][threadIdx.x] * (tile + 1);
    pipe.consumer_release();
  }
  out[(blockIdx.x * kConsumers + threadIdx.y) * kWidth + threadIdx.x] = acc;
}

int main() {
  constexpr int kBlocks = 4;
  std::vector<int> in(kBlocks * kTiles * kConsumers * kWidth), out(kBlocks * kConsumers * kWidth);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<int>(i % 89) - 30;
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_out, 0, out.size() * sizeof(int)));
  roles<<<kBlocks, dim3(kWidth, kConsumers + 1)>>>(d_in, d_out);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b)
    for (int y = 0; y < kConsumers; ++y)
      for (int x = 0; x < kWidth; ++x) {
        int want = 0;
        for (int tile = 0; tile < kTiles; ++tile)
          want += in[((b * kTiles + tile) * kConsumers + y) * kWidth + x] * (tile + 1);
        int got = out[(b * kConsumers + y) * kWidth + x];
        EXPECT(got == want, "block %d (%d, %d): %d, want %d", b, x, y, got, want);
      }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  std::printf("PASS\n");
  return 0;
}
