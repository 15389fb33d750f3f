// The kernel of client.py: adds one to each element; thread 0 prints.
#include <cstdio>
extern "C" __global__ void add_one(float *p, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0)
    printf("device: %d threads\n", (int)(gridDim.x * blockDim.x));
  if (i < n)
    p[i] += 1.0f;
}
