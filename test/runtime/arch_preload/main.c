/* Prints the compute capability each library of test_arch_preload.py is
 * told, and the program's own. */
#include <stdio.h>

void per_arch_compute_capability(int *major, int *minor);
void mixed_compute_capability(int *major, int *minor);
int cudaDeviceGetAttribute(int *value, int attribute, int device);

int main(void) {
  int major = 0, minor = 0;
  per_arch_compute_capability(&major, &minor);
  printf("per-arch library: %d.%d\n", major, minor);
  mixed_compute_capability(&major, &minor);
  printf("mixed library: %d.%d\n", major, minor);
  cudaDeviceGetAttribute(&major, 75, 0);
  cudaDeviceGetAttribute(&minor, 76, 0);
  printf("program: %d.%d\n", major, minor);
  return 0;
}
