// One cuBLAS call through whichever libcublas.so.13 is loaded, for
// bench/nvidia_libraries_sweep.py: reads A, B and C (raw, column-major, with
// the leading dimensions given) from DIR/a.bin, b.bin, c.bin, makes the call
// and writes the buffer it writes (C; B for trsm; a scalar for dot, nrm2 and
// iamax) to DIR/out.bin. Usage:
//   nvidia_blas_check OP TYPE DIR M N K TA TB LDA LDB LDC BATCH SA SB SC
// OP: gemm, gemm_batched (strided, strides SA SB SC), gemv, trsm, syrk, dot,
// nrm2, iamax, axpy. TYPE: s d c z (cublas<t>...), h bf tf (gemmEx: half or
// bfloat16 inputs, float C; tf: float with CUBLAS_COMPUTE_32F_FAST_TF32).
// alpha = 1.5, beta = 0.5 (0 for trsm). Exits 2 on a cuBLAS or CUDA error.
#include <cublas_v2.h>
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static void check(int code, const char *what) {
  if (code) {
    printf("error %d in %s\n", code, what);
    exit(2);
  }
}

static std::vector<char> slurp(const std::string &path) {
  std::vector<char> v;
  FILE *f = fopen(path.c_str(), "rb");
  if (!f) return v;
  fseek(f, 0, SEEK_END);
  v.resize(ftell(f));
  fseek(f, 0, SEEK_SET);
  if (fread(v.data(), 1, v.size(), f) != v.size()) v.clear();
  fclose(f);
  return v;
}

