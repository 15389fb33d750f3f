//===- SPIRVSpinWaits.cpp - A block's spin loops take turns -----*- C++ -*-===//
//
// Intel's OpenCL CPU runtime runs a work-group's work-items one after
// another between work-group barriers, so a thread that spins on shared
// memory until another thread of its block writes it never sees the write:
// the writer runs after the spinner, which never ends. Real code does this:
// libcu++'s cuda::barrier below sm_80 (arrive, then poll the barrier's word
// with ld.acquire.cta) and cooperative groups' multi-warp tiles at sm_90
// (warps poll a word in %reserved_smem while the last one to arrive
// reduces).
//
// The fix-up `spirv-spin-waits` makes such a kernel take turns. A spin loop
// is a loop that writes no memory (but its own private slots) and reads
// shared memory with an atomic or volatile load. Each thread runs until it
// would poll again (a spin loop's back edge), reaches a work-group barrier,
// or returns; it then waits at one work-group collective, the turn, which
// counts the threads spinning, those that left a spin loop since the last
// turn, those that returned, and those that saw the module's trap word set.
// While some thread spins, the spinning threads poll again and the others
// wait at the turn; once none does, the threads at barriers go on past them
// (the turn was the barrier: every thread that has not returned waits
// there); once all have returned, the kernel returns. Every thread meets
// every turn, so the one barrier of the kernel is uniform, as the runtime
// needs. A kernel whose threads all poll, turn after turn, with none getting
// out of its loop is deadlocked (polls of shared memory see what the block
// wrote, and a spinning thread writes nothing): after kSpinTurnLimit such
// turns it fails the launch through the trap word instead of hanging.
//
// A thread goes on from where it left off through one dispatch block, a
// switch that every loop holding such a place also goes back through, so
// the CFG stays reducible (Intel's vectorizer takes no irreducible loop).
// Values that lived across the new edges are demoted to private slots
// first and promoted back afterwards (LLVM's reg2mem and mem2reg).
//
// The same turns give a kernel whose threads may reach its barriers apart
// what PTX defines (barriersMayDiverge): a thread that exits is no longer
// waited for, and `barrier.sync` waits for a count of arrivals at any
// barrier of its number. Intel's runtime needs every work-item at the same
// barrier: `if (i >= n) return;` before `__syncthreads()` left the others'
// work after the barrier undone (cuda-samples' shfl_scan has it), and
// NVIDIA's cuFFT's rows past a batch that skip barriers got garbage.
//
// A kernel is left as it is where this cannot be exact: a spin loop or a
// work-group barrier in a function it calls, a function it calls that runs
// sub-group operations (the warp-matrix emulation's), or a work-group
// collective of its own.
//
//===----------------------------------------------------------------------===//

#include "zmlir/targets/CodeEmission.h"
#include "zmlir/targets/spirv/SPIRVNames.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"

using namespace mlir;

namespace {

/// Turns in a row at which threads spun and none got out of its loop before
/// the kernel counts as deadlocked. A loop could also end on a clock (a
/// timed wait), so not the first such turn.
constexpr uint64_t kSpinTurnLimit = 1 << 16;
/// OpenCL C's barrier() flags: local and global memory fences.
constexpr uint64_t kLocalAndGlobalFence = 3;
/// SPIR-V's Subgroup scope (OpControlBarrier's execution scope).
constexpr uint64_t kSubgroupScope = 3;
/// The turn's count of one kind of thread: 16 bits of a 64-bit sum (a block
/// has at most 1024 threads).
constexpr unsigned kSpinningShift = 0, kProgressShift = 16, kReturnedShift = 32, kTrappedShift = 48;

/// The declarations of OpenCL's work-item functions that read no memory
/// and of its sub-group collectives, which a spin loop may call.
bool isReadOnlyBuiltin(const llvm::Function &callee) {
  llvm::StringRef name = callee.getName();
  return callee.isDeclaration() &&
         (callee.onlyReadsMemory() || name.contains("get_") || name.contains("sub_group_") ||
          name == "_Z17clock_read_devicev");
}

/// Whether `call` waits for the whole work-group (a barrier or a work-group
/// collective).
bool isWorkGroupSync(const llvm::CallBase &call) {
  const llvm::Function *callee = call.getCalledFunction();
  if (!callee)
    return false;
  llvm::StringRef name = callee->getName();
  if (name == "_Z22__spirv_ControlBarrieriii") {
    auto *scope = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(0));
    return !scope || scope->getZExtValue() != kSubgroupScope;
  }
  return name == "_Z7barrierj" || name.contains("work_group_") || name.starts_with("__spirv_Group");
}

