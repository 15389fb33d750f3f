// Non-blocking streams (cudaStreamNonBlocking): each keeps its own order,
// whichever way its work goes (under the CUDA passthrough a copy with an
// array side runs on NVIDIA's legacy stream, which a non-blocking stream
// does not wait for by itself), and a block a pool got back from the legacy
// stream is reused in such a stream only after the legacy stream's kernels
// that used it. Every check holds on NVIDIA's driver too.
#include "check.h"
#include <vector>

__device__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Thread 0 of each block waits `ns` first: work not ordered after this
// kernel would run while it waits.
__device__ void wait_first(unsigned long long ns) {
  if (threadIdx.x == 0) {
    unsigned long long start = globaltimer();
    while (globaltimer() - start < ns) {
    }
  }
  __syncthreads();
}

__global__ void late_iota(int* x, int base, int n, unsigned long long ns) {
  wait_first(ns);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = base + i;
}

__global__ void late_copy(const int* from, int* to, int n, unsigned long long ns) {
  wait_first(ns);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) to[i] = from[i];
}

__global__ void iota(int* x, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = base + i;
}

__global__ void read_texture(cudaTextureObject_t t, int* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<int>(t, x + 0.5f, y + 0.5f);
}

static void expect_iota(const std::vector<int>& h, int base, const char* what) {
  for (size_t i = 0; i < h.size(); ++i)
    EXPECT(h[i] == base + (int)i, "%s: [%zu] = %d, want %d", what, i, h[i], base + (int)i);
}

int main() {
  const unsigned long long wait_ns = 20000000;  // 20 ms
  const int w = 64, h = 16, n = w * h;
  const size_t bytes = n * sizeof(int);
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned flags = 0;
  CHECK(cudaStreamGetFlags(s, &flags));
  EXPECT(flags == cudaStreamNonBlocking, "flags %u", flags);

  // A kernel, then copies through an array, all in the stream.
  int* src;
  CHECK(cudaMalloc(&src, bytes));
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
  cudaArray_t array;
  CHECK(cudaMallocArray(&array, &desc, w, h));
  late_iota<<<1, n, 0, s>>>(src, 100, n, wait_ns);
  CHECK(cudaMemcpy2DToArrayAsync(array, 0, 0, src, w * sizeof(int), w * sizeof(int), h,
                                 cudaMemcpyDeviceToDevice, s));
  std::vector<int> back(n);
  CHECK(cudaMemcpy2DFromArrayAsync(back.data(), w * sizeof(int), array, 0, 0, w * sizeof(int), h,
                                   cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  expect_iota(back, 100, "array after a kernel");

  // A copy from the host into the array, then a kernel in the stream reading it.
  std::vector<int> image(n);
  for (int i = 0; i < n; ++i) image[i] = 7000 + i;
  CHECK(cudaMemcpy2DToArrayAsync(array, 0, 0, image.data(), w * sizeof(int), w * sizeof(int), h,
                                 cudaMemcpyHostToDevice, s));
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = array;
  cudaTextureDesc tex = {};
  tex.addressMode[0] = tex.addressMode[1] = cudaAddressModeClamp;
  tex.filterMode = cudaFilterModePoint;
  tex.readMode = cudaReadModeElementType;
  cudaTextureObject_t t;
  CHECK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
  int* out;
  CHECK(cudaMalloc(&out, bytes));
  read_texture<<<dim3(1, h), w, 0, s>>>(t, out, w, h);
  CHECK(cudaMemcpyAsync(back.data(), out, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  expect_iota(back, 7000, "texture after a copy from the host");

  // A graph launched in the stream (one with an event record node, which
  // has no like in NVIDIA's graphs under the passthrough), then a kernel in
  // the stream reading what the graph's kernel wrote.
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  void* args[] = {&src, nullptr, nullptr, nullptr};
  int base = 300, count = n;
  unsigned long long graph_wait = wait_ns;
  args[1] = &base;
  args[2] = &count;
  args[3] = &graph_wait;
  cudaKernelNodeParams kernel = {};
  kernel.func = (void*)late_iota;
  kernel.gridDim = dim3(1);
  kernel.blockDim = dim3(n);
  kernel.kernelParams = args;
  cudaGraphNode_t filled, recorded;
  CHECK(cudaGraphAddKernelNode(&filled, graph, nullptr, 0, &kernel));
  cudaEvent_t done;
  CHECK(cudaEventCreate(&done));
  CHECK(cudaGraphAddEventRecordNode(&recorded, graph, &filled, 1, done));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, s));
  late_copy<<<1, n, 0, s>>>(src, out, n, 0);
  CHECK(cudaMemcpyAsync(back.data(), out, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  expect_iota(back, 300, "a kernel after a graph");
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(done));

  // A pool's block freed in the legacy stream while its kernel still reads
  // it, allocated again in the stream and written there.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &props));
  int *a, *copied;
  CHECK(cudaMalloc(&copied, bytes));
  CHECK(cudaMallocFromPoolAsync(&a, bytes, pool, 0));
  iota<<<1, n, 0, 0>>>(a, 500, n);
  late_copy<<<1, n, 0, 0>>>(a, copied, n, wait_ns);
  CHECK(cudaFreeAsync(a, 0));
  int* b;
  CHECK(cudaMallocFromPoolAsync(&b, bytes, pool, s));
  iota<<<1, n, 0, s>>>(b, -1000000, n);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(back.data(), copied, bytes, cudaMemcpyDeviceToHost));
  expect_iota(back, 500, "the legacy stream's kernel on a block reused in the stream");
  CHECK(cudaMemcpy(back.data(), b, bytes, cudaMemcpyDeviceToHost));
  expect_iota(back, -1000000, "the stream's block");

  CHECK(cudaFreeAsync(b, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemPoolDestroy(pool));
  CHECK(cudaDestroyTextureObject(t));
  CHECK(cudaFreeArray(array));
  CHECK(cudaFree(src));
  CHECK(cudaFree(out));
  CHECK(cudaFree(copied));
  CHECK(cudaStreamDestroy(s));
  std::printf("PASS\n");
  return 0;
}
