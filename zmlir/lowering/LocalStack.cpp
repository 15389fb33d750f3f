//===- LocalStack.cpp - Recursive functions' local memory on a stack ------===//
//
// The software stack LocalStack.h describes: the functions on call cycles
// with local memory get their frames from a slot of the driver's pool,
// which a root call takes and gives back.
//
// A slot is taken with one compare-and-swap per probe, never by waiting
// for another thread: Intel's CPU runtime runs a work-group's work-items one
// after another between barriers, so a thread spinning on a slot another
// holds would hang. A thread holds its slot only while the root call runs.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/LocalStack.h"
#include "zmlir/lowering/PTXLowering.h"

#include "mlir/Interfaces/DataLayoutInterfaces.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

/// Every frame, and so the top of every stack, is aligned to this.
constexpr int64_t kFrameAlign = 16;

/// The functions of `recursive` on a cycle with one that has an alloca.
DenseSet<Operation *> stackUsers(gpu::GPUModuleOp module, const DenseSet<Operation *> &recursive) {
  DenseMap<Operation *, SmallVector<Operation *>> callees = definedCallees(module);
  DenseMap<Operation *, DenseSet<Operation *>> reach;
  for (Operation *fn : recursive)
    reach[fn] = reachedFunctions(fn, callees);
  DenseSet<Operation *> users;
  for (Operation *fn : recursive) {
    bool hasLocal = fn->walk([](LLVM::AllocaOp) {
                        return WalkResult::interrupt();
                      }).wasInterrupted();
    if (!hasLocal)
      continue;
    for (Operation *other : recursive)
      if (reach[fn].contains(other) && reach[other].contains(fn))
        users.insert(other);
  }
  return users;
}

/// Appends `count` i64 parameters to `fn`'s type, arguments and attributes.
void appendI64Params(LLVM::LLVMFuncOp fn, unsigned count) {
  MLIRContext *ctx = fn.getContext();
  mlir::Type i64 = IntegerType::get(ctx, 64);
  LLVM::LLVMFunctionType type = fn.getFunctionType();
  SmallVector<mlir::Type> params(type.getParams());
  params.append(count, i64);
  fn.setFunctionTypeAttr(
      TypeAttr::get(LLVM::LLVMFunctionType::get(type.getReturnType(), params, type.isVarArg())));
  if (ArrayAttr argAttrs = fn.getArgAttrsAttr()) {
    SmallVector<Attribute> attrs(argAttrs.begin(), argAttrs.end());
    attrs.append(count, DictionaryAttr::get(ctx));
    fn.setArgAttrsAttr(ArrayAttr::get(ctx, attrs));
  }
  for (unsigned i = 0; i < count; ++i)
    fn.getBody().front().addArgument(i64, fn.getLoc());
}

/// Appends `args` to `call`'s operands and argument attributes.
void appendCallArgs(LLVM::CallOp call, ValueRange args) {
  call.getCalleeOperandsMutable().append(args);
  if (ArrayAttr argAttrs = call.getArgAttrsAttr()) {
    SmallVector<Attribute> attrs(argAttrs.begin(), argAttrs.end());
    attrs.append(args.size(), DictionaryAttr::get(call.getContext()));
    call.setArgAttrsAttr(ArrayAttr::get(call.getContext(), attrs));
  }
}

class StackBuilder {
public:
  StackBuilder(gpu::GPUModuleOp module, const PTXLoweringState &state, StackFailure fail)
      : module(module), state(state), fail(fail), ctx(module.getContext()),
        i32(IntegerType::get(ctx, 32)), i64(IntegerType::get(ctx, 64)),
        globalPtr(LLVM::LLVMPointerType::get(ctx, state.addressSpaces.global)),
        scope(state.target.syncScopeName(Scope::GPU)) {}

