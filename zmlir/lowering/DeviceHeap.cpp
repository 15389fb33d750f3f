//===- DeviceHeap.cpp - Device malloc and free ----------------------------===//
//
// `call malloc, (size)`, `call free, (ptr)` and `call
// __cuda_syscall_aligned_malloc, (size, align)`: the device heap NVIDIA's
// driver links into every module that uses it. A target with its own
// (NVPTX) keeps the calls; on every other target they become calls of two
// functions this file writes into the module, an allocator over the heap
// the driver gives the module (DeviceHeap.h has the layout).
//
// The allocator is lock-free: every step is one compare-and-swap that some
// thread wins, so no thread waits on another. That matters where a
// sub-group's lanes run in SIMD (Intel's CPU runtime) or a block's threads
// run one after another between barriers: a lane spinning on a lock another
// lane of its sub-group holds would never see it released.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/DeviceHeap.h"
#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

constexpr const char *kAllocName = "__zmlir_heap_alloc";
constexpr const char *kFreeName = "__zmlir_heap_free";
constexpr const char *kPushName = "__zmlir_heap_push";
constexpr int64_t kIndexMask = (int64_t(1) << kHeapIndexBits) - 1;
/// Offset of class 0's free-list head in the header.
constexpr int64_t kFreeListsOffset = 16;
/// The largest request served: past it a size (with an alignment's slack)
/// could overflow, and no class holds it.
constexpr int64_t kMaxRequest = int64_t(1) << 39;

static_assert(kFreeListsOffset + 8 * kHeapClasses <= kHeapHeaderBytes,
              "the free-list heads fit the heap's header");
static_assert((int64_t(32) << (kHeapClasses - 1)) >> 4 <= kIndexMask + 1,
              "block indices fit their bits");

/// Builds the module's allocator functions: one builder per function body.
class HeapBuilder {
public:
  HeapBuilder(gpu::GPUModuleOp module, const PTXLoweringState &state)
      : module(module), state(state), ctx(module.getContext()), i64(IntegerType::get(ctx, 64)),
        globalPtr(LLVM::LLVMPointerType::get(ctx, state.addressSpaces.global)),
        scope(state.target.syncScopeName(Scope::GPU)) {}

  /// `__zmlir_heap_alloc(size, align) -> ptr` (0 when the heap cannot
  /// serve it) and `__zmlir_heap_free(ptr)`, built once.
  void build(Location loc);

private:
  Value c(OpBuilder &b, Location loc, int64_t v) { return intConst(b, loc, i64, v); }
  Value ptrAt(OpBuilder &b, Location loc, Value address) {
    return LLVM::IntToPtrOp::create(b, loc, globalPtr, address);
  }
  Value add(OpBuilder &b, Location loc, Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate pred, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, pred, x, y);
  }
  Value atomicLoad(OpBuilder &b, Location loc, Value address, LLVM::AtomicOrdering ordering) {
    return LLVM::LoadOp::create(b, loc, i64, ptrAt(b, loc, address), /*alignment=*/8, false, false,
                                false, false, ordering, scope);
  }
  /// Compare-and-swap of the word at `address`: (the word found, swapped).
  std::pair<Value, Value> cas(OpBuilder &b, Location loc, Value address, Value expected,
                              Value desired) {
    Value pair = LLVM::AtomicCmpXchgOp::create(b, loc, ptrAt(b, loc, address), expected, desired,
                                               LLVM::AtomicOrdering::acq_rel,
                                               LLVM::AtomicOrdering::acquire, scope);
    return {LLVM::ExtractValueOp::create(b, loc, pair, ArrayRef<int64_t>{0}),
            LLVM::ExtractValueOp::create(b, loc, pair, ArrayRef<int64_t>{1})};
  }
  /// A free-list head naming `index`, its tag one more than `head`'s.
  Value nextHead(OpBuilder &b, Location loc, Value head, Value index) {
    Value tag = arith::ShRUIOp::create(b, loc, head, c(b, loc, kHeapIndexBits));
    tag = arith::ShLIOp::create(b, loc, add(b, loc, tag, c(b, loc, 1)), c(b, loc, kHeapIndexBits));
    return arith::OrIOp::create(b, loc, tag, index);
  }
  /// The address of class `cls`'s free-list head.
  Value listHead(OpBuilder &b, Location loc, Value heap, Value cls) {
    Value offset = add(b, loc, arith::ShLIOp::create(b, loc, cls, c(b, loc, 3)),
                       c(b, loc, kFreeListsOffset));
    return add(b, loc, heap, offset);
  }
  Value heapAddress(OpBuilder &b, Location loc);
  /// One of the allocator's functions, never inlined: Intel's CPU compiler
  /// inlining it into every call site, each vectorized 32 lanes wide, took
  /// minutes (test/cuda/programs/device_heap.cu: 5 CPU minutes, 25 s so).
  LLVM::LLVMFuncOp function(OpBuilder &b, Location loc, StringRef name,
                            LLVM::LLVMFunctionType type) {
    auto fn = LLVM::LLVMFuncOp::create(b, loc, name, type, LLVM::Linkage::Internal);
    fn.setNoInline(true);
    return fn;
  }
  void buildPush(Location loc);
  void buildAlloc(Location loc);
  void buildFree(Location loc);
  /// Calls `__zmlir_heap_push(heap, offset, cls)`.
  void push(OpBuilder &b, Location loc, Value heap, Value offset, Value cls) {
    LLVM::CallOp::create(b, loc, pushFn, ValueRange{heap, offset, cls});
  }

  gpu::GPUModuleOp module;
  const PTXLoweringState &state;
  MLIRContext *ctx;
  mlir::Type i64;
  LLVM::LLVMPointerType globalPtr;
  std::string scope;
  LLVM::GlobalOp stateVar;
  LLVM::LLVMFuncOp pushFn;
};

