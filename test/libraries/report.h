// What the library test programs (cublas/cublas_lu.cu, cublas/cublasxt_gemm.cu)
// print per case, and their inputs: one PASS or FAIL line per case (the
// program's exit status counts the failures), and a repeatable pseudo-random
// value in [-1, 1).
#ifndef ZMLIR_TEST_LIBRARIES_REPORT_H
#define ZMLIR_TEST_LIBRARIES_REPORT_H

#include <cstdio>
#include <string>

static int failures = 0;

static void report(const std::string &name, bool ok, const std::string &why = "") {
  if (ok) {
    printf("PASS %s\n", name.c_str());
  } else {
    printf("FAIL %s: %s\n", name.c_str(), why.c_str());
    ++failures;
  }
}

static double frand(unsigned &state) {
  state = state * 1664525u + 1013904223u;
  return ((state >> 8) & 0xffff) / 32768.0 - 1.0;
}

#endif
