//===- NativeModule.cpp - zmlir._native: the compiler core for Python -----===//
//
// Python drives compilation through a few calls: a Module (parsed, verified,
// passes run on it in place, printed), translation of MLIR text to LLVM IR,
// an LLVM backend. Every MLIR
// diagnostic is collected and raised as one `zmlir._native.MLIRError` whose
// lines read `file:line:col: error: message`.
//
//===----------------------------------------------------------------------===//

#include "zmlir/dialects/ptx/PTXDialect.h"
#include "zmlir/lowering/Passes.h"
#include "zmlir/targets/CodeEmission.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <mutex>

namespace nb = nanobind;
using namespace mlir;

namespace {

/// Every dialect, extension and translation zmlir uses, registered once.
const DialectRegistry &registry() {
  static DialectRegistry *registry = [] {
    registerAllPasses();
    zmlir::registerLoweringPasses();
    auto *r = new DialectRegistry();
    registerAllDialects(*r);
    registerAllExtensions(*r);
    registerAllToLLVMIRTranslations(*r);
    r->insert<zmlir::ptx::PTXDialect>();
    return r;
  }();
  return *registry;
}

/// A context of its own for each module: what MLIR uniques (locations,
/// attributes, types) lives as long as the context, so one context for the
/// process would grow with every module compiled, and hashing into its
/// tables gets slower as they grow. Dialects load when first used.
std::unique_ptr<MLIRContext> newContext() {
  return std::make_unique<MLIRContext>(registry(), MLIRContext::Threading::DISABLED);
}

std::string formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine()) + ":" +
            llvm::Twine(file.getColumn()))
        .str();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations()) {
      std::string text = formatLocation(inner);
      if (!text.empty())
        return text;
    }
  }
  if (auto name = dyn_cast<NameLoc>(loc))
    return formatLocation(name.getChildLoc());
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return formatLocation(callSite.getCallee());
  return "";
}

/// Collects error diagnostics while alive; `raise()` throws them as one
/// MLIRError. Follow-up noise from the conversion driver is dropped when a
/// pattern already said what was wrong.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return success();
          std::string location = formatLocation(diag.getLocation());
          std::string line = (location.empty() ? std::string("<unknown>") : location) +
                             ": error: " + diag.str();
          messages.push_back(line);
          return success();
        }) {}

  [[noreturn]] void raise(const std::string &fallback);

private:
  ScopedDiagnosticHandler handler;
  std::vector<std::string> messages;
};

void DiagnosticCollector::raise(const std::string &fallback) {
  std::vector<std::string> kept;
  for (const std::string &m : messages)
    if (m.find("failed to legalize operation") == std::string::npos &&
        m.find("failed to legalize unresolved materialization") == std::string::npos)
      kept.push_back(m);
  if (kept.empty())
    kept = messages;
  std::string text;
  for (const std::string &m : kept)
    text += m + "\n";
  if (text.empty())
    text = fallback + "\n";
  text.pop_back();
  throw nb::builtin_exception(nb::exception_type::runtime_error, text.c_str());
}

OwningOpRef<ModuleOp> parse(MLIRContext &context, const std::string &source,
                            const std::string &filename, DiagnosticCollector &diagnostics) {
  // Verified once, below: the parser's own verification after parse would
  // run the same checks a second time.
  ParserConfig config(&context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, config, filename);
  if (!module)
    diagnostics.raise("cannot parse MLIR input");
  if (failed(verify(*module)))
    diagnostics.raise("the module does not verify");
  return module;
}

std::string print(ModuleOp module, bool debugInfo) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (debugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(os, flags);
  return text;
}

void runPasses(ModuleOp module, const std::string &pipeline, DiagnosticCollector &diagnostics) {
  if (llvm::StringRef(pipeline).trim().empty())
    return;
  PassManager pm(module->getContext());
  // The pass manager is anchored on builtin.module already: parse what is
  // inside `builtin.module(...)`, as mlir-opt --pass-pipeline does.
  llvm::StringRef inner(pipeline);
  inner = inner.trim();
  if (inner.consume_front("builtin.module(") && inner.consume_back(")"))
    inner = inner.trim();
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (!inner.empty() && failed(parsePassPipeline(inner, pm, errorStream)))
    throw nb::value_error(("invalid pass pipeline: " + error).c_str());
  if (failed(pm.run(module)))
    diagnostics.raise("pass pipeline failed");
}

/// A parsed and verified module kept in the context, so the stages of one
/// compilation pass it along instead of printing and parsing it again.
class Module {
public:
  Module(const std::string &source, const std::string &filename) : context(newContext()) {
    DiagnosticCollector diagnostics(*context);
    module = parse(*context, source, filename, diagnostics);
  }

