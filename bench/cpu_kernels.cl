// bench/cpu_kernels.cu's kernels as OpenCL C, the baseline bench/cpu_kernels.py
// builds with the same Intel runtime (clCreateProgramWithSource) and launches
// with the same global and local sizes. Each line does what the CUDA line
// does: CUDA's blockIdx/threadIdx are get_group_id/get_local_id, __shared__ is
// __local, __syncthreads() is barrier(CLK_LOCAL_MEM_FENCE), and a warp's
// __shfl_down_sync is a 32-wide sub-group's sub_group_shuffle_down.

#define TILE 32
#define TILE_ROWS 8
#define GEMM_TILE 16
#define REDUCE_BLOCK 256

__kernel void copy_kernel(__global float *restrict dst, __global const float *restrict src, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n)
    dst[i] = src[i];
}

__kernel void triad_kernel(__global float *restrict a, __global const float *restrict b,
                           __global const float *restrict c, float s, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n)
    a[i] = b[i] + s * c[i];
}

// The same copy and triad in the forms Intel's runtime runs best, for the
// ceiling bench/cpu_kernels.py reports beside them (not CUDA's semantics):
// a size_t index (get_global_id: the vectorizer sees consecutive addresses;
// CUDA's and the kernels above' 32-bit `int` index, which may wrap, gathers
// and scatters), and a contiguous chunk per work-item (no per-work-item
// masks or work-group loop at all; a C loop per thread).
__kernel void copy_gid_kernel(__global float *restrict dst, __global const float *restrict src,
                              int n) {
  size_t i = get_global_id(0);
  if (i < n)
    dst[i] = src[i];
}

__kernel void triad_gid_kernel(__global float *restrict a, __global const float *restrict b,
                               __global const float *restrict c, float s, int n) {
  size_t i = get_global_id(0);
  if (i < n)
    a[i] = b[i] + s * c[i];
}

__kernel void copy_chunk_kernel(__global float *restrict dst, __global const float *restrict src,
                                int n) {
  size_t per = n / get_global_size(0), start = get_global_id(0) * per;
  for (size_t i = start; i < start + per; ++i)
    dst[i] = src[i];
}

__kernel void transpose_kernel(__global float *restrict out, __global const float *restrict in,
                               int n) {
  __local float tile[TILE][TILE + 1];
  int tx = get_local_id(0), ty = get_local_id(1);
  int x = get_group_id(0) * TILE + tx;
  int y = get_group_id(1) * TILE + ty;
  for (int j = 0; j < TILE; j += TILE_ROWS)
    tile[ty + j][tx] = in[(y + j) * n + x];
  barrier(CLK_LOCAL_MEM_FENCE);
  x = get_group_id(1) * TILE + tx;
  y = get_group_id(0) * TILE + ty;
  for (int j = 0; j < TILE; j += TILE_ROWS)
    out[(y + j) * n + x] = tile[tx][ty + j];
}

__kernel __attribute__((intel_reqd_sub_group_size(32))) void
reduce_kernel(__global float *restrict partial, __global const float *restrict in, int n) {
  __local float sums[REDUCE_BLOCK];
  int tid = get_local_id(0);
  int block = get_local_size(0);
  float sum = 0.0f;
  for (int i = get_group_id(0) * block + tid; i < n; i += get_num_groups(0) * block)
    sum += in[i];
  sums[tid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = block / 2; stride >= 32; stride /= 2) {
    if (tid < stride)
      sums[tid] = sum = sum + sums[tid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (tid < 32) {
    for (int offset = 16; offset > 0; offset /= 2)
      sum += sub_group_shuffle_down(sum, offset);
    if (tid == 0)
      partial[get_group_id(0)] = sum;
  }
}

__kernel void sgemm_kernel(__global float *restrict c, __global const float *restrict a,
                           __global const float *restrict b, int n) {
  __local float as[GEMM_TILE][GEMM_TILE];
  __local float bs[GEMM_TILE][GEMM_TILE];
  int tx = get_local_id(0), ty = get_local_id(1);
  int row = get_group_id(1) * GEMM_TILE + ty;
  int col = get_group_id(0) * GEMM_TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < n; t += GEMM_TILE) {
    as[ty][tx] = a[row * n + t + tx];
    bs[ty][tx] = b[(t + ty) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < GEMM_TILE; ++k)
      acc += as[ty][k] * bs[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[row * n + col] = acc;
}

inline float cnd(float d) {
  const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f,
              a5 = 1.330274429f, rsqrt2pi = 0.39894228040143267793994605993438f;
  float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
  float c = rsqrt2pi * exp(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
  return d > 0 ? 1.0f - c : c;
}

__kernel void blackscholes_kernel(__global float *restrict call, __global float *restrict put,
                                  __global const float *restrict price,
                                  __global const float *restrict strike,
                                  __global const float *restrict years, float riskfree,
                                  float volatility, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i >= n)
    return;
  float s = price[i], x = strike[i], t = years[i];
  float sqrt_t = sqrt(t);
  float d1 = (log(s / x) + (riskfree + 0.5f * volatility * volatility) * t) / (volatility * sqrt_t);
  float d2 = d1 - volatility * sqrt_t;
  float cnd1 = cnd(d1), cnd2 = cnd(d2);
  float exp_rt = exp(-riskfree * t);
  call[i] = s * cnd1 - x * exp_rt * cnd2;
  put[i] = x * exp_rt * (1.0f - cnd2) - s * (1.0f - cnd1);
}
