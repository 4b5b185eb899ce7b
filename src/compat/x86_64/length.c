/*
 * The length of any x86-64 instruction (64-bit mode), so that patch.c can
 * walk code from a function's first byte and tell an instruction from the
 * same bytes inside another one (Intel SDM vol. 2, chapter 2, instruction
 * format, and appendix A, the opcode maps; AMD APM vol. 3 for XOP).
 *
 *   [legacy prefixes] [REX] opcode [ModRM [SIB] [displacement]] [immediate]
 *   [legacy prefixes] VEX (C4/C5) or EVEX (62) or XOP (8F) ... the same tail
 *
 * Only the length matters, not the meaning: an opcode is classed by
 * whether it takes a ModRM byte and how many immediate bytes follow.
 * Opcodes that do not exist in 64-bit mode give 0 (the walk stops there
 * and nothing is patched), and so does anything longer than 15 bytes or
 * than the bytes available.  Checked against objdump on the whole of
 * libc and this library by test/compat-insn-length.c.
 */
#define _GNU_SOURCE
#include "compat.h"

#define UINTR__MAX_INSN 15

/* What follows an opcode. */
#define UINTR__LEN_MODRM 0x01  /* a ModRM byte (SIB and displacement by it) */
#define UINTR__LEN_IMM8  0x02  /* 1 immediate byte */
#define UINTR__LEN_IMM16 0x04  /* 2 */
#define UINTR__LEN_IMMZ  0x08  /* 4, or 2 with 66h and no REX.W */
#define UINTR__LEN_BAD   0x10  /* invalid in 64-bit mode */
#define UINTR__LEN_REL32 0x20  /* 4 (near branches ignore 66h in 64-bit mode) */

static unsigned int uintr__one_byte_map(unsigned char op)
{
	switch (op) {
	case 0x00 ... 0x03: case 0x08 ... 0x0b: case 0x10 ... 0x13: case 0x18 ... 0x1b:
	case 0x20 ... 0x23: case 0x28 ... 0x2b: case 0x30 ... 0x33: case 0x38 ... 0x3b:
	case 0x63: case 0x84 ... 0x8f: case 0xd0 ... 0xd3: case 0xd8 ... 0xdf:
	case 0xfe: case 0xff:
		return UINTR__LEN_MODRM;
	case 0x04: case 0x0c: case 0x14: case 0x1c: case 0x24: case 0x2c: case 0x34: case 0x3c:
	case 0x6a: case 0x70 ... 0x7f: case 0xa8: case 0xb0 ... 0xb7: case 0xcd:
	case 0xe0 ... 0xe7: case 0xeb:
		return UINTR__LEN_IMM8;
	case 0x05: case 0x0d: case 0x15: case 0x1d: case 0x25: case 0x2d: case 0x35: case 0x3d:
	case 0x68: case 0xa9:
		return UINTR__LEN_IMMZ;
	case 0x69: case 0x81: case 0xc7:
		return UINTR__LEN_MODRM | UINTR__LEN_IMMZ;
	case 0x6b: case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6:
		return UINTR__LEN_MODRM | UINTR__LEN_IMM8;
	case 0xc2: case 0xca:
		return UINTR__LEN_IMM16;
	case 0xc8: /* ENTER iw, ib */
		return UINTR__LEN_IMM16 | UINTR__LEN_IMM8;
	case 0xe8: case 0xe9:
		return UINTR__LEN_REL32;
	case 0x06: case 0x07: case 0x0e: case 0x16: case 0x17: case 0x1e: case 0x1f:
	case 0x27: case 0x2f: case 0x37: case 0x3f: case 0x60: case 0x61: case 0x82:
	case 0x9a: case 0xce: case 0xd4: case 0xd5: case 0xd6: case 0xea:
		return UINTR__LEN_BAD;
	default: /* 50-5F, 6C-6F, 90-9F, A4-A7, AA-AF, C3, C9, CB, CC, CF, D7, EC-EF, F1, F4, F5, F8-FD */
		return 0;
	}
}

static unsigned int uintr__two_byte_map(unsigned char op)
{
	switch (op) {
	case 0x05 ... 0x09: case 0x0b: case 0x0e: case 0x30 ... 0x35: case 0x37:
	case 0x77: case 0xa0 ... 0xa2: case 0xa8 ... 0xaa: case 0xc8 ... 0xcf:
		return 0;
	case 0x04: case 0x0a: case 0x0c: case 0x24 ... 0x27: case 0x36: case 0x39:
	case 0x3b ... 0x3f: case 0x7a: case 0x7b: case 0xa6: case 0xa7:
		return UINTR__LEN_BAD;
	case 0x0f: /* 3DNow!: the opcode is a trailing byte */
	case 0x70 ... 0x73: case 0xa4: case 0xac: case 0xba: case 0xc2: case 0xc4 ... 0xc6:
		return UINTR__LEN_MODRM | UINTR__LEN_IMM8;
	case 0x80 ... 0x8f:
		return UINTR__LEN_REL32;
	default:
		return UINTR__LEN_MODRM;
	}
}

/* VEX and EVEX map 1 (the 0F map): the opcodes with an imm8. */
static int uintr__vex_map1_imm8(unsigned char op)
{
	return (op >= 0x70 && op <= 0x73) || op == 0xc2 || (op >= 0xc4 && op <= 0xc6);
}

