// The kernels bench/cpu_kernels.py measures on zmlir's CPU backend, each
// timed with events after a warm-up; bench/cpu_kernels.cl holds the same
// kernels as OpenCL C, launched with the same global and local sizes.
//
//   cpu_kernels REPS [KERNEL...]
//
// prints one line per kernel: `KERNEL name best_ms median_ms ok|BAD`, the
// times of REPS launches each between two events (after one untimed launch),
// and whether the result matches the host's.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

// The sizes, shared with bench/cpu_kernels.py (which launches the OpenCL C
// kernels with the same ones).
constexpr int kVectorN = 1 << 24; // copy, triad, reduce: 64 MiB per array
constexpr int kTransposeN = 4096; // 64 MiB matrix
constexpr int kTile = 32;         // transpose: 32x8 threads move a 32x32 tile
constexpr int kTileRows = 8;
constexpr int kGemmN = 768;
constexpr int kGemmTile = 16;
constexpr int kOptions = 1 << 22; // BlackScholes
constexpr int kReduceBlock = 256;
constexpr int kReduceGrid = 1024;

__global__ void copy_kernel(float *__restrict__ dst, const float *__restrict__ src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    dst[i] = src[i];
}

__global__ void triad_kernel(float *__restrict__ a, const float *__restrict__ b,
                             const float *__restrict__ c, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = b[i] + s * c[i];
}

// NVIDIA's transposeCoalesced: a tile through shared memory, padded against
// bank conflicts; blockDim = (kTile, kTileRows).
__global__ void transpose_kernel(float *__restrict__ out, const float *__restrict__ in, int n) {
  __shared__ float tile[kTile][kTile + 1];
  int x = blockIdx.x * kTile + threadIdx.x;
  int y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kTileRows)
    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kTileRows)
    out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// A grid-stride sum per thread, a shared-memory tree down to one warp, then
// the warp's shuffles; one partial sum per block.
__global__ void reduce_kernel(float *__restrict__ partial, const float *__restrict__ in, int n) {
  __shared__ float sums[kReduceBlock];
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    sum += in[i];
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride >= 32; stride /= 2) {
    if (threadIdx.x < stride)
      sums[threadIdx.x] = sum = sum + sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0)
      partial[blockIdx.x] = sum;
  }
}

// C = A * B, n x n row-major, 16x16 tiles of A and B through shared memory.
__global__ void sgemm_kernel(float *__restrict__ c, const float *__restrict__ a,
                             const float *__restrict__ b, int n) {
  __shared__ float as[kGemmTile][kGemmTile];
  __shared__ float bs[kGemmTile][kGemmTile];
  int row = blockIdx.y * kGemmTile + threadIdx.y;
  int col = blockIdx.x * kGemmTile + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < n; t += kGemmTile) {
    as[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < kGemmTile; ++k)
      acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

// cuda-samples' BlackScholes: the polynomial approximation of the normal CDF.
__device__ inline float cnd(float d) {
  const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f,
              a5 = 1.330274429f, rsqrt2pi = 0.39894228040143267793994605993438f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = rsqrt2pi * expf(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
  return d > 0 ? 1.0f - c : c;
}

__global__ void blackscholes_kernel(float *__restrict__ call, float *__restrict__ put,
                                    const float *__restrict__ price,
                                    const float *__restrict__ strike,
                                    const float *__restrict__ years, float riskfree,
                                    float volatility, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float s = price[i], x = strike[i], t = years[i];
  float sqrt_t = sqrtf(t);
  float d1 = (logf(s / x) + (riskfree + 0.5f * volatility * volatility) * t) /
             (volatility * sqrt_t);
  float d2 = d1 - volatility * sqrt_t;
  float cnd1 = cnd(d1), cnd2 = cnd(d2);
  float exp_rt = expf(-riskfree * t);
  call[i] = s * cnd1 - x * exp_rt * cnd2;
  put[i] = x * exp_rt * (1.0f - cnd2) - s * (1.0f - cnd1);
}

struct Timing {
  float best, median;
};

template <typename Launch>
static Timing time_kernel(int reps, Launch launch) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  launch(); // warm-up: the module's JIT and the first touch of every page
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float elapsed = 0;
    CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    ms.push_back(elapsed);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2]};
}

static float *device_array(size_t count) {
  float *p = nullptr;
  CHECK(cudaMalloc(&p, count * sizeof(float)));
  return p;
}

static void upload(float *dst, const std::vector<float> &src) {
  CHECK(cudaMemcpy(dst, src.data(), src.size() * sizeof(float), cudaMemcpyHostToDevice));
}

