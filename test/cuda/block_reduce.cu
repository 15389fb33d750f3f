// partial[blockIdx.x] = sum of in[] over the block's elements (0 past n).
// A tree in dynamic shared memory down to 64 values, then the first warp finishes with
// __shfl_down_sync. blockDim.x must be a power of two and at least 64; launch with
// blockDim.x * sizeof(float) bytes of dynamic shared memory.
extern "C" __global__ void block_reduce(const float* in, float* partial, int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < (unsigned int)n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) {
        float v = sdata[tid] + sdata[tid + 32];
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (tid == 0) {
            partial[blockIdx.x] = v;
        }
    }
}