Value HeapBuilder::heapAddress(OpBuilder &b, Location loc) {
  return LLVM::LoadOp::create(b, loc, i64, LLVM::AddressOfOp::create(b, loc, stateVar),
                              /*alignment=*/8);
}

void HeapBuilder::build(Location loc) {
  if (module.lookupSymbol(kAllocName))
    return;
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  stateVar = LLVM::GlobalOp::create(b, loc, i64, /*isConstant=*/false, LLVM::Linkage::External,
                                    kHeapStateName, b.getI64IntegerAttr(0), /*alignment=*/8,
                                    state.addressSpaces.global);
  buildPush(loc);
  buildAlloc(loc);
  buildFree(loc);
}

void HeapBuilder::buildPush(Location loc) {
  // Pushes the block at `offset` on class `cls`'s free list: link it to
  // the head's block, then compare-and-swap the head to it.
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {i64, i64, i64});
  pushFn = function(b, loc, kPushName, fnType);
  Region &body = pushFn.getBody();
  Block *entry = b.createBlock(&body, body.end(), {i64, i64, i64}, {loc, loc, loc});
  Block *loop = b.createBlock(&body, body.end(), {i64}, {loc});
  Block *done = b.createBlock(&body, body.end());

  b.setInsertionPointToEnd(entry);
  Value heap = entry->getArgument(0), offset = entry->getArgument(1);
  Value headAddr = listHead(b, loc, heap, entry->getArgument(2));
  Value index = arith::ShRUIOp::create(b, loc, offset, c(b, loc, 4));
  cf::BranchOp::create(b, loc, loop,
                       ValueRange{atomicLoad(b, loc, headAddr, LLVM::AtomicOrdering::monotonic)});

  b.setInsertionPointToEnd(loop);
  Value head = loop->getArgument(0);
  LLVM::StoreOp::create(b, loc, arith::AndIOp::create(b, loc, head, c(b, loc, kIndexMask)),
                        ptrAt(b, loc, add(b, loc, heap, offset)), /*alignment=*/8, false, false,
                        false, LLVM::AtomicOrdering::monotonic, scope);
  auto [seen, pushed] = cas(b, loc, headAddr, head, nextHead(b, loc, head, index));
  cf::CondBranchOp::create(b, loc, pushed, done, ValueRange{}, loop, ValueRange{seen});

  b.setInsertionPointToEnd(done);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

