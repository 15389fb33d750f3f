//===- Texture.cpp - tex, tld4, txq, suld, sust, suq ----------------------===//
//
// A texture or surface object is the device address of its descriptor,
// which the driver writes (zmlir/runtime/cuda/texture.py; layout in
// docs/textures.md): the data's address, pitch and slice stride, the
// extent, the element format, the filter and address modes, the border
// colour. The same emulation serves every target.
//
// Sampling is one helper function per geometry in the module, built on
// first use (__zmlir_tex_sample_{1,2,3}d, __zmlir_tld4_2d), and one that
// fetches and decodes a texel (__zmlir_tex_texel); a tex op becomes a call.
// The sampler follows the CUDA programming guide's "Texture Fetching":
//
//  1. Unnormalized coordinate u = x, or x * N for normalized coordinates
//     (always for cube maps).
//  2. Point filtering takes texel i = floor(u); linear filtering texels
//     i = floor(u - 0.5) and i + 1 with the weight a = frac(u - 0.5) held
//     in 9-bit fixed point with 8 fraction bits (rounded to 1/256).
//  3. Each texel index is addressed on its own: wrap (i mod N), mirror
//     (i mod 2N, reflected), clamp to [0, N-1], border (out of range reads
//     the border colour). Wrap and mirror need normalized coordinates;
//     without them they clamp, as NVIDIA's hardware does.
//  4. A texel decodes to four channels: float and half as f32;
//     8/16-bit integers as themselves, or for cudaReadModeNormalizedFloat
//     v / (2^n - 1) (unsigned) and max(v / (2^(n-1) - 1), -1) (signed);
//     missing channels read 0, and alpha 1.
//  5. Linear filtering blends (1 - a) * T[i] + a * T[i+1] along each axis.
//
// In independent texture mode (a `.samplerref` operand) the sampler's
// descriptor gives the filter mode, the address modes, the border colour and
// force_unnormalized_coords; the texture's the rest. A lookup with no sampler
// passes its texture as its sampler.
//
// Surfaces address bytes in x: suld/sust read and write raw bits at
// data + z * slice + y * pitch + x, checked against the extent.
//
// With the pass's `native-textures` option (the CUDA passthrough, whose
// handles are NVIDIA's texture and surface objects) every op is the
// target's own instruction instead (TargetInfo::nativeTexture, inline PTX on
// NVPTX), tex.level and tex.grad (ptx.tex_mipmap) too, whose region, the
// importer's expansion on our descriptors (mipmap.py), is inlined on the
// other targets; what only our descriptors can answer is refused:
// independent-mode samplers, the txq and suq queries other than the extent.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

#include "zmlir/lowering/Patterns.h"

#include <cmath>

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;

/// Byte offsets of the descriptor's fields (docs/textures.md).
namespace desc {
constexpr int64_t kData = 0;        // u64
constexpr int64_t kPitch = 8;       // u64 bytes per row
constexpr int64_t kSlice = 16;      // u64 bytes per 2D slice (3D depth, or layer)
constexpr int64_t kWidth = 24;      // u32 x 4: width, height, depth, layers
constexpr int64_t kKind = 40;       // u32: 0 unsigned, 1 signed, 2 half, 3 float
constexpr int64_t kElemBytes = 44;  // u32: 1, 2, 4
constexpr int64_t kChannels = 48;   // u32: 1, 2, 4
constexpr int64_t kFlags = 52;      // u32: kNormalizedCoords | kLinear | kReadNormalized
constexpr int64_t kAddrModes = 56;  // u32 x 3: 0 wrap, 1 clamp, 2 mirror, 3 border
constexpr int64_t kTexelBytes = 68; // u32
constexpr int64_t kBorder = 72;     // f32 x 4
constexpr int64_t kFormat = 88;     // u32: CUarray_format
constexpr int64_t kLevels = 92;     // u32: mipmap levels (0: not mipmapped)
/// u32 x 2: what txq answers for height and depth (NVIDIA's: a layered 1D
/// texture's layers are its height, a cube map's depth is 0 and a layered
/// one's its cubes), the descriptor's last 8 bytes (runtime/cuda/texture.py).
constexpr int64_t kQueriedHeight = 120;
} // namespace desc

/// Descriptor flags; kForceUnnormalized is a sampler's (the importer writes
/// `.samplerref` descriptors), never a texture's.
constexpr int64_t kNormalizedCoords = 1, kLinear = 2, kReadNormalized = 4, kForceUnnormalized = 8;
constexpr int64_t kKindSigned = 1, kKindHalf = 2, kKindFloat = 3;
constexpr int64_t kWrap = 0, kClamp = 1, kMirror = 2, kBorderMode = 3;
/// Sampler call flags: cube-map faces are addressed with normalized
/// coordinates whatever the texture says; integer coordinates (`.s32`) are
/// texel indices, point-sampled.
constexpr int64_t kForceNormalized = 1, kIntegerCoords = 2;

/// Builds code with one builder and location: the arithmetic the texture
/// helpers are made of.
struct Emitter : IntArithBuilder {
  RewriterBase &rewriter; // `b`, for splitting blocks
  unsigned globalSpace;

  Emitter(RewriterBase &rewriter, Location loc, unsigned globalSpace)
      : IntArithBuilder{rewriter, loc}, rewriter(rewriter), globalSpace(globalSpace) {}

  mlir::Type i32() { return b.getI32Type(); }
  mlir::Type i64() { return b.getI64Type(); }
  mlir::Type f32() { return b.getF32Type(); }
  mlir::Type v4i32() { return VectorType::get({4}, b.getI32Type()); }
  mlir::Type ptr() { return LLVM::LLVMPointerType::get(b.getContext(), globalSpace); }

  Value cf(double v) { return floatConst(b, loc, f32(), v); }
  Value cd(double v) { return floatConst(b, loc, b.getF64Type(), v); }
  Value fpext(Value x) { return arith::ExtFOp::create(b, loc, b.getF64Type(), x); }
  Value fptrunc(Value x) { return arith::TruncFOp::create(b, loc, f32(), x); }

  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value fcmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value sitofp(Value x) { return arith::SIToFPOp::create(b, loc, f32(), x); }
  Value uitofp(Value x) { return arith::UIToFPOp::create(b, loc, f32(), x); }
  Value bitsOf(Value x) { return arith::BitcastOp::create(b, loc, i32(), x); }
  Value floatOf(Value x) { return arith::BitcastOp::create(b, loc, f32(), x); }
  /// The i1 `x` negated.
  Value inverted(Value x) { return xori(x, constant(b.getI1Type(), 1)); }

  Value lane(Value v, Value i) { return LLVM::ExtractElementOp::create(b, loc, v, i); }
  Value lane(Value v, int64_t i) { return lane(v, c32(i)); }
  Value withLane(Value v, Value x, int64_t i) {
    return LLVM::InsertElementOp::create(b, loc, v, x, c32(i));
  }
  Value vector(ArrayRef<Value> lanes) {
    Value v = LLVM::PoisonOp::create(b, loc, VectorType::get({4}, lanes[0].getType()));
    for (auto [i, x] : llvm::enumerate(lanes))
      v = withLane(v, x, i);
    return v;
  }

