// Managed memory: a __managed__ variable the host writes before and reads
// after a kernel, cudaMallocManaged with prefetch and advice, and the stream
// queries libraries make (capture info, device of a stream).
#include "check.h"

__managed__ int counts[4];
__managed__ float scale = 0.0f;

__global__ void count(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&counts[i % 4], 1);
    data[i] = static_cast<int>(scale * i);
  }
}

int main() {
  const int n = 1000;
  counts[0] = 100;  // the host writes the variable directly
  scale = 3.0f;
  int* data;
  CHECK(cudaMallocManaged(&data, n * sizeof(int)));
  const cudaMemLocation device = {cudaMemLocationTypeDevice, 0};
  CHECK(cudaMemAdvise(data, n * sizeof(int), cudaMemAdviseSetPreferredLocation, device));
  CHECK(cudaMemPrefetchAsync(data, n * sizeof(int), device, 0, 0));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  unsigned long long id = 0;
  CHECK(cudaStreamGetCaptureInfo(s, &status, &id));
  EXPECT(status == cudaStreamCaptureStatusNone, "capture status %d", (int)status);
  int dev = -1;
  CHECK(cudaStreamGetDevice(s, &dev));
  EXPECT(dev == 0, "stream device %d", dev);
  count<<<(n + 127) / 128, 128, 0, s>>>(data, n);
  CHECK(cudaStreamSynchronize(s));
  EXPECT(counts[0] == 100 + 250 && counts[1] == 250 && counts[2] == 250 && counts[3] == 250,
         "counts %d %d %d %d", counts[0], counts[1], counts[2], counts[3]);
  for (int i = 0; i < n; ++i) EXPECT(data[i] == 3 * i, "data[%d] = %d", i, data[i]);
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(data));
  std::printf("PASS\n");
}
