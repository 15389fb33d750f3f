// cublasSgemm's GFLOP/s: `cublas_sgemm N REPS` prints "sgemm N GFLOPS" for the
// best of REPS square N x N products (bench/blas_sgemm.py runs it).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024, reps = argc > 2 ? atoi(argv[2]) : 5;
  std::vector<float> host((size_t)n * n);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = (float)(i % 17) / 17.0f;
  float *a, *b, *c;
  size_t bytes = host.size() * sizeof(float);
  if (cudaMalloc(&a, bytes) || cudaMalloc(&b, bytes) || cudaMalloc(&c, bytes))
    return 1;
  cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(b, host.data(), bytes, cudaMemcpyHostToDevice);
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
    return 1;
  float alpha = 1, beta = 0;
  double best = 1e30;
  for (int r = 0; r <= reps; ++r) { // the first is a warm-up
    auto start = std::chrono::steady_clock::now();
    if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n))
      return 1;
    cudaDeviceSynchronize();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0 && s < best)
      best = s;
  }
  printf("sgemm %d %.2f\n", n, 2.0 * n * n * n / best / 1e9);
  cublasDestroy(h);
  return 0;
}
