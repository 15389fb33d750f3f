"""What the worker processes (pool.py) start from: the forkserver imports this
module, so each worker forked from it has the frontend imported and its
lazily built tables built: lark's LALR tables and per-state lexers, and the
recipes of common instruction shapes (memo.py). Built in each worker, they
took 0.2 to 0.5 s of its start."""

from __future__ import annotations

from zmlir.frontend import pool  # noqa: F401  (what the workers run)
from zmlir.frontend.importer import import_module
from zmlir.frontend.parser import parse_ptx

# A little of what nvcc writes: declarations, a call, memory, predicates.
_SAMPLE = """\
.version 8.5
.target sm_80
.address_size 64
.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.extern .shared .align 16 .b8 dynamic[];

.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
	.reg .b32 	%r<3>;

	ld.param.u32 	%r1, [twice_param_0];
	shl.b32 	%r2, %r1, 1;
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}

	// .globl	sample
.visible .entry sample(
	.param .u64 sample_param_0,
	.param .u32 sample_param_1
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<12>;
	.reg .f32 	%f<6>;
	.reg .b64 	%rd<8>;
	.shared .align 4 .b8 tile[1024];

	ld.param.u64 	%rd1, [sample_param_0];
	ld.param.u32 	%r2, [sample_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB1_2;

	mul.wide.s32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.v2.f32 	{%f1, %f2}, [%rd4];
	fma.rn.f32 	%f3, %f1, 0f3F800000, %f2;
	shl.b32 	%r6, %r5, 2;
	mov.u32 	%r7, tile;
	add.s32 	%r8, %r7, %r6;
	st.shared.f32 	[%r8], %f3;
	bar.sync 	0;
	shfl.sync.bfly.b32 	%r9|%p2, %r6, 1, 31, -1;
	atom.global.add.u32 	%r10, [%rd4], %r9;
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r10;
	.param .b32 retval0;
	call.uni (retval0), twice, (param0);
	ld.param.b32 	%r11, [retval0+0];
	} // callseq 0
	selp.f32 	%f4, %f3, 0f00000000, %p2;
	cvt.rn.f32.s32 	%f5, %r11;
	st.global.f32 	[%rd4+4], %f5;

$L__BB1_2:
	ret;

}
"""

import_module(parse_ptx(_SAMPLE, "<warm-up>"), "<warm-up>")
