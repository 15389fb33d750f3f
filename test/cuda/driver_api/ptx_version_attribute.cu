#include <cuda.h>
#include <cstdio>
// CU_FUNC_ATTRIBUTE_PTX_VERSION is the architecture the PTX targets (what
// CUB's dispatch compares with the architectures it was built for), not the
// device's.
const char* ptx = R"(
.version 7.0
.target sm_75
.address_size 64
.visible .entry empty()
{
  ret;
}
)";
#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  CUmodule mod; C(cuModuleLoadData(&mod, ptx));
  CUfunction f; C(cuModuleGetFunction(&f, mod, "empty"));
  int version = 0;
  C(cuFuncGetAttribute(&version, CU_FUNC_ATTRIBUTE_PTX_VERSION, f));
  if (version != 75) { printf("FAIL: PTX version %d, expected 75\n", version); return 1; }
  printf("PASS\n");
}
