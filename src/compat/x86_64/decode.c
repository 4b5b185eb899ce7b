/*
 * Decoding the UINTR instructions (reference section 5, encodings):
 *
 *   SENDUIPI r64   F3 [REX] 0F C7 /6, ModRM.mod = 11, r/m = the register
 *                  (REX.B extends it; REX.W and 66h are ignored)
 *   UIRET          F3 0F 01 EC
 *   TESTUI         F3 0F 01 ED
 *   CLUI           F3 0F 01 EE
 *   STUI           F3 0F 01 EF
 *
 * Legacy prefixes may come in any order; the mandatory prefix is the last
 * F2/F3 one.  Segment overrides, 66h and 67h do not change these
 * instructions.  A REX prefix counts only right before the opcode (a
 * legacy prefix after it cancels it).  LOCK makes every one of them #UD,
 * and so does anything longer than 15 bytes: such an instruction is left
 * to the program's SIGILL handler, as the CPU would leave it.
 *
 * Bytes are read one at a time and only as far as the instruction goes,
 * so decoding never reads past its end (an instruction ending on the last
 * byte of a mapping is fine).
 */
#define _GNU_SOURCE
#include "compat.h"

#define UINTR__MAX_INSN 15

static int uintr__is_legacy_prefix(unsigned char b)
{
	switch (b) {
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65: /* segment */
	case 0x66: case 0x67: /* operand size, address size */
		return 1;
	default:
		return 0;
	}
}

int uintr__compat_decode(uint64_t ip, struct uintr__compat_insn *insn)
{
	const volatile unsigned char *p = (const volatile unsigned char *)(uintptr_t)ip;
	unsigned int i, rex = 0, mandatory = 0;
	unsigned char b;

	for (i = 0; i < UINTR__MAX_INSN; i++) {
		b = p[i];
		if (b == 0xf2 || b == 0xf3) {
			mandatory = b;
			rex = 0;
		} else if (uintr__is_legacy_prefix(b)) {
			rex = 0;
		} else if (b == 0xf0) {
			return 0; /* LOCK: #UD */
		} else if ((b & 0xf0) == 0x40) {
			rex = b;
		} else {
			break;
		}
	}
	/* Escape byte, opcode, one more byte: the instruction ends there. */
	if (mandatory != 0xf3 || i + 3 > UINTR__MAX_INSN || p[i] != 0x0f)
		return 0;
	insn->len = i + 3;
	insn->reg = 0;
	switch (p[i + 1]) {
	case 0x01:
		switch (p[i + 2]) {
		case 0xec:
			insn->op = UINTR__OP_UIRET;
			return 1;
		case 0xed:
			insn->op = UINTR__OP_TESTUI;
			return 1;
		case 0xee:
			insn->op = UINTR__OP_CLUI;
			return 1;
		case 0xef:
			insn->op = UINTR__OP_STUI;
			return 1;
		default:
			return 0;
		}
	case 0xc7:
		b = p[i + 2];
		/* mod = 11 (register operand), reg = 6 (the opcode extension). */
		if ((b >> 6) != 3 || ((b >> 3) & 7) != 6)
			return 0;
		insn->op = UINTR__OP_SENDUIPI;
		insn->reg = (b & 7u) | ((rex & 1u) << 3);
		return 1;
	default:
		return 0;
	}
}
