#include "check.h"
#include <vector>
// The Sturm count of a symmetric tridiagonal matrix (how many eigenvalues lie
// below x), as bisection eigensolvers take it: the block stages the diagonals
// in shared memory a chunk at a time, and one thread runs the recurrence over
// min(remaining, blockDim.x) entries, a loop nvcc unrolls by four with a
// run-time remainder. LLVM's loop strength reduction in llc rewrote that
// remainder, trip & 3, in 2-bit arithmetic, which LLVM 22's SPIR-V backend
// widened to 8 bits without masking: the loop ran one unrolled trip too few
// per chunk and cuda-samples' eigenvalues failed its comparison.
__global__ void sturm_count(const float* d, const float* s, unsigned n, const float* xs,
                            unsigned* counts) {
  __shared__ float sd[256], ss[256];
  float x = xs[blockIdx.x], delta = 1.0f;
  unsigned count = 0, rem = n;
  for (unsigned i = 0; i < n; i += blockDim.x) {
    __syncthreads();
    if (i + threadIdx.x < n) {
      sd[threadIdx.x] = d[i + threadIdx.x];
      ss[threadIdx.x] = s[i + threadIdx.x];
    }
    __syncthreads();
    if (threadIdx.x == 0)
      for (unsigned k = 0; k < min(rem, blockDim.x); ++k) {
        delta = sd[k] - x - (ss[k] * ss[k]) / delta;
        count += delta < 0 ? 1 : 0;
      }
    rem -= blockDim.x;
  }
  if (threadIdx.x == 0) counts[blockIdx.x] = count;
}

int main() {
  const unsigned n = 2000;  // chunks of 256 and a short last one
  const int points = 16;
  std::vector<float> d(n), s(n), xs(points);
  unsigned seed = 12345;
  auto next = [&] { seed = seed * 1103515245u + 12345u; return ((seed >> 8) & 0xffff) / 32768.0f - 1.0f; };
  for (unsigned i = 0; i < n; ++i) {
    d[i] = next();
    s[i] = i ? next() : 0.0f;
  }
  for (int p = 0; p < points; ++p) xs[p] = -2.5f + 5.0f * p / (points - 1);
  std::vector<unsigned> want(points), got(points);
  for (int p = 0; p < points; ++p) {
    volatile float delta = 1.0f;  // one rounding per operation, as the kernel
    unsigned count = 0;
    for (unsigned k = 0; k < n; ++k) {
      volatile float square = s[k] * s[k], ratio = square / delta, diff = d[k] - xs[p];
      delta = diff - ratio;
      count += delta < 0 ? 1 : 0;
    }
    want[p] = count;
  }
  float *dd, *ds, *dx;
  unsigned* dc;
  CHECK(cudaMalloc(&dd, n * sizeof(float)));
  CHECK(cudaMalloc(&ds, n * sizeof(float)));
  CHECK(cudaMalloc(&dx, points * sizeof(float)));
  CHECK(cudaMalloc(&dc, points * sizeof(unsigned)));
  CHECK(cudaMemcpy(dd, d.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ds, s.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, xs.data(), points * sizeof(float), cudaMemcpyHostToDevice));
  sturm_count<<<points, 256>>>(dd, ds, n, dx, dc);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(got.data(), dc, points * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int p = 0; p < points; ++p)
    EXPECT(got[p] == want[p], "x = %g: %u eigenvalues below, expected %u", xs[p], got[p], want[p]);
  std::printf("PASS\n");
}
