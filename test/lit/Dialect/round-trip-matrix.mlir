// RUN: zmlir-opt %s | zmlir-opt | FileCheck %s
// RUN: zmlir-opt %s -mlir-print-op-generic | zmlir-opt | FileCheck %s

// The wmma ops print back with their modifiers; the stride is optional.
// CHECK-LABEL: func.func @wmma
func.func @wmma(%p: i64, %s: i32, %q: i32) attributes {ptx.entry} {
  // CHECK: %[[A:.*]]:8 = ptx.wmma_load %{{.*}} {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<a>, shape = #ptx.wmma_shape<m16n16k16>, space = #ptx.space<shared>, type = #ptx.wmma_type<f16>} : i32 -> i32, i32, i32, i32, i32, i32, i32, i32
  %a:8 = ptx.wmma_load %q {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<a>, shape = #ptx.wmma_shape<m16n16k16>, space = #ptx.space<shared>, type = #ptx.wmma_type<f16>} : i32 -> i32, i32, i32, i32, i32, i32, i32, i32
  // CHECK: %[[B:.*]]:8 = ptx.wmma_load %{{.*}}, %{{.*}} {layout = #ptx.wmma_layout<col>, matrix = #ptx.wmma_matrix<b>, offset = 64 : i64, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32, i32, i32, i32, i32
  %b:8 = ptx.wmma_load %p, %s {layout = #ptx.wmma_layout<col>, matrix = #ptx.wmma_matrix<b>, offset = 64, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32, i32, i32, i32, i32
  // CHECK: %[[C:.*]]:4 = ptx.wmma_load {{.*}} type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32
  %c:4 = ptx.wmma_load %p, %s {layout = #ptx.wmma_layout<row>, matrix = #ptx.wmma_matrix<c>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f16>} : i64 -> i32, i32, i32, i32
  // CHECK: %[[D:.*]]:4 = ptx.wmma_mma a(%[[A]]#0, {{.*}}) b(%[[B]]#0, {{.*}}) c(%[[C]]#0, %[[C]]#1, %[[C]]#2, %[[C]]#3) {{{.*}}satfinite{{.*}}} : (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32) -> i32, i32, i32, i32
  %d:4 = ptx.wmma_mma a(%a#0, %a#1, %a#2, %a#3, %a#4, %a#5, %a#6, %a#7) b(%b#0, %b#1, %b#2, %b#3, %b#4, %b#5, %b#6, %b#7) c(%c#0, %c#1, %c#2, %c#3) {alayout = #ptx.wmma_layout<row>, atype = #ptx.wmma_type<f16>, blayout = #ptx.wmma_layout<col>, btype = #ptx.wmma_type<f16>, ctype = #ptx.wmma_type<f16>, dtype = #ptx.wmma_type<f16>, satfinite, shape = #ptx.wmma_shape<m16n16k16>} : (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32, i32, i32, i32, i32), (i32, i32, i32, i32) -> i32, i32, i32, i32
  // CHECK: ptx.wmma_store %{{.*}}, %[[D]]#0, %[[D]]#1, %[[D]]#2, %[[D]]#3 {layout = #ptx.wmma_layout<col>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f16>} : i64, i32, i32, i32, i32
  ptx.wmma_store %p, %d#0, %d#1, %d#2, %d#3 {layout = #ptx.wmma_layout<col>, shape = #ptx.wmma_shape<m16n16k16>, type = #ptx.wmma_type<f16>} : i64, i32, i32, i32, i32
  // CHECK: ptx.wmma_store %{{.*}}, %{{.*}}, %{{.*}} stride %{{.*}} {{{.*}}type = #ptx.wmma_type<f64>} : i64, f64, f64
  %e = arith.constant 1.0 : f64
  ptx.wmma_store %p, %e, %e stride %s {layout = #ptx.wmma_layout<row>, shape = #ptx.wmma_shape<m8n8k4>, type = #ptx.wmma_type<f64>} : i64, f64, f64
  ptx.ret
}