bool isBarrier(const llvm::CallBase &call) {
  const llvm::Function *callee = call.getCalledFunction();
  return callee && callee->getName() == "_Z7barrierj";
}

/// Whether the address `v` may point into shared memory (the Workgroup
/// storage class, address space 3): PTX addresses are integers, so through
/// integer math as well as casts and GEPs.
bool mayAddressShared(llvm::Value *v) {
  llvm::SmallVector<llvm::Value *> worklist{v};
  llvm::SmallPtrSet<llvm::Value *, 16> seen;
  while (!worklist.empty()) {
    llvm::Value *value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto *type = llvm::dyn_cast<llvm::PointerType>(value->getType());
        type && type->getAddressSpace() == 3)
      return true;
    if (auto *gep = llvm::dyn_cast<llvm::GEPOperator>(value)) {
      worklist.push_back(gep->getPointerOperand());
    } else if (auto *cast = llvm::dyn_cast<llvm::CastInst>(value)) {
      worklist.push_back(cast->getOperand(0));
    } else if (auto *binary = llvm::dyn_cast<llvm::BinaryOperator>(value)) {
      worklist.append({binary->getOperand(0), binary->getOperand(1)});
    } else if (auto *phi = llvm::dyn_cast<llvm::PHINode>(value)) {
      worklist.append(phi->value_op_begin(), phi->value_op_end());
    } else if (auto *select = llvm::dyn_cast<llvm::SelectInst>(value)) {
      worklist.append({select->getTrueValue(), select->getFalseValue()});
    }
  }
  return false;
}

bool isPrivateSlot(llvm::Value *pointer) {
  return llvm::isa<llvm::AllocaInst>(pointer->stripPointerCasts());
}

/// Whether `load` polls shared memory: an atomic or volatile load of it.
bool isPoll(llvm::LoadInst &load) {
  return (load.isAtomic() || load.isVolatile()) && mayAddressShared(load.getPointerOperand());
}

/// Whether `value`, computed in `loop`, depends on a poll of shared memory
/// made in the loop.
bool dependsOnPoll(llvm::Value *value, const llvm::Loop &loop) {
  llvm::SmallVector<llvm::Value *> worklist{value};
  llvm::SmallPtrSet<llvm::Value *, 16> seen;
  while (!worklist.empty()) {
    auto *inst = llvm::dyn_cast<llvm::Instruction>(worklist.pop_back_val());
    if (!inst || !loop.contains(inst) || !seen.insert(inst).second)
      continue;
    if (auto *load = llvm::dyn_cast<llvm::LoadInst>(inst)) {
      if (isPoll(*load))
        return true;
      continue;
    }
    worklist.append(inst->op_begin(), inst->op_end());
  }
  return false;
}

/// Whether a spin loop may hold `inst`: it writes nothing but private
/// slots, and calls only builtins that read (a sub-group barrier, which is
/// the warp's collective, too).
bool mayRunInSpinLoop(llvm::Instruction &inst) {
  if (llvm::isa<llvm::LoadInst, llvm::FenceInst>(inst))
    return true;
  if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst))
    return isPrivateSlot(store->getPointerOperand());
  if (auto *intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&inst))
    return !intrinsic->mayWriteToMemory() || intrinsic->isLifetimeStartOrEnd();
  if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
    const llvm::Function *callee = call->getCalledFunction();
    return callee && !isWorkGroupSync(*call) &&
           (isReadOnlyBuiltin(*callee) || callee->getName() == "_Z22__spirv_ControlBarrieriii");
  }
  return !inst.mayWriteToMemory();
}

/// Whether `loop` is a spin loop: it writes nothing but private slots, and
/// whether it ends depends on what it polls of shared memory (a loop that
/// reads shared memory a number of times is not one).
bool isSpinLoop(const llvm::Loop &loop) {
  bool polls = false;
  llvm::SmallVector<llvm::BasicBlock *> exiting;
  loop.getExitingBlocks(exiting);
  for (llvm::BasicBlock *block : exiting)
    if (auto *branch = llvm::dyn_cast<llvm::BranchInst>(block->getTerminator());
        branch && branch->isConditional())
      polls |= dependsOnPoll(branch->getCondition(), loop);
  for (llvm::BasicBlock *block : loop.blocks())
    for (llvm::Instruction &inst : *block)
      if (!mayRunInSpinLoop(inst))
        return false;
  return polls;
}

