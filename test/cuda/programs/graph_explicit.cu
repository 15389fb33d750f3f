// CUDA graphs built node by node: memcpy, memset, kernel, host, empty, child
// graph and event nodes with their edges; the queries (nodes, roots, edges,
// dependencies, types, parameters), clones, instantiation and launch order,
// node and instantiation parameter changes, disabled nodes, cudaGraphExecUpdate
// (an allowed update and rejected ones) and the documented errors. Every
// check holds on NVIDIA's driver too.
#include "check.h"
#include <cstring>
#include <vector>

__global__ void axpb(float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

__global__ void scale(double* x, double s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

__global__ void add(float* x, const float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

struct HostLog {
  int calls = 0;
  float first = 0;  // x[0] when the host node ran
  const float* x = nullptr;
};

static void CUDART_CB on_host(void* data) {
  HostLog* log = static_cast<HostLog*>(data);
  log->first = log->x[0];  // pinned memory the graph copied into before this node
  ++log->calls;
}

static cudaKernelNodeParams axpb_params(void** args, int n) {
  cudaKernelNodeParams p = {};
  p.func = (void*)axpb;
  p.gridDim = dim3((n + 127) / 128);
  p.blockDim = dim3(128);
  p.kernelParams = args;
  return p;
}

static size_t count_nodes(cudaGraph_t g) {
  size_t n = 0;
  CHECK(cudaGraphGetNodes(g, nullptr, &n));
  return n;
}

int main() {
  const int n = 1000;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = i;
  float *dx, *dy, *pinned;
  CHECK(cudaMalloc(&dx, n * 4));
  CHECK(cudaMalloc(&dy, n * 4));
  CHECK(cudaMallocHost(&pinned, n * 4));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaEvent_t done;
  CHECK(cudaEventCreate(&done));

  // copy h -> dx ─┐
  //               ├─> axpb(dx, 2, 1) ─> child{add(dx, dy)} ─> copy dx -> pinned ─> host ─> record
  // memset dy=0 ──┘       (y is 1.0f: 0x3f800000)
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t copy_in, fill, kernel, child, copy_out, host, empty, record;
  CHECK(cudaGraphAddMemcpyNode1D(&copy_in, graph, nullptr, 0, dx, h.data(), n * 4,
                                 cudaMemcpyHostToDevice));
  cudaMemsetParams ms = {};
  ms.dst = dy;
  ms.value = 0x3f800000;  // 1.0f
  ms.elementSize = 4;
  ms.width = n;
  ms.height = 1;
  CHECK(cudaGraphAddMemsetNode(&fill, graph, nullptr, 0, &ms));
  float a = 2, b = 1;
  int count = n;
  void* args[] = {&dx, &a, &b, &count};
  cudaKernelNodeParams kp = axpb_params(args, n);
  cudaGraphNode_t both[] = {copy_in, fill};
  CHECK(cudaGraphAddKernelNode(&kernel, graph, both, 2, &kp));
  a = 100;  // the node copied its arguments when it was made
  cudaGraph_t body;
  CHECK(cudaGraphCreate(&body, 0));
  cudaGraphNode_t body_add;
  void* add_args[] = {&dx, &dy, &count};
  cudaKernelNodeParams ap = {};
  ap.func = (void*)add;
  ap.gridDim = dim3((n + 127) / 128);
  ap.blockDim = dim3(128);
  ap.kernelParams = add_args;
  CHECK(cudaGraphAddKernelNode(&body_add, body, nullptr, 0, &ap));
  CHECK(cudaGraphAddChildGraphNode(&child, graph, &kernel, 1, body));
  CHECK(cudaGraphDestroy(body));  // the node holds its own copy
  CHECK(cudaGraphAddMemcpyNode1D(&copy_out, graph, &child, 1, pinned, dx, n * 4,
                                 cudaMemcpyDeviceToHost));
  HostLog log;
  log.x = pinned;
  cudaHostNodeParams hp = {on_host, &log};
  CHECK(cudaGraphAddHostNode(&host, graph, &copy_out, 1, &hp));
  CHECK(cudaGraphAddEmptyNode(&empty, graph, &host, 1));
  CHECK(cudaGraphAddEventRecordNode(&record, graph, &empty, 1, done));

  // Queries.
  EXPECT(count_nodes(graph) == 8, "%zu nodes", count_nodes(graph));
  size_t roots = 0;
  CHECK(cudaGraphGetRootNodes(graph, nullptr, &roots));
  EXPECT(roots == 2, "%zu roots", roots);
  cudaGraphNode_t root_nodes[3] = {nullptr, nullptr, reinterpret_cast<cudaGraphNode_t>(1)};
  roots = 3;
  CHECK(cudaGraphGetRootNodes(graph, root_nodes, &roots));
  // The roots in any order (an H100's driver does not give creation order);
  // the entries past them are set to NULL.
  EXPECT(roots == 2 && !root_nodes[2] &&
             ((root_nodes[0] == copy_in && root_nodes[1] == fill) ||
              (root_nodes[0] == fill && root_nodes[1] == copy_in)),
         "roots %zu", roots);
  size_t edges = 0;
  CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  EXPECT(edges == 7, "%zu edges", edges);
  std::vector<cudaGraphNode_t> from(edges), to(edges);
  CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), nullptr, &edges));
  bool found = false;
  for (size_t i = 0; i < edges; ++i) found |= from[i] == fill && to[i] == kernel;
  EXPECT(found, "no edge memset -> kernel");
  size_t deps = 0;
  CHECK(cudaGraphNodeGetDependencies(kernel, nullptr, nullptr, &deps));
  EXPECT(deps == 2, "kernel has %zu dependencies", deps);
  cudaGraphNode_t dependents[2];
  size_t ndependents = 2;
  CHECK(cudaGraphNodeGetDependentNodes(kernel, dependents, nullptr, &ndependents));
  EXPECT(ndependents == 1 && dependents[0] == child, "kernel's dependents");
  cudaGraphNodeType types[8], want[8] = {cudaGraphNodeTypeMemcpy, cudaGraphNodeTypeMemset,
      cudaGraphNodeTypeKernel, cudaGraphNodeTypeGraph, cudaGraphNodeTypeMemcpy,
      cudaGraphNodeTypeHost, cudaGraphNodeTypeEmpty, cudaGraphNodeTypeEventRecord};
  cudaGraphNode_t all[8] = {copy_in, fill, kernel, child, copy_out, host, empty, record};
  for (int i = 0; i < 8; ++i) {
    CHECK(cudaGraphNodeGetType(all[i], &types[i]));
    EXPECT(types[i] == want[i], "node %d has type %d, want %d", i, types[i], want[i]);
  }
  cudaKernelNodeParams got = {};
  CHECK(cudaGraphKernelNodeGetParams(kernel, &got));
  EXPECT(got.func == (void*)axpb && got.gridDim.x == 8 && got.blockDim.x == 128,
         "kernel node parameters");
  EXPECT(*(float*)got.kernelParams[1] == 2.0f && *(float**)got.kernelParams[0] == dx,
         "kernel node arguments: %f", *(float*)got.kernelParams[1]);
  cudaMemsetParams got_ms = {};
  CHECK(cudaGraphMemsetNodeGetParams(fill, &got_ms));
  EXPECT(got_ms.dst == dy && got_ms.value == 0x3f800000 && got_ms.width == (size_t)n,
         "memset node parameters");
  cudaGraph_t inner;
  CHECK(cudaGraphChildGraphNodeGetGraph(child, &inner));
  EXPECT(count_nodes(inner) == 1, "child graph nodes");
  cudaEvent_t got_event;
  CHECK(cudaGraphEventRecordNodeGetEvent(record, &got_event));
  EXPECT(got_event == done, "event record node's event");
  // Documented errors: an existing edge, a node of another graph, a wrong node type.
  EXPECT(cudaGraphAddDependencies(graph, &copy_in, &kernel, nullptr, 1) ==
             cudaErrorInvalidValue, "an existing edge added again");
  EXPECT(cudaGraphKernelNodeGetParams(fill, &got) == cudaErrorInvalidValue,
         "kernel parameters of a memset node");
  cudaGetLastError();

  // Launch three times: x = 2x + 1 + 1, copied to pinned memory, then the host node.
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < 3; ++r) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaEventSynchronize(done));
  EXPECT(log.calls == 3, "host node ran %d times", log.calls);
  for (int i = 0; i < n; ++i)
    EXPECT(pinned[i] == 2.0f * i + 2, "x[%d] = %f after the graph", i, pinned[i]);
  EXPECT(log.first == 0.0f * 2 + 2, "the host node ran before its copy: %f", log.first);

  // A clone, and the node of the clone a node became.
  cudaGraph_t clone;
  CHECK(cudaGraphClone(&clone, graph));
  cudaGraphNode_t cloned_kernel;
  CHECK(cudaGraphNodeFindInClone(&cloned_kernel, kernel, clone));
  EXPECT(cloned_kernel != kernel, "the clone's node is its own");
  a = 3, b = 0;  // the clone's kernel: x = 3x (+ 1 from the child)
  cudaKernelNodeParams kp3 = axpb_params(args, n);
  CHECK(cudaGraphKernelNodeSetParams(cloned_kernel, &kp3));

  // cudaGraphExecUpdate from the changed clone: same topology, new arguments.
  cudaGraphExecUpdateResultInfo info;
  CHECK(cudaGraphExecUpdate(exec, clone, &info));
  EXPECT(info.result == cudaGraphExecUpdateSuccess, "update result %d", info.result);
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < n; ++i) EXPECT(pinned[i] == 3.0f * i + 1, "x[%d] = %f after the update",
                                     i, pinned[i]);

  // An instantiation's own kernel parameters (the graph keeps its own).
  a = 4, b = 0;
  cudaKernelNodeParams kp4 = axpb_params(args, n);
  CHECK(cudaGraphExecKernelNodeSetParams(exec, kernel, &kp4));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < n; ++i) EXPECT(pinned[i] == 4.0f * i + 1, "x[%d] = %f", i, pinned[i]);
  CHECK(cudaGraphKernelNodeGetParams(kernel, &got));
  EXPECT(*(float*)got.kernelParams[1] == 2.0f, "the graph's node changed with its exec");

  // A disabled kernel node does nothing: x = h + 1.
  CHECK(cudaGraphNodeSetEnabled(exec, kernel, 0));
  unsigned enabled = 1;
  CHECK(cudaGraphNodeGetEnabled(exec, kernel, &enabled));
  EXPECT(enabled == 0, "node still enabled");
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < n; ++i) EXPECT(pinned[i] == i + 1.0f, "x[%d] = %f disabled", i, pinned[i]);
  CHECK(cudaGraphNodeSetEnabled(exec, kernel, 1));

  // Rejected updates: a node removed (topology), a node's type changed.
  cudaGraph_t smaller;
  CHECK(cudaGraphClone(&smaller, graph));
  cudaGraphNode_t smaller_empty;
  CHECK(cudaGraphNodeFindInClone(&smaller_empty, empty, smaller));
  CHECK(cudaGraphDestroyNode(smaller_empty));
  EXPECT(count_nodes(smaller) == 7, "destroying a node");
  EXPECT(cudaGraphExecUpdate(exec, smaller, &info) == cudaErrorGraphExecUpdateFailure,
         "an update with a node less");
  EXPECT(info.result == cudaGraphExecUpdateErrorTopologyChanged, "result %d", info.result);
  cudaGetLastError();
  cudaGraph_t retyped;
  CHECK(cudaGraphCreate(&retyped, 0));
  cudaGraphNode_t nodes[8];
  for (int i = 0; i < 8; ++i) {
    std::vector<cudaGraphNode_t> d;
    if (i == 2) d = {nodes[0], nodes[1]};
    else if (i > 2) d = {nodes[i - 1]};
    CHECK(cudaGraphAddEmptyNode(&nodes[i], retyped, d.data(), d.size()));
  }
  EXPECT(cudaGraphExecUpdate(exec, retyped, &info) == cudaErrorGraphExecUpdateFailure,
         "an update with other node types");
  EXPECT(info.result == cudaGraphExecUpdateErrorNodeTypeChanged && info.errorNode != nullptr,
         "result %d", info.result);
  cudaGetLastError();

  // The instantiation still runs its own parameters after the rejected updates.
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < n; ++i) EXPECT(pinned[i] == 4.0f * i + 1, "x[%d] = %f", i, pinned[i]);

  // Edges removed and added: a cycle cannot be instantiated.
  CHECK(cudaGraphRemoveDependencies(retyped, &nodes[6], &nodes[7], nullptr, 1));
  CHECK(cudaGraphAddDependencies(retyped, &nodes[7], &nodes[0], nullptr, 1));
  CHECK(cudaGraphGetRootNodes(retyped, nullptr, &roots));
  EXPECT(roots == 2, "%zu roots after rewiring", roots);  // nodes[1] and nodes[7]
  // A cycle: refused when the edge is added, or when the graph is instantiated.
  if (cudaGraphAddDependencies(retyped, &nodes[6], &nodes[7], nullptr, 1) == cudaSuccess) {
    cudaGraphExec_t bad;
    EXPECT(cudaGraphInstantiate(&bad, retyped, 0) != cudaSuccess, "a cycle instantiated");
  }
  cudaGetLastError();

  // A kernel node of a kernel with a double parameter.
  {
    double* dd;
    CHECK(cudaMalloc(&dd, n * sizeof(double)));
    std::vector<double> hd(n, 3.0);
    CHECK(cudaMemcpy(dd, hd.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    double s = 0.5;
    void* scale_args[] = {&dd, &s, (void*)&n};
    cudaKernelNodeParams sp = {};
    sp.func = (void*)scale;
    sp.gridDim = dim3((n + 127) / 128);
    sp.blockDim = dim3(128);
    sp.kernelParams = scale_args;
    cudaGraph_t g;
    cudaGraphNode_t node;
    cudaGraphExec_t ge;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &sp));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    CHECK(cudaGraphLaunch(ge, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaMemcpy(hd.data(), dd, n * sizeof(double), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) EXPECT(hd[i] == 1.5, "scale(double) node: x[%d] = %f", i, hd[i]);
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(dd));
  }

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaGraphDestroy(clone));
  CHECK(cudaGraphDestroy(smaller));
  CHECK(cudaGraphDestroy(retyped));
  CHECK(cudaEventDestroy(done));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  std::printf("PASS\n");
}
