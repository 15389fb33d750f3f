/* The compute capability a library that picks machine code per architecture
 * is told, under zmlir.
 *
 * Some of NVIDIA's libraries keep each kernel as separate images, one of
 * machine code (SASS) per architecture they know and one of PTX, and choose
 * among them with the compute capability they ask cudart for. libcurand 10
 * is one: for a device it has machine code for (ours reports 8.9, which its
 * sm_86 SASS runs on) it loads an image with nothing but that SASS, which
 * nothing but an NVIDIA GPU runs; for an architecture it does not know it loads its PTX, with the
 * host-side plan it made for that path. The two images of a kernel share
 * their name and parameters with hundreds of others, so the driver cannot
 * tell which PTX an image of SASS stands for (docs/driver-differences.md).
 *
 * `zmlir run` preloads this cudaDeviceGetAttribute. When the object that
 * calls it asks for the compute capability and holds both an image of SASS
 * alone that the architecture the driver reports would run (its major, not
 * newer: libcurand has sm_86 for our 8.9) and an image of PTX alone,
 * it is told an architecture it has no machine code for: the reported major
 * and the smallest minor it has no SASS for (libcurand: 8.1), so that it
 * takes its own path for an unknown GPU, NVIDIA's PTX and NVIDIA's plan for
 * it. Every other caller gets cudart's answer. If such a library maps the
 * answer to machine code all the same, its load fails as before
 * (CUDA_ERROR_NO_BINARY_FOR_GPU), never silently.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit_preload.h"

enum {
  ATTR_MAJOR = 75, /* cudaDevAttrComputeCapabilityMajor */
  ATTR_MINOR = 76,
  CUDA_ERROR_UNKNOWN = 999, /* cudaErrorUnknown */
  FATBIN_MAGIC = 0xBA55ED50,
  KIND_PTX = 1,
  KIND_ELF = 2,
  MAX_OBJECTS = 32,
};

typedef int (*attribute_fn)(int *, int, int);

int cudaDeviceGetAttribute(int *value, int attribute, int device);

/* What one calling object holds (fatbin.py parses the same headers). */
struct holdings {
  uintptr_t base;          /* dli_fbase */
  int sass_only_usable;    /* an image without PTX whose SASS the reported SM runs */
  int ptx_only;            /* an image with PTX alone */
  unsigned char sass[256]; /* sass[sm]: some image has SASS for sm_<sm> */
};

static struct holdings objects[MAX_OBJECTS];
static int object_count;
static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;

struct scan {
  uintptr_t base;
  int reported_sm;
  struct holdings *into;
};

static uint16_t u16(const unsigned char *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint32_t u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint64_t u64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* One fatbin at `p` (at most `room` bytes): its entries' kinds and SMs. */
static void classify(const unsigned char *p, size_t room, int reported_sm, struct holdings *h) {
  if (room < 16 || u16(p + 4) != 1)
    return;
  uint64_t header = u16(p + 6), end = header + u64(p + 8);
  if (header < 16 || end > room)
    return;
  int ptx = 0, elf = 0, elf_usable = 0;
  unsigned char sass[256] = {0};
  for (uint64_t at = header; at + 64 <= end;) {
    const unsigned char *e = p + at;
    uint16_t kind = u16(e);
    uint32_t entry_header = u32(e + 4), padded = u32(e + 8), payload = u32(e + 16);
    uint32_t sm = u32(e + 28);
    if (entry_header < 64 || (kind != KIND_PTX && kind != KIND_ELF))
      return; /* not a fatbin after all: ignore it whole */
    if (kind == KIND_PTX) {
      ptx = 1;
    } else {
      elf = 1;
      /* What the library may pick for the reported SM: SASS of its major,
       * not newer (sm_86 for 8.9). */
      elf_usable |= (int)sm / 10 == reported_sm / 10 && (int)sm <= reported_sm;
      if (sm < 256)
        sass[sm] = 1;
    }
    at += entry_header + (padded > payload ? padded : payload);
  }
  if (ptx && !elf)
    h->ptx_only = 1;
  if (elf_usable && !ptx)
    h->sass_only_usable = 1;
  for (int i = 0; i < 256; ++i)
    h->sass[i] |= sass[i];
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct scan *s = data;
  /* dladdr's dli_fbase is where the object's first segment is mapped. */
  uintptr_t first = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < first)
      first = info->dlpi_phdr[i].p_vaddr;
  if (first == UINTPTR_MAX || info->dlpi_addr + (first & ~(uintptr_t)0xfff) != s->base)
    return 0;
  const uint32_t magic = FATBIN_MAGIC;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
      continue;
    const unsigned char *start = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    size_t length = ph->p_filesz; /* what the file holds: fatbins are never .bss */
    for (const unsigned char *p = start; p + 16 <= start + length;) {
      p = memmem(p, (size_t)(start + length - p), &magic, sizeof magic);
      if (p == NULL)
        break;
      classify(p, (size_t)(start + length - p), s->reported_sm, s->into);
      p += 8;
    }
  }
  return 1;
}

