// RUN: zmlir-opt %s | zmlir-opt | FileCheck %s
// RUN: zmlir-opt %s -mlir-print-op-generic | zmlir-opt | FileCheck %s

// cp.async prints back with its cache operator, size and offsets, the
// source size or the ignore-src predicate optional; the groups with their
// count or `all`.
// CHECK-LABEL: func.func @cp_async
func.func @cp_async(%d: i32, %d64: i64, %s: i64, %n: i32, %p: i1) attributes {ptx.entry} {
  // CHECK: ptx.cp_async %{{.*}}, %{{.*}} {cache = #ptx.cache<cg>, size = 16 : i64} : i32, i64
  ptx.cp_async %d, %s {cache = #ptx.cache<cg>, size = 16 : i64} : i32, i64
  // CHECK: ptx.cp_async %{{.*}}, %{{.*}} src_size %{{.*}} {cache = #ptx.cache<ca>, dst_offset = 4 : i64, size = 4 : i64, src_offset = 8 : i64} : i64, i64
  ptx.cp_async %d64, %s src_size %n {cache = #ptx.cache<ca>, size = 4 : i64, dst_offset = 4 : i64, src_offset = 8 : i64} : i64, i64
  // CHECK: ptx.cp_async %{{.*}}, %{{.*}} ignore_src %{{.*}} {cache = #ptx.cache<ca>, size = 8 : i64} : i32, i64
  ptx.cp_async %d, %s ignore_src %p {cache = #ptx.cache<ca>, size = 8 : i64} : i32, i64
  // CHECK: ptx.cp_async_commit_group
  ptx.cp_async_commit_group
  // CHECK: ptx.cp_async_wait_group {pending = 1 : i64}
  ptx.cp_async_wait_group {pending = 1 : i64}
  // CHECK: ptx.cp_async_wait_group{{$}}
  ptx.cp_async_wait_group {pending = 0 : i64}
  // CHECK: ptx.cp_async_wait_group {all}
  ptx.cp_async_wait_group {all}
  ptx.ret
}

// cp.async.bulk prints back with its spaces and offsets, the mbarrier
// optional; the bulk groups with their count and `read`.
// CHECK-LABEL: func.func @cp_async_bulk
func.func @cp_async_bulk(%d: i32, %s: i64, %n: i32, %b: i32) attributes {ptx.entry} {
  // CHECK: ptx.cp_async_bulk %{{.*}}, %{{.*}}, %{{.*}} mbarrier %{{.*}} {dst_offset = 16 : i64, dst_space = #ptx.space<shared_cluster>, mbar_offset = 8 : i64, src_offset = 32 : i64, src_space = #ptx.space<global>} : i32, i64, i32
  ptx.cp_async_bulk %d, %s, %n mbarrier %b {dst_space = #ptx.space<shared_cluster>, src_space = #ptx.space<global>, dst_offset = 16 : i64, src_offset = 32 : i64, mbar_offset = 8 : i64} : i32, i64, i32
  // CHECK: ptx.cp_async_bulk %{{.*}}, %{{.*}}, %{{.*}} {dst_space = #ptx.space<global>, src_space = #ptx.space<shared>} : i64, i32{{$}}
  ptx.cp_async_bulk %s, %d, %n {dst_space = #ptx.space<global>, src_space = #ptx.space<shared>} : i64, i32
  // CHECK: ptx.cp_async_bulk_commit_group
  ptx.cp_async_bulk_commit_group
  // CHECK: ptx.cp_async_bulk_wait_group {pending = 2 : i64, read}
  ptx.cp_async_bulk_wait_group {pending = 2 : i64, read}
  // CHECK: ptx.cp_async_bulk_wait_group{{$}}
  ptx.cp_async_bulk_wait_group
  // CHECK: ptx.fence_proxy_async {space = #ptx.space<shared>}
  ptx.fence_proxy_async {space = #ptx.space<shared>}
  // CHECK: ptx.fence_proxy_async{{$}}
  ptx.fence_proxy_async
  ptx.ret
}
