/* Kernel memory faults on the CPU (compiled into libcuda.so.1 by build.py).
 *
 * A kernel that reads or writes a wild address makes NVIDIA's driver return
 * CUDA_ERROR_ILLEGAL_ADDRESS (700) from the next synchronising call, and from
 * every call after; the process lives on. On the CPU the kernel runs in this
 * process, where the same access is a SIGSEGV that would kill it.
 *
 * So while a launch runs (zmlir_faults_arm), a SIGSEGV on an unmapped page
 * (SEGV_MAPERR) raised by code outside every loaded object (dladdr finds
 * none: the OpenCL runtime's JIT-compiled kernels) is answered by mapping a
 * zero page there, MAP_FIXED_NOREPLACE (never over a mapping), and counting
 * the fault: the access completes, the kernel finishes with results that no
 * longer matter, and the driver turns the count into the context's sticky
 * 700 (zmlir_faults_take). Every other SIGSEGV or SIGBUS — the application's
 * own bugs, a protection fault, the zero page (below mmap_min_addr), more
 * than ZMLIR_FAULT_PAGES pages — goes to the handler installed before ours,
 * or kills the process as it would have.
 *
 * A kernel's read of a page mapped without any access (SEGV_ACCERR on a
 * PROT_NONE page: a library's padding between its segments, a thread's
 * stack guard; a wild address lands there as often as on nothing) is a
 * fault too: the page is made readable for the access (its bytes are the
 * mapping's own) and PROT_NONE again when the faults are taken.
 *
 * What no page can answer is skipped (x86-64): a kernel's write that breaks
 * a page's protection (read-only memory of the host's, which no kernel may
 * change) and an access to a non-canonical address (a general protection
 * fault: si_code SI_KERNEL, no address). The handler moves the kernel past
 * the instruction (x86_length.h) and counts the fault; the kernel goes on
 * with results that no longer matter, as above.
 *
 * But for the driver's guarded ranges (zmlir_faults_guard): CUDA's virtual
 * address reservations (cuda/virtual_memory.py), whose pages are mapped but
 * inaccessible until cuMemSetAccess. A kernel's access there (SEGV_ACCERR)
 * is a fault as above, answered by a zero page mapped over the one there
 * (MAP_FIXED); taking the faults gives such a page back to the reservation
 * (inaccessible again), and the driver maps its memory afresh when access is
 * granted.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, REG_RIP */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "x86_length.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define ZMLIR_FAULT_PAGES 4096
#define ZMLIR_GUARDED_RANGES 256

static struct {
  uintptr_t begin, end; /* [begin, end); begin 0: a free slot */
} zmlir_faults_guarded[ZMLIR_GUARDED_RANGES];

static struct sigaction zmlir_faults_previous_segv, zmlir_faults_previous_bus;
static int zmlir_faults_armed;           /* launches running */
static unsigned long zmlir_faults_count; /* faults since the last take */
static uintptr_t zmlir_faults_first;     /* the first one's address */
static uintptr_t zmlir_faults_pages[ZMLIR_FAULT_PAGES];
static unsigned int zmlir_faults_mapped;

static void zmlir_faults_chain(int sig, siginfo_t *info, void *context) {
  struct sigaction *previous =
      sig == SIGBUS ? &zmlir_faults_previous_bus : &zmlir_faults_previous_segv;
  if (previous->sa_flags & SA_SIGINFO) {
    if (previous->sa_sigaction) {
      previous->sa_sigaction(sig, info, context);
      return;
    }
  } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
    previous->sa_handler(sig);
    return;
  }
  /* As before us: the default action, when the access is retried. */
  signal(sig, SIG_DFL);
}