  /// Gives `fn` its frame on the stack: (top, end) parameters, a check
  /// that the frame fits, its allocas at their offsets in it. Returns the
  /// top past the frame and the end, for the calls it makes.
  FailureOr<std::pair<Value, Value>> placeFrame(LLVM::LLVMFuncOp fn);
  /// Takes a slot around the root call `call` and passes it its stack.
  void wrapRootCall(LLVM::CallOp call);

private:
  Value c64(OpBuilder &b, Location loc, int64_t v) { return intConst(b, loc, i64, v); }
  /// The linear id of the calling thread in the grid: where slot probing
  /// starts, so that threads running at once mostly start apart.
  Value linearThreadId(OpBuilder &b, Location loc);
  /// The address of slot `slot`'s flag.
  Value flagAt(OpBuilder &b, Location loc, Value flags, Value slot) {
    Value base = LLVM::IntToPtrOp::create(b, loc, globalPtr, flags);
    return LLVM::GEPOp::create(b, loc, globalPtr, i32, base, ValueRange{slot});
  }
  /// The module's state, declared on first use.
  Value stateAddress(OpBuilder &b, Location loc);

  gpu::GPUModuleOp module;
  const PTXLoweringState &state;
  StackFailure fail;
  MLIRContext *ctx;
  mlir::Type i32, i64;
  LLVM::LLVMPointerType globalPtr;
  std::string scope;
};

