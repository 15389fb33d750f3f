// Threads of a block that wait for each other by polling shared memory, with
// no __syncthreads between arriving and waiting: what libcu++'s cuda::barrier
// does below sm_80 and cooperative groups' multi-warp tiles do at sm_90. A
// GPU runs the block's warps side by side; a runtime that runs a block's
// threads one after another until a barrier must still let the writer run.
#include "check.h"

#include <cuda/atomic>

// A sense-reversing barrier: the last thread to arrive opens the next phase.
__device__ void spin_barrier(unsigned *count, unsigned *phase, unsigned threads) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_block> arrived(*count), open(*phase);
  unsigned mine = open.load(cuda::memory_order_relaxed);
  if (arrived.fetch_add(1, cuda::memory_order_acq_rel) == threads - 1) {
    arrived.store(0, cuda::memory_order_relaxed);
    open.store(mine + 1, cuda::memory_order_release);
  } else {
    while (open.load(cuda::memory_order_acquire) == mine) {
    }
  }
}

// Each round every thread writes a value, meets the others at the barrier,
// reads its right neighbour's value, and meets them again before the next
// round overwrites it.
__global__ void rotate(int *out, int rounds) {
  __shared__ unsigned count, phase;
  __shared__ int slot[1024];
  unsigned n = blockDim.x, t = threadIdx.x;
  if (t == 0)
    count = phase = 0;
  __syncthreads();
  int value = blockIdx.x * 10000 + t;
  for (int r = 0; r < rounds; ++r) {
    slot[t] = value;
    spin_barrier(&count, &phase, n);
    value = slot[(t + 1) % n] + 1;
    spin_barrier(&count, &phase, n);
  }
  out[blockIdx.x * n + t] = value;
}

// Warps add up their lanes' values, then mark themselves in a mask; the warp that
// completes the mask sums the partial sums and opens the flag, which the
// other warps poll with volatile loads.
__global__ void last_warp_sums(const int *in, int *out) {
  __shared__ int partial[32];
  __shared__ unsigned done_mask;
  __shared__ int total, flag;
  unsigned t = threadIdx.x, warp = t / 32, warps = (blockDim.x + 31) / 32;
  if (t == 0) {
    done_mask = 0;
    flag = 0;
  }
  __syncthreads();
  if (t % 32 == 0)
    partial[warp] = 0;
  unsigned lanes = __activemask();
  __syncwarp(lanes);
  atomicAdd(&partial[warp], in[blockIdx.x * blockDim.x + t]);
  __syncwarp(lanes);
  unsigned all = warps == 32 ? ~0u : (1u << warps) - 1;
  bool last = false;
  if (t % 32 == 0) {
    __threadfence_block();
    last = (atomicOr(&done_mask, 1u << warp) | (1u << warp)) == all;
  }
  last = __shfl_sync(lanes, last, 0);
  if (last) {
    if (t % 32 == 0) {
      int sum = 0;
      for (unsigned w = 0; w < warps; ++w)
        sum += *(volatile int *)&partial[w];
      total = sum;
      __threadfence_block();
      atomicExch(&flag, 1);
    }
    __syncwarp(lanes);
  } else {
    while (*(volatile int *)&flag == 0) {
    }
  }
  __threadfence_block();
  out[blockIdx.x * blockDim.x + t] = *(volatile int *)&total;
}

int main() {
  for (unsigned threads : {256u, 100u, 33u}) {
    const int blocks = 3, rounds = 5;
    int *d_out;
    CHECK(cudaMalloc(&d_out, blocks * threads * sizeof(int)));
    rotate<<<blocks, threads>>>(d_out, rounds);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int out[blocks * 1024];
    CHECK(cudaMemcpy(out, d_out, blocks * threads * sizeof(int), cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; ++b)
      for (unsigned t = 0; t < threads; ++t) {
        int want = b * 10000 + (t + rounds) % threads + rounds;
        EXPECT(out[b * threads + t] == want, "rotate %u threads: block %d thread %u: %d, want %d",
               threads, b, t, out[b * threads + t], want);
      }

    int in[blocks * 1024], *d_in;
    for (unsigned i = 0; i < blocks * threads; ++i)
      in[i] = (int)(i * 7 % 13) - 6;
    CHECK(cudaMalloc(&d_in, blocks * threads * sizeof(int)));
    CHECK(cudaMemcpy(d_in, in, blocks * threads * sizeof(int), cudaMemcpyHostToDevice));
    last_warp_sums<<<blocks, threads>>>(d_in, d_out);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, d_out, blocks * threads * sizeof(int), cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; ++b) {
      int want = 0;
      for (unsigned t = 0; t < threads; ++t)
        want += in[b * threads + t];
      for (unsigned t = 0; t < threads; ++t)
        EXPECT(out[b * threads + t] == want, "last_warp_sums %u threads: block %d thread %u: %d, "
               "want %d", threads, b, t, out[b * threads + t], want);
    }
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
  }
  std::printf("PASS\n");
  return 0;
}
