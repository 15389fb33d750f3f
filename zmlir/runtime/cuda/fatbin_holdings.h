/* What a loaded object (a library, the program) holds of NVIDIA's fatbins:
 * whether it keeps machine code (SASS) and PTX in images apart, and for
 * which architectures it has SASS. Some of NVIDIA's libraries choose among
 * such images with the compute capability they are told; the two callers
 * that tell them another (arch_preload.c for cudart's callers, fastpath.c's
 * cuDeviceGetAttribute for the driver's) ask this. fatbin.py parses the same
 * headers.
 *
 * An object is read through its own ELF header at dladdr's dli_fbase, not
 * dl_iterate_phdr, which lists only the caller's link-map namespace (our
 * driver has one of its own: shim.c). Included by one file per library:
 * everything here is static. */
#ifndef ZMLIR_FATBIN_HOLDINGS_H
#define ZMLIR_FATBIN_HOLDINGS_H

/* memmem: the including file defines _GNU_SOURCE before any header. */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

enum {
  ZMLIR_FATBIN_MAGIC = 0xBA55ED50,
  ZMLIR_FATBIN_KIND_PTX = 1,
  ZMLIR_FATBIN_KIND_ELF = 2,
};

/* Apart from the magic, which makes its enum unsigned. */
enum { ZMLIR_HOLDINGS_OBJECTS = 32 };

struct zmlir_holdings {
  uintptr_t base;          /* dli_fbase */
  int sass_only_usable;    /* an image without PTX whose SASS the reported SM runs */
  int ptx_only;            /* an image with PTX alone */
  int ptx;                 /* an image with PTX, alone or beside SASS */
  unsigned char sass[256]; /* sass[sm]: some image has SASS for sm_<sm> */
};

static uint16_t zmlir_fatbin_u16(const unsigned char *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint32_t zmlir_fatbin_u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint64_t zmlir_fatbin_u64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* One fatbin at `p` (at most `room` bytes): its entries' kinds and SMs. */
static void zmlir_classify_fatbin(const unsigned char *p, size_t room, int reported_sm,
                                  struct zmlir_holdings *h) {
  if (room < 16 || zmlir_fatbin_u16(p + 4) != 1)
    return;
  uint64_t header = zmlir_fatbin_u16(p + 6), end = header + zmlir_fatbin_u64(p + 8);
  if (header < 16 || end > room)
    return;
  int ptx = 0, elf = 0, elf_usable = 0;
  unsigned char sass[256] = {0};
  for (uint64_t at = header; at + 64 <= end;) {
    const unsigned char *e = p + at;
    uint16_t kind = zmlir_fatbin_u16(e);
    uint32_t entry_header = zmlir_fatbin_u32(e + 4), padded = zmlir_fatbin_u32(e + 8);
    uint32_t payload = zmlir_fatbin_u32(e + 16), sm = zmlir_fatbin_u32(e + 28);
    if (entry_header < 64 || (kind != ZMLIR_FATBIN_KIND_PTX && kind != ZMLIR_FATBIN_KIND_ELF))
      return; /* not a fatbin after all: ignore it whole */
    if (kind == ZMLIR_FATBIN_KIND_PTX) {
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
  h->ptx |= ptx;
  if (elf_usable && !ptx)
    h->sass_only_usable = 1;
  for (int i = 0; i < 256; ++i)
    h->sass[i] |= sass[i];
}

/* Every fatbin in the readable loaded segments of the object whose ELF
 * header is mapped at `base`. */
static void zmlir_scan_object(uintptr_t base, int reported_sm, struct zmlir_holdings *h) {
  const ElfW(Ehdr) *elf = (const ElfW(Ehdr) *)base;
  if (memcmp(elf->e_ident, ELFMAG, SELFMAG) != 0)
    return;
  const ElfW(Phdr) *phdrs = (const ElfW(Phdr) *)(base + elf->e_phoff);
  uintptr_t first = UINTPTR_MAX;
  for (int i = 0; i < elf->e_phnum; ++i)
    if (phdrs[i].p_type == PT_LOAD && phdrs[i].p_vaddr < first)
      first = phdrs[i].p_vaddr;
  if (first == UINTPTR_MAX)
    return;
  /* dli_fbase is where the first segment's page is mapped. */
  uintptr_t bias = base - (first & ~(uintptr_t)0xfff);
  const uint32_t magic = ZMLIR_FATBIN_MAGIC;
  for (int i = 0; i < elf->e_phnum; ++i) {
    const ElfW(Phdr) *ph = &phdrs[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
      continue;
    const unsigned char *start = (const unsigned char *)(bias + ph->p_vaddr);
    size_t length = ph->p_filesz; /* what the file holds: fatbins are never .bss */
    for (const unsigned char *p = start; p + 16 <= start + length;) {
      p = memmem(p, (size_t)(start + length - p), &magic, sizeof magic);
      if (p == NULL)
        break;
      zmlir_classify_fatbin(p, (size_t)(start + length - p), reported_sm, h);
      p += 8;
    }
  }
}

/* The holdings of the object at `base`, scanned at its first question. */
static struct zmlir_holdings *zmlir_holdings_of(uintptr_t base, int reported_sm) {
  static struct zmlir_holdings objects[ZMLIR_HOLDINGS_OBJECTS];
  static int count;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  struct zmlir_holdings *found = NULL;
  for (int i = 0; i < count && !found; ++i)
    if (objects[i].base == base)
      found = &objects[i];
  if (!found && count < ZMLIR_HOLDINGS_OBJECTS) {
    found = &objects[count++];
    memset(found, 0, sizeof *found);
    found->base = base;
    zmlir_scan_object(base, reported_sm, found);
  }
  pthread_mutex_unlock(&lock);
  return found;
}

#endif /* ZMLIR_FATBIN_HOLDINGS_H */
