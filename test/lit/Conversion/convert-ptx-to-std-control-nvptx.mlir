// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s

// %envreg<N> is NVIDIA's driver's value on NVPTX.
// CHECK-LABEL: gpu.func @envreg
// CHECK: llvm.inline_asm has_side_effects "mov.b32 $0, %envreg3;", "=r"
func.func @envreg() attributes {ptx.entry} {
  %0 = ptx.inst "mov" [".u32"] () {operand_kinds = ["d", "%envreg3"]} : () -> (i32)
  ptx.ret
}
