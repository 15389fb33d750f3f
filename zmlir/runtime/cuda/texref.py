"""Texture and surface references: cuModuleGetTexRef, cuModuleGetSurfRef,
cuTexRef*, cuSurfRef* (deprecated since CUDA 12, still exported and working
in NVIDIA's driver; pycuda and older programs use them).

A `.global .texref`/`.surfref` is a module variable holding the descriptor
a texture object's handle points to (frontend/importer/module.py names it
`__zmlir_texref_NAME`/`__zmlir_surfref_NAME`), and the kernels read it the
same way. A reference here is a resource and a texture description, the
CUDA_RESOURCE_DESC and CUDA_TEXTURE_DESC a texture object is made of: each
call that changes one writes the descriptor again (texture.py's), once the
reference is bound to memory or an array."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zmlir.frontend.importer.module import REFERENCE_PREFIXES
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.objects import Module
from zmlir.runtime.cuda.parted import PartedModule
from zmlir.runtime.cuda.texture import (
    FORMATS,
    RESOURCE_ARRAY,
    RESOURCE_LINEAR,
    RESOURCE_MIPMAPPED_ARRAY,
    RESOURCE_PITCH2D,
    TextureAPI,
)

E = CUresult
OVERRIDE_FORMAT = 0x01  # CU_TRSA_OVERRIDE_FORMAT
# CU_TRSF_* flags a reference keeps (read as integer, normalized coordinates,
# sRGB, no trilinear optimisation, seamless cube maps).
TEXREF_FLAGS = 0x01 | 0x02 | 0x10 | 0x20 | 0x40
UNBOUND = -1


@dataclass
class Reference:
    """A texture or surface reference: its descriptions as the setters left
    them, and where its module's descriptor lives (0: a cuTexRefCreate one,
    which no kernel reads)."""

    resource: Any  # CUDA_RESOURCE_DESC *, resType UNBOUND until bound
    texture: Any  # CUDA_TEXTURE_DESC * (None for a surface reference)
    descriptor: int
    format: int = 0x20  # cuTexRefSetFormat's; NVIDIA's is FLOAT x 1 until set
    channels: int = 1
    array: int = 0  # the bound array's handle
    address: int = 0  # the bound linear or pitched memory
    mipmapped: int = 0  # the bound mipmapped array's handle
    level_table: int = 0  # its levels' descriptors (texture.py's _mipmap_table)
    module: Module | None = None  # whose variable `descriptor` is


class TexRefAPI(TextureAPI):
    def __init__(self, ffi: Any, lib: Any) -> None:
        super().__init__(ffi, lib)
        # A module's references by (module handle, kind, name): NVIDIA gives
        # the same handle each time one is asked for.
        self.references: dict[tuple[int, str, str], tuple[Module, int]] = {}

    def _new_reference(self, descriptor: int, surface: bool) -> Reference:
        resource = self.ffi.new("CUDA_RESOURCE_DESC *")
        resource.resType = UNBOUND
        texture = None
        if not surface:
            texture = self.ffi.new("CUDA_TEXTURE_DESC *")
            for axis in range(3):
                texture.addressMode[axis] = 1  # clamp
        return Reference(resource, texture, descriptor)

    def _module_reference(self, out: Any, hmod: Any, name: Any, kind: str) -> int:
        self.require_init()
        module = self.handles.get(self.ptr(hmod), Module)
        if name == self.ffi.NULL or out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        ptx_name = self.ffi.string(name).decode()
        key = (self.ptr(hmod), kind, ptx_name)
        known = self.references.get(key)
        if known is not None and known[0] is module:
            out[0] = self.handle_ptr(known[1])
            return E.CUDA_SUCCESS
        symbol = REFERENCE_PREFIXES[kind] + ptx_name
        try:
            program = module.program
            if isinstance(module.compiled, PartedModule):
                program = self._part(module, ptx_name).program  # type: ignore[attr-defined]
            address, _ = self.device.global_variable(program, symbol)
        except Exception as err:  # the backend's: no such variable
            raise CudaError(E.CUDA_ERROR_NOT_FOUND, f"no .{kind} named {ptx_name!r}") from err
        ref = self._new_reference(int(address), surface=kind == "surfref")
        ref.module = module
        handle = self.handles.add(ref)
        self.references[key] = (module, handle)
        out[0] = self.handle_ptr(handle)
        return E.CUDA_SUCCESS

    def _vendor_references(self, api_name: str) -> int | None:
        """NOT_SUPPORTED (logged) where textures are NVIDIA's (texture.py):
        a reference is one of our descriptors, which NVIDIA's texture
        instructions cannot read (the compiler refuses `.texref` there too)."""
        self.require_init()
        if not self.device.vendor_textures:
            return None
        return self.unsupported(api_name, "texture references with NVIDIA's textures "
                                          "(ZMLIR_NATIVE_TEXTURES=0 samples ours)")

    def cuModuleGetTexRef(self, out: Any, hmod: Any, name: Any) -> int:
        if (r := self._vendor_references("cuModuleGetTexRef")) is not None:
            return r
        return self._module_reference(out, hmod, name, "texref")

    def cuModuleGetSurfRef(self, out: Any, hmod: Any, name: Any) -> int:
        if (r := self._vendor_references("cuModuleGetSurfRef")) is not None:
            return r
        return self._module_reference(out, hmod, name, "surfref")

    def cuTexRefCreate(self, out: Any) -> int:
        if (r := self._vendor_references("cuTexRefCreate")) is not None:
            return r
        self.current_context()
        self.out(out, self.handle_ptr(self.handles.add(self._new_reference(0, surface=False))))
        return E.CUDA_SUCCESS

    def cuTexRefDestroy(self, handle: Any) -> int:
        ref = self._texref(handle)
        if ref.descriptor:  # a module's: it lives as long as the module
            return E.CUDA_ERROR_INVALID_VALUE
        self.handles.remove(self.ptr(handle), Reference)
        return E.CUDA_SUCCESS

    def _reference(self, handle: Any) -> Reference:
        self.require_init()
        return self.handles.get(self.ptr(handle), Reference)

    def _texref(self, handle: Any) -> Reference:
        ref = self._reference(handle)
        if ref.texture is None:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "a surface reference")
        return ref

    def _write(self, ref: Reference) -> int:
        """Writes `ref`'s descriptor (once it is bound), after the work
        already queued: a launch reads the reference as it was set."""
        if ref.module is not None and not any(m is ref.module for m in self.handles.all(Module)):
            # Its variable went with the module: nothing to write into.
            raise CudaError(E.CUDA_ERROR_INVALID_HANDLE, "the reference's module was unloaded")
        if ref.descriptor and ref.resource.resType != UNBOUND:
            texture = None if ref.texture is None else ref.texture[0]
            descriptor = self._descriptor(ref.resource[0], texture)
            self.device.synchronize()
            if ref.level_table:
                self.device.free(ref.level_table)
                ref.level_table = 0
            if ref.resource.resType == RESOURCE_MIPMAPPED_ARRAY:
                descriptor, ref.level_table = self._mipmap_table(descriptor, ref.resource[0],
                                                                 texture)
            self.device.copy_to_device(ref.descriptor,
                                       np.frombuffer(descriptor, dtype=np.uint8))
        return E.CUDA_SUCCESS

    def _bind_reference(self, ref: Reference, kind: int, array: int = 0, address: int = 0,
              mipmapped: int = 0) -> None:
        ref.resource.resType = kind
        ref.array, ref.address, ref.mipmapped = array, address, mipmapped

    # -- binding --------------------------------------------------------------------

    def cuTexRefSetArray(self, handle: Any, array: Any, flags: int) -> int:
        ref = self._texref(handle)
        if flags not in (0, OVERRIDE_FORMAT):
            return E.CUDA_ERROR_INVALID_VALUE
        a = self.array(array)
        self._bind_reference(ref, RESOURCE_ARRAY, array=self.ptr(array))
        ref.resource.res.array.hArray = array
        if flags == OVERRIDE_FORMAT:  # else the reference keeps its format
            ref.format, ref.channels = a.format, a.channels
        return self._write(ref)

    def cuTexRefSetMipmappedArray(self, handle: Any, mipmapped: Any, flags: int) -> int:
        ref = self._texref(handle)
        if flags != OVERRIDE_FORMAT:
            return E.CUDA_ERROR_INVALID_VALUE
        level = self.array(self.handle_ptr(self._mipmapped(mipmapped).levels[0]))
        self._bind_reference(ref, RESOURCE_MIPMAPPED_ARRAY, mipmapped=self.ptr(mipmapped))
        ref.resource.res.mipmap.hMipmappedArray = mipmapped
        ref.format, ref.channels = level.format, level.channels
        return self._write(ref)

    def cuTexRefGetMipmappedArray(self, out: Any, handle: Any) -> int:
        ref = self._texref(handle)
        if not ref.mipmapped:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(out, self.handle_ptr(ref.mipmapped))
        return E.CUDA_SUCCESS

    def cuSurfRefSetArray(self, handle: Any, array: Any, flags: int) -> int:
        ref = self._reference(handle)
        a = self.array(array)
        if ref.texture is not None or flags != 0 or not a.flags & 0x02:  # SURFACE_LDST
            return E.CUDA_ERROR_INVALID_VALUE
        self._bind_reference(ref, RESOURCE_ARRAY, array=self.ptr(array))
        ref.resource.res.array.hArray = array
        return self._write(ref)

    def cuSurfRefGetArray(self, out: Any, handle: Any) -> int:
        ref = self._reference(handle)
        if ref.texture is not None or not ref.array:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(out, self.handle_ptr(ref.array))
        return E.CUDA_SUCCESS

    def _texel_bytes(self, ref: Reference) -> int:
        if ref.format not in FORMATS or ref.channels not in (1, 2, 4):
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "no format set (cuTexRefSetFormat)")
        return FORMATS[ref.format][1] * ref.channels

    def cuTexRefSetAddress_v2(self, offset: Any, handle: Any, dptr: int, nbytes: int) -> int:
        ref = self._texref(handle)
        if dptr == 0:  # unbinds
            self._bind_reference(ref, UNBOUND)
            if offset != self.ffi.NULL:
                offset[0] = 0
            return E.CUDA_SUCCESS
        self._texel_bytes(ref)
        self._bind_reference(ref, RESOURCE_LINEAR, address=dptr)
        lin = ref.resource.res.linear
        lin.devPtr, lin.format, lin.numChannels, lin.sizeInBytes = dptr, ref.format, \
            ref.channels, nbytes
        # No alignment to make up for: the descriptor holds the exact address.
        if offset != self.ffi.NULL:
            offset[0] = 0
        return self._write(ref)

    def cuTexRefSetAddress2D_v3(self, handle: Any, desc: Any, dptr: int, pitch: int) -> int:
        ref = self._texref(handle)
        if desc == self.ffi.NULL or dptr == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        d = desc[0]
        if d.Format not in FORMATS or d.NumChannels not in (1, 2, 4) \
                or pitch < d.Width * FORMATS[d.Format][1] * d.NumChannels:
            return E.CUDA_ERROR_INVALID_VALUE
        self._bind_reference(ref, RESOURCE_PITCH2D, address=dptr)
        p = ref.resource.res.pitch2D
        p.devPtr, p.format, p.numChannels = dptr, d.Format, d.NumChannels
        p.width, p.height, p.pitchInBytes = d.Width, d.Height, pitch
        ref.format, ref.channels = d.Format, d.NumChannels
        return self._write(ref)

    cuTexRefSetAddress2D_v2 = cuTexRefSetAddress2D_v3

    def cuTexRefGetAddress_v2(self, out: Any, handle: Any) -> int:
        ref = self._texref(handle)
        if not ref.address:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(out, ref.address)
        return E.CUDA_SUCCESS

    def cuTexRefGetArray(self, out: Any, handle: Any) -> int:
        ref = self._texref(handle)
        if not ref.array:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(out, self.handle_ptr(ref.array))
        return E.CUDA_SUCCESS

    # -- how it reads -----------------------------------------------------------------

    def cuTexRefSetFormat(self, handle: Any, fmt: int, channels: int) -> int:
        ref = self._texref(handle)
        if fmt not in FORMATS or channels not in (1, 2, 4):
            return self.unsupported("cuTexRefSetFormat", f"format 0x{fmt:x} x {channels}")
        ref.format, ref.channels = fmt, channels
        kind = ref.resource.resType
        if kind == RESOURCE_LINEAR:
            ref.resource.res.linear.format, ref.resource.res.linear.numChannels = fmt, channels
        elif kind == RESOURCE_PITCH2D:
            ref.resource.res.pitch2D.format, ref.resource.res.pitch2D.numChannels = fmt, channels
        return self._write(ref)

    def cuTexRefGetFormat(self, fmt: Any, channels: Any, handle: Any) -> int:
        ref = self._texref(handle)
        if fmt != self.ffi.NULL:
            fmt[0] = ref.format
        if channels != self.ffi.NULL:
            channels[0] = ref.channels
        return E.CUDA_SUCCESS

    def cuTexRefSetAddressMode(self, handle: Any, axis: int, mode: int) -> int:
        ref = self._texref(handle)
        if axis not in (0, 1, 2) or mode not in (0, 1, 2, 3):
            return E.CUDA_ERROR_INVALID_VALUE
        ref.texture.addressMode[axis] = mode
        return self._write(ref)

    def cuTexRefGetAddressMode(self, out: Any, handle: Any, axis: int) -> int:
        ref = self._texref(handle)
        if axis not in (0, 1, 2):
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(out, ref.texture.addressMode[axis])
        return E.CUDA_SUCCESS

    def cuTexRefSetFilterMode(self, handle: Any, mode: int) -> int:
        ref = self._texref(handle)
        if mode not in (0, 1):
            return E.CUDA_ERROR_INVALID_VALUE
        ref.texture.filterMode = mode
        return self._write(ref)

    def cuTexRefGetFilterMode(self, out: Any, handle: Any) -> int:
        self.out(out, self._texref(handle).texture.filterMode)
        return E.CUDA_SUCCESS

    def cuTexRefSetFlags(self, handle: Any, flags: int) -> int:
        ref = self._texref(handle)
        if flags & ~TEXREF_FLAGS:
            return E.CUDA_ERROR_INVALID_VALUE
        ref.texture.flags = flags
        return self._write(ref)

    def cuTexRefGetFlags(self, out: Any, handle: Any) -> int:
        self.out(out, self._texref(handle).texture.flags)
        return E.CUDA_SUCCESS

    def cuTexRefSetBorderColor(self, handle: Any, colour: Any) -> int:
        ref = self._texref(handle)
        if colour == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        for i in range(4):
            ref.texture.borderColor[i] = colour[i]
        return self._write(ref)

    def cuTexRefGetBorderColor(self, out: Any, handle: Any) -> int:
        ref = self._texref(handle)
        if out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        for i in range(4):
            out[i] = ref.texture.borderColor[i]
        return E.CUDA_SUCCESS

    def cuTexRefSetMaxAnisotropy(self, handle: Any, anisotropy: int) -> int:
        ref = self._texref(handle)
        ref.texture.maxAnisotropy = anisotropy
        return self._write(ref)

    def cuTexRefGetMaxAnisotropy(self, out: Any, handle: Any) -> int:
        self.out(out, self._texref(handle).texture.maxAnisotropy)
        return E.CUDA_SUCCESS

    def cuTexRefSetMipmapFilterMode(self, handle: Any, mode: int) -> int:
        ref = self._texref(handle)
        if mode not in (0, 1):
            return E.CUDA_ERROR_INVALID_VALUE
        ref.texture.mipmapFilterMode = mode
        return self._write(ref)

    def cuTexRefGetMipmapFilterMode(self, out: Any, handle: Any) -> int:
        self.out(out, self._texref(handle).texture.mipmapFilterMode)
        return E.CUDA_SUCCESS

    def cuTexRefSetMipmapLevelBias(self, handle: Any, bias: float) -> int:
        ref = self._texref(handle)
        ref.texture.mipmapLevelBias = bias
        return self._write(ref)

    def cuTexRefGetMipmapLevelBias(self, out: Any, handle: Any) -> int:
        self.out(out, self._texref(handle).texture.mipmapLevelBias)
        return E.CUDA_SUCCESS

    def cuTexRefSetMipmapLevelClamp(self, handle: Any, low: float, high: float) -> int:
        ref = self._texref(handle)
        ref.texture.minMipmapLevelClamp, ref.texture.maxMipmapLevelClamp = low, high
        return self._write(ref)

    def cuTexRefGetMipmapLevelClamp(self, low: Any, high: Any, handle: Any) -> int:
        ref = self._texref(handle)
        self.out(low, ref.texture.minMipmapLevelClamp)
        self.out(high, ref.texture.maxMipmapLevelClamp)
        return E.CUDA_SUCCESS

    def cuParamSetTexRef(self, function: Any, unit: int, handle: Any) -> int:
        # Unified texture mode binds a reference by name: the only unit
        # there is CU_PARAM_TR_DEFAULT, and binding it changes nothing.
        self._texref(handle)
        return E.CUDA_SUCCESS if unit == -1 else E.CUDA_ERROR_INVALID_VALUE
