// The device heap: malloc and free in every thread of a grid at once (the
// blocks distinct, 16-byte aligned, not overlapping, each keeping what its
// thread wrote), memory freed and allocated again many times over the heap's
// size, blocks that outlive their launch, NULL once the heap is exhausted,
// __nv_aligned_device_malloc, C++ new and delete of a class with a virtual
// destructor, and cudaLimitMallocHeapSize (settable until a kernel that
// uses the heap was launched).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "check.h"

// Twice NVIDIA's default: room for its allocator's overhead on 16384 small
// blocks at once.
constexpr size_t kHeapBytes = 16 << 20;

// The bytes thread `id` asks for: 1 to 200, sizes of every class boundary.
__host__ __device__ size_t request_bytes(unsigned id) { return 1 + (id * 37) % 200; }

__device__ unsigned char fill_byte(unsigned id, size_t i) {
  return static_cast<unsigned char>(id * 7 + i);
}

// Every thread allocates its block and fills it.
__global__ void allocate(unsigned char** blocks) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  size_t n = request_bytes(id);
  auto* p = static_cast<unsigned char*>(malloc(n));
  blocks[id] = p;
  if (p)
    for (size_t i = 0; i < n; ++i) p[i] = fill_byte(id, i);
}

// In a later launch: each block still holds its thread's bytes; then freed
// (by another thread than the one that allocated it).
__global__ void check_and_free(unsigned char** blocks, unsigned n, int* bad) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned owner = n - 1 - id;
  unsigned char* p = blocks[owner];
  for (size_t i = 0; p && i < request_bytes(owner); ++i)
    if (p[i] != fill_byte(owner, i)) {
      atomicAdd(bad, 1);
      break;
    }
  free(p);
}

// Rounds of malloc, write, free in every thread: far more bytes than the
// heap holds pass through it. Counts the NULLs.
__global__ void churn(int rounds, int* nulls) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < rounds; ++r) {
    size_t n = 64 + ((id + r) % 4) * 256;
    auto* p = static_cast<unsigned*>(malloc(n));
    if (!p) {
      atomicAdd(nulls, 1);
      continue;
    }
    p[0] = id;
    p[n / sizeof(unsigned) - 1] = r;
    if (p[0] != id) atomicAdd(nulls, 1000);
    free(p);
  }
}

// One thread takes 512 KiB blocks until malloc says NULL; then frees them.
__global__ void exhaust(int* count, int* reused, int* too_big, int* free_null) {
  void* held[64];
  int n = 0;
  while (n < 64 && (held[n] = malloc(512 << 10)) != nullptr) ++n;
  *count = n;
  *too_big = malloc(kHeapBytes * 2) == nullptr;
  for (int i = 0; i < n; ++i) free(held[i]);
  // What was freed serves the same requests again.
  int again = 0;
  for (; again < n; ++again)
    if ((held[again] = malloc(512 << 10)) == nullptr) break;
  *reused = again;
  for (int i = 0; i < again; ++i) free(held[i]);
  free(nullptr);
  *free_null = 1;
}

__global__ void aligned(uintptr_t* out) {
  void* p = __nv_aligned_device_malloc(100, 256);
  void* q = __nv_aligned_device_malloc(24, 4096);
  out[0] = reinterpret_cast<uintptr_t>(p);
  out[1] = reinterpret_cast<uintptr_t>(q);
  if (p) static_cast<char*>(p)[99] = 1;
  if (q) static_cast<char*>(q)[23] = 1;
  free(p);
  free(q);
}

__device__ int destroyed;

struct Shape {
  __device__ explicit Shape(int id) : id(id) {}
  __device__ virtual ~Shape() {}
  __device__ virtual int sides() const = 0;
  int id;
};

struct Square : Shape {
  __device__ explicit Square(int id) : Shape(id) { for (int& c : corners) c = id; }
  __device__ ~Square() override { atomicAdd(&destroyed, 1); }
  __device__ int sides() const override { return 4; }
  int corners[4];
};

__global__ void make_shapes(Shape** shapes) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  shapes[id] = new Square(id);
}

__global__ void delete_shapes(Shape** shapes, int* bad) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  Shape* s = shapes[id];
  if (!s || s->id != static_cast<int>(id) || s->sides() != 4) atomicAdd(bad, 1);
  delete s;
}

