// Shared by the adversarial programs: a failed check says its line and what
// NVIDIA answers, counts in `failures` and the program goes on.
#pragma once
#include <cstdio>
#include <cuda.h>

static int failures = 0;
#define EXPECT_CU(call, want)                                                                  \
  do {                                                                                         \
    CUresult r_ = (call);                                                                      \
    if (r_ != (want)) {                                                                        \
      std::fprintf(stderr, "FAIL line %d: %s returned %d, NVIDIA returns %d\n", __LINE__,     \
                   #call, (int)r_, (int)(want));                                               \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)
#define EXPECT(cond)                                                                           \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "FAIL line %d: %s\n", __LINE__, #cond);                             \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)
