/* A stand-in for NVIDIA's libnvJitLink.so.13 (built as that file name by
 * test/runtime/test_jit_libraries.py): it links nothing and hands out bytes
 * no driver loads, as NVIDIA's does for our driver (a cubin). Under `zmlir
 * run` a program that loads it with dlopen must never reach these. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const char kCubin[] = "\177ELF: NVIDIA machine code, not ours";

int nvJitLinkCreate(void **handle, uint32_t n, const char **options) {
  (void)n, (void)options;
  *handle = (void *)1;
  return 0;
}
int nvJitLinkDestroy(void **handle) {
  *handle = NULL;
  return 0;
}
int nvJitLinkAddData(void *h, int type, const void *data, size_t size, const char *name) {
  (void)h, (void)type, (void)data, (void)size, (void)name;
  return 0;
}
int nvJitLinkComplete(void *h) {
  (void)h;
  return 0;
}
int nvJitLinkGetLinkedCubinSize(void *h, size_t *size) {
  (void)h;
  *size = sizeof kCubin;
  return 0;
}
int nvJitLinkGetLinkedCubin(void *h, void *out) {
  (void)h;
  memcpy(out, kCubin, sizeof kCubin);
  return 0;
}
int nvJitLinkGetErrorLogSize(void *h, size_t *size) {
  (void)h;
  *size = 1;
  return 0;
}
int nvJitLinkGetErrorLog(void *h, char *log) {
  (void)h;
  *log = 0;
  return 0;
}
int nvJitLinkVersion(unsigned *major, unsigned *minor) {
  *major = 13;
  *minor = 0;
  return 0;
}