static void *upload(const std::vector<char> &h) {
  void *d = nullptr;
  check(cudaMalloc(&d, h.size() ? h.size() : 16), "cudaMalloc");
  if (h.size()) check(cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

int main(int argc, char **argv) {
  if (argc < 16) return 1;
  std::string op = argv[1], type = argv[2], dir = argv[3];
  int m = atoi(argv[4]), n = atoi(argv[5]), k = atoi(argv[6]);
  cublasOperation_t ta = argv[7][0] == 't' ? CUBLAS_OP_T : argv[7][0] == 'c' ? CUBLAS_OP_C : CUBLAS_OP_N;
  cublasOperation_t tb = argv[8][0] == 't' ? CUBLAS_OP_T : argv[8][0] == 'c' ? CUBLAS_OP_C : CUBLAS_OP_N;
  int lda = atoi(argv[9]), ldb = atoi(argv[10]), ldc = atoi(argv[11]), batch = atoi(argv[12]);
  long long sa = atoll(argv[13]), sb = atoll(argv[14]), sc = atoll(argv[15]);
  std::vector<char> ha = slurp(dir + "/a.bin"), hb = slurp(dir + "/b.bin"), hc = slurp(dir + "/c.bin");
  void *a = upload(ha), *b = upload(hb), *c = upload(hc);
  cublasHandle_t h;
  check(cublasCreate(&h), "cublasCreate");
  float fa = 1.5f, fb = 0.5f;
  double da = 1.5, db = 0.5;
  cuComplex ca = {1.5f, -0.25f}, cb = {0.5f, 0.125f};
  cuDoubleComplex za = {1.5, -0.25}, zb = {0.5, 0.125};
  bool s = type == "s", d = type == "d", cc = type == "c", z = type == "z";
  std::vector<char> scalar(16, 0);
  void *out = c;
  size_t out_bytes = hc.size();
  int r = -1;
  if (op == "gemm" && (type == "h" || type == "bf" || type == "tf")) {
    cudaDataType in = type == "h" ? CUDA_R_16F : type == "bf" ? CUDA_R_16BF : CUDA_R_32F;
    cublasComputeType_t ct = type == "tf" ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    r = cublasGemmEx(h, ta, tb, m, n, k, &fa, a, in, lda, b, in, ldb, &fb, c, CUDA_R_32F, ldc, ct,
                     CUBLAS_GEMM_DEFAULT);
  } else if (op == "gemm") {
    if (s) r = cublasSgemm(h, ta, tb, m, n, k, &fa, (float *)a, lda, (float *)b, ldb, &fb, (float *)c, ldc);
    if (d) r = cublasDgemm(h, ta, tb, m, n, k, &da, (double *)a, lda, (double *)b, ldb, &db, (double *)c, ldc);
    if (cc) r = cublasCgemm(h, ta, tb, m, n, k, &ca, (cuComplex *)a, lda, (cuComplex *)b, ldb, &cb, (cuComplex *)c, ldc);
    if (z) r = cublasZgemm(h, ta, tb, m, n, k, &za, (cuDoubleComplex *)a, lda, (cuDoubleComplex *)b, ldb, &zb, (cuDoubleComplex *)c, ldc);
  } else if (op == "gemm_batched") {
    if (s) r = cublasSgemmStridedBatched(h, ta, tb, m, n, k, &fa, (float *)a, lda, sa, (float *)b, ldb, sb, &fb, (float *)c, ldc, sc, batch);
    if (d) r = cublasDgemmStridedBatched(h, ta, tb, m, n, k, &da, (double *)a, lda, sa, (double *)b, ldb, sb, &db, (double *)c, ldc, sc, batch);
    if (type == "h")
      r = cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, &fa, a, CUDA_R_16F, lda, sa, b, CUDA_R_16F, ldb, sb, &fb, c,
                                     CUDA_R_32F, ldc, sc, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else if (op == "gemv") { // y(C) = alpha op(A) x(B) + beta y, A m x n
    if (s) r = cublasSgemv(h, ta, m, n, &fa, (float *)a, lda, (float *)b, 1, &fb, (float *)c, 1);
    if (d) r = cublasDgemv(h, ta, m, n, &da, (double *)a, lda, (double *)b, 1, &db, (double *)c, 1);
  } else if (op == "trsm") { // op(A) X = alpha B, A m x m lower, B m x n
    out = b, out_bytes = hb.size();
    if (s) r = cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, ta, CUBLAS_DIAG_NON_UNIT, m, n, &fa, (float *)a, lda, (float *)b, ldb);
    if (d) r = cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, ta, CUBLAS_DIAG_NON_UNIT, m, n, &da, (double *)a, lda, (double *)b, ldb);
  } else if (op == "syrk") { // C = alpha op(A) op(A)^T + beta C, lower, n x n, k
    if (s) r = cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, ta, n, k, &fa, (float *)a, lda, &fb, (float *)c, ldc);
    if (d) r = cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, ta, n, k, &da, (double *)a, lda, &db, (double *)c, ldc);
  } else if (op == "axpy") { // C += alpha A, n
    if (s) r = cublasSaxpy(h, n, &fa, (float *)a, 1, (float *)c, 1);
    if (d) r = cublasDaxpy(h, n, &da, (double *)a, 1, (double *)c, 1);
  } else { // scalar results, host pointer mode
    out = nullptr, out_bytes = 16;
    if (op == "dot" && s) r = cublasSdot(h, n, (float *)a, 1, (float *)b, 1, (float *)scalar.data());
    if (op == "dot" && d) r = cublasDdot(h, n, (double *)a, 1, (double *)b, 1, (double *)scalar.data());
    if (op == "nrm2" && s) r = cublasSnrm2(h, n, (float *)a, 1, (float *)scalar.data());
    if (op == "nrm2" && d) r = cublasDnrm2(h, n, (double *)a, 1, (double *)scalar.data());
    if (op == "iamax" && s) r = cublasIsamax(h, n, (float *)a, 1, (int *)scalar.data());
    if (op == "iamax" && d) r = cublasIdamax(h, n, (double *)a, 1, (int *)scalar.data());
  }
  check(r, "cublas call");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  if (out) {
    scalar.resize(out_bytes);
    check(cudaMemcpy(scalar.data(), out, out_bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  FILE *f = fopen((dir + "/out.bin").c_str(), "wb");
  fwrite(scalar.data(), 1, out_bytes, f);
  fclose(f);
  cublasDestroy(h);
  printf("ok\n");
  return 0;
}
