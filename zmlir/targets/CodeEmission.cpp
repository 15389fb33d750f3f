//===- CodeEmission.cpp - MLIR -> LLVM IR -> target code ------------------===//

#include "zmlir/targets/CodeEmission.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
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
#include "llvm/Support/CommandLine.h"
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

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(llvm::StringRef tripleName,
                                                                         llvm::StringRef cpu,
                                                                         llvm::StringRef features,
                                                                         int optLevel) {
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
    return makeError("cannot create a target machine for '" + tripleName + "' cpu '" + cpu + "'");
  return machine;
}

/// The standard LLVM optimisation pipeline at `optLevel`, as clang runs it
/// (NVPTX's with LICM in innermost loops only and no tail call elimination).
void optimize(llvm::Module &module, llvm::TargetMachine &machine, int optLevel) {
  if (optLevel <= 0)
    return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // NVPTX's LICM runs in innermost loops only: the PTX we recompile is
  // NVVM's, whose outer loops' invariants stand where NVVM left them, some
  // sunk back into their loops to keep registers free (nvcc's
  // dmmaTensorCoreGemm recomputes cp.async destinations in each turn of its
  // outer loop). LICM of the whole nest hoisted them all again, live across
  // the whole kernel: compute_dgemm_async_copy took 168 registers where
  // nvcc's PTX takes 128. ptxas hoists further what it finds worth it. But
  // the invariants LLVM itself makes in an innermost loop (reassociated
  // addresses) must leave it, as NVVM's left: without that
  // compute_gemm_imma's fragment loads kept their constants folded into
  // the loop's addresses, and ptxas scheduled its global loads late
  // (0.533 ms a launch on an H100 where nvcc's PTX takes 0.477).
  // Nor tail call elimination: NVVM left `fib(n - 1) + fib(n - 2)` two
  // calls, and the loop with an accumulator that elimination makes of the
  // second, once unrolled, keeps more live across the first: 56 bytes of
  // stack per level where nvcc's take 24, and a recursion that fits the
  // driver's 1 KiB default stack natively overflowed it (recursion.cu on an
  // H200: CUDA_ERROR_ILLEGAL_ADDRESS).
  llvm::PassInstrumentationCallbacks instrumentation;
  if (machine.getTargetTriple().isNVPTX())
    instrumentation.registerShouldRunOptionalPassCallback([](llvm::StringRef pass, llvm::Any ir) {
      if (pass == "LICMPass") {
        const auto *loop = llvm::any_cast<const llvm::Loop *>(&ir);
        return loop && (*loop)->isInnermost();
      }
      return pass != "TailCallElimPass";
    });
  llvm::PassBuilder builder(&machine, llvm::PipelineTuningOptions(), std::nullopt,
                            &instrumentation);
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

/// Gives back the `llvm.byval` types and `llvm.align` alignments that
/// upstream's gpu.func lowering drops: a kernel whose lowering passes
/// by-value aggregates byval lists each parameter's type in `zmlir.byval` and
/// its alignment in `zmlir.align` (unit where it has none).
void restoreByValParams(ModuleOp module) {
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
    auto types = fn->getAttrOfType<ArrayAttr>("zmlir.byval");
    auto aligns = fn->getAttrOfType<ArrayAttr>("zmlir.align");
    if (!types || !aligns)
      continue;
    for (auto [index, type, align] : llvm::enumerate(types, aligns)) {
      if (!isa<TypeAttr>(type) || index >= fn.getNumArguments())
        continue;
      fn.setArgAttr(index, LLVM::LLVMDialect::getByValAttrName(), type);
      fn.setArgAttr(index, LLVM::LLVMDialect::getAlignAttrName(), align);
    }
  }
}

/// Each call of kLoopNoUnrollMarker becomes `llvm.loop.unroll.disable` on
/// the latches of the loop its block heads, with a loop id of that loop's
/// own; a marker outside a loop header (PTX ignores the pragma there) is
/// dropped.
void applyLoopNoUnrollMarkers(llvm::Module &module) {
  llvm::Function *marker = module.getFunction(zmlir::kLoopNoUnrollMarker);
  if (!marker)
    return;
  llvm::DenseMap<llvm::Function *, llvm::SmallVector<llvm::CallInst *>> callsByFunction;
  for (llvm::User *user : llvm::make_early_inc_range(marker->users()))
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(user))
      callsByFunction[call->getFunction()].push_back(call);
  llvm::LLVMContext &context = module.getContext();
  llvm::MDNode *disable = llvm::MDNode::get(
      context, llvm::MDString::get(context, "llvm.loop.unroll.disable"));
  for (auto &[function, calls] : callsByFunction) {
    llvm::DominatorTree dominators(*function);
    llvm::LoopInfo loops(dominators);
    for (llvm::CallInst *call : calls) {
      llvm::Loop *loop = loops.getLoopFor(call->getParent());
      if (loop && loop->getHeader() == call->getParent()) {
        // A fresh distinct id: loops must not share one.
        auto *id = llvm::MDNode::getDistinct(context, {nullptr, disable});
        id->replaceOperandWith(0, id);
        llvm::SmallVector<llvm::BasicBlock *> latches;
        loop->getLoopLatches(latches);
        for (llvm::BasicBlock *latch : latches)
          latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, id);
      }
      call->eraseFromParent();
    }
  }
  if (marker->use_empty())
    marker->eraseFromParent();
}

