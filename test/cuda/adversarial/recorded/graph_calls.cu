// The explicit graph API's answers where NVIDIA's documents give no code or
// no value: one line "call = code" (or "what = value") per call. NVIDIA's
// answers, from an H200, belong in graph_calls.h200.txt beside this file;
// test_adversarial.py compares. Built with nvcc, linked with -lcuda.
#include <cstdio>
#include <cstring>
#include <cuda.h>
#define A(call) std::printf("%s = %d\n", #call, (int)(call))
#define V(what, value) std::printf("%s = %llu\n", what, (unsigned long long)(value))
static const char kPtx[] =
    ".version 7.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry k(.param .u64 p) { ret; }\n";

static CUDA_MEM_ALLOC_NODE_PARAMS alloc_params(size_t bytes) {
  CUDA_MEM_ALLOC_NODE_PARAMS p;
  std::memset(&p, 0, sizeof p);
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.bytesize = bytes;
  return p;
}

static int index_of(CUgraphNode node, const CUgraphNode* nodes, int count) {
  for (int i = 0; i < count; ++i)
    if (nodes[i] == node) return i;
  return node ? -2 : -1;
}

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction k;
  CUstream s1, s2;
  CUevent ev;
  CUdeviceptr d;
  cuInit(0);
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  cuModuleLoadData(&mod, kPtx);
  cuModuleGetFunction(&k, mod, "k");
  cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  cuEventCreate(&ev, 0);
  cuMemAlloc(&d, 1 << 20);
  void* host = std::malloc(1 << 20);

  // Building: arguments, edges.
  CUgraph g, g2, clone;
  CUgraphNode a, b, c, n, nodes[8];
  A(cuGraphCreate(&g, 1));
  A(cuGraphCreate(&g, 0));
  A(cuGraphAddEmptyNode(&a, nullptr, nullptr, 0));
  A(cuGraphAddEmptyNode(&a, g, nullptr, 1));
  A(cuGraphAddEmptyNode(&a, g, nullptr, 0));
  CUgraphNode twice[] = {a, a};
  A(cuGraphAddEmptyNode(&b, g, twice, 2));
  A(cuGraphAddEmptyNode(&b, g, &a, 1));
  A(cuGraphAddEmptyNode(&c, g, &b, 1));
  A(cuGraphAddDependencies(g, &a, &b, nullptr, 1));  // exists
  A(cuGraphAddDependencies(g, &a, &a, nullptr, 1));  // a loop
  A(cuGraphRemoveDependencies(g, &c, &a, nullptr, 1));  // none
  A(cuGraphCreate(&g2, 0));
  A(cuGraphAddEmptyNode(&n, g2, &a, 1));  // a node of another graph
  CUDA_KERNEL_NODE_PARAMS kp;
  std::memset(&kp, 0, sizeof kp);
  kp.func = k;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  A(cuGraphAddKernelNode(&n, g2, nullptr, 0, &kp));  // no kernelParams for its parameter
  A(cuGraphKernelNodeGetParams(a, &kp));  // an empty node
  CUDA_MEMSET_NODE_PARAMS ms;
  std::memset(&ms, 0, sizeof ms);
  ms.dst = d, ms.elementSize = 3, ms.width = 4, ms.height = 1;
  A(cuGraphAddMemsetNode(&n, g2, nullptr, 0, &ms, ctx));
  ms.dst = (CUdeviceptr)host, ms.elementSize = 4;
  A(cuGraphAddMemsetNode(&n, g2, nullptr, 0, &ms, ctx));
  A(cuGraphAddDependencies(g, &c, &a, nullptr, 1));  // a cycle
  CUgraphExec e;
  CUDA_GRAPH_INSTANTIATE_PARAMS ip;
  std::memset(&ip, 0, sizeof ip);
  A(cuGraphInstantiateWithParams(&e, g, &ip));
  CUgraphNode abc[] = {a, b, c};
  std::printf("cycle: result_out = %d, error node = %d\n", (int)ip.result_out,
              index_of(ip.hErrNode_out, abc, 3));
  A(cuGraphInstantiateWithFlags(&e, g2, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD));
  size_t count = 1;
  A(cuGraphGetNodes(g, nodes, &count));
  V("GetNodes count of 1 with 3 nodes", count);
  count = 1;
  CUgraphNode from[1], to[1];
  A(cuGraphGetEdges(g, from, to, nullptr, &count));
  V("GetEdges count of 1", count);
  A(cuGraphClone(&clone, g));
  A(cuGraphNodeFindInClone(&n, a, g2));

  // Graph memory.
  CUgraph mg, other;
  CUgraphNode alloc, freed;
  CUDA_MEM_ALLOC_NODE_PARAMS ap = alloc_params(2 << 20);
  A(cuGraphCreate(&mg, 0));
  A(cuGraphAddMemAllocNode(&alloc, mg, nullptr, 0, &ap));
  CUdeviceptr p = ap.dptr;
  A(cuGraphAddMemFreeNode(&freed, mg, &alloc, 1, p));
  A(cuGraphAddMemFreeNode(&n, mg, &freed, 1, p));  // twice
  A(cuGraphAddMemFreeNode(&n, mg, nullptr, 0, d));  // not a graph allocation
  A(cuGraphCreate(&other, 0));
  A(cuGraphAddMemFreeNode(&n, other, nullptr, 0, p));  // freed in its own graph already
  A(cuGraphClone(&clone, mg));
  A(cuGraphDestroyNode(freed));
  A(cuGraphRemoveDependencies(mg, &alloc, &freed, nullptr, 1));
  A(cuGraphAddChildGraphNode(&n, g2, nullptr, 0, mg));
  CUgraphExec me, me2;
  A(cuGraphInstantiateWithFlags(&me, mg, 0));
  A(cuGraphInstantiateWithFlags(&me2, mg, 0));
  A(cuGraphLaunch(me, s1));
  A(cuStreamSynchronize(s1));
  unsigned long long value = 0;
  const char* names[] = {"used", "used high", "reserved", "reserved high"};
  for (int attr = 0; attr < 4; ++attr) {
    cuDeviceGetGraphMemAttribute(dev, (CUgraphMem_attribute)attr, &value);
    V(names[attr], value);
  }
  A(cuDeviceGraphMemTrim(dev));
  cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &value);
  V("reserved after trim", value);
  value = 5;
  A(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &value));
  A(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &value));
  // An allocation the graph does not free: launching again.
  CUgraph leak;
  CUgraphExec le;
  ap = alloc_params(2 << 20);
  A(cuGraphCreate(&leak, 0));
  A(cuGraphAddMemAllocNode(&n, leak, nullptr, 0, &ap));
  A(cuGraphInstantiateWithFlags(&le, leak, 0));
  A(cuGraphLaunch(le, s1));
  A(cuGraphLaunch(le, s1));
  A(cuStreamSynchronize(s1));
  cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &value);
  V("used with one allocation live", value);
  A(cuMemFree(ap.dptr));
  A(cuMemFree(ap.dptr));
  A(cuGraphLaunch(le, s1));
  A(cuMemFreeAsync(ap.dptr, s1));
  A(cuStreamSynchronize(s1));

  // Updates: for each graph, the code, the result and which node is named.
  CUgraph base, upd;
  CUgraphNode bn[3], un[3];
  CUgraphExecUpdateResultInfo info = {};
  auto report = [&](const char* what, CUresult r) {
    std::printf("%s = %d, result %d, error node %d, from %d\n", what, (int)r, (int)info.result,
                index_of(info.errorNode, un, 3), index_of(info.errorFromNode, un, 3));
  };
  auto memset_node = [&](CUgraph graph, CUgraphNode* out, const CUgraphNode* deps, int ndeps,
                         size_t width, size_t height, unsigned elem) {
    CUDA_MEMSET_NODE_PARAMS m;
    std::memset(&m, 0, sizeof m);
    m.dst = d, m.pitch = 4096, m.elementSize = elem, m.width = width, m.height = height;
    return cuGraphAddMemsetNode(out, graph, deps, ndeps, &m, ctx);
  };
  auto copy_node = [&](CUgraph graph, CUgraphNode* out, const CUgraphNode* deps, int ndeps,
                       bool to_host) {
    CUDA_MEMCPY3D c;
    std::memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = d;
    if (to_host) c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = host;
    else c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = d + 4096;
    c.WidthInBytes = 256, c.Height = 1, c.Depth = 1;
    return cuGraphAddMemcpyNode(out, graph, deps, ndeps, &c, ctx);
  };
  A(cuGraphCreate(&base, 0));
  A(memset_node(base, &bn[0], nullptr, 0, 64, 1, 4));
  A(memset_node(base, &bn[1], &bn[0], 1, 64, 4, 4));
  A(copy_node(base, &bn[2], &bn[1], 1, false));
  A(cuGraphInstantiateWithFlags(&e, base, 0));
  // Same graph shape, new values: 1D memset width and value, 2D memset value, copy address.
  A(cuGraphCreate(&upd, 0));
  A(memset_node(upd, &un[0], nullptr, 0, 128, 1, 4));
  A(memset_node(upd, &un[1], &un[0], 1, 64, 4, 4));
  A(copy_node(upd, &un[2], &un[1], 1, false));
  report("update 1D memset width", cuGraphExecUpdate(e, upd, &info));
  cuGraphDestroy(upd);
  A(cuGraphCreate(&upd, 0));
  A(memset_node(upd, &un[0], nullptr, 0, 64, 1, 1));
  A(memset_node(upd, &un[1], &un[0], 1, 64, 4, 4));
  A(copy_node(upd, &un[2], &un[1], 1, false));
  report("update 1D memset element size", cuGraphExecUpdate(e, upd, &info));
  cuGraphDestroy(upd);
  A(cuGraphCreate(&upd, 0));
  A(memset_node(upd, &un[0], nullptr, 0, 64, 1, 4));
  A(memset_node(upd, &un[1], &un[0], 1, 64, 8, 4));
  A(copy_node(upd, &un[2], &un[1], 1, false));
  report("update 2D memset height", cuGraphExecUpdate(e, upd, &info));
  cuGraphDestroy(upd);
  A(cuGraphCreate(&upd, 0));
  A(memset_node(upd, &un[0], nullptr, 0, 64, 1, 4));
  A(memset_node(upd, &un[1], &un[0], 1, 64, 4, 4));
  A(copy_node(upd, &un[2], &un[1], 1, true));
  report("update copy memory type", cuGraphExecUpdate(e, upd, &info));
  cuGraphDestroy(upd);
  A(cuGraphCreate(&upd, 0));
  A(memset_node(upd, &un[0], nullptr, 0, 64, 1, 4));
  A(copy_node(upd, &un[1], &un[0], 1, false));
  A(memset_node(upd, &un[2], &un[1], 1, 64, 4, 4));
  report("update node types swapped", cuGraphExecUpdate(e, upd, &info));
  cuGraphDestroy(upd);
  A(cuGraphCreate(&upd, 0));
  A(memset_node(upd, &un[0], nullptr, 0, 64, 1, 4));
  A(memset_node(upd, &un[1], nullptr, 0, 64, 4, 4));
  A(copy_node(upd, &un[2], &un[1], 1, false));
  report("update an edge less", cuGraphExecUpdate(e, upd, &info));
  cuGraphDestroy(upd);
  A(cuGraphCreate(&upd, 0));
  A(memset_node(upd, &un[0], nullptr, 0, 64, 1, 4));
  A(memset_node(upd, &un[1], &un[0], 1, 64, 4, 4));
  A(copy_node(upd, &un[2], &un[0], 1, false));
  report("update an edge moved", cuGraphExecUpdate(e, upd, &info));
  cuGraphDestroy(upd);
  A(cuGraphCreate(&upd, 0));
  A(memset_node(upd, &un[0], nullptr, 0, 64, 1, 4));
  A(memset_node(upd, &un[1], &un[0], 1, 64, 4, 4));
  report("update a node less", cuGraphExecUpdate(e, upd, &info));
  A(cuGraphExecUpdate(e, upd, nullptr));
  CUDA_MEMSET_NODE_PARAMS m2;
  std::memset(&m2, 0, sizeof m2);
  m2.dst = d, m2.pitch = 4096, m2.elementSize = 4, m2.width = 64, m2.height = 8;
  A(cuGraphExecMemsetNodeSetParams(e, bn[1], &m2, ctx));
  m2.height = 4, m2.value = 7;
  A(cuGraphExecMemsetNodeSetParams(e, bn[1], &m2, ctx));
  A(cuGraphExecMemsetNodeSetParams(e, un[0], &m2, ctx));  // not a node of its graph
  A(cuGraphNodeSetEnabled(e, bn[0], 0));
  CUgraph hg;
  CUgraphNode hn;
  CUDA_HOST_NODE_PARAMS hp = {[](void*) {}, nullptr};
  A(cuGraphCreate(&hg, 0));
  A(cuGraphAddHostNode(&hn, hg, nullptr, 0, &hp));
  CUgraphExec he;
  A(cuGraphInstantiateWithFlags(&he, hg, 0));
  A(cuGraphNodeSetEnabled(he, hn, 0));

  // Stream capture.
  CUgraph cg;
  A(cuStreamBeginCapture(nullptr, CU_STREAM_CAPTURE_MODE_GLOBAL));
  A(cuStreamEndCapture(s1, &cg));
  A(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  A(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  A(cuEventRecord(ev, s1));
  A(cuStreamWaitEvent(s2, ev, 0));
  A(cuStreamEndCapture(s2, &cg));  // not the stream that began it
  A(cuMemsetD8Async(d, 1, 16, s2));
  cg = (CUgraph)1;
  A(cuStreamEndCapture(s1, &cg));  // s2's work not joined
  std::printf("graph of the failed capture is NULL: %d\n", cg == nullptr);
  CUstreamCaptureStatus status;
  A(cuStreamIsCapturing(s2, &status));
  std::printf("s2 capture status = %d\n", (int)status);
  A(cuStreamIsCapturing(s1, &status));
  std::printf("s1 capture status = %d\n", (int)status);
  return 0;
}
