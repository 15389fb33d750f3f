//===- SPIRVFixups.cpp - SPIR-V's LLVM module fix-ups -----------*- C++ -*-===//
//
// What the SPIR-V target does to the LLVM module translated from its
// gpu.module before LLVM's SPIR-V backend sees it (Target.llvm_fixups).
//
//===----------------------------------------------------------------------===//

#include "zmlir/targets/CodeEmission.h"
#include "zmlir/targets/spirv/SPIRVNames.h"

#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SCCIterator.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/CallGraph.h"
#include "llvm/Analysis/ConstantFolding.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"

#include <algorithm>

using namespace mlir;

/// The most elements (or members) one composite constant gets. A SPIR-V
/// instruction is at most 65535 words and LLVM's SPIR-V backend emits a
/// constant array as one OpConstantComposite of a word per element; a longer
/// one needs SPV_INTEL_long_composites (continued instructions), which not
/// every consumer has.
static constexpr size_t kMaxCompositeElements = 16384;

/// `parts` as one literal struct, or nested ones, of at most
/// kMaxCompositeElements members each. Either the struct is packed or the
/// parts are arrays of one element type (or structs of them): no member is
/// padded, and the bytes are the parts' in order.
static llvm::Constant *group(llvm::LLVMContext &context, llvm::ArrayRef<llvm::Constant *> parts,
                             bool packed) {
  if (parts.size() <= kMaxCompositeElements)
    return llvm::ConstantStruct::getAnon(context, parts, packed);
  llvm::SmallVector<llvm::Constant *> groups;
  for (size_t i = 0; i < parts.size(); i += kMaxCompositeElements)
    groups.push_back(llvm::ConstantStruct::getAnon(
        context, parts.slice(i, std::min(kMaxCompositeElements, parts.size() - i)), packed));
  return group(context, groups, packed);
}

/// `init` with each array of more than kMaxCompositeElements elements
/// (itself, or a member of a struct) split into a struct of shorter arrays
/// of the same bytes; `init` itself when none is.
static llvm::Constant *splitLongArrays(llvm::Constant *init) {
  llvm::LLVMContext &context = init->getContext();
  if (auto *data = llvm::dyn_cast<llvm::ConstantDataArray>(init)) {
    uint64_t count = data->getNumElements();
    if (count <= kMaxCompositeElements)
      return init;
    llvm::Type *element = data->getElementType();
    uint64_t size = data->getElementByteSize();
    llvm::StringRef bytes = data->getRawDataValues();
    llvm::SmallVector<llvm::Constant *> parts;
    for (uint64_t i = 0; i < count; i += kMaxCompositeElements) {
      uint64_t n = std::min<uint64_t>(kMaxCompositeElements, count - i);
      parts.push_back(
          llvm::ConstantDataArray::getRaw(bytes.substr(i * size, n * size), n, element));
    }
    return group(context, parts, /*packed=*/false);
  }
  if (auto *array = llvm::dyn_cast<llvm::ConstantArray>(init)) {
    uint64_t count = array->getNumOperands();
    if (count <= kMaxCompositeElements)
      return init;
    llvm::Type *element = array->getType()->getElementType();
    llvm::SmallVector<llvm::Constant *> elements;
    for (llvm::Use &use : array->operands())
      elements.push_back(llvm::cast<llvm::Constant>(use.get()));
    llvm::SmallVector<llvm::Constant *> parts;
    for (uint64_t i = 0; i < count; i += kMaxCompositeElements) {
      uint64_t n = std::min<uint64_t>(kMaxCompositeElements, count - i);
      parts.push_back(llvm::ConstantArray::get(llvm::ArrayType::get(element, n),
                                               llvm::ArrayRef(elements).slice(i, n)));
    }
    return group(context, parts, /*packed=*/false);
  }
  if (auto *record = llvm::dyn_cast<llvm::ConstantStruct>(init)) {
    // The address initializers' packed structs: bytes between addresses,
    // as many members as it takes.
    bool packed = record->getType()->isPacked();
    llvm::SmallVector<llvm::Constant *> members;
    bool changed = packed && record->getNumOperands() > kMaxCompositeElements;
    for (llvm::Use &use : record->operands()) {
      members.push_back(splitLongArrays(llvm::cast<llvm::Constant>(use.get())));
      changed |= members.back() != use.get();
    }
    if (!changed)
      return init;
    if (packed)
      return group(context, members, /*packed=*/true);
    return llvm::ConstantStruct::getAnon(context, members, /*Packed=*/false);
  }
  return init;
}

/// Variables whose initializers hold arrays longer than one SPIR-V
/// composite constant takes (cuRAND's 100 KiB precalc_xorwow_matrix) get the
/// same bytes as a struct of shorter arrays. Code addresses them by byte
/// offsets, so only the variable's type changes.
llvm::Error zmlir::splitSPIRVLongInitializers(gpu::GPUModuleOp, llvm::Module &module) {
  llvm::SmallVector<llvm::GlobalVariable *> variables;
  for (llvm::GlobalVariable &variable : module.globals())
    variables.push_back(&variable);
  for (llvm::GlobalVariable *variable : variables) {
    if (!variable->hasInitializer())
      continue;
    llvm::Constant *init = variable->getInitializer();
    llvm::Constant *split = splitLongArrays(init);
    if (split == init)
      continue;
    auto *replacement = new llvm::GlobalVariable(
        module, split->getType(), variable->isConstant(), variable->getLinkage(), split, "",
        variable, variable->getThreadLocalMode(), variable->getAddressSpace(),
        variable->isExternallyInitialized());
    replacement->copyAttributesFrom(variable);
    replacement->takeName(variable);
    variable->replaceAllUsesWith(replacement);
    variable->eraseFromParent();
  }
  return llvm::Error::success();
}

/// LLVM 22's SPIR-V backend writes a module's variables as it writes its
/// first function: a module of variables only (NVIDIA's cuBLAS keeps
/// `cublas::internal::deviceConstants` in a fatbin image of its own, read
/// through cuLibraryGetGlobal) came out empty, and the variable was not
/// found. Such a module gets one empty exported function.
llvm::Error zmlir::keepSPIRVKernellessVariables(gpu::GPUModuleOp, llvm::Module &module) {
  bool anyVariable = llvm::any_of(module.globals(),
                                  [](const llvm::GlobalVariable &v) { return !v.isDeclaration(); });
  bool anyFunction = llvm::any_of(module,
                                  [](const llvm::Function &f) { return !f.isDeclaration(); });
  if (!anyVariable || anyFunction)
    return llvm::Error::success();
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(module.getContext()), false);
  auto *holder = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                        "__zmlir_spirv_module_variables", module);
  holder->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "", holder));
  builder.CreateRetVoid();
  return llvm::Error::success();
}

/// LLVM 22's SPIR-V backend folds `zext (trunc X to iN) to iM`, X wider than
/// iM, into an OpBitwiseAnd of the wide X with an iM mask: invalid SPIR-V
/// (operands narrower or wider than the result), which spirv-val rejects and
/// Intel's OpenCL compiler fails to link ("Invalid binary operator record";
/// CCCL's 16-bit reductions in CuPy's CUB module load an i64 and take its
/// 16-bit lanes). Each such zext becomes `and (trunc X to iM), mask`, the
/// same value, which the backend emits as an OpUConvert and an
/// OpBitwiseAnd of one width.
llvm::Error zmlir::narrowSPIRVZExtOfTrunc(gpu::GPUModuleOp, llvm::Module &module) {
  llvm::SmallVector<llvm::ZExtInst *> zexts;
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (auto *zext = llvm::dyn_cast<llvm::ZExtInst>(&inst))
        if (auto *trunc = llvm::dyn_cast<llvm::TruncInst>(zext->getOperand(0)))
          if (trunc->getOperand(0)->getType()->getScalarSizeInBits() >
              zext->getType()->getScalarSizeInBits())
            zexts.push_back(zext);
  for (llvm::ZExtInst *zext : zexts) {
    auto *trunc = llvm::cast<llvm::TruncInst>(zext->getOperand(0));
    llvm::IRBuilder<> builder(zext);
    llvm::Value *narrow = builder.CreateTrunc(trunc->getOperand(0), zext->getType());
    llvm::APInt mask = llvm::APInt::getLowBitsSet(zext->getType()->getScalarSizeInBits(),
                                                  trunc->getType()->getScalarSizeInBits());
    llvm::Value *masked = builder.CreateAnd(narrow, llvm::ConstantInt::get(zext->getType(), mask));
    masked->takeName(zext);
    zext->replaceAllUsesWith(masked);
    zext->eraseFromParent();
    if (trunc->use_empty())
      trunc->eraseFromParent();
  }
  return llvm::Error::success();
}