  /// `base + offset` bytes, as a pointer.
  Value at(Value base, Value offset) {
    return LLVM::GEPOp::create(b, loc, ptr(), b.getI8Type(), base, ValueRange{offset});
  }
  Value at(Value base, int64_t offset) { return at(base, c64(offset)); }
  Value load(mlir::Type t, Value p, unsigned align = 1) {
    return LLVM::LoadOp::create(b, loc, t, p, align);
  }
  Value field32(Value d, int64_t offset) { return load(i32(), at(d, offset), 4); }
  Value field64(Value d, int64_t offset) { return load(i64(), at(d, offset), 8); }
  Value pointerOf(Value address) { return LLVM::IntToPtrOp::create(b, loc, ptr(), address); }

  /// Runs `then` only where `cond` holds; the builder continues after it.
  void ifThen(Value cond, llvm::function_ref<void()> then) {
    Block *before = b.getInsertionBlock();
    Block *after = rewriter.splitBlock(before, b.getInsertionPoint());
    Block *body = b.createBlock(after);
    then();
    if (b.getInsertionBlock()->empty() ||
        !b.getInsertionBlock()->back().hasTrait<OpTrait::IsTerminator>())
      cf::BranchOp::create(b, loc, after);
    b.setInsertionPointToEnd(before);
    cf::CondBranchOp::create(b, loc, cond, body, after);
    b.setInsertionPointToStart(after);
  }
};

/// The helper `name` of the gpu.module around `user`, built by `body`
/// (given the entry block's arguments) on first use.
LLVM::LLVMFuncOp helper(RewriterBase &b, Operation *user, StringRef name, mlir::Type result,
                        ArrayRef<mlir::Type> params,
                        llvm::function_ref<Value(Emitter &, ValueRange)> body,
                        unsigned globalSpace) {
  auto module = user->getParentOfType<gpu::GPUModuleOp>();
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  Location loc = user->getLoc();
  auto fn = LLVM::LLVMFuncOp::create(b, loc, name, LLVM::LLVMFunctionType::get(result, params),
                                     LLVM::Linkage::Internal);
  SmallVector<Location> locs(params.size(), loc);
  Block *entry = b.createBlock(&fn.getBody(), {}, params, locs);
  b.setInsertionPointToStart(entry);
  Emitter e{b, loc, globalSpace};
  Value r = body(e, entry->getArguments());
  LLVM::ReturnOp::create(b, loc, r);
  return fn;
}

//===----------------------------------------------------------------------===//
// The texel: __zmlir_tex_texel(desc, x, y, z) -> 4 x i32
//===----------------------------------------------------------------------===//

/// The texel at (x, y, z) (in range) decoded: four f32 bit patterns for a
/// float result (float or half data, or normalized reads), else four
/// integers. 1. Its bytes load as 1, 2, 4, 8 or 16 bytes (the texel size),
/// into four 32-bit words; 2. each channel is its element's bits in them,
/// sign-extended for signed formats; 3. decoded (step 4 above).
Value buildTexel(Emitter &e, ValueRange args) {
  RewriterBase &b = e.rewriter;
  Location loc = e.loc;
  Value d = args[0];
  Value x = e.extui(e.i64(), args[1]), y = e.extui(e.i64(), args[2]), z = e.extui(e.i64(), args[3]);
  Value data = e.pointerOf(e.field64(d, desc::kData));
  Value texelBytes = e.field32(d, desc::kTexelBytes);
  Value offset = e.addi(
      e.muli(z, e.field64(d, desc::kSlice)),
      e.addi(e.muli(y, e.field64(d, desc::kPitch)), e.muli(x, e.extui(e.i64(), texelBytes))));
  Value p = e.at(data, offset);
  // 1.
  Block *entry = b.getInsertionBlock();
  Block *done = b.splitBlock(entry, b.getInsertionPoint());
  done->addArgument(e.v4i32(), loc);
  Value zero4 = e.vector({e.c32(0), e.c32(0), e.c32(0), e.c32(0)});
  SmallVector<APInt> sizes;
  SmallVector<Block *> cases;
  for (int64_t bytes : {1, 2, 4, 8, 16}) {
    Block *block = b.createBlock(done);
    Value words;
    if (bytes <= 4) {
      Value v = e.load(b.getIntegerType(8 * bytes), p);
      words = e.withLane(zero4, bytes < 4 ? e.extui(e.i32(), v) : v, 0);
    } else {
      Value v = e.load(VectorType::get({bytes / 4}, e.i32()), p);
      words = zero4;
      for (int64_t i = 0; i < bytes / 4; ++i)
        words = e.withLane(words, e.lane(v, i), i);
    }
    cf::BranchOp::create(b, loc, done, ValueRange{words});
    sizes.push_back(APInt(32, bytes));
    cases.push_back(block);
  }
  b.setInsertionPointToEnd(entry);
  SmallVector<ValueRange> noOperands(cases.size(), ValueRange{});
  cf::SwitchOp::create(b, loc, texelBytes, done, ValueRange{zero4}, sizes, cases, noOperands);
  b.setInsertionPointToStart(done);
  Value words = done->getArgument(0);
  // 2.
  Value kind = e.field32(d, desc::kKind), elemBytes = e.field32(d, desc::kElemBytes),
        channels = e.field32(d, desc::kChannels), flags = e.field32(d, desc::kFlags);
  Value elemBits = e.muli(elemBytes, e.c32(8));
  Value isSigned = e.cmpi(IP::eq, kind, e.c32(kKindSigned));
  Value isInt = e.cmpi(IP::ult, kind, e.c32(kKindHalf));
  Value readNormalized = e.cmpi(IP::ne, e.andi(flags, e.c32(kReadNormalized)), e.c32(0));
  Value floatResult = e.ori(e.cmpi(IP::uge, kind, e.c32(kKindHalf)), readNormalized);
  Value unused = e.subi(e.c32(32), elemBits); // bits above the element
  Value unsignedMax = e.uitofp(e.shrui(e.c32(-1), unused));
  Value signedMax = e.uitofp(e.shrui(e.c32(-1), e.addi(unused, e.c32(1))));
  SmallVector<Value> lanes;
  for (int64_t k = 0; k < 4; ++k) {
    Value byte = e.muli(e.c32(k), elemBytes);
    Value word = e.lane(words, e.shrui(byte, e.c32(2)));
    Value shifted = e.shrui(word, e.muli(e.andi(byte, e.c32(3)), e.c32(8)));
    // (A shift by 32 is poison: a 4-byte element is the word itself.)
    Value safeUnused = e.andi(unused, e.c32(31));
    Value high = e.shli(shifted, safeUnused);
    Value raw = e.select(isSigned, e.shrsi(high, safeUnused), e.shrui(high, safeUnused));
    // 3.
    Value half = e.bitsOf(arith::ExtFOp::create(
        b, loc, e.f32(),
        arith::BitcastOp::create(b, loc, b.getF16Type(), e.trunci(b.getI16Type(), raw))
            .getResult()));
    // (The most negative integer reads below -1 here: a linear fetch
    // filters it so, the sampler clamps a point fetch.)
    Value signedValue = e.fdiv(e.sitofp(raw), signedMax);
    Value normalized = e.select(isSigned, e.bitsOf(signedValue),
                                e.bitsOf(e.fdiv(e.uitofp(raw), unsignedMax)));
    Value value = e.select(e.cmpi(IP::eq, kind, e.c32(kKindFloat)), raw,
                           e.select(e.cmpi(IP::eq, kind, e.c32(kKindHalf)), half,
                                    e.select(e.andi(isInt, readNormalized), normalized, raw)));
    // (NVIDIA's texture units read a missing channel as 0, alpha too.)
    lanes.push_back(e.select(e.cmpi(IP::ult, e.c32(k), channels), value, e.c32(0)));
  }
  return e.vector(lanes);
}

