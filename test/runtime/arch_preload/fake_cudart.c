/* cudart's cudaDeviceGetAttribute for test_arch_preload.py: a compute
 * capability 8.0 device (the test's own: an 8.x that libraries keep SASS for). */
int cudaDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  *value = attribute == 75 ? 8 : attribute == 76 ? 0 : -1;
  return 0;
}
