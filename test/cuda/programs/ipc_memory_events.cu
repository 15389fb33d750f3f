// CUDA IPC between a parent and a forked child: the parent exports two
// allocations (a large one and a small one) and an interprocess event; the
// child opens them, runs a kernel on the parent's memory through the
// imported pointer, fills the small one and records the event in its stream
// without waiting for it. The parent waits for the child's work through the
// event alone, then sees what the child wrote. Also the errors: opening a
// handle in the process that made it, exporting what cuMemAlloc did not
// allocate, an interprocess event without disabled timing, the handle of an
// ordinary event. The process forks before any CUDA call (a forked child
// cannot use its parent's CUDA state).
#include <cstdint>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

constexpr int kN = 1 << 20;  // 4 MiB of ints
constexpr int kSmall = 200;  // bytes: a small allocation

struct Handles {
  cudaIpcMemHandle_t big, small;
  cudaIpcEventHandle_t event;
};

__global__ void iota(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = i;
}

__global__ void bump(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

// Launches of bump by the child: long enough that the parent would see
// earlier values had it not waited for the event.
constexpr int kBumps = 32;

static void full_read(int fd, void *data, size_t n) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    ssize_t got = read(fd, p, n);
    EXPECT(got > 0, "pipe read failed");
    p += got;
    n -= size_t(got);
  }
}

static void full_write(int fd, const void *data, size_t n) {
  EXPECT(write(fd, data, n) == ssize_t(n), "pipe write failed");
}

static int child(int from_parent, int to_parent) {
  Handles h;
  full_read(from_parent, &h, sizeof h);
  CHECK(cudaSetDevice(0));
  int *big = nullptr, *again = nullptr;
  unsigned char *small = nullptr;
  CHECK(cudaIpcOpenMemHandle(reinterpret_cast<void **>(&big), h.big,
                             cudaIpcMemLazyEnablePeerAccess));
  // Opened twice in one context: the same pointer, counted.
  CHECK(cudaIpcOpenMemHandle(reinterpret_cast<void **>(&again), h.big,
                             cudaIpcMemLazyEnablePeerAccess));
  EXPECT(again == big, "second open gave %p, first %p", again, big);
  CHECK(cudaIpcOpenMemHandle(reinterpret_cast<void **>(&small), h.small,
                             cudaIpcMemLazyEnablePeerAccess));
  cudaEvent_t event;
  CHECK(cudaIpcOpenEventHandle(&event, h.event));

  // The parent's values are there.
  int head[4];
  CHECK(cudaMemcpy(head, big + 1000, sizeof head, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 4; ++i)
    EXPECT(head[i] == 1000 + i, "child sees big[%d] = %d", 1000 + i, head[i]);

  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK(cudaMemsetAsync(small, 0xab, kSmall, stream));
  for (int k = 0; k < kBumps; ++k) bump<<<kN / 256, 256, 0, stream>>>(big, kN);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(event, stream));
  char recorded = 'r';
  full_write(to_parent, &recorded, 1);  // not waiting for the stream

  char done;
  full_read(from_parent, &done, 1);
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaIpcCloseMemHandle(big));
  CHECK(cudaIpcCloseMemHandle(again));
  CHECK(cudaIpcCloseMemHandle(small));
  CHECK(cudaEventDestroy(event));
  CHECK(cudaStreamDestroy(stream));
  return 0;
}

static void expect_error(cudaError_t got, cudaError_t want, const char *what) {
  EXPECT(got == want, "%s: %s (%d), expected %s (%d)", what, cudaGetErrorName(got), int(got),
         cudaGetErrorName(want), int(want));
  cudaGetLastError();
}

static int parent(int to_child, int from_child, pid_t pid) {
  CHECK(cudaSetDevice(0));
  int *big = nullptr;
  unsigned char *small = nullptr;
  CHECK(cudaMalloc(&big, kN * sizeof(int)));
  CHECK(cudaMalloc(&small, kSmall));
  iota<<<kN / 256, 256>>>(big, kN);
  CHECK(cudaMemset(small, 0, kSmall));
  CHECK(cudaDeviceSynchronize());

  Handles h;
  CHECK(cudaIpcGetMemHandle(&h.big, big));
  CHECK(cudaIpcGetMemHandle(&h.small, small));
  cudaEvent_t event;
  CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventInterprocess));
  CHECK(cudaIpcGetEventHandle(&h.event, event));
  CHECK(cudaEventQuery(event));  // never recorded: complete

  // Errors, as NVIDIA's driver answers them.
  void *self_opened = nullptr;
  expect_error(cudaIpcOpenMemHandle(&self_opened, h.big, cudaIpcMemLazyEnablePeerAccess),
               cudaErrorDeviceUninitialized, "open in the exporting process");
  int on_host[4];
  cudaIpcMemHandle_t unused;
  expect_error(cudaIpcGetMemHandle(&unused, on_host), cudaErrorInvalidValue,
               "export of host memory");
  cudaEvent_t timed;
  expect_error(cudaEventCreateWithFlags(&timed, cudaEventInterprocess), cudaErrorInvalidValue,
               "interprocess event with timing");
  cudaEvent_t plain;
  CHECK(cudaEventCreateWithFlags(&plain, cudaEventDisableTiming));
  cudaIpcEventHandle_t unused_event;
  expect_error(cudaIpcGetEventHandle(&unused_event, plain), cudaErrorInvalidResourceHandle,
               "handle of an ordinary event");
  CHECK(cudaEventDestroy(plain));

  full_write(to_child, &h, sizeof h);
  char recorded;
  full_read(from_child, &recorded, 1);
  // The child's kernel and fill may still run: the event waits for them.
  CHECK(cudaEventSynchronize(event));
  CHECK(cudaEventQuery(event));

  int *out = new int[kN];
  unsigned char tail[kSmall];
  CHECK(cudaMemcpy(out, big, kN * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(tail, small, kSmall, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i)
    EXPECT(out[i] == i + kBumps, "big[%d] = %d after the child's kernels, expected %d", i,
           out[i], i + kBumps);
  for (int i = 0; i < kSmall; ++i)
    EXPECT(tail[i] == 0xab, "small[%d] = %#x after the child's fill", i, tail[i]);
  delete[] out;

  char done = 'd';
  full_write(to_child, &done, 1);
  int status = 0;
  EXPECT(waitpid(pid, &status, 0) == pid, "waitpid failed");
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed (status %#x)", status);
  CHECK(cudaEventDestroy(event));
  CHECK(cudaFree(big));
  CHECK(cudaFree(small));
  return 0;
}

int main() {
  int down[2], up[2];
  EXPECT(pipe(down) == 0 && pipe(up) == 0, "pipe failed");
  pid_t pid = fork();
  EXPECT(pid >= 0, "fork failed");
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    return child(down[0], up[1]);
  }
  close(down[0]);
  close(up[1]);
  int rc = parent(down[1], up[0], pid);
  std::printf("PASS\n");
  return rc;
}