/// Whether `inst` synchronises: a convergent call of a declaration (a
/// barrier, a collective), a call of a function in `synchronising`, or an
/// indirect call, which may be either.
static bool synchronises(const llvm::Instruction &inst,
                         const llvm::SmallPtrSet<const llvm::Function *, 16> &synchronising) {
  auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
  if (!call || llvm::isa<llvm::IntrinsicInst>(call))
    return false;
  const llvm::Function *callee = call->getCalledFunction();
  if (!callee)
    return true;
  return callee->isDeclaration() ? call->isConvergent() : synchronising.contains(callee);
}

/// The functions that synchronise their work-items: each calls a convergent
/// declaration (a barrier, a sub-group operation), a function that does, or
/// a function it cannot see.
static llvm::SmallPtrSet<const llvm::Function *, 16> synchronisingFunctions(llvm::Module &module) {
  llvm::SmallPtrSet<const llvm::Function *, 16> synchronising;
  for (bool changed = true; changed;) {
    changed = false;
    for (llvm::Function &function : module) {
      if (function.isDeclaration() || synchronising.contains(&function))
        continue;
      bool syncs = llvm::any_of(llvm::instructions(function), [&](llvm::Instruction &inst) {
        return synchronises(inst, synchronising);
      });
      if (syncs)
        changed = synchronising.insert(&function).second;
    }
  }
  return synchronising;
}

/// The functions whose code can end up in one that synchronises: those that
/// synchronise and everything they call, directly or not. Intel inlines a
/// barrier-free callee into its synchronising caller before it places
/// values across barriers, so a callee's negation can live across the
/// caller's barrier.
static llvm::SmallPtrSet<const llvm::Function *, 16> functionsAroundBarriers(llvm::Module &module) {
  auto around = synchronisingFunctions(module);
  llvm::SmallVector<const llvm::Function *> worklist(around.begin(), around.end());
  while (!worklist.empty()) {
    const llvm::Function *function = worklist.pop_back_val();
    for (const llvm::Instruction &inst : llvm::instructions(function))
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst))
        if (const llvm::Function *callee = call->getCalledFunction();
            callee && !callee->isDeclaration() && around.insert(callee).second)
          worklist.push_back(callee);
  }
  return around;
}

/// Whether `inst` is a negation that LLVM's instcombine makes an `fneg`:
/// `fneg x`, `fsub -0.0, x`, `fmul x, -1.0` or `fdiv x, -1.0`.
static llvm::Value *negatedOperand(llvm::Instruction &inst) {
  auto isConstant = [](llvm::Value *value, auto predicate) {
    const llvm::APFloat *constant;
    return llvm::PatternMatch::match(value, llvm::PatternMatch::m_APFloat(constant)) &&
           predicate(*constant);
  };
  auto isMinusOne = [](const llvm::APFloat &value) { return value.isExactlyValue(-1.0); };
  auto isMinusZero = [](const llvm::APFloat &value) { return value.isNegZero(); };
  switch (inst.getOpcode()) {
  case llvm::Instruction::FNeg:
    return inst.getOperand(0);
  case llvm::Instruction::FSub:
    return isConstant(inst.getOperand(0), isMinusZero) ? inst.getOperand(1) : nullptr;
  case llvm::Instruction::FMul:
    if (isConstant(inst.getOperand(0), isMinusOne))
      return inst.getOperand(1);
    [[fallthrough]];
  case llvm::Instruction::FDiv:
    return isConstant(inst.getOperand(1), isMinusOne) ? inst.getOperand(0) : nullptr;
  default:
    return nullptr;
  }
}

/// The floating-point type of `type`'s shape whose bits `type` holds, if
/// `type` is an integer (or integer vector) of 16, 32 or 64 bits.
static llvm::Type *floatOfBits(llvm::Type *type) {
  auto *integer = llvm::dyn_cast<llvm::IntegerType>(type->getScalarType());
  if (!integer)
    return nullptr;
  llvm::LLVMContext &context = type->getContext();
  llvm::Type *element = integer->getBitWidth() == 16   ? llvm::Type::getHalfTy(context)
                        : integer->getBitWidth() == 32 ? llvm::Type::getFloatTy(context)
                        : integer->getBitWidth() == 64 ? llvm::Type::getDoubleTy(context)
                                                       : nullptr;
  if (!element)
    return nullptr;
  if (auto *vector = llvm::dyn_cast<llvm::VectorType>(type))
    return llvm::VectorType::get(element, vector->getElementCount());
  return element;
}

/// Whether `value` is a floating-point value's bits: a bitcast from it.
static bool isFloatBits(llvm::Value *value) {
  auto *cast = llvm::dyn_cast<llvm::BitCastInst>(value);
  return cast && cast->getSrcTy()->isFPOrFPVectorTy();
}

/// The operand number of the sign-bit mask of `inst`, an `xor` or `or` of a
/// float's bits that LLVM's instcombine makes `fneg x` or `fneg (fabs x)`
/// when the mask is a constant, or -1.
static int signMaskOperand(llvm::Instruction &inst) {
  if (inst.getOpcode() != llvm::Instruction::Xor && inst.getOpcode() != llvm::Instruction::Or)
    return -1;
  if (!floatOfBits(inst.getType()))
    return -1;
  bool feedsFloat = llvm::any_of(inst.users(), [](llvm::User *user) {
    auto *cast = llvm::dyn_cast<llvm::BitCastInst>(user);
    return cast && cast->getDestTy()->isFPOrFPVectorTy();
  });
  for (int i = 0; i < 2; ++i) {
    const llvm::APInt *mask;
    if (llvm::PatternMatch::match(inst.getOperand(i), llvm::PatternMatch::m_APInt(mask)) &&
        mask->isSignMask() && (feedsFloat || isFloatBits(inst.getOperand(1 - i))))
      return i;
  }
  return -1;
}

/// Whether `inst` is `copysign(x, c)` with a negative constant c, which
/// instcombine makes `fneg (fabs x)`.
static bool isNegativeCopysign(llvm::Instruction &inst) {
  auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
  const llvm::APFloat *sign;
  return call && call->getIntrinsicID() == llvm::Intrinsic::copysign &&
         llvm::PatternMatch::match(call->getArgOperand(1), llvm::PatternMatch::m_APFloat(sign)) &&
         sign->isNegative();
}

/// The operand number of a constant -1.0 arm of `inst`, a select between
/// floating-point values (instcombine makes `fmul (select c, -1.0, 1.0), x`
/// a select of `fneg x`), or -1.
static int minusOneArm(llvm::Instruction &inst) {
  if (!llvm::isa<llvm::SelectInst>(inst) || !inst.getType()->isFPOrFPVectorTy())
    return -1;
  for (int i = 1; i < 3; ++i) {
    const llvm::APFloat *arm;
    if (llvm::PatternMatch::match(inst.getOperand(i), llvm::PatternMatch::m_APFloat(arm)) &&
        arm->isExactlyValue(-1.0))
      return i;
  }
  return -1;
}

