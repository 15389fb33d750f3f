/* The length of one x86-64 instruction, for faults.c: a kernel's access
 * that cannot be made to succeed (a write that breaks a page's protection,
 * a non-canonical address) is skipped, the instruction after it run next.
 *
 * It decodes what the length needs, no more: legacy prefixes, REX, VEX
 * (C4, C5) and EVEX (62), the opcode maps 0F, 0F38, 0F3A (and EVEX's 5 and
 * 6), ModRM, SIB, displacement and immediate. Async-signal-safe: no library
 * calls. 0 where it cannot tell (a byte that is no instruction in 64-bit
 * mode, more than 15 bytes): the caller must not skip then. */

#ifndef ZMLIR_X86_LENGTH_H
#define ZMLIR_X86_LENGTH_H

#include <stdint.h>

/* Bit b of a 256-bit table: whether opcode b of the one-byte map has ModRM. */
static const uint32_t zmlir_x86_modrm_1[8] = {
    /* 00-1F: 00-03, 08-0B, 10-13, 18-1B */ 0x0f0f0f0fu,
    /* 20-3F: 20-23, 28-2B, 30-33, 38-3B */ 0x0f0f0f0fu,
    /* 40-5F: none (REX is a prefix) */ 0x00000000u,
    /* 60-7F: 62, 63, 69, 6B */ 0x00000a0cu,
    /* 80-9F: 80-8F */ 0x0000ffffu,
    /* A0-BF: none */ 0x00000000u,
    /* C0-DF: C0, C1, C4, C5, C6, C7, D0-D3, D8-DF */ 0xff0f00f3u,
    /* E0-FF: F6, F7, FE, FF */ 0xc0c00000u,
};

/* Opcodes of the 0F map without ModRM. */
static int zmlir_x86_0f_no_modrm(uint8_t op) {
  return op == 0x05 || op == 0x06 || op == 0x07 || op == 0x08 || op == 0x09 || op == 0x0b ||
         op == 0x0e || (op >= 0x30 && op <= 0x37) || op == 0x77 || (op >= 0x80 && op <= 0x8f) ||
         op == 0xa0 || op == 0xa1 || op == 0xa2 || op == 0xa8 || op == 0xa9 || op == 0xaa ||
         (op >= 0xc8 && op <= 0xcf);
}

/* Opcodes of the 0F map (legacy, VEX and EVEX alike) with an 8-bit immediate. */
static int zmlir_x86_0f_imm8(uint8_t op) {
  return (op >= 0x70 && op <= 0x73) || op == 0xa4 || op == 0xac || op == 0xba || op == 0xc2 ||
         op == 0xc4 || op == 0xc5 || op == 0xc6;
}

/* The bytes of ModRM, SIB and displacement at `p` (ModRM first). */
static unsigned zmlir_x86_modrm_bytes(const uint8_t *p) {
  uint8_t modrm = p[0], mod = modrm >> 6, rm = modrm & 7;
  unsigned n = 1;
  if (mod == 3)
    return n;
  if (rm == 4) {
    uint8_t sib = p[1];
    n += 1;
    if (mod == 0 && (sib & 7) == 5)
      n += 4;
  } else if (mod == 0 && rm == 5) {
    n += 4; /* RIP-relative */
  }
  if (mod == 1)
    n += 1;
  else if (mod == 2)
    n += 4;
  return n;
}