/// Whether `function`, not inlined, runs sub-group operations: Intel's
/// runtime then runs the lanes of a sub-group one after another between the
/// caller's sub-group barriers (wmma.mma's emulation, MatrixOps.cpp), which
/// needs them together there; in turns they are not (cuBLAS's d884
/// tensor-op DGEMM gave wrong products while mma.sync's function read the
/// lane itself).
bool usesSubGroups(const llvm::Function &function) {
  return !function.isDeclaration() &&
         llvm::any_of(llvm::instructions(function), [](const llvm::Instruction &inst) {
           auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
           const llvm::Function *callee = call ? call->getCalledFunction() : nullptr;
           return callee && callee->getName().contains("sub_group");
         });
}

/// Whether `function` or a function it calls waits for the work-group or
/// spins.
bool syncsOrSpins(const llvm::Function &function,
                  llvm::SmallPtrSetImpl<const llvm::Function *> &seen) {
  if (function.isDeclaration() || !seen.insert(&function).second)
    return false;
  for (const llvm::Instruction &inst : llvm::instructions(function)) {
    auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
    if (!call)
      continue;
    if (isWorkGroupSync(*call))
      return true;
    if (const llvm::Function *callee = call->getCalledFunction();
        callee && syncsOrSpins(*callee, seen))
      return true;
  }
  llvm::DominatorTree dominators(const_cast<llvm::Function &>(function));
  llvm::LoopInfo loops(dominators);
  return llvm::any_of(loops.getLoopsInPreorder(),
                      [](llvm::Loop *loop) { return isSpinLoop(*loop); });
}

/// OpenCL's builtins whose answer is the same for a work-group's work-items.
constexpr llvm::StringLiteral kWorkGroupUniformBuiltins[] = {
    "get_group_id",       "get_local_size",         "get_global_size",
    "get_num_groups",     "get_global_offset",      "get_work_dim",
    "get_enqueued_local", "get_max_sub_group_size", "get_num_sub_groups"};

/// Whether a thread of the work-group may see `inst`'s value differ from
/// another's, given the values already known to (`varying`): the ids, what
/// private or polled memory holds, atomics, calls of code we do not see;
/// and what is computed from such a value.
bool mayVary(const llvm::Instruction &inst, const llvm::DenseSet<const llvm::Value *> &varying) {
  if (llvm::any_of(inst.operands(),
                   [&](const llvm::Use &use) { return varying.contains(use.get()); }))
    return true;
  if (llvm::isa<llvm::AllocaInst, llvm::AtomicRMWInst, llvm::AtomicCmpXchgInst>(inst))
    return true;
  if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst))
    return load->isVolatile() || load->isAtomic();
  if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
    if (llvm::isa<llvm::IntrinsicInst>(call))
      return call->mayWriteToMemory();
    const llvm::Function *callee = call->getCalledFunction();
    if (!callee || !callee->isDeclaration())
      return true;
    // OpenCL's builtins, whose declarations carry no memory effects: the
    // work-item ids and what collectives, atomics and clocks answer vary;
    // the work-group's id and sizes do not, and the math functions vary with
    // their arguments alone.
    llvm::StringRef name = callee->getName();
    if (llvm::any_of(kWorkGroupUniformBuiltins,
                     [&](llvm::StringRef uniform) { return name.contains(uniform); }))
      return false;
    return name.contains("_id") || name.contains("group_") || name.contains("Group") ||
           name.contains("atom") || name.contains("Atomic") || name.contains("clock");
  }
  return false;
}

/// The blocks a thread may run after `branch` before the threads that took
/// its other ways meet again (its immediate post-dominator, `join`, which
/// is null where they meet only at the kernel's end), `join` not included.
llvm::SmallPtrSet<llvm::BasicBlock *, 16> divergentRegion(llvm::Instruction *branch,
                                                          llvm::BasicBlock *join) {
  llvm::SmallPtrSet<llvm::BasicBlock *, 16> region;
  llvm::SmallVector<llvm::BasicBlock *> worklist(llvm::successors(branch));
  while (!worklist.empty()) {
    llvm::BasicBlock *block = worklist.pop_back_val();
    if (block == join || !region.insert(block).second)
      continue;
    worklist.append(llvm::succ_begin(block), llvm::succ_end(block));
  }
  return region;
}

