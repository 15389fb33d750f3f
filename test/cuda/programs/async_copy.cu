// cp.async from global to shared memory (sm_80): a two-stage pipeline
// through __pipeline_memcpy_async / __pipeline_commit / __pipeline_wait_prior,
// every copy size with every zero-fill, the source size and ignore-src
// predicate as registers (CUTLASS's form, where a copy with source size 0
// takes a pointer it must not read), and cooperative_groups::memcpy_async.
// Checked against the host.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_pipeline.h>
#include <vector>

#include "check.h"

namespace cg = cooperative_groups;

constexpr int kThreads = 128;
constexpr int kTiles = 6;

// Each block sums kTiles tiles of float4 with the next tile's copy in flight;
// a thread reads its neighbour's element, so the copies must be visible to
// the block after __syncthreads.
__global__ void pipelined_sum(const float4* in, float4* out) {
  __shared__ float4 buf[2][kThreads];
  int t = threadIdx.x;
  const float4* base = in + blockIdx.x * kTiles * kThreads;
  __pipeline_memcpy_async(&buf[0][t], &base[t], sizeof(float4));
  __pipeline_commit();
  float4 acc = make_float4(0, 0, 0, 0);
  for (int k = 0; k < kTiles; ++k) {
    if (k + 1 < kTiles)
      __pipeline_memcpy_async(&buf[(k + 1) % 2][t], &base[(k + 1) * kThreads + t], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    float4 v = buf[k % 2][(t + 1) % kThreads];
    acc.x += v.x * (k + 1);
    acc.y += v.y * (k + 1);
    acc.z += v.z * (k + 1);
    acc.w += v.w * (k + 1);
    __syncthreads();
  }
  out[blockIdx.x * kThreads + t] = acc;
}

// Copies of 4, 8 and 16 bytes, thread t zero-filling the last t % (size+1)
// of them (nvcc: one cp.async per fill, an immediate source size), into
// destinations holding 0xAB first.
__global__ void sizes(const unsigned char* in, unsigned char* out) {
  __shared__ __align__(16) unsigned char s[3][kThreads][16];
  int t = threadIdx.x;
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 16; ++i)
      s[c][t][i] = 0xAB;
  __syncthreads();
  const unsigned char* src = in + t * 16;
  __pipeline_memcpy_async(s[0][t], src, 4, t % 5);
  __pipeline_memcpy_async(s[1][t], src, 8, t % 9);
  __pipeline_memcpy_async(s[2][t], src, 16, t % 17);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 16; ++i)
      out[(c * kThreads + t) * 16 + i] = s[c][t][i];
}

// The source size in a register (cp.async.cg with an L2 prefetch size), and
// the ignore-src predicate (cp.async.ca): a copy that reads nothing gets a
// null source.
__global__ void runtime_sizes(const int4* in, int4* out, const int* src_sizes) {
  __shared__ int4 s[2][kThreads];
  int t = threadIdx.x;
  s[0][t] = s[1][t] = make_int4(-1, -1, -1, -1);
  __syncthreads();
  unsigned d0 = static_cast<unsigned>(__cvta_generic_to_shared(&s[0][t]));
  unsigned d1 = static_cast<unsigned>(__cvta_generic_to_shared(&s[1][t]));
  int n = src_sizes[t];
  const int4* src0 = n == 0 ? nullptr : in + t;
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;" ::"r"(d0), "l"(src0),
               "r"(n)
               : "memory");
  int ignore = t % 3 == 0;
  const int4* src1 = ignore ? nullptr : in + t;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"
               "cp.async.ca.shared.global [%0], [%1], 16, p;\n\t}" ::"r"(d1),
               "l"(src1), "r"(ignore)
               : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  out[t] = s[0][(t + 1) % kThreads];
  out[kThreads + t] = s[1][t];
}

// cooperative_groups::memcpy_async of a block's row, then wait.
__global__ void cg_copy(const float* in, float* out, int n) {
  extern __shared__ float row[];
  cg::thread_block block = cg::this_thread_block();
  cg::memcpy_async(block, row, in + blockIdx.x * n, sizeof(float) * n);
  cg::wait(block);
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    out[blockIdx.x * n + i] = row[n - 1 - i] * 2.0f;
}

