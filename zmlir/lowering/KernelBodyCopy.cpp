//===- KernelBodyCopy.cpp - A kernel's body in two copies -----------------===//

#include "zmlir/lowering/KernelBodyCopy.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

zmlir::KernelBodyCopy zmlir::copyKernelBody(gpu::GPUFuncOp kernel) {
  Region &body = kernel.getBody();
  Block *entry = &body.front();

  // The copy, then a new entry taking the arguments (function arguments and
  // attributions) both copies used.
  Region scratch;
  IRMapping mapping;
  body.cloneInto(&scratch, mapping);
  Block *copyEntry = &scratch.front();
  SmallVector<Block *> copy = llvm::map_to_vector(scratch, [](Block &block) { return &block; });
  auto *newEntry = new Block();
  for (BlockArgument arg : entry->getArguments())
    newEntry->addArgument(arg.getType(), arg.getLoc());
  body.push_front(newEntry);
  for (Block *old : {entry, copyEntry}) {
    for (auto [arg, replacement] : llvm::zip(old->getArguments(), newEntry->getArguments()))
      arg.replaceAllUsesWith(replacement);
    old->eraseArguments(0, old->getNumArguments());
  }
  body.getBlocks().splice(body.end(), scratch.getBlocks());
  return {newEntry, entry, copyEntry, std::move(copy)};
}
