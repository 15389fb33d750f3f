//===- HostRuntime.cpp - CUDA threads as fibers on the host CPU -*- C++ -*-===//
//
// The runtime of the host target's kernels (libzmlir_host_runtime.so). A
// launch runs its blocks one after another on the calling thread; each CUDA
// thread of a block is a fiber (ucontext) that runs until it reaches a
// barrier, a warp collective or its end, and the scheduler then runs the
// next one. Once no thread can run, the lanes of a warp waiting at one
// warp collective (one call site) resume together, once every live lane of
// its membermask waits there too, each reading its result computed from
// those lanes' operands: they are the lanes that execute it, as on a GPU,
// where the others took another branch, have ended, or do not exist (the
// last warp of a block whose size is not a multiple of 32). Should no
// collective be ready (a program whose membermask names a lane that waits
// elsewhere), each resumes with the lanes it has rather than hang. A block
// barrier resumes every waiting thread once all the block's live threads
// wait at one. `trap` ends the launch with an error.
//
// The work-item and sub-group functions carry the OpenCL C names (Itanium
// mangling) that upstream's gpu-to-llvm-spv lowering calls.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

#include <ucontext.h>

namespace {

constexpr unsigned kWarpSize = 32;
constexpr size_t kStackBytes = 256 * 1024;

enum class State { Runnable, AtBarrier, AtCollective, Done };

enum class Collective { ShuffleIdx, ShuffleXor, ShuffleUp, ShuffleDown, Ballot };

struct Fiber {
  ucontext_t context;
  // Allocated once per launch and reused by every block; not cleared (a
  // fresh stack's contents are undefined anyway).
  std::unique_ptr<char[]> stack;
  State state = State::Runnable;
  unsigned id[3] = {0, 0, 0};
  // The collective this lane waits at: its call site, the lanes it waits
  // for (membermask; none for a shuffle, whose membermask a ballot waited
  // for), kind, operand and the lane argument (source lane, xor mask or
  // delta), then the result.
  const void *site = nullptr;
  uint32_t members = 0;
  Collective collective = Collective::Ballot;
  uint64_t operand = 0;
  uint32_t laneArgument = 0;
  uint64_t result = 0;
};

using Entry = void (*)(void **args, void *window);

struct Block {
  Entry entry = nullptr;
  void **args = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, blockId[3] = {0, 0, 0};
  uint32_t sharedBytes = 0;
  std::vector<char> window;
  std::vector<Fiber> fibers;
  ucontext_t scheduler;
  Fiber *current = nullptr;
  bool trapped = false;
};

thread_local Block *active = nullptr;

void runFiber(int low, int high) {
  Block *b = active;
  uintptr_t index = (static_cast<uintptr_t>(static_cast<unsigned>(high)) << 32) |
                    static_cast<unsigned>(low);
  Fiber &fiber = b->fibers[index];
  b->entry(b->args, b->window.data());
  fiber.state = State::Done;
  // uc_link returns to the scheduler.
}

/// Back to the scheduler until it resumes this fiber.
void yield(State state) {
  Block *b = active;
  Fiber *self = b->current;
  self->state = state;
  swapcontext(&self->context, &b->scheduler);
}

unsigned linearId(const Block &b, const Fiber &f) {
  return f.id[0] + b.block[0] * (f.id[1] + b.block[1] * f.id[2]);
}

/// Resolves the collectives the lanes of each warp wait at, one call site at
/// a time (called when no thread can run): those whose live membermask
/// lanes all wait there, or with `force` every one. Returns whether one was.
bool resolveWarps(Block &b, bool force) {
  bool any = false;
  size_t count = b.fibers.size();
  for (size_t base = 0; base < count; base += kWarpSize) {
    size_t end = std::min(count, base + kWarpSize);
    // Lanes waiting at a collective and not looked at yet, and live lanes.
    uint32_t waiting = 0, live = 0;
    for (size_t i = base; i < end; ++i) {
      waiting |= uint32_t(b.fibers[i].state == State::AtCollective) << (i - base);
      live |= uint32_t(b.fibers[i].state != State::Done) << (i - base);
    }
    while (waiting) {
      const void *site = b.fibers[base + __builtin_ctz(waiting)].site;
      uint32_t group = 0, members = 0, votes = 0;
      for (size_t i = base; i < end; ++i) {
        Fiber &f = b.fibers[i];
        if (!(waiting >> (i - base) & 1) || f.site != site)
          continue;
        group |= 1u << (i - base);
        members |= f.members;
        if (f.operand)
          votes |= 1u << (i - base);
      }
      waiting &= ~group;
      if (!force && (members & live & ~group))
        continue;
      for (size_t i = base; i < end; ++i) {
        Fiber &f = b.fibers[i];
        if (!(group >> (i - base) & 1))
          continue;
        int lane = static_cast<int>(i - base), source = lane;
        switch (f.collective) {
        case Collective::Ballot:
          f.result = votes;
          break;
        case Collective::ShuffleIdx:
          source = static_cast<int>(f.laneArgument);
          break;
        case Collective::ShuffleXor:
          source = lane ^ static_cast<int>(f.laneArgument);
          break;
        case Collective::ShuffleUp:
          source = lane - static_cast<int>(f.laneArgument);
          break;
        case Collective::ShuffleDown:
          source = lane + static_cast<int>(f.laneArgument);
          break;
        }
        if (f.collective != Collective::Ballot) {
          // Outside the warp, or a lane not at this collective: the lane's
          // own value.
          bool valid = source >= 0 && source < static_cast<int>(kWarpSize) && (group >> source & 1);
          f.result = valid ? b.fibers[base + static_cast<size_t>(source)].operand : f.operand;
        }
        f.state = State::Runnable;
      }
      any = true;
    }
  }
  return any;
}

/// Runs one block to its end: 0, or 1 if a thread trapped.
int runBlock(Block &b) {
  size_t count = static_cast<size_t>(b.block[0]) * b.block[1] * b.block[2];
  if (b.fibers.size() != count)
    b.fibers.resize(count);
  b.window.assign(b.sharedBytes ? b.sharedBytes : 1, 0);
  for (size_t i = 0; i < count; ++i) {
    Fiber &f = b.fibers[i];
    f.state = State::Runnable;
    f.id[0] = static_cast<unsigned>(i % b.block[0]);
    f.id[1] = static_cast<unsigned>(i / b.block[0] % b.block[1]);
    f.id[2] = static_cast<unsigned>(i / (static_cast<size_t>(b.block[0]) * b.block[1]));
    if (!f.stack)
      f.stack.reset(new char[kStackBytes]);
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.get();
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &b.scheduler;
    makecontext(&f.context, reinterpret_cast<void (*)()>(runFiber), 2,
                static_cast<int>(i & 0xffffffffu), static_cast<int>(i >> 32));
  }
  for (;;) {
    bool ran = false;
    for (Fiber &f : b.fibers) {
      if (f.state != State::Runnable)
        continue;
      b.current = &f;
      swapcontext(&b.scheduler, &f.context);
      ran = true;
      if (b.trapped)
        return 1;
    }
    if (ran || resolveWarps(b, /*force=*/false) || resolveWarps(b, /*force=*/true))
      continue;
    // No thread can run and none waits at a collective: every live thread
    // waits at the barrier.
    bool live = false;
    for (Fiber &f : b.fibers)
      live |= f.state != State::Done;
    if (!live)
      return 0;
    for (Fiber &f : b.fibers)
      if (f.state == State::AtBarrier)
        f.state = State::Runnable;
  }
}

/// Waits at the collective `kind` called from `site` for the lanes of
/// `members` until the warp's lanes at that site resolve it; its result.
uint64_t collective(const void *site, uint32_t members, Collective kind, uint64_t operand,
                    uint32_t laneArgument) {
  Fiber *self = active->current;
  self->site = site;
  self->members = members;
  self->collective = kind;
  self->operand = operand;
  self->laneArgument = laneArgument;
  yield(State::AtCollective);
  return self->result;
}

template <typename T>
uint64_t bitsOf(T value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

template <typename T>
T fromBits(uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

template <typename T>
T shuffle(const void *site, Collective kind, T value, uint32_t lane) {
  return fromBits<T>(collective(site, 0, kind, bitsOf(value), lane));
}

} // namespace

extern "C" {

/// Runs `entry` over the grid; 0 on success, 1 if a thread trapped.
int zmlir_host_launch(Entry entry, void **args, const unsigned grid[3], const unsigned block[3],
                      uint32_t sharedBytes) {
  Block b;
  b.entry = entry;
  b.args = args;
  b.sharedBytes = sharedBytes;
  for (int d = 0; d < 3; ++d) {
    b.grid[d] = grid[d];
    b.block[d] = block[d];
  }
  Block *outer = active;
  active = &b;
  int status = 0;
  for (unsigned z = 0; z < grid[2] && !status; ++z)
    for (unsigned y = 0; y < grid[1] && !status; ++y)
      for (unsigned x = 0; x < grid[0] && !status; ++x) {
        b.blockId[0] = x;
        b.blockId[1] = y;
        b.blockId[2] = z;
        status = runBlock(b);
      }
  active = outer;
  return status;
}

// The work-item functions (OpenCL C names).
size_t _Z12get_local_idj(unsigned d) {
  return d < 3 ? active->current->id[d] : 0;
}
size_t _Z12get_group_idj(unsigned d) {
  return d < 3 ? active->blockId[d] : 0;
}
size_t _Z14get_local_sizej(unsigned d) {
  return d < 3 ? active->block[d] : 1;
}
size_t _Z14get_num_groupsj(unsigned d) {
  return d < 3 ? active->grid[d] : 1;
}
void _Z7barrierj(unsigned) {
  yield(State::AtBarrier);
}

// The sub-group (warp) functions. A collective's call site is its return
// address: the kernels call them convergent, and not as tail calls.
unsigned _Z22get_sub_group_local_id() {
  return linearId(*active, *active->current) % kWarpSize;
}
// Every element type gpu.shuffle takes (i32, f32, i64, f64), in its four modes.
#define ZMLIR_SHUFFLES(T, M)                                                                       \
  T _Z17sub_group_shuffle##M##j(T v, unsigned lane) {                                              \
    return shuffle(__builtin_return_address(0), Collective::ShuffleIdx, v, lane);                  \
  }                                                                                                \
  T _Z21sub_group_shuffle_xor##M##j(T v, unsigned mask) {                                          \
    return shuffle(__builtin_return_address(0), Collective::ShuffleXor, v, mask);                  \
  }                                                                                                \
  T _Z20sub_group_shuffle_up##M##j(T v, unsigned delta) {                                          \
    return shuffle(__builtin_return_address(0), Collective::ShuffleUp, v, delta);                  \
  }                                                                                                \
  T _Z22sub_group_shuffle_down##M##j(T v, unsigned delta) {                                        \
    return shuffle(__builtin_return_address(0), Collective::ShuffleDown, v, delta);                \
  }