static void *zmlir_faults_pc(void *context) {
#if defined(__x86_64__)
  return (void *)((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (void *)((ucontext_t *)context)->uc_mcontext.pc;
#else
  (void)context;
  return NULL;
#endif
}

/* Whether the faulting access read (x86-64's page-fault error code: bit 1
 * set for a write): a read that breaks a page's protection finds a page
 * without any access. Elsewhere: unknown, so no. */
static int zmlir_faults_read(void *context) {
#if defined(__x86_64__)
  return !(((ucontext_t *)context)->uc_mcontext.gregs[REG_ERR] & 2);
#else
  (void)context;
  return 0;
#endif
}

/* Moves the interrupted code past its instruction; whether it could. */
static int zmlir_faults_skip(void *context) {
#if defined(__x86_64__)
  greg_t *registers = ((ucontext_t *)context)->uc_mcontext.gregs;
  unsigned length = zmlir_x86_length((const uint8_t *)registers[REG_RIP]);
  if (!length)
    return 0;
  registers[REG_RIP] += length;
  return 1;
#else
  (void)context;
  return 0;
#endif
}

/* Counts a fault at `address` (the first one's kept). */
static void zmlir_faults_count_one(uintptr_t address) {
  uintptr_t none = 0;
  __atomic_compare_exchange_n(&zmlir_faults_first, &none, address, 0, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
  __atomic_add_fetch(&zmlir_faults_count, 1, __ATOMIC_ACQ_REL);
}

static int zmlir_faults_is_guarded(uintptr_t address) {
  for (unsigned int i = 0; i < ZMLIR_GUARDED_RANGES; ++i) {
    uintptr_t begin = __atomic_load_n(&zmlir_faults_guarded[i].begin, __ATOMIC_ACQUIRE);
    if (begin && begin <= address &&
        address < __atomic_load_n(&zmlir_faults_guarded[i].end, __ATOMIC_ACQUIRE))
      return 1;
  }
  return 0;
}

static void zmlir_faults_handler(int sig, siginfo_t *info, void *context) {
  int saved_errno = errno;
  Dl_info where;
  void *pc = zmlir_faults_pc(context);
  int guarded = sig == SIGSEGV && info->si_code == SEGV_ACCERR &&
                zmlir_faults_is_guarded((uintptr_t)info->si_addr);
  uintptr_t page = (uintptr_t)info->si_addr & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
  int kernel = pc != NULL && __atomic_load_n(&zmlir_faults_armed, __ATOMIC_ACQUIRE) > 0 &&
               dladdr(pc, &where) == 0;
  if (sig == SIGSEGV && info->si_code == SEGV_ACCERR && !guarded && kernel &&
      zmlir_faults_read(context)) {
    unsigned int slot = __atomic_fetch_add(&zmlir_faults_mapped, 1, __ATOMIC_ACQ_REL);
    if (slot < ZMLIR_FAULT_PAGES &&
        mprotect((void *)page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ) == 0) {
      zmlir_faults_pages[slot] = page | 2; /* PROT_NONE again when taken */
      zmlir_faults_count_one((uintptr_t)info->si_addr);
      errno = saved_errno;
      return; /* the access is retried */
    }
  }
  if (sig == SIGSEGV && kernel && !guarded &&
      ((info->si_code == SEGV_ACCERR && !zmlir_faults_read(context)) ||
       info->si_code == SI_KERNEL) &&
      zmlir_faults_skip(context)) {
    zmlir_faults_count_one((uintptr_t)info->si_addr);
    errno = saved_errno;
    return; /* on at the next instruction */
  }
  if (sig == SIGSEGV && (info->si_code == SEGV_MAPERR || guarded) && kernel) {
    unsigned int slot = __atomic_fetch_add(&zmlir_faults_mapped, 1, __ATOMIC_ACQ_REL);
    if (slot < ZMLIR_FAULT_PAGES) {
      /* Over a guarded page: the reservation's, which taking gives back. */
      void *mapped = mmap((void *)page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS |
                              (guarded ? MAP_FIXED : MAP_FIXED_NOREPLACE),
                          -1, 0);
      int raced = mapped == MAP_FAILED && errno == EEXIST; /* another lane mapped it */
      if (mapped == (void *)page || raced) {
        if (!raced)
          zmlir_faults_pages[slot] = page | (uintptr_t)guarded; /* pages are aligned */
        zmlir_faults_count_one((uintptr_t)info->si_addr);
        errno = saved_errno;
        return; /* the access is retried, on the zero page */
      }
      if (mapped != MAP_FAILED)
        munmap(mapped, (size_t)sysconf(_SC_PAGESIZE)); /* an old kernel's hint */
    }
  }
  errno = saved_errno;
  zmlir_faults_chain(sig, info, context);
}

/* The signals LLVM's crash handler takes (its KillSigs), which Intel's
 * OpenCL runtime installs as it opens: a CUDA program's own failed assert
 * then printed "PLEASE submit a bug report to https://software.intel.com".
 * cuInit keeps the process's dispositions across opening the backend. */
static const int zmlir_crash_signals[] = {SIGILL, SIGTRAP, SIGABRT, SIGFPE,  SIGBUS,
                                          SIGSEGV, SIGQUIT, SIGSYS,  SIGXCPU, SIGXFSZ};
#define ZMLIR_CRASH_SIGNALS (sizeof zmlir_crash_signals / sizeof zmlir_crash_signals[0])
static struct sigaction zmlir_process_actions[ZMLIR_CRASH_SIGNALS];

/* Before the backend opens: the process's dispositions of those signals. */
void zmlir_signals_save(void) {
  for (unsigned i = 0; i < ZMLIR_CRASH_SIGNALS; ++i)
    sigaction(zmlir_crash_signals[i], NULL, &zmlir_process_actions[i]);
}

/* After it opened: those dispositions again. */
void zmlir_signals_restore(void) {
  for (unsigned i = 0; i < ZMLIR_CRASH_SIGNALS; ++i)
    sigaction(zmlir_crash_signals[i], &zmlir_process_actions[i], NULL);
}

/* Installs the handler (once, at cuInit, after the backend's runtime). */
void zmlir_faults_install(void) {
  static int installed;
  if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
    return;
  struct sigaction action = {0};
  action.sa_sigaction = zmlir_faults_handler;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &zmlir_faults_previous_segv);
  sigaction(SIGBUS, &action, &zmlir_faults_previous_bus);
}

/* Around every launch: +1 before the kernel runs, -1 after it finished. */
void zmlir_faults_arm(int delta) { __atomic_add_fetch(&zmlir_faults_armed, delta, __ATOMIC_ACQ_REL); }

/* The faults since the last call (0: none), the first one's address in
 * *first; their pages are unmapped again when no launch is running. */
unsigned long zmlir_faults_take(uintptr_t *first) {
  unsigned long count = __atomic_exchange_n(&zmlir_faults_count, 0, __ATOMIC_ACQ_REL);
  *first = __atomic_exchange_n(&zmlir_faults_first, 0, __ATOMIC_ACQ_REL);
  if (count && __atomic_load_n(&zmlir_faults_armed, __ATOMIC_ACQUIRE) == 0) {
    unsigned int n = __atomic_exchange_n(&zmlir_faults_mapped, 0, __ATOMIC_ACQ_REL);
    for (unsigned int i = 0; i < n && i < ZMLIR_FAULT_PAGES; ++i)
      if (zmlir_faults_pages[i]) {
        uintptr_t page = zmlir_faults_pages[i] & ~(uintptr_t)3;
        if (zmlir_faults_pages[i] & 2) /* a page of someone else's, PROT_NONE again */
          mprotect((void *)page, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE);
        else if (zmlir_faults_pages[i] & 1) /* inaccessible again, still reserved */
          mmap((void *)page, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        else
          munmap((void *)page, (size_t)sysconf(_SC_PAGESIZE));
        zmlir_faults_pages[i] = 0;
      }
  }
  return count;
}

/* A range whose inaccessible pages a kernel's access faults in as above
 * (add 1), or no longer (add 0: the range is unmapped; its fault pages go
 * with it). 0 if done, -1 if every slot is taken. */
int zmlir_faults_guard(uintptr_t begin, uintptr_t size, int add) {
  if (add) {
    for (unsigned int i = 0; i < ZMLIR_GUARDED_RANGES; ++i)
      if (__atomic_load_n(&zmlir_faults_guarded[i].begin, __ATOMIC_ACQUIRE) == 0) {
        __atomic_store_n(&zmlir_faults_guarded[i].end, begin + size, __ATOMIC_RELEASE);
        __atomic_store_n(&zmlir_faults_guarded[i].begin, begin, __ATOMIC_RELEASE);
        return 0;
      }
    return -1;
  }
  for (unsigned int i = 0; i < ZMLIR_GUARDED_RANGES; ++i)
    if (__atomic_load_n(&zmlir_faults_guarded[i].begin, __ATOMIC_ACQUIRE) == begin)
      __atomic_store_n(&zmlir_faults_guarded[i].begin, 0, __ATOMIC_RELEASE);
  for (unsigned int i = 0; i < ZMLIR_FAULT_PAGES; ++i) {
    uintptr_t page = zmlir_faults_pages[i] & ~(uintptr_t)3;
    if (page >= begin && page < begin + size)
      zmlir_faults_pages[i] = 0;
  }
  return 0;
}