void HeapBuilder::buildAlloc(Location loc) {
  // 1. Requests the heap cannot serve are NULL: no heap (the driver gave
  //    none), an alignment that is not a power of two, a size past any class.
  // 2. The class: the smallest c with 32 << c >= size + max(align, 16) (the
  //    block header, and the slack to align the pointer).
  // 3. scan(k): pop class k's free list (k = c first). An empty list moves
  //    on: from c to the bump region, from a larger class to the next one;
  //    past the last class the heap is exhausted (NULL).
  // 4. bump: reserve 32 << c bytes of the never-used region by
  //    compare-and-swap of the bump offset (an atomic add would move it past
  //    the end for good); if they do not fit, scan(c + 1): a larger free
  //    block serves the request.
  // 5. found(block, k): a block of a larger class k is split as a buddy
  //    allocator splits: it keeps its first 32 << c bytes and gives the
  //    rest back as one free block of each class c .. k - 1 (at 32 << j
  //    from its start, class j). (Freed blocks are never merged again.)
  // 6. The pointer is the block's start plus 16, aligned up; the header
  //    before it records the class and the distance back.
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fnType = LLVM::LLVMFunctionType::get(i64, {i64, i64});
  auto fn = function(b, loc, kAllocName, fnType);
  Region &body = fn.getBody();
  Block *entry = b.createBlock(&body, body.end(), {i64, i64}, {loc, loc});
  Block *classify = b.createBlock(&body, body.end());
  Block *scan = b.createBlock(&body, body.end(), {i64}, {loc});
  Block *pop = b.createBlock(&body, body.end(), {i64}, {loc});
  Block *popTry = b.createBlock(&body, body.end());
  Block *empty = b.createBlock(&body, body.end());
  Block *nextClass = b.createBlock(&body, body.end());
  Block *bump = b.createBlock(&body, body.end(), {i64}, {loc});
  Block *bumpTry = b.createBlock(&body, body.end());
  Block *found = b.createBlock(&body, body.end(), {i64, i64}, {loc, loc});
  Block *split = b.createBlock(&body, body.end(), {i64}, {loc});
  Block *splitOff = b.createBlock(&body, body.end());
  Block *place = b.createBlock(&body, body.end());
  Block *null = b.createBlock(&body, body.end());
  using P = arith::CmpIPredicate;

  // 1.
  b.setInsertionPointToEnd(entry);
  Value size = entry->getArgument(0), align = entry->getArgument(1);
  Value heap = heapAddress(b, loc);
  Value zero = c(b, loc, 0), one = c(b, loc, 1);
  Value noHeap = cmp(b, loc, P::eq, heap, zero);
  Value alignBits = arith::AndIOp::create(b, loc, align, arith::SubIOp::create(b, loc, align, one));
  Value badAlign = arith::OrIOp::create(b, loc, cmp(b, loc, P::eq, align, zero),
                                        cmp(b, loc, P::ne, alignBits, zero));
  Value tooBig = arith::OrIOp::create(b, loc, cmp(b, loc, P::ugt, size, c(b, loc, kMaxRequest)),
                                      cmp(b, loc, P::ugt, align, c(b, loc, kMaxRequest)));
  Value refuse = arith::OrIOp::create(b, loc, arith::OrIOp::create(b, loc, noHeap, badAlign),
                                      tooBig);
  cf::CondBranchOp::create(b, loc, refuse, null, ValueRange{}, classify, ValueRange{});

  // 2.
  b.setInsertionPointToEnd(classify);
  Value slack = arith::MaxUIOp::create(b, loc, align, c(b, loc, kHeapBlockHeaderBytes));
  Value need = arith::MaxUIOp::create(b, loc, add(b, loc, size, slack), c(b, loc, 32));
  // ceil(log2(need)) - 5, need >= 32
  Value leading = math::CountLeadingZerosOp::create(b, loc,
                                                    arith::SubIOp::create(b, loc, need, one));
  Value cls = arith::SubIOp::create(b, loc, c(b, loc, 64 - 5), leading);
  Value blockBytes = arith::ShLIOp::create(b, loc, c(b, loc, 32), cls);
  cf::BranchOp::create(b, loc, scan, ValueRange{cls});

  // 3.
  b.setInsertionPointToEnd(scan);
  Value k = scan->getArgument(0);
  Value headAddr = listHead(b, loc, heap, k);
  cf::BranchOp::create(b, loc, pop,
                       ValueRange{atomicLoad(b, loc, headAddr, LLVM::AtomicOrdering::acquire)});

  b.setInsertionPointToEnd(pop);
  Value head = pop->getArgument(0);
  Value index = arith::AndIOp::create(b, loc, head, c(b, loc, kIndexMask));
  cf::CondBranchOp::create(b, loc, cmp(b, loc, P::eq, index, zero), empty, ValueRange{}, popTry,
                           ValueRange{});

  // Another thread may have taken the block and written over its link: the
  // compare-and-swap then fails, since the head's tag moved on.
  b.setInsertionPointToEnd(popTry);
  Value blockOffset = arith::ShLIOp::create(b, loc, index, c(b, loc, 4));
  Value link = atomicLoad(b, loc, add(b, loc, heap, blockOffset), LLVM::AtomicOrdering::monotonic);
  Value newHead = nextHead(b, loc, head,
                           arith::AndIOp::create(b, loc, link, c(b, loc, kIndexMask)));
  auto [seen, popped] = cas(b, loc, headAddr, head, newHead);
  cf::CondBranchOp::create(b, loc, popped, found, ValueRange{blockOffset, k}, pop,
                           ValueRange{seen});

  b.setInsertionPointToEnd(empty);
  cf::CondBranchOp::create(b, loc, cmp(b, loc, P::eq, k, cls), bump,
                           ValueRange{atomicLoad(b, loc, heap, LLVM::AtomicOrdering::monotonic)},
                           nextClass, ValueRange{});

  b.setInsertionPointToEnd(nextClass);
  Value next = add(b, loc, k, one);
  cf::CondBranchOp::create(b, loc, cmp(b, loc, P::ult, next, c(b, loc, kHeapClasses)), scan,
                           ValueRange{next}, null, ValueRange{});

  // 4.
  b.setInsertionPointToEnd(bump);
  Value bumped = bump->getArgument(0);
  Value end = add(b, loc, bumped, blockBytes);
  Value limit = LLVM::LoadOp::create(b, loc, i64, ptrAt(b, loc, add(b, loc, heap, c(b, loc, 8))),
                                     /*alignment=*/8);
  cf::CondBranchOp::create(b, loc, cmp(b, loc, P::ule, end, limit), bumpTry, ValueRange{},
                           nextClass, ValueRange{});

  b.setInsertionPointToEnd(bumpTry);
  auto [bumpSeen, reserved] = cas(b, loc, heap, bumped, end);
  cf::CondBranchOp::create(b, loc, reserved, found, ValueRange{bumped, cls}, bump,
                           ValueRange{bumpSeen});

  // 5.
  b.setInsertionPointToEnd(found);
  Value foundOffset = found->getArgument(0), foundClass = found->getArgument(1);
  cf::BranchOp::create(b, loc, split, ValueRange{cls});

  b.setInsertionPointToEnd(split);
  Value j = split->getArgument(0);
  cf::CondBranchOp::create(b, loc, cmp(b, loc, P::ult, j, foundClass), splitOff, ValueRange{},
                           place, ValueRange{});

  b.setInsertionPointToEnd(splitOff);
  push(b, loc, heap, add(b, loc, foundOffset, arith::ShLIOp::create(b, loc, c(b, loc, 32), j)), j);
  cf::BranchOp::create(b, loc, split, ValueRange{add(b, loc, j, one)});

  // 6.
  b.setInsertionPointToEnd(place);
  Value block = add(b, loc, heap, foundOffset);
  Value alignMask = arith::SubIOp::create(b, loc, slack, one);
  Value result = arith::AndIOp::create(
      b, loc, add(b, loc, add(b, loc, block, c(b, loc, kHeapBlockHeaderBytes)), alignMask),
      arith::XOrIOp::create(b, loc, alignMask, c(b, loc, -1)));
  Value distance = arith::SubIOp::create(b, loc, result, block);
  Value header = arith::OrIOp::create(b, loc, cls,
                                      arith::ShLIOp::create(b, loc, distance, c(b, loc, 8)));
  LLVM::StoreOp::create(
      b, loc, header,
      ptrAt(b, loc, arith::SubIOp::create(b, loc, result, c(b, loc, kHeapBlockHeaderBytes))),
      /*alignment=*/8);
  LLVM::ReturnOp::create(b, loc, ValueRange{result});

  b.setInsertionPointToEnd(null);
  LLVM::ReturnOp::create(b, loc, ValueRange{c(b, loc, 0)});
}

