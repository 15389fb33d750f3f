//===- CodeEmission.cpp - MLIR -> LLVM IR -> target code ------------------===//

#include "zmlir/targets/CodeEmission.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/AtomicOrdering.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace mlir;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(llvm::StringRef tripleName, llvm::StringRef cpu,
                    llvm::StringRef features, int optLevel) {
  initializeTargets();
  llvm::Triple triple(tripleName);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("no LLVM target for '" + tripleName + "': " + error);
  llvm::TargetOptions options;
  auto level = optLevel <= 0   ? llvm::CodeGenOptLevel::None
               : optLevel == 1 ? llvm::CodeGenOptLevel::Less
               : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                               : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    return makeError("cannot create a target machine for '" + tripleName +
                     "' cpu '" + cpu + "'");
  return machine;
}

/// The standard LLVM optimisation pipeline at `optLevel`, as clang runs it.
void optimize(llvm::Module &module, llvm::TargetMachine &machine, int optLevel) {
  if (optLevel <= 0)
    return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  builder.buildPerModuleDefaultPipeline(level).run(module, mam);
}

/// Globals the ptx-to-std lowering marked `ptx.managed` (__managed__), as
/// LLVM's NVPTX backend reads them: a `!nvvm.annotations` entry
/// `!{ptr addrspace(1) @x, !"managed", i32 1}`, printed as
/// `.global .attribute(.managed)`.
llvm::Error annotateManagedGlobals(gpu::GPUModuleOp gpuModule, llvm::Module &llvmModule) {
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
        llvm::ConstantAsMetadata::get(
            llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1))};
    llvmModule.getOrInsertNamedMetadata("nvvm.annotations")
        ->addOperand(llvm::MDNode::get(context, entry));
  }
  return llvm::Error::success();
}

/// LLVM 22's NVPTX backend emits every atomicrmw as a relaxed `atom` at
/// .gpu scope, whatever its ordering and syncscope: an ordered or
/// system-scope one would come out weaker than the PTX asked for. The
/// ptx-to-std lowering gives NVPTX atomicrmw only for relaxed .gpu atom/red
/// and inline PTX for the rest (nvptxLLVMAtomicIsExact); this keeps anything
/// else from reaching the backend.
llvm::Error checkNvptxAtomicRMWs(llvm::Module &module) {
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

} // namespace

llvm::Expected<std::unique_ptr<llvm::Module>>
zmlir::translateGpuModuleToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                                  llvm::StringRef triple) {
  auto gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
  if (gpuModules.size() != 1)
    return makeError("expected exactly one gpu.module, found " +
                     llvm::Twine(gpuModules.size()));
  // translateModuleToLLVMIR wants a builtin.module: clone the gpu.module's
  // body into a fresh one.
  OpBuilder builder(module.getContext());
  OwningOpRef<ModuleOp> flat = ModuleOp::create(module.getLoc());
  builder.setInsertionPointToStart(flat->getBody());
  IRMapping mapping;
  for (Operation &op : gpuModules.front().getBody()->without_terminator())
    builder.clone(op, mapping);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*flat, context, "zmlir");
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(llvm::Triple(triple));
  if (llvmModule->getTargetTriple().isNVPTX()) {
    if (llvm::Error error = annotateManagedGlobals(gpuModules.front(), *llvmModule))
      return std::move(error);
    if (llvm::Error error = checkNvptxAtomicRMWs(*llvmModule))
      return std::move(error);
  }
  return llvmModule;
}

llvm::Expected<std::string> zmlir::emitCode(llvm::StringRef llvmIR,
                                            llvm::StringRef triple,
                                            llvm::StringRef cpu,
                                            llvm::StringRef features,
                                            OutputKind kind, int optLevel) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(llvmIR, diag, context);
  if (!module) {
    std::string message;
    llvm::raw_string_ostream os(message);
    diag.print("llvm-ir", os);
    return makeError(message);
  }
  auto machine = createTargetMachine(triple, cpu, features, optLevel);
  if (!machine)
    return machine.takeError();
  module->setTargetTriple(llvm::Triple(triple));
  module->setDataLayout((*machine)->createDataLayout());
  std::string verifyMessage;
  llvm::raw_string_ostream verifyStream(verifyMessage);
  if (llvm::verifyModule(*module, &verifyStream))
    return makeError("invalid LLVM IR: " + verifyMessage);
  optimize(*module, **machine, optLevel);

  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  auto fileType = kind == OutputKind::Object ? llvm::CodeGenFileType::ObjectFile
                                             : llvm::CodeGenFileType::AssemblyFile;
  if ((*machine)->addPassesToEmitFile(passes, os, nullptr, fileType))
    return makeError("target '" + triple + "' cannot emit this file type");
  passes.run(*module);
  return std::string(buffer.str());
}
