// cuBLAS GEMM throughput: `cublas_sgemm N REPS [TYPE [CALLS]]` prints
// "<name> N GFLOPS" for the best of REPS rounds of CALLS (default 1) square
// N x N products issued back to back, then a synchronize. TYPE f32 (the
// default: cublasSgemm, "sgemm") or bf16 (cublasGemmEx, bf16 A, B and C,
// f32 compute: "gemmex_bf16"). bench/blas_sgemm.py runs the default;
// bench/h200_cublas.sh all of them, natively and through zmlir.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024, reps = argc > 2 ? atoi(argv[2]) : 5;
  bool bf16 = argc > 3 && strcmp(argv[3], "bf16") == 0;
  int calls = argc > 4 ? atoi(argv[4]) : 1;
  size_t count = (size_t)n * n, element = bf16 ? sizeof(__nv_bfloat16) : sizeof(float);
  std::vector<float> host(count);
  std::vector<__nv_bfloat16> host16(count);
  for (size_t i = 0; i < count; ++i) {
    host[i] = (float)(i % 17) / 17.0f;
    host16[i] = __float2bfloat16(host[i]);
  }
  const void *source = bf16 ? (const void *)host16.data() : (const void *)host.data();
  void *a, *b, *c;
  size_t bytes = count * element;
  if (cudaMalloc(&a, bytes) || cudaMalloc(&b, bytes) || cudaMalloc(&c, bytes))
    return 1;
  cudaMemcpy(a, source, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(b, source, bytes, cudaMemcpyHostToDevice);
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
    return 1;
  float alpha = 1, beta = 0;
  double best = 1e30;
  for (int r = 0; r <= reps; ++r) { // the first is a warm-up
    auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < calls; ++k) {
      cublasStatus_t status = bf16 ? cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a,
                                                  CUDA_R_16BF, n, b, CUDA_R_16BF, n, &beta, c,
                                                  CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                                  CUBLAS_GEMM_DEFAULT)
                                   : cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha,
                                                 (const float *)a, n, (const float *)b, n, &beta,
                                                 (float *)c, n);
      if (status != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "GEMM failed: %d\n", (int)status);
        return 1;
      }
    }
    if (cudaDeviceSynchronize() != cudaSuccess)
      return 1;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0 && s < best)
      best = s;
  }
  printf("%s %d %.2f\n", bf16 ? "gemmex_bf16" : "sgemm", n, 2.0 * n * n * n * calls / best / 1e9);
  cublasDestroy(h);
  return 0;
}
