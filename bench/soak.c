/* Soak: what the driver costs after a long life. Three phases, each printing
 * one JSON line per checkpoint (bench/soak.py reads them):
 *   streams:     µs per launch of an empty kernel after creating and
 *                destroying N streams;
 *   modules:     RSS after loading and unloading N distinct modules, and ms
 *                per load;
 *   allocations: µs per cuMemAlloc + cuMemFree pair with N allocations live,
 *                and RSS once all are freed.
 * Built against the driver API only (-lcuda): ours under `zmlir run`, or
 * NVIDIA's. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                               \
  do {                                                                                         \
    CUresult r_ = (x);                                                                         \
    if (r_ != CUDA_SUCCESS) {                                                                  \
      fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #x, (int)r_);                    \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0)
      kib = atol(line + 6);
  if (f)
    fclose(f);
  return kib;
}

static const char *EMPTY_PTX = ".version 7.0\n.target sm_80\n.address_size 64\n"
                               ".visible .entry empty()\n{\n\tret;\n}\n";

static double launch_us(CUfunction f, int n) {
  CHECK(cuCtxSynchronize());
  double start = now_us();
  for (int i = 0; i < n; ++i)
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
  CHECK(cuCtxSynchronize());
  return (now_us() - start) / n;
}

int main(int argc, char **argv) {
  int streams = argc > 1 ? atoi(argv[1]) : 10000;
  int modules = argc > 2 ? atoi(argv[2]) : 100;
  int allocations = argc > 3 ? atoi(argv[3]) : 100000;
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CUmodule empty_module;
  CHECK(cuModuleLoadData(&empty_module, EMPTY_PTX));
  CUfunction empty;
  CHECK(cuModuleGetFunction(&empty, empty_module, "empty"));
  launch_us(empty, 100); /* warm */

  for (int done = 0, step = streams / 5; done <= streams; done += step) {
    printf("{\"phase\": \"streams\", \"count\": %d, \"launch_us\": %.3f, \"rss_kib\": %ld}\n", done,
           launch_us(empty, 500), rss_kib());
    fflush(stdout);
    if (step == 0)
      break;
    for (int i = 0; i < step && done + step <= streams; ++i) {
      CUstream s;
      CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
      CHECK(cuStreamDestroy(s));
    }
  }

  char ptx[512];
  for (int done = 0, step = modules / 4;;) {
    double start = now_us();
    for (int i = 0; i < step && done < modules; ++i, ++done) {
      /* Distinct text: a module the JIT has not seen in this process. */
      snprintf(ptx, sizeof ptx,
               ".version 7.0\n.target sm_80\n.address_size 64\n"
               ".visible .entry k%d(.param .u64 p)\n{\n\t.reg .b64 %%rd<2>;\n\t.reg .b32 %%r<2>;\n"
               "\tld.param.u64 %%rd1, [p];\n\tmov.u32 %%r1, %d;\n\tst.global.u32 [%%rd1], %%r1;\n"
               "\tret;\n}\n",
               done, rand());
      CUmodule m;
      CHECK(cuModuleLoadData(&m, ptx));
      CHECK(cuModuleUnload(m));
    }
    printf("{\"phase\": \"modules\", \"count\": %d, \"rss_kib\": %ld, \"load_ms\": %.3f}\n", done,
           rss_kib(), done && step ? (now_us() - start) / step / 1e3 : 0.0);
    fflush(stdout);
    if (step == 0 || done >= modules)
      break;
  }

  CUdeviceptr *live = malloc(sizeof *live * (size_t)(allocations > 0 ? allocations : 1));
  long rss_before = rss_kib();
  int held = 0;
  for (int target = 0, step = allocations / 4;; target += step) {
    for (; held < target; ++held)
      CHECK(cuMemAlloc(&live[held], 64));
    double start = now_us();
    for (int i = 0; i < 1000; ++i) {
      CUdeviceptr p;
      CHECK(cuMemAlloc(&p, 64));
      CHECK(cuMemFree(p));
    }
    printf("{\"phase\": \"allocations\", \"count\": %d, \"alloc_free_us\": %.3f, \"rss_kib\": %ld}\n",
           held, (now_us() - start) / 1000, rss_kib());
    fflush(stdout);
    if (step == 0 || target >= allocations)
      break;
  }
  for (int i = 0; i < held; ++i)
    CHECK(cuMemFree(live[i]));
  printf("{\"phase\": \"freed\", \"count\": %d, \"rss_kib\": %ld, \"rss_before_kib\": %ld}\n", held,
         rss_kib(), rss_before);
  free(live);
  return 0;
}
