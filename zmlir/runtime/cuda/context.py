"""Contexts: the primary context, created contexts, the per-thread current
context stack (kept in state.py) and context-local storage (which cudart
reaches through an export table, export_slots.py). There is one device, so
every context shares its memory and its queue."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda import heap, printf, stacks
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.objects import Context
from zmlir.runtime.cuda.state import DriverState

E = CUresult


class ContextAPI(DriverState):
    # -- primary context ------------------------------------------------------

    def cuDevicePrimaryCtxRetain(self, pctx: Any, dev: int) -> int:
        self.check_device(dev)
        handle = self.primary_context()
        assert self.primary is not None
        if self.primary.refcount == 0:
            with self.lock:
                self.printf.context_started()
        self.primary.refcount += 1
        self.out(pctx, self.handle_ptr(handle))
        return E.CUDA_SUCCESS

    def cuDevicePrimaryCtxRelease_v2(self, dev: int) -> int:
        self.check_device(dev)
        if self.primary is None or self.primary.refcount == 0:
            return E.CUDA_ERROR_INVALID_CONTEXT
        self.primary.refcount -= 1
        if self.primary.refcount == 0:
            # The context's end, but no synchronisation point: cudart releases
            # it as the process exits, where NVIDIA's driver prints nothing of
            # what kernels printed since the last one (an H200 did not).
            self.printf.context_ended()
        return E.CUDA_SUCCESS

    def cuDevicePrimaryCtxReset_v2(self, dev: int) -> int:
        self.check_device(dev)
        self.device.synchronize()  # its kernels end before its memory and heap go
        self.sync_point()
        if self.primary is not None:
            self._destroy_local_storage(self.primary_handle, self.primary)
            self.primary.refcount = 0
            self.current_changed()
        with self.lock:  # a new context: the printf FIFO's and the heap's sizes can be set again
            self.printf.reset()
            self.heaps.of(self.primary_context()).reset()
        return E.CUDA_SUCCESS

    def cuDevicePrimaryCtxGetState(self, dev: int, flags: Any, active: Any) -> int:
        self.check_device(dev)
        ctx = self.primary
        self.out(flags, ctx.flags if ctx else 0)
        self.out(active, int(bool(ctx and ctx.refcount > 0)))
        return E.CUDA_SUCCESS

    def cuDevicePrimaryCtxSetFlags_v2(self, dev: int, flags: int) -> int:
        self.check_device(dev)
        self.handles.get(self.primary_context(), Context).flags = flags
        return E.CUDA_SUCCESS

    # -- contexts -------------------------------------------------------------

    def cuCtxCreate_v2(self, pctx: Any, flags: int, dev: int) -> int:
        self.check_device(dev)
        handle = self.handles.add(Context(device=dev, flags=flags))
        self.destroyed_contexts.discard(handle)  # a reused handle value
        self.context_stack().append(handle)
        self.current_changed()
        self.out(pctx, self.handle_ptr(handle))
        return E.CUDA_SUCCESS

    def cuCtxCreate_v4(self, pctx: Any, params: Any, flags: int, dev: int) -> int:
        return self.cuCtxCreate_v2(pctx, flags, dev)

    def context(self, handle: int) -> Context:
        """The context behind `handle`; a destroyed one is
        CUDA_ERROR_CONTEXT_IS_DESTROYED, an unknown one CUDA_ERROR_INVALID_CONTEXT,
        as NVIDIA's driver answers."""
        context = self.handles.find(handle)
        if not isinstance(context, Context):
            if handle in self.destroyed_contexts:
                raise CudaError(E.CUDA_ERROR_CONTEXT_IS_DESTROYED, f"context 0x{handle:x}")
            raise CudaError(E.CUDA_ERROR_INVALID_CONTEXT, f"not a context: 0x{handle:x}")
        return context

    def cuCtxDestroy_v2(self, ctx: Any) -> int:
        self.require_init()
        handle = self.ptr(ctx)
        context = self.context(handle)
        if context.primary:
            return E.CUDA_ERROR_INVALID_CONTEXT
        self.device.synchronize()  # its kernels end before its heap goes
        self.sync_point()
        self._destroy_local_storage(handle, context)
        with self.lock:
            self.heaps.context_destroyed(handle)
            self.stacks.context_destroyed(handle)
        self.handles.remove(handle, Context)
        # As on an H200: the context is popped if it is current; where it
        # is still on a thread's stack (or a sticky error holds) its handle
        # lives on, destroyed (709); otherwise it is unknown (201).
        stack = self.context_stack()
        if stack and stack[-1] == handle:
            stack.pop()
        if handle in stack or self.process_error:
            self.destroyed_contexts.add(handle)
        self.fast.context_destroyed()
        self.current_changed()
        return E.CUDA_SUCCESS

    def cuCtxAttach(self, pctx: Any, flags: int) -> int:
        """The legacy usage count: the current context, once more in use."""
        self.require_init()
        if flags != 0:
            return E.CUDA_ERROR_INVALID_VALUE
        stack = self.context_stack()
        if not stack:
            return E.CUDA_ERROR_INVALID_CONTEXT
        self.out(pctx, self.handle_ptr(stack[-1]))
        self.context(stack[-1]).refcount += 1
        return E.CUDA_SUCCESS

    def cuCtxDetach(self, ctx: Any) -> int:
        """One use of the current context `ctx` less (cuCtxCreate's and each
        cuCtxAttach's); the last destroys it (a primary context: releases it)."""
        self.require_init()
        handle = self.ptr(ctx)
        context = self.context(handle)
        stack = self.context_stack()
        if not stack or stack[-1] != handle or context.refcount < 1:
            return E.CUDA_ERROR_INVALID_CONTEXT
        if context.primary:
            return self.cuDevicePrimaryCtxRelease_v2(context.device)
        context.refcount -= 1
        return self.cuCtxDestroy_v2(ctx) if context.refcount == 0 else E.CUDA_SUCCESS

    def cuCtxGetCurrent(self, pctx: Any) -> int:
        self.require_init()
        stack = self.context_stack()
        self.out(pctx, self.handle_ptr(stack[-1]) if stack else self.ffi.NULL)
        return E.CUDA_SUCCESS

    def cuCtxSetCurrent(self, ctx: Any) -> int:
        self.require_init()
        handle = self.ptr(ctx)
        stack = self.context_stack()
        if handle == 0:
            if stack:
                stack.pop()
            self.current_changed()
            return E.CUDA_SUCCESS
        if handle not in self.destroyed_contexts:  # NVIDIA takes that; its calls: 709
            self.context(handle)
        if stack:
            stack[-1] = handle
        else:
            stack.append(handle)
        self.current_changed()
        return E.CUDA_SUCCESS

    def cuCtxPushCurrent_v2(self, ctx: Any) -> int:
        self.require_init()
        handle = self.ptr(ctx)
        if handle not in self.destroyed_contexts:  # NVIDIA takes that; its calls: 709
            self.context(handle)
        self.context_stack().append(handle)
        self.current_changed()
        return E.CUDA_SUCCESS

    def cuCtxPopCurrent_v2(self, pctx: Any) -> int:
        self.require_init()
        stack = self.context_stack()
        if not stack:
            return E.CUDA_ERROR_INVALID_CONTEXT
        handle = stack.pop()
        self.current_changed()
        if pctx != self.ffi.NULL:
            pctx[0] = self.handle_ptr(handle)
        return E.CUDA_SUCCESS

    def cuCtxGetDevice(self, device: Any) -> int:
        self.out(device, self.current_context().device)
        return E.CUDA_SUCCESS

    def _context_or_current(self, ctx: Any) -> Context:
        """CUDA 13's context arguments: NULL means the current context."""
        if self.ptr(ctx) == 0:
            return self.current_context()
        self.require_init()
        return self.handles.get(self.ptr(ctx), Context)

    def cuCtxGetDevice_v2(self, device: Any, ctx: Any) -> int:
        self.out(device, self._context_or_current(ctx).device)
        return E.CUDA_SUCCESS

    def cuCtxGetFlags(self, flags: Any) -> int:
        self.out(flags, self.current_context().flags)
        return E.CUDA_SUCCESS

    def cuCtxGetId(self, ctx: Any, ctx_id: Any) -> int:
        handle = self.ptr(ctx)
        if handle == 0:
            stack = self.context_stack()
            handle = stack[-1] if stack else 0
        self.handles.get(handle, Context)
        self.out(ctx_id, handle)
        return E.CUDA_SUCCESS

    def cuCtxSynchronize(self) -> int:
        self.current_context()
        self.device.synchronize()
        self.sync_point()
        self.check_sticky()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuCtxSynchronize_v2(self, ctx: Any) -> int:
        self._context_or_current(ctx)  # one device: its work is all of every context's
        self.device.synchronize()
        self.sync_point()
        self.check_sticky()
        self.settle_pools()
        return E.CUDA_SUCCESS

    def cuCtxGetApiVersion(self, ctx: Any, version: Any) -> int:
        self.require_init()
        if self.ptr(ctx):
            self.context(self.ptr(ctx))  # a destroyed or unknown one: its error
        else:
            self.current_context()
        self.out(version, 3020)
        return E.CUDA_SUCCESS

    def cuCtxGetLimit(self, value: Any, limit: int) -> int:
        ctx = self.current_context()
        # 8, 9: CIG_ENABLED, CIG_SHMEM_FALLBACK_ENABLED (CUDA in graphics
        # contexts, which we never make): cuBLAS asks.
        defaults = {0: 1024, 1: printf.DEFAULT_FIFO_SIZE, 2: heap.DEFAULT_SIZE, 3: 2, 4: 2048,
                    5: 0, 6: 0, 8: 0, 9: 0}
        if limit not in defaults:
            return E.CUDA_ERROR_INVALID_VALUE
        if limit == 1:  # CU_LIMIT_PRINTF_FIFO_SIZE: one buffer serves every context
            self.out(value, self.printf.capacity)
            return E.CUDA_SUCCESS
        if limit == 2:  # CU_LIMIT_MALLOC_HEAP_SIZE: the context's heap (cuda/heap.py)
            native = self.device.heap_size()  # or the device's own (the passthrough)
            self.out(value, self.heaps.of(self.context_stack()[-1]).size if native is None
                     else native)
            return E.CUDA_SUCCESS
        if limit == 0:  # CU_LIMIT_STACK_SIZE: the device's own, where it keeps the stacks
            native = self.device.stack_size()
            if native is not None:
                self.out(value, native)
                return E.CUDA_SUCCESS
        self.out(value, ctx.limits.get(limit, defaults[limit]))
        return E.CUDA_SUCCESS

    def cuCtxSetLimit(self, limit: int, value: int) -> int:
        ctx = self.current_context()
        if limit == 1:  # CU_LIMIT_PRINTF_FIFO_SIZE: one buffer serves every context
            with self.lock:
                # Fixed once a kernel with printf or assert was launched (cuda/printf.py).
                if not self.printf.set_capacity(value):
                    return E.CUDA_ERROR_INVALID_VALUE
            return E.CUDA_SUCCESS
        if limit == 2:  # CU_LIMIT_MALLOC_HEAP_SIZE: fixed once a kernel with malloc ran
            native = self.device.set_heap_size(value)  # the passthrough's: NVIDIA's rules
            if native is not None:
                return native
            with self.lock:
                self.heaps.of(self.context_stack()[-1]).set_size(value)
            return E.CUDA_SUCCESS
        if limit == 0:  # CU_LIMIT_STACK_SIZE: the context's software stacks (cuda/stacks.py)
            native = self.device.set_stack_size(value)  # the passthrough's: NVIDIA's stacks
            if native is not None:
                return native
            value = stacks.stack_size(value)
            with self.lock:
                self.stacks.of(self.context_stack()[-1]).set_size(value)
        ctx.limits[limit] = value
        return E.CUDA_SUCCESS

    def cuCtxGetCacheConfig(self, config: Any) -> int:
        self.current_context()
        self.out(config, 0)
        return E.CUDA_SUCCESS

    def cuCtxSetCacheConfig(self, config: int) -> int:
        self.current_context()
        return E.CUDA_SUCCESS

    def cuCtxGetSharedMemConfig(self, config: Any) -> int:
        self.current_context()
        self.out(config, 1)
        return E.CUDA_SUCCESS

    def cuCtxSetSharedMemConfig(self, config: int) -> int:
        self.current_context()
        if config not in (0, 1, 2):  # default, four-byte, eight-byte banks: a preference
            return E.CUDA_ERROR_INVALID_VALUE
        return E.CUDA_SUCCESS

    def cuCtxGetStreamPriorityRange(self, least: Any, greatest: Any) -> int:
        self.require_init()
        low, high = self.device.stream_priority_range()
        if least != self.ffi.NULL:
            least[0] = low
        if greatest != self.ffi.NULL:
            greatest[0] = high
        return E.CUDA_SUCCESS

    def cuCtxEnablePeerAccess(self, peer: Any, flags: int) -> int:
        self.current_context()
        return E.CUDA_ERROR_INVALID_DEVICE  # there is no other device to peer with

    def cuCtxDisablePeerAccess(self, peer: Any) -> int:
        self.current_context()
        return E.CUDA_ERROR_INVALID_DEVICE

    def cuCtxResetPersistingL2Cache(self) -> int:
        self.current_context()
        return E.CUDA_SUCCESS

    # -- context-local storage (cudart's, through export_slots.py) ----------------

    def _storage_context(self, ctx: Any) -> tuple[int, Context]:
        """The handle and context of a context-local storage call. NULL is the
        calling thread's current context, as in NVIDIA's driver: on a new
        thread there is none, the get fails, and cudart makes the primary
        context current there (answering with the primary instead left every
        runtime call of a second thread without a context)."""
        handle = self.ptr(ctx)
        if handle == 0:
            context = self.current_context()
            return self.context_stack()[-1], context
        return handle, self.handles.get(handle, Context)

    def local_storage_put(self, ctx: Any, key: Any, value: Any, dtor: Any) -> int:
        handle, context = self._storage_context(ctx)
        context.local_storage[self.ptr(key)] = (value, dtor)
        self.fast.cls_put(handle, self.ptr(key), self.ptr(value))
        return E.CUDA_SUCCESS

    def local_storage_delete(self, key: Any) -> int:
        k = self.ptr(key)
        for context in list(self.handles.all(Context)):
            context.local_storage.pop(k, None)
        self.fast.cls_forget(0, k)
        return E.CUDA_SUCCESS

    def local_storage_get(self, pvalue: Any, ctx: Any, key: Any) -> int:
        _, context = self._storage_context(ctx)
        entry = context.local_storage.get(self.ptr(key))
        if entry is None:
            return E.CUDA_ERROR_INVALID_HANDLE
        pvalue[0] = entry[0]
        return E.CUDA_SUCCESS

    def _destroy_local_storage(self, handle: int, ctx: Context) -> None:
        for key, (value, dtor) in list(ctx.local_storage.items()):
            if dtor is not None and dtor != self.ffi.NULL:
                # cudart's destructor (ZLUDA's dark_api: fn(CUcontext, key, value)).
                fn = self.ffi.cast("void (*)(void *, void *, void *)", dtor)
                fn(self.handle_ptr(handle), self.ffi.cast("void *", key), value)
        ctx.local_storage.clear()
        self.fast.cls_forget(handle, 0)