/// Whether `kernel`'s threads may reach its work-group barriers apart: a
/// branch on a value that may differ between them (the thread id, say)
/// leads to a barrier, or to a return that others pass barriers after,
/// before its ways meet again. PTX defines both: an exited thread is no
/// longer waited for, and `barrier.sync` waits for a count of arrivals at
/// any barrier of the same number; Intel's runtime needs every work-item
/// at the same barrier (an early `if (i >= n) return;` left every thread's
/// work after the barrier undone).
bool barriersMayDiverge(llvm::Function &kernel) {
  if (llvm::none_of(llvm::instructions(kernel), [](llvm::Instruction &inst) {
        auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
        return call && isWorkGroupSync(*call);
      }))
    return false;
  // A kernel whose threads synchronise through shared memory as well (an
  // mbarrier, whose waits are barriers in a loop until the phase they poll
  // turns) keeps its barriers: its loops' ends depend on what every thread
  // reads alike, not on the thread. (Atomics on shared memory without a
  // poll, a histogram's, are no such synchronisation.)
  if (llvm::any_of(llvm::instructions(kernel), [](llvm::Instruction &inst) {
        auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst);
        return load && isPoll(*load);
      }))
    return false;
  llvm::PostDominatorTree postDominators(kernel);
  auto joinOf = [&](llvm::BasicBlock *block) -> llvm::BasicBlock * {
    llvm::DomTreeNode *node = postDominators.getNode(block);
    return node && node->getIDom() ? node->getIDom()->getBlock() : nullptr;
  };
  llvm::DenseSet<const llvm::Value *> varying;
  auto isVaryingBranch = [&](llvm::Instruction *terminator) {
    if (auto *branch = llvm::dyn_cast<llvm::BranchInst>(terminator))
      return branch->isConditional() && varying.contains(branch->getCondition());
    if (auto *choice = llvm::dyn_cast<llvm::SwitchInst>(terminator))
      return varying.contains(choice->getCondition());
    return terminator->getNumSuccessors() > 1;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (llvm::Instruction &inst : llvm::instructions(kernel))
      if (!varying.contains(&inst) && mayVary(inst, varying))
        changed |= varying.insert(&inst).second;
    // A phi where the ways of a varying branch meet varies (what each
    // thread merges depends on the way it took).
    for (llvm::BasicBlock &block : kernel) {
      if (!isVaryingBranch(block.getTerminator()))
        continue;
      llvm::BasicBlock *join = joinOf(&block);
      auto region = divergentRegion(block.getTerminator(), join);
      if (join)
        region.insert(join);
      for (llvm::BasicBlock *inside : region)
        for (llvm::PHINode &phi : inside->phis())
          changed |= varying.insert(&phi).second;
    }
  }
  for (llvm::BasicBlock &block : kernel) {
    if (!isVaryingBranch(block.getTerminator()))
      continue;
    for (llvm::BasicBlock *inside : divergentRegion(block.getTerminator(), joinOf(&block)))
      for (llvm::Instruction &inst : *inside)
        if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst); call && isWorkGroupSync(*call))
          return true;
  }
  return false;
}

/// A loop whose back edges the rewrite moves: where they went and the
/// terminators that took them (terminators, not blocks: splitting a block
/// at a barrier moves its terminator to the new block).
struct MovedLoop {
  llvm::BasicBlock *header;
  llvm::SmallVector<llvm::Instruction *> latches;
};

struct SpinLoop : MovedLoop {
  /// The edges out of the loop: its terminators and where they go.
  llvm::SmallVector<std::pair<llvm::Instruction *, llvm::BasicBlock *>> exits;
};

/// What a kernel's turns need to know, found before its CFG changes.
struct KernelTurns {
  llvm::SmallVector<SpinLoop> spins;
  llvm::SmallVector<llvm::CallInst *> barriers;
  llvm::SmallVector<llvm::ReturnInst *> returns;
  /// The other loops that hold a spin loop or a barrier: a thread resumes
  /// inside them after a turn, so their back edges go through the
  /// dispatch too, which keeps the CFG reducible (Intel's vectorizer takes
  /// no irreducible loop: its warps would fall apart).
  llvm::SmallVector<MovedLoop> loops;
};

MovedLoop movedLoop(const llvm::Loop &loop) {
  MovedLoop moved{loop.getHeader(), {}};
  llvm::SmallVector<llvm::BasicBlock *> latches;
  loop.getLoopLatches(latches);
  for (llvm::BasicBlock *latch : latches)
    moved.latches.push_back(latch->getTerminator());
  return moved;
}

