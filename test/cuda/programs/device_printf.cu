// Device printf: every conversion with flags, widths, precisions and length
// modifiers, %s strings from every state space and of any length, printf's
// return value, output only at synchronisation points (none at the process's
// exit), per-thread order, and the FIFO size limit, which can be set only
// before the first kernel that calls printf. test_device_printf
// (test/runtime/test_device_printf.py) checks the exact output, which is
// NVIDIA's (driver 580 on an H200) but for the overfull FIFO: there NVIDIA's
// wraps around and prints a jumble of later lines; ours keeps the first. (The
// H200 also printed `%hhx %hx` of 255 and 0x12345 as "25 2520" and `%.*f`,
// `%*.*f` as written; ours prints what the host's C library does.)
#include <climits>
#include <cmath>
#include "check.h"

__device__ const char global_text[] = "global";

__device__ __noinline__ int in_function(int x) {
  return printf("function %d\n", x);  // the record is written in a .func
}

__global__ void conversions(const char *heap_text, int *returned) {
  printf("plain line, no arguments\n");
  printf("%d %i %u %x %X %o\n", -42, 42, 4000000000u, 255, 255, 8);
  printf("[%5d|%-5d|%05d|%+d|% d|%.3d|%.0d]\n", 42, 42, 42, 42, 42, 7, 0);
  printf("%d %d %u %x\n", INT_MIN, INT_MAX, UINT_MAX, 0x80000000u);
  printf("%ld %lld %lu %llx %lX\n", -1234567890123L, 1LL << 40, ULONG_MAX, 0xdeadbeefcafeULL,
         0xABCDEFL);
  printf("%hd %hhd %hu %hhx %hx\n", (short)-2, (signed char)65, (unsigned short)65535,
         (unsigned char)255, 0x12345);
  printf("[%c%c%c|%3c|%-3c]\n", 'a', 'b', 'c', 'x', 'y');
  printf("[%f|%.2f|%10.3f|%-10.1f|%+.0f|%#.0f]\n", 3.14159f, 2.5, -1.0 / 3, 1e10, 2.5, 3.0);
  printf("[%e|%.3E|%12.4e|%g|%G|%g|%g|%#g]\n", 12345.678, 0.000123, -1.5, 1e-5, 1e20, 100.0,
         0.0001, 1.0);
  printf("[%a|%A|%.2a|%a]\n", 1.0, -0.5, 3.0, 0.1f);
  printf("[%f|%f|%f|%e]\n", INFINITY, -INFINITY, -0.0, 1e-310);
  printf("[%#x|%#X|%#o|%#.3g|%+.1e|%-+6d|%0+6d]\n", 255, 255, 8, 1.0, 12345.0, 7, 7);
  printf("[%*d|%-*d|%.*f|%*.*f]\n", 6, 42, 6, 42, 2, 3.14159, 8, 3, 2.71828);
  printf("[%s|%10s|%-10s|%.3s|%5.2s]\n", "str", "right", "left", "truncated", "ab");
  char local_text[8] = {'l', 'o', 'c', 'a', 'l', 0};
  __shared__ char shared_text[8];
  if (threadIdx.x == 0) {
    shared_text[0] = 's';
    shared_text[1] = 'h';
    shared_text[2] = 0;
  }
  __syncthreads();
  printf("[%s|%s|%s|%s]\n", global_text, heap_text, local_text, shared_text);
  const char *null_text = nullptr;
  printf("[%p|%p|%s|%.3s|%8s]\n", (void *)0x1234, (void *)nullptr, null_text, null_text,
         null_text);
  printf("100%% done, %d%%\n", 100);
  int n = printf("%d %s %f\n", 1, "two", 3.0);
  returned[0] = n;
  returned[1] = printf("none\n");
  returned[2] = in_function(5);
  printf("%d mixed %ld %c %s %f %u %lld %x\n", 1, 2L, '3', "4", 5.0, 6u, 7LL, 8);
}

