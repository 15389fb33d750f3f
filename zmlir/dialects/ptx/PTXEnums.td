//===- PTXEnums.td - PTX instruction modifiers -------------*- tablegen -*-===//

#ifndef ZMLIR_DIALECT_PTX_ENUMS
#define ZMLIR_DIALECT_PTX_ENUMS

include "mlir/IR/EnumAttr.td"
include "zmlir/dialects/ptx/PTXDialect.td"

class PTX_Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::zmlir::ptx";
  let genSpecializedAttr = 0;
}

class PTX_EnumAttr<EnumAttrInfo enumInfo, string mnemonic>
    : EnumAttr<PTX_Dialect, enumInfo, mnemonic> {
  let assemblyFormat = "`<` $value `>`";
}

// Instruction data type (.s32, .f32, ...), PTX ISA 5.2.
def PTX_TypeEnum : PTX_Enum<"DataType", "PTX instruction data type", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"B8", 1, "b8">, I32EnumAttrCase<"B16", 2, "b16">,
  I32EnumAttrCase<"B32", 3, "b32">, I32EnumAttrCase<"B64", 4, "b64">,
  I32EnumAttrCase<"U8", 5, "u8">, I32EnumAttrCase<"U16", 6, "u16">,
  I32EnumAttrCase<"U32", 7, "u32">, I32EnumAttrCase<"U64", 8, "u64">,
  I32EnumAttrCase<"S8", 9, "s8">, I32EnumAttrCase<"S16", 10, "s16">,
  I32EnumAttrCase<"S32", 11, "s32">, I32EnumAttrCase<"S64", 12, "s64">,
  I32EnumAttrCase<"F16", 13, "f16">, I32EnumAttrCase<"F16x2", 14, "f16x2">,
  I32EnumAttrCase<"BF16", 15, "bf16">, I32EnumAttrCase<"BF16x2", 16, "bf16x2">,
  I32EnumAttrCase<"F32", 17, "f32">, I32EnumAttrCase<"F64", 18, "f64">,
  I32EnumAttrCase<"Pred", 19, "pred">, I32EnumAttrCase<"B128", 20, "b128">,
  // fp8 pairs in a .b16 (cvt only, PTX ISA 5.2.5.3): E4M3 (bias 7, no
  // infinity, NaN 0x7f) and E5M2 (bias 15, IEEE-like).
  I32EnumAttrCase<"E4M3x2", 21, "e4m3x2">, I32EnumAttrCase<"E5M2x2", 22, "e5m2x2">]>;
def PTX_TypeAttr : PTX_EnumAttr<PTX_TypeEnum, "type">;

// State spaces, PTX ISA 5.1. `None` is the generic address space.
def PTX_StateSpaceEnum : PTX_Enum<"StateSpace", "PTX state space", [
  I32EnumAttrCase<"None", 0, "generic">,
  I32EnumAttrCase<"Global", 1, "global">,
  I32EnumAttrCase<"Shared", 2, "shared">,
  I32EnumAttrCase<"SharedCluster", 3, "shared_cluster">,
  I32EnumAttrCase<"Local", 4, "local">,
  I32EnumAttrCase<"Const", 5, "const">,
  I32EnumAttrCase<"Param", 6, "param">]>;
def PTX_StateSpaceAttr : PTX_EnumAttr<PTX_StateSpaceEnum, "space">;

// Rounding modifiers: floating-point (.rn ...) and round-to-integer (.rni ...).
def PTX_RoundingEnum : PTX_Enum<"Rounding", "PTX rounding modifier", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"RN", 1, "rn">, I32EnumAttrCase<"RZ", 2, "rz">,
  I32EnumAttrCase<"RM", 3, "rm">, I32EnumAttrCase<"RP", 4, "rp">,
  I32EnumAttrCase<"RNA", 5, "rna">, I32EnumAttrCase<"RS", 6, "rs">,
  I32EnumAttrCase<"RNI", 7, "rni">, I32EnumAttrCase<"RZI", 8, "rzi">,
  I32EnumAttrCase<"RMI", 9, "rmi">, I32EnumAttrCase<"RPI", 10, "rpi">]>;
def PTX_RoundingAttr : PTX_EnumAttr<PTX_RoundingEnum, "rnd">;

// Which half of a product mul/mad keep.
def PTX_MulModeEnum : PTX_Enum<"MulMode", "PTX integer multiply mode", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Lo", 1, "lo">, I32EnumAttrCase<"Hi", 2, "hi">,
  I32EnumAttrCase<"Wide", 3, "wide">]>;