ZMLIR_SHUFFLES(int, i)
ZMLIR_SHUFFLES(float, f)
ZMLIR_SHUFFLES(long, l)
ZMLIR_SHUFFLES(double, d)
#undef ZMLIR_SHUFFLES

// What the host TargetInfo calls.
uint32_t zmlir_host_ballot(uint32_t predicate, uint32_t members) {
  return static_cast<uint32_t>(
      collective(__builtin_return_address(0), members, Collective::Ballot, predicate != 0, 0));
}
void zmlir_host_warp_sync(uint32_t members) {
  collective(__builtin_return_address(0), members, Collective::Ballot, 0, 0);
}
uint32_t zmlir_host_shared_bytes() {
  return active->sharedBytes;
}
uint64_t zmlir_host_globaltimer() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}
/// The state space of the generic `address` (isspacep): 1 in the block's
/// shared window, 2 on the calling fiber's stack (its .local memory), else
/// 0 (global: any other memory of the process).
uint32_t zmlir_host_state_space(uint64_t address) {
  const Block *b = active;
  auto within = [address](const void *base, size_t bytes) {
    return address - reinterpret_cast<uint64_t>(base) < bytes;
  };
  if (b->sharedBytes && within(b->window.data(), b->sharedBytes))
    return 1;
  if (within(b->current->stack.get(), kStackBytes))
    return 2;
  return 0;
}
/// Lets the block's other fibers run (a thread waiting at an mbarrier).
void zmlir_host_yield() {
  yield(State::Runnable);
}
[[noreturn]] void zmlir_host_trap() {
  active->trapped = true;
  yield(State::Done);
  __builtin_unreachable();
}

} // extern "C"
