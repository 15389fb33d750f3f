// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std -verify-diagnostics

// An arrival on the mbarrier of another CTA in the cluster (the importer
// keeps .shared::cluster as ptx.inst): no target has clusters.
func.func @cluster_arrive(%m: i32) attributes {ptx.entry} {
  // expected-error @+1 {{unsupported instruction 'mbarrier.arrive.release.cluster.shared::cluster.b64'}}
  ptx.inst "mbarrier" [".arrive", ".release", ".cluster", ".shared::cluster", ".b64"](%m) {operand_kinds = ["d", "a+0"]} : (i32) -> ()
  ptx.ret
}

// -----

// A barrier's shared address needs the kernel's shared window, which a
// device function does not have.
func.func @init_in_func(%a: i32, %n: i32) {
  // expected-error @+1 {{unsupported shared memory access in a '.func' (only kernels have a shared window)}}
  ptx.mbarrier_init %a, %n {space = #ptx.space<shared>} : i32, i32
  ptx.ret
}