/// Intel's OpenCL CPU compiler keeps a value that lives across a barrier
/// once per work-item only where its analysis of which values depend on the
/// work-item (WIRelatedValue, intel/llvm's SYCLTransforms) says so, and that
/// analysis has a case per instruction kind but none for `fneg`: a negation
/// of a work-item's value made before a barrier and used after it is kept
/// once per work-group, and work-items read each other's (intel/llvm issue
/// 23220, open, found in another FFT; here NVIDIA's cuFFT,
/// vector_fft_symm_r2c<2048>: column n/4 of every row of a 2048-row R2C).
/// Its instcombine makes `fsub -0.0, x`, `fmul x, -1.0` and sign-bit xors
/// `fneg`s as well, and `fneg`s of sign-bit ors, of `copysign(x, -c)` and
/// of `fmul (select c, -1.0, 1.0), x` (a float's sign flipped through its
/// bits, PTX's neg.f16 and copysign, a sign chosen per work-item: wrong
/// values or Intel's compiler crashing in its
/// sycl-kernel-reduce-cross-barrier-values pass). So in functions that synchronise and in every
/// function they call (which Intel may inline into them: a `.func` negating for a kernel that
/// stores the result after bar.sync), each negation becomes `fsub z, x`, z a -0.0 that the function
/// reads back once from a volatile private variable: the same value for every x (NaNs' signs aside,
/// which PTX leaves unspecified, and with subnormals kept, as SPIR-V's default float mode does),
/// one Intel cannot fold, and a subtraction it classifies by its operands; the sign masks of those
/// xors and ors become z's bits, copysign's negative constant z, the select's -1.0 `z - 1.0`: the
/// same bits, none of them a constant to Intel.
llvm::Error zmlir::spirvOpaqueNegations(gpu::GPUModuleOp, llvm::Module &module) {
  auto around = functionsAroundBarriers(module);
  for (llvm::Function &function : module) {
    if (!around.contains(&function))
      continue;
    llvm::SmallVector<llvm::Instruction *> rewrites;
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (negatedOperand(inst) || signMaskOperand(inst) >= 0 || isNegativeCopysign(inst) ||
          minusOneArm(inst) >= 0)
        rewrites.push_back(&inst);
    if (rewrites.empty())
      continue;
    llvm::BasicBlock &entry = function.getEntryBlock();
    llvm::IRBuilder<> builder(&entry, entry.getFirstNonPHIOrDbgOrAlloca());
    llvm::Type *f32 = builder.getFloatTy();
    unsigned allocaSpace = module.getDataLayout().getAllocaAddrSpace();
    llvm::AllocaInst *slot = builder.CreateAlloca(f32, allocaSpace, nullptr, "minus_zero.slot");
    builder.CreateStore(llvm::ConstantFP::getNegativeZero(f32), slot, /*isVolatile=*/true);
    llvm::Value *minusZero = builder.CreateLoad(f32, slot, /*isVolatile=*/true, "minus_zero");
    // Values derived from the opaque -0.0 once, at entry, per type.
    llvm::DenseMap<llvm::Type *, llvm::Value *> minusZeros{{f32, minusZero}}, minusOnes, masks;
    auto minusZeroOf = [&](llvm::Type *type) {
      llvm::Type *element = type->getScalarType();
      llvm::Value *scalar = minusZeros.lookup(element);
      if (!scalar)
        minusZeros[element] = scalar = builder.CreateFPCast(minusZero, element);
      auto *vectorType = llvm::dyn_cast<llvm::VectorType>(type);
      if (!vectorType)
        return scalar;
      llvm::Value *vector = minusZeros.lookup(type);
      if (!vector)
        minusZeros[type] = vector = builder.CreateVectorSplat(vectorType->getElementCount(),
                                                              scalar);
      return vector;
    };
    auto minusOneOf = [&](llvm::Type *type) {
      llvm::Value *&value = minusOnes[type];
      if (!value) // -0.0 - 1.0 is -1.0 exactly
        value = builder.CreateFSub(minusZeroOf(type), llvm::ConstantFP::get(type, 1.0));
      return value;
    };
    auto signMaskOf = [&](llvm::Type *type) {
      llvm::Value *&value = masks[type];
      if (!value) // -0.0's bits: the sign bit alone
        value = builder.CreateBitCast(minusZeroOf(floatOfBits(type)), type);
      return value;
    };
    for (llvm::Instruction *inst : rewrites) {
      if (llvm::Value *negated = negatedOperand(*inst)) {
        llvm::Value *minusZeroOfType = minusZeroOf(inst->getType());
        llvm::IRBuilder<> at(inst);
        llvm::Value *difference = at.CreateFSub(minusZeroOfType, negated);
        difference->takeName(inst);
        inst->replaceAllUsesWith(difference);
        inst->eraseFromParent();
      } else if (int mask = signMaskOperand(*inst); mask >= 0) {
        inst->setOperand(mask, signMaskOf(inst->getType()));
      } else if (isNegativeCopysign(*inst)) {
        auto *call = llvm::cast<llvm::CallBase>(inst);
        call->setArgOperand(1, minusZeroOf(call->getArgOperand(1)->getType()));
      } else if (int arm = minusOneArm(*inst); arm >= 0) {
        inst->setOperand(arm, minusOneOf(inst->getType()));
      }
    }
  }
  return llvm::Error::success();
}

/// Whether `value` is the same in every iteration of `loop` and computed in
/// it without memory or calls (LICM could hoist it); its operands made
/// outside the loop go to `outside`.
static bool hoistable(llvm::Value *value, llvm::Loop *loop, unsigned depth,
                      llvm::SmallVectorImpl<llvm::Use *> &outside) {
  auto *inst = llvm::dyn_cast<llvm::Instruction>(value);
  if (!inst || !loop->contains(inst))
    return true;
  if (depth == 0 || llvm::isa<llvm::PHINode>(inst) || llvm::isa<llvm::CallBase>(inst) ||
      inst->mayReadOrWriteMemory() || inst->mayHaveSideEffects())
    return false;
  for (llvm::Use &use : inst->operands()) {
    auto *operand = llvm::dyn_cast<llvm::Instruction>(use.get());
    if (operand && !loop->contains(operand))
      outside.push_back(&use);
    else if (!hoistable(use.get(), loop, depth - 1, outside))
      return false;
  }
  return true;
}

/// Intel's OpenCL CPU compiler miscompiles a loop that holds a work-group
/// barrier and branches on a value the same in every iteration that depends
/// on the work-item: a persistent block's `for (;;) { if (tid == 0) ticket =
/// atomicAdd(...); __syncthreads(); ...; __syncthreads(); if (tid == 0)
/// flag = ...; }` never ends with 32 work-items or more, with the branch's
/// condition read again in the loop it ends (cuSOLVER's
/// csrqr_leftLooking_cta_byLevels_core, cuda-samples' cuSolverSp_LowlevelQR,
/// hung; test_spirv_loop_conditions.py). So in such a loop a branch on a
/// value made outside it, or computed in it from values made outside it
/// (which Intel's LICM hoists), reads those values back from volatile
/// private slots written where they are made: the same value for each
/// work-item, and none Intel can take for the loop's.
llvm::Error zmlir::spirvOpaqueLoopConditions(gpu::GPUModuleOp, llvm::Module &module) {
  constexpr unsigned kDepth = 8;
  auto synchronising = synchronisingFunctions(module);
  unsigned allocaSpace = module.getDataLayout().getAllocaAddrSpace();
  for (llvm::Function &function : module) {
    if (!synchronising.contains(&function))
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    // Uses of values made outside a synchronising loop that its branches reach.
    llvm::SetVector<llvm::Use *> rewrites;
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      bool syncs = llvm::any_of(loop->blocks(), [&](llvm::BasicBlock *block) {
        return llvm::any_of(
            *block, [&](llvm::Instruction &inst) { return synchronises(inst, synchronising); });
      });
      if (!syncs)
        continue;
      for (llvm::BasicBlock *block : loop->blocks()) {
        llvm::Instruction *terminator = block->getTerminator();
        auto *branch = llvm::dyn_cast<llvm::BranchInst>(terminator);
        if (!llvm::isa<llvm::SwitchInst>(terminator) && !(branch && branch->isConditional()))
          continue;
        llvm::Use &condition = terminator->getOperandUse(0);
        auto *made = llvm::dyn_cast<llvm::Instruction>(condition.get());
        if (!made)
          continue;
        llvm::SmallVector<llvm::Use *> outside;
        if (!loop->contains(made))
          outside.push_back(&condition);
        else if (!hoistable(made, loop, kDepth, outside))
          continue;
        rewrites.insert(outside.begin(), outside.end());
      }
    }
    if (rewrites.empty())
      continue;
    llvm::BasicBlock &entry = function.getEntryBlock();
    llvm::IRBuilder<> builder(&entry, entry.getFirstInsertionPt());
    llvm::DenseMap<llvm::Instruction *, llvm::AllocaInst *> slots;
    for (llvm::Use *use : rewrites) {
      auto *made = llvm::cast<llvm::Instruction>(use->get());
      llvm::Type *type = made->getType();
      // SPIR-V keeps no bool in memory: a byte holds an i1.
      llvm::Type *stored = type->isIntegerTy(1) ? builder.getInt8Ty() : type;
      llvm::AllocaInst *&slot = slots[made];
      if (!slot) {
        builder.SetInsertPoint(&entry, entry.getFirstInsertionPt());
        slot = builder.CreateAlloca(stored, allocaSpace, nullptr, made->getName() + ".slot");
        builder.SetInsertPoint(*made->getInsertionPointAfterDef());
        builder.CreateStore(builder.CreateZExtOrBitCast(made, stored), slot, /*isVolatile=*/true);
      }
      builder.SetInsertPoint(llvm::cast<llvm::Instruction>(use->getUser()));
      llvm::Value *again = builder.CreateLoad(stored, slot, /*isVolatile=*/true);
      use->set(builder.CreateTruncOrBitCast(again, type));
    }
  }
  return llvm::Error::success();
}

/// The strictest alignment LLVM 22's SPIR-V backend writes correctly on an
/// OpVariable: it keeps an alloca's alignment in 8 signed bits, so 128
/// became 4294967168 and 256 and above 0 (an invalid module to Intel's
/// OpenCL compiler: "Invalid alignment value").
static constexpr uint64_t kMaxVariableAlignment = 64;

