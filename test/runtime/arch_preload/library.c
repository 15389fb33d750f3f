/* A library for test_arch_preload.py that asks cudart (DRIVER: the driver)
 * for the compute capability, holding the fatbins (headers only) that the
 * build names:
 * PER_ARCH: one image of sm_80 SASS alone and one of PTX alone, as
 * libcurand keeps its kernels; MIXED: one image of SASS and PTX, as nvcc
 * makes for -arch=sm_80. */
#include <stdint.h>

#ifdef DRIVER
int cuDeviceGetAttribute(int *value, int attribute, int device);
#define ask cuDeviceGetAttribute
#else
int cudaDeviceGetAttribute(int *value, int attribute, int device);
#define ask cudaDeviceGetAttribute
#endif

struct entry {
  uint16_t kind, unknown;
  uint32_t header, padded, unknown2, payload, unknown3, unknown4, sm;
  uint32_t rest[9];
  unsigned char data[16];
};
struct fatbin {
  uint32_t magic;
  uint16_t version, header;
  uint64_t files;
};
#define ENTRY(kind, sm) {kind, 0, 64, 16, 0, 16, 0, 0, sm, {0}, {0}}
#define FILES(n) (n * sizeof(struct entry))

#ifdef PER_ARCH
__attribute__((used, aligned(8))) static struct {
  struct fatbin h;
  struct entry e[1];
} sass = {{0xBA55ED50, 1, 16, FILES(1)}, {ENTRY(2, 80)}};
__attribute__((used, aligned(8))) static struct {
  struct fatbin h;
  struct entry e[1];
} ptx = {{0xBA55ED50, 1, 16, FILES(1)}, {ENTRY(1, 75)}};
#else
__attribute__((used, aligned(8))) static struct {
  struct fatbin h;
  struct entry e[2];
} both = {{0xBA55ED50, 1, 16, FILES(2)}, {ENTRY(2, 80), ENTRY(1, 80)}};
#endif

void compute_capability(int *major, int *minor) {
  ask(major, 75, 0);
  ask(minor, 76, 0);
}
