// mbarriers (sm_80): cuda::barrier<thread_scope_block> with cuda::memcpy_async
// over several phases, arrive() tokens and arrive_and_drop, a block-scope
// cuda::pipeline every thread produces and consumes in, and the raw PTX
// (mbarrier.arrive.noComplete with pending_count, test_wait.parity,
// cp.async.mbarrier.arrive.noinc). Every thread of a block waits at the same
// waits (the form the CPU backend runs). Checked against the host.
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cooperative_groups.h>
#include <vector>

#include "check.h"

// A __shared__ cuda::barrier or pipeline state has a constructor: init() and
// make_pipeline() initialise it (as NVIDIA's samples do).
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

constexpr int kThreads = 128;
constexpr int kTiles = 5;

// Each block sums kTiles tiles copied by cuda::memcpy_async (cp.async and
// cp.async.mbarrier.arrive) into one buffer, a phase of the barrier per tile;
// a thread reads its mirror's element. Then arrive() and wait(token), and
// arrive_and_drop by half the threads before a last phase of the others.
__global__ void barrier_tiles(const int* in, int* out, int* phases) {
  __shared__ block_barrier bar;
  __shared__ int buf[kThreads];
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0)
    init(&bar, block.size());
  block.sync();
  int t = threadIdx.x, acc = 0;
  const int* base = in + blockIdx.x * kTiles * kThreads;
  for (int k = 0; k < kTiles; ++k) {
    cuda::memcpy_async(block, buf, base + k * kThreads, sizeof(int) * kThreads, bar);
    bar.arrive_and_wait();
    acc += buf[kThreads - 1 - t] * (k + 1);
    bar.arrive_and_wait();  // nobody copies the next tile before all have read
  }
  block_barrier::arrival_token token = bar.arrive();
  bar.wait(std::move(token));
  if (t % 2)
    bar.arrive_and_drop();
  else
    bar.arrive_and_wait();
  if (t % 2 == 0) {
    buf[t] = acc;  // the odd threads have left: the even ones are the barrier now
    bar.arrive_and_wait();
    acc += buf[(t + 2) % kThreads] & 1;
  }
  out[blockIdx.x * kThreads + t] = acc;
  if (t == 0)
    phases[blockIdx.x] = kTiles * 2 + 3;
}

// A pipeline in shared memory with two stages, every thread a producer and
// a consumer: producer_acquire and consumer_wait are waits on the stages'
// barriers (test_wait.parity).
__global__ void block_pipeline(const int* in, int* out, int tiles) {
  constexpr int kStages = 2;
  __shared__ int buf[kStages][kThreads];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, kStages> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  int t = threadIdx.x, acc = 0;
  for (int fetch = 0, done = 0; done < tiles; ++done) {
    for (; fetch < tiles && fetch < done + kStages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, buf[fetch % kStages], in + fetch * kThreads,
                         sizeof(int) * kThreads, pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    acc = acc * 3 + buf[done % kStages][(t + done) % kThreads];
    pipe.consumer_release();
  }
  out[t] = acc;
}

__device__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// The PTX itself: a barrier expecting 2 * kThreads arrivals (each thread's
// cp.async.mbarrier.arrive.noinc and its own arrive), the pending count of a
// noComplete arrival's state, and test_wait.parity of both phases.
__global__ void raw_ptx(const int* in, int* out) {
  __shared__ unsigned long long bar;
  __shared__ int copy[kThreads];
  int t = threadIdx.x;
  unsigned b = shared_address(&bar);
  if (t == 0)
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(b), "r"(2 * kThreads) : "memory");
  __syncthreads();
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(shared_address(&copy[t])),
               "l"(in + t)
               : "memory");
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(b) : "memory");
  unsigned long long state;
  unsigned pending;
  if (t == 0) {
    asm volatile("mbarrier.arrive.noComplete.shared.b64 %0, [%1], 1;"
                 : "=l"(state)
                 : "r"(b)
                 : "memory");
    asm("mbarrier.pending_count.b64 %0, %1;" : "=r"(pending) : "l"(state));
    out[3 * kThreads] = pending;
  }
  __syncthreads();  // the noComplete arrival is thread 0's first
  if (t != 0)
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(b) : "memory");
  unsigned done_even = 0, done_odd = 0;
  while (!done_even)
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done_even)
                 : "r"(b), "r"(0)
                 : "memory");
  asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(done_odd)
               : "r"(b), "r"(1)
               : "memory");
  out[t] = copy[kThreads - 1 - t];
  out[kThreads + t] = done_even;
  out[2 * kThreads + t] = done_odd;
  __syncthreads();
  if (t == 0)
    asm volatile("mbarrier.inval.shared.b64 [%0];" ::"r"(b) : "memory");
}

