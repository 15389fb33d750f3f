//===- HostFixups.cpp - The host target's LLVM module fix-ups ---*- C++ -*-===//
//
// Upstream's gpu-to-llvm-spv lowering leaves SPIR-V calling conventions, and
// a kernel's parameters differ from kernel to kernel. For the host CPU every
// function takes the C calling convention, and each kernel gets an entry
// HostRuntime.cpp can call without knowing its signature.
//
//===----------------------------------------------------------------------===//

#include "zmlir/targets/CodeEmission.h"

#include "llvm/IR/CallingConv.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

/// Suffix of a kernel's entry: `void <kernel>.zmlir_entry(ptr args, ptr window)`
/// calls the kernel with parameter i loaded from where args[i] points, and
/// the block's shared window as its trailing window parameter.
static constexpr const char *kEntrySuffix = ".zmlir_entry";

static void addEntry(llvm::Function &kernel) {
  llvm::Module &module = *kernel.getParent();
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *ptr = llvm::PointerType::get(context, 0);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, ptr}, false);
  auto *entry = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                       kernel.getName() + kEntrySuffix, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", entry));
  llvm::Value *args = entry->getArg(0), *window = entry->getArg(1);
  llvm::SmallVector<llvm::Value *> operands;
  unsigned count = kernel.arg_size();
  for (unsigned i = 0; i < count; ++i) {
    llvm::Type *param = kernel.getFunctionType()->getParamType(i);
    // The shared window is the kernel's trailing pointer in the shared space (3).
    if (i + 1 == count && param->isPointerTy() && param->getPointerAddressSpace() == 3) {
      operands.push_back(b.CreateAddrSpaceCast(window, param));
      continue;
    }
    llvm::Value *slot = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, args, i));
    operands.push_back(b.CreateLoad(param, slot));
  }
  b.CreateCall(&kernel, operands);
  b.CreateRetVoid();
}

llvm::Error zmlir::addHostKernelEntries(mlir::gpu::GPUModuleOp, llvm::Module &module) {
  llvm::SmallVector<llvm::Function *> kernels;
  for (llvm::Function &fn : module) {
    if (fn.getCallingConv() == llvm::CallingConv::SPIR_KERNEL)
      kernels.push_back(&fn);
    fn.setCallingConv(llvm::CallingConv::C);
    for (llvm::Instruction &inst : llvm::instructions(fn))
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst))
        call->setCallingConv(llvm::CallingConv::C);
  }
  for (llvm::Function *kernel : kernels)
    addEntry(*kernel);
  return llvm::Error::success();
}
