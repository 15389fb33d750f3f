// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" -verify-diagnostics

// A constant count other than the .reqntid block size is a barrier over part
// of the CTA, which OpenCL does not have.
func.func @partial_barrier() attributes {ptx.entry, ptx.reqntid = array<i64: 128, 1, 1>} {
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  // expected-error @+1 {{unsupported barrier over 64 of the CTA's 128 threads on target 'spirv'}}
  ptx.bar_sync %c1, %c64 {aligned}
  ptx.ret
}

// -----

// Arriving and waiting threads run different barrier instructions, which an
// OpenCL work-group barrier does not allow.
func.func @bar_arrive(%n: i32) attributes {ptx.entry} {
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{unsupported 'bar.arrive' on target 'spirv'}}
  ptx.bar_arrive %c1, %n {aligned}
  ptx.ret
}

// -----

// The address of a function the module does not define.
func.func private @elsewhere(i32) -> i32
func.func @external_address() attributes {ptx.entry} {
  // expected-error @+1 {{unsupported address of 'elsewhere' (not a .func defined in this module)}}
  %0 = ptx.func_addr @elsewhere : i64
  ptx.ret
}

// -----

// NVIDIA's driver sets %envreg0 (58995400 on the H200); there is no such
// value here, and 0 would be a wrong one.
func.func @envreg() attributes {ptx.entry} {
  // expected-error @+1 {{unsupported special register '%envreg0' on target 'spirv' (set by NVIDIA's driver)}}
  %0 = ptx.inst "mov" [".u32"] () {operand_kinds = ["d", "%envreg0"]} : () -> (i32)
  ptx.ret
}

// -----

// A kernel that needs 32-wide sub-groups (a shuffle) and reaches a function
// calling itself: Intel's CPU runtime faults compiling it.
func.func @countdown(%n: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %m = ptx.sub %n, %c1 {type = #ptx.type<s32>} : i32
  // expected-error @+1 {{unsupported recursive call of 'countdown' in kernel 'shuffles_and_counts_down' on target 'spirv': Intel's CPU runtime faults on recursion in a kernel that needs 32-wide sub-groups}}
  %r = ptx.call @countdown(%m) : (i32) -> i32
  ptx.ret %r : i32
}
func.func @shuffles_and_counts_down(%n: i32) attributes {ptx.entry} {
  %r = ptx.call @countdown(%n) : (i32) -> i32
  %d, %ok = ptx.shfl_sync %r, %n, %n, %n {mode = #ptx.shfl<bfly>} : i32
  ptx.ret
}

// -----

// The same through another function, which a shuffle in the cycle makes need
// whole warps: the error is at the call closing the cycle.
func.func @ping(%n: i32) -> i32 {
  %r = ptx.call @pong(%n) : (i32) -> i32
  ptx.ret %r : i32
}
func.func @pong(%n: i32) -> i32 {
  %d, %ok = ptx.shfl_sync %n, %n, %n, %n {mode = #ptx.shfl<bfly>} : i32
  // expected-error @+1 {{unsupported recursive call of 'ping' in kernel 'calls_ping' on target 'spirv'}}
  %r = ptx.call @ping(%d) : (i32) -> i32
  ptx.ret %r : i32
}
func.func @calls_ping(%n: i32) attributes {ptx.entry} {
  %r = ptx.call @ping(%n) : (i32) -> i32
  ptx.ret
}

// -----

// %current_graph_exec (the device graph a kernel runs in): refused by its
// name, not as the `mov` that reads it.
func.func @current_graph_exec() attributes {ptx.entry} {
  // expected-error @+1 {{unsupported special register '%current_graph_exec' on target 'spirv'}}
  %0 = ptx.inst "mov" [".u64"] () {operand_kinds = ["d", "%current_graph_exec"]} : () -> (i64)
  ptx.ret
}