//===----------------------------------------------------------------------===//
// The sampler: __zmlir_tex_sample_Nd(desc, x, y, z, layer, flags, sampler)
// -> 4 x i32
//===----------------------------------------------------------------------===//

/// One axis of a fetch (steps 1-3): the two texel indices (the second for
/// linear filtering), whether each is in range, and the weight of the
/// second.
struct Axis {
  Value index[2], inRange[2], weight;
};

Axis addressAxis(Emitter &e, Value coord, Value extent, Value mode, Value normalized, Value linear,
                 bool gather) {
  Value n = e.maxsi(extent, e.c32(1));
  // 1.
  // NVIDIA's units truncate a normalized coordinate to a fixed point of at
  // most 21 fraction bits before scaling it (tools/texture_grid.cu: 0.2f
  // * 5 reads texel 0).
  Value scale = e.cf(2097152.0);
  Value fixed = e.fdiv(e.floor(e.fmul(coord, scale)), scale);
  Value u = e.select(normalized, e.fmul(fixed, e.sitofp(n)), coord);
  Value wrapsOrMirrors = e.ori(e.cmpi(IP::eq, mode, e.c32(kWrap)),
                               e.cmpi(IP::eq, mode, e.c32(kMirror)));
  Value effective = e.select(e.andi(wrapsOrMirrors, e.inverted(normalized)), e.c32(kClamp), mode);
  // 2.
  using P = arith::CmpFPredicate;
  // A linear fetch in clamp mode clamps the coordinate to the texel
  // centres [0.5, N - 0.5], not the indices: the far texel weighs 0 (it
  // shows in 3D, where the corner weights do not keep each axis' share:
  // tools/texture_grid.h200.txt.gz, 3d-linear). tld4's footprint clamps
  // each index.
  Value lowest = e.cf(0.5), highest = e.fsub(e.sitofp(n), e.cf(0.5));
  Value centred = e.select(e.fcmp(P::OLT, u, lowest), lowest,
                           e.select(e.fcmp(P::OGT, u, highest), highest, u));
  if (!gather)
    u = e.select(e.andi(linear, e.cmpi(IP::eq, effective, e.c32(kClamp))), centred, u);
  Value t = e.select(linear, e.fsub(u, e.cf(0.5)), u);
  Value whole = e.floor(t);
  // Far-off coordinates (and NaN, which clamps to the low end) stay in
  // the range of i32.
  Value low = e.cf(-1073741824.0), high = e.cf(1073741824.0);
  Value bounded = e.select(e.fcmp(P::OLT, whole, low), low,
                           e.select(e.fcmp(P::OGT, whole, high), high, whole));
  bounded = e.select(e.fcmp(P::UNO, whole, whole), e.cf(0.0), bounded);
  Value i0 = arith::FPToSIOp::create(e.b, e.loc, e.i32(), bounded);
  Value weight = e.fdiv(e.floor(e.fadd(e.fmul(e.fsub(t, whole), e.cf(256.0)), e.cf(0.5))),
                        e.cf(256.0));
  // 3.
  Axis axis;
  axis.weight = weight;
  for (int k = 0; k < 2; ++k) {
    Value i = k == 0 ? i0 : e.addi(i0, e.c32(1));
    Value wrapped = e.remsi(i, n);
    wrapped = e.select(e.cmpi(IP::slt, wrapped, e.c32(0)), e.addi(wrapped, n), wrapped);
    Value twice = e.addi(n, n);
    Value period = e.remsi(i, twice);
    period = e.select(e.cmpi(IP::slt, period, e.c32(0)), e.addi(period, twice), period);
    Value mirrored = e.select(e.cmpi(IP::sge, period, n), e.subi(e.subi(twice, e.c32(1)), period),
                              period);
    Value clamped = e.minsi(e.maxsi(i, e.c32(0)), e.subi(n, e.c32(1)));
    axis.index[k] = e.select(
        e.cmpi(IP::eq, effective, e.c32(kWrap)), wrapped,
        e.select(e.cmpi(IP::eq, effective, e.c32(kMirror)), mirrored, clamped));
    axis.inRange[k] = e.ori(e.cmpi(IP::ne, effective, e.c32(kBorderMode)),
                            e.cmpi(IP::eq, i, clamped));
  }
  return axis;
}

/// The weights (f64, in 1/256) of the 2^dims corners of a linear fetch
/// (bit a of the corner: the second texel on axis a), each a whole number,
/// summing to 256. NVIDIA's units split the weight of each z slice (exact)
/// between x's two texels, rounding x1's share to the nearest 1/256 with
/// ties up (x0 takes the rest), then each share between y's two texels,
/// ties up where the corner's x and y bits agree and down where they differ.
/// In 2D the slice weighs 256, so x's shares are exact; in 1D there is no
/// split. Fitted to an H200 bit for bit: every 2D weight of
/// tools/texture_grid.h200.txt.gz, and all 2^24 fraction triples in 3D
/// (2026-12-04).
SmallVector<Value> cornerWeights(Emitter &e, ArrayRef<Axis> axes) {
  auto whole = [&](Value v) { return e.fpext(e.fmul(v, e.cf(256.0))); };
  // `product` / 256 (exact in f64) to a whole number, ties up or down.
  auto rounded = [&](Value product, bool tieUp) -> Value {
    Value p = e.fmul(product, e.cd(1.0 / 256.0));
    return tieUp ? math::FloorOp::create(e.b, e.loc, e.fadd(p, e.cd(0.5))).getResult()
                 : math::CeilOp::create(e.b, e.loc, e.fsub(p, e.cd(0.5))).getResult();
  };
  SmallVector<Value> weights;
  for (unsigned bits = 0; bits < (1u << axes.size()); ++bits) {
    SmallVector<Value> w;
    for (auto [a, axis] : llvm::enumerate(axes)) {
      Value second = whole(axis.weight);
      w.push_back((bits >> a) & 1 ? second : e.fsub(e.cd(256.0), second));
    }
    bool x1 = bits & 1, y1 = (bits >> 1) & 1;
    Value share = w.size() > 2 ? rounded(e.fmul(w[2], w[0]), x1) : w[0];
    weights.push_back(w.size() > 1 ? rounded(e.fmul(share, w[1]), x1 == y1) : share);
  }
  return weights;
}

