// Templates (function, class, kernel, non-type parameters), static and
// dynamic shared memory, multi-dimensional shared arrays, vector types.
#include <cuda_fp16.h>

template <typename T>
struct Acc {
    T v;
    __device__ Acc() : v(T(0)) {}
    __device__ void add(T x) { v += x; }
};

template <typename T, int TILE>
__global__ void transpose(const T* __restrict__ in, T* __restrict__ out, int w, int h) {
    __shared__ T tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < h && y < w) out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}

template <typename T>
__global__ void block_sum(const T* in, T* out, int n) {
    extern __shared__ unsigned char smem_raw[];
    T* smem = reinterpret_cast<T*>(smem_raw);
    Acc<T> acc;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc.add(in[i]);
    smem[threadIdx.x] = acc.v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) smem[threadIdx.x] = smem[threadIdx.x] + smem[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = smem[0];
}

template <int N>
__device__ __forceinline__ int unrolled_dot(const int* a, const int* b) {
    int s = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) s += a[i] * b[i];
    return s;
}

__global__ void dots(const int4* a, const int4* b, int* out) {
    int4 x = a[threadIdx.x], y = b[threadIdx.x];
    int xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
    out[threadIdx.x] = unrolled_dot<4>(xs, ys);
}

__global__ void vectors(const float4* a, double2* d, char4* c, short2* s, ulonglong2* u) {
    float4 v = __ldg(&a[threadIdx.x]);
    d[threadIdx.x] = make_double2(v.x + v.y, v.z * v.w);
    c[threadIdx.x] = make_char4(v.x, v.y, v.z, v.w);
    s[threadIdx.x] = make_short2(v.x, -v.y);
    u[threadIdx.x].x += u[threadIdx.x].y;
}

// Two dynamic shared arrays carved from one extern buffer, plus static ones.
__global__ void __launch_bounds__(128, 4) two_buffers(float* out, int n) {
    extern __shared__ float dyn[];
    __shared__ int counts[4][32];
    __shared__ double scratch[16];
    float* a = dyn;
    float* b = dyn + n;
    a[threadIdx.x] = threadIdx.x;
    b[threadIdx.x] = 2 * threadIdx.x;
    counts[threadIdx.x % 4][threadIdx.x % 32] = threadIdx.x;
    if (threadIdx.x < 16) scratch[threadIdx.x] = 1.0 / (threadIdx.x + 1);
    __syncthreads();
    out[threadIdx.x] = a[n - 1 - threadIdx.x] + b[threadIdx.x] + counts[0][threadIdx.x % 32] +
                       (float)scratch[threadIdx.x % 16];
}

__global__ void __maxnreg__(32) limited(float* p) { p[threadIdx.x] *= 3.0f; }

__global__ void grid_constant(const __grid_constant__ int4 cfg, int* out) {
    out[threadIdx.x] = cfg.x + cfg.y * cfg.z - cfg.w;
}

template __global__ void transpose<float, 32>(const float*, float*, int, int);
template __global__ void transpose<double, 16>(const double*, double*, int, int);
template __global__ void transpose<__half, 32>(const __half*, __half*, int, int);
template __global__ void block_sum<float>(const float*, float*, int);
template __global__ void block_sum<double>(const double*, double*, int);
template __global__ void block_sum<int>(const int*, int*, int);
template __global__ void block_sum<unsigned long long>(const unsigned long long*,
                                                        unsigned long long*, int);
