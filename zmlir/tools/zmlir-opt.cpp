//===- zmlir-opt.cpp - mlir-opt with the ptx dialect and zmlir passes -----===//

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "zmlir/dialects/ptx/PTXDialect.h"
#include "zmlir/lowering/Passes.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  zmlir::registerLoweringPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<zmlir::ptx::PTXDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "zmlir optimizer driver\n", registry));
}
