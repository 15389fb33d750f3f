// The check the library test programs (cublas/cublaslt_matmul.cu,
// cufft/cufft_api.cu) make of every call they need to succeed.
#ifndef ZMLIR_TEST_LIBRARIES_CHECK_H
#define ZMLIR_TEST_LIBRARIES_CHECK_H

#include <cstdio>
#include <cstdlib>

// Exits with 1, naming the call and its status, unless `x` (a CUDA runtime,
// cuBLASLt or cuFFT status) is 0, success in each.
#define CHECK(x)                                                                                   \
  do {                                                                                             \
    long long status_ = (long long)(x);                                                            \
    if (status_ != 0) {                                                                            \
      printf("FAIL %s:%d: %s -> %lld\n", __FILE__, __LINE__, #x, status_);                         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#endif
