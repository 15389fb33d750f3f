//===- NVPTXFixups.cpp - NVPTX's LLVM module fix-ups ------------*- C++ -*-===//
//
// What the NVPTX target does to the LLVM module translated from its
// gpu.module before LLVM's NVPTX backend sees it (Target.llvm_fixups).
//
//===----------------------------------------------------------------------===//

#include "zmlir/targets/CodeEmission.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Support/AtomicOrdering.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// LLVM's InstCombine makes an `add` of values with no bit in common an
/// `or disjoint` (an index `j * 128 + lane * 4`), and NVPTX's instruction
/// selection then emits `or.b32` (it makes such adds ors itself, too). ptxas
/// folds adds into its address and multiply-add arithmetic, not ors: nvcc's
/// PTX has the add (llm.c's layernorm_backward_kernel9, 2912 SASS
/// instructions with the ors, 2806 with adds). So once LLVM's optimizations
/// are done each `or disjoint` of two i32 or i64 registers becomes inline PTX
/// `add` (equal: no carries), which the backend keeps; one with a constant
/// stays an `or`, which the backend may fold into an address offset.
void zmlir::addNVPTXDisjointOrs(llvm::Module &module) {
  for (llvm::Function &function : module) {
    for (llvm::Instruction &inst : llvm::make_early_inc_range(llvm::instructions(function))) {
      auto *disjoint = llvm::dyn_cast<llvm::PossiblyDisjointInst>(&inst);
      if (!disjoint || !disjoint->isDisjoint())
        continue;
      llvm::Type *type = inst.getType();
      bool wide = type->isIntegerTy(64);
      if (!wide && !type->isIntegerTy(32))
        continue;
      llvm::Value *x = inst.getOperand(0), *y = inst.getOperand(1);
      if (llvm::isa<llvm::Constant>(x) || llvm::isa<llvm::Constant>(y))
        continue;
      auto *asmType = llvm::FunctionType::get(type, {type, type}, /*isVarArg=*/false);
      auto *add = llvm::InlineAsm::get(asmType,
                                       wide ? "add.s64 $0, $1, $2;" : "add.s32 $0, $1, $2;",
                                       wide ? "=l,l,l" : "=r,r,r", /*hasSideEffects=*/false);
      llvm::IRBuilder<> builder(&inst);
      llvm::CallInst *call = builder.CreateCall(asmType, add, {x, y}, inst.getName());
      call->setDoesNotAccessMemory();
      call->setDoesNotThrow();
      inst.replaceAllUsesWith(call);
      inst.eraseFromParent();
    }
  }
}

/// A predicated `@!p not.b32 r, r` (CUB's match of a radix digit in a warp:
/// a ballot per bit, inverted where the thread's bit is clear) reaches LLVM
/// as `p ? b : ~b`, which InstCombine makes `b ^ sext(!p)`. NVPTX's selection
/// then computes the predicate twice (`setp.eq` for the sext; `shr`, `and`
/// and `setp.ne` for the ballot's operand) and emits `selp` and `xor`; ptxas
/// makes a select of `b` and `~b` nvcc's predicated LOP3. So once LLVM's
/// optimizations are done each `b ^ sext(q)`, q an i1 and b an i32 or i64
/// register, becomes `q ? ~b : b` (`p ? b : ~b` where q is `!p`).
void zmlir::selectNVPTXConditionalNots(llvm::Module &module) {
  using namespace llvm::PatternMatch;
  for (llvm::Function &function : module) {
    for (llvm::Instruction &inst : llvm::make_early_inc_range(llvm::instructions(function))) {
      llvm::Value *value = nullptr, *condition = nullptr;
      llvm::Instruction *mask = nullptr;
      if (!inst.getType()->isIntegerTy(32) && !inst.getType()->isIntegerTy(64))
        continue;
      if (!match(&inst, m_c_Xor(m_CombineAnd(m_Instruction(mask), m_SExt(m_Value(condition))),
                                m_Value(value))) ||
          !condition->getType()->isIntegerTy(1) || llvm::isa<llvm::Constant>(value))
        continue;
      llvm::IRBuilder<> builder(&inst);
      llvm::Value *inverted = builder.CreateNot(value);
      llvm::Value *predicate = nullptr;
      llvm::Value *select = match(condition, m_Not(m_Value(predicate)))
                                ? builder.CreateSelect(predicate, value, inverted, inst.getName())
                                : builder.CreateSelect(condition, inverted, value, inst.getName());
      inst.replaceAllUsesWith(select);
      inst.eraseFromParent();
      if (mask->use_empty())
        mask->eraseFromParent();
      auto *negation = llvm::dyn_cast<llvm::Instruction>(condition);
      if (predicate && negation && negation->use_empty())
        negation->eraseFromParent();
    }
  }
}

