// The event API's answers where NVIDIA's documents give no code: one line
// "call = code" (or "what = value") per call. NVIDIA's answers, from an
// H200, belong in event_calls.h200.txt beside this file; test_adversarial.py
// compares. Built with nvcc, linked with -lcuda.
#include <cstdio>
#include <cuda.h>
#define A(call) std::printf("%s = %d\n", #call, (int)(call))
#define V(what, value) std::printf("%s = %d\n", what, (int)(value))

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  CUdevice dev;
  CUcontext ctx;
  CUstream s1, s2;
  CUevent a, b, never, untimed;
  CUgraph graph;
  float ms = -1.0f;
  cuInit(0);
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);
  cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  cuEventCreate(&a, CU_EVENT_DEFAULT);
  cuEventCreate(&b, CU_EVENT_DEFAULT);
  cuEventCreate(&never, CU_EVENT_DEFAULT);
  cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING);

  // Never recorded.
  A(cuEventQuery(never));
  A(cuEventSynchronize(never));
  A(cuEventElapsedTime(&ms, never, never));

  // Recorded: times, their order, bad arguments.
  A(cuEventRecord(a, nullptr));
  A(cuEventRecord(b, nullptr));
  A(cuEventSynchronize(b));
  A(cuEventElapsedTime(&ms, a, b));
  V("elapsed a to b is not negative", ms >= 0.0f);
  A(cuEventElapsedTime(&ms, b, a));
  V("elapsed b to a is not positive", ms <= 0.0f);
  A(cuEventElapsedTime(&ms, a, never));
  A(cuEventElapsedTime(nullptr, a, b));
  A(cuEventRecord(untimed, nullptr));
  A(cuEventSynchronize(untimed));
  A(cuEventElapsedTime(&ms, a, untimed));
  A(cuEventRecord(a, s1));
  A(cuEventRecordWithFlags(a, s1, CU_EVENT_RECORD_DEFAULT));
  A(cuEventSynchronize(a));

  // CU_EVENT_RECORD_EXTERNAL and CU_EVENT_WAIT_EXTERNAL outside a capture.
  A(cuEventRecordWithFlags(a, nullptr, CU_EVENT_RECORD_EXTERNAL));
  A(cuStreamWaitEvent(s1, a, CU_EVENT_WAIT_EXTERNAL));
  A(cuCtxSynchronize());

  // In a capture: an external record is an event record node.
  A(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  A(cuEventRecordWithFlags(b, s1, CU_EVENT_RECORD_EXTERNAL));
  A(cuStreamEndCapture(s1, &graph));
  size_t count = 0;
  A(cuGraphGetNodes(graph, nullptr, &count));
  V("external record: nodes", count);
  CUgraphNode node;
  count = 1;
  A(cuGraphGetNodes(graph, &node, &count));
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
  A(cuGraphNodeGetType(node, &type));
  V("external record: node type", type);
  A(cuEventQuery(b));  // last recorded outside the capture
  A(cuGraphDestroy(graph));

  // An event last recorded in a capture (a fork point), asked after it.
  A(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_RELAXED));
  A(cuEventRecord(a, s1));
  A(cuStreamWaitEvent(s2, a, 0));
  A(cuEventRecord(b, s2));
  A(cuStreamWaitEvent(s1, b, 0));
  A(cuStreamEndCapture(s1, &graph));
  A(cuEventQuery(a));
  A(cuEventSynchronize(a));
  A(cuEventElapsedTime(&ms, a, b));
  A(cuEventRecord(a, nullptr));
  A(cuEventQuery(a));
  A(cuEventElapsedTime(&ms, untimed, a));
  A(cuGraphDestroy(graph));

  A(cuEventDestroy(a));
  A(cuEventDestroy(b));
  A(cuEventDestroy(never));
  A(cuEventDestroy(untimed));
  std::printf("PASS\n");
  return 0;
}