Value StackBuilder::stateAddress(OpBuilder &b, Location loc) {
  auto words = LLVM::LLVMArrayType::get(i64, 4);
  auto global = module.lookupSymbol<LLVM::GlobalOp>(kLocalStackStateName);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto zeros = DenseElementsAttr::get(RankedTensorType::get({4}, i64),
                                        ArrayRef<int64_t>{0, 0, 0, 0});
    global = LLVM::GlobalOp::create(b, loc, words, /*isConstant=*/false, LLVM::Linkage::External,
                                    kLocalStackStateName, zeros, /*alignment=*/8,
                                    state.addressSpaces.global);
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

Value StackBuilder::linearThreadId(OpBuilder &b, Location loc) {
  auto id = [&](Value index) -> Value { return arith::IndexCastUIOp::create(b, loc, i64, index); };
  using gpu::Dimension;
  Value tx = id(gpu::ThreadIdOp::create(b, loc, Dimension::x));
  Value ty = id(gpu::ThreadIdOp::create(b, loc, Dimension::y));
  Value tz = id(gpu::ThreadIdOp::create(b, loc, Dimension::z));
  Value nx = id(gpu::BlockDimOp::create(b, loc, Dimension::x));
  Value ny = id(gpu::BlockDimOp::create(b, loc, Dimension::y));
  Value nz = id(gpu::BlockDimOp::create(b, loc, Dimension::z));
  Value bx = id(gpu::BlockIdOp::create(b, loc, Dimension::x));
  Value by = id(gpu::BlockIdOp::create(b, loc, Dimension::y));
  Value bz = id(gpu::BlockIdOp::create(b, loc, Dimension::z));
  Value gx = id(gpu::GridDimOp::create(b, loc, Dimension::x));
  Value gy = id(gpu::GridDimOp::create(b, loc, Dimension::y));
  IntArithBuilder a{b, loc};
  Value thread = a.addi(tx, a.muli(nx, a.addi(ty, a.muli(ny, tz))));
  Value block = a.addi(bx, a.muli(gx, a.addi(by, a.muli(gy, bz))));
  return a.addi(a.muli(block, a.muli(nx, a.muli(ny, nz))), thread);
}

FailureOr<std::pair<Value, Value>> StackBuilder::placeFrame(LLVM::LLVMFuncOp fn) {
  appendI64Params(fn, 2);
  Block *entry = &fn.getBody().front();
  Value sp = entry->getArgument(entry->getNumArguments() - 2);
  Value end = entry->getArgument(entry->getNumArguments() - 1);

  // 1. The frame: each alloca at its alignment, in the order they appear.
  DataLayout layout = DataLayout::closest(fn);
  SmallVector<std::pair<LLVM::AllocaOp, int64_t>> slots;
  int64_t frameBytes = 0, frameAlign = kFrameAlign;
  WalkResult walked = fn.walk([&](LLVM::AllocaOp alloca) {
    APInt count;
    if (!matchPattern(alloca.getArraySize(), m_ConstantInt(&count))) {
      alloca.emitError("unsupported local memory of a run-time size in recursive function '")
          << fn.getName() << "' on target '" << state.target.getName() << "'";
      return WalkResult::interrupt();
    }
    int64_t align = alloca.getAlignment().value_or(0);
    if (align <= 0)
      align = static_cast<int64_t>(layout.getTypeABIAlignment(alloca.getElemType()));
    int64_t bytes = static_cast<int64_t>(layout.getTypeSize(alloca.getElemType())) *
                    count.getSExtValue();
    frameBytes = llvm::alignTo(frameBytes, align);
    slots.push_back({alloca, frameBytes});
    frameBytes += bytes;
    frameAlign = std::max(frameAlign, align);
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  if (slots.empty())
    return std::make_pair(sp, end);
  frameBytes = llvm::alignTo(frameBytes, kFrameAlign);

  // 2. The frame's base and the top past it, and the check that it fits
  //    (before anything else the function does).
  Location loc = fn.getLoc();
  Block *body = entry->splitBlock(entry->begin());
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(entry);
  IntArithBuilder a{b, loc};
  Value base = a.andi(a.addi(sp, a.c64(frameAlign - 1)), a.c64(-frameAlign));
  Value top = a.addi(base, a.c64(frameBytes));
  Value over = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, top, end);
  Block *overflow = b.createBlock(body);
  fail(b, loc, /*noSlot=*/false);
  b.setInsertionPointToEnd(entry);
  cf::CondBranchOp::create(b, loc, over, overflow, ValueRange{}, body, ValueRange{});

  // 3. Each alloca is its place in the frame.
  for (auto [alloca, offset] : slots) {
    b.setInsertionPoint(alloca);
    Value address = offset ? arith::AddIOp::create(b, alloca.getLoc(), base,
                                                   intConst(b, alloca.getLoc(), i64, offset))
                                 .getResult()
                           : base;
    Value ptr = LLVM::IntToPtrOp::create(b, alloca.getLoc(), alloca.getType(), address);
    alloca.replaceAllUsesWith(ptr);
    alloca.erase();
  }
  return std::make_pair(top, end);
}

void StackBuilder::wrapRootCall(LLVM::CallOp call) {
  // 1. The pool, and where this thread starts probing.
  Location loc = call.getLoc();
  OpBuilder b(call);
  IntArithBuilder a{b, loc};
  Value words = stateAddress(b, loc);
  auto word = [&](int32_t index) -> Value {
    Value address = index ? LLVM::GEPOp::create(b, loc, words.getType(), i64, words,
                                                ArrayRef<LLVM::GEPArg>{index})
                                .getResult()
                          : words;
    return LLVM::LoadOp::create(b, loc, i64, address, /*alignment=*/8);
  };
  Value flags = word(0), stacks = word(1), slotBytes = word(2), count = word(3);
  Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, count, a.c64(0));
  Value divisor = arith::SelectOp::create(b, loc, none, a.c64(1), count);
  Value start = arith::RemUIOp::create(b, loc, linearThreadId(b, loc), divisor);

  // 2. Probe: head(slot, tries) gives up after `count` tries; a free flag
  //    swapped to 1 is the thread's slot, else the next one (wrapping).
  Block *before = call->getBlock();
  Block *after = before->splitBlock(call);
  Value slot = after->addArgument(i64, loc);
  Block *head = b.createBlock(after, {i64, i64}, {loc, loc});
  Block *probe = b.createBlock(after);
  Block *advance = b.createBlock(after);
  Block *exhausted = b.createBlock(after);
  b.setInsertionPointToEnd(before);
  cf::BranchOp::create(b, loc, head, ValueRange{start, a.c64(0)});

  b.setInsertionPointToEnd(head);
  Value at = head->getArgument(0), tries = head->getArgument(1);
  Value done = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tries, count);
  cf::CondBranchOp::create(b, loc, done, exhausted, ValueRange{}, probe, ValueRange{});

  b.setInsertionPointToEnd(probe);
  Value pair = LLVM::AtomicCmpXchgOp::create(
      b, loc, flagAt(b, loc, flags, at), intConst(b, loc, i32, 0), intConst(b, loc, i32, 1),
      LLVM::AtomicOrdering::acq_rel, LLVM::AtomicOrdering::monotonic, scope);
  Value taken = LLVM::ExtractValueOp::create(b, loc, pair, ArrayRef<int64_t>{1});
  cf::CondBranchOp::create(b, loc, taken, after, ValueRange{at}, advance, ValueRange{});

  b.setInsertionPointToEnd(advance);
  Value next = a.addi(at, a.c64(1));
  Value wrapped = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, next, count);
  next = arith::SelectOp::create(b, loc, wrapped, a.c64(0), next);
  cf::BranchOp::create(b, loc, head, ValueRange{next, a.addi(tries, a.c64(1))});

  b.setInsertionPointToEnd(exhausted);
  fail(b, loc, /*noSlot=*/true);

  // 3. The call gets the slot as its stack; the slot is free again after.
  b.setInsertionPoint(call);
  Value sp = a.addi(stacks, a.muli(slot, slotBytes));
  appendCallArgs(call, {sp, a.addi(sp, slotBytes)});
  b.setInsertionPointAfter(call);
  LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::xchg, flagAt(b, loc, flags, slot),
                            intConst(b, loc, i32, 0), LLVM::AtomicOrdering::release, scope);
}

} // namespace