def PTX_MulModeAttr : PTX_EnumAttr<PTX_MulModeEnum, "mode">;

// Precision of float division and transcendentals.
def PTX_PrecisionEnum : PTX_Enum<"Precision", "PTX float precision", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Approx", 1, "approx">, I32EnumAttrCase<"Full", 2, "full">]>;
def PTX_PrecisionAttr : PTX_EnumAttr<PTX_PrecisionEnum, "precision">;

// setp/set comparison operators, PTX ISA 9.7.4.
def PTX_CmpEnum : PTX_Enum<"Cmp", "PTX comparison", [
  I32EnumAttrCase<"EQ", 0, "eq">, I32EnumAttrCase<"NE", 1, "ne">,
  I32EnumAttrCase<"LT", 2, "lt">, I32EnumAttrCase<"LE", 3, "le">,
  I32EnumAttrCase<"GT", 4, "gt">, I32EnumAttrCase<"GE", 5, "ge">,
  I32EnumAttrCase<"LO", 6, "lo">, I32EnumAttrCase<"LS", 7, "ls">,
  I32EnumAttrCase<"HI", 8, "hi">, I32EnumAttrCase<"HS", 9, "hs">,
  I32EnumAttrCase<"EQU", 10, "equ">, I32EnumAttrCase<"NEU", 11, "neu">,
  I32EnumAttrCase<"LTU", 12, "ltu">, I32EnumAttrCase<"LEU", 13, "leu">,
  I32EnumAttrCase<"GTU", 14, "gtu">, I32EnumAttrCase<"GEU", 15, "geu">,
  I32EnumAttrCase<"Num", 16, "num">, I32EnumAttrCase<"IsNaN", 17, "nan">]>;
def PTX_CmpAttr : PTX_EnumAttr<PTX_CmpEnum, "cmp">;

// The .and/.or/.xor that setp combines its result with.
def PTX_BoolOpEnum : PTX_Enum<"BoolOp", "PTX predicate combining op", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"And", 1, "and">, I32EnumAttrCase<"Or", 2, "or">,
  I32EnumAttrCase<"Xor", 3, "xor">]>;
def PTX_BoolOpAttr : PTX_EnumAttr<PTX_BoolOpEnum, "boolop">;

// atom/red operations, PTX ISA 9.7.13.5.
def PTX_AtomOpEnum : PTX_Enum<"AtomicOp", "PTX atomic operation", [
  I32EnumAttrCase<"And", 0, "and">, I32EnumAttrCase<"Or", 1, "or">,
  I32EnumAttrCase<"Xor", 2, "xor">, I32EnumAttrCase<"Cas", 3, "cas">,
  I32EnumAttrCase<"Exch", 4, "exch">, I32EnumAttrCase<"Add", 5, "add">,
  I32EnumAttrCase<"Inc", 6, "inc">, I32EnumAttrCase<"Dec", 7, "dec">,
  I32EnumAttrCase<"Min", 8, "min">, I32EnumAttrCase<"Max", 9, "max">]>;
def PTX_AtomOpAttr : PTX_EnumAttr<PTX_AtomOpEnum, "atomop">;

// Memory consistency: .relaxed/.acquire/... (PTX ISA 8.4) and .volatile.
def PTX_SemanticsEnum : PTX_Enum<"Semantics", "PTX memory semantics", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Weak", 1, "weak">, I32EnumAttrCase<"Volatile", 2, "volatile">,
  I32EnumAttrCase<"Relaxed", 3, "relaxed">, I32EnumAttrCase<"Acquire", 4, "acquire">,
  I32EnumAttrCase<"Release", 5, "release">, I32EnumAttrCase<"AcqRel", 6, "acq_rel">,
  I32EnumAttrCase<"MMIO", 7, "mmio">, I32EnumAttrCase<"SC", 8, "sc">]>;
def PTX_SemanticsAttr : PTX_EnumAttr<PTX_SemanticsEnum, "sem">;

def PTX_ScopeEnum : PTX_Enum<"Scope", "PTX memory scope", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"CTA", 1, "cta">, I32EnumAttrCase<"Cluster", 2, "cluster">,
  I32EnumAttrCase<"GPU", 3, "gpu">, I32EnumAttrCase<"Sys", 4, "sys">]>;
def PTX_ScopeAttr : PTX_EnumAttr<PTX_ScopeEnum, "scope">;