void HeapBuilder::buildFree(Location loc) {
  // 1. free(NULL), and a module without a heap, do nothing; so does a
  //    pointer whose header names no class or a block outside the heap (a
  //    pointer malloc did not return: undefined in CUDA, but then the
  //    lists stay whole).
  // 2. Push the block on its class's free list.
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {i64});
  auto fn = function(b, loc, kFreeName, fnType);
  Region &body = fn.getBody();
  Block *entry = b.createBlock(&body, body.end(), {i64}, {loc});
  Block *check = b.createBlock(&body, body.end());
  Block *start = b.createBlock(&body, body.end());
  Block *done = b.createBlock(&body, body.end());
  using P = arith::CmpIPredicate;

  // 1.
  b.setInsertionPointToEnd(entry);
  Value pointer = entry->getArgument(0);
  Value heap = heapAddress(b, loc);
  Value zero = c(b, loc, 0);
  Value nothing = arith::OrIOp::create(b, loc, cmp(b, loc, P::eq, pointer, zero),
                                       cmp(b, loc, P::eq, heap, zero));
  cf::CondBranchOp::create(b, loc, nothing, done, ValueRange{}, check, ValueRange{});

  b.setInsertionPointToEnd(check);
  Value header = LLVM::LoadOp::create(
      b, loc, i64,
      ptrAt(b, loc, arith::SubIOp::create(b, loc, pointer, c(b, loc, kHeapBlockHeaderBytes))),
      /*alignment=*/8);
  Value cls = arith::AndIOp::create(b, loc, header, c(b, loc, 0xff));
  Value distance = arith::ShRUIOp::create(b, loc, header, c(b, loc, 8));
  Value offset = arith::SubIOp::create(b, loc, arith::SubIOp::create(b, loc, pointer, distance),
                                       heap);
  Value limit = LLVM::LoadOp::create(b, loc, i64, ptrAt(b, loc, add(b, loc, heap, c(b, loc, 8))),
                                     /*alignment=*/8);
  // (The shift's amount masked: a bad class must not make it poison.)
  Value blockBytes = arith::ShLIOp::create(b, loc, c(b, loc, 32),
                                           arith::AndIOp::create(b, loc, cls, c(b, loc, 63)));
  Value blockEnd = add(b, loc, offset, blockBytes);
  Value valid = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, cmp(b, loc, P::ult, cls, c(b, loc, kHeapClasses)),
                            cmp(b, loc, P::uge, offset, c(b, loc, kHeapHeaderBytes))),
      arith::AndIOp::create(b, loc, cmp(b, loc, P::ult, offset, limit),
                            cmp(b, loc, P::ule, blockEnd, limit)));
  cf::CondBranchOp::create(b, loc, valid, start, ValueRange{}, done, ValueRange{});

  // 2.
  b.setInsertionPointToEnd(start);
  push(b, loc, heap, offset, cls);
  cf::BranchOp::create(b, loc, done);

  b.setInsertionPointToEnd(done);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