static unsigned zmlir_x86_length(const uint8_t *code) {
  const uint8_t *p = code;
  int operand16 = 0, address32 = 0, rex_w = 0;
  /* Legacy prefixes, then REX. */
  for (;; ++p) {
    if (p - code >= 14)
      return 0;
    uint8_t b = *p;
    if (b == 0x66)
      operand16 = 1;
    else if (b == 0x67)
      address32 = 1;
    else if (!(b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 || b == 0x3e ||
               b == 0x26 || b == 0x64 || b == 0x65))
      break;
  }
  if ((*p & 0xf0) == 0x40) {
    rex_w = (*p & 8) != 0;
    ++p;
  }
  uint8_t op = *p;
  unsigned n;
  if (op == 0xc4 || op == 0xc5 || op == 0x62) {
    /* VEX (3 or 2 bytes) or EVEX (4): the map, then opcode and ModRM. */
    unsigned map = op == 0xc5 ? 1 : op == 0xc4 ? (p[1] & 0x1f) : (p[1] & 0x07);
    p += op == 0xc5 ? 2 : op == 0xc4 ? 3 : 4;
    uint8_t vop = *p++;
    if (map < 1 || map > 6 || map == 4 || (op != 0x62 && map > 3))
      return 0;
    if (op != 0x62 && map == 1 && vop == 0x77) /* vzeroupper, vzeroall */
      n = (unsigned)(p - code);
    else
      n = (unsigned)(p - code) + zmlir_x86_modrm_bytes(p);
    if (map == 3 || (map == 1 && zmlir_x86_0f_imm8(vop)))
      n += 1;
    return n <= 15 ? n : 0;
  }
  ++p;
  unsigned imm = 0;
  /* An immediate of the operand size: 16 bits under 66, unless REX.W makes
   * it 64 (an imm32, sign-extended). */
  unsigned full = operand16 && !rex_w ? 2 : 4;
  if (op == 0x0f) {
    uint8_t op2 = *p++;
    if (op2 == 0x38 || op2 == 0x3a) {
      ++p; /* the third opcode byte; every such instruction has ModRM */
      n = (unsigned)(p - code) + zmlir_x86_modrm_bytes(p) + (op2 == 0x3a ? 1 : 0);
      return n <= 15 ? n : 0;
    }
    if (op2 == 0x0f)
      imm = 1; /* 3DNow!: its opcode follows as an immediate */
    else if (op2 >= 0x80 && op2 <= 0x8f)
      imm = 4; /* jcc rel32 */
    else if (zmlir_x86_0f_imm8(op2))
      imm = 1;
    n = (unsigned)(p - code) + (zmlir_x86_0f_no_modrm(op2) ? 0 : zmlir_x86_modrm_bytes(p)) + imm;
    return n <= 15 ? n : 0;
  }
  if (op == 0x06 || op == 0x07 || op == 0x0e || op == 0x16 || op == 0x17 || op == 0x1e ||
      op == 0x1f || op == 0x27 || op == 0x2f || op == 0x37 || op == 0x3f || op == 0x60 ||
      op == 0x61 || op == 0x62 || op == 0x82 || op == 0x9a || op == 0xce || op == 0xd4 ||
      op == 0xd5 || op == 0xd6 || op == 0xea)
    return 0; /* no instruction in 64-bit mode */
  if (op < 0x40 && (op & 7) == 4)
    imm = 1; /* ALU AL, imm8 */
  else if (op < 0x40 && (op & 7) == 5)
    imm = full; /* ALU eAX, imm */
  else if (op == 0x68 || op == 0x69 || op == 0x81 || op == 0xa9 || op == 0xc7)
    imm = full;
  else if (op == 0x6a || op == 0x6b || op == 0x80 || op == 0x83 || op == 0xa8 || op == 0xc0 ||
           op == 0xc1 || op == 0xc6 || op == 0xcd || (op >= 0x70 && op <= 0x7f) ||
           (op >= 0xb0 && op <= 0xb7) || (op >= 0xe0 && op <= 0xe7) || op == 0xeb)
    imm = 1;
  else if (op >= 0xb8 && op <= 0xbf)
    imm = rex_w ? 8 : full;
  else if (op >= 0xa0 && op <= 0xa3)
    imm = address32 ? 4 : 8; /* moffs */
  else if (op == 0xc2 || op == 0xca)
    imm = 2;
  else if (op == 0xc8)
    imm = 3;
  else if (op == 0xe8 || op == 0xe9)
    imm = 4;
  else if ((op == 0xf6 || op == 0xf7) && ((*p >> 3) & 7) < 2)
    imm = op == 0xf6 ? 1 : full; /* test r/m, imm */
  int modrm = (zmlir_x86_modrm_1[op >> 5] >> (op & 31)) & 1;
  n = (unsigned)(p - code) + (modrm ? zmlir_x86_modrm_bytes(p) : 0) + imm;
  return n <= 15 ? n : 0;
}

#endif /* ZMLIR_X86_LENGTH_H */
