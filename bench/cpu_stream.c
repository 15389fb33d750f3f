// The machine's copy bandwidth for bench/cpu_kernels.py: STREAM's copy
// (a = b) and triad (a = b + s*c) as C loops over N floats per array, on 1
// thread and on as many as the CPU has (OpenMP, static halves), each with
// ordinary stores (what a CUDA kernel's `dst[i] = src[i]` does: the
// destination's lines are read before they are written) and with
// non-temporal ones (what glibc's memcpy does for large copies: numpy's
// copy). Bytes counted as STREAM does: read + written, no write-allocate.
//
//   cpu_stream N REPS
//
// prints `STREAM kernel stores threads GB/s` per line, each the best of REPS
// timed runs after an untimed one.

#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__AVX512F__)
#define VEC 16
typedef __m512 vec;
#define LOAD _mm512_load_ps
#define STORE_NT _mm512_stream_ps
#define FMA(s, c, b) _mm512_fmadd_ps(s, c, b)
#define SET1 _mm512_set1_ps
#else
#define VEC 8
typedef __m256 vec;
#define LOAD _mm256_load_ps
#define STORE_NT _mm256_stream_ps
#define FMA(s, c, b) _mm256_add_ps(_mm256_mul_ps(s, c), b)
#define SET1 _mm256_set1_ps
#endif

enum { COPY, COPY_NT, TRIAD, TRIAD_NT, KINDS };
static const char *const kName[KINDS] = {"copy regular", "copy nontemporal", "triad regular",
                                         "triad nontemporal"};
static const double kBytes[KINDS] = {8, 8, 12, 12};

static void run(int kind, float *restrict a, const float *restrict b, const float *restrict c,
                long n, int threads) {
#pragma omp parallel num_threads(threads)
  {
    int id = omp_get_thread_num(), count = omp_get_num_threads();
    long lo = n * id / count / VEC * VEC, hi = n * (id + 1) / count / VEC * VEC;
    vec s = SET1(3.0f);
    switch (kind) {
    case COPY:
      for (long i = lo; i < hi; ++i)
        a[i] = b[i];
      break;
    case COPY_NT:
      for (long i = lo; i < hi; i += VEC)
        STORE_NT(a + i, LOAD(b + i));
      break;
    case TRIAD:
      for (long i = lo; i < hi; ++i)
        a[i] = b[i] + 3.0f * c[i];
      break;
    case TRIAD_NT:
      for (long i = lo; i < hi; i += VEC)
        STORE_NT(a + i, FMA(s, LOAD(c + i), LOAD(b + i)));
      break;
    }
    _mm_sfence();
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N REPS\n", argv[0]);
    return 2;
  }
  long n = atol(argv[1]) / VEC * VEC;
  int reps = atoi(argv[2]), cores = omp_get_num_procs();
  float *a = aligned_alloc(4096, n * sizeof(float)), *b = aligned_alloc(4096, n * sizeof(float)),
        *c = aligned_alloc(4096, n * sizeof(float));
  if (!a || !b || !c)
    return 1;
#pragma omp parallel for num_threads(cores) // first touch by the threads that use the pages
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
  for (int threads = 1; threads <= cores; threads = threads == cores ? cores + 1 : cores) {
    for (int kind = 0; kind < KINDS; ++kind) {
      double best = 1e30;
      for (int rep = 0; rep <= reps; ++rep) {
        double start = omp_get_wtime();
        run(kind, a, b, c, n, threads);
        double elapsed = omp_get_wtime() - start;
        if (rep && elapsed < best)
          best = elapsed;
      }
      printf("STREAM %s %d %.3f\n", kName[kind], threads, kBytes[kind] * n / best / 1e9);
    }
  }
  if (a[n - 1] != 1.0f + 3.0f * 2.0f) { // the last kind run: triad
    fprintf(stderr, "cpu_stream: wrong result %g\n", a[n - 1]);
    return 1;
  }
  return 0;
}