/// What a heap function's call passes and returns, in PTX: `.b64` values.
struct Signature {
  const char *callee;
  unsigned args;
  bool returns;
};

constexpr Signature kMalloc{"malloc", 1, true};
constexpr Signature kFree{"free", 1, false};
constexpr Signature kAlignedMalloc{"__cuda_syscall_aligned_malloc", 2, true};

LogicalResult checkSignature(CallOp call, const Signature &sig) {
  bool ok = call.getArgs().size() == sig.args && call.getNumResults() == (sig.returns ? 1 : 0) &&
            llvm::all_of(call.getArgs().getTypes(), [](mlir::Type t) { return t.isInteger(64); }) &&
            llvm::all_of(call.getResultTypes(), [](mlir::Type t) { return t.isInteger(64); });
  if (ok)
    return success();
  std::string expected = "(";
  for (unsigned i = 0; i < sig.args; ++i)
    expected += i ? ", .b64" : ".b64";
  expected += sig.returns ? ") -> .b64" : ")";
  return call.emitError("unsupported call of '")
         << sig.callee << "' with a signature other than " << expected;
}

} // namespace

LogicalResult zmlir::expandDeviceHeap(gpu::GPUModuleOp module, const PTXLoweringState &state) {
  SmallVector<std::pair<CallOp, const Signature *>> calls;
  module.walk([&](CallOp call) {
    StringRef callee = call.getCallee();
    if (module.lookupSymbol<LLVM::LLVMFuncOp>(callee))
      return;
    for (const Signature *sig : {&kMalloc, &kFree, &kAlignedMalloc})
      if (callee == sig->callee)
        calls.push_back({call, sig});
  });
  if (calls.empty())
    return success();
  for (auto [call, sig] : calls)
    if (failed(checkSignature(call, *sig)))
      return failure();
  OpBuilder b(module.getContext());
  if (state.target.hasNativeMalloc()) {
    // NVIDIA's driver links its own: declare them; the calls stay calls.
    for (auto [call, sig] : calls)
      declareFunction(b, call, call.getCallee(),
                      LLVM::LLVMFunctionType::get(sig->returns
                                                      ? mlir::Type(b.getI64Type())
                                                      : LLVM::LLVMVoidType::get(b.getContext()),
                                                  llvm::to_vector(call.getArgs().getTypes())));
    return success();
  }
  HeapBuilder(module, state).build(module.getLoc());
  for (auto [call, sig] : calls) {
    b.setInsertionPoint(call);
    SmallVector<Value> args(call.getArgs());
    if (sig == &kMalloc)
      args.push_back(intConst(b, call.getLoc(), b.getI64Type(), kHeapBlockHeaderBytes));
    auto replacement = CallOp::create(b, call.getLoc(), call.getResultTypes(),
                                      sig == &kFree ? kFreeName : kAllocName, args, call.getUni());
    call.replaceAllUsesWith(replacement.getResults());
    call.erase();
  }
  return success();
}