/// The LLVM-module fix-ups a target asks for by name (Target.llvm_fixups in
/// Python), each in its target's folder.
const llvm::StringMap<zmlir::LLVMModuleFixup> &fixupsByName() {
  static const llvm::StringMap<zmlir::LLVMModuleFixup> fixups = {
#define ZMLIR_LLVM_FIXUP(Name, Function) {Name, zmlir::Function},
#include "zmlir/targets/Targets.def"
  };
  return fixups;
}

} // namespace

llvm::Expected<std::unique_ptr<llvm::Module>>
zmlir::translateGpuModuleToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                                  llvm::StringRef triple, llvm::ArrayRef<std::string> fixups) {
  auto gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
  if (gpuModules.size() != 1)
    return makeError("expected exactly one gpu.module, found " + llvm::Twine(gpuModules.size()));
  // translateModuleToLLVMIR wants a builtin.module: clone the gpu.module's
  // body into a fresh one.
  OpBuilder builder(module.getContext());
  OwningOpRef<ModuleOp> flat = ModuleOp::create(module.getLoc());
  builder.setInsertionPointToStart(flat->getBody());
  IRMapping mapping;
  for (Operation &op : gpuModules.front().getBody()->without_terminator())
    builder.clone(op, mapping);
  restoreByValParams(*flat);
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(*flat, context, "zmlir");
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(llvm::Triple(triple));
  applyLoopNoUnrollMarkers(*llvmModule);
  for (const std::string &name : fixups) {
    auto fixup = fixupsByName().find(name);
    if (fixup == fixupsByName().end())
      return makeError("unknown LLVM module fix-up '" + name + "'");
    if (llvm::Error error = fixup->second(gpuModules.front(), *llvmModule))
      return std::move(error);
  }
  return llvmModule;
}

namespace {

/// Adds `machine`'s code generation passes to `passes`; true if it cannot
/// emit `fileType`. NVPTX's go without LLVM's loop strength reduction: the
/// PTX we compile is nvcc's (NVVM's), strength-reduced already, and LSR
/// run again on it gives the loops induction variables of its own (a
/// 32-bit offset and a pointer where nvcc kept one index, exit tests that
/// count to zero) which ptxas keeps in registers: 47 in llm.c's
/// fused_residual_forward_kernel6 where nvcc's PTX takes 40, and the
/// registers over nvcc's summed over llm.c's kernels halved without it
/// (bench/results/ftz_sass.md). LSR reads the `disable-lsr` option when
/// the passes are added, so it is set around that only, under a lock that
/// every target's emission takes.
bool addCodeGenPasses(llvm::TargetMachine &machine, llvm::legacy::PassManager &passes,
                      llvm::raw_pwrite_stream &os, llvm::CodeGenFileType fileType) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  llvm::cl::opt<bool> *disableLSR = nullptr;
  auto &options = llvm::cl::getRegisteredOptions();
  auto option = options.find("disable-lsr");
  if (option != options.end())
    disableLSR = static_cast<llvm::cl::opt<bool> *>(option->second);
  bool saved = disableLSR && disableLSR->getValue();
  if (disableLSR && machine.getTargetTriple().isNVPTX())
    disableLSR->setValue(true);
  bool failed = machine.addPassesToEmitFile(passes, os, nullptr, fileType);
  if (disableLSR)
    disableLSR->setValue(saved);
  return failed;
}

} // namespace

llvm::Expected<std::string> zmlir::emitCode(llvm::StringRef llvmIR, llvm::StringRef triple,
                                            llvm::StringRef cpu, llvm::StringRef features,
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
  if (module->getTargetTriple().isNVPTX()) {
    addNVPTXDisjointOrs(*module);
    splitNVPTXConstantOffsets(*module);
    selectNVPTXConditionalNots(*module);
  }

  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  auto fileType = kind == OutputKind::Object ? llvm::CodeGenFileType::ObjectFile
                                             : llvm::CodeGenFileType::AssemblyFile;
  if (addCodeGenPasses(**machine, passes, os, fileType))
    return makeError("target '" + triple + "' cannot emit this file type");
  passes.run(*module);
  return std::string(buffer.str());
}