/* The holdings of the object at `base`, scanned at its first question. */
static struct holdings *holdings_of(uintptr_t base, int reported_sm) {
  pthread_mutex_lock(&objects_lock);
  struct holdings *found = NULL;
  for (int i = 0; i < object_count && !found; ++i)
    if (objects[i].base == base)
      found = &objects[i];
  if (!found && object_count < MAX_OBJECTS) {
    found = &objects[object_count++];
    memset(found, 0, sizeof *found);
    found->base = base;
    struct scan s = {base, reported_sm, found};
    dl_iterate_phdr(scan_object, &s);
  }
  pthread_mutex_unlock(&objects_lock);
  return found;
}

/* cudart's cudaDeviceGetAttribute as the caller would have reached it: the
 * next definition after ours, or, where cudart is not in the global scope
 * (a Python extension's dependency, loaded RTLD_LOCAL), the caller's own. */
static attribute_fn real_attribute(const Dl_info *caller) {
  attribute_fn ours = (attribute_fn)&cudaDeviceGetAttribute;
  attribute_fn next = (attribute_fn)zmlir_real_dlsym(RTLD_NEXT, "cudaDeviceGetAttribute");
  if (next && next != ours)
    return next;
  if (caller == NULL || caller->dli_fname == NULL)
    return NULL;
  void *handle = dlopen(caller->dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == NULL)
    return NULL;
  next = (attribute_fn)zmlir_real_dlsym(handle, "cudaDeviceGetAttribute");
  dlclose(handle);
  return next != ours ? next : NULL;
}

int cudaDeviceGetAttribute(int *value, int attribute, int device) {
  void *return_address = __builtin_extract_return_addr(__builtin_return_address(0));
  Dl_info caller;
  int known = dladdr(return_address, &caller) != 0;
  attribute_fn real = real_attribute(known ? &caller : NULL);
  if (real == NULL)
    return CUDA_ERROR_UNKNOWN;
  int result = real(value, attribute, device);
  if (result != 0 || value == NULL || !known ||
      (attribute != ATTR_MAJOR && attribute != ATTR_MINOR))
    return result;
  int major = 0, minor = 0;
  if (real(&major, ATTR_MAJOR, device) != 0 || real(&minor, ATTR_MINOR, device) != 0)
    return result;
  struct holdings *h = holdings_of((uintptr_t)caller.dli_fbase, major * 10 + minor);
  if (h == NULL || !h->sass_only_usable || !h->ptx_only)
    return result;
  int unknown_minor = 0;
  for (int m = 1; m <= 9 && !unknown_minor; ++m)
    if (major * 10 + m < 256 && !h->sass[major * 10 + m])
      unknown_minor = m;
  if (!unknown_minor)
    return result;
  static int said;
  if (attribute == ATTR_MINOR && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) &&
      getenv("ZMLIR_LOG"))
    fprintf(stderr,
            "zmlir: %s keeps machine code an sm_%d device runs in images without PTX and "
            "its PTX apart: told compute capability %d.%d (it has no machine code for it) "
            "so that it takes its PTX path\n",
            caller.dli_fname, major * 10 + minor, major, unknown_minor);
  if (attribute == ATTR_MINOR)
    *value = unknown_minor;
  return result;
}
