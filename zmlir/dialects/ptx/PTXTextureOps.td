//===- PTXTextureOps.td - Textures and surfaces ------------*- tablegen -*-===//
//
// tex, tld4, txq (texture objects) and suld, sust, suq (surface objects).
// A handle is the 64-bit texture or surface object; the coordinates are
// the PTX vector operand's, the array layer (of the .a1d/.a2d/.acube
// geometries) apart. Lowered by zmlir/lowering/Texture.cpp to reads of the
// object's descriptor (docs/textures.md); verifiers in PTXTextureOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_TEXTUREOPS
#define ZMLIR_DIALECT_PTX_TEXTUREOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

def PTX_TexCoord : AnyTypeOf<[I32, F32]>;
def PTX_TexValue : AnyTypeOf<[I32, F32]>;

//===----------------------------------------------------------------------===//
// Texture instructions (PTX ISA 9.7.10)
//===----------------------------------------------------------------------===//

def PTX_TexOp : PTX_Op<"tex", [AttrSizedOperandSegments, MemoryEffects<[MemRead]>]> {
  let summary = "PTX `tex`: sample a texture object";
  let description = [{
    `tex.geom.v4.dtype.ctype d, [a, c]`: the four channels of the texture
    `a` at coordinates `c` (`.f32` or `.s32`), filtered and addressed as the
    texture object says; `.f32`, `.s32` or `.u32` results. The layer of an
    array geometry is the `layer` operand; the padding coordinate of `.3d`,
    `.a2d` and `.cube` is dropped. In independent texture mode
    (`[tex, smp, c]`) the filter and address modes and
    force_unnormalized_coords are the `sampler` descriptor's (a
    `.samplerref`'s), the rest the texture's. PTX ISA 9.7.10.3.
    Example: `%x, %y, %z, %w = ptx.tex <d2> %h, %u, %v : f32, f32 -> f32, f32, f32, f32`
  }];
  let arguments = (ins PTX_TexGeometryAttr:$geometry, I64:$handle, Optional<I64>:$sampler,
                   Optional<I32>:$layer, Variadic<PTX_TexCoord>:$coords);
  let results = (outs Variadic<PTX_TexValue>:$res);
  let assemblyFormat = [{
    $geometry $handle (`sampler` $sampler^)? (`layer` $layer^)? `,` $coords attr-dict `:`
    type($coords) `->` type($res)
  }];
  let hasVerifier = 1;
}