int main() {
  // barrier_tiles
  constexpr int kBlocks = 3;
  std::vector<int> in(kBlocks * kTiles * kThreads), out(kBlocks * kThreads), phases(kBlocks);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<int>(i % 97) - 40;
  int *d_in, *d_out, *d_phases;
  CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_phases, phases.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  barrier_tiles<<<kBlocks, kThreads>>>(d_in, d_out, d_phases);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<int> acc(kThreads);
    for (int t = 0; t < kThreads; ++t)
      for (int k = 0; k < kTiles; ++k)
        acc[t] += in[(b * kTiles + k) * kThreads + kThreads - 1 - t] * (k + 1);
    for (int t = 0; t < kThreads; ++t) {
      int e = t % 2 ? acc[t] : acc[t] + (acc[(t + 2) % kThreads] & 1);
      EXPECT(out[b * kThreads + t] == e, "barrier_tiles[%d][%d] = %d, expected %d", b, t,
             out[b * kThreads + t], e);
    }
  }

  // block_pipeline
  constexpr int kPipeTiles = 7;
  std::vector<int> tiles(kPipeTiles * kThreads), piped(kThreads);
  for (size_t i = 0; i < tiles.size(); ++i)
    tiles[i] = static_cast<int>(i * 7 % 23) - 11;
  int *d_tiles, *d_piped;
  CHECK(cudaMalloc(&d_tiles, tiles.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_piped, piped.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_tiles, tiles.data(), tiles.size() * sizeof(int), cudaMemcpyHostToDevice));
  block_pipeline<<<1, kThreads>>>(d_tiles, d_piped, kPipeTiles);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(piped.data(), d_piped, piped.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    int e = 0;
    for (int k = 0; k < kPipeTiles; ++k)
      e = e * 3 + tiles[k * kThreads + (t + k) % kThreads];
    EXPECT(piped[t] == e, "block_pipeline[%d] = %d, expected %d", t, piped[t], e);
  }

  // raw_ptx
  std::vector<int> raw(3 * kThreads + 1);
  int* d_raw;
  CHECK(cudaMalloc(&d_raw, raw.size() * sizeof(int)));
  raw_ptx<<<1, kThreads>>>(d_in, d_raw);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(raw.data(), d_raw, raw.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    EXPECT(raw[t] == in[kThreads - 1 - t], "raw_ptx copy[%d] = %d, expected %d", t, raw[t],
           in[kThreads - 1 - t]);
    EXPECT(raw[kThreads + t] == 1 && raw[2 * kThreads + t] == 0,
           "raw_ptx thread %d: phase 0 complete %d, phase 1 complete %d", t, raw[kThreads + t],
           raw[2 * kThreads + t]);
  }
  // Thread 0's noComplete arrival came after up to kThreads cp.async
  // arrivals (whether the state counts it among the pending ones or not).
  EXPECT(raw[3 * kThreads] >= kThreads - 1 && raw[3 * kThreads] <= 2 * kThreads,
         "pending_count = %d", raw[3 * kThreads]);
  std::printf("PASS\n");
  return 0;
}