int main() {
  size_t limit = 0;
  CHECK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
  EXPECT(limit == 8 << 20, "default heap %zu bytes", limit);
  CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, kHeapBytes));
  CHECK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
  EXPECT(limit == kHeapBytes, "heap %zu bytes after setting it", limit);

  // 1. 16384 threads at once, then their blocks checked on the host.
  const unsigned blocks_per_grid = 64, threads = 256, n = blocks_per_grid * threads;
  unsigned char** d_blocks;
  int* d_counts;
  CHECK(cudaMalloc(&d_blocks, n * sizeof(unsigned char*)));
  CHECK(cudaMalloc(&d_counts, 8 * sizeof(int)));
  CHECK(cudaMemset(d_counts, 0, 8 * sizeof(int)));
  allocate<<<blocks_per_grid, threads>>>(d_blocks);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  // The heap is in use: its size is fixed now.
  EXPECT(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1 << 20) == cudaErrorInvalidValue,
         "setting the heap's size after a launch");
  CHECK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
  EXPECT(limit == kHeapBytes, "heap %zu bytes after a refused change", limit);
  std::vector<unsigned char*> got(n);
  CHECK(cudaMemcpy(got.data(), d_blocks, n * sizeof(unsigned char*), cudaMemcpyDeviceToHost));
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (unsigned id = 0; id < n; ++id) {
    auto p = reinterpret_cast<uintptr_t>(got[id]);
    EXPECT(p != 0, "thread %u got NULL", id);
    EXPECT(p % 16 == 0, "thread %u got %p, not 16-byte aligned", id, got[id]);
    ranges.push_back({p, p + request_bytes(id)});
  }
  std::sort(ranges.begin(), ranges.end());
  for (unsigned i = 1; i < n; ++i)
    EXPECT(ranges[i].first >= ranges[i - 1].second, "blocks at 0x%lx and 0x%lx overlap",
           (unsigned long)ranges[i - 1].first, (unsigned long)ranges[i].first);
  check_and_free<<<blocks_per_grid, threads>>>(d_blocks, n, d_counts);
  CHECK(cudaDeviceSynchronize());

  // 2. Rounds of malloc and free: 64 * 2048 blocks through the heap
  //    (at most 2048 live at once: a GPU runs them all together).
  churn<<<8, threads>>>(64, d_counts + 1);
  CHECK(cudaDeviceSynchronize());

  // 3. Exhaustion, and a request larger than the heap.
  exhaust<<<1, 1>>>(d_counts + 2, d_counts + 3, d_counts + 4, d_counts + 5);
  CHECK(cudaDeviceSynchronize());
  int counts[8];
  CHECK(cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost));
  EXPECT(counts[0] == 0, "%d blocks lost what their threads wrote", counts[0]);
  EXPECT(counts[1] == 0, "churn: %d NULLs or bad blocks", counts[1]);
  EXPECT(counts[2] >= 1 && counts[2] <= 32, "%d blocks of 512 KiB from a 16 MiB heap", counts[2]);
  EXPECT(counts[3] == counts[2], "%d of %d blocks again after freeing them", counts[3],
         counts[2]);
  EXPECT(counts[4] == 1 && counts[5] == 1, "malloc past the heap %d, free(NULL) %d", counts[4],
         counts[5]);

  // 4. __nv_aligned_device_malloc.
  uintptr_t* d_aligned;
  CHECK(cudaMalloc(&d_aligned, 2 * sizeof(uintptr_t)));
  aligned<<<1, 1>>>(d_aligned);
  uintptr_t ptrs[2];
  CHECK(cudaMemcpy(ptrs, d_aligned, sizeof ptrs, cudaMemcpyDeviceToHost));
  EXPECT(ptrs[0] && ptrs[0] % 256 == 0, "aligned to 256: 0x%lx", (unsigned long)ptrs[0]);
  EXPECT(ptrs[1] && ptrs[1] % 4096 == 0, "aligned to 4096: 0x%lx", (unsigned long)ptrs[1]);

  // 5. new and delete, in two launches.
  Shape** d_shapes;
  CHECK(cudaMalloc(&d_shapes, 4096 * sizeof(Shape*)));
  make_shapes<<<16, 256>>>(d_shapes);
  delete_shapes<<<16, 256>>>(d_shapes, d_counts + 6);
  CHECK(cudaDeviceSynchronize());
  int gone = 0;
  CHECK(cudaMemcpyFromSymbol(&gone, destroyed, sizeof gone));
  CHECK(cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost));
  EXPECT(counts[6] == 0, "%d shapes were not what their constructor made", counts[6]);
  EXPECT(gone == 4096, "%d destructors ran", gone);

  CHECK(cudaFree(d_shapes));
  CHECK(cudaFree(d_aligned));
  CHECK(cudaFree(d_counts));
  CHECK(cudaFree(d_blocks));
  std::printf("PASS\n");
}