/// LLVM 22's SPIR-V backend writes `load atomic` and `store atomic` as a
/// plain OpLoad and OpStore, which Intel's runtime compiles as ordinary
/// accesses: the load of a spin-wait (`ld.acquire.gpu` in cooperative
/// groups' grid sync) is hoisted out of its loop and never sees the other
/// blocks arrive. Each becomes a volatile access (never hoisted, merged or
/// split: an aligned load or store of up to 8 bytes is one instruction)
/// with fences of its ordering (OpMemoryBarrier at its scope): acquire
/// after a load, release before a store, sequentially consistent on both
/// sides of either.
llvm::Error zmlir::spirvVolatileAtomicAccesses(gpu::GPUModuleOp, llvm::Module &module) {
  llvm::SmallVector<llvm::Instruction *> accesses;
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (llvm::isa<llvm::LoadInst, llvm::StoreInst>(inst) && inst.isAtomic())
        accesses.push_back(&inst);
  for (llvm::Instruction *inst : accesses) {
    auto *load = llvm::dyn_cast<llvm::LoadInst>(inst);
    auto *store = llvm::dyn_cast<llvm::StoreInst>(inst);
    llvm::AtomicOrdering ordering = load ? load->getOrdering() : store->getOrdering();
    llvm::SyncScope::ID scope = load ? load->getSyncScopeID() : store->getSyncScopeID();
    bool seqCst = ordering == llvm::AtomicOrdering::SequentiallyConsistent;
    llvm::IRBuilder<> before(inst);
    llvm::IRBuilder<> after(inst->getNextNode());
    if (load) {
      load->setVolatile(true);
      load->setAtomic(llvm::AtomicOrdering::NotAtomic);
      if (seqCst)
        before.CreateFence(ordering, scope);
      if (llvm::isAcquireOrStronger(ordering))
        after.CreateFence(seqCst ? ordering : llvm::AtomicOrdering::Acquire, scope);
    } else {
      store->setVolatile(true);
      store->setAtomic(llvm::AtomicOrdering::NotAtomic);
      if (llvm::isReleaseOrStronger(ordering))
        before.CreateFence(seqCst ? ordering : llvm::AtomicOrdering::Release, scope);
      if (seqCst)
        after.CreateFence(ordering, scope);
    }
  }
  return llvm::Error::success();
}

/// Each alloca aligned to more than kMaxVariableAlignment (PTX's `.local
/// .align 128` arrays, numba's `cuda.local.array(alignment=256)`) becomes
/// one of `align - 64` more bytes aligned to 64, and its uses take the first
/// address in it aligned as asked: the alloca plus `-address & (align - 1)`
/// bytes (a GEP, so the pointer keeps its provenance).
///
/// The address the padding is computed from goes through a volatile store
/// and load (of a private i64): in a kernel with a barrier, Intel's CPU
/// runtime, vectorizing 16 wide (AVX-512), computed `-address & (align - 1)`
/// of the alloca once for all lanes, from none of the lanes' own copies of
/// it (a 40-byte array aligned to 128: every lane 64 bytes off; a 200-byte
/// one, its copies 320 bytes apart: every other lane). The volatile load is
/// each lane's own address, whose padding the runtime computes per lane.
llvm::Error zmlir::realignSPIRVAllocas(gpu::GPUModuleOp, llvm::Module &module) {
  llvm::SmallVector<llvm::AllocaInst *> allocas;
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst))
        if (alloca->getAlign().value() > kMaxVariableAlignment)
          allocas.push_back(alloca);
  const llvm::DataLayout &layout = module.getDataLayout();
  for (llvm::AllocaInst *alloca : allocas) {
    std::optional<llvm::TypeSize> size = alloca->getAllocationSize(layout);
    if (!size || size->isScalable())
      return llvm::createStringError("unsupported alloca of a variable size aligned to " +
                                     llvm::Twine(alloca->getAlign().value()) + " bytes in '" +
                                     alloca->getFunction()->getName() +
                                     "' (SPIR-V variables align to at most " +
                                     llvm::Twine(kMaxVariableAlignment) + ")");
    uint64_t align = alloca->getAlign().value();
    llvm::IRBuilder<> b(alloca);
    llvm::Type *i64 = b.getInt64Ty();
    auto *raw = b.CreateAlloca(
        llvm::ArrayType::get(b.getInt8Ty(), size->getFixedValue() + align - kMaxVariableAlignment),
        alloca->getAddressSpace(), nullptr);
    raw->setAlignment(llvm::Align(kMaxVariableAlignment));
    auto *slot = b.CreateAlloca(i64, alloca->getAddressSpace(), nullptr);
    b.SetInsertPoint(alloca);
    b.CreateAlignedStore(b.CreatePtrToInt(raw, i64), slot, llvm::Align(8), /*isVolatile=*/true);
    llvm::Value *address = b.CreateAlignedLoad(i64, slot, llvm::Align(8), /*isVolatile=*/true);
    llvm::Value *pad = b.CreateAnd(b.CreateNeg(address), llvm::ConstantInt::get(i64, align - 1));
    llvm::Value *aligned = b.CreateInBoundsGEP(b.getInt8Ty(), raw, pad);
    aligned->takeName(alloca);
    alloca->replaceAllUsesWith(aligned);
    alloca->eraseFromParent();
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Private memory that escapes into calls
//===----------------------------------------------------------------------===//

namespace {

/// Whether `value` is an address in one of its function's allocas: the
/// alloca, or one computed from it through casts, integer arithmetic (PTX
/// addresses are integers: `cvta.local`, then adds), GEPs, phis and selects.
bool derivesFromAlloca(llvm::Value *value) {
  llvm::SmallPtrSet<llvm::Value *, 16> seen;
  llvm::SmallVector<llvm::Value *> work{value};
  while (!work.empty()) {
    llvm::Value *v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (llvm::isa<llvm::AllocaInst>(v))
      return true;
    auto *inst = llvm::dyn_cast<llvm::Instruction>(v);
    if (!inst)
      continue;
    if (llvm::isa<llvm::CastInst>(inst))
      work.push_back(inst->getOperand(0));
    else if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(inst))
      work.push_back(gep->getPointerOperand());
    else if (llvm::isa<llvm::BinaryOperator, llvm::PHINode>(inst))
      work.append(inst->op_begin(), inst->op_end());
    else if (auto *select = llvm::dyn_cast<llvm::SelectInst>(inst))
      work.append({select->getTrueValue(), select->getFalseValue()});
  }
  return false;
}

/// The module's functions on a cycle of calls.
llvm::SmallPtrSet<llvm::Function *, 8> recursiveFunctions(llvm::Module &module) {
  llvm::SmallPtrSet<llvm::Function *, 8> recursive;
  llvm::CallGraph graph(module);
  for (auto scc = llvm::scc_begin(&graph); !scc.isAtEnd(); ++scc)
    if (scc.hasCycle())
      for (llvm::CallGraphNode *node : *scc)
        if (llvm::Function *fn = node->getFunction())
          recursive.insert(fn);
  return recursive;
}

/// The calls in `function` of a defined function not in `recursive` that get
/// an address in the caller's private memory.
llvm::SmallVector<llvm::CallBase *>
callsGettingPrivateAddresses(llvm::Function &function,
                             const llvm::SmallPtrSetImpl<llvm::Function *> &recursive) {
  llvm::SmallVector<llvm::CallBase *> calls;
  for (llvm::Instruction &inst : llvm::instructions(function)) {
    auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
    llvm::Function *callee = call ? call->getCalledFunction() : nullptr;
    if (callee && !callee->isDeclaration() && !recursive.contains(callee) &&
        llvm::any_of(call->args(), [](llvm::Use &arg) { return derivesFromAlloca(arg.get()); }))
      calls.push_back(call);
  }
  return calls;
}

} // namespace