static std::vector<float> download(const float *src, size_t count) {
  std::vector<float> out(count);
  CHECK(cudaMemcpy(out.data(), src, count * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

static std::vector<float> pattern(size_t count, unsigned seed, float lo, float hi) {
  std::vector<float> v(count);
  unsigned x = seed;
  for (auto &e : v) {
    x = x * 1664525u + 1013904223u;
    e = lo + (hi - lo) * float(x >> 8) / float(1 << 24);
  }
  return v;
}

static void report(const char *name, Timing t, bool ok) {
  printf("KERNEL %s %.4f %.4f %s\n", name, t.best, t.median, ok ? "ok" : "BAD");
  fflush(stdout);
}

static bool near(float got, float want, float tolerance) {
  return std::fabs(got - want) <= tolerance * std::max(1.0f, std::fabs(want));
}

static void run_copy(int reps) {
  auto b = pattern(kVectorN, 1, -1, 1);
  float *dst = device_array(kVectorN), *src = device_array(kVectorN);
  upload(src, b);
  Timing t = time_kernel(reps, [&] { copy_kernel<<<kVectorN / 256, 256>>>(dst, src, kVectorN); });
  auto out = download(dst, kVectorN);
  report("copy", t, out == b);
  CHECK(cudaFree(dst));
  CHECK(cudaFree(src));
}

static void run_triad(int reps) {
  auto b = pattern(kVectorN, 2, -1, 1), c = pattern(kVectorN, 3, -1, 1);
  float *da = device_array(kVectorN), *db = device_array(kVectorN), *dc = device_array(kVectorN);
  upload(db, b);
  upload(dc, c);
  const float s = 3.0f;
  Timing t = time_kernel(reps,
                         [&] { triad_kernel<<<kVectorN / 256, 256>>>(da, db, dc, s, kVectorN); });
  auto a = download(da, kVectorN);
  bool ok = true;
  for (int i = 0; i < kVectorN && ok; i += 997)
    ok = near(a[i], b[i] + s * c[i], 1e-6f);
  report("triad", t, ok);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
}

static void run_transpose(int reps) {
  const int n = kTransposeN;
  auto in = pattern(size_t(n) * n, 4, -1, 1);
  float *din = device_array(size_t(n) * n), *dout = device_array(size_t(n) * n);
  upload(din, in);
  dim3 grid(n / kTile, n / kTile), block(kTile, kTileRows);
  Timing t = time_kernel(reps, [&] { transpose_kernel<<<grid, block>>>(dout, din, n); });
  auto out = download(dout, size_t(n) * n);
  bool ok = true;
  for (int i = 0; i < n && ok; i += 7)
    for (int j = 0; j < n && ok; j += 13)
      ok = out[size_t(j) * n + i] == in[size_t(i) * n + j];
  report("transpose", t, ok);
  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
}

static void run_reduce(int reps) {
  auto in = pattern(kVectorN, 5, 0, 1);
  float *din = device_array(kVectorN), *dpartial = device_array(kReduceGrid);
  upload(din, in);
  Timing t = time_kernel(
      reps, [&] { reduce_kernel<<<kReduceGrid, kReduceBlock>>>(dpartial, din, kVectorN); });
  auto partial = download(dpartial, kReduceGrid);
  double got = 0, want = 0;
  for (float p : partial)
    got += p;
  for (float v : in)
    want += v;
  report("reduce", t, std::fabs(got - want) <= 1e-4 * want);
  CHECK(cudaFree(din));
  CHECK(cudaFree(dpartial));
}

static void run_sgemm(int reps) {
  const int n = kGemmN;
  auto a = pattern(size_t(n) * n, 6, -1, 1), b = pattern(size_t(n) * n, 7, -1, 1);
  float *da = device_array(size_t(n) * n), *db = device_array(size_t(n) * n),
        *dc = device_array(size_t(n) * n);
  upload(da, a);
  upload(db, b);
  dim3 grid(n / kGemmTile, n / kGemmTile), block(kGemmTile, kGemmTile);
  Timing t = time_kernel(reps, [&] { sgemm_kernel<<<grid, block>>>(dc, da, db, n); });
  auto c = download(dc, size_t(n) * n);
  bool ok = true;
  for (int i = 0; i < n && ok; i += 97)
    for (int j = 0; j < n && ok; j += 89) {
      double want = 0;
      for (int k = 0; k < n; ++k)
        want += double(a[size_t(i) * n + k]) * b[size_t(k) * n + j];
      ok = std::fabs(c[size_t(i) * n + j] - want) <= 1e-3;
    }
  report("sgemm", t, ok);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
}

static void run_blackscholes(int reps) {
  const int n = kOptions;
  auto price = pattern(n, 8, 5, 30), strike = pattern(n, 9, 1, 100),
       years = pattern(n, 10, 0.25f, 10);
  float *dcall = device_array(n), *dput = device_array(n), *dprice = device_array(n),
        *dstrike = device_array(n), *dyears = device_array(n);
  upload(dprice, price);
  upload(dstrike, strike);
  upload(dyears, years);
  const float r = 0.02f, v = 0.30f;
  Timing t = time_kernel(reps, [&] {
    blackscholes_kernel<<<n / 128, 128>>>(dcall, dput, dprice, dstrike, dyears, r, v, n);
  });
  auto call = download(dcall, n);
  bool ok = true;
  for (int i = 0; i < n && ok; i += 1009) { // the host's double-precision answer
    double s = price[i], x = strike[i], y = years[i], sq = std::sqrt(y);
    double d1 = (std::log(s / x) + (r + 0.5 * v * v) * y) / (v * sq), d2 = d1 - v * sq;
    double want = s * 0.5 * std::erfc(-d1 / std::sqrt(2.0)) -
                  x * std::exp(-r * y) * 0.5 * std::erfc(-d2 / std::sqrt(2.0));
    ok = std::fabs(call[i] - want) <= 1e-3 * std::max(1.0, std::fabs(want)) + 1e-3;
  }
  report("blackscholes", t, ok);
  for (float *p : {dcall, dput, dprice, dstrike, dyears})
    CHECK(cudaFree(p));
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  struct {
    const char *name;
    void (*run)(int);
  } kernels[] = {{"copy", run_copy},     {"triad", run_triad}, {"transpose", run_transpose},
                 {"reduce", run_reduce}, {"sgemm", run_sgemm}, {"blackscholes", run_blackscholes}};
  for (auto &k : kernels) {
    bool wanted = argc <= 2;
    for (int i = 2; i < argc; ++i)
      wanted |= strcmp(argv[i], k.name) == 0;
    if (wanted)
      k.run(reps);
  }
  return 0;
}