/// The kernel's spin loops, barriers, returns and the loops around them;
/// nothing where the kernel has no spin loop or cannot take turns.
std::optional<KernelTurns> findTurns(llvm::Function &kernel) {
  llvm::DominatorTree dominators(kernel);
  llvm::LoopInfo loops(dominators);
  KernelTurns turns;
  llvm::SmallPtrSet<llvm::Loop *, 8> spinLoops;
  for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
    if (!isSpinLoop(*loop))
      continue;
    SpinLoop spin{movedLoop(*loop), {}};
    llvm::SmallVector<llvm::Loop::Edge> exits;
    loop->getExitEdges(exits);
    for (auto [from, to] : exits)
      spin.exits.emplace_back(const_cast<llvm::BasicBlock *>(from)->getTerminator(),
                              const_cast<llvm::BasicBlock *>(to));
    turns.spins.push_back(std::move(spin));
    spinLoops.insert(loop);
  }
  if (turns.spins.empty() && !barriersMayDiverge(kernel))
    return std::nullopt;
  for (llvm::Instruction &inst : llvm::instructions(kernel)) {
    if (auto *ret = llvm::dyn_cast<llvm::ReturnInst>(&inst)) {
      turns.returns.push_back(ret);
      continue;
    }
    auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
    if (!call)
      continue;
    if (isWorkGroupSync(*call)) {
      // A barrier with other memory fences, or a collective, is not one
      // the turn can stand for.
      auto *flags = isBarrier(*call) ? llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(0))
                                     : nullptr;
      if (!flags || (flags->getZExtValue() & ~kLocalAndGlobalFence) ||
          !llvm::isa<llvm::CallInst>(call))
        return std::nullopt;
      turns.barriers.push_back(llvm::cast<llvm::CallInst>(call));
      continue;
    }
    llvm::SmallPtrSet<const llvm::Function *, 8> seen;
    if (const llvm::Function *callee = call->getCalledFunction();
        callee && (syncsOrSpins(*callee, seen) || usesSubGroups(*callee)))
      return std::nullopt;
  }
  llvm::SmallVector<llvm::BasicBlock *> resumed;
  for (SpinLoop &spin : turns.spins)
    resumed.push_back(spin.header);
  for (llvm::CallInst *barrier : turns.barriers)
    resumed.push_back(barrier->getParent());
  for (llvm::Loop *loop : loops.getLoopsInPreorder())
    if (!spinLoops.contains(loop) &&
        llvm::any_of(resumed, [&](llvm::BasicBlock *block) { return loop->contains(block); }))
      turns.loops.push_back(movedLoop(*loop));
  return turns;
}

/// Moves every value used outside its block, and every phi, to a private
/// slot (reg2mem), so that the CFG can change freely; returns the slots.
llvm::SmallVector<llvm::AllocaInst *> demoteToSlots(llvm::Function &function) {
  llvm::BasicBlock &entry = function.getEntryBlock();
  llvm::BasicBlock::iterator slotPoint = entry.getFirstInsertionPt();
  llvm::SmallVector<llvm::Instruction *> escaping;
  llvm::SmallVector<llvm::PHINode *> phis;
  for (llvm::Instruction &inst : llvm::instructions(function)) {
    // A phi used elsewhere is demoted twice, as LLVM's reg2mem does: its
    // value, then its incoming values.
    if (auto *phi = llvm::dyn_cast<llvm::PHINode>(&inst))
      phis.push_back(phi);
    if (llvm::isa<llvm::AllocaInst>(inst) && inst.getParent() == &entry)
      continue;
    if (llvm::any_of(inst.users(), [&](llvm::User *user) {
          auto *use = llvm::cast<llvm::Instruction>(user);
          return use->getParent() != inst.getParent() || llvm::isa<llvm::PHINode>(use);
        }))
      escaping.push_back(&inst);
  }
  llvm::SmallVector<llvm::AllocaInst *> slots;
  for (llvm::Instruction *inst : escaping)
    slots.push_back(llvm::DemoteRegToStack(*inst, false, slotPoint));
  for (llvm::PHINode *phi : phis)
    slots.push_back(llvm::DemotePHIToStack(phi, slotPoint));
  return slots;
}