/// Inlines every call that passes an address in the caller's private memory
/// (a `.local` array given to a device function), until none is left.
/// Intel's OpenCL CPU compiler loses a callee's stores through such an
/// address when the caller can return early after a call (seen: a
/// conditional `ret` between two calls, as the trap checks put after every
/// call); once inlined, the stores are the caller's own. A recursive
/// function cannot be inlined into its callers without end: its calls stay
/// (test/cuda/programs/recursion.cu hands a kernel's variable to one).
llvm::Error zmlir::inlineSPIRVPrivateEscapes(gpu::GPUModuleOp, llvm::Module &module) {
  llvm::SmallPtrSet<llvm::Function *, 8> recursive = recursiveFunctions(module);
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    for (llvm::SmallVector<llvm::CallBase *> calls =
             callsGettingPrivateAddresses(function, recursive);
         !calls.empty(); calls = callsGettingPrivateAddresses(function, recursive)) {
      for (llvm::CallBase *call : calls) {
        llvm::InlineFunctionInfo info;
        llvm::InlineResult result = llvm::InlineFunction(*call, info);
        if (!result.isSuccess())
          return llvm::createStringError(
              "cannot inline '" + call->getCalledFunction()->getName() + "' into '" +
              function.getName() +
              "', which gives it private memory: " + result.getFailureReason());
      }
    }
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// isspacep (SPIRVNames.h)
//===----------------------------------------------------------------------===//

namespace {

bool isKernel(const llvm::Function &function) {
  return function.getCallingConv() == llvm::CallingConv::SPIR_KERNEL;
}

/// The kernel's shared window: its last `ptr addrspace(3)` argument (the
/// lowering appends it to every kernel), or null.
llvm::Argument *sharedWindowArgument(llvm::Function &kernel) {
  for (llvm::Argument &arg : llvm::reverse(kernel.args()))
    if (auto *type = llvm::dyn_cast<llvm::PointerType>(arg.getType()))
      return type->getAddressSpace() == 3 ? &arg : nullptr;
  return nullptr;
}

/// Gives the calls of kSharedWindowName their kernel's window: the device
/// functions that call it, and their callers up to the kernels, are inlined
/// into the kernels (SPIR-V has no recursion, so this ends), then each call
/// in a kernel becomes the kernel's window argument, and the inlined
/// functions go.
llvm::Error resolveSharedWindowCalls(llvm::Module &module) {
  llvm::Function *window = module.getFunction(zmlir::spirv::kSharedWindowName);
  if (!window)
    return llvm::Error::success();
  llvm::SetVector<llvm::Function *> inlined;
  llvm::SmallVector<llvm::Function *> work{window};
  while (!work.empty()) {
    llvm::Function *callee = work.pop_back_val();
    for (llvm::User *user : callee->users()) {
      auto *call = llvm::dyn_cast<llvm::CallBase>(user);
      if (!call || call->getCalledFunction() != callee)
        return llvm::createStringError("unsupported use of '" + callee->getName() +
                                       "' other than a call (isspacep needs its kernel)");
      llvm::Function *caller = call->getFunction();
      if (!isKernel(*caller) && inlined.insert(caller))
        work.push_back(caller);
    }
  }
  for (llvm::Function &kernel : module) {
    if (!isKernel(kernel) || kernel.isDeclaration())
      continue;
    // Inline until no call of those functions is left: inlined bodies bring
    // their own calls of them.
    for (bool changed = true; changed;) {
      changed = false;
      llvm::SmallVector<llvm::CallBase *> calls;
      for (llvm::Instruction &inst : llvm::instructions(kernel))
        if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst))
          if (inlined.contains(call->getCalledFunction()))
            calls.push_back(call);
      for (llvm::CallBase *call : calls) {
        llvm::InlineFunctionInfo info;
        llvm::InlineResult result = llvm::InlineFunction(*call, info);
        if (!result.isSuccess())
          return llvm::createStringError("cannot inline '" + call->getCalledFunction()->getName() +
                                         "' into '" + kernel.getName() +
                                         "' for isspacep: " + result.getFailureReason());
        changed = true;
      }
    }
    llvm::SmallVector<llvm::CallBase *> windowCalls;
    for (llvm::Instruction &inst : llvm::instructions(kernel))
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst))
        if (call->getCalledFunction() == window)
          windowCalls.push_back(call);
    if (windowCalls.empty())
      continue;
    llvm::Argument *arg = sharedWindowArgument(kernel);
    if (!arg)
      return llvm::createStringError("kernel '" + kernel.getName() +
                                     "' has no shared window argument (isspacep)");
    for (llvm::CallBase *call : windowCalls) {
      call->replaceAllUsesWith(arg);
      call->eraseFromParent();
    }
  }
  // What is left of those functions is no kernel's any more.
  for (llvm::Function *function : inlined)
    function->dropAllReferences();
  for (llvm::Function *function : inlined) {
    function->replaceAllUsesWith(llvm::PoisonValue::get(function->getType()));
    function->eraseFromParent();
  }
  window->eraseFromParent();
  return llvm::Error::success();
}

/// Defines kOnStackName: `address` is in [stack address, + stack size) of
/// pthread_getattr_np(pthread_self()), which covers the thread's whole stack
/// (the main thread's as far as it may grow). A failure of the C library
/// (out of memory) sets the trap word: the launch fails, it is not answered
/// wrong.
void defineOnStack(llvm::Module &module, llvm::Function &onStack) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  llvm::Type *i64 = llvm::Type::getInt64Ty(context);
  llvm::Type *ptr = llvm::PointerType::get(context, 0);
  llvm::FunctionCallee self = module.getOrInsertFunction("pthread_self",
                                                         llvm::FunctionType::get(i64, false));
  llvm::FunctionCallee getattr = module.getOrInsertFunction(
      "pthread_getattr_np", llvm::FunctionType::get(i32, {i64, ptr}, false));
  llvm::FunctionCallee getstack = module.getOrInsertFunction(
      "pthread_attr_getstack", llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false));
  llvm::FunctionCallee destroy = module.getOrInsertFunction(
      "pthread_attr_destroy", llvm::FunctionType::get(i32, {ptr}, false));
  for (llvm::FunctionCallee f : {self, getattr, getstack, destroy})
    llvm::cast<llvm::Function>(f.getCallee())->setCallingConv(llvm::CallingConv::C);

  onStack.setLinkage(llvm::GlobalValue::InternalLinkage);
  auto *entry = llvm::BasicBlock::Create(context, "entry", &onStack);
  auto *known = llvm::BasicBlock::Create(context, "known", &onStack);
  auto *failed = llvm::BasicBlock::Create(context, "failed", &onStack);
  llvm::IRBuilder<> b(entry);
  // pthread_attr_t: 56 bytes, 8-aligned on x86-64 Linux.
  llvm::AllocaInst *attr = b.CreateAlloca(llvm::ArrayType::get(b.getInt8Ty(), 64));
  attr->setAlignment(llvm::Align(8));
  llvm::AllocaInst *base = b.CreateAlloca(i64);
  base->setAlignment(llvm::Align(8));
  llvm::AllocaInst *size = b.CreateAlloca(i64);
  size->setAlignment(llvm::Align(8));
  llvm::Value *thread = b.CreateCall(self);
  llvm::Value *rc = b.CreateCall(getattr, {thread, attr});
  b.CreateCondBr(b.CreateICmpEQ(rc, b.getInt32(0)), known, failed);

  b.SetInsertPoint(known);
  llvm::Value *stackRc = b.CreateCall(getstack, {attr, base, size});
  b.CreateCall(destroy, {attr});
  llvm::Value *offset = b.CreateSub(onStack.getArg(0),
                                    b.CreateAlignedLoad(i64, base, llvm::Align(8)));
  llvm::Value *inside = b.CreateICmpULT(offset, b.CreateAlignedLoad(i64, size, llvm::Align(8)));
  b.CreateRet(b.CreateAnd(inside, b.CreateICmpEQ(stackRc, b.getInt32(0))));

  b.SetInsertPoint(failed);
  auto *trap = llvm::cast<llvm::GlobalVariable>(
      module.getOrInsertGlobal(zmlir::spirv::kTrapWordName, i32, [&] {
        return new llvm::GlobalVariable(module, i32, false, llvm::GlobalValue::ExternalLinkage,
                                        b.getInt32(0), zmlir::spirv::kTrapWordName, nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 1);
      }));
  b.CreateStore(b.getInt32(1), trap);
  b.CreateRet(b.getFalse());
}

} // namespace