def PTX_TexMipmapOp : PTX_Op<"tex_mipmap", [AttrSizedOperandSegments, RecursiveMemoryEffects,
                                            SingleBlock]> {
  let summary = "PTX `tex.level` and `tex.grad`: sample a mipmapped texture object";
  let description = [{
    `tex.level.geom.v4.dtype.f32 d, [a, c], lod` and
    `tex.grad.geom.v4.dtype.f32 d, [a, c], dPdx, dPdy`: the four channels at
    level of detail `lod`, or the one the gradients give (their padding
    elements dropped, as the coordinates'). The region is the importer's
    expansion on zmlir's own descriptors (frontend/importer/mipmap.py),
    yielding the channels: the lowering inlines it, or with native textures
    emits the instruction from the operands and drops it. A `signed`
    attribute marks `.s32` results. PTX ISA 9.7.10.3.
  }];
  let arguments = (ins PTX_TexGeometryAttr:$geometry, I64:$handle, Optional<I32>:$layer,
                   Variadic<F32>:$coords, Optional<F32>:$lod, Variadic<F32>:$dPdx,
                   Variadic<F32>:$dPdy);
  let results = (outs Variadic<PTX_TexValue>:$res);
  let regions = (region SizedRegion<1>:$expansion);
  let assemblyFormat = [{
    $geometry $handle (`layer` $layer^)? `,` $coords (`lod` $lod^)?
    (`grad` `(` $dPdx^ `)` `(` $dPdy `)`)? attr-dict `->` type($res) $expansion
  }];
}

def PTX_TexYieldOp : PTX_Op<"tex_yield", [Pure, Terminator, ReturnLike,
                                          HasParent<"TexMipmapOp">]> {
  let summary = "The channels of a ptx.tex_mipmap's expansion";
  let arguments = (ins Variadic<PTX_TexValue>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def PTX_Tld4Op : PTX_Op<"tld4", [AttrSizedOperandSegments, MemoryEffects<[MemRead]>]> {
  let summary = "PTX `tld4`: gather one channel of the four texels of a bilinear fetch";
  let description = [{
    `tld4.comp.2d.v4.dtype.f32 d, [a, c]`: component `comp` of the texels
    (i, j+1), (i+1, j+1), (i+1, j), (i, j) that linear filtering at `c`
    would weigh. `.2d` and `.a2d` only; an independent-mode `sampler` as
    tex's. PTX ISA 9.7.10.4.
    Example: `%x, %y, %z, %w = ptx.tld4 <r> <d2> %h, %u, %v : f32, f32 -> f32, f32, f32, f32`
  }];
  let arguments = (ins PTX_TexComponentAttr:$component, PTX_TexGeometryAttr:$geometry,
                   I64:$handle, Optional<I64>:$sampler, Optional<I32>:$layer,
                   Variadic<F32>:$coords);
  let results = (outs Variadic<PTX_TexValue>:$res);
  let assemblyFormat = [{
    $component $geometry $handle (`sampler` $sampler^)? (`layer` $layer^)? `,` $coords
    attr-dict `:` type($coords) `->` type($res)
  }];
  let hasVerifier = 1;
}

def PTX_TxqOp : PTX_Op<"txq", [MemoryEffects<[MemRead]>]> {
  let summary = "PTX `txq`: an attribute of a texture object";
  let description = [{
    `txq.query.b32 d, [a]`: the texture's width, height, depth, channel data
    type or order, filter or address mode, array size... PTX ISA 9.7.10.6.
    Example: `%w = ptx.txq <width> %h : i32`
  }];
  let arguments = (ins PTX_TexQueryAttr:$query, I64:$handle);
  let results = (outs I32:$res);
  let assemblyFormat = "$query $handle attr-dict `:` type($res)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Surface instructions (PTX ISA 9.7.11)
//===----------------------------------------------------------------------===//

def PTX_SuldOp : PTX_Op<"suld", [AttrSizedOperandSegments, MemoryEffects<[MemRead]>]> {
  let summary = "PTX `suld.b`: load raw bits from a surface object";
  let description = [{
    `suld.b.geom.vec.dtype.clamp d, [a, c]`: `vec` elements of `type`
    (`.b8` ... `.b64`) at byte `x` = c[0], row c[1], slice c[2] of the
    surface; out of range, `.trap` traps, `.clamp` reads the nearest
    element, `.zero` reads zeros. PTX ISA 9.7.11.1.
    Example: `%v = ptx.suld <d2> %h, %x, %y {type = #ptx.type<b32>} : i32, i32 -> i32`
  }];
  let arguments = (ins PTX_TexGeometryAttr:$geometry, I64:$handle, Optional<I32>:$layer,
                   Variadic<I32>:$coords, PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_SurfaceClampAttr,
                                     "::zmlir::ptx::SurfaceClamp::Trap">:$clamp);
  let results = (outs Variadic<PTX_Reg>:$res);
  let assemblyFormat = [{
    $geometry $handle (`layer` $layer^)? `,` $coords attr-dict `:` type($coords) `->` type($res)
  }];
  let hasVerifier = 1;
}

def PTX_SustOp : PTX_Op<"sust", [AttrSizedOperandSegments]> {
  let summary = "PTX `sust.b`: store raw bits into a surface object";
  let description = [{
    `sust.b.geom.vec.ctype.clamp [a, c], v`: the `vec` elements of `v` at
    byte `x` = c[0], row c[1], slice c[2] of the surface; out of range,
    `.trap` traps, `.clamp` writes the nearest element, `.zero` writes
    nothing. PTX ISA 9.7.11.2.
    Example: `ptx.sust <d2> %h, %x, %y values %v {type = #ptx.type<b32>} : (i32, i32), (i32)`
  }];
  let arguments = (ins PTX_TexGeometryAttr:$geometry, I64:$handle, Optional<I32>:$layer,
                   Variadic<I32>:$coords, Variadic<PTX_Reg>:$values, PTX_TypeAttr:$type,
                   DefaultValuedAttr<PTX_SurfaceClampAttr,
                                     "::zmlir::ptx::SurfaceClamp::Trap">:$clamp);
  let assemblyFormat = [{
    $geometry $handle (`layer` $layer^)? `,` $coords `values` $values attr-dict `:`
    `(` type($coords) `)` `,` `(` type($values) `)`
  }];
  let hasVerifier = 1;
}

def PTX_SuqOp : PTX_Op<"suq", [MemoryEffects<[MemRead]>]> {
  let summary = "PTX `suq`: an attribute of a surface object";
  let description = [{
    `suq.query.b32 d, [a]`: the surface's width, height, depth, channel data
    type or order, array size or memory layout. PTX ISA 9.7.11.4.
    Example: `%w = ptx.suq <width> %h : i32`
  }];
  let arguments = (ins PTX_TexQueryAttr:$query, I64:$handle);
  let results = (outs I32:$res);
  let assemblyFormat = "$query $handle attr-dict `:` type($res)";
  let hasVerifier = 1;
}

#endif // ZMLIR_DIALECT_PTX_TEXTUREOPS
