// Conditional graph nodes: an if/else node, a while node whose body counts a
// value down (its kernel clears the condition, cudaGraphSetConditional) and a
// switch node; conditions with and without a default assigned at each launch;
// a body made by capturing into it (cudaStreamBeginCaptureToGraph). Built
// with -rdc=true: cudaGraphSetConditional is the device runtime's. Every
// check holds on NVIDIA's driver too.
#include "check.h"

__global__ void set_condition(const int* value, cudaGraphConditionalHandle handle) {
  cudaGraphSetConditional(handle, *value);
}

__global__ void record(int* log, int what) { log[log[0]++ + 1] = what; }

__global__ void count_down(int* counter, int* log, cudaGraphConditionalHandle handle) {
  log[log[0]++ + 1] = 100 + *counter;
  if (--*counter == 0) cudaGraphSetConditional(handle, 0);
}

static cudaGraphNodeParams kernel_node(void* func, void** args) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeKernel};
  p.kernel.func = func;
  p.kernel.gridDim = dim3(1);
  p.kernel.blockDim = dim3(1);
  p.kernel.kernelParams = args;
  return p;
}

static cudaGraphNode_t add_record(cudaGraph_t graph, int** log, int* what) {
  void* args[] = {log, what};
  cudaGraphNodeParams p = kernel_node((void*)record, args);
  cudaGraphNode_t node;
  CHECK(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &p));
  return node;
}

int main() {
  int *value, *log, *counter;
  CHECK(cudaMallocManaged(&value, sizeof(int)));
  CHECK(cudaMallocManaged(&log, 64 * sizeof(int)));
  CHECK(cudaMallocManaged(&counter, sizeof(int)));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));

  // set_condition(*value) -> if (condition) record 1 else record 2
  //                       -> switch (condition) {0: record 10, 1: record 11, 2: record 12}
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle if_handle, switch_handle;
  CHECK(cudaGraphConditionalHandleCreate(&if_handle, graph));
  CHECK(cudaGraphConditionalHandleCreate(&switch_handle, graph));
  void* set_if[] = {&value, &if_handle};
  cudaGraphNodeParams p = kernel_node((void*)set_condition, set_if);
  cudaGraphNode_t setter, if_node, switch_setter, switch_node;
  CHECK(cudaGraphAddNode(&setter, graph, nullptr, nullptr, 0, &p));
  cudaGraphNodeParams c = {cudaGraphNodeTypeConditional};
  c.conditional.handle = if_handle;
  c.conditional.type = cudaGraphCondTypeIf;
  c.conditional.size = 2;
  CHECK(cudaGraphAddNode(&if_node, graph, &setter, nullptr, 1, &c));
  int one = 1, two = 2, ten = 10, eleven = 11, twelve = 12;
  add_record(c.conditional.phGraph_out[0], &log, &one);
  add_record(c.conditional.phGraph_out[1], &log, &two);
  void* set_switch[] = {&value, &switch_handle};
  p = kernel_node((void*)set_condition, set_switch);
  CHECK(cudaGraphAddNode(&switch_setter, graph, &if_node, nullptr, 1, &p));
  c = {cudaGraphNodeTypeConditional};
  c.conditional.handle = switch_handle;
  c.conditional.type = cudaGraphCondTypeSwitch;
  c.conditional.size = 3;
  CHECK(cudaGraphAddNode(&switch_node, graph, &switch_setter, nullptr, 1, &c));
  add_record(c.conditional.phGraph_out[0], &log, &ten);
  add_record(c.conditional.phGraph_out[1], &log, &eleven);
  add_record(c.conditional.phGraph_out[2], &log, &twelve);
  cudaGraphNodeType type;
  CHECK(cudaGraphNodeGetType(switch_node, &type));
  EXPECT(type == cudaGraphNodeTypeConditional, "node type %d", type);
  cudaGraph_t clone;
  EXPECT(cudaGraphClone(&clone, graph) != cudaSuccess, "a graph with conditional nodes cloned");
  cudaGetLastError();

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const int want[][3] = {{2, 10}, {1, 11}, {1, 12}, {1}};  // value 0, 1, 2, 3
  for (int v = 0; v < 4; ++v) {
    *value = v;
    log[0] = 0;
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    int n = v == 3 ? 1 : 2;
    EXPECT(log[0] == n, "value %d: %d records", v, log[0]);
    for (int i = 0; i < n; ++i)
      EXPECT(log[i + 1] == want[v][i], "value %d: record %d is %d", v, i, log[i + 1]);
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));

  // while (condition) { record 5; count_down } with the default 1 assigned at
  // each launch; the body captured into the node's graph.
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle loop;
  CHECK(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
  c = {cudaGraphNodeTypeConditional};
  c.conditional.handle = loop;
  c.conditional.type = cudaGraphCondTypeWhile;
  c.conditional.size = 1;
  cudaGraphNode_t while_node;
  CHECK(cudaGraphAddNode(&while_node, graph, nullptr, nullptr, 0, &c));
  cudaStream_t capture;
  CHECK(cudaStreamCreate(&capture));
  CHECK(cudaStreamBeginCaptureToGraph(capture, c.conditional.phGraph_out[0], nullptr, nullptr, 0,
                                      cudaStreamCaptureModeGlobal));
  record<<<1, 1, 0, capture>>>(log, 5);
  count_down<<<1, 1, 0, capture>>>(counter, log, loop);
  CHECK(cudaStreamEndCapture(capture, nullptr));
  size_t body_nodes = 0;
  CHECK(cudaGraphGetNodes(c.conditional.phGraph_out[0], nullptr, &body_nodes));
  EXPECT(body_nodes == 2, "the body has %zu nodes", body_nodes);
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int launch = 0; launch < 2; ++launch) {  // the default starts each launch's loop
    *counter = 3;
    log[0] = 0;
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    const int loop_log[] = {5, 103, 5, 102, 5, 101};
    EXPECT(log[0] == 6, "launch %d: %d records", launch, log[0]);
    for (int i = 0; i < 6; ++i)
      EXPECT(log[i + 1] == loop_log[i], "launch %d: record %d is %d", launch, i, log[i + 1]);
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(capture));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(value));
  CHECK(cudaFree(log));
  CHECK(cudaFree(counter));
  std::printf("PASS\n");
}