  void run(const std::string &pipeline) {
    DiagnosticCollector diagnostics(*context);
    runPasses(*module, pipeline, diagnostics);
  }

  std::string text(bool debugInfo) { return print(*module, debugInfo); }

private:
  std::unique_ptr<MLIRContext> context; // declared first: outlives the module
  OwningOpRef<ModuleOp> module;
};

std::string translateToLLVMIR(const std::string &source, const std::string &triple,
                              const std::vector<std::string> &fixups) {
  std::unique_ptr<MLIRContext> context = newContext();
  DiagnosticCollector diagnostics(*context);
  OwningOpRef<ModuleOp> module = parse(*context, source, "<llvm-dialect>", diagnostics);
  llvm::LLVMContext llvmContext;
  auto llvmModule = zmlir::translateGpuModuleToLLVMIR(*module, llvmContext, triple, fixups);
  if (!llvmModule)
    diagnostics.raise(llvm::toString(llvmModule.takeError()));
  std::string text;
  llvm::raw_string_ostream os(text);
  (*llvmModule)->print(os, nullptr);
  return text;
}

nb::bytes emit(const std::string &llvmIR, const std::string &triple, const std::string &cpu,
               const std::string &features, const std::string &kind, int optLevel) {
  zmlir::OutputKind outputKind;
  if (kind == "asm")
    outputKind = zmlir::OutputKind::Assembly;
  else if (kind == "obj")
    outputKind = zmlir::OutputKind::Object;
  else
    throw nb::value_error("kind must be 'asm' or 'obj'");
  std::string code, error;
  {
    nb::gil_scoped_release release;
    llvm::Expected<std::string> result = zmlir::emitCode(llvmIR, triple, cpu, features, outputKind,
                                                         optLevel);
    if (result)
      code = std::move(*result);
    else
      error = llvm::toString(result.takeError());
  }
  if (!error.empty())
    throw nb::builtin_exception(nb::exception_type::runtime_error, error.c_str());
  return nb::bytes(code.data(), code.size());
}

/// (kernel name, [(attribute name without "zmlir.", integer value)]) for
/// every kernel in the module's gpu.module, whatever dialect it is in now.
std::vector<std::pair<std::string, std::vector<std::pair<std::string, int64_t>>>>
kernelAttributes(const std::string &source) {
  std::unique_ptr<MLIRContext> context = newContext();
  DiagnosticCollector diagnostics(*context);
  OwningOpRef<ModuleOp> module = parse(*context, source, "<kernels>", diagnostics);
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, int64_t>>>> result;
  module->walk([&](Operation *op) {
    auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (!name || !op->hasAttr("zmlir.static_shared_bytes"))
      return;
    std::vector<std::pair<std::string, int64_t>> attrs;
    for (NamedAttribute attr : op->getAttrs()) {
      StringRef key = attr.getName().getValue();
      if (!key.consume_front("zmlir."))
        continue;
      if (auto value = dyn_cast<IntegerAttr>(attr.getValue()))
        attrs.emplace_back(key.str(), value.getValue().getSExtValue());
    }
    result.emplace_back(name.getValue().str(), std::move(attrs));
  });
  return result;
}

} // namespace

NB_MODULE(_native, m) {
  m.doc() = "zmlir's compiler core: MLIR passes and LLVM code generation";
  nb::class_<Module>(m, "Module", "A parsed and verified MLIR module (raises on invalid text).")
      .def(nb::init<const std::string &, const std::string &>(), nb::arg("source"),
           nb::arg("filename") = "<input>")
      .def("run", &Module::run, nb::arg("pipeline"),
           "Run a textual pass pipeline on the module, in place.")
      .def("text", &Module::text, nb::arg("debug_info") = false,
           "The module printed as MLIR text.");
  m.def("translate_to_llvm_ir", &translateToLLVMIR, nb::arg("source"), nb::arg("triple"),
        nb::arg("fixups") = std::vector<std::string>(),
        "Translate the module's gpu.module (in the LLVM dialect) to LLVM IR text, then apply "
        "the target's LLVM module fix-ups (by name).");
  m.def("emit", &emit, nb::arg("llvm_ir"), nb::arg("triple"), nb::arg("cpu") = "",
        nb::arg("features") = "", nb::arg("kind") = "obj", nb::arg("opt_level") = 2,
        "Run an LLVM backend on LLVM IR text; returns assembly or an object file.");
  m.def("kernel_attributes", &kernelAttributes, nb::arg("source"),
        "The zmlir.* integer attributes of each kernel in a lowered module.");
  m.def("llvm_version", [] { return std::string(LLVM_VERSION_STRING); });
}