/// InstCombine folds `(x + G) + k`, G the generic address of a variable (the
/// shared window's `ptrtoint (addrspacecast @__zmlir_shared_window)`), into
/// `x + (G + k)`: a constant expression per offset k, which NVPTX's
/// selection materializes once per block and shares among the adds that
/// use it, so each such address is an add of two registers (`x + (G+64)`)
/// that ptxas cannot fold into a load's offset, and keeps in registers of
/// its own. nvcc's PTX has `x + G` once and `[%rd+64]` (dmmaTensorCoreGemm's
/// compute_dgemm hoists 96 such wmma.load addresses out of its loop: 168
/// registers where nvcc's PTX takes 96). So once LLVM's optimizations are
/// done each `add x, (C + k)`, C a constant other than an integer and x
/// not a constant, becomes `add (add x, C), k`.
void zmlir::splitNVPTXConstantOffsets(llvm::Module &module) {
  for (llvm::Function &function : module) {
    for (llvm::Instruction &inst : llvm::make_early_inc_range(llvm::instructions(function))) {
      auto *add = llvm::dyn_cast<llvm::BinaryOperator>(&inst);
      if (!add || add->getOpcode() != llvm::Instruction::Add)
        continue;
      for (unsigned index = 0; index < 2; ++index) {
        llvm::Value *x = add->getOperand(1 - index);
        auto *sum = llvm::dyn_cast<llvm::ConstantExpr>(add->getOperand(index));
        if (llvm::isa<llvm::Constant>(x) || !sum || sum->getOpcode() != llvm::Instruction::Add)
          continue;
        auto *base = sum->getOperand(0);
        auto *offset = llvm::dyn_cast<llvm::ConstantInt>(sum->getOperand(1));
        if (!offset || llvm::isa<llvm::ConstantInt>(base))
          continue;
        llvm::IRBuilder<> builder(add);
        llvm::Value *withBase = builder.CreateAdd(x, base);
        add->replaceAllUsesWith(builder.CreateAdd(withBase, offset, add->getName()));
        add->eraseFromParent();
        break;
      }
    }
  }
}

/// Globals the ptx-to-std lowering marked `ptx.managed` (__managed__), as
/// LLVM's NVPTX backend reads them: a `!nvvm.annotations` entry
/// `!{ptr addrspace(1) @x, !"managed", i32 1}`, printed as
/// `.global .attribute(.managed)`.
llvm::Error zmlir::annotateNVPTXManagedGlobals(gpu::GPUModuleOp gpuModule,
                                               llvm::Module &llvmModule) {
  llvm::LLVMContext &context = llvmModule.getContext();
  for (auto global : gpuModule.getOps<LLVM::GlobalOp>()) {
    if (!global->hasAttr("ptx.managed"))
      continue;
    llvm::GlobalVariable *variable = llvmModule.getGlobalVariable(global.getSymName(),
                                                                  /*AllowInternal=*/true);
    if (!variable)
      return makeError("managed variable '" + global.getSymName() +
                       "' is missing from the LLVM IR");
    llvm::Metadata *entry[] = {
        llvm::ConstantAsMetadata::get(variable), llvm::MDString::get(context, "managed"),
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1))};
    llvmModule.getOrInsertNamedMetadata("nvvm.annotations")
        ->addOperand(llvm::MDNode::get(context, entry));
  }
  return llvm::Error::success();
}