llvm::FunctionCallee declareBuiltin(llvm::Module &module, llvm::StringRef name, llvm::Type *result,
                                    llvm::ArrayRef<llvm::Type *> params, bool convergent) {
  llvm::FunctionCallee callee = module.getOrInsertFunction(
      name, llvm::FunctionType::get(result, params, false));
  auto *function = llvm::cast<llvm::Function>(callee.getCallee());
  function->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  if (convergent)
    function->addFnAttr(llvm::Attribute::Convergent);
  return callee;
}

llvm::CallInst *callBuiltin(llvm::IRBuilder<> &b, llvm::FunctionCallee callee,
                            llvm::ArrayRef<llvm::Value *> args) {
  llvm::CallInst *call = b.CreateCall(callee, args);
  call->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  if (llvm::cast<llvm::Function>(callee.getCallee())->isConvergent())
    call->setConvergent();
  return call;
}

llvm::GlobalVariable *trapWord(llvm::Module &module) {
  if (auto *word = module.getGlobalVariable(zmlir::spirv::kTrapWordName))
    return word;
  llvm::Type *i32 = llvm::Type::getInt32Ty(module.getContext());
  auto *word = new llvm::GlobalVariable(module, i32, false, llvm::GlobalValue::ExternalLinkage,
                                        llvm::ConstantInt::get(i32, 0), zmlir::spirv::kTrapWordName,
                                        nullptr, llvm::GlobalValue::NotThreadLocal, 1);
  word->setAlignment(llvm::Align(4));
  return word;
}

/// Moves the entry block's allocas to its top and the rest of it to a
/// block of its own, which it returns.
llvm::BasicBlock *splitEntry(llvm::Function &kernel) {
  llvm::BasicBlock &entry = kernel.getEntryBlock();
  llvm::SmallVector<llvm::AllocaInst *> allocas;
  for (llvm::Instruction &inst : entry)
    if (auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst))
      allocas.push_back(alloca);
  llvm::Instruction *top = &*entry.begin();
  for (llvm::AllocaInst *alloca : allocas)
    if (alloca != top)
      alloca->moveBefore(top->getIterator());
  llvm::BasicBlock::iterator first = entry.begin();
  while (llvm::isa<llvm::AllocaInst>(*first))
    ++first;
  return entry.splitBasicBlock(first, "zmlir.turn.start");
}

