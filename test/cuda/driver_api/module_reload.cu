#include <cuda.h>
#include <cstdio>
// Each load of a module has variables of its own, initialised afresh, as in
// NVIDIA's driver: a module unloaded and loaded again starts from its
// initial values, and two loads of one image at once do not share them.
const char* ptx = ".version 7.0\n.target sm_80\n.address_size 64\n"
                  ".visible .global .align 4 .u32 counter = 5;\n"
                  ".visible .entry bump()\n{\n\t.reg .b32 %r<3>;\n\tld.global.u32 %r1, [counter];\n"
                  "\tadd.u32 %r2, %r1, 1;\n\tst.global.u32 [counter], %r2;\n\tret;\n}\n";
#define C(x) do { CUresult r = (x); if (r) { printf("%s: %d\n", #x, (int)r); return 1; } } while (0)

static int counter(CUmodule m, unsigned* value) {
  CUdeviceptr g; size_t size;
  C(cuModuleGetGlobal(&g, &size, m, "counter"));
  C(cuMemcpyDtoH(value, g, sizeof *value));
  return 0;
}

static int bump(CUmodule m) {
  CUfunction f; C(cuModuleGetFunction(&f, m, "bump"));
  C(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  return 0;
}

int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0)); CUcontext ctx;
  C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  unsigned value = 0;
  for (int round = 0; round < 3; ++round) {
    CUmodule m; C(cuModuleLoadData(&m, ptx));
    if (bump(m) || counter(m, &value)) return 1;
    if (value != 6) { printf("round %d: counter %u, expected 6\n", round, value); return 1; }
    C(cuModuleUnload(m));
  }
  CUmodule a, b; C(cuModuleLoadData(&a, ptx)); C(cuModuleLoadData(&b, ptx));
  if (bump(a) || bump(a) || counter(a, &value)) return 1;
  if (value != 7) { printf("first load: counter %u, expected 7\n", value); return 1; }
  if (counter(b, &value)) return 1;
  if (value != 5) { printf("second load: counter %u, expected 5\n", value); return 1; }
  C(cuModuleUnload(a));
  if (bump(b) || counter(b, &value)) return 1;  // b lives on after a is gone
  if (value != 6) { printf("second load after the first's unload: %u\n", value); return 1; }
  C(cuModuleUnload(b));
  printf("PASS\n");
  return 0;
}
