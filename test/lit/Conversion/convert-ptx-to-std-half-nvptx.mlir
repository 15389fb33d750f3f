// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s

// fma.rz.f64 on NVPTX is NVIDIA's instruction (elsewhere it is rejected,
// see convert-ptx-to-std-unsupported.mlir).
// CHECK-LABEL: gpu.func @fma_rz_f64
// CHECK: llvm.call_intrinsic "llvm.nvvm.fma.rz.d"
func.func @fma_rz_f64(%a: f64, %b: f64, %c: f64) attributes {ptx.entry} {
  %0 = ptx.fma %a, %b, %c {type = #ptx.type<f64>, rnd = #ptx.rnd<rz>} : f64
  ptx.ret
}
