// A stream's synchronisation waits for that stream's work, not the whole
// device's. A kernel in another stream waits for a flag the host sets only
// after cudaStreamSynchronize of its own stream has returned (one host
// thread per stream, each synchronising its own, does this: cuda-samples
// UnifiedMemoryStreams): a driver that synchronises the device there waits
// for that kernel, which gives up after its timeout. Both kinds of created
// stream: blocking ones do not wait for each other, only for the legacy
// stream. The stream's query says it is done meanwhile, an event recorded
// in it is reached and a copy in a non-blocking one waits for its own work
// only. And what a stream waits for (an event of another stream) is waited
// for by its synchronisation.
#include <chrono>

#include "check.h"
#include "waits.h"

__global__ void add_one(int* x) { *x += 1; }

// Writes 1 after `ns` of the device's time.
__global__ void write_late(volatile int* x, unsigned long long ns) {
  unsigned long long start = now_ns();
  while (now_ns() - start < ns) {
  }
  *x = 1;
}

// A kernel of another stream that waits for the host: the flag it waits
// for and what it saw, in mapped host memory.
struct HostWait {
  int *flag, *seen, *device_flag, *device_seen;

  // Starts it in `stream`, the flag not yet set (it gives up after 3 s).
  void start(cudaStream_t stream) const {
    *(volatile int*)flag = 0;
    *(volatile int*)seen = 0;
    wait_for_host<<<1, 1, 0, stream>>>(device_flag, device_seen, 3ull * 1000 * 1000 * 1000);
  }

  // Sets the flag and synchronises `stream`: what the kernel saw, the
  // host's 7 or -1 (it gave up waiting).
  int release(cudaStream_t stream) const {
    *(volatile int*)flag = 7;
    CHECK(cudaStreamSynchronize(stream));
    return *(volatile int*)seen;
  }
};

int main() {
  int *flag, *seen;
  CHECK(cudaHostAlloc(&flag, sizeof *flag, cudaHostAllocMapped));
  CHECK(cudaHostAlloc(&seen, sizeof *seen, cudaHostAllocMapped));
  int *device_flag, *device_seen, *counter;
  CHECK(cudaHostGetDevicePointer(&device_flag, flag, 0));
  CHECK(cudaHostGetDevicePointer(&device_seen, seen, 0));
  CHECK(cudaMalloc(&counter, sizeof *counter));
  CHECK(cudaMemset(counter, 0, sizeof *counter));
  const HostWait host_wait{flag, seen, device_flag, device_seen};

  const unsigned int kinds[] = {cudaStreamDefault, cudaStreamNonBlocking};
  int added = 0;
  for (unsigned int kind : kinds) {
    cudaStream_t mine, other;
    CHECK(cudaStreamCreateWithFlags(&mine, kind));
    CHECK(cudaStreamCreateWithFlags(&other, kind));
    // Both kernels once, the flag already set: their first launches are done.
    *(volatile int*)flag = 1;
    add_one<<<1, 1, 0, mine>>>(counter);
    wait_for_host<<<1, 1, 0, other>>>(device_flag, device_seen, 3ull * 1000 * 1000 * 1000);
    CHECK(cudaDeviceSynchronize());
    added += 1;

    add_one<<<1, 1, 0, mine>>>(counter);
    host_wait.start(other);
    CHECK(cudaGetLastError());
    // Its query says so while the other stream's kernel still waits.
    cudaError_t query = cudaErrorNotReady;
    auto start = std::chrono::steady_clock::now();
    while (query == cudaErrorNotReady &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(1))
      query = cudaStreamQuery(mine);
    EXPECT(query == cudaSuccess, "streams of flags %u: cudaStreamQuery of the first stream: %d",
           kind, (int)query);
    CHECK(cudaStreamSynchronize(mine));
    added += 1;
    int saw = host_wait.release(other);
    EXPECT(saw == 7,
           "streams of flags %u: the other stream's kernel saw %d, not the host's 7: "
           "the first stream's synchronisation waited for it",
           kind, saw);
    CHECK(cudaStreamDestroy(mine));
    CHECK(cudaStreamDestroy(other));
  }
  // An event recorded in one stream (after a kernel of 50 ms) before
  // another stream's kernel that waits for the host is reached meanwhile:
  // its synchronisation returns.
  {
    cudaStream_t mine, other;
    cudaEvent_t done;
    int* late;
    CHECK(cudaMalloc(&late, sizeof *late));
    CHECK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    CHECK(cudaDeviceSynchronize());  // the set-up done, as the program's work begins
    write_late<<<1, 1, 0, mine>>>(late, 50ull * 1000 * 1000);
    CHECK(cudaEventRecord(done, mine));
    host_wait.start(other);
    CHECK(cudaEventSynchronize(done));
    int saw = host_wait.release(other);
    EXPECT(saw == 7,
           "the other stream's kernel saw %d, not the host's 7: the event's synchronisation "
           "waited for it",
           saw);
    CHECK(cudaEventDestroy(done));
    CHECK(cudaStreamDestroy(mine));
    CHECK(cudaStreamDestroy(other));
    CHECK(cudaFree(late));
  }
  // A non-blocking stream's copies wait for its own work only: a copy back
  // of what its kernel wrote, while another stream's kernel waits for the
  // host.
  {
    cudaStream_t mine, other;
    int* value;
    int* host_value;
    CHECK(cudaMalloc(&value, sizeof *value));
    CHECK(cudaMallocHost(&host_value, sizeof *host_value));
    CHECK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    CHECK(cudaDeviceSynchronize());
    *host_value = 0;
    write_late<<<1, 1, 0, mine>>>(value, 10ull * 1000 * 1000);
    host_wait.start(other);
    CHECK(cudaMemcpyAsync(host_value, value, sizeof *value, cudaMemcpyDeviceToHost, mine));
    CHECK(cudaStreamSynchronize(mine));
    EXPECT(*host_value == 1, "the copy after the stream's kernel read %d, not its 1", *host_value);
    int saw = host_wait.release(other);
    EXPECT(saw == 7, "the other stream's kernel saw %d, not the host's 7: the copy waited for it",
           saw);
    CHECK(cudaStreamDestroy(mine));
    CHECK(cudaStreamDestroy(other));
    CHECK(cudaFreeHost(host_value));
    CHECK(cudaFree(value));
  }
  // A stream's synchronisation waits for the events it waits for: the
  // other stream's kernel, enqueued after the stream's last kernel.
  {
    cudaStream_t mine, other;
    cudaEvent_t written;
    CHECK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&written, cudaEventDisableTiming));
    *(volatile int*)seen = 0;
    add_one<<<1, 1, 0, mine>>>(counter);
    added += 1;
    write_late<<<1, 1, 0, other>>>(device_seen, 50ull * 1000 * 1000);
    CHECK(cudaEventRecord(written, other));
    CHECK(cudaStreamWaitEvent(mine, written, 0));
    CHECK(cudaStreamSynchronize(mine));
    EXPECT(*(volatile int*)seen == 1,
           "a stream's synchronisation returned before the event it waits for (saw %d)",
           *(volatile int*)seen);
    CHECK(cudaEventDestroy(written));
    CHECK(cudaStreamDestroy(mine));
    CHECK(cudaStreamDestroy(other));
  }
  int total = 0;
  CHECK(cudaMemcpy(&total, counter, sizeof total, cudaMemcpyDeviceToHost));
  EXPECT(total == added, "the counter is %d, not %d", total, added);
  CHECK(cudaFree(counter));
  CHECK(cudaFreeHost(flag));
  CHECK(cudaFreeHost(seen));
  std::printf("PASS\n");
  return 0;
}
