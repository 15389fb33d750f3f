// RUN: zmlir-opt %s | zmlir-opt | FileCheck %s
// RUN: zmlir-opt %s -mlir-print-op-generic | zmlir-opt | FileCheck %s

// The mbarrier ops print back with their optional operands (count, tx,
// suspend) and modifiers; the defaults (generic space, offset 0, no
// semantics or scope) do not print.
// CHECK-LABEL: func.func @mbarrier
func.func @mbarrier(%a: i32, %g: i64, %n: i32, %s: i64) attributes {ptx.entry} {
  // CHECK: ptx.mbarrier_init %{{.*}}, %{{.*}} {offset = 8 : i64, space = #ptx.space<shared>} : i32, i32
  ptx.mbarrier_init %a, %n {offset = 8 : i64, space = #ptx.space<shared>} : i32, i32
  // CHECK: ptx.mbarrier_arrive %{{.*}} : i64 -> i64
  %0 = ptx.mbarrier_arrive %g : i64 -> i64
  // CHECK: ptx.mbarrier_arrive %{{.*}} count %{{.*}} {drop, no_complete} : i64 -> i64
  %1 = ptx.mbarrier_arrive %g count %n {drop, no_complete} : i64 -> i64
  // CHECK: ptx.mbarrier_arrive %{{.*}} tx %{{.*}} {scope = #ptx.scope<cluster>, sem = #ptx.sem<relaxed>} : i64 -> i64
  %2 = ptx.mbarrier_arrive %g tx %n {scope = #ptx.scope<cluster>, sem = #ptx.sem<relaxed>} : i64 -> i64
  // CHECK: ptx.mbarrier_tx %{{.*}}, %{{.*}} {complete} : i32, i32
  ptx.mbarrier_tx %a, %n {complete} : i32, i32
  // CHECK: ptx.mbarrier_test_wait %{{.*}}, %{{.*}} : i64, i64
  %3 = ptx.mbarrier_test_wait %g, %0 : i64, i64
  // CHECK: ptx.mbarrier_test_wait %{{.*}}, %{{.*}} suspend %{{.*}} {parity, try_wait} : i32, i32
  %4 = ptx.mbarrier_test_wait %a, %n suspend %n {parity, try_wait} : i32, i32
  // CHECK: ptx.mbarrier_pending_count %{{.*}}
  %5 = ptx.mbarrier_pending_count %1
  // CHECK: ptx.mbarrier_inval %{{.*}} : i32
  ptx.mbarrier_inval %a : i32
  // CHECK: ptx.cp_async_mbarrier_arrive %{{.*}} {noinc} : i64
  ptx.cp_async_mbarrier_arrive %g {noinc} : i64
  // CHECK: ptx.fence_mbarrier_init{{$}}
  ptx.fence_mbarrier_init
  ptx.ret
}
