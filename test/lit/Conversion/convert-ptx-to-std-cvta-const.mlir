// RUN: zmlir-opt %s -convert-ptx-to-std="target=spirv local-address-space=0 generic-address-space=4 const-address-space=1" | FileCheck %s --check-prefix=SPV
// RUN: zmlir-opt %s -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefix=GFX9
// RUN: zmlir-opt %s -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV

// cvta.const: where .const variables live in global memory (SPIR-V, the
// host) their generic address is the same number; where they have a space
// of their own (AMDGPU's constant 4, NVPTX's 4) it is an address space cast
// to the generic space, and cvta.to.const the cast back.
// SPV-LABEL: gpu.func @cvta_const
// SPV-NOT: llvm.addrspacecast
// SPV: llvm.store
// GFX9-LABEL: gpu.func @cvta_const
// GFX9: %[[C:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<4>
// GFX9: %[[G:.*]] = llvm.addrspacecast %[[C]] : !llvm.ptr<4> to !llvm.ptr
// GFX9: llvm.ptrtoint %[[G]] : !llvm.ptr to i64
// GFX9: llvm.addrspacecast %{{.*}} : !llvm.ptr to !llvm.ptr<4>
// NV-LABEL: gpu.func @cvta_const
// NV: llvm.addrspacecast %{{.*}} : !llvm.ptr<4> to !llvm.ptr
ptx.var @table {space = #ptx.space<const>, type = #ptx.type<b32>, count = 4, align = 4}
func.func @cvta_const(%out: i64) attributes {ptx.entry} {
  %a = ptx.addr_of @table : i64
  %g = ptx.cvta %a {space = #ptx.space<const>, type = #ptx.type<u64>} : i64 -> i64
  %back = ptx.cvta %g {space = #ptx.space<const>, to, type = #ptx.type<u64>} : i64 -> i64
  %sum = arith.addi %g, %back : i64
  ptx.st %out, %sum {space = #ptx.space<global>, type = #ptx.type<u64>} : i64, i64
  ptx.ret
}
