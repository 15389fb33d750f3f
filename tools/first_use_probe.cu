// First use against steady use, natively and under zmlir: host time of
// each runtime call and the event-timed region around it, for events,
// kernels and streams (bench/results/h100/kernel_speed_h100.rerun.log).
#include <chrono>
#include <cstdio>

__global__ void k1(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void k2(float *x) { x[threadIdx.x] *= 2.0f; }

static double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

#define HOST(label, call)                                   \
  do {                                                      \
    double t0 = now_us();                                   \
    call;                                                   \
    std::printf("  host %-28s %8.1f us\n", label, now_us() - t0); \
  } while (0)

static void region(const char *name, cudaEvent_t a, cudaEvent_t b, cudaStream_t s,
                   void (*kernel)(float *), float *x) {
  std::printf("%s\n", name);
  HOST("record start", cudaEventRecord(a, s));
  HOST("launch", (kernel<<<1, 32, 0, s>>>(x)));
  HOST("record stop", cudaEventRecord(b, s));
  HOST("event synchronize", cudaEventSynchronize(b));
  float ms = -1;
  HOST("elapsed", cudaEventElapsedTime(&ms, a, b));
  std::printf("  region %.1f us\n", ms * 1000.0f);
}

int main() {
  float *x;
  cudaMalloc(&x, 1024);
  cudaMemset(x, 0, 1024);
  cudaDeviceSynchronize();
  cudaEvent_t e[8];
  for (auto &ev : e) HOST("event create", cudaEventCreate(&ev));
  region("first records, first launch of k1", e[0], e[1], 0, k1, x);
  region("warm", e[0], e[1], 0, k1, x);
  region("warm again", e[0], e[1], 0, k1, x);
  region("first records (new events)", e[2], e[3], 0, k1, x);
  region("first launch of k2", e[0], e[1], 0, k2, x);
  cudaStream_t s;
  int lo, hi;
  cudaDeviceGetStreamPriorityRange(&lo, &hi);
  HOST("stream create", cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, hi));
  region("first use of a stream", e[0], e[1], s, k1, x);
  region("stream warm", e[0], e[1], s, k1, x);
  std::printf("malloc/free in a region\n");
  cudaEventRecord(e[0], 0);
  void *p;
  HOST("cudaMalloc 1 MiB", cudaMalloc(&p, 1 << 20));
  HOST("launch", (k1<<<1, 32>>>(x)));
  HOST("cudaFree", cudaFree(p));
  cudaEventRecord(e[1], 0);
  cudaEventSynchronize(e[1]);
  float ms;
  cudaEventElapsedTime(&ms, e[0], e[1]);
  std::printf("  region %.1f us\n", ms * 1000.0f);
  return 0;
}