LogicalResult zmlir::placeRecursiveLocalsOnStack(gpu::GPUModuleOp module,
                                                 const DenseSet<Operation *> &recursive,
                                                 const PTXLoweringState &state, StackFailure fail) {
  DenseSet<Operation *> users = stackUsers(module, recursive);
  if (users.empty())
    return success();
  // Only calls name them (indirect calls are switches of direct ones by now).
  for (Operation *fn : users)
    if (std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(fn, module))
      for (const SymbolTable::SymbolUse &use : *uses)
        if (!isa<LLVM::CallOp>(use.getUser()))
          return use.getUser()->emitError("unsupported use of recursive function '")
                 << cast<LLVM::LLVMFuncOp>(fn).getName() << "' with local memory on target '"
                 << state.target.getName() << "'";
  SmallVector<LLVM::CallOp> calls;
  module.walk([&](LLVM::CallOp call) {
    std::optional<StringRef> name = call.getCallee();
    Operation *callee = name ? module.lookupSymbol(*name) : nullptr;
    if (callee && users.contains(callee))
      calls.push_back(call);
  });
  StackBuilder builder(module, state, fail);
  DenseMap<Operation *, std::pair<Value, Value>> stacks;
  // Sorted by name: the same code in every compile.
  SmallVector<LLVM::LLVMFuncOp> sorted;
  for (Operation *fn : users)
    sorted.push_back(cast<LLVM::LLVMFuncOp>(fn));
  llvm::sort(sorted,
             [](LLVM::LLVMFuncOp x, LLVM::LLVMFuncOp y) { return x.getName() < y.getName(); });
  for (LLVM::LLVMFuncOp fn : sorted) {
    FailureOr<std::pair<Value, Value>> stack = builder.placeFrame(fn);
    if (failed(stack))
      return failure();
    stacks[fn] = *stack;
  }
  for (LLVM::CallOp call : calls) {
    auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
    auto stack = caller ? stacks.find(caller) : stacks.end();
    if (stack != stacks.end())
      appendCallArgs(call, {stack->second.first, stack->second.second});
    else
      builder.wrapRootCall(call);
  }
  return success();
}