int main() {
  // pipelined_sum
  constexpr int kBlocks = 3;
  std::vector<float4> in(kBlocks * kTiles * kThreads), out(kBlocks * kThreads);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = make_float4(i % 7, i % 11, float(i % 5) - 2, 0.5f * (i % 3));
  float4 *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, in.size() * sizeof(float4)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(float4)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float4), cudaMemcpyHostToDevice));
  pipelined_sum<<<kBlocks, kThreads>>>(d_in, d_out);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float4), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < kThreads; ++t) {
      float4 e = make_float4(0, 0, 0, 0);
      for (int k = 0; k < kTiles; ++k) {
        float4 v = in[(b * kTiles + k) * kThreads + (t + 1) % kThreads];
        e.x += v.x * (k + 1);
        e.y += v.y * (k + 1);
        e.z += v.z * (k + 1);
        e.w += v.w * (k + 1);
      }
      float4 g = out[b * kThreads + t];
      EXPECT(g.x == e.x && g.y == e.y && g.z == e.z && g.w == e.w,
             "pipelined_sum[%d][%d] = (%g %g %g %g), expected (%g %g %g %g)", b, t, g.x, g.y,
             g.z, g.w, e.x, e.y, e.z, e.w);
    }

  // sizes
  std::vector<unsigned char> bytes(kThreads * 16), got(3 * kThreads * 16);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<unsigned char>(1 + i % 251);
  unsigned char *d_bytes, *d_got;
  CHECK(cudaMalloc(&d_bytes, bytes.size()));
  CHECK(cudaMalloc(&d_got, got.size()));
  CHECK(cudaMemcpy(d_bytes, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  sizes<<<1, kThreads>>>(d_bytes, d_got);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(got.data(), d_got, got.size(), cudaMemcpyDeviceToHost));
  const int copy_sizes[3] = {4, 8, 16};
  for (int c = 0; c < 3; ++c)
    for (int t = 0; t < kThreads; ++t) {
      int size = copy_sizes[c], from_src = size - t % (size + 1);
      for (int i = 0; i < 16; ++i) {
        int e = i < from_src ? bytes[t * 16 + i] : i < size ? 0 : 0xAB;
        int g = got[(c * kThreads + t) * 16 + i];
        EXPECT(g == e, "sizes: size %d thread %d byte %d = %#x, expected %#x", size, t, i, g, e);
      }
    }

  // runtime_sizes
  std::vector<int4> src(kThreads), res(2 * kThreads);
  std::vector<int> src_sizes(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    src[t] = make_int4(0x01020304 * (t + 1), 0x11121314 + t, 0x21222324 - t, 0x31323334 ^ t);
    src_sizes[t] = t % 17;
  }
  int4 *d_src, *d_res;
  int* d_sizes;
  CHECK(cudaMalloc(&d_src, src.size() * sizeof(int4)));
  CHECK(cudaMalloc(&d_res, res.size() * sizeof(int4)));
  CHECK(cudaMalloc(&d_sizes, src_sizes.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_src, src.data(), src.size() * sizeof(int4), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_sizes, src_sizes.data(), src_sizes.size() * sizeof(int),
                   cudaMemcpyHostToDevice));
  runtime_sizes<<<1, kThreads>>>(d_src, d_res, d_sizes);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(res.data(), d_res, res.size() * sizeof(int4), cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) {
    int u = (t + 1) % kThreads;
    const unsigned char* s = reinterpret_cast<const unsigned char*>(&src[u]);
    const unsigned char* g = reinterpret_cast<const unsigned char*>(&res[t]);
    for (int i = 0; i < 16; ++i)
      EXPECT(g[i] == (i < src_sizes[u] ? s[i] : 0),
             "runtime_sizes: thread %d (source size %d) byte %d = %#x", u, src_sizes[u], i, g[i]);
    const int4 e = t % 3 == 0 ? make_int4(0, 0, 0, 0) : src[t], r = res[kThreads + t];
    EXPECT(r.x == e.x && r.y == e.y && r.z == e.z && r.w == e.w,
           "ignore-src: thread %d = (%#x %#x %#x %#x)", t, r.x, r.y, r.z, r.w);
  }

  // cg_copy
  constexpr int kRow = 300, kRows = 4;
  std::vector<float> rows(kRows * kRow), doubled(kRows * kRow);
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i] = float(i) * 0.25f - 7.0f;
  float *d_rows, *d_doubled;
  CHECK(cudaMalloc(&d_rows, rows.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_doubled, doubled.size() * sizeof(float)));
  CHECK(cudaMemcpy(d_rows, rows.data(), rows.size() * sizeof(float), cudaMemcpyHostToDevice));
  cg_copy<<<kRows, 64, kRow * sizeof(float)>>>(d_rows, d_doubled, kRow);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(doubled.data(), d_doubled, doubled.size() * sizeof(float),
                   cudaMemcpyDeviceToHost));
  for (int r = 0; r < kRows; ++r)
    for (int i = 0; i < kRow; ++i)
      EXPECT(doubled[r * kRow + i] == rows[r * kRow + kRow - 1 - i] * 2.0f,
             "cg_copy[%d][%d] = %g", r, i, doubled[r * kRow + i]);

  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_bytes));
  CHECK(cudaFree(d_got));
  CHECK(cudaFree(d_src));
  CHECK(cudaFree(d_res));
  CHECK(cudaFree(d_sizes));
  CHECK(cudaFree(d_rows));
  CHECK(cudaFree(d_doubled));
  std::printf("PASS\n");
  return 0;
}
