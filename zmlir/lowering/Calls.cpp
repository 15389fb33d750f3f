//===- Calls.cpp - call, indirect calls -----------------------------------===//
//
// Direct calls of the module's device functions, and the expansion of
// function addresses and indirect calls (a switch over the address-taken
// functions), which run before the patterns, and the call graph's cycles
// (recursion), which targets that run it bounded or not at all look at after
// them.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

#include <functional>

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

LLVM::LLVMFuncOp zmlir::declareFunction(OpBuilder &b, Operation *user, StringRef name,
                                        LLVM::LLVMFunctionType type) {
  auto module = user->getParentOfType<gpu::GPUModuleOp>();
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, user->getLoc(), name, type);
}

//===----------------------------------------------------------------------===//
// Recursion
//===----------------------------------------------------------------------===//

llvm::DenseMap<Operation *, llvm::SmallVector<Operation *>>
zmlir::definedCallees(gpu::GPUModuleOp module) {
  SymbolTable symbols(module);
  DenseMap<Operation *, SmallVector<Operation *>> callees;
  for (Operation &fn : module.getBody()->getOperations()) {
    auto device = dyn_cast<LLVM::LLVMFuncOp>(fn);
    if (!isa<gpu::GPUFuncOp>(fn) && !(device && !device.isExternal()))
      continue;
    SmallVector<Operation *> &called = callees[&fn];
    fn.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> name = call.getCallee();
      auto callee = name ? symbols.lookup<LLVM::LLVMFuncOp>(*name) : LLVM::LLVMFuncOp();
      if (callee && !callee.isExternal())
        called.push_back(callee);
    });
  }
  return callees;
}

llvm::DenseSet<Operation *> zmlir::reachedFunctions(
    Operation *fn, const llvm::DenseMap<Operation *, llvm::SmallVector<Operation *>> &callees) {
  DenseSet<Operation *> seen;
  SmallVector<Operation *> work(callees.lookup(fn));
  while (!work.empty()) {
    Operation *next = work.pop_back_val();
    if (seen.insert(next).second)
      llvm::append_range(work, callees.lookup(next));
  }
  return seen;
}

llvm::DenseSet<Operation *> zmlir::recursiveFunctions(gpu::GPUModuleOp module) {
  // A function is on a cycle when it reaches itself.
  DenseMap<Operation *, SmallVector<Operation *>> callees = definedCallees(module);
  llvm::DenseSet<Operation *> recursive;
  for (auto &entry : callees)
    if (reachedFunctions(entry.first, callees).contains(entry.first))
      recursive.insert(entry.first);
  return recursive;
}

LLVM::CallOp zmlir::callClosingCycle(gpu::GPUModuleOp module, Operation *root) {
  // Depth first from `root`: a call of a function still on the walk's path
  // closes a cycle.
  enum class Mark { OnPath, Done };
  DenseMap<Operation *, Mark> marks;
  std::function<LLVM::CallOp(Operation *)> visit = [&](Operation *fn) -> LLVM::CallOp {
    marks[fn] = Mark::OnPath;
    LLVM::CallOp closing;
    fn->walk([&](LLVM::CallOp call) {
      std::optional<StringRef> name = call.getCallee();
      auto callee = name ? module.lookupSymbol<LLVM::LLVMFuncOp>(*name) : LLVM::LLVMFuncOp();
      if (!callee || callee.isExternal())
        return WalkResult::advance();
      auto mark = marks.find(callee);
      if (mark != marks.end() && mark->second == Mark::OnPath)
        closing = call;
      else if (mark == marks.end())
        closing = visit(callee);
      return closing ? WalkResult::interrupt() : WalkResult::advance();
    });
    marks[fn] = Mark::Done;
    return closing;
  };
  return visit(root);
}

//===----------------------------------------------------------------------===//
// Function addresses and indirect calls
//===----------------------------------------------------------------------===//

