// RUN: zmlir-opt %s -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefix=SPV

// A format in .const (NVVM may put one there): only its bytes are needed,
// the cvta.const of its address goes with the call (NVPTX, whose vprintf
// takes the address itself: not tested here).
// SPV: @__zmlir_printf_formats(dense<[104, 105, 10, 0]> : tensor<4xi8>)
// SPV-LABEL: gpu.func @const_format
// SPV-NOT: @hi
// SPV: llvm.atomicrmw add
ptx.var @hi {space = #ptx.space<const>, type = #ptx.type<b8>, count = 4, align = 1, init = array<i8: 104, 105, 10>}
func.func @const_format() attributes {ptx.entry} {
  %a = ptx.addr_of @hi : i64
  %f = ptx.cvta %a {space = #ptx.space<const>, type = #ptx.type<u64>} : i64 -> i64
  %zero = arith.constant 0 : i64
  %0 = ptx.call @vprintf(%f, %zero) : (i64, i64) -> i32
  ptx.ret
}