/// Rewrites `kernel` to take turns (see the file comment). Every place a
/// thread goes on from is entered through one dispatch block (a switch on
/// where it left off), the header of every loop that holds one: the CFG
/// stays reducible.
void takeTurns(llvm::Function &kernel, KernelTurns &turns) {
  llvm::Module &module = *kernel.getParent();
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  llvm::Type *i64 = llvm::Type::getInt64Ty(context);
  llvm::Type *voidType = llvm::Type::getVoidTy(context);

  // Past each barrier a block of its own (before the demotion, which then
  // sees the values used across the barrier).
  llvm::SmallVector<llvm::BasicBlock *> pastBarriers;
  for (llvm::CallInst *barrier : turns.barriers)
    pastBarriers.push_back(
        barrier->getParent()->splitBasicBlock(barrier->getNextNode(), "zmlir.turn.past"));
  llvm::SmallVector<llvm::AllocaInst *> slots = demoteToSlots(kernel);
  llvm::BasicBlock *start = splitEntry(kernel);

  // Where a thread goes on from: spin loop i's header (i), past barrier j
  // (spins + j), out (spins + barriers: it waits at the turns until all
  // have returned), a moved loop's header, the kernel's start, the first
  // turn.
  uint64_t spinCount = turns.spins.size();
  uint64_t returned = spinCount + turns.barriers.size();
  uint64_t firstLoop = returned + 1;
  uint64_t started = firstLoop + turns.loops.size();
  uint64_t firstTurn = started + 1;
  llvm::BasicBlock &entry = kernel.getEntryBlock();
  llvm::IRBuilder<> b(entry.getTerminator());
  llvm::AllocaInst *resume = b.CreateAlloca(i32, nullptr, "zmlir.turn.resume");
  llvm::AllocaInst *progressed = b.CreateAlloca(i32, nullptr, "zmlir.turn.progressed");
  llvm::AllocaInst *stuckTurns = b.CreateAlloca(i32, nullptr, "zmlir.turn.stuck");
  slots.append({resume, progressed, stuckTurns});
  // The first turn follows the threads' first run: progress.
  b.CreateStore(b.getInt32(1), progressed);
  b.CreateStore(b.getInt32(0), stuckTurns);
  b.CreateStore(b.getInt32(firstTurn), resume);

  auto *dispatch = llvm::BasicBlock::Create(context, "zmlir.turn.dispatch", &kernel);
  auto *turn = llvm::BasicBlock::Create(context, "zmlir.turn", &kernel);
  auto *exit = llvm::BasicBlock::Create(context, "zmlir.turn.exit", &kernel);
  llvm::ReturnInst::Create(context, exit);
  entry.getTerminator()->replaceSuccessorWith(start, dispatch);
  auto leaveFor = [&](llvm::BasicBlock *to, uint64_t index, llvm::StringRef name) {
    auto *block = llvm::BasicBlock::Create(context, name, &kernel);
    llvm::IRBuilder<> at(block);
    at.CreateStore(at.getInt32(index), resume);
    at.CreateBr(to);
    return block;
  };

  for (auto [index, spin] : llvm::enumerate(turns.spins)) {
    llvm::BasicBlock *yield = leaveFor(turn, index, "zmlir.turn.spin");
    for (llvm::Instruction *latch : spin.latches)
      latch->replaceSuccessorWith(spin.header, yield);
    for (auto [from, to] : spin.exits) {
      auto *left = llvm::BasicBlock::Create(context, "zmlir.turn.left", &kernel);
      llvm::IRBuilder<> leftAt(left);
      leftAt.CreateStore(leftAt.getInt32(1), progressed);
      leftAt.CreateBr(to);
      from->replaceSuccessorWith(to, left);
    }
  }
  for (auto [index, loop] : llvm::enumerate(turns.loops)) {
    llvm::BasicBlock *again = leaveFor(dispatch, firstLoop + index, "zmlir.turn.loop");
    for (llvm::Instruction *latch : loop.latches)
      latch->replaceSuccessorWith(loop.header, again);
  }
  for (auto [index, barrier] : llvm::enumerate(turns.barriers)) {
    llvm::BasicBlock *at = barrier->getParent();
    at->getTerminator()->eraseFromParent();
    barrier->eraseFromParent();
    llvm::IRBuilder<> atEnd(at);
    atEnd.CreateStore(atEnd.getInt32(spinCount + index), resume);
    atEnd.CreateBr(turn);
  }
  for (llvm::ReturnInst *ret : turns.returns) {
    llvm::IRBuilder<> at(ret);
    at.CreateStore(at.getInt32(returned), resume);
    at.CreateBr(turn);
    ret->eraseFromParent();
  }

  llvm::IRBuilder<> d(dispatch);
  llvm::SwitchInst *toResume = d.CreateSwitch(d.CreateLoad(i32, resume), exit);
  for (auto [index, spin] : llvm::enumerate(turns.spins))
    toResume->addCase(d.getInt32(index), spin.header);
  for (auto [index, past] : llvm::enumerate(pastBarriers))
    toResume->addCase(d.getInt32(spinCount + index), past);
  for (auto [index, loop] : llvm::enumerate(turns.loops))
    toResume->addCase(d.getInt32(firstLoop + index), loop.header);
  toResume->addCase(d.getInt32(started), start);
  // Every thread starts at a turn (a barrier before any work is no barrier
  // at all), so that no code runs before the kernel's first barrier: Intel's
  // barrier pass lost the values of the threads that came later in a block
  // that code both before the first barrier and past a turn reach. Through
  // the dispatch, which stays the loop's header: with the turn as the
  // header, Intel's vectorizer gave up on some kernels.
  toResume->addCase(d.getInt32(firstTurn), leaveFor(turn, started, "zmlir.turn.first"));

  // The turn: a barrier (it orders memory, which the collective need not),
  // then one sum of every thread's state.
  llvm::FunctionCallee barrierFn = declareBuiltin(module, "_Z7barrierj", voidType, {i32},
                                                  /*convergent=*/true);
  llvm::FunctionCallee reduceFn = declareBuiltin(module, "_Z21work_group_reduce_addl", i64, {i64},
                                                 /*convergent=*/true);
  llvm::FunctionCallee localSizeFn = declareBuiltin(module, "_Z14get_local_sizej", i64, {i32},
                                                    /*convergent=*/false);
  llvm::GlobalVariable *trap = trapWord(module);

  llvm::IRBuilder<> t(turn);
  llvm::Value *where = t.CreateLoad(i32, resume, "resume");
  llvm::Value *spinning = t.CreateICmpULT(where, t.getInt32(spinCount));
  llvm::Value *isReturned = t.CreateICmpEQ(where, t.getInt32(returned));
  llvm::Value *progress = t.CreateLoad(i32, progressed);
  t.CreateStore(t.getInt32(0), progressed);
  llvm::LoadInst *trapValue = t.CreateLoad(i32, trap);
  trapValue->setVolatile(true);
  llvm::Value *sawTrap = t.CreateICmpNE(trapValue, t.getInt32(0));
  auto field = [&](llvm::Value *flag, unsigned shift) {
    return t.CreateShl(t.CreateZExt(flag, i64), shift);
  };
  llvm::Value *state = t.CreateOr(
      {field(spinning, kSpinningShift), t.CreateShl(t.CreateZExt(progress, i64), kProgressShift),
       field(isReturned, kReturnedShift), field(sawTrap, kTrappedShift)});
  callBuiltin(t, barrierFn, {t.getInt32(kLocalAndGlobalFence)});
  llvm::Value *sum = callBuiltin(t, reduceFn, {state});
  auto count = [&](unsigned shift) {
    return t.CreateAnd(t.CreateLShr(sum, shift), t.getInt64(0xffff));
  };
  llvm::Value *threads = t.getInt64(1);
  for (unsigned dim = 0; dim < 3; ++dim)
    threads = t.CreateMul(threads, callBuiltin(t, localSizeFn, {t.getInt32(dim)}));
  llvm::Value *allReturned = t.CreateICmpEQ(count(kReturnedShift), threads);
  llvm::Value *trapped = t.CreateICmpNE(count(kTrappedShift), t.getInt64(0));
  auto *goOn = llvm::BasicBlock::Create(context, "zmlir.turn.go_on", &kernel);
  t.CreateCondBr(t.CreateOr(allReturned, trapped), exit, goOn);

  // Nobody spins: the threads at barriers go past them; those that
  // returned wait.
  t.SetInsertPoint(goOn);
  auto *pastBarrier = llvm::BasicBlock::Create(context, "zmlir.turn.past_barrier", &kernel);
  auto *someSpin = llvm::BasicBlock::Create(context, "zmlir.turn.some_spin", &kernel);
  t.CreateCondBr(t.CreateICmpEQ(count(kSpinningShift), t.getInt64(0)), pastBarrier, someSpin);
  t.SetInsertPoint(pastBarrier);
  t.CreateCondBr(isReturned, turn, dispatch);

  // Some spin: they poll again, the others wait; a turn with no progress
  // counts toward the deadlock limit.
  t.SetInsertPoint(someSpin);
  llvm::Value *stuck = t.CreateSelect(t.CreateICmpEQ(count(kProgressShift), t.getInt64(0)),
                                      t.CreateAdd(t.CreateLoad(i32, stuckTurns), t.getInt32(1)),
                                      t.getInt32(0));
  t.CreateStore(stuck, stuckTurns);
  auto *deadlocked = llvm::BasicBlock::Create(context, "zmlir.turn.deadlocked", &kernel);
  auto *poll = llvm::BasicBlock::Create(context, "zmlir.turn.poll", &kernel);
  t.CreateCondBr(t.CreateICmpUGE(stuck, t.getInt32(kSpinTurnLimit)), deadlocked, poll);
  t.SetInsertPoint(deadlocked);
  t.CreateAtomicRMW(llvm::AtomicRMWInst::Xchg, trap, t.getInt32(zmlir::spirv::kTrapDeadlocked),
                    llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
  t.CreateBr(exit);
  t.SetInsertPoint(poll);
  t.CreateCondBr(spinning, dispatch, turn);

  llvm::DominatorTree dominators(kernel);
  llvm::SmallVector<llvm::AllocaInst *> promotable;
  for (llvm::AllocaInst *slot : slots)
    if (llvm::isAllocaPromotable(slot))
      promotable.push_back(slot);
  llvm::PromoteMemToReg(promotable, dominators);
}

} // namespace

llvm::Error zmlir::turnSPIRVSpinWaits(gpu::GPUModuleOp, llvm::Module &module) {
  for (llvm::Function &function : module) {
    if (function.isDeclaration() || function.getCallingConv() != llvm::CallingConv::SPIR_KERNEL)
      continue;
    if (std::optional<KernelTurns> turns = findTurns(function))
      takeTurns(function, *turns);
  }
  return llvm::Error::success();
}
