/* The host FFT libraries called directly, on the cases of cufft_cases.h:
 * oneMKL's DFTI (as our libcufft calls it), and FFTW3 when built with
 * -DWITH_FFTW (ESTIMATE and MEASURE plans). Prints "<library> <case> <plan
 * ms> <ms per transform>", best of rounds of `reps` transforms. */
#include <mkl_dfti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef WITH_FFTW
#include <fftw3.h>
#endif

#include "cufft_cases.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int reps = 10, rounds = 3;

#define TIME_BEST(best, CALL)                                                                      \
  do {                                                                                             \
    best = 1e30;                                                                                   \
    for (int round_ = 0; round_ <= rounds; ++round_) {                                             \
      double start_ = now_ms();                                                                    \
      for (int r_ = 0; r_ < reps; ++r_)                                                            \
        CALL;                                                                                      \
      double each_ = (now_ms() - start_) / reps;                                                   \
      if (round_ && each_ < best)                                                                  \
        best = each_;                                                                              \
    }                                                                                              \
  } while (0)

static void mkl(const struct fft_case *c, float *in, float *out) {
  DFTI_DESCRIPTOR_HANDLE d;
  MKL_LONG n[2] = {c->n[0], c->n[1]};
  double start = now_ms();
  enum DFTI_CONFIG_VALUE domain = c->real ? DFTI_REAL : DFTI_COMPLEX;
  if (c->rank == 1)
    DftiCreateDescriptor(&d, DFTI_SINGLE, domain, 1, n[0]);
  else
    DftiCreateDescriptor(&d, DFTI_SINGLE, domain, 2, n);
  DftiSetValue(d, DFTI_PLACEMENT, DFTI_NOT_INPLACE);
  DftiSetValue(d, DFTI_CONJUGATE_EVEN_STORAGE, DFTI_COMPLEX_COMPLEX);
  DftiSetValue(d, DFTI_NUMBER_OF_TRANSFORMS, (MKL_LONG)c->batch);
  long long per = fft_case_points(c) / c->batch, last = c->n[c->rank - 1];
  if (c->real) {
    MKL_LONG fwd[3] = {0, c->rank > 1 ? last : 1, 1},
             bwd[3] = {0, c->rank > 1 ? last / 2 + 1 : 1, 1};
    DftiSetValue(d, DFTI_FWD_STRIDES, fwd);
    DftiSetValue(d, DFTI_BWD_STRIDES, bwd);
  }
  if (c->batch > 1) {
    DftiSetValue(d, DFTI_FWD_DISTANCE, (MKL_LONG)per);
    DftiSetValue(d, DFTI_BWD_DISTANCE, (MKL_LONG)(c->real ? per / last * (last / 2 + 1) : per));
  }
  if (DftiCommitDescriptor(d) != DFTI_NO_ERROR)
    exit(1);
  double planned = now_ms() - start, best;
  TIME_BEST(best, DftiComputeForward(d, in, out));
  printf("mkl %s %.2f %.3f\n", c->name, planned, best);
  DftiFreeDescriptor(&d);
}

#ifdef WITH_FFTW
static void fftw(const struct fft_case *c, float *in, float *out, unsigned flags,
                 const char *name) {
  int n[2] = {c->n[0], c->n[1]};
  long long per = fft_case_points(c) / c->batch;
  double start = now_ms();
  fftwf_plan p = c->real
                     ? fftwf_plan_many_dft_r2c(
                           c->rank, n, c->batch, in, NULL, 1, (int)per, (fftwf_complex *)out, NULL,
                           1, (int)(per / n[c->rank - 1] * (n[c->rank - 1] / 2 + 1)), flags)
                     : fftwf_plan_many_dft(c->rank, n, c->batch, (fftwf_complex *)in, NULL, 1,
                                           (int)per, (fftwf_complex *)out, NULL, 1, (int)per,
                                           FFTW_FORWARD, flags);
  double planned = now_ms() - start, best;
  TIME_BEST(best, fftwf_execute(p));
  printf("%s %s %.2f %.3f\n", name, c->name, planned, best);
  fftwf_destroy_plan(p);
}
#endif

int main(int argc, char **argv) {
  reps = argc > 1 ? atoi(argv[1]) : 10;
  rounds = argc > 2 ? atoi(argv[2]) : 3;
  for (int i = 0; i < FFT_CASES; ++i) {
    const struct fft_case *c = &fft_cases[i];
    size_t bytes = fft_case_points(c) * 2 * sizeof(float);
    float *in = aligned_alloc(64, bytes), *out = aligned_alloc(64, bytes);
    memset(in, 0, bytes);
    memset(out, 0, bytes);
    mkl(c, in, out);
#ifdef WITH_FFTW
    fftw(c, in, out, FFTW_ESTIMATE, "fftw_estimate");
    fftw(c, in, out, FFTW_MEASURE, "fftw_measure");
#endif
    free(in);
    free(out);
  }
  return 0;
}