/// isspacep's two functions (SPIRVNames.h): the kernel's shared window
/// where a device function asked for it, and the stack test.
llvm::Error zmlir::resolveSPIRVStateSpace(gpu::GPUModuleOp, llvm::Module &module) {
  if (llvm::Error error = resolveSharedWindowCalls(module))
    return error;
  if (llvm::Function *onStack = module.getFunction(zmlir::spirv::kOnStackName))
    if (onStack->isDeclaration())
      defineOnStack(module, *onStack);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// bf16 as 16-bit integers
//===----------------------------------------------------------------------===//

namespace {

/// Rewrites a function's `bfloat` values (and vectors of them) as the i16
/// bits of the same values (vectors of i16), arithmetic on them in f32.
/// LLVM's SPIR-V backend types a bfloat as OpTypeFloat 16 BFloat16KHR, which
/// needs SPV_KHR_bfloat16, and Intel's OpenCL CPU runtime does not take that
/// extension; PTX's .bf16 registers and the lowering's bf16 conversions
/// (`sitofp` to bf16, `fpext` from it) make such values.
///  1. Visit the blocks in reverse post-order (each value's definition before
///     its uses), phis first made as i16 phis and given their incoming values
///     at the end.
///  2. bitcasts to and from bfloat become the bits themselves (or a bitcast
///     of them); loads, stores, selects, freezes and the vector element ops
///     move the bits; fneg flips the sign bit.
///  3. fpext from bfloat is the bits as the top half of an f32 (exact);
///     fcmp, fptosi/fptoui and the arithmetic (fadd, fsub, fmul, fdiv, frem)
///     take those f32 values. The arithmetic's f32 result rounded again to
///     bf16 is the correctly rounded bf16 result: f32's 24 bits are at least
///     2 * 8 + 2, so the double rounding is innocuous for + - * /.
///  4. A value rounded to bf16 (fptrunc, sitofp, uitofp, the arithmetic) is
///     made an f32 first: from an f32 directly; from an f64 rounded to f32
///     to odd (the f64 to f32 conversion, stepped towards zero when inexact,
///     its last bit set), which rounding to nearest again does not spoil
///     (24 >= 8 + 2); an integer of up to 32 bits through f64 (exact; the
///     lowering rounds wider ones itself). Then round to nearest even on the
///     bits, and a NaN becomes NVIDIA's canonical 0x7fff.
/// Anything else with a bfloat (a call, a function's parameter, an
/// aggregate) is an error naming it, never a backend crash.
class BFloatBits {
public:
  explicit BFloatBits(llvm::Function &function) : function(function) {}

  llvm::Error run();

private:
  static bool hasBFloat(llvm::Type *type) { return type->getScalarType()->isBFloatTy(); }
  /// i16 for bfloat, <N x i16> for <N x bfloat>; `type` itself otherwise.
  static llvm::Type *bitsType(llvm::Type *type) {
    if (!hasBFloat(type))
      return type;
    return type->getWithNewType(llvm::Type::getInt16Ty(type->getContext()));
  }
  /// `type` (of i16 bits, or of floats) with `element` as its element type.
  static llvm::Type *like(llvm::Type *type, llvm::Type *element) {
    return type->getWithNewType(element);
  }

  llvm::Value *bits(llvm::Value *value);
  llvm::Value *toFloat(llvm::IRBuilder<> &b, llvm::Value *value);
  llvm::Value *fromFloat(llvm::IRBuilder<> &b, llvm::Value *x);
  llvm::Value *fromDouble(llvm::IRBuilder<> &b, llvm::Value *x);
  llvm::Error rewrite(llvm::Instruction &inst);
  llvm::Error unsupported(const llvm::Instruction &inst);

  llvm::Function &function;
  llvm::DenseMap<llvm::Value *, llvm::Value *> replacement; // bfloat value -> its bits
  llvm::SmallVector<llvm::Instruction *> dead;
  llvm::SmallVector<std::pair<llvm::PHINode *, llvm::PHINode *>> phis; // old, new
};

} // namespace

/// The bits of the bfloat value `value`: a constant's folded, an
/// instruction's from its rewrite.
llvm::Value *BFloatBits::bits(llvm::Value *value) {
  if (auto *constant = llvm::dyn_cast<llvm::Constant>(value))
    return llvm::ConstantFoldCastOperand(llvm::Instruction::BitCast, constant,
                                         bitsType(value->getType()), function.getDataLayout());
  return replacement.lookup(value);
}

/// The bf16 bits `value` as the f32 (vector) of the same value.
llvm::Value *BFloatBits::toFloat(llvm::IRBuilder<> &b, llvm::Value *value) {
  llvm::Type *type = value->getType();
  llvm::Value *wide = b.CreateZExt(value, like(type, b.getInt32Ty()));
  wide = b.CreateShl(wide, llvm::ConstantInt::get(wide->getType(), 16));
  return b.CreateBitCast(wide, like(type, b.getFloatTy()));
}

/// The f32 (vector) `x` rounded to nearest even as bf16 bits; NaN 0x7fff.
llvm::Value *BFloatBits::fromFloat(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *i32 = like(x->getType(), b.getInt32Ty());
  llvm::Value *word = b.CreateBitCast(x, i32);
  llvm::Value *lsb = b.CreateAnd(b.CreateLShr(word, llvm::ConstantInt::get(i32, 16)),
                                 llvm::ConstantInt::get(i32, 1));
  llvm::Value *rounded = b.CreateAdd(word, b.CreateAdd(lsb, llvm::ConstantInt::get(i32, 0x7fff)));
  llvm::Value *nearest = b.CreateLShr(rounded, llvm::ConstantInt::get(i32, 16));
  llvm::Value *isNaN = b.CreateFCmpUNO(x, x);
  llvm::Value *r = b.CreateSelect(isNaN, llvm::ConstantInt::get(i32, 0x7fff), nearest);
  return b.CreateTrunc(r, like(x->getType(), b.getInt16Ty()));
}

/// The f64 (vector) `x` rounded to nearest even as bf16 bits, through an
/// f32 rounded to odd.
llvm::Value *BFloatBits::fromDouble(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *f32 = like(x->getType(), b.getFloatTy());
  llvm::Type *i32 = like(x->getType(), b.getInt32Ty());
  llvm::Value *nearest = b.CreateFPTrunc(x, f32);
  llvm::Value *back = b.CreateFPExt(nearest, x->getType());
  llvm::Value *word = b.CreateBitCast(nearest, i32);
  // Inexact (never for a NaN: unordered compares are false): towards zero
  // when the f32 is the larger in magnitude, then the last bit set.
  llvm::Value *inexact = b.CreateFCmpONE(back, x);
  llvm::Value *larger = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                        b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
  llvm::Value *smaller = b.CreateSelect(larger, b.CreateSub(word, llvm::ConstantInt::get(i32, 1)),
                                        word);
  llvm::Value *odd = b.CreateOr(smaller, llvm::ConstantInt::get(i32, 1));
  return fromFloat(b, b.CreateBitCast(b.CreateSelect(inexact, odd, word), f32));
}

llvm::Error BFloatBits::unsupported(const llvm::Instruction &inst) {
  std::string text;
  llvm::raw_string_ostream os(text);
  inst.print(os);
  return llvm::createStringError("unsupported bf16 operation on target 'spirv' in function '" +
                                 function.getName().str() +
                                 "' (LLVM's SPIR-V backend would need SPV_KHR_bfloat16):" + text);
}

llvm::Error BFloatBits::rewrite(llvm::Instruction &inst) {
  bool result = hasBFloat(inst.getType());
  bool operand = llvm::any_of(inst.operands(),
                              [](const llvm::Use &use) { return hasBFloat(use->getType()); });
  if (!result && !operand)
    return llvm::Error::success();
  llvm::IRBuilder<> b(&inst);
  llvm::Value *r = nullptr;
  auto operandBits = [&](unsigned i) {
    llvm::Value *v = inst.getOperand(i);
    return hasBFloat(v->getType()) ? bits(v) : v;
  };
  // A bfloat operand not rewritten (one of an unsupported kind).
  if (!llvm::isa<llvm::PHINode>(inst) && llvm::any_of(inst.operands(), [&](const llvm::Use &use) {
        return hasBFloat(use->getType()) && !bits(use.get());
      }))
    return unsupported(inst);
  if (auto *phi = llvm::dyn_cast<llvm::PHINode>(&inst)) {
    auto *bitsPhi = b.CreatePHI(bitsType(phi->getType()), phi->getNumIncomingValues());
    phis.emplace_back(phi, bitsPhi);
    r = bitsPhi;
  } else if (llvm::isa<llvm::BitCastInst, llvm::FreezeInst>(inst)) {
    llvm::Value *source = operandBits(0);
    llvm::Type *type = bitsType(inst.getType());
    r = llvm::isa<llvm::FreezeInst>(inst) ? b.CreateFreeze(source)
        : source->getType() == type       ? source
                                          : b.CreateBitCast(source, type);
  } else if (inst.getOpcode() == llvm::Instruction::FPExt) {
    r = toFloat(b, bits(inst.getOperand(0)));
    if (r->getType() != inst.getType())
      r = b.CreateFPExt(r, inst.getType());
  } else if (llvm::isa<llvm::FPToSIInst, llvm::FPToUIInst>(inst)) {
    r = b.CreateCast(llvm::cast<llvm::CastInst>(inst).getOpcode(),
                     toFloat(b, bits(inst.getOperand(0))), inst.getType());
  } else if (inst.getOpcode() == llvm::Instruction::FPTrunc) {
    llvm::Value *x = inst.getOperand(0);
    r = x->getType()->getScalarType()->isFloatTy()    ? fromFloat(b, x)
        : x->getType()->getScalarType()->isDoubleTy() ? fromDouble(b, x)
                                                      : nullptr;
  } else if (llvm::isa<llvm::SIToFPInst, llvm::UIToFPInst>(inst) &&
             inst.getOperand(0)->getType()->getScalarSizeInBits() <= 32) {
    llvm::Type *f64 = like(inst.getType(), b.getDoubleTy());
    r = fromDouble(
        b, b.CreateCast(llvm::cast<llvm::CastInst>(inst).getOpcode(), inst.getOperand(0), f64));
  } else if (auto *compare = llvm::dyn_cast<llvm::FCmpInst>(&inst)) {
    r = b.CreateFCmp(compare->getPredicate(), toFloat(b, bits(compare->getOperand(0))),
                     toFloat(b, bits(compare->getOperand(1))));
  } else if (inst.getOpcode() == llvm::Instruction::FNeg) {
    llvm::Value *v = bits(inst.getOperand(0));
    r = b.CreateXor(v, llvm::ConstantInt::get(v->getType(), 0x8000));
  } else if (llvm::isa<llvm::BinaryOperator>(inst) && inst.getType()->isFPOrFPVectorTy()) {
    llvm::Value *x = b.CreateBinOp(llvm::cast<llvm::BinaryOperator>(inst).getOpcode(),
                                   toFloat(b, bits(inst.getOperand(0))),
                                   toFloat(b, bits(inst.getOperand(1))));
    r = fromFloat(b, x);
  } else if (auto *select = llvm::dyn_cast<llvm::SelectInst>(&inst)) {
    r = b.CreateSelect(select->getCondition(), operandBits(1), operandBits(2));
  } else if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
    auto *bitsLoad = b.CreateAlignedLoad(bitsType(load->getType()), load->getPointerOperand(),
                                         load->getAlign(), load->isVolatile());
    bitsLoad->setAtomic(load->getOrdering(), load->getSyncScopeID());
    r = bitsLoad;
  } else if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
    if (!hasBFloat(store->getValueOperand()->getType()))
      return unsupported(inst);
    auto *bitsStore = b.CreateAlignedStore(bits(store->getValueOperand()),
                                           store->getPointerOperand(), store->getAlign(),
                                           store->isVolatile());
    bitsStore->setAtomic(store->getOrdering(), store->getSyncScopeID());
    dead.push_back(&inst);
    return llvm::Error::success();
  } else if (llvm::isa<llvm::ExtractElementInst>(inst)) {
    r = b.CreateExtractElement(operandBits(0), operandBits(1));
  } else if (llvm::isa<llvm::InsertElementInst>(inst)) {
    r = b.CreateInsertElement(operandBits(0), operandBits(1), operandBits(2));
  } else if (auto *shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst)) {
    r = b.CreateShuffleVector(operandBits(0), operandBits(1), shuffle->getShuffleMask());
  }
  if (!r)
    return unsupported(inst);
  r->takeName(&inst);
  if (result)
    replacement[&inst] = r;
  else
    inst.replaceAllUsesWith(r);
  dead.push_back(&inst);
  return llvm::Error::success();
}

