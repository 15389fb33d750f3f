//===- SPIRVFixups.cpp - SPIR-V's LLVM module fix-ups -----------*- C++ -*-===//
//
// What the SPIR-V target does to the LLVM module translated from its
// gpu.module before LLVM's SPIR-V backend sees it (Target.llvm_fixups).
//
//===----------------------------------------------------------------------===//

#include "zmlir/targets/CodeEmission.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

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