/// `x` (f64) rounded to a half's precision, ties away from zero, as f32:
/// how an H200 rounds a filtered half texture (of tools/texture_grid's 500
/// half-linear fetches, rounding the exact sum so gives 498, to nearest even
/// 496; both ties it shows go up). Exact: it scales by powers of two.
Value roundToHalfTiesAway(Emitter &e, Value x) {
  mlir::Type f64 = e.b.getF64Type();
  Value magnitude = math::AbsFOp::create(e.b, e.loc, x);
  Value bits = arith::BitcastOp::create(e.b, e.loc, e.i64(), magnitude);
  Value exponent = e.subi(e.shrui(bits, e.c64(52)), e.c64(1023));
  // A half's spacing at x: 2^(max(exponent, -14) - 10), subnormals included.
  Value spacingExponent = e.subi(e.maxsi(exponent, e.c64(-14)), e.c64(10));
  Value spacing = arith::BitcastOp::create(e.b, e.loc, f64,
                                           e.shli(e.addi(spacingExponent, e.c64(1023)), e.c64(52)));
  Value steps = e.floor(e.fadd(e.fdiv(magnitude, spacing), e.cd(0.5)));
  return e.fptrunc(math::CopySignOp::create(e.b, e.loc, e.fmul(steps, spacing), x));
}

/// The sampler of a `dims`-dimensional texture (steps 1-5), or with
/// `gather` tld4's footprint: component `args[5]` of the four texels.
/// `args[6]` is the sampler's descriptor (the texture's own without one).
Value buildSampler(Emitter &e, ValueRange args, unsigned dims, bool gather,
                   LLVM::LLVMFuncOp texel) {
  RewriterBase &b = e.rewriter;
  Location loc = e.loc;
  Value d = e.pointerOf(args[0]), sampler = e.pointerOf(args[6]);
  // (tld4's last argument is its component, not flags.)
  Value layer = args[4], callFlags = gather ? e.c32(0) : args[5];
  // An array layer out of range reads the last layer, a negative one too:
  // NVIDIA's units clamp it as an unsigned integer (an H200 reads layer
  // D-1 at -1: tools/texture_grid.h200.txt.gz, layered-linear).
  layer = e.minui(layer, e.subi(e.maxsi(e.field32(d, desc::kWidth + 12), e.c32(1)), e.c32(1)));
  Value flags = e.field32(d, desc::kFlags), kind = e.field32(d, desc::kKind);
  Value samplerFlags = e.field32(sampler, desc::kFlags);
  Value unnormalized = e.cmpi(IP::ne, e.andi(samplerFlags, e.c32(kForceUnnormalized)), e.c32(0));
  Value floatResult = e.ori(e.cmpi(IP::uge, kind, e.c32(kKindHalf)),
                            e.cmpi(IP::ne, e.andi(flags, e.c32(kReadNormalized)), e.c32(0)));
  Value integerCoords = e.cmpi(IP::ne, e.andi(callFlags, e.c32(kIntegerCoords)), e.c32(0));
  Value notInteger = e.inverted(integerCoords);
  Value textureNormalized = e.andi(
      e.cmpi(IP::ne, e.andi(flags, e.c32(kNormalizedCoords)), e.c32(0)), e.inverted(unnormalized));
  Value normalized = e.andi(
      notInteger, e.ori(textureNormalized,
                        e.cmpi(IP::ne, e.andi(callFlags, e.c32(kForceNormalized)), e.c32(0))));
  Value linear = gather ? e.constant(b.getI1Type(), 1)
                        : e.andi(e.andi(notInteger, floatResult),
                                 e.cmpi(IP::ne, e.andi(samplerFlags, e.c32(kLinear)), e.c32(0)));
  SmallVector<Axis> axes;
  for (unsigned a = 0; a < dims; ++a)
    axes.push_back(addressAxis(e, args[1 + a], e.field32(d, desc::kWidth + 4 * a),
                               e.field32(sampler, desc::kAddrModes + 4 * a), normalized, linear,
                               gather));
  Value border = e.vector({e.field32(sampler, desc::kBorder), e.field32(sampler, desc::kBorder + 4),
                           e.field32(sampler, desc::kBorder + 8),
                           e.field32(sampler, desc::kBorder + 12)});
  SmallVector<Value> borderInts;
  for (int64_t k = 0; k < 4; ++k)
    borderInts.push_back(arith::FPToSIOp::create(b, loc, e.i32(), e.floatOf(e.lane(border, k))));
  border = e.select(floatResult, border, e.vector(borderInts));
  // The border colour has the texture's channels, the others read 0.
  Value channels = e.field32(d, desc::kChannels);
  SmallVector<Value> borderLanes;
  for (int64_t k = 0; k < 4; ++k)
    borderLanes.push_back(
        e.select(e.cmpi(IP::ult, e.c32(k), channels), e.lane(border, k), e.c32(0)));
  border = e.vector(borderLanes);
  // A signed integer read as a normalized float is at least -1, except
  // inside a linear filter (below).
  Value signedNormalized = e.andi(e.cmpi(IP::eq, kind, e.c32(kKindSigned)),
                                  e.cmpi(IP::ne, e.andi(flags, e.c32(kReadNormalized)), e.c32(0)));
  auto atLeastMinusOne = [&](Value texel) {
    SmallVector<Value> lanes;
    for (int64_t k = 0; k < 4; ++k) {
      Value x = e.lane(texel, k);
      Value below = e.andi(signedNormalized,
                           e.fcmp(arith::CmpFPredicate::OLT, e.floatOf(x), e.cf(-1.0)));
      lanes.push_back(e.select(below, e.bitsOf(e.cf(-1.0)), x));
    }
    return e.vector(lanes);
  };
  // The texel at corner `bits` (bit a: the second index on axis a).
  auto corner = [&](unsigned bits, bool clampSigned = true) {
    Value coord[3] = {e.c32(0), e.c32(0), layer};
    Value inRange = e.constant(b.getI1Type(), 1);
    for (unsigned a = 0; a < dims; ++a) {
      unsigned k = (bits >> a) & 1;
      coord[a] = axes[a].index[k];
      inRange = e.andi(inRange, axes[a].inRange[k]);
    }
    Value t = LLVM::CallOp::create(b, loc, texel, ValueRange{d, coord[0], coord[1], coord[2]})
                  .getResult();
    return e.select(inRange, clampSigned ? atLeastMinusOne(t) : t, border);
  };
  if (gather) {
    // (i, j+1), (i+1, j+1), (i+1, j), (i, j)
    Value component = args[5];
    SmallVector<Value> lanes;
    for (unsigned bits : {2u, 3u, 1u, 0u})
      lanes.push_back(e.lane(corner(bits), component));
    return e.vector(lanes);
  }
  Block *entry = b.getInsertionBlock();
  Block *done = b.splitBlock(entry, b.getInsertionPoint());
  done->addArgument(e.v4i32(), loc);
  Block *point = b.createBlock(done);
  cf::BranchOp::create(b, loc, done, ValueRange{corner(0)});
  Block *filtered = b.createBlock(done);
  // 5.
  SmallVector<Value> values;
  for (unsigned bits = 0; bits < (1u << dims); ++bits)
    values.push_back(corner(bits, /*clampSigned=*/false));
  SmallVector<Value> weights = cornerWeights(e, axes);
  // Integers read as normalized floats filter in 16-bit fixed point: an
  // unsigned texel v of n bits weighs v * 65535 / (2^n - 1) (v * 257 for 8
  // bits), a signed one v * 32767 / (2^(n-1) - 1) exactly, the most
  // negative unclamped; the sum is rounded half up to a whole step, then
  // clamped to -1 (fitted to an H200: tools/texture_grid.h200.txt.gz).
  // Signed texels sum as the integers v, exactly, before the one division.
  Value fixedPoint = e.andi(e.cmpi(IP::ult, kind, e.c32(kKindHalf)),
                            e.cmpi(IP::ne, e.andi(flags, e.c32(kReadNormalized)), e.c32(0)));
  Value isSigned = e.cmpi(IP::eq, kind, e.c32(kKindSigned));
  Value steps = e.select(isSigned, e.cd(32767.0), e.cd(65535.0));
  Value byte = e.cmpi(IP::eq, e.field32(d, desc::kElemBytes), e.c32(1));
  Value unit = e.select(isSigned, e.select(byte, e.cd(127.0), e.cd(32767.0)), steps);
  SmallVector<Value> lanes;
  for (int64_t k = 0; k < 4; ++k) {
    Value sum = e.cd(0.0), fixedSum = e.cd(0.0);
    for (auto [w, v] : llvm::zip(weights, values)) {
      Value x = e.fpext(e.floatOf(e.lane(v, k)));
      sum = e.fadd(sum, e.fmul(w, x));
      Value code = math::RoundOp::create(b, loc, e.fmul(x, unit)).getResult();
      fixedSum = e.fadd(fixedSum, e.fmul(w, code));
    }
    Value exact = e.fmul(sum, e.cd(1.0 / 256.0));
    // Half textures filter to a half.
    Value filtered = e.select(e.cmpi(IP::eq, kind, e.c32(kKindHalf)), roundToHalfTiesAway(e, exact),
                              e.fptrunc(exact));
    Value rounded = e.floor(
        e.fadd(e.fdiv(e.fmul(fixedSum, steps), e.fmul(unit, e.cd(256.0))), e.cd(0.5)));
    Value fromFixed = e.fdiv(rounded, steps);
    fromFixed = e.select(e.fcmp(arith::CmpFPredicate::OLT, fromFixed, e.cd(-1.0)), e.cd(-1.0),
                         fromFixed);
    lanes.push_back(e.bitsOf(e.select(fixedPoint, e.fptrunc(fromFixed), filtered)));
  }
  cf::BranchOp::create(b, loc, done, ValueRange{e.vector(lanes)});
  b.setInsertionPointToEnd(entry);
  cf::CondBranchOp::create(b, loc, linear, filtered, point);
  b.setInsertionPointToStart(done);
  return done->getArgument(0);
}