// ld/st cache operators, PTX ISA 9.7.9.1.
def PTX_CacheOpEnum : PTX_Enum<"CacheOp", "PTX cache operator", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"CA", 1, "ca">, I32EnumAttrCase<"CG", 2, "cg">,
  I32EnumAttrCase<"CS", 3, "cs">, I32EnumAttrCase<"LU", 4, "lu">,
  I32EnumAttrCase<"CV", 5, "cv">, I32EnumAttrCase<"WB", 6, "wb">,
  I32EnumAttrCase<"WT", 7, "wt">]>;
def PTX_CacheOpAttr : PTX_EnumAttr<PTX_CacheOpEnum, "cache">;

// Cache level (and L2 eviction priority) of prefetch, PTX ISA 9.7.9.15
// (`.L2::evict_last` is spelled `L2_evict_last`).
def PTX_CacheLevelEnum : PTX_Enum<"CacheLevel", "PTX prefetch cache level", [
  I32EnumAttrCase<"L1", 0, "L1">, I32EnumAttrCase<"L2", 1, "L2">,
  I32EnumAttrCase<"L2EvictLast", 2, "L2_evict_last">,
  I32EnumAttrCase<"L2EvictNormal", 3, "L2_evict_normal">]>;
def PTX_CacheLevelAttr : PTX_EnumAttr<PTX_CacheLevelEnum, "level">;

def PTX_ShflModeEnum : PTX_Enum<"ShflMode", "PTX shfl mode", [
  I32EnumAttrCase<"Up", 0, "up">, I32EnumAttrCase<"Down", 1, "down">,
  I32EnumAttrCase<"Bfly", 2, "bfly">, I32EnumAttrCase<"Idx", 3, "idx">]>;
def PTX_ShflModeAttr : PTX_EnumAttr<PTX_ShflModeEnum, "shfl">;

// Special registers read with mov, PTX ISA 10.
def PTX_SpecialRegEnum : PTX_Enum<"SpecialReg", "PTX special register", [
  I32EnumAttrCase<"TidX", 0, "tid.x">, I32EnumAttrCase<"TidY", 1, "tid.y">,
  I32EnumAttrCase<"TidZ", 2, "tid.z">,
  I32EnumAttrCase<"NtidX", 3, "ntid.x">, I32EnumAttrCase<"NtidY", 4, "ntid.y">,
  I32EnumAttrCase<"NtidZ", 5, "ntid.z">,
  I32EnumAttrCase<"CtaidX", 6, "ctaid.x">, I32EnumAttrCase<"CtaidY", 7, "ctaid.y">,
  I32EnumAttrCase<"CtaidZ", 8, "ctaid.z">,
  I32EnumAttrCase<"NctaidX", 9, "nctaid.x">, I32EnumAttrCase<"NctaidY", 10, "nctaid.y">,
  I32EnumAttrCase<"NctaidZ", 11, "nctaid.z">,
  I32EnumAttrCase<"Laneid", 12, "laneid">, I32EnumAttrCase<"Warpid", 13, "warpid">,
  I32EnumAttrCase<"Nwarpid", 14, "nwarpid">, I32EnumAttrCase<"WarpSize", 15, "WARP_SZ">,
  I32EnumAttrCase<"Clock", 16, "clock">, I32EnumAttrCase<"Clock64", 17, "clock64">,
  I32EnumAttrCase<"LanemaskEq", 18, "lanemask_eq">,
  I32EnumAttrCase<"LanemaskLt", 19, "lanemask_lt">,
  I32EnumAttrCase<"LanemaskLe", 20, "lanemask_le">,
  I32EnumAttrCase<"LanemaskGt", 21, "lanemask_gt">,
  I32EnumAttrCase<"LanemaskGe", 22, "lanemask_ge">,
  I32EnumAttrCase<"Smid", 23, "smid">, I32EnumAttrCase<"Nsmid", 24, "nsmid">,
  I32EnumAttrCase<"Gridid", 25, "gridid">,
  I32EnumAttrCase<"Globaltimer", 26, "globaltimer">,
  I32EnumAttrCase<"DynamicSmemSize", 27, "dynamic_smem_size">,
  I32EnumAttrCase<"TotalSmemSize", 28, "total_smem_size">,
  I32EnumAttrCase<"GlobaltimerLo", 29, "globaltimer_lo">,
  I32EnumAttrCase<"GlobaltimerHi", 30, "globaltimer_hi">,
  // The CTA's reserved shared memory (PTX ISA 10, %reserved_smem_*), which cooperative
  // groups keeps its multi-warp barriers in at sm_80 and later.
  I32EnumAttrCase<"ReservedSmemOffsetBegin", 31, "reserved_smem_offset_begin">,
  I32EnumAttrCase<"ReservedSmemOffsetEnd", 32, "reserved_smem_offset_end">,
  I32EnumAttrCase<"ReservedSmemOffsetCap", 33, "reserved_smem_offset_cap">,
  I32EnumAttrCase<"ReservedSmemOffset0", 34, "reserved_smem_offset_0">,
  I32EnumAttrCase<"ReservedSmemOffset1", 35, "reserved_smem_offset_1">,
  // Thread-block clusters (PTX ISA 10): where a launch has none, each CTA is
  // a cluster of one.
  I32EnumAttrCase<"ClusteridX", 36, "clusterid.x">,
  I32EnumAttrCase<"ClusteridY", 37, "clusterid.y">,
  I32EnumAttrCase<"ClusteridZ", 38, "clusterid.z">,
  I32EnumAttrCase<"NclusteridX", 39, "nclusterid.x">,
  I32EnumAttrCase<"NclusteridY", 40, "nclusterid.y">,
  I32EnumAttrCase<"NclusteridZ", 41, "nclusterid.z">,
  I32EnumAttrCase<"ClusterCtaidX", 42, "cluster_ctaid.x">,
  I32EnumAttrCase<"ClusterCtaidY", 43, "cluster_ctaid.y">,
  I32EnumAttrCase<"ClusterCtaidZ", 44, "cluster_ctaid.z">,
  I32EnumAttrCase<"ClusterNctaidX", 45, "cluster_nctaid.x">,
  I32EnumAttrCase<"ClusterNctaidY", 46, "cluster_nctaid.y">,
  I32EnumAttrCase<"ClusterNctaidZ", 47, "cluster_nctaid.z">,
  I32EnumAttrCase<"ClusterCtarank", 48, "cluster_ctarank">,
  I32EnumAttrCase<"ClusterNctarank", 49, "cluster_nctarank">,
  I32EnumAttrCase<"IsExplicitCluster", 50, "is_explicit_cluster">,
  I32EnumAttrCase<"AggrSmemSize", 51, "aggr_smem_size">,
  // The upper 32 bits of %clock64.
  I32EnumAttrCase<"ClockHi", 52, "clock_hi">]>;