__global__ void per_thread(int lines) {
  for (int i = 0; i < lines; ++i)
    printf("block %d thread %d line %d\n", blockIdx.x, threadIdx.x, i);
}

__global__ void fill_fifo(int count) {
  for (int i = 0; i < count; ++i)
    printf("fifo line %06d\n", i);
}

__global__ void no_printf(int *out) {  // of the same module: no printf, the FIFO stays settable
  if (out)
    *out = 0;
}

__global__ void long_string(const char *text) { printf("[%s]\n", text); }

__global__ void at_exit() { printf("never printed: no synchronisation follows\n"); }

static void print_fifo(const char *what) {
  size_t fifo = 0;
  CHECK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
  std::printf("host: %s, printf FIFO %zu bytes\n", what, fifo);
}

int main() {
  char *heap_text;
  int *returned, host[3];
  CHECK(cudaMalloc(&heap_text, 8));
  CHECK(cudaMemcpy(heap_text, "heap", 5, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&returned, sizeof(host)));
  print_fifo("default");
  // Until a kernel that calls printf is launched, the FIFO's size can be set:
  // 512 KiB at least, rounded up to a multiple of 256 bytes.
  no_printf<<<1, 1>>>(nullptr);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 4096));
  print_fifo("asked for 4096");
  CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 600000));
  print_fifo("asked for 600000");
  CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 512 << 10));
  print_fifo("asked for 512 KiB");

  conversions<<<1, 1>>>(heap_text, returned);
  std::printf("host: launched, nothing printed yet\n");
  CHECK(cudaDeviceSynchronize());
  std::printf("host: synchronized\n");
  CHECK(cudaMemcpy(host, returned, sizeof(host), cudaMemcpyDeviceToHost));
  std::printf("host: printf returned %d %d %d\n", host[0], host[1], host[2]);
  EXPECT(host[0] == 3 && host[1] == 0 && host[2] == 1, "printf returned %d %d %d", host[0],
         host[1], host[2]);

  // A blocking copy is a synchronisation point too.
  per_thread<<<2, 64>>>(3);
  std::printf("host: per_thread launched\n");
  CHECK(cudaMemcpy(host, returned, sizeof(host), cudaMemcpyDeviceToHost));
  std::printf("host: copied\n");

  // Once one was, the size is fixed: cudaErrorInvalidValue, the size stays.
  cudaError_t late = cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 16);
  std::printf("host: setting it after printf: %s\n", cudaGetErrorName(late));
  EXPECT(late == cudaErrorInvalidValue, "a late cudaDeviceSetLimit returned %d", (int)late);
  print_fifo("still");

  // A %s string prints whole, however long.
  char text[6000];
  for (int i = 0; i < 5999; ++i)
    text[i] = 'a' + i % 26;
  text[5999] = 0;
  char *long_text;
  CHECK(cudaMalloc(&long_text, sizeof(text)));
  CHECK(cudaMemcpy(long_text, text, sizeof(text), cudaMemcpyHostToDevice));
  long_string<<<1, 1>>>(long_text);
  CHECK(cudaDeviceSynchronize());

  // An overfull FIFO: ours keeps the first lines and drops the rest
  // (NVIDIA's wraps around).
  fill_fifo<<<1, 1>>>(100000);
  CHECK(cudaDeviceSynchronize());
  std::printf("host: FIFO filled\n");

  // cudaFree waits for the device: a synchronisation point.
  fill_fifo<<<1, 1>>>(1);
  std::printf("host: freeing\n");
  CHECK(cudaFree(long_text));
  CHECK(cudaFree(heap_text));
  CHECK(cudaFree(returned));

  // So is the context's end (cudaDeviceReset); the new context's FIFO can
  // be set again.
  fill_fifo<<<1, 1>>>(2);
  std::printf("host: resetting\n");
  CHECK(cudaDeviceReset());
  CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 20));
  print_fifo("after the reset");

  // The process's exit is none: this kernel's line is never printed.
  at_exit<<<1, 1>>>();
  std::printf("PASS\n");
  return 0;
}