/// The texel function of the module around `user`.
LLVM::LLVMFuncOp texelFunction(RewriterBase &b, Operation *user, unsigned globalSpace) {
  Emitter e{b, user->getLoc(), globalSpace};
  return helper(b, user, "__zmlir_tex_texel", e.v4i32(), {e.ptr(), e.i32(), e.i32(), e.i32()},
                buildTexel, globalSpace);
}

/// The call of the sampler for `dims` (tld4's with `gather`), its result
/// split into four i32 values; `sampler` an independent-mode sampler or null.
SmallVector<Value> callSampler(RewriterBase &b, Operation *user, unsigned globalSpace,
                               unsigned dims, bool gather, Value handle, Value sampler,
                               ArrayRef<Value> coords, Value layer, Value flags) {
  Emitter e{b, user->getLoc(), globalSpace};
  LLVM::LLVMFuncOp texel = texelFunction(b, user, globalSpace);
  std::string name = gather ? "__zmlir_tld4_2d" : ("__zmlir_tex_sample_" + Twine(dims) + "d").str();
  auto fn = helper(
      b, user, name, e.v4i32(), {e.i64(), e.f32(), e.f32(), e.f32(), e.i32(), e.i32(), e.i64()},
      [&](Emitter &inner, ValueRange args) {
        return buildSampler(inner, args, dims, gather, texel);
      },
      globalSpace);
  SmallVector<Value> args{handle};
  for (unsigned a = 0; a < 3; ++a)
    args.push_back(a < coords.size() ? coords[a] : e.cf(0.0));
  args.push_back(layer ? layer : e.c32(0));
  args.push_back(flags);
  args.push_back(sampler ? sampler : handle);
  Value r = LLVM::CallOp::create(b, user->getLoc(), fn, args).getResult();
  SmallVector<Value> lanes;
  for (int64_t k = 0; k < 4; ++k)
    lanes.push_back(e.lane(r, k));
  return lanes;
}

/// A cube map's direction (x, y, z) as its face (0-5: +x, -x, +y, -y, +z,
/// -z) and normalized face coordinates (s/|m| + 1) / 2, (t/|m| + 1) / 2,
/// after the CUDA programming guide's table: the major axis m picks the
/// face, s and t come from the other two.
std::tuple<Value, Value, Value> cubeFace(Emitter &e, Value x, Value y, Value z) {
  using P = arith::CmpFPredicate;
  Value ax = math::AbsFOp::create(e.b, e.loc, x), ay = math::AbsFOp::create(e.b, e.loc, y),
        az = math::AbsFOp::create(e.b, e.loc, z);
  auto neg = [&](Value v) { return arith::NegFOp::create(e.b, e.loc, v).getResult(); };
  // Ties go to z, then y (NVIDIA's units: (-1, -1, -1) reads face -z).
  Value xMajor = e.andi(e.fcmp(P::OGT, ax, ay), e.fcmp(P::OGT, ax, az));
  Value yMajor = e.andi(e.inverted(xMajor), e.fcmp(P::OGT, ay, az));
  Value xPos = e.fcmp(P::OGE, x, e.cf(0.0)), yPos = e.fcmp(P::OGE, y, e.cf(0.0)),
        zPos = e.fcmp(P::OGE, z, e.cf(0.0));
  // x major: +x (-z, -y), -x (z, -y); y major: +y (x, z), -y (x, -z);
  // z major: +z (x, -y), -z (-x, -y).
  Value face = e.select(
      xMajor, e.select(xPos, e.c32(0), e.c32(1)),
      e.select(yMajor, e.select(yPos, e.c32(2), e.c32(3)), e.select(zPos, e.c32(4), e.c32(5))));
  Value s = e.select(xMajor, e.select(xPos, neg(z), z),
                     e.select(yMajor, x, e.select(zPos, x, neg(x))));
  Value t = e.select(xMajor, neg(y), e.select(yMajor, e.select(yPos, z, neg(z)), neg(y)));
  Value m = e.select(xMajor, ax, e.select(yMajor, ay, az));
  auto toFace = [&](Value v) { return e.fmul(e.fadd(e.fdiv(v, m), e.cf(1.0)), e.cf(0.5)); };
  return {face, toFace(s), toFace(t)};
}