/// A kernel's performance directives (`.maxntid`, `.reqntid`,
/// `.minnctapersm`, `.maxnreg`: `ptx.*` attributes the ptx-to-std lowering
/// keeps on it) as the function attributes LLVM's NVPTX backend prints them
/// from (`"nvvm.maxntid"="256,1,1"`, `"nvvm.minctasm"="2"`, ...). Without
/// them ptxas took as many registers as a block of 1024 threads allows where
/// nvcc's PTX bounds the block (llm.c's `__launch_bounds__` kernels).
llvm::Error zmlir::annotateNVPTXLaunchBounds(gpu::GPUModuleOp gpuModule, llvm::Module &llvmModule) {
  static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral> directives[] = {
      {"ptx.maxntid", "nvvm.maxntid"},
      {"ptx.reqntid", "nvvm.reqntid"},
      {"ptx.minnctapersm", "nvvm.minctasm"},
      {"ptx.maxnreg", "nvvm.maxnreg"}};
  for (auto fn : gpuModule.getOps<LLVM::LLVMFuncOp>()) {
    llvm::Function *function = llvmModule.getFunction(fn.getSymName());
    if (!function)
      continue;
    for (auto [directive, attribute] : directives) {
      auto values = fn->getAttrOfType<DenseI64ArrayAttr>(directive);
      if (!values || values.empty())
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      llvm::interleave(values.asArrayRef(), os, ",");
      function->addFnAttr(attribute, text);
    }
  }
  return llvm::Error::success();
}

/// LLVM 22's NVPTX backend emits every atomicrmw as a relaxed `atom` at
/// .gpu scope, whatever its ordering and syncscope: an ordered or
/// system-scope one would come out weaker than the PTX asked for. The
/// ptx-to-std lowering gives NVPTX atomicrmw only for relaxed .gpu atom/red
/// and inline PTX for the rest (NVPTXTargetInfo::hasNativeAtomic); this keeps anything
/// else from reaching the backend.
llvm::Error zmlir::checkNVPTXAtomicRMWs(gpu::GPUModuleOp, llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::SyncScope::ID device = context.getOrInsertSyncScopeID("device");
  llvm::SyncScope::ID block = context.getOrInsertSyncScopeID("block");
  llvm::SyncScope::ID cluster = context.getOrInsertSyncScopeID("cluster");
  for (llvm::Function &fn : module)
    for (llvm::Instruction &inst : llvm::instructions(fn)) {
      auto *rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst);
      if (!rmw)
        continue;
      llvm::SyncScope::ID scope = rmw->getSyncScopeID();
      if (rmw->getOrdering() == llvm::AtomicOrdering::Monotonic &&
          (scope == device || scope == block || scope == cluster))
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      rmw->print(os);
      return makeError("internal error: NVPTX would emit '" + llvm::StringRef(text).trim() +
                       "' in '" + fn.getName() +
                       "' as a relaxed .gpu atom (LLVM 22 drops an atomicrmw's ordering "
                       "and scope)");
    }
  return llvm::Error::success();
}

/// The PTX NVPTX recompiles comes from a compiler that unrolled its loops
/// already (NVVM, `.pragma "nounroll"` where it chose not to), and ptxas
/// unrolls again as it sees fit; LLVM's runtime unrolling, which NVPTX's
/// unrolling preferences ask for, unrolled such a loop a second time with
/// a remainder (llm.c's layernorm_forward_kernel1: 761 SASS instructions
/// against nvcc's 597, 683 without). Every loop gets
/// `llvm.loop.unroll.runtime.disable` in its loop id (kept with what the
/// id had: the nounroll markers' `llvm.loop.unroll.disable`); loops of a
/// known trip count may still be unrolled.
llvm::Error zmlir::disableNVPTXRuntimeUnrolling(gpu::GPUModuleOp, llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::MDNode *runtimeDisable = llvm::MDNode::get(
      context, llvm::MDString::get(context, "llvm.loop.unroll.runtime.disable"));
  for (llvm::Function &fn : module) {
    if (fn.isDeclaration())
      continue;
    llvm::DominatorTree dominators(fn);
    llvm::LoopInfo loops(dominators);
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      llvm::SmallVector<llvm::Metadata *> operands = {nullptr};
      if (llvm::MDNode *old = loop->getLoopID())
        operands.append(old->op_begin() + 1, old->op_end());
      operands.push_back(runtimeDisable);
      auto *id = llvm::MDNode::getDistinct(context, operands);
      id->replaceOperandWith(0, id);
      loop->setLoopID(id);
    }
  }
  return llvm::Error::success();
}
