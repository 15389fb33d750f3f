/* The transforms bench/cufft.py measures, shared by cufft_exec.cu (through
 * cuFFT) and host_fft.c (the host FFT libraries called directly). */
#ifndef ZMLIR_BENCH_CUFFT_CASES_H
#define ZMLIR_BENCH_CUFFT_CASES_H

struct fft_case {
  const char *name;
  int rank, n[2], batch;
  int real; /* R2C, else C2C; single precision, out of place, forward */
};

static const struct fft_case fft_cases[] = {
    {"c2c_1d_2^20", 1, {1 << 20, 0}, 1, 0},
    {"r2c_2d_1024x1024", 2, {1024, 1024}, 1, 1},
    {"c2c_1d_1000_batch1000", 1, {1000, 0}, 1000, 0},
};
#define FFT_CASES ((int)(sizeof fft_cases / sizeof *fft_cases))

static long long fft_case_points(const struct fft_case *c) {
  return (long long)c->n[0] * (c->rank > 1 ? c->n[1] : 1) * c->batch;
}

#endif