//===----------------------------------------------------------------------===//
// The target's own instructions (native-textures)
//===----------------------------------------------------------------------===//

/// PTX's name of a geometry.
std::string ptxGeometry(TexGeometry g) {
  switch (g) {
  case TexGeometry::D1:
    return "1d";
  case TexGeometry::D2:
    return "2d";
  case TexGeometry::D3:
    return "3d";
  default:
    return stringifyTexGeometry(g).str();
  }
}

/// The PTX coordinate vector of `g` over the asm operands from `first`
/// (the layer first where there is one): `{$5, $6}`; the geometries of
/// three elements (.3d, .a2d, .cube) get a fourth, repeating the last.
std::string ptxCoordinates(TexGeometry g, unsigned first, unsigned count) {
  std::string text = "{";
  for (unsigned i = 0; i < count; ++i)
    text += (i ? ", $" : "$") + std::to_string(first + i);
  if (count == 3)
    text += ", $" + std::to_string(first + 2);
  return text + "}";
}

/// `{$0, $1, $2, $3}` for `count` results, `$0` for one.
std::string ptxResults(unsigned count) {
  if (count == 1)
    return "$0";
  std::string text = "{";
  for (unsigned i = 0; i < count; ++i)
    text += (i ? ", $" : "$") + std::to_string(i);
  return text + "}";
}

/// The asm register type of a surface element of `bits` bits: PTX's .b8
/// and .b16 take 16-bit registers.
mlir::Type surfaceRegister(OpBuilder &b, unsigned bits) {
  return b.getIntegerType(std::max(bits, 16u));
}

/// The op's instruction as the target's own (`results` the asm's result
/// types), or failure with "unsupported ..." said.
template <typename OpTy>
FailureOr<SmallVector<Value>> emitNative(RewriterBase &b, OpTy op, const PTXLoweringState &state,
                                         const std::string &ptx, TypeRange results,
                                         ValueRange operands, bool sideEffects) {
  std::optional<SmallVector<Value>> r = state.target.nativeTexture(b, op.getLoc(), ptx, results,
                                                                   operands, sideEffects);
  if (!r) {
    op->emitError("unsupported ") << "native textures on this target";
    return failure();
  }
  return *r;
}

/// tex and tld4: `tex.2d.v4.f32.f32 {$0, $1, $2, $3}, [$4, {$5, $6}];`.
template <typename OpTy>
LogicalResult lowerNativeLookup(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter, const PTXLoweringState &state,
                                StringRef name) {
  if (adaptor.getSampler()) {
    op->emitError("unsupported ") << "an independent-mode sampler with native textures";
    return failure();
  }
  if (op->hasAttr("mipmap_level")) {
    // (The importer's tex.level/tex.grad expansion, ptx.tex_mipmap's region,
    // which native textures drop.)
    op->emitError("unsupported ") << "a lookup of zmlir's mipmap level descriptors with native "
                                     "textures";
    return failure();
  }
  mlir::Type result = op.getRes().front().getType();
  SmallVector<Value> coords(adaptor.getCoords());
  std::string dtype = result.isF32() ? "f32" : op->hasAttr("signed") ? "s32" : "u32";
  std::string ctype = coords.front().getType().isF32() ? "f32" : "s32";
  SmallVector<Value> operands{adaptor.getHandle()};
  if (Value layer = adaptor.getLayer())
    operands.push_back(layer);
  operands.append(coords.begin(), coords.end());
  unsigned count = op.getRes().size();
  std::string ptx = (name + "." + ptxGeometry(op.getGeometry()) + ".v4." + dtype + "." + ctype +
                     " " + ptxResults(count) + ", [$" + Twine(count) + ", " +
                     ptxCoordinates(op.getGeometry(), count + 1, operands.size() - 1) + "];")
                        .str();
  auto r = emitNative(rewriter, op, state, ptx, op.getRes().getTypes(), operands, false);
  if (failed(r))
    return failure();
  rewriter.replaceOp(op, *r);
  return success();
}

/// txq and suq: the extent only (NVIDIA's driver finds no kernel asking
/// txq for the rest: docs/textures.md).
template <typename OpTy>
LogicalResult lowerNativeQuery(OpTy op, typename OpTy::Adaptor adaptor,
                               ConversionPatternRewriter &rewriter, const PTXLoweringState &state,
                               StringRef name) {
  TexQuery q = op.getQuery();
  if (q != TexQuery::Width && q != TexQuery::Height && q != TexQuery::Depth) {
    op->emitError("unsupported ") << "'" << name << "." << stringifyTexQuery(q)
                                  << "' with native textures";
    return failure();
  }
  std::string ptx = (name + "." + stringifyTexQuery(q) + ".b32 $0, [$1];").str();
  auto r = emitNative(rewriter, op, state, ptx, rewriter.getI32Type(),
                      ValueRange{adaptor.getHandle()}, false);
  if (failed(r))
    return failure();
  rewriter.replaceOp(op, *r);
  return success();
}

/// `suld.b.2d.v2.b32.trap` / `sust.b...`: the instruction's name and
/// modifiers.
template <typename OpTy>
std::string surfaceInstruction(OpTy op, StringRef name, unsigned count) {
  std::string vec = count == 1 ? "" : ".v" + std::to_string(count);
  return (name + ".b." + ptxGeometry(op.getGeometry()) + vec + "." +
          stringifyDataType(op.getType()) + "." + stringifySurfaceClamp(op.getClamp()))
      .str();
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct TexturePattern : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  Emitter emitter(RewriterBase &b, Operation *op) const {
    return Emitter{b, op->getLoc(), this->state.addressSpaces.global};
  }

  /// The four i32 results as the op's result types.
  SmallVector<Value> results(Emitter &e, ArrayRef<Value> lanes, TypeRange types) const {
    SmallVector<Value> r;
    for (auto [v, t] : llvm::zip(lanes, types))
      r.push_back(t.isF32() ? e.floatOf(v) : v);
    return r;
  }
};

struct TexOpLowering : TexturePattern<TexOp> {
  using TexturePattern::TexturePattern;

