// bins[v] += number of bytes equal to v in data[0..n): global atomics over a grid-stride
// loop. bins (256 entries) must be zeroed or hold counts to accumulate onto.
extern "C" __global__ void histogram(const unsigned char* data, unsigned int n,
                                     unsigned int* bins) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += blockDim.x * gridDim.x) {
        atomicAdd(&bins[data[i]], 1u);
    }
}
