// NVRTC compiles a kernel for the device's own architecture (sm_XX, a
// cubin), as NVIDIA's samples and many libraries do, and the driver API
// loads and runs it. Prints PASS.
#include <cuda.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK_CU(call)                                                                  \
  do {                                                                                  \
    CUresult r = (call);                                                                \
    if (r != CUDA_SUCCESS) {                                                            \
      const char *s = nullptr;                                                          \
      cuGetErrorName(r, &s);                                                            \
      std::printf("%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, s ? s : "?");   \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)
#define CHECK_NVRTC(call)                                                               \
  do {                                                                                  \
    nvrtcResult r = (call);                                                             \
    if (r != NVRTC_SUCCESS) {                                                           \
      std::printf("%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                \
                  nvrtcGetErrorString(r));                                              \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

static const char *kSource = R"(
extern "C" __global__ void axpb(const int *in, int *out, int a, int b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if __CUDA_ARCH__ >= 500
  if (i < n) out[i] = a * in[i] + b;
#endif
}
)";

int main() {
  CHECK_CU(cuInit(0));
  CUdevice dev;
  CHECK_CU(cuDeviceGet(&dev, 0));
  int major = 0, minor = 0;
  CHECK_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CHECK_CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));

  nvrtcProgram prog;
  CHECK_NVRTC(nvrtcCreateProgram(&prog, kSource, "axpb.cu", 0, nullptr, nullptr));
  // Both spellings of a real architecture: "-arch" "sm_XX" and --gpu-architecture=sm_XX.
  std::string arch = "sm_" + std::to_string(major * 10 + minor);
  std::string joined = "--gpu-architecture=" + arch;
  const char *separate[] = {"-arch", arch.c_str()};
  const char *single[] = {joined.c_str()};
  bool use_separate = std::getenv("NVRTC_SEPARATE_ARCH") != nullptr;
  CHECK_NVRTC(nvrtcCompileProgram(prog, use_separate ? 2 : 1, use_separate ? separate : single));
  size_t size = 0;
  CHECK_NVRTC(nvrtcGetCUBINSize(prog, &size));
  std::vector<char> cubin(size);
  CHECK_NVRTC(nvrtcGetCUBIN(prog, cubin.data()));
  CHECK_NVRTC(nvrtcDestroyProgram(&prog));

  CUcontext ctx;
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_CU(cuCtxSetCurrent(ctx));
  CUmodule module;
  CHECK_CU(cuModuleLoadData(&module, cubin.data()));
  CUfunction fn;
  CHECK_CU(cuModuleGetFunction(&fn, module, "axpb"));

  const int n = 1000;
  std::vector<int> in(n), out(n, -1);
  for (int i = 0; i < n; ++i) in[i] = i - 500;
  CUdeviceptr d_in, d_out;
  CHECK_CU(cuMemAlloc(&d_in, n * sizeof(int)));
  CHECK_CU(cuMemAlloc(&d_out, n * sizeof(int)));
  CHECK_CU(cuMemcpyHtoD(d_in, in.data(), n * sizeof(int)));
  int a = 3, b = 7, count = n;
  void *args[] = {&d_in, &d_out, &a, &b, &count};
  CHECK_CU(cuLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
  CHECK_CU(cuMemcpyDtoH(out.data(), d_out, n * sizeof(int)));
  for (int i = 0; i < n; ++i) {
    if (out[i] != a * in[i] + b) {
      std::printf("out[%d] = %d, expected %d\n", i, out[i], a * in[i] + b);
      return 1;
    }
  }
  std::printf("PASS\n");
  return 0;
}