  LogicalResult matchAndRewrite(TexOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (state.nativeTextures)
      return lowerNativeLookup(op, adaptor, rewriter, state, "tex");
    Emitter e = emitter(rewriter, op);
    SmallVector<Value> coords(adaptor.getCoords());
    bool integer = coords.front().getType().isInteger();
    if (integer)
      for (Value &c : coords)
        c = e.sitofp(c);
    Value layer = adaptor.getLayer();
    int64_t flags = integer ? kIntegerCoords : 0;
    unsigned dims = texCoordinateCount(op.getGeometry());
    TexGeometry g = op.getGeometry();
    if (g == TexGeometry::Cube || g == TexGeometry::ACube) {
      auto [face, s, t] = cubeFace(e, coords[0], coords[1], coords[2]);
      coords = {s, t};
      if (layer) {
        // The cube's layer clamps as an unsigned integer, as an array's
        // does (buildSampler), before it picks the face.
        Value cubes = e.field32(e.pointerOf(adaptor.getHandle()), desc::kWidth + 12);
        Value last = e.subi(
            e.maxsi(arith::DivUIOp::create(rewriter, op.getLoc(), cubes, e.c32(6)), e.c32(1)),
            e.c32(1));
        layer = e.minui(layer, last);
      }
      layer = layer ? e.addi(e.muli(layer, e.c32(6)), face) : face;
      flags |= kForceNormalized;
      dims = 2;
    } else if (g == TexGeometry::D1) {
      // NVIDIA's units sample a 1D texture as a 2D one of height 1 at
      // y = 0, under the y address mode: filtered in border mode, the row
      // above (border texels) weighs half (an H200, 2026-12-04). A layered
      // 1D array filters in x alone.
      coords.push_back(e.cf(0.0));
      dims = 2;
    }
    SmallVector<Value> lanes = callSampler(rewriter, op, state.addressSpaces.global, dims, false,
                                           adaptor.getHandle(), adaptor.getSampler(), coords, layer,
                                           e.c32(flags));
    rewriter.replaceOp(op, results(e, lanes, op.getRes().getTypes()));
    return success();
  }
};

/// tex.level and tex.grad: with native textures the instruction
/// (`tex.grad.2d.v4.f32.f32 {$0, ...}, [$4, {$5, $6}], {$7, $8}, {$9, $10};`,
/// the gradients padded as the coordinates), else the importer's expansion
/// on our descriptors, inlined.
struct TexMipmapOpLowering : TexturePattern<TexMipmapOp> {
  using TexturePattern::TexturePattern;

  LogicalResult matchAndRewrite(TexMipmapOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!state.nativeTextures) {
      Block *body = &op.getExpansion().front();
      auto yield = cast<TexYieldOp>(body->getTerminator());
      SmallVector<Value> values(yield.getValues());
      rewriter.eraseOp(yield);
      rewriter.inlineBlockBefore(body, op);
      rewriter.replaceOp(op, values);
      return success();
    }
    unsigned count = op.getRes().size();
    mlir::Type result = op.getRes().front().getType();
    std::string dtype = result.isF32() ? "f32" : op->hasAttr("signed") ? "s32" : "u32";
    SmallVector<Value> operands{adaptor.getHandle()};
    if (Value layer = adaptor.getLayer())
      operands.push_back(layer);
    operands.append(adaptor.getCoords().begin(), adaptor.getCoords().end());
    bool grad = !adaptor.getDPdx().empty();
    std::string ptx = ("tex." + Twine(grad ? "grad." : "level.") + ptxGeometry(op.getGeometry()) +
                       ".v4." + dtype + ".f32 " + ptxResults(count) + ", [$" + Twine(count) + ", " +
                       ptxCoordinates(op.getGeometry(), count + 1, operands.size() - 1) + "]")
                          .str();
    if (grad) {
      for (ValueRange g : {adaptor.getDPdx(), adaptor.getDPdy()}) {
        ptx += ", " + ptxCoordinates(op.getGeometry(), count + operands.size(), g.size());
        operands.append(g.begin(), g.end());
      }
    } else {
      ptx += ", $" + std::to_string(count + operands.size());
      operands.push_back(adaptor.getLod());
    }
    ptx += ";";
    auto r = emitNative(rewriter, op, state, ptx, op.getRes().getTypes(), operands, false);
    if (failed(r))
      return failure();
    rewriter.replaceOp(op, *r);
    return success();
  }
};

struct Tld4OpLowering : TexturePattern<Tld4Op> {
  using TexturePattern::TexturePattern;

  LogicalResult matchAndRewrite(Tld4Op op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (state.nativeTextures)
      return lowerNativeLookup(op, adaptor, rewriter, state,
                               ("tld4." + stringifyTexComponent(op.getComponent())).str());
    Emitter e = emitter(rewriter, op);
    SmallVector<Value> coords(adaptor.getCoords());
    SmallVector<Value> lanes = callSampler(rewriter, op, state.addressSpaces.global, 2, true,
                                           adaptor.getHandle(), adaptor.getSampler(), coords,
                                           adaptor.getLayer(),
                                           e.c32(static_cast<int64_t>(op.getComponent())));
    rewriter.replaceOp(op, results(e, lanes, op.getRes().getTypes()));
    return success();
  }
};