llvm::Error BFloatBits::run() {
  if (hasBFloat(function.getReturnType()) ||
      llvm::any_of(function.args(), [](llvm::Argument &a) { return hasBFloat(a.getType()); }))
    return llvm::createStringError("unsupported bf16 parameter or result of function '" +
                                   function.getName().str() +
                                   "' on target 'spirv' (LLVM's SPIR-V backend would need "
                                   "SPV_KHR_bfloat16)");
  if (function.isDeclaration())
    return llvm::Error::success();
  llvm::removeUnreachableBlocks(function);
  for (llvm::BasicBlock *block : llvm::ReversePostOrderTraversal<llvm::Function *>(&function))
    for (llvm::Instruction &inst : *block)
      if (llvm::Error error = rewrite(inst))
        return error;
  for (auto [phi, bitsPhi] : phis)
    for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
      llvm::Value *incoming = bits(phi->getIncomingValue(i));
      if (!incoming)
        return unsupported(*phi);
      bitsPhi->addIncoming(incoming, phi->getIncomingBlock(i));
    }
  for (llvm::Instruction *inst : dead)
    inst->dropAllReferences();
  for (llvm::Instruction *inst : dead)
    inst->eraseFromParent();
  return llvm::Error::success();
}

/// Every function's bfloat values as their i16 bits (BFloatBits); a
/// variable of a bfloat type is an error.
llvm::Error zmlir::spirvBFloatAsBits(gpu::GPUModuleOp, llvm::Module &module) {
  for (llvm::GlobalVariable &variable : module.globals())
    if (variable.getValueType()->getScalarType()->isBFloatTy() ||
        (variable.getValueType()->isArrayTy() &&
         variable.getValueType()->getArrayElementType()->isBFloatTy()))
      return llvm::createStringError("unsupported bf16 variable '" + variable.getName().str() +
                                     "' on target 'spirv'");
  for (llvm::Function &function : module)
    if (llvm::Error error = BFloatBits(function).run())
      return error;
  return llvm::Error::success();
}

namespace {

/// Whether `v` is visibly an offset added to an address rather than the
/// address itself: a constant, index arithmetic (extensions, multiplications,
/// shifts), or sums of those.
bool isOffset(llvm::Value *v, unsigned depth = 0) {
  if (llvm::isa<llvm::ConstantInt>(v))
    return true;
  auto *op = llvm::dyn_cast<llvm::Instruction>(v);
  if (!op || depth > 8)
    return false;
  switch (op->getOpcode()) {
  case llvm::Instruction::SExt:
  case llvm::Instruction::ZExt:
  case llvm::Instruction::Mul:
  case llvm::Instruction::Shl:
    return true;
  case llvm::Instruction::Add:
  case llvm::Instruction::Sub:
    return isOffset(op->getOperand(0), depth + 1) && isOffset(op->getOperand(1), depth + 1);
  default:
    return false;
  }
}

/// The one term of the sum `address` that is not an offset (isOffset),
/// looking through `add`s, with the offsets added to it in `offsets`; null
/// where there is no such term or more than one.
llvm::Value *addressBase(llvm::Value *address, llvm::SmallVectorImpl<llvm::Value *> &offsets,
                         unsigned depth = 0) {
  auto *add = llvm::dyn_cast<llvm::BinaryOperator>(address);
  if (!add || add->getOpcode() != llvm::Instruction::Add || depth > 8)
    return isOffset(address) ? nullptr : address;
  llvm::Value *lhs = add->getOperand(0), *rhs = add->getOperand(1);
  bool lhsOffset = isOffset(lhs), rhsOffset = isOffset(rhs);
  if (lhsOffset == rhsOffset)
    return nullptr; // an offset, or two candidate bases
  llvm::Value *base = addressBase(lhsOffset ? rhs : lhs, offsets, depth + 1);
  if (base)
    offsets.push_back(lhsOffset ? lhs : rhs);
  return base;
}

/// Whether the integer `address` reaches anything but sums of it and
/// offsets that loads and stores use as their pointers.
bool integerAddressEscapes(llvm::Value *address, unsigned depth = 0) {
  if (depth > 8)
    return true;
  for (llvm::User *user : address->users()) {
    auto *inst = llvm::dyn_cast<llvm::Instruction>(user);
    if (!inst)
      return true;
    switch (inst->getOpcode()) {
    case llvm::Instruction::Add:
    case llvm::Instruction::Sub:
      if (integerAddressEscapes(inst, depth + 1))
        return true;
      break;
    case llvm::Instruction::IntToPtr:
      for (llvm::User *access : inst->users())
        if (!(llvm::isa<llvm::LoadInst>(access) ||
              (llvm::isa<llvm::StoreInst>(access) && access->getOperand(1) == inst)))
          return true;
      break;
    default:
      return true;
    }
  }
  return false;
}

} // namespace

