// Atomics of every type and scope, fences, and libcu++ atomic_ref with
// explicit memory orders.
#include <cuda/atomic>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void int_atomics(int* i, unsigned* u, unsigned long long* ull, long long* ll) {
    int t = threadIdx.x;
    atomicAdd(i, t);
    atomicSub(i + 1, t);
    atomicExch(i + 2, t);
    atomicMin(i + 3, t);
    atomicMax(i + 4, t);
    atomicAnd(i + 5, t);
    atomicOr(i + 6, t);
    atomicXor(i + 7, t);
    atomicCAS(i + 8, t, t + 1);
    atomicInc(u, 17u);
    atomicDec(u + 1, 17u);
    atomicAdd(u + 2, 1u);
    atomicMin(u + 3, (unsigned)t);
    atomicAdd(ull, 1ull);
    atomicExch(ull + 1, 5ull);
    atomicCAS(ull + 2, 1ull, 2ull);
    atomicMin(ull + 3, (unsigned long long)t);
    atomicMax(ll, (long long)t);
    atomicMin(ll + 1, (long long)-t);
    atomicAnd(ull + 4, 0xffull);
    atomicOr(ull + 5, 0x100ull);
    atomicXor(ull + 6, 0x3ull);
    // The result is used, so these are atom rather than red.
    i[9] = atomicAdd(i + 10, 2) + atomicCAS(i + 11, 0, 1);
}

__global__ void float_atomics(float* f, double* d, __half* h, __half2* h2, __nv_bfloat16* b,
                              __nv_bfloat162* b2) {
    atomicAdd(f, 1.5f);
    atomicExch(f + 1, 2.5f);
    atomicAdd(d, 0.25);
    atomicAdd(h, __float2half(1.0f));
    atomicAdd(h2, __floats2half2_rn(1.0f, 2.0f));
#if __CUDA_ARCH__ >= 800
    atomicAdd(b, __float2bfloat16(1.0f));
    atomicAdd(b2, __floats2bfloat162_rn(1.0f, 2.0f));
#endif
}

__global__ void scoped_atomics(int* p, float* f, unsigned long long* u) {
    atomicAdd_block(p, 1);
    atomicAdd_system(p + 1, 1);
    atomicCAS_block(p + 2, 0, 1);
    atomicExch_system(p + 3, 7);
    atomicMax_block(p + 4, 3);
    atomicAdd_block(f, 1.0f);
    atomicAdd_system(f + 1, 1.0f);
    atomicOr_system(u, 1ull);
    __threadfence_block();
    __threadfence();
    __threadfence_system();
}

__global__ void shared_atomics(int* out) {
    __shared__ int s[32];
    __shared__ float sf;
    __shared__ unsigned long long su;
    if (threadIdx.x < 32) s[threadIdx.x] = 0;
    if (threadIdx.x == 0) { sf = 0; su = 0; }
    __syncthreads();
    atomicAdd(&s[threadIdx.x % 32], 1);
    atomicAdd(&sf, 0.5f);
    atomicCAS(&su, 0ull, 1ull);
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x % 32] + (int)sf + (int)su;
}

__global__ void ordered_atomics(int* flag, int* data, long long* counter) {
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    cuda::atomic_ref<int, cuda::thread_scope_block> d(*data);
    cuda::atomic_ref<long long, cuda::thread_scope_system> c(*counter);
    if (threadIdx.x == 0) {
        d.store(42, cuda::memory_order_relaxed);
        f.store(1, cuda::memory_order_release);
    } else {
        while (f.load(cuda::memory_order_acquire) == 0) {
        }
    }
    c.fetch_add(1, cuda::memory_order_acq_rel);
    c.fetch_sub(1, cuda::memory_order_seq_cst);
    int expected = 42;
    d.compare_exchange_strong(expected, 43, cuda::memory_order_acq_rel);
    d.fetch_max(50, cuda::memory_order_relaxed);
    d.exchange(7, cuda::memory_order_release);
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
}