/// txq and suq: a field of the descriptor.
template <typename OpTy>
struct QueryOpLowering : TexturePattern<OpTy> {
  using TexturePattern<OpTy>::TexturePattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (this->state.nativeTextures)
      return lowerNativeQuery(op, adaptor, rewriter, this->state,
                              std::is_same_v<OpTy, TxqOp> ? "txq" : "suq");
    Emitter e = this->emitter(rewriter, op);
    Value d = e.pointerOf(adaptor.getHandle());
    auto bit = [&](int64_t mask) {
      return e.extui(e.i32(),
                     e.cmpi(IP::ne, e.andi(e.field32(d, desc::kFlags), e.c32(mask)), e.c32(0)));
    };
    Value r;
    switch (op.getQuery()) {
    case TexQuery::Width:
      r = e.field32(d, desc::kWidth);
      break;
    case TexQuery::Height:
      r = e.field32(d, std::is_same_v<OpTy, TxqOp> ? desc::kQueriedHeight : desc::kWidth + 4);
      break;
    case TexQuery::Depth:
      r = e.field32(d, std::is_same_v<OpTy, TxqOp> ? desc::kQueriedHeight + 4 : desc::kWidth + 8);
      break;
    case TexQuery::ArraySize:
      r = e.field32(d, desc::kWidth + 12);
      break;
    case TexQuery::ChannelDataType:
      r = e.field32(d, desc::kFormat);
      break;
    case TexQuery::ChannelOrder:
      r = e.field32(d, desc::kChannels);
      break;
    case TexQuery::NormalizedCoords:
      r = bit(kNormalizedCoords);
      break;
    case TexQuery::FilterMode:
      r = bit(kLinear);
      break;
    case TexQuery::AddrMode0:
    case TexQuery::AddrMode1:
    case TexQuery::AddrMode2:
      r = e.field32(d, desc::kAddrModes + 4 * (static_cast<int64_t>(op.getQuery()) -
                                               static_cast<int64_t>(TexQuery::AddrMode0)));
      break;
    case TexQuery::NumMipmapLevels:
      // 1 for a texture that is not mipmapped (0 levels there).
      r = e.maxui(e.field32(d, desc::kLevels), e.c32(1));
      break;
    case TexQuery::NumSamples:
    case TexQuery::MemoryLayout:
      r = e.c32(0);
      break;
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// suld and sust: the element's address, and whether it is in range.
template <typename OpTy>
struct SurfacePattern : TexturePattern<OpTy> {
  using TexturePattern<OpTy>::TexturePattern;

  /// The address of `bytes` bytes at the op's coordinates (clamped into
  /// the surface, so that it can always be accessed) and whether the
  /// coordinates were in range.
  std::pair<Value, Value> element(Emitter &e, OpTy op, Value handle, ValueRange coords, Value layer,
                                  int64_t bytes) const {
    Value d = e.pointerOf(handle);
    Value texelBytes = e.field32(d, desc::kTexelBytes);
    Value extent[3] = {
        e.subi(e.muli(e.field32(d, desc::kWidth), texelBytes), e.c32(bytes)),
        e.subi(e.field32(d, desc::kWidth + 4), e.c32(1)),
        e.subi(e.maxsi(e.field32(d, desc::kWidth + 8), e.field32(d, desc::kWidth + 12)), e.c32(1))};
    Value at[3] = {e.c32(0), e.c32(0), layer ? layer : e.c32(0)};
    Value inRange = e.constant(e.b.getI1Type(), 1);
    SmallVector<Value> all(coords);
    if (layer)
      all.push_back(layer);
    for (auto [a, c] : llvm::enumerate(all)) {
      unsigned axis = layer && a == all.size() - 1 ? 2 : a;
      Value clamped = e.minsi(e.maxsi(c, e.c32(0)), extent[axis]);
      inRange = e.andi(inRange, e.cmpi(IP::eq, c, clamped));
      at[axis] = clamped;
    }
    Value offset = e.addi(e.muli(e.extui(e.i64(), at[2]), e.field64(d, desc::kSlice)),
                          e.addi(e.muli(e.extui(e.i64(), at[1]), e.field64(d, desc::kPitch)),
                                 e.extui(e.i64(), at[0])));
    return {e.at(e.pointerOf(e.field64(d, desc::kData)), offset), inRange};
  }

  /// `.trap` out of range: the launch fails.
  void trapOutside(Emitter &e, OpTy op, Value inRange) const {
    if (op.getClamp() != SurfaceClamp::Trap)
      return;
    Value outside = e.inverted(inRange);
    e.ifThen(outside, [&] { this->state.target.emitTrap(e.b, e.loc, this->state); });
  }
};

struct SuldOpLowering : SurfacePattern<SuldOp> {
  using SurfacePattern::SurfacePattern;

  LogicalResult matchAndRewrite(SuldOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Emitter e = emitter(rewriter, op);
    unsigned bits = getTypeBitWidth(op.getType());
    int64_t count = op.getRes().size();
    if (state.nativeTextures) {
      SmallVector<Value> operands{adaptor.getHandle()};
      if (Value layer = adaptor.getLayer())
        operands.push_back(layer);
      operands.append(adaptor.getCoords().begin(), adaptor.getCoords().end());
      std::string ptx = surfaceInstruction(op, "suld", count) + " " + ptxResults(count) + ", [$" +
                        std::to_string(count) + ", " +
                        ptxCoordinates(op.getGeometry(), count + 1, operands.size() - 1) + "];";
      SmallVector<mlir::Type> types(count, surfaceRegister(rewriter, bits));
      auto r = emitNative(rewriter, op, state, ptx, types, operands, true);
      if (failed(r))
        return failure();
      SmallVector<Value> results;
      for (auto [x, result] : llvm::zip(*r, op.getRes()))
        results.push_back(adjustBits(rewriter, op.getLoc(), x, result.getType(), false));
      rewriter.replaceOp(op, results);
      return success();
    }
    auto [p, inRange] = element(e, op, adaptor.getHandle(), adaptor.getCoords(), adaptor.getLayer(),
                                count * bits / 8);
    trapOutside(e, op, inRange);
    mlir::Type elem = rewriter.getIntegerType(bits);
    Value v = e.load(VectorType::get({count}, elem), p, bits / 8);
    SmallVector<Value> results;
    for (auto [k, result] : llvm::enumerate(op.getRes())) {
      Value x = e.lane(v, k);
      if (op.getClamp() == SurfaceClamp::Zero)
        x = e.select(inRange, x, e.constant(elem, 0));
      results.push_back(adjustBits(rewriter, op.getLoc(), x, result.getType(), false));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct SustOpLowering : SurfacePattern<SustOp> {
  using SurfacePattern::SurfacePattern;

  LogicalResult matchAndRewrite(SustOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Emitter e = emitter(rewriter, op);
    unsigned bits = getTypeBitWidth(op.getType());
    int64_t count = adaptor.getValues().size();
    mlir::Type elem = rewriter.getIntegerType(bits);
    if (state.nativeTextures) {
      SmallVector<Value> operands{adaptor.getHandle()};
      if (Value layer = adaptor.getLayer())
        operands.push_back(layer);
      operands.append(adaptor.getCoords().begin(), adaptor.getCoords().end());
      unsigned first = operands.size();
      std::string ptx = surfaceInstruction(op, "sust", count) + " [$0, " +
                        ptxCoordinates(op.getGeometry(), 1, first - 1) + "], {";
      for (auto [k, x] : llvm::enumerate(adaptor.getValues())) {
        operands.push_back(
            adjustBits(rewriter, op.getLoc(), x, surfaceRegister(rewriter, bits), false));
        ptx += (k ? ", $" : "$") + std::to_string(first + k);
      }
      ptx += "};";
      if (failed(emitNative(rewriter, op, state, ptx, TypeRange{}, operands, true)))
        return failure();
      rewriter.eraseOp(op);
      return success();
    }
    // The values, before any block is split.
    Value v = LLVM::PoisonOp::create(rewriter, op.getLoc(), VectorType::get({count}, elem));
    for (auto [k, x] : llvm::enumerate(adaptor.getValues()))
      v = e.withLane(v, adjustBits(rewriter, op.getLoc(), x, elem, false), k);
    auto [p, inRange] = element(e, op, adaptor.getHandle(), adaptor.getCoords(), adaptor.getLayer(),
                                count * bits / 8);
    trapOutside(e, op, inRange);
    auto store = [&] { LLVM::StoreOp::create(rewriter, op.getLoc(), v, p, bits / 8); };
    if (op.getClamp() == SurfaceClamp::Zero)
      e.ifThen(inRange, store);
    else
      store();
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void zmlir::populatePTXTexturePatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<TexOpLowering, TexMipmapOpLowering, Tld4OpLowering, QueryOpLowering<TxqOp>,
               QueryOpLowering<SuqOp>, SuldOpLowering, SustOpLowering>(patterns.getContext(),
                                                                       state);
}
