"""CUDA arrays, texture objects and surface objects: cuArray*, copies to
and from arrays, cuTexObject*, cuSurfObject*.

An array is a linear device allocation with a recorded layout (rows of
width * texel bytes, slices of rows, layers or depth of slices). A texture
or surface object is the device address of its descriptor, 128 bytes the
kernels read (zmlir/lowering/Texture.cpp; the layout is in
docs/textures.md): so a handle means the same on every backend. Under the
CUDA passthrough with ZMLIR_NATIVE_TEXTURES=1 (Backend.vendor_textures)
they are NVIDIA's instead, every call forwarded."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.memcpy import MemcpyAPI

E = CUresult

# CUarray_format -> (descriptor kind: 0 unsigned, 1 signed, 2 half, 3 float; element bytes)
FORMATS = {
    0x01: (0, 1), 0x02: (0, 2), 0x03: (0, 4),
    0x08: (1, 1), 0x09: (1, 2), 0x0A: (1, 4),
    0x10: (2, 2), 0x20: (3, 4),
}
# CUDA_ARRAY3D_* flags
LAYERED, SURFACE_LDST, CUBEMAP, TEXTURE_GATHER = 0x01, 0x02, 0x04, 0x08
# CUresourcetype
RESOURCE_ARRAY, RESOURCE_MIPMAPPED_ARRAY, RESOURCE_LINEAR, RESOURCE_PITCH2D = 0, 1, 2, 3
# CU_TRSF_* texture flags
READ_AS_INTEGER, NORMALIZED_COORDINATES, SRGB = 0x01, 0x02, 0x10
# Descriptor flags (Texture.cpp)
DESC_NORMALIZED_COORDS, DESC_LINEAR, DESC_READ_NORMALIZED = 1, 2, 4
DESCRIPTOR_BYTES = 128
# data, pitch, slice; width, height, depth, layers; kind, element bytes, channels,
# flags; address modes x 3, texel bytes; border colour x 4; CUarray_format.
_DESCRIPTOR = struct.Struct("<QQQ IIII IIII III I ffff I")
# A mipmapped texture's, after it (frontend/importer/mipmap.py reads them):
# levels (0: not mipmapped), LOD bias, min and max LOD clamp, mipmap filter
# (0 point, 1 linear), the address of a descriptor per level.
_MIPMAP = struct.Struct("<I fff I Q")
MIPMAP_OFFSET = _DESCRIPTOR.size
# What txq answers for height and depth, the descriptor's last 8 bytes (Texture.cpp).
_QUERY = struct.Struct("<II")
QUERY_OFFSET = DESCRIPTOR_BYTES - _QUERY.size
assert MIPMAP_OFFSET + _MIPMAP.size <= QUERY_OFFSET

@dataclass
class Array:
    """A CUDA array: `layers` slices (the depth of a 3D array, the layers of
    a layered one, 6 per cube map) of `height` rows of `pitch` bytes."""

    address: int
    width: int
    height: int  # as created: 0 for a 1D array
    depth: int  # as created: 0 for 1D and 2D arrays; the layers of a layered one
    format: int
    channels: int
    flags: int

    @property
    def texel_bytes(self) -> int:
        return FORMATS[self.format][1] * self.channels

    @property
    def pitch(self) -> int:
        return self.width * self.texel_bytes

    @property
    def slice(self) -> int:
        return self.pitch * max(self.height, 1)

    @property
    def slices(self) -> int:
        return max(self.depth, 1)

    @property
    def queried_extent(self) -> tuple[int, int]:
        """txq's height and depth: as created, but a layered 1D array's layers
        are its height, a cube map's depth is 0 and a layered one's its cubes
        (an H200: tools/layered_mipmap_probe.h200.txt, tools/txq_probe.h200.txt)."""
        if self.flags & CUBEMAP:
            return self.height, self.depth // 6 if self.flags & LAYERED else 0
        if self.flags & LAYERED and self.height == 0:
            return self.depth, 0
        return self.height, self.depth

    @property
    def nbytes(self) -> int:
        return self.slice * self.slices


@dataclass
class MipmappedArray:
    """A mipmapped array: one CUDA array per level (handles), level k of
    extent max(1, extent >> k)."""

    levels: list[int]


@dataclass
class TextureObject:
    """A texture or surface object: its descriptor's device address is the
    handle; the application's descriptions as it gave them."""

    resource: bytes
    texture: bytes | None
    surface: bool
    level_table: int = 0  # a mipmapped texture's level descriptors (device memory)


