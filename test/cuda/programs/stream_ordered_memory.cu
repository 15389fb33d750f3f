// Stream-ordered allocation: cudaMallocAsync/cudaFreeAsync on the device's
// default pool (release threshold, reuse of freed memory, trimming) and on a
// pool of our own (cudaMemPoolCreate, cudaMallocFromPoolAsync, current pool).
// Every check holds on NVIDIA's driver too.
#include "check.h"
#include <cstdint>
#include <vector>

__global__ void iota(int* x, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = base + i;
}

__global__ void add(const int* a, const int* b, int* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

static uint64_t attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t value = 0;
  CHECK(cudaMemPoolGetAttribute(pool, attr, &value));
  return value;
}

static void expect_iota(const int* d, int base, int n, cudaStream_t s) {
  std::vector<int> h(n);
  CHECK(cudaMemcpyAsync(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < n; ++i) EXPECT(h[i] == base + i, "x[%d] = %d, want %d", i, h[i], base + i);
}

int main() {
  const int dev = 0, n = 10000, threads = 256, blocks = (n + threads - 1) / threads;
  const size_t bytes = n * sizeof(int);
  int supported = 0;
  CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev));
  EXPECT(supported == 1, "memory pools supported: %d", supported);
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));

  // The default pool, holding on to what is freed.
  cudaMemPool_t pool, current;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  CHECK(cudaDeviceGetMemPool(&current, dev));
  EXPECT(current == pool, "the default pool is current");
  uint64_t threshold = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  EXPECT(attribute(pool, cudaMemPoolAttrReleaseThreshold) == threshold, "threshold");
  int reuse = -1;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
  EXPECT(reuse == 1, "opportunistic reuse on by default: %d", reuse);

  int *a, *b, *c;
  CHECK(cudaMallocAsync(&a, bytes, s));
  CHECK(cudaMallocAsync(&b, bytes, s));
  CHECK(cudaMallocAsync(&c, bytes, 0));  // the legacy default stream
  EXPECT(a != b && b != c && a != c, "distinct allocations");
  iota<<<blocks, threads, 0, s>>>(a, 0, n);
  iota<<<blocks, threads, 0, s>>>(b, 1000, n);
  add<<<blocks, threads, 0, s>>>(a, b, c, n);
  std::vector<int> h(n);
  CHECK(cudaMemcpyAsync(h.data(), c, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < n; ++i) EXPECT(h[i] == 1000 + 2 * i, "c[%d] = %d", i, h[i]);
  const uint64_t used = attribute(pool, cudaMemPoolAttrUsedMemCurrent);
  EXPECT(used >= 3 * bytes, "used %llu", (unsigned long long)used);

  CHECK(cudaFreeAsync(a, s));
  CHECK(cudaFreeAsync(b, s));
  CHECK(cudaStreamSynchronize(s));
  const uint64_t used_after = attribute(pool, cudaMemPoolAttrUsedMemCurrent);
  const uint64_t reserved = attribute(pool, cudaMemPoolAttrReservedMemCurrent);
  EXPECT(used_after < used, "used %llu after freeing, %llu before",
         (unsigned long long)used_after, (unsigned long long)used);
  EXPECT(reserved >= used, "the pool keeps freed memory: reserved %llu",
         (unsigned long long)reserved);
  EXPECT(attribute(pool, cudaMemPoolAttrUsedMemHigh) >= used, "used high watermark");

  // A new allocation reuses freed memory: the pool does not grow.
  int* d;
  CHECK(cudaMallocAsync(&d, bytes, s));
  EXPECT(attribute(pool, cudaMemPoolAttrReservedMemCurrent) == reserved, "reused");
  iota<<<blocks, threads, 0, s>>>(d, 7, n);
  expect_iota(d, 7, n, s);
  CHECK(cudaFreeAsync(d, s));
  CHECK(cudaFreeAsync(c, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemPoolTrimTo(pool, 0));
  EXPECT(attribute(pool, cudaMemPoolAttrReservedMemCurrent) < reserved, "trimmed");
  threshold = 0;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

  // A pool of our own.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = dev;
  cudaMemPool_t mine;
  CHECK(cudaMemPoolCreate(&mine, &props));
  EXPECT(mine != pool, "a new pool");
  int* e;
  CHECK(cudaMallocFromPoolAsync(&e, bytes, mine, s));
  iota<<<blocks, threads, 0, s>>>(e, -5, n);
  expect_iota(e, -5, n, s);
  EXPECT(attribute(mine, cudaMemPoolAttrUsedMemCurrent) >= bytes, "allocated from it");
  CHECK(cudaFreeAsync(e, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(attribute(mine, cudaMemPoolAttrUsedMemCurrent) == 0, "nothing in use");

  // As the device's current pool, cudaMallocAsync draws from it.
  CHECK(cudaDeviceSetMemPool(dev, mine));
  CHECK(cudaDeviceGetMemPool(&current, dev));
  EXPECT(current == mine, "current pool");
  CHECK(cudaMallocAsync(&e, bytes, s));
  EXPECT(attribute(mine, cudaMemPoolAttrUsedMemCurrent) >= bytes, "from the current pool");
  iota<<<blocks, threads, 0, s>>>(e, 42, n);
  expect_iota(e, 42, n, s);
  CHECK(cudaFreeAsync(e, s));
  CHECK(cudaDeviceSetMemPool(dev, pool));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemPoolDestroy(mine));

  // cudaFree takes a block of the default pool too; many blocks in a loop,
  // each freed in its stream before the next is made, reuse one another.
  int* f;
  CHECK(cudaMallocAsync(&f, bytes, s));
  iota<<<blocks, threads, 0, s>>>(f, 3, n);
  expect_iota(f, 3, n, s);
  CHECK(cudaFree(f));
  const uint64_t before_loop = attribute(pool, cudaMemPoolAttrUsedMemCurrent);
  for (int k = 0; k < 100; ++k) {
    CHECK(cudaMallocAsync(&f, bytes, s));
    iota<<<blocks, threads, 0, s>>>(f, k, n);
    CHECK(cudaFreeAsync(f, s));
  }
  CHECK(cudaMallocAsync(&f, bytes, s));
  iota<<<blocks, threads, 0, s>>>(f, 9, n);
  expect_iota(f, 9, n, s);
  CHECK(cudaFreeAsync(f, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(attribute(pool, cudaMemPoolAttrUsedMemCurrent) == before_loop, "all freed");

  CHECK(cudaStreamDestroy(s));
  std::printf("PASS\n");
}
