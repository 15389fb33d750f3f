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

// mma.sync and ldmatrix print back with their forms; ldmatrix's .trans,
// state space and offset are optional.
// CHECK-LABEL: func.func @mma_sync
func.func @mma_sync(%p: i64, %q: i32, %x: f64) attributes {ptx.entry} {
  // CHECK: %[[A:.*]]:4 = ptx.ldmatrix %{{.*}} {offset = 16 : i64, space = #ptx.space<shared>} : i32 -> i32, i32, i32, i32
  %a:4 = ptx.ldmatrix %q {offset = 16, space = #ptx.space<shared>} : i32 -> i32, i32, i32, i32
  // CHECK: %[[B:.*]]:2 = ptx.ldmatrix %{{.*}} {trans} : i64 -> i32, i32
  %b:2 = ptx.ldmatrix %p {trans} : i64 -> i32, i32
  // CHECK: %[[C:.*]] = ptx.ldmatrix %{{.*}} {space = #ptx.space<shared>, trans} : i32 -> i32
  %c = ptx.ldmatrix %q {space = #ptx.space<shared>, trans} : i32 -> i32
  %f = arith.constant 1.0 : f32
  // CHECK: %{{.*}}:4 = ptx.mma_sync a(%[[A]]#0, %[[A]]#1, %[[A]]#2, %[[A]]#3) b(%[[B]]#0, %[[B]]#1) c(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {atype = #ptx.wmma_type<bf16>, btype = #ptx.wmma_type<bf16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.mma_shape<m16n8k16>} : (i32, i32, i32, i32), (i32, i32), (f32, f32, f32, f32) -> f32, f32, f32, f32
  %d:4 = ptx.mma_sync a(%a#0, %a#1, %a#2, %a#3) b(%b#0, %b#1) c(%f, %f, %f, %f) {atype = #ptx.wmma_type<bf16>, btype = #ptx.wmma_type<bf16>, ctype = #ptx.wmma_type<f32>, dtype = #ptx.wmma_type<f32>, shape = #ptx.mma_shape<m16n8k16>} : (i32, i32, i32, i32), (i32, i32), (f32, f32, f32, f32) -> f32, f32, f32, f32
  // CHECK: %{{.*}}:2 = ptx.mma_sync a(%{{.*}}) b(%{{.*}}) c(%{{.*}}, %{{.*}}) {{{.*}}shape = #ptx.mma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64, f64
  %e:2 = ptx.mma_sync a(%x) b(%x) c(%x, %x) {atype = #ptx.wmma_type<f64>, btype = #ptx.wmma_type<f64>, ctype = #ptx.wmma_type<f64>, dtype = #ptx.wmma_type<f64>, shape = #ptx.mma_shape<m8n8k4>} : (f64), (f64), (f64, f64) -> f64, f64
  ptx.ret
}
