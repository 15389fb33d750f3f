// Graph-owned memory: allocation and free nodes made explicitly and by
// capturing cudaMallocAsync/cudaFreeAsync; an allocation's address is fixed
// when its node is made and taken again by a later allocation of the same
// graph once freed; an allocation a graph does not free outlives the launch
// and can be freed by cudaFree, cudaFreeAsync or another graph's free node;
// a graph whose allocation is still live cannot be launched again (but with
// cudaGraphInstantiateFlagAutoFreeOnLaunch); the footprint attributes and
// cudaDeviceGraphMemTrim (memory stays mapped to graphs after a free until
// a trim, as cuda-samples' graphMemoryFootprint shows). Every check holds on
// NVIDIA's driver too.
#include "check.h"
#include <vector>

__global__ void iota(int* x, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = base + i;
}

__global__ void twice(const int* x, int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2 * x[i];
}

static const int n = 1 << 19;  // 2 MiB: whole pages of graph memory
static const size_t bytes = n * sizeof(int);

static unsigned long long attribute(cudaGraphMemAttributeType attr) {
  unsigned long long value = 0;
  CHECK(cudaDeviceGetGraphMemAttribute(0, attr, &value));
  return value;
}

static cudaMemAllocNodeParams alloc_params() {
  cudaMemAllocNodeParams p = {};
  p.poolProps.allocType = cudaMemAllocationTypePinned;
  p.poolProps.location.type = cudaMemLocationTypeDevice;
  p.poolProps.location.id = 0;
  p.bytesize = bytes;
  return p;
}

static cudaKernelNodeParams kernel(void* func, void** args) {
  cudaKernelNodeParams p = {};
  p.func = func;
  p.gridDim = dim3(n / 256);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  return p;
}

static void expect_twice_iota(const std::vector<int>& h, int base) {
  for (int i = 0; i < n; ++i) EXPECT(h[i] == 2 * (base + i), "y[%d] = %d", i, h[i]);
}

