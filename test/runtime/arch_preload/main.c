/* Prints the compute capability each library of test_arch_preload.py is
 * told, and the program's own (DRIVER: asked of the driver). */
#include <stdio.h>

void per_arch_compute_capability(int *major, int *minor);
void mixed_compute_capability(int *major, int *minor);
#ifdef DRIVER
int cuInit(unsigned flags);
int cuDeviceGetAttribute(int *value, int attribute, int device);
#define ask cuDeviceGetAttribute
#else
int cudaDeviceGetAttribute(int *value, int attribute, int device);
#define ask cudaDeviceGetAttribute
#endif

int main(void) {
  int major = 0, minor = 0;
#ifdef DRIVER
  if (cuInit(0) != 0)
    return 1;
#endif
  per_arch_compute_capability(&major, &minor);
  printf("per-arch library: %d.%d\n", major, minor);
  mixed_compute_capability(&major, &minor);
  printf("mixed library: %d.%d\n", major, minor);
  ask(&major, 75, 0);
  ask(&minor, 76, 0);
  printf("program: %d.%d\n", major, minor);
  return 0;
}
