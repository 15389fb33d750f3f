// One cuFFT transform through whichever libcufft.so.12 is loaded, for
// bench/nvidia_libraries_sweep.py: reads the input from argv[2] (raw bytes,
// the layout the plan reads), runs one cufftExec*, writes the output buffer
// to argv[3]. Usage:
//   nvidia_fft_check TYPE IN OUT DIR INPLACE BATCH RANK N0 [N1 [N2]]
//                    [ISTRIDE IDIST OSTRIDE ODIST]   (rank 1 only: PlanMany)
// TYPE: c2c r2c c2r z2z d2z z2d, and through cufftXtMakePlanMany c2c16
// r2c16 c2r16 (half) and c2cbf r2cbf c2rbf (bfloat16); DIR: -1 forward, 1
// inverse (complex to complex).
// Exits 2 on a cuFFT or CUDA error, after printing it.
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static void check(int code, const char *what) {
  if (code) {
    printf("error %d in %s\n", code, what);
    exit(2);
  }
}

int main(int argc, char **argv) {
  if (argc < 9) return 1;
  const char *type = argv[1];
  int dir = atoi(argv[4]), inplace = atoi(argv[5]), batch = atoi(argv[6]), rank = atoi(argv[7]);
  int n[3] = {1, 1, 1};
  for (int i = 0; i < rank; ++i) n[i] = atoi(argv[8 + i]);
  int strided = argc >= 8 + rank + 4;
  long long is = 1, idist = 0, os = 1, odist = 0;
  if (strided) {
    is = atoll(argv[8 + rank]);
    idist = atoll(argv[9 + rank]);
    os = atoll(argv[10 + rank]);
    odist = atoll(argv[11 + rank]);
  }
  cufftType t;
  size_t osz; // output element size
  if (!strcmp(type, "c2c")) t = CUFFT_C2C, osz = 8;
  else if (!strcmp(type, "r2c")) t = CUFFT_R2C, osz = 8;
  else if (!strcmp(type, "c2r")) t = CUFFT_C2R, osz = 4;
  else if (!strcmp(type, "z2z")) t = CUFFT_Z2Z, osz = 16;
  else if (!strcmp(type, "d2z")) t = CUFFT_D2Z, osz = 16;
  else if (!strcmp(type, "z2d")) t = CUFFT_Z2D, osz = 8;
  else if (!strncmp(type, "c2c", 3) || !strncmp(type, "r2c", 3) || !strncmp(type, "c2r", 3)) {
    t = (cufftType)-1, osz = type[2] == 'r' ? 2 : 4; // half or bfloat16, complex: 2 halves
  } else return 1;
  int xt = (int)t == -1, bf = xt && strstr(type, "bf") != NULL;
  cudaDataType real16 = bf ? CUDA_R_16BF : CUDA_R_16F, complex16 = bf ? CUDA_C_16BF : CUDA_C_16F;
  cudaDataType xin = type[0] == 'r' ? real16 : complex16, xout = type[2] == 'r' ? real16 : complex16;
  FILE *f = fopen(argv[2], "rb");
  if (!f) return 1;
  fseek(f, 0, SEEK_END);
  size_t in_bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  std::vector<char> host(in_bytes);
  if (fread(host.data(), 1, in_bytes, f) != in_bytes) return 1;
  fclose(f);
  // Output elements: the last dimension halved plus one for R2C/D2Z.
  long long last = n[rank - 1], inner = 1;
  for (int i = 0; i < rank - 1; ++i) inner *= n[i];
  long long out_last =
      (t == CUFFT_R2C || t == CUFFT_D2Z || (xt && type[0] == 'r')) ? last / 2 + 1 : last;
  long long real_out = inner * out_last;
  size_t out_bytes = strided ? (size_t)((batch - 1) * odist + (out_last - 1) * os + 1) * osz
                             : (size_t)(batch * real_out) * osz;
  size_t bytes = inplace ? (in_bytes > out_bytes ? in_bytes : out_bytes) : in_bytes;
  void *din, *dout;
  check(cudaMalloc(&din, bytes), "cudaMalloc");
  check(cudaMemset(din, 0, bytes), "cudaMemset");
  check(cudaMemcpy(din, host.data(), in_bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  if (inplace) dout = din;
  else {
    check(cudaMalloc(&dout, out_bytes), "cudaMalloc");
    check(cudaMemset(dout, 0, out_bytes), "cudaMemset");
  }
  cufftHandle plan;
  if (xt) {
    long long nn[3] = {n[0], n[1], n[2]};
    size_t work;
    check(cufftCreate(&plan), "cufftCreate");
    check(cufftXtMakePlanMany(plan, rank, nn, NULL, 1, 0, xin, NULL, 1, 0, xout, batch, &work,
                              complex16),
          "cufftXtMakePlanMany");
    check(cufftXtExec(plan, din, dout, dir), "cufftXtExec");
  } else if (strided) {
    int nn[1] = {n[0]}, inembed[1] = {n[0]}, onembed[1] = {n[0]};
    check(cufftPlanMany(&plan, 1, nn, inembed, (int)is, (int)idist, onembed, (int)os, (int)odist, t,
                        batch),
          "cufftPlanMany");
  } else if (rank == 1 || batch > 1) {
    check(cufftPlanMany(&plan, rank, n, NULL, 1, 0, NULL, 1, 0, t, batch), "cufftPlanMany");
  } else if (rank == 2) {
    check(cufftPlan2d(&plan, n[0], n[1], t), "cufftPlan2d");
  } else {
    check(cufftPlan3d(&plan, n[0], n[1], n[2], t), "cufftPlan3d");
  }
  int r = 0;
  switch (xt ? (cufftType)0 : t) {
  case (cufftType)0: break;
  case CUFFT_C2C: r = cufftExecC2C(plan, (cufftComplex *)din, (cufftComplex *)dout, dir); break;
  case CUFFT_R2C: r = cufftExecR2C(plan, (cufftReal *)din, (cufftComplex *)dout); break;
  case CUFFT_C2R: r = cufftExecC2R(plan, (cufftComplex *)din, (cufftReal *)dout); break;
  case CUFFT_Z2Z:
    r = cufftExecZ2Z(plan, (cufftDoubleComplex *)din, (cufftDoubleComplex *)dout, dir);
    break;
  case CUFFT_D2Z: r = cufftExecD2Z(plan, (cufftDoubleReal *)din, (cufftDoubleComplex *)dout); break;
  default: r = cufftExecZ2D(plan, (cufftDoubleComplex *)din, (cufftDoubleReal *)dout); break;
  }
  check(r, "cufftExec");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  if (inplace) out_bytes = bytes; // C2R in place: rows padded to 2 * (last / 2 + 1) reals
  std::vector<char> out(out_bytes);
  check(cudaMemcpy(out.data(), dout, out_bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  f = fopen(argv[3], "wb");
  fwrite(out.data(), 1, out_bytes, f);
  fclose(f);
  cufftDestroy(plan);
  printf("ok\n");
  return 0;
}
