"""User objects (cuUserObject*): reference counts graphs and their
instantiations hold, as cuda.core keeps a graph's kernel arguments alive:
the destructor runs when the last reference goes, in the call that
released it."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda.errors import CUresult
from zmlir.runtime.cuda.graph.base import GraphBase
from zmlir.runtime.cuda.objects import UserObject

E = CUresult


class UserObjectAPI(GraphBase):
    def cuUserObjectCreate(self, pobject: Any, ptr: Any, destroy: Any, references: int,
                           flags: int) -> int:
        self.require_init()
        # CU_USER_OBJECT_NO_DESTRUCTOR_SYNC is required: nothing waits for a destructor.
        if pobject == self.ffi.NULL or destroy == self.ffi.NULL or references == 0 or flags != 1:
            return E.CUDA_ERROR_INVALID_VALUE
        obj = UserObject(ptr, destroy, references)
        self.out(pobject, self.handle_ptr(self.handles.add(obj)))
        return E.CUDA_SUCCESS

    def cuUserObjectRetain(self, obj: Any, count: int) -> int:
        self.require_init()
        if count == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        self.user_object(obj).references += count
        return E.CUDA_SUCCESS

    def cuUserObjectRelease(self, obj: Any, count: int) -> int:
        self.require_init()
        if count == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        self.release_user_object(self.ptr(obj), count)
        return E.CUDA_SUCCESS

    def cuGraphRetainUserObject(self, graph: Any, obj: Any, count: int, flags: int) -> int:
        g = self.graph_of(graph)
        o = self.user_object(obj)
        if count == 0 or flags not in (0, 1):
            return E.CUDA_ERROR_INVALID_VALUE
        if flags != 1:  # CU_GRAPH_USER_OBJECT_MOVE: the caller's references move to the graph
            o.references += count
        g.user_objects[self.ptr(obj)] = g.user_objects.get(self.ptr(obj), 0) + count
        return E.CUDA_SUCCESS

    def cuGraphReleaseUserObject(self, graph: Any, obj: Any, count: int) -> int:
        g = self.graph_of(graph)
        handle = self.ptr(obj)
        if count == 0 or g.user_objects.get(handle, 0) < count:
            return E.CUDA_ERROR_INVALID_VALUE
        g.user_objects[handle] -= count
        if g.user_objects[handle] == 0:
            del g.user_objects[handle]
        self.release_user_object(handle, count)
        return E.CUDA_SUCCESS