/* ModRM at p[i]: the index after it, its SIB and its displacement, or 0. */
static size_t uintr__modrm_end(const unsigned char *p, size_t i, size_t n)
{
	unsigned int mod, rm;

	if (i >= n)
		return 0;
	mod = p[i] >> 6;
	rm = p[i] & 7u;
	i++;
	if (mod == 3)
		return i;
	if (rm == 4) { /* SIB */
		if (i >= n)
			return 0;
		if (mod == 0 && (p[i] & 7u) == 5)
			i += 4; /* no base: disp32 */
		i++;
	} else if (mod == 0 && rm == 5) {
		i += 4; /* RIP-relative disp32 */
	}
	if (mod == 1)
		i += 1;
	else if (mod == 2)
		i += 4;
	return i;
}

unsigned int uintr__compat_insn_length(const unsigned char *p, size_t n,
				       unsigned int *opcode_at)
{
	int opsize16 = 0, addr32 = 0, rep_f2 = 0;
	unsigned int rex = 0, kind, imm = 0;
	size_t i = 0, at;
	unsigned char op;

	if (n > UINTR__MAX_INSN)
		n = UINTR__MAX_INSN;
	for (;; i++) {
		if (i >= n)
			return 0;
		switch (p[i]) {
		case 0x66:
			opsize16 = 1;
			rex = 0;
			continue;
		case 0x67:
			addr32 = 1;
			rex = 0;
			continue;
		case 0xf2:
			rep_f2 = 1;
			rex = 0;
			continue;
		case 0xf3:
			rep_f2 = 0;
			rex = 0;
			continue;
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65: case 0xf0:
			rex = 0;
			continue;
		case 0x40 ... 0x4f:
			rex = p[i];
			continue;
		default:
			break;
		}
		break;
	}
	at = i;
	op = p[i++];
	if (op == 0xc4 || op == 0xc5 || op == 0x62 ||
	    (op == 0x8f && i < n && ((p[i] >> 3) & 7u) != 0)) {
		/* VEX (C5: 1 payload byte, C4: 2), EVEX (62: 3), XOP (8F: 2);
		 * then the opcode and a ModRM. */
		unsigned char escape = op;
		unsigned int map, payload = escape == 0xc5 ? 1 : escape == 0x62 ? 3 : 2;

		if (i + payload >= n)
			return 0;
		map = escape == 0xc5 ? 1 : escape == 0x62 ? (p[i] & 7u) : (p[i] & 0x1fu);
		i += payload;
		op = p[i++];
		if (escape == 0x8f) { /* XOP: map 8 imm8, map 9 none, map 10 imm32 */
			if (map == 8)
				imm = 1;
			else if (map == 10)
				imm = 4;
			else if (map != 9)
				return 0;
		} else if (map == 1) {
			if (op == 0x77 && escape != 0x62) { /* VZEROUPPER/VZEROALL: no ModRM */
				if (opcode_at)
					*opcode_at = (unsigned int)at;
				return (unsigned int)i;
			}
			imm = uintr__vex_map1_imm8(op) ? 1 : 0;
		} else if (map == 3) {
			imm = 1;
		} else if (map != 2 && !(escape == 0x62 && (map == 5 || map == 6))) {
			return 0; /* maps 5 and 6: EVEX only (AVX512-FP16), no immediate */
		}
		i = uintr__modrm_end(p, i, n);
		if (i == 0)
			return 0;
		i += imm;
	} else {
		if (op == 0x0f) {
			if (i >= n)
				return 0;
			op = p[i++];
			if (op == 0x38) { /* three-byte map 0F 38: ModRM, no immediate */
				i++;
				kind = UINTR__LEN_MODRM;
			} else if (op == 0x3a) { /* 0F 3A: ModRM, imm8 */
				i++;
				kind = UINTR__LEN_MODRM | UINTR__LEN_IMM8;
			} else if (op == 0x78 && (opsize16 || rep_f2)) {
				/* SSE4a EXTRQ/INSERTQ with ib, ib */
				kind = UINTR__LEN_MODRM | UINTR__LEN_IMM16;
			} else {
				kind = uintr__two_byte_map(op);
			}
		} else {
			kind = uintr__one_byte_map(op);
			if (op >= 0xb8 && op <= 0xbf) /* MOV r, imm: imm64 with REX.W */
				imm = (rex & 8u) ? 8 : opsize16 ? 2 : 4;
			else if (op >= 0xa0 && op <= 0xa3) /* MOV with a moffs */
				imm = addr32 ? 4 : 8;
			if (op == 0xf6 || op == 0xf7) { /* group 3: TEST (/0, /1) has an imm */
				kind = UINTR__LEN_MODRM;
				if (i < n && ((p[i] >> 3) & 7u) <= 1)
					imm = op == 0xf6 ? 1 : ((rex & 8u) || !opsize16) ? 4 : 2;
			}
		}
		if (kind & UINTR__LEN_BAD)
			return 0;
		if (kind & UINTR__LEN_MODRM) {
			i = uintr__modrm_end(p, i, n);
			if (i == 0)
				return 0;
		}
		if (kind & UINTR__LEN_IMM8)
			imm += 1;
		if (kind & UINTR__LEN_IMM16)
			imm += 2;
		if (kind & UINTR__LEN_IMMZ)
			imm += ((rex & 8u) || !opsize16) ? 4 : 2;
		if (kind & UINTR__LEN_REL32)
			imm += 4;
		i += imm;
	}
	if (i > n)
		return 0;
	if (opcode_at)
		*opcode_at = (unsigned int)at;
	return (unsigned int)i;
}