def PTX_SpecialRegAttr : PTX_EnumAttr<PTX_SpecialRegEnum, "sreg">;

// prmt permute modes, PTX ISA 9.7.9.7. `None` is the generic form.
def PTX_PrmtModeEnum : PTX_Enum<"PrmtMode", "PTX prmt mode", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"F4E", 1, "f4e">, I32EnumAttrCase<"B4E", 2, "b4e">,
  I32EnumAttrCase<"RC8", 3, "rc8">, I32EnumAttrCase<"ECL", 4, "ecl">,
  I32EnumAttrCase<"ECR", 5, "ecr">, I32EnumAttrCase<"RC16", 6, "rc16">]>;
def PTX_PrmtModeAttr : PTX_EnumAttr<PTX_PrmtModeEnum, "prmt">;

// Out-of-range handling of shf/szext/bmsk amounts.
def PTX_ClampModeEnum : PTX_Enum<"ClampMode", "PTX clamp or wrap", [
  I32EnumAttrCase<"Clamp", 0, "clamp">, I32EnumAttrCase<"Wrap", 1, "wrap">]>;
def PTX_ClampModeAttr : PTX_EnumAttr<PTX_ClampModeEnum, "clampmode">;

// Funnel shift direction.
def PTX_ShfDirEnum : PTX_Enum<"ShfDir", "PTX shf direction", [
  I32EnumAttrCase<"L", 0, "l">, I32EnumAttrCase<"R", 1, "r">]>;
def PTX_ShfDirAttr : PTX_EnumAttr<PTX_ShfDirEnum, "dir">;

// testp classes, PTX ISA 9.7.3.3.
def PTX_TestpClassEnum : PTX_Enum<"TestpClass", "PTX testp class", [
  I32EnumAttrCase<"Finite", 0, "finite">, I32EnumAttrCase<"Infinite", 1, "infinite">,
  I32EnumAttrCase<"Number", 2, "number">, I32EnumAttrCase<"NotANumber", 3, "notanumber">,
  I32EnumAttrCase<"Normal", 4, "normal">, I32EnumAttrCase<"Subnormal", 5, "subnormal">]>;
def PTX_TestpClassAttr : PTX_EnumAttr<PTX_TestpClassEnum, "testp">;

// vote.sync modes, PTX ISA 9.7.13.9.
def PTX_VoteModeEnum : PTX_Enum<"VoteMode", "PTX vote mode", [
  I32EnumAttrCase<"All", 0, "all">, I32EnumAttrCase<"Any", 1, "any">,
  I32EnumAttrCase<"Uni", 2, "uni">, I32EnumAttrCase<"Ballot", 3, "ballot">]>;