class TextureAPI(MemcpyAPI):
    def __init__(self, ffi: Any, lib: Any) -> None:
        super().__init__(ffi, lib)
        # Live texture and surface objects by handle (their descriptor's address).
        self.texture_objects: dict[int, TextureObject] = {}

    # -- arrays ---------------------------------------------------------------------

    def create_array(self, out: Any, width: int, height: int, depth: int, fmt: int,
                     channels: int, flags: int) -> int:
        self.current_context()
        if fmt not in FORMATS:
            return self.unsupported("cuArrayCreate", f"array format 0x{fmt:x}")
        if channels not in (1, 2, 4) or width == 0 or (depth and not height and
                                                       not flags & LAYERED):
            return E.CUDA_ERROR_INVALID_VALUE
        if flags & CUBEMAP and (width != height or depth % 6 if flags & LAYERED else
                                depth != 6):
            return E.CUDA_ERROR_INVALID_VALUE
        array = Array(0, width, height, depth, fmt, channels, flags)
        address = int(self.device.alloc(max(array.nbytes, 1)))
        array.address = address
        self.allocations.add(address, array.nbytes, owned=False)  # not cuMemFree's
        self.out(out, self.handle_ptr(self.handles.add(array)))
        return E.CUDA_SUCCESS

    def cuArrayCreate_v2(self, out: Any, desc: Any) -> int:
        if (r := self._vendor_texture("cuArrayCreate_v2", out, desc)) is not None:
            return r
        if desc == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        d = desc[0]
        return self.create_array(out, d.Width, d.Height, 0, d.Format, d.NumChannels, 0)

    def cuArray3DCreate_v2(self, out: Any, desc: Any) -> int:
        if (r := self._vendor_texture("cuArray3DCreate_v2", out, desc)) is not None:
            return r
        if desc == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        d = desc[0]
        return self.create_array(out, d.Width, d.Height, d.Depth, d.Format, d.NumChannels,
                                 d.Flags)

    def array(self, handle: Any) -> Array:
        self.require_init()
        return self.handles.get(self.ptr(handle), Array)

    def cuArrayGetDescriptor_v2(self, out: Any, handle: Any) -> int:
        if (r := self._vendor_texture("cuArrayGetDescriptor_v2", out, handle)) is not None:
            return r
        a = self.array(handle)
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        out.Width, out.Height, out.Format, out.NumChannels = a.width, a.height, a.format, \
            a.channels
        return E.CUDA_SUCCESS

    def cuArray3DGetDescriptor_v2(self, out: Any, handle: Any) -> int:
        if (r := self._vendor_texture("cuArray3DGetDescriptor_v2", out, handle)) is not None:
            return r
        a = self.array(handle)
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        out.Width, out.Height, out.Depth = a.width, a.height, a.depth
        out.Format, out.NumChannels, out.Flags = a.format, a.channels, a.flags
        return E.CUDA_SUCCESS

    def cuArrayDestroy(self, handle: Any) -> int:
        if (r := self._vendor_texture("cuArrayDestroy", handle, ordered=True)) is not None:
            return r
        a = self.array(handle)
        self.device.synchronize()
        self.handles.remove(self.ptr(handle), Array)
        self.allocations.forget(a.address)
        self.device.free(a.address)
        return E.CUDA_SUCCESS

    # -- mipmapped arrays -------------------------------------------------------------

    def cuMipmappedArrayCreate(self, out: Any, desc: Any, count: int) -> int:
        if (r := self._vendor_texture("cuMipmappedArrayCreate", out, desc, count)) is not None:
            return r
        self.current_context()
        if desc == self.ffi.NULL or out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        d = desc[0]
        # A layered or cube-map array's depth is its layers (faces), the
        # same at every level; its levels halve the width and height only.
        layered = bool(d.Flags & (LAYERED | CUBEMAP))
        largest = max(d.Width, d.Height, 0 if layered else d.Depth)
        if count < 1 or largest == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        # NVIDIA accepts more levels than the extent has and makes as many as
        # it has, down to 1x1 (tools/texref_probe.h200.txt).
        count = min(count, largest.bit_length())
        levels: list[int] = []
        handle = self.ffi.new("CUarray *")
        for k in range(count):
            extent = [max(1, n >> k) if n else 0 for n in (d.Width, d.Height, d.Depth)]
            if layered:
                extent[2] = d.Depth
            result = self.create_array(handle, *extent, d.Format, d.NumChannels, d.Flags)
            if result != E.CUDA_SUCCESS:
                for level in levels:
                    self.cuArrayDestroy(self.handle_ptr(level))
                return result
            levels.append(self.ptr(handle[0]))
        out[0] = self.handle_ptr(self.handles.add(MipmappedArray(levels)))
        return E.CUDA_SUCCESS

    def _mipmapped(self, handle: Any) -> MipmappedArray:
        self.require_init()
        return self.handles.get(self.ptr(handle), MipmappedArray)

    def cuMipmappedArrayGetLevel(self, out: Any, handle: Any, level: int) -> int:
        if (r := self._vendor_texture("cuMipmappedArrayGetLevel", out, handle, level)) is not None:
            return r
        m = self._mipmapped(handle)
        if level >= len(m.levels):
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(out, self.handle_ptr(m.levels[level]))
        return E.CUDA_SUCCESS

    def cuMipmappedArrayDestroy(self, handle: Any) -> int:
        if (r := self._vendor_texture("cuMipmappedArrayDestroy", handle, ordered=True)) is not None:
            return r
        m = self._mipmapped(handle)
        for level in m.levels:
            self.cuArrayDestroy(self.handle_ptr(level))
        self.handles.remove(self.ptr(handle), MipmappedArray)
        return E.CUDA_SUCCESS

    # -- copies to and from arrays ------------------------------------------------
    # An array side of a copy is its device memory, at the array's own pitch.

    def array_range(self, handle: Any, offset: int, nbytes: int) -> int:
        """The device address of a 1D array's bytes [offset, offset + nbytes):
        the cuMemcpy*A* calls take 1D arrays only (an H200 answers
        INVALID_VALUE for a 2D one; cuMemcpy2D/3D copy those)."""
        a = self.array(handle)
        if a.height > 1 or a.depth > 0:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE,
                            "a copy by offset takes a 1D array; copy 2D and 3D arrays "
                            "with cuMemcpy2D/cuMemcpy3D")
        if offset + nbytes > a.nbytes:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "copy past the end of the array")
        return a.address + offset

    def cuMemcpyHtoA_v2(self, dst: Any, offset: int, src: Any, nbytes: int) -> int:
        if (r := self._vendor_texture("cuMemcpyHtoA_v2", dst, offset, src, nbytes,
                              ordered=True)) is not None:
            return r
        return self.copy(self.array_range(dst, offset, nbytes), self.ptr(src), nbytes)

    def cuMemcpyAtoH_v2(self, dst: Any, src: Any, offset: int, nbytes: int) -> int:
        if (r := self._vendor_texture("cuMemcpyAtoH_v2", dst, src, offset, nbytes,
                              ordered=True)) is not None:
            return r
        return self.copy(self.ptr(dst), self.array_range(src, offset, nbytes), nbytes)

    def cuMemcpyHtoAAsync_v2(self, dst: Any, offset: int, src: Any, nbytes: int,
                             stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyHtoA_v2(dst, offset, src, nbytes))

    def cuMemcpyAtoHAsync_v2(self, dst: Any, src: Any, offset: int, nbytes: int,
                             stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyAtoH_v2(dst, src, offset, nbytes))

    def cuMemcpyDtoA_v2(self, dst: Any, offset: int, src: int, nbytes: int) -> int:
        if (r := self._vendor_texture("cuMemcpyDtoA_v2", dst, offset, src, nbytes,
                              ordered=True)) is not None:
            return r
        return self.copy(self.array_range(dst, offset, nbytes), src, nbytes)

    def cuMemcpyAtoD_v2(self, dst: int, src: Any, offset: int, nbytes: int) -> int:
        if (r := self._vendor_texture("cuMemcpyAtoD_v2", dst, src, offset, nbytes,
                              ordered=True)) is not None:
            return r
        return self.copy(dst, self.array_range(src, offset, nbytes), nbytes)

    def cuMemcpyAtoA_v2(self, dst: Any, dst_offset: int, src: Any, src_offset: int,
                        nbytes: int) -> int:
        if (r := self._vendor_texture("cuMemcpyAtoA_v2", dst, dst_offset, src, src_offset, nbytes,
                              ordered=True)) is not None:
            return r
        return self.copy(self.array_range(dst, dst_offset, nbytes),
                         self.array_range(src, src_offset, nbytes), nbytes)

    def _arrays_as_device(self, copy: Any, kind: str) -> Any:
        """`copy` (a CUDA_MEMCPY2D/3D) with each array side as device
        memory at the array's pitch (and slice height), or `copy` itself."""
        c = copy[0]
        if 3 not in (c.srcMemoryType, c.dstMemoryType):
            return copy
        out = self.ffi.new(f"{kind} *")
        self.ffi.memmove(out, copy, self.ffi.sizeof(kind))
        for side in ("src", "dst"):
            if getattr(c, side + "MemoryType") != 3:
                continue
            a = self.array(getattr(c, side + "Array"))
            setattr(out, side + "MemoryType", 2)
            setattr(out, side + "Device", a.address)
            setattr(out, side + "Array", self.ffi.NULL)
            setattr(out, side + "Pitch", a.pitch)
            if kind == "CUDA_MEMCPY3D":
                setattr(out, side + "Height", max(a.height, 1))
        return out

    def cuMemcpy2D_v2(self, copy: Any) -> int:
        if copy == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        if self._vendor_array_copy(copy):
            return self._vendor_texture("cuMemcpy2D_v2", copy, ordered=True)  # type: ignore[return-value]
        return super().cuMemcpy2D_v2(self._arrays_as_device(copy, "CUDA_MEMCPY2D"))

    cuMemcpy2DUnaligned_v2 = cuMemcpy2D_v2

    def cuMemcpy3D_v2(self, copy: Any) -> int:
        if copy == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        if self._vendor_array_copy(copy):
            return self._vendor_texture("cuMemcpy3D_v2", copy, ordered=True)  # type: ignore[return-value]
        return super().cuMemcpy3D_v2(self._arrays_as_device(copy, "CUDA_MEMCPY3D"))

    def cuMemcpy2DAsync_v2(self, copy: Any, stream: Any) -> int:
        if copy != self.ffi.NULL and self._vendor_array_copy(copy) and self._in_capture(stream):
            return self.unsupported("cuMemcpy2DAsync", "capturing a copy with NVIDIA's arrays")
        return super().cuMemcpy2DAsync_v2(copy, stream)

    def cuMemcpy3DAsync_v2(self, copy: Any, stream: Any) -> int:
        if copy != self.ffi.NULL and self._vendor_array_copy(copy) and self._in_capture(stream):
            return self.unsupported("cuMemcpy3DAsync", "capturing a copy with NVIDIA's arrays")
        return super().cuMemcpy3DAsync_v2(copy, stream)

    def _in_capture(self, stream: Any) -> bool:
        s = self.stream(stream)
        return s is not None and s.capture is not None

    # -- NVIDIA's textures ------------------------------------------------------------
    # Under the passthrough with vendor textures (ZMLIR_NATIVE_TEXTURES=1) arrays,
    # mipmapped arrays, texture and surface objects are NVIDIA's, their handles
    # the application's, and the kernels read them with NVIDIA's instructions
    # (the NVPTX target's native textures): each call is NVIDIA's with the
    # application's arguments; a copy or a destruction comes after the work
    # already queued, and a copy before the work queued after it.

    def _vendor_texture(self, api: str, *args: Any, ordered: bool = False) -> int | None:
        """NVIDIA's CUresult for `api`, or None where textures are ours."""
        if not self.device.vendor_textures:
            return None
        self.current_context()
        if ordered:
            self.device.synchronize()
        result = int(self.device.vendor_texture_call(api, *(self.ptr(a) for a in args)))
        if ordered:
            self.device.synchronize()
        return result

    def _vendor_array_copy(self, copy: Any) -> bool:
        """Whether CUDA_MEMCPY2D/3D `copy` has an array side that is NVIDIA's."""
        c = copy[0]
        return self.device.vendor_textures and 3 in (c.srcMemoryType, c.dstMemoryType)

    # -- texture and surface objects ----------------------------------------------

    def _resource(self, res: Any) -> tuple[int, int, int, int, int, int, int, int, int,
                                           tuple[int, int]]:
        """(data, pitch, slice, width, height, depth, layers, format, channels,
        txq's height and depth) of a CUDA_RESOURCE_DESC; linear and pitched
        memory answer txq with the extents they are sampled with."""
        kind = res.resType
        if kind == RESOURCE_ARRAY:
            a = self.array(res.res.array.hArray)
            layered = a.flags & (LAYERED | CUBEMAP)
            depth = 1 if layered else max(a.depth, 1)
            layers = max(a.depth, 1) if layered else 1
            return (a.address, a.pitch, a.slice, a.width, max(a.height, 1), depth, layers,
                    a.format, a.channels, a.queried_extent)
        if kind == RESOURCE_MIPMAPPED_ARRAY:  # level 0's; the levels in _mipmap_table
            level = self.ffi.new("CUDA_RESOURCE_DESC *")
            level.resType = RESOURCE_ARRAY
            level.res.array.hArray = self.handle_ptr(
                self._mipmapped(res.res.mipmap.hMipmappedArray).levels[0])
            return self._resource(level[0])
        if kind == RESOURCE_LINEAR:
            lin = res.res.linear
            if lin.format not in FORMATS:
                raise CudaError(self.unsupported("cuTexObjectCreate", f"format 0x{lin.format:x}"))
            texel = FORMATS[lin.format][1] * lin.numChannels
            return (int(lin.devPtr), lin.sizeInBytes, lin.sizeInBytes, lin.sizeInBytes // texel,
                    1, 1, 1, lin.format, lin.numChannels, (1, 1))
        if kind == RESOURCE_PITCH2D:
            p = res.res.pitch2D
            return (int(p.devPtr), p.pitchInBytes, p.pitchInBytes * p.height, p.width, p.height,
                    1, 1, p.format, p.numChannels, (p.height, 1))
        raise CudaError(self.unsupported("cuTexObjectCreate", f"resource type {kind}"))

    def _descriptor(self, res: Any, tex: Any, mipmapped: bool = False) -> bytes:
        data, pitch, slice_, width, height, depth, layers, fmt, channels, queried = \
            self._resource(res)
        if fmt not in FORMATS or channels not in (1, 2, 4):
            raise CudaError(self.unsupported("cuTexObjectCreate", f"format 0x{fmt:x} x "
                                             f"{channels}"))
        kind, element = FORMATS[fmt]
        flags = 0
        modes = (1, 1, 1)
        border = (0.0, 0.0, 0.0, 0.0)
        if tex is not None:
            if tex.flags & SRGB:
                raise CudaError(self.unsupported("cuTexObjectCreate", "sRGB textures"))
            # A mipmapped array's coordinates are normalized whatever the
            # flag says (an H200, 2026-12-04: tex1DLod at x = 0.05 reads
            # inside a 16-texel level 0).
            if tex.flags & NORMALIZED_COORDINATES or mipmapped or \
                    res.resType == RESOURCE_MIPMAPPED_ARRAY:
                flags |= DESC_NORMALIZED_COORDS
            if tex.filterMode == 1:
                flags |= DESC_LINEAR
            # Integer data of 8 and 16 bits reads as floats in [0, 1] ([-1, 1]
            # signed) unless CU_TRSF_READ_AS_INTEGER says otherwise.
            if kind < 2 and element < 4 and not tex.flags & READ_AS_INTEGER:
                flags |= DESC_READ_NORMALIZED
            modes = tuple(int(m) for m in tex.addressMode)
            if any(m not in (0, 1, 2, 3) for m in modes):
                raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"address modes {modes}")
            border = tuple(float(c) for c in tex.borderColor)
            # An H200 spreads tex.grad's probes along the gradient whenever
            # maxAnisotropy > 1, mipmapped or not (docs/textures.md); ours
            # samples isotropically, so it refuses rather than differ. Linear
            # memory is only fetched by index.
            if tex.maxAnisotropy > 1 and res.resType != RESOURCE_LINEAR:
                raise CudaError(self.unsupported("cuTexObjectCreate", "anisotropic filtering"))
        if res.resType == RESOURCE_LINEAR:
            # tex1Dfetch past either end of linear memory reads zeros whatever
            # the address mode (an H200: tools/texref_probe.h200.txt, lin 8).
            modes, border = (3, 3, 3), (0.0, 0.0, 0.0, 0.0)
        packed = _DESCRIPTOR.pack(data, pitch, slice_, width, height, depth, layers, kind,
                                  element, channels, flags, *modes, element * channels,
                                  *border, fmt)
        return packed.ljust(QUERY_OFFSET, b"\0") + _QUERY.pack(*queried)

    def _create_object(self, out: Any, res: Any, tex: Any, surface: bool) -> int:
        self.current_context()
        if out == self.ffi.NULL or res == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        if surface and res.resType != RESOURCE_ARRAY:
            return E.CUDA_ERROR_INVALID_VALUE
        descriptor = self._descriptor(res[0], None if tex is None else tex[0])
        table = 0
        if res.resType == RESOURCE_MIPMAPPED_ARRAY:
            descriptor, table = self._mipmap_table(descriptor, res[0], tex[0])
        address = int(self.device.alloc(DESCRIPTOR_BYTES))
        self.device.copy_to_device(address, np.frombuffer(descriptor, dtype=np.uint8))
        ffi = self.ffi
        resource = bytes(ffi.buffer(res, ffi.sizeof("CUDA_RESOURCE_DESC")))
        texture = None if tex is None else bytes(ffi.buffer(tex, ffi.sizeof("CUDA_TEXTURE_DESC")))
        self.texture_objects[address] = TextureObject(resource, texture, surface, table)
        out[0] = address
        return E.CUDA_SUCCESS

    def _mipmap_table(self, descriptor: bytes, res: Any, tex: Any) -> tuple[bytes, int]:
        """A mipmapped texture's descriptor (level 0's with the mipmap
        fields) and the address of its levels' descriptors, written now."""
        levels = self._mipmapped(res.res.mipmap.hMipmappedArray).levels
        if tex.mipmapFilterMode not in (0, 1):
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "mipmap filter mode")
        level = self.ffi.new("CUDA_RESOURCE_DESC *")
        level.resType = RESOURCE_ARRAY
        table = b""
        for handle in levels:
            level.res.array.hArray = self.handle_ptr(handle)
            table += self._descriptor(level[0], tex, mipmapped=True)
        address = int(self.device.alloc(len(table)))
        self.device.copy_to_device(address, np.frombuffer(table, dtype=np.uint8))
        fields = _MIPMAP.pack(len(levels), tex.mipmapLevelBias, tex.minMipmapLevelClamp,
                              tex.maxMipmapLevelClamp, tex.mipmapFilterMode, address)
        return descriptor[:MIPMAP_OFFSET] + fields + descriptor[MIPMAP_OFFSET + len(fields):], \
            address

    def cuTexObjectCreate(self, out: Any, res: Any, tex: Any, view: Any) -> int:
        if (r := self._vendor_texture("cuTexObjectCreate", out, res, tex, view)) is not None:
            return r
        if tex == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        if view != self.ffi.NULL:
            return self.unsupported("cuTexObjectCreate", "resource views")
        return self._create_object(out, res, tex, surface=False)

    def cuSurfObjectCreate(self, out: Any, res: Any) -> int:
        if (r := self._vendor_texture("cuSurfObjectCreate", out, res)) is not None:
            return r
        return self._create_object(out, res, None, surface=True)

    def _object(self, handle: int, surface: bool) -> TextureObject:
        self.require_init()
        obj = self.texture_objects.get(int(handle))
        if obj is None or obj.surface != surface:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"not a texture or surface object: "
                                                        f"0x{int(handle):x}")
        return obj

    def _destroy_object(self, handle: int, surface: bool) -> int:
        obj = self._object(handle, surface)
        self.device.synchronize()
        del self.texture_objects[int(handle)]
        self.device.free(int(handle))
        if obj.level_table:
            self.device.free(obj.level_table)
        return E.CUDA_SUCCESS

    def cuTexObjectDestroy(self, handle: int) -> int:
        if (r := self._vendor_texture("cuTexObjectDestroy", handle, ordered=True)) is not None:
            return r
        return self._destroy_object(handle, surface=False)

    def cuSurfObjectDestroy(self, handle: int) -> int:
        if (r := self._vendor_texture("cuSurfObjectDestroy", handle, ordered=True)) is not None:
            return r
        return self._destroy_object(handle, surface=True)

    def _copy_out(self, out: Any, data: bytes | None) -> int:
        if out == self.ffi.NULL or data is None:
            return E.CUDA_ERROR_INVALID_VALUE
        self.ffi.memmove(out, data, len(data))
        return E.CUDA_SUCCESS

    def cuTexObjectGetResourceDesc(self, out: Any, handle: int) -> int:
        if (r := self._vendor_texture("cuTexObjectGetResourceDesc", out, handle)) is not None:
            return r
        return self._copy_out(out, self._object(handle, surface=False).resource)

    def cuTexObjectGetTextureDesc(self, out: Any, handle: int) -> int:
        if (r := self._vendor_texture("cuTexObjectGetTextureDesc", out, handle)) is not None:
            return r
        return self._copy_out(out, self._object(handle, surface=False).texture)

    def cuSurfObjectGetResourceDesc(self, out: Any, handle: int) -> int:
        if (r := self._vendor_texture("cuSurfObjectGetResourceDesc", out, handle)) is not None:
            return r
        return self._copy_out(out, self._object(handle, surface=True).resource)
