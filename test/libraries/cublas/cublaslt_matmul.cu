// cuBLASLt through our libcublasLt.so.13, as llm.c calls it: D = epilogue(
// op(A) op(B) + bias) with the BIAS, GELU and GELU_AUX_BIAS epilogues, in f32
// and bf16, batched; each checked against a host reference. Prints "PASS
// <case>" or "FAIL <case>: <why>"; exits non-zero on any failure.
// `--nvidia`: on NVIDIA's cuBLASLt (natively, or through the passthrough),
// which has algorithms for the epilogues ours refuses.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "../check.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>

static int failures = 0;

static float frand(unsigned &state) {
  state = state * 1664525u + 1013904223u;
  return ((state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static double gelu(double x) {
  return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

static double value(float v) {
  return v;
}
static double value(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
struct Case {
  const char *name;
  cudaDataType type;
  cublasLtEpilogue_t epilogue;
  int batch;
  double tol;
};

// llm.c's forward matmul: out (OC x BT) = W^T (OC x C) inp (C x BT) + bias.
template <typename T>
static void run(cublasLtHandle_t lt, const Case<T> &c) {
  const int C = 48, OC = 40, BT = 24, batch = c.batch;
  unsigned seed = 1;
  std::vector<T> w((size_t)C * OC * batch), inp((size_t)C * BT * batch), bias(OC);
  for (auto &v : w)
    v = (T)frand(seed);
  for (auto &v : inp)
    v = (T)frand(seed);
  for (auto &v : bias)
    v = (T)frand(seed);
  T *dw, *dinp, *dbias, *dout, *daux;
  size_t out_elems = (size_t)OC * BT * batch;
  CHECK(cudaMalloc(&dw, w.size() * sizeof(T)));
  CHECK(cudaMalloc(&dinp, inp.size() * sizeof(T)));
  CHECK(cudaMalloc(&dbias, bias.size() * sizeof(T)));
  CHECK(cudaMalloc(&dout, out_elems * sizeof(T)));
  CHECK(cudaMalloc(&daux, out_elems * sizeof(T)));
  CHECK(cudaMemcpy(dw, w.data(), w.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dinp, inp.data(), inp.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dbias, bias.data(), bias.size() * sizeof(T), cudaMemcpyHostToDevice));

  bool has_bias = c.epilogue == CUBLASLT_EPILOGUE_BIAS ||
                  c.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS ||
                  c.epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  bool has_gelu = c.epilogue == CUBLASLT_EPILOGUE_GELU ||
                  c.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS ||
                  c.epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  bool has_aux = c.epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n));
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &c.epilogue,
                                       sizeof c.epilogue));
  // Bias and aux attributes only for an epilogue that has them: NVIDIA's
  // cublasLtMatmul refuses a bias pointer with EPILOGUE_DEFAULT (H200).
  if (has_bias)
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias,
                                         sizeof dbias));
  if (has_aux) {
    int64_t ld = OC;
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld,
                                         sizeof ld));
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &daux,
                                         sizeof daux));
    int64_t aux_stride = (int64_t)OC * BT;
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE,
                                         &aux_stride, sizeof aux_stride));
  }
  // A wrong size is refused, as NVIDIA's does.
  int small = 0;
  bool refused = cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &small,
                                                sizeof small) == CUBLAS_STATUS_INVALID_VALUE;

  cublasLtMatrixLayout_t la, lb, lc;
  CHECK(cublasLtMatrixLayoutCreate(&la, c.type, C, OC, C));
  CHECK(cublasLtMatrixLayoutCreate(&lb, c.type, C, BT, C));
  CHECK(cublasLtMatrixLayoutCreate(&lc, c.type, OC, BT, OC));
  if (batch > 1) {
    int64_t sa = (int64_t)C * OC, sb = (int64_t)C * BT, sc = (int64_t)OC * BT;
    cublasLtMatrixLayout_t all[] = {la, lb, lc};
    int64_t strides[] = {sa, sb, sc};
    for (int i = 0; i < 3; ++i) {
      CHECK(cublasLtMatrixLayoutSetAttribute(all[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                             sizeof batch));
      CHECK(cublasLtMatrixLayoutSetAttribute(all[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &strides[i], sizeof strides[i]));
    }
  }
  cublasLtMatmulPreference_t pref;
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  size_t workspace = 1 << 20;
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace, sizeof workspace));
  cublasLtMatmulHeuristicResult_t heuristic;
  int found = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &heuristic, &found));
  if (found != 1) {
    printf("FAIL %s: no algorithm\n", c.name);
    ++failures;
    return;
  }
  void *dworkspace;
  CHECK(cudaMalloc(&dworkspace, workspace));
  float alpha = 1, beta = 0;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  bool bias_refused = true;
  if (!has_bias) {  // a bias pointer with an epilogue that adds none: INVALID_VALUE
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias,
                                         sizeof dbias));
    bias_refused = cublasLtMatmul(lt, desc, &alpha, dw, la, dinp, lb, &beta, dout, lc, dout, lc,
                                  &heuristic.algo, dworkspace, workspace,
                                  stream) == CUBLAS_STATUS_INVALID_VALUE;
    void *none = nullptr;
    CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &none,
                                         sizeof none));
  }
  CHECK(cublasLtMatmul(lt, desc, &alpha, dw, la, dinp, lb, &beta, dout, lc, dout, lc,
                       &heuristic.algo, dworkspace, workspace, stream));
  CHECK(cudaStreamSynchronize(stream));
  std::vector<T> out(out_elems), aux(out_elems);
  CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(aux.data(), daux, aux.size() * sizeof(T), cudaMemcpyDeviceToHost));

  bool ok = refused && bias_refused;
  char why[256] = "a wrong attribute size was accepted";
  if (!bias_refused)
    snprintf(why, sizeof why, "a bias pointer with a bias-less epilogue was accepted");
  for (int b = 0; b < batch && ok; ++b)
    for (int j = 0; j < BT && ok; ++j)
      for (int i = 0; i < OC && ok; ++i) {
        double pre = has_bias ? value(bias[i]) : 0;
        for (int k = 0; k < C; ++k)
          pre += value(w[(size_t)b * C * OC + (size_t)i * C + k]) *
                 value(inp[(size_t)b * C * BT + (size_t)j * C + k]);
        double want = has_gelu ? gelu(pre) : pre;
        size_t at = (size_t)b * OC * BT + (size_t)j * OC + i;
        if (fabs(value(out[at]) - want) > c.tol * (1 + fabs(want))) {
          snprintf(why, sizeof why, "out[%zu] = %g, want %g", at, value(out[at]), want);
          ok = false;
        } else if (has_aux && fabs(value(aux[at]) - pre) > c.tol * (1 + fabs(pre))) {
          snprintf(why, sizeof why, "aux[%zu] = %g, want %g", at, value(aux[at]), pre);
          ok = false;
        }
      }
  if (ok)
    printf("PASS %s\n", c.name);
  else {
    printf("FAIL %s: %s\n", c.name, why);
    ++failures;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(dw), cudaFree(dinp), cudaFree(dbias), cudaFree(dout), cudaFree(daux),
      cudaFree(dworkspace);
  cudaStreamDestroy(stream);
}