def PTX_VoteModeAttr : PTX_EnumAttr<PTX_VoteModeEnum, "vote">;

// match.sync modes, PTX ISA 9.7.13.10.
def PTX_MatchModeEnum : PTX_Enum<"MatchMode", "PTX match mode", [
  I32EnumAttrCase<"Any", 0, "any">, I32EnumAttrCase<"All", 1, "all">]>;
def PTX_MatchModeAttr : PTX_EnumAttr<PTX_MatchModeEnum, "match">;

// bar.red reduction (PTX ISA 9.7.13.1).
def PTX_BarRedModeEnum : PTX_Enum<"BarRedMode", "bar.red reduction", [
  I32EnumAttrCase<"Popc", 0, "popc">, I32EnumAttrCase<"And", 1, "and">,
  I32EnumAttrCase<"Or", 2, "or">]>;
def PTX_BarRedModeAttr : PTX_EnumAttr<PTX_BarRedModeEnum, "barred">;

// Texture and surface geometries (.1d, .2d, .3d, .a1d, .a2d, .cube, .acube),
// PTX ISA 9.7.10.3; keywords cannot start with a digit, so `.2d` is `d2`.
def PTX_TexGeometryEnum : PTX_Enum<"TexGeometry", "PTX texture geometry", [
  I32EnumAttrCase<"D1", 0, "d1">, I32EnumAttrCase<"D2", 1, "d2">,
  I32EnumAttrCase<"D3", 2, "d3">, I32EnumAttrCase<"A1D", 3, "a1d">,
  I32EnumAttrCase<"A2D", 4, "a2d">, I32EnumAttrCase<"Cube", 5, "cube">,
  I32EnumAttrCase<"ACube", 6, "acube">]>;
def PTX_TexGeometryAttr : PTX_EnumAttr<PTX_TexGeometryEnum, "geom">;

// tld4's component (.r, .g, .b, .a), PTX ISA 9.7.10.4.
def PTX_TexComponentEnum : PTX_Enum<"TexComponent", "PTX tld4 component", [
  I32EnumAttrCase<"R", 0, "r">, I32EnumAttrCase<"G", 1, "g">,
  I32EnumAttrCase<"B", 2, "b">, I32EnumAttrCase<"A", 3, "a">]>;
def PTX_TexComponentAttr : PTX_EnumAttr<PTX_TexComponentEnum, "comp">;

// What suld/sust do out of range (.trap, .clamp, .zero), PTX ISA 9.7.11.
def PTX_SurfaceClampEnum : PTX_Enum<"SurfaceClamp", "PTX surface out-of-range mode", [
  I32EnumAttrCase<"Trap", 0, "trap">, I32EnumAttrCase<"Clamp", 1, "clamp">,
  I32EnumAttrCase<"Zero", 2, "zero">]>;
def PTX_SurfaceClampAttr : PTX_EnumAttr<PTX_SurfaceClampEnum, "clamp">;

// txq and suq attributes, PTX ISA 9.7.10.6 and 9.7.11.4.
def PTX_TexQueryEnum : PTX_Enum<"TexQuery", "PTX txq/suq attribute", [
  I32EnumAttrCase<"Width", 0, "width">, I32EnumAttrCase<"Height", 1, "height">,
  I32EnumAttrCase<"Depth", 2, "depth">,
  I32EnumAttrCase<"ChannelDataType", 3, "channel_data_type">,
  I32EnumAttrCase<"ChannelOrder", 4, "channel_order">,
  I32EnumAttrCase<"NormalizedCoords", 5, "normalized_coords">,
  I32EnumAttrCase<"FilterMode", 6, "filter_mode">,
  I32EnumAttrCase<"AddrMode0", 7, "addr_mode_0">, I32EnumAttrCase<"AddrMode1", 8, "addr_mode_1">,
  I32EnumAttrCase<"AddrMode2", 9, "addr_mode_2">, I32EnumAttrCase<"ArraySize", 10, "array_size">,
  I32EnumAttrCase<"NumMipmapLevels", 11, "num_mipmap_levels">,
  I32EnumAttrCase<"NumSamples", 12, "num_samples">,
  I32EnumAttrCase<"MemoryLayout", 13, "memory_layout">]>;
def PTX_TexQueryAttr : PTX_EnumAttr<PTX_TexQueryEnum, "query">;

#endif // ZMLIR_DIALECT_PTX_ENUMS
