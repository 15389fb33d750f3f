// What cuda-samples call first: cudaProfilerStart/Stop around the work
// (matrixMul, asyncAPI), and the kernel attributes and occupancy cudart
// builds from every function attribute of CUDA 13, cluster ones included
// (simpleOccupancy, FDTD3d, binaryPartitionCG).
#include <cuda_profiler_api.h>
#include <vector>
#include "check.h"

__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] *= a;
    }
}

int main() {
    CHECK(cudaProfilerStart());
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, scale));
    EXPECT(attr.maxThreadsPerBlock >= 32, "maxThreadsPerBlock %d", attr.maxThreadsPerBlock);
    EXPECT(attr.sharedSizeBytes == 0, "sharedSizeBytes %zu", attr.sharedSizeBytes);
    EXPECT(attr.clusterDimMustBeSet == 0 && attr.requiredClusterWidth == 0,
           "cluster attributes %d %d", attr.clusterDimMustBeSet, attr.requiredClusterWidth);
    int minGrid = 0, block = 0;
    CHECK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, scale, 0, 0));
    EXPECT(block > 0 && block <= attr.maxThreadsPerBlock && minGrid > 0, "block %d grid %d",
           block, minGrid);

    const int n = 1000;
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) {
        host[i] = static_cast<float>(i);
    }
    float* x = nullptr;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    scale<<<(n + block - 1) / block, block>>>(x, 2.0f, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(host.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
        EXPECT(host[i] == 2.0f * i, "x[%d] = %g", i, host[i]);
    }
    CHECK(cudaFree(x));
    CHECK(cudaProfilerStop());
    std::printf("PASS\n");
    return 0;
}