int main(int argc, char **argv) {
  const bool nvidia = argc > 1 && strcmp(argv[1], "--nvidia") == 0;
  cublasLtHandle_t lt;
  CHECK(cublasLtCreate(&lt));
  run(lt, Case<float>{"f32 default", CUDA_R_32F, CUBLASLT_EPILOGUE_DEFAULT, 1, 1e-5});
  run(lt, Case<float>{"f32 bias", CUDA_R_32F, CUBLASLT_EPILOGUE_BIAS, 1, 1e-5});
  run(lt, Case<float>{"f32 gelu", CUDA_R_32F, CUBLASLT_EPILOGUE_GELU, 1, 1e-5});
  run(lt, Case<float>{"f32 gelu_aux_bias batched", CUDA_R_32F, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, 3,
                      1e-5});
  run(lt, Case<__nv_bfloat16>{"bf16 gelu_aux_bias", CUDA_R_16BF, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, 1,
                              2e-2});
  run(lt, Case<__nv_bfloat16>{"bf16 bias batched", CUDA_R_16BF, CUBLASLT_EPILOGUE_BIAS, 2, 2e-2});
  // An epilogue we do not compute is refused, not computed wrongly (NVIDIA's
  // has an algorithm for it).
  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtEpilogue_t dgelu = CUBLASLT_EPILOGUE_DGELU;
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &dgelu, sizeof dgelu));
  cublasLtMatrixLayout_t l;
  CHECK(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 4, 4, 4));
  cublasLtMatmulPreference_t pref;
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t result;
  int found = -1;
  cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt, desc, l, l, l, l, pref, 1, &result, &found);
  if (nvidia ? s == CUBLAS_STATUS_SUCCESS && found == 1
             : s == CUBLAS_STATUS_NOT_SUPPORTED && found == 0)
    printf("PASS unsupported epilogue\n");
  else {
    printf("FAIL unsupported epilogue: status %d, %d found\n", s, found);
    ++failures;
  }
  CHECK(cublasLtDestroy(lt));
  printf("%d failed\n", failures);
  return failures != 0;
}