LogicalResult zmlir::expandIndirectCalls(gpu::GPUModuleOp module, const PTXLoweringState &state) {
  // 1. The address-taken functions, sorted by name: the index is the
  //    address (after kFuncAddressBase), the same in every compile of the
  //    module.
  SmallVector<FuncAddrOp> addrs;
  module.walk([&](FuncAddrOp op) { addrs.push_back(op); });
  SmallVector<CallIndirectOp> calls;
  module.walk([&](CallIndirectOp op) { calls.push_back(op); });
  if (addrs.empty() && calls.empty())
    return success();
  std::vector<std::string> names;
  for (FuncAddrOp op : addrs) {
    StringRef name = op.getCallee();
    if (!module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return op.emitError("unsupported address of '")
             << name << "' (not a .func defined in this module)";
    names.push_back(name.str());
  }
  llvm::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (FuncAddrOp op : addrs) {
    OpBuilder b(op);
    uint64_t index = llvm::lower_bound(names, op.getCallee().str()) - names.begin();
    auto encoding = static_cast<int64_t>(kFuncAddressBase + index);
    // In a variable's initializer (buildAddressInitializer) it must be an
    // LLVM constant; in code an arith one like every other.
    Value address =
        op->getParentOfType<LLVM::GlobalOp>()
            ? LLVM::ConstantOp::create(b, op.getLoc(), b.getI64Type(), encoding).getResult()
            : intConst(b, op.getLoc(), b.getI64Type(), encoding);
    op.getResult().replaceAllUsesWith(address);
    op.erase();
  }
  // 2. Each indirect call: a switch over the functions of its signature,
  //    each case a direct call; the default case traps, like a call through
  //    a bad pointer on NVIDIA's GPUs.
  for (CallIndirectOp call : calls) {
    if (call.getNumResults() > 1)
      return call.emitError("unsupported indirect call with more than one return value");
    Location loc = call.getLoc();
    Block *before = call->getBlock();
    Block *after = before->splitBlock(call);
    SmallVector<Location> locs(call.getNumResults(), loc);
    after->addArguments(call.getResultTypes(), locs);
    Region *region = before->getParent();
    OpBuilder b(call.getContext());
    SmallVector<APInt> values;
    SmallVector<Block *> cases;
    for (auto [index, name] : llvm::enumerate(names)) {
      auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      LLVM::LLVMFunctionType type = fn.getFunctionType();
      bool resultMatches = call.getNumResults() == 0
                               ? isa<LLVM::LLVMVoidType>(type.getReturnType())
                               : type.getReturnType() == call.getResult(0).getType();
      if (!resultMatches ||
          type.getParams() != ArrayRef<mlir::Type>(llvm::to_vector(call.getArgs().getTypes())))
        continue;
      Block *block = b.createBlock(region, Region::iterator(after));
      auto direct = CallOp::create(b, loc, call.getResultTypes(), name, call.getArgs(),
                                   call.getUni());
      cf::BranchOp::create(b, loc, after, direct.getResults());
      values.push_back(APInt(64, kFuncAddressBase + index));
      cases.push_back(block);
    }
    Block *bad = b.createBlock(region, Region::iterator(after));
    state.target.emitTrap(b, loc, state);
    b.setInsertionPointToEnd(before);
    SmallVector<ValueRange> noOperands(cases.size(), ValueRange{});
    cf::SwitchOp::create(b, loc, call.getCallee(), bad, ValueRange{}, values, cases, noOperands);
    call.replaceAllUsesWith(after->getArguments());
    call.erase();
  }
  return success();
}

namespace {

struct CallOpLowering : PTXPattern<CallOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CallOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (op.getNumResults() > 1)
      return unsupported(op, "call with more than one return value");
    // A `.extern .func` (malloc, vprintf, ...) has no body to call here.
    if (!SymbolTable::lookupNearestSymbolFrom<LLVM::LLVMFuncOp>(op, op.getCalleeAttr()))
      return unsupported(op, Twine("call of '") + op.getCallee() +
                                 "' (not a .func defined in this module)");
    auto call = LLVM::CallOp::create(rewriter, op.getLoc(), op.getResultTypes(), op.getCalleeAttr(),
                                     adaptor.getArgs());
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

} // namespace

void zmlir::populatePTXCallPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<CallOpLowering>(patterns.getContext(), state);
}
