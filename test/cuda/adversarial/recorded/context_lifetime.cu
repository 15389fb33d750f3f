// Contexts destroyed, current or not, before and after a sticky error: one
// line "call = code" per call. NVIDIA's answers, from an H200, are
// context_lifetime.h200.txt beside this file; test_adversarial.py compares.
// Built with nvcc, linked with -lcuda.
#include <cstdio>
#include <cuda.h>
#define A(call) std::printf("%s = %d\n", #call, (int)(call))
static const char kPtx[] =
    ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry trap_kernel() { trap; }\n";
int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  CUdevice dev;
  CUcontext a, b, c, cur;
  CUdeviceptr p;
  cuInit(0);
  cuDeviceGet(&dev, 0);
  A(cuCtxCreate(&a, nullptr, 0, dev));
  A(cuCtxCreate(&b, nullptr, 0, dev)); // b current
  A(cuCtxDestroy(a));                  // not current: it stays on the stack, destroyed
  A(cuCtxDestroy(a));
  A(cuCtxDestroy(b)); // current: popped
  A(cuCtxGetCurrent(&cur));
  std::printf("current is NULL: %d, is b: %d\n", cur == nullptr, cur == b);
  A(cuMemAlloc(&p, 16));
  A(cuCtxDestroy(b));
  A(cuCtxSetCurrent(a));
  A(cuMemAlloc(&p, 16));
  A(cuCtxPushCurrent(b));
  A(cuCtxCreate(&c, nullptr, 0, dev));
  A(cuMemAlloc(&p, 16));
  CUmodule m;
  CUfunction f;
  void *args[] = {nullptr};
  A(cuModuleLoadData(&m, kPtx));
  A(cuModuleGetFunction(&f, m, "trap_kernel"));
  A(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  A(cuCtxSynchronize());
  A(cuCtxDestroy(c));
  A(cuCtxGetCurrent(&cur));
  std::printf("current is NULL: %d\n", cur == nullptr);
  A(cuCtxDestroy(c));
  A(cuMemAlloc(&p, 16));
  A(cuCtxCreate(&c, nullptr, 0, dev));
  return 0;
}