int main() {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<int> h(n);
  int count = n, base = 5;

  // alloc x ─> iota(x) ─> alloc y ─> twice(x, y) ─> copy y -> h ─> free y
  //                                        └──────> free x ─> alloc z (x's address again)
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t alloc_x, fill_x, alloc_y, twice_node, copy_y, free_y, free_x, alloc_z;
  cudaMemAllocNodeParams ap = alloc_params();
  CHECK(cudaGraphAddMemAllocNode(&alloc_x, graph, nullptr, 0, &ap));
  int* x = (int*)ap.dptr;
  EXPECT(x != nullptr, "no address for x");
  void* iota_args[] = {&x, &base, &count};
  cudaKernelNodeParams kp = kernel((void*)iota, iota_args);
  CHECK(cudaGraphAddKernelNode(&fill_x, graph, &alloc_x, 1, &kp));
  CHECK(cudaGraphAddMemAllocNode(&alloc_y, graph, &fill_x, 1, &ap));
  int* y = (int*)ap.dptr;
  EXPECT(y != x, "y took x's address while x is live");
  void* twice_args[] = {&x, &y, &count};
  kp = kernel((void*)twice, twice_args);
  CHECK(cudaGraphAddKernelNode(&twice_node, graph, &alloc_y, 1, &kp));
  CHECK(cudaGraphAddMemcpyNode1D(&copy_y, graph, &twice_node, 1, h.data(), y, bytes,
                                 cudaMemcpyDeviceToHost));
  CHECK(cudaGraphAddMemFreeNode(&free_y, graph, &copy_y, 1, y));
  CHECK(cudaGraphAddMemFreeNode(&free_x, graph, &twice_node, 1, x));
  CHECK(cudaGraphAddMemAllocNode(&alloc_z, graph, &free_x, 1, &ap));
  int* z = (int*)ap.dptr;
  cudaGraphNode_t free_z;
  CHECK(cudaGraphAddMemFreeNode(&free_z, graph, &alloc_z, 1, z));
  // Documented errors: a second free in the graph, a free of no graph allocation.
  cudaGraphNode_t bad;
  EXPECT(cudaGraphAddMemFreeNode(&bad, graph, &free_y, 1, y) == cudaErrorInvalidValue,
         "y freed twice");
  EXPECT(cudaGraphAddMemFreeNode(&bad, graph, nullptr, 0, &count) == cudaErrorInvalidValue,
         "a free of a host address");
  cudaGetLastError();
  cudaMemAllocNodeParams got = {};
  CHECK(cudaGraphMemAllocNodeGetParams(alloc_y, &got));
  EXPECT(got.dptr == y && got.bytesize == bytes, "alloc node parameters");
  void* freed = nullptr;
  CHECK(cudaGraphMemFreeNodeGetParams(free_x, &freed));
  EXPECT(freed == x, "free node parameters");
  // Graphs with memory nodes: no clone, no second instantiation.
  cudaGraph_t clone;
  EXPECT(cudaGraphClone(&clone, graph) != cudaSuccess, "a graph with memory nodes cloned");
  cudaGetLastError();

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaGraphExec_t second;
  EXPECT(cudaGraphInstantiate(&second, graph, 0) != cudaSuccess, "instantiated twice");
  cudaGetLastError();
  CHECK(cudaGraphDestroy(graph));  // the instantiation keeps the addresses
  for (int r = 0; r < 2; ++r) {
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    expect_twice_iota(h, base);
  }
  // x and y were live at once; all is freed, and stays mapped until a trim.
  EXPECT(attribute(cudaGraphMemAttrUsedMemCurrent) >= 2 * bytes, "used %llu",
         attribute(cudaGraphMemAttrUsedMemCurrent));
  EXPECT(attribute(cudaGraphMemAttrUsedMemHigh) >= 2 * bytes, "high watermark %llu",
         attribute(cudaGraphMemAttrUsedMemHigh));
  EXPECT(attribute(cudaGraphMemAttrReservedMemCurrent) >= 2 * bytes, "reserved %llu",
         attribute(cudaGraphMemAttrReservedMemCurrent));
  CHECK(cudaDeviceGraphMemTrim(0));
  EXPECT(attribute(cudaGraphMemAttrUsedMemCurrent) == 0, "trimmed: %llu used",
         attribute(cudaGraphMemAttrUsedMemCurrent));
  EXPECT(attribute(cudaGraphMemAttrReservedMemCurrent) == 0, "trimmed: %llu reserved",
         attribute(cudaGraphMemAttrReservedMemCurrent));
  unsigned long long zero = 0;
  CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
  EXPECT(attribute(cudaGraphMemAttrUsedMemHigh) == 0, "high watermark not reset");
  CHECK(cudaGraphExecDestroy(exec));

  // Captured: an allocation the graph does not free outlives the launch.
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  int *cx, *cy;
  CHECK(cudaMallocAsync(&cx, bytes, stream));
  iota<<<n / 256, 256, 0, stream>>>(cx, base, n);
  CHECK(cudaMallocAsync(&cy, bytes, stream));
  twice<<<n / 256, 256, 0, stream>>>(cx, cy, n);
  CHECK(cudaFreeAsync(cx, stream));
  CHECK(cudaStreamEndCapture(stream, &graph));
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT(nodes == 5, "captured %zu nodes", nodes);
  std::vector<cudaGraphNode_t> all(nodes);
  CHECK(cudaGraphGetNodes(graph, all.data(), &nodes));
  cudaGraphNodeType type;
  CHECK(cudaGraphNodeGetType(all[0], &type));
  EXPECT(type == cudaGraphNodeTypeMemAlloc, "first captured node type %d", type);
  CHECK(cudaGraphNodeGetType(all[4], &type));
  EXPECT(type == cudaGraphNodeTypeMemFree, "last captured node type %d", type);
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaMemcpyAsync(h.data(), cy, bytes, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  expect_twice_iota(h, base);
  unsigned long long used = attribute(cudaGraphMemAttrUsedMemCurrent);
  EXPECT(used >= bytes, "used %llu while cy is live", used);
  // cy is still allocated: the graph cannot run again until it is freed.
  EXPECT(cudaGraphLaunch(exec, stream) == cudaErrorInvalidValue, "relaunched over a live "
         "allocation");
  cudaGetLastError();
  CHECK(cudaFree(cy));  // freed outside the graph: the footprint does not shrink
  EXPECT(attribute(cudaGraphMemAttrUsedMemCurrent) == used, "used %llu after cudaFree",
         attribute(cudaGraphMemAttrUsedMemCurrent));
  base = 7;  // not captured: the graph keeps 5
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaMemcpyAsync(h.data(), cy, bytes, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaFreeAsync(cy, stream));  // freed in stream order
  CHECK(cudaStreamSynchronize(stream));
  expect_twice_iota(h, 5);
  // Freed by another graph's free node.
  cudaGraph_t freer;
  cudaGraphNode_t free_cy;
  CHECK(cudaGraphCreate(&freer, 0));
  CHECK(cudaGraphAddMemFreeNode(&free_cy, freer, nullptr, 0, cy));
  cudaGraphExec_t freer_exec;
  CHECK(cudaGraphInstantiate(&freer_exec, freer, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaGraphLaunch(freer_exec, stream));
  CHECK(cudaGraphLaunch(exec, stream));  // cy was freed in between
  CHECK(cudaGraphLaunch(freer_exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaDeviceGraphMemTrim(0));  // nothing is allocated: all goes back
  EXPECT(attribute(cudaGraphMemAttrUsedMemCurrent) == 0, "used %llu after the free graph",
         attribute(cudaGraphMemAttrUsedMemCurrent));
  CHECK(cudaGraphExecDestroy(freer_exec));
  CHECK(cudaGraphDestroy(freer));
  CHECK(cudaGraphExecDestroy(exec));

  // Auto free on launch: each launch frees what the one before left.
  CHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch));
  for (int r = 0; r < 3; ++r) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaMemcpyAsync(h.data(), cy, bytes, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  expect_twice_iota(h, 5);
  CHECK(cudaFree(cy));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaDeviceGraphMemTrim(0));
  EXPECT(attribute(cudaGraphMemAttrReservedMemCurrent) == 0, "reserved at the end");
  CHECK(cudaStreamDestroy(stream));
  std::printf("PASS\n");
}