/// The lowering turns PTX's integer addresses into pointers where they are
/// used, `inttoptr (add i64 %base, %offset)`; Intel's OpenCL CPU compiler
/// sees no base in such a pointer and gathers (and scatters) the accesses of
/// consecutive work-items, where OpenCL C's `p[i]` is a GEP off the pointer
/// `p` and becomes vector loads and stores (bench/results/cpu_kernels.md,
/// blackscholes and sgemm). A load or store through such a pointer, whose
/// sum has one term that is not an offset (a parameter, a loaded pointer, a
/// phi), gets `getelementptr i8 (inttoptr %base), %offset` instead: the same
/// address (a GEP without `inbounds` is the wrapping sum), which
/// spirv-typed-element-geps then indexes by elements where it can.
llvm::Error zmlir::spirvAddressGeps(gpu::GPUModuleOp, llvm::Module &module) {
  llvm::Type *i8 = llvm::Type::getInt8Ty(module.getContext());
  for (llvm::Function &function : module) {
    llvm::SmallVector<llvm::Instruction *> accesses;
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (llvm::isa<llvm::LoadInst, llvm::StoreInst>(inst))
        accesses.push_back(&inst);
    for (llvm::Instruction *access : accesses) {
      auto *cast = llvm::dyn_cast<llvm::IntToPtrInst>(llvm::getLoadStorePointerOperand(access));
      if (!cast || !cast->getOperand(0)->getType()->isIntegerTy(64))
        continue;
      llvm::SmallVector<llvm::Value *, 4> offsets;
      llvm::Value *base = addressBase(cast->getOperand(0), offsets);
      if (!base || offsets.empty())
        continue;
      // An alloca (the .local depot) whose integer address also goes
      // elsewhere than into these sums (a phi of its slots, a store, a
      // call) keeps its integer addresses: given GEPs off it besides,
      // Intel's CPU compiler ran numba's NRT kernels on wrong data or
      // crashed (test_array_reductions).
      if (auto *address = llvm::dyn_cast<llvm::PtrToIntInst>(base);
          address &&
          llvm::isa<llvm::AllocaInst>(address->getPointerOperand()->stripPointerCasts()) &&
          integerAddressEscapes(address))
        continue;
      llvm::IRBuilder<> builder(cast);
      llvm::Value *offset = offsets.front();
      for (llvm::Value *more : llvm::drop_begin(offsets))
        offset = builder.CreateAdd(offset, more);
      llvm::Value *pointer = nullptr;
      if (auto *address = llvm::dyn_cast<llvm::PtrToIntInst>(base);
          address && address->getPointerOperand()->getType() == cast->getType())
        pointer = address->getPointerOperand(); // `cvta` of a variable: the variable
      else
        pointer = builder.CreateIntToPtr(base, cast->getType());
      llvm::Value *gep = builder.CreateGEP(i8, pointer, offset);
      access->setOperand(llvm::isa<llvm::LoadInst>(access) ? 0 : 1, gep);
      if (cast->use_empty())
        cast->eraseFromParent(); // the sum's arithmetic is left to llc
    }
  }
  return llvm::Error::success();
}

namespace {

/// `v / 2^shift` built from v's own arithmetic where v is visibly a multiple
/// of 2^shift (constants, shl and mul by constants, add, sub and disjoint or
/// of multiples): 2^shift * the result equals v modulo 2^64, which is all
/// an address needs. `nuw`/`nsw` say that the result is also v's exact
/// quotient as an unsigned/signed integer, so that the arithmetic built on
/// it may keep its flags.
struct Quotient {
  llvm::Value *value = nullptr;
  bool nuw = false, nsw = false;
};

class ExactDivider {
public:
  Quotient divide(llvm::Value *v, unsigned shift, unsigned depth = 0) {
    if (shift == 0)
      return {v, true, true};
    auto key = std::make_pair(v, shift);
    if (auto it = cache.find(key); it != cache.end())
      return it->second;
    Quotient q = compute(v, shift, depth);
    cache[key] = q;
    return q;
  }

private:
  Quotient compute(llvm::Value *v, unsigned shift, unsigned depth) {
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
      const llvm::APInt &value = c->getValue();
      if (value.countr_zero() < shift)
        return {};
      return {llvm::ConstantInt::get(c->getType(), value.ashr(shift)), !value.isNegative(), true};
    }
    auto *op = llvm::dyn_cast<llvm::BinaryOperator>(v);
    if (!op || depth > 8)
      return {};
    bool nuw = llvm::isa<llvm::OverflowingBinaryOperator>(op) && op->hasNoUnsignedWrap();
    bool nsw = llvm::isa<llvm::OverflowingBinaryOperator>(op) && op->hasNoSignedWrap();
    llvm::IRBuilder<> builder(op);
    llvm::Value *lhs = op->getOperand(0), *rhs = op->getOperand(1);
    auto *amount = llvm::dyn_cast<llvm::ConstantInt>(rhs);
    switch (op->getOpcode()) {
    case llvm::Instruction::Shl: {
      if (!amount)
        return {};
      unsigned by = amount->getZExtValue();
      if (by < shift) { // (x << by) / 2^shift is x / 2^(shift - by)
        Quotient x = divide(lhs, shift - by, depth + 1);
        if (!x.value)
          return {};
        return {x.value, nuw && x.nuw, nsw && x.nsw};
      }
      if (by == shift)
        return {lhs, nuw, nsw};
      return {builder.CreateShl(lhs, by - shift, "", nuw, nsw), nuw, nsw};
    }
    case llvm::Instruction::Mul: {
      auto *factor = llvm::dyn_cast<llvm::ConstantInt>(rhs);
      llvm::Value *x = lhs;
      if (!factor) {
        factor = llvm::dyn_cast<llvm::ConstantInt>(lhs);
        x = rhs;
      }
      if (!factor)
        return {};
      unsigned zeros = std::min<unsigned>(factor->getValue().countr_zero(), shift);
      Quotient rest = divide(x, shift - zeros, depth + 1);
      if (!rest.value)
        return {};
      bool qnuw = nuw && rest.nuw && !factor->isNegative(), qnsw = nsw && rest.nsw;
      if (factor->getValue().ashr(zeros).isOne()) // `x * 2^k`: x / 2^(shift - k)
        return {rest.value, qnuw, qnsw};
      llvm::Value *scaled = builder.CreateMul(
          rest.value, llvm::ConstantInt::get(factor->getType(), factor->getValue().ashr(zeros)), "",
          qnuw, qnsw);
      return {scaled, qnuw, qnsw};
    }
    case llvm::Instruction::Add:
    case llvm::Instruction::Sub:
    case llvm::Instruction::Or: {
      if (op->getOpcode() == llvm::Instruction::Or &&
          !llvm::cast<llvm::PossiblyDisjointInst>(op)->isDisjoint())
        return {};
      Quotient a = divide(lhs, shift, depth + 1);
      if (!a.value)
        return {};
      Quotient b = divide(rhs, shift, depth + 1);
      if (!b.value)
        return {};
      if (op->getOpcode() == llvm::Instruction::Or) {
        // Multiples with no bit in common: their exact quotients have none
        // either; quotients modulo 2^64 are added (a | b is a + b here).
        if (a.nuw && b.nuw)
          return {builder.CreateOr(a.value, b.value, "", /*IsDisjoint=*/true), true, false};
        return {builder.CreateAdd(a.value, b.value), false, false};
      }
      bool qnuw = nuw && a.nuw && b.nuw, qnsw = nsw && a.nsw && b.nsw;
      llvm::Value *r = op->getOpcode() == llvm::Instruction::Add
                           ? builder.CreateAdd(a.value, b.value, "", qnuw, qnsw)
                           : builder.CreateSub(a.value, b.value, "", qnuw, qnsw);
      return {r, qnuw, qnsw};
    }
    default:
      return {};
    }
  }

  llvm::DenseMap<std::pair<llvm::Value *, unsigned>, Quotient> cache;
};

} // namespace

/// The lowering addresses shared (and other) memory as `getelementptr i8`
/// off a base with a byte offset; Intel's OpenCL CPU compiler then sees
/// each access through a byte pointer and gathers, across work-items,
/// loads that are consecutive (sgemm's `bs[k][tx]`: 16 vgatherdps per
/// tile against the OpenCL C kernel's vector loads,
/// bench/results/cpu_kernels.md). Where a load or store of a type of 2^k
/// bytes goes through such a GEP whose offset is visibly a multiple of
/// 2^k (ExactDivider), it gets `getelementptr T, base, offset / 2^k`
/// instead, the form OpenCL C's `p[i]` has: the same address.
llvm::Error zmlir::spirvTypedElementGeps(gpu::GPUModuleOp, llvm::Module &module) {
  const llvm::DataLayout &layout = module.getDataLayout();
  for (llvm::Function &function : module) {
    ExactDivider divider;
    llvm::SmallVector<llvm::Instruction *> accesses;
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (llvm::isa<llvm::LoadInst, llvm::StoreInst>(inst))
        accesses.push_back(&inst);
    for (llvm::Instruction *access : accesses) {
      llvm::Value *pointer = llvm::getLoadStorePointerOperand(access);
      llvm::Type *type = llvm::getLoadStoreType(access);
      auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(pointer);
      if (!gep || gep->getNumIndices() != 1 || !gep->getSourceElementType()->isIntegerTy(8) ||
          !type->isSized())
        continue;
      uint64_t size = layout.getTypeAllocSize(type).getFixedValue();
      if (size < 2 || !llvm::isPowerOf2_64(size) ||
          layout.getTypeStoreSize(type).getFixedValue() != size)
        continue;
      Quotient index = divider.divide(gep->getOperand(1), llvm::Log2_64(size));
      if (!index.value)
        continue;
      llvm::IRBuilder<> builder(gep);
      llvm::Value *typed = builder.CreateGEP(type, gep->getPointerOperand(), index.value);
      typed->takeName(gep);
      access->setOperand(llvm::isa<llvm::LoadInst>(access) ? 0 : 1, typed);
      if (gep->use_empty())
        gep->eraseFromParent(); // its offset's arithmetic is left to llc
    }
  }
  return llvm::Error::success();
}
