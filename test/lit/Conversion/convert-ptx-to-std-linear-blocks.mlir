// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0 subgroup-size=32" | FileCheck %s

// A kernel whose warps are sub-groups and that reads %tid or %ntid in y or z
// runs one of two copies of its body: the launcher runs a block of more than
// one row whose width is no multiple of 32 as a one-dimensional work-group,
// its %ntid.x and %ntid.y the global offsets in y and z, and the copy for
// those launches reads %tid and %ntid from the linear id.
// CHECK-LABEL: gpu.func @warp_kernel
// CHECK-SAME: zmlir.linear_blocks = 1 : i64
// CHECK: %[[OFFSET:.*]] = llvm.call @_Z17get_global_offsetj(%c1_i32{{.*}})
// CHECK: %[[LINEAR:.*]] = arith.cmpi ne, %[[OFFSET]], %c0_i64
// CHECK: cf.cond_br %[[LINEAR]], ^[[COPY:.*]], ^[[AS_IS:[^ ]*]]
// CHECK: ^[[AS_IS]]:
// CHECK: gpu.thread_id  y
// CHECK: gpu.block_dim  z
// CHECK: sub_group_shuffle
// CHECK: ^[[COPY]]:
// CHECK: %[[ID:.*]] = gpu.thread_id  x
// CHECK: %[[SIZE:.*]] = gpu.block_dim  x
// CHECK: %[[X:.*]] = arith.maxui {{.*}}, %c1 : index
// CHECK: %[[Y:.*]] = arith.maxui {{.*}}, %c1 : index
// CHECK: %[[ROW:.*]] = arith.muli %[[X]], %[[Y]] : index
// CHECK: %[[ABOVE:.*]] = arith.divui %[[ID]], %[[X]] : index
// CHECK: %[[TID_Y:.*]] = arith.remui %[[ABOVE]], %[[Y]] : index
// CHECK: %[[NTID_Z:.*]] = arith.divui %[[SIZE]], %[[ROW]] : index
// CHECK: arith.index_castui %[[TID_Y]] : index to i32
// CHECK: arith.index_castui %[[NTID_Z]] : index to i32
// CHECK-NOT: gpu.thread_id  y
// CHECK: sub_group_shuffle
func.func @warp_kernel(%a: i32) attributes {ptx.entry} {
  %y = ptx.sreg <tid.y> : i32
  %n = ptx.sreg <ntid.z> : i32
  %d, %ok = ptx.shfl_sync %y, %a, %n, %a {mode = #ptx.shfl<idx>} : i32
  ptx.ret
}

// -----

// One that reads x alone has no copy (the launcher refuses it such blocks).
// CHECK-LABEL: gpu.func @warp_kernel_of_one_row
// CHECK-NOT: zmlir.linear_blocks
// CHECK-NOT: get_global_offset
// CHECK: gpu.return
func.func @warp_kernel_of_one_row(%a: i32) attributes {ptx.entry} {
  %x = ptx.sreg <tid.x> : i32
  %n = ptx.sreg <ntid.x> : i32
  %d, %ok = ptx.shfl_sync %x, %a, %n, %a {mode = #ptx.shfl<idx>} : i32
  ptx.ret
}

// -----

// A kernel without warp operations runs its blocks as they are.
// CHECK-LABEL: gpu.func @plain_kernel
// CHECK-NOT: get_global_offset
// CHECK: gpu.thread_id  y
// CHECK-NEXT: arith.index_castui
// CHECK-NEXT: gpu.return
func.func @plain_kernel(%a: i32) attributes {ptx.entry} {
  %y = ptx.sreg <tid.y> : i32
  ptx.ret
}

// -----

// A device function, in a module with a kernel that has the copy (here
// through the function's own read of y), picks between the block's own %tid
// and the linear one at each read (the linear one computed once, at entry).
// CHECK-LABEL: llvm.func internal @row
// CHECK: arith.remui %thread_id_x
// CHECK: %[[TID_Y:.*]] = arith.remui
// CHECK: %[[OFFSET:.*]] = llvm.call @_Z17get_global_offsetj(%c1_i32{{.*}})
// CHECK: %[[LINEAR:.*]] = arith.cmpi ne, %[[OFFSET]], %c0_i64
// CHECK: %[[OWN:.*]] = gpu.thread_id  y
// CHECK: arith.select %[[LINEAR]], %[[TID_Y]], %[[OWN]] : index
func.func @row() -> i32 {
  %0 = ptx.sreg <tid.y> : i32
  ptx.ret %0 : i32
}
func.func @caller(%a: i32) attributes {ptx.entry} {
  %l = ptx.sreg <laneid> : i32
  %r = ptx.call @row() : () -> i32
  ptx.ret
}
