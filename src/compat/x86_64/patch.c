/*
 * STUI and CLUI made to trap on every x86-64 CPU.
 *
 * STUI is F3 0F 01 EF and CLUI F3 0F 01 EE (reference 5): the opcodes of
 * the protection-key instructions WRPKRU (0F 01 EF) and RDPKRU (0F 01 EE)
 * behind a prefix that those do not allow (Intel marks them NP: 66, F2 or
 * F3 make them #UD).  On an Intel CPU without UINTR they raise #UD and the
 * SIGILL handler emulates them.  An AMD CPU with protection keys enabled
 * (/proc/cpuinfo "pku ospke": EPYC guests on kernel 6.18, as this project's
 * CI machines) ignores the prefix instead:
 *   CLUI with ECX = 0        reads PKRU into EAX, zeroes EDX, no trap
 *   STUI with ECX = EDX = 0  writes EAX into PKRU, no trap (and can take
 *                            away the access to every page of memory)
 *   either, other ECX/EDX    #GP: SIGSEGV, not SIGILL
 * The emulator never sees them, and the program breaks.
 *
 * So, once, when the emulation starts (init.c: before main, before the
 * program's threads), every such instruction in the code loaded then gets
 * UD2 (0F 0B, #UD on every x86-64 CPU) in its first two bytes, and its
 * address is kept with what a UINTR CPU does with it: STUI, CLUI, or #UD
 * (66 or F2 in place of F3, or LOCK).  The SIGILL handler looks the
 * address up first (emulate.c).  The other bytes stay, so the instruction's
 * length and the address after it do not change.
 *
 * Only real instructions are patched: 0F 01 EE/EF can also be bytes inside
 * another instruction (an immediate, a displacement).  A candidate counts
 * only when walking instructions (length.c) from the start of the function
 * that holds it lands on an instruction whose opcode is right there.  The
 * function starts come from the .eh_frame_hdr table (PT_GNU_EH_FRAME, in
 * memory: every function with unwind information, which GCC gives every
 * function by default on x86-64); where there is none, the walk starts at
 * the segment.  An instruction without a 66/F2/F3/F0 prefix is a real
 * RDPKRU or WRPKRU (glibc's pkey_get/pkey_set) and is left alone.
 *
 * Decided: this is done on every CPU the emulation runs on, not only those
 * that need it, so that one behaviour is tested everywhere.  Not covered:
 * code loaded later (dlopen) or generated at run time, which gets the
 * CPU's behaviour; and a program that reads its own code sees UD2 there.
 * uintr-run(1) says so.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compat.h"

struct uintr__patch_site {
	uint64_t ip;
	struct uintr__compat_insn insn;
};

/* Written before the program runs, read-only afterwards (the SIGILL
 * handler reads it). */
static struct uintr__patch_site *uintr__sites;
static size_t uintr__nsites, uintr__site_cap;

static int uintr__add_site(uint64_t ip, const struct uintr__compat_insn *insn)
{
	struct uintr__patch_site *grown;
	size_t cap;

	if (uintr__nsites == uintr__site_cap) {
		cap = uintr__site_cap ? 2 * uintr__site_cap : 256;
		grown = mmap(NULL, cap * sizeof(*grown), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (grown == MAP_FAILED)
			return -1;
		if (uintr__sites) {
			memcpy(grown, uintr__sites, uintr__nsites * sizeof(*grown));
			munmap(uintr__sites, uintr__site_cap * sizeof(*grown));
		}
		uintr__sites = grown;
		uintr__site_cap = cap;
	}
	uintr__sites[uintr__nsites].ip = ip;
	uintr__sites[uintr__nsites].insn = *insn;
	uintr__nsites++;
	return 0;
}

/* The binary-search table of .eh_frame_hdr: pairs (function start, FDE),
 * sorted by start, each a signed 32-bit offset from the header. */
struct uintr__fde_table {
	const unsigned char *hdr;
	const unsigned char *pairs;
	uint32_t count;
};

static int uintr__fde_table(const unsigned char *hdr, struct uintr__fde_table *t)
{
	size_t ptr_size;

	/* Version 1; the table encoded DW_EH_PE_datarel | DW_EH_PE_sdata4
	 * (0x3b) and its count DW_EH_PE_udata4 (0x03), as GNU ld and lld
	 * write them.  Anything else: no table. */
	if (hdr[0] != 1 || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return 0;
	switch (hdr[1] & 0x0f) {
	case 0x03: case 0x0b:
		ptr_size = 4;
		break;
	case 0x04: case 0x0c:
		ptr_size = 8;
		break;
	default:
		return 0;
	}
	t->hdr = hdr;
	memcpy(&t->count, hdr + 4 + ptr_size, sizeof(t->count));
	t->pairs = hdr + 4 + ptr_size + 4;
	return 1;
}

/* The greatest function start at or below ip, or 0. */
static uint64_t uintr__function_start(const struct uintr__fde_table *t, uint64_t ip)
{
	uint32_t lo = 0, hi = t->count;
	uint64_t found = 0;
	int32_t rel;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t start;

		memcpy(&rel, t->pairs + (size_t)mid * 8, sizeof(rel));
		start = (uint64_t)(uintptr_t)t->hdr + (uint64_t)(int64_t)rel;
		if (start <= ip) {
			found = start;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return found;
}

/* Walk from `from`: the start of the instruction whose opcode (after its
 * prefixes) is at `opcode`, or 0 if no instruction has it there. */
static uint64_t uintr__instruction_with_opcode_at(uint64_t from, uint64_t opcode, uint64_t end)
{
	uint64_t ip = from;
	unsigned int len, at;

	while (ip <= opcode) {
		len = uintr__compat_insn_length((const unsigned char *)(uintptr_t)ip,
						(size_t)(end - ip), &at);
		if (len == 0)
			return 0;
		if (ip + len > opcode)
			return ip + at == opcode ? ip : 0;
		ip += len;
	}
	return 0;
}

static int uintr__has_rep_or_lock_prefix(uint64_t ip, uint64_t opcode)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)ip;
	size_t i, n = (size_t)(opcode - ip);

	for (i = 0; i < n; i++)
		if (p[i] == 0x66 || p[i] == 0xf2 || p[i] == 0xf3 || p[i] == 0xf0)
			return 1;
	return 0;
}

static int uintr__write_ud2(uint64_t ip, int prot)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t first = ip & ~(page - 1), last = (ip + 1) & ~(page - 1);
	size_t len = (size_t)(last - first + page);
	unsigned char *p = (unsigned char *)(uintptr_t)ip;

	/* Writable and still executable: in a static program this very code
	 * may be on the page. */
	if (mprotect((void *)(uintptr_t)first, len, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		return -1;
	p[0] = 0x0f;
	p[1] = 0x0b;
	__builtin___clear_cache((char *)p, (char *)p + 2);
	return mprotect((void *)(uintptr_t)first, len, prot);
}

static void uintr__cannot_patch(uint64_t ip, const struct uintr__compat_insn *insn,
				unsigned char modrm, const char *object)
{
	fprintf(stderr, "libuintr-compat: cannot make the %s at %p in %s trap (%m): "
		"on a CPU with protection keys it runs as %s\n",
		insn->op == UINTR__OP_STUI ? "STUI" : insn->op == UINTR__OP_CLUI ? "CLUI" :
		"prefixed 0F 01 EE/EF", (void *)(uintptr_t)ip, object,
		modrm == 0xef ? "WRPKRU" : "RDPKRU");
}

static void uintr__patch_segment(uint64_t start, uint64_t end, int prot,
				 const struct uintr__fde_table *fdes, const char *object)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)start;
	const unsigned char *stop = (const unsigned char *)(uintptr_t)end;
	struct uintr__compat_insn insn;
	uint64_t opcode, from, ip;

	/* memchr for the middle byte (SIMD in glibc): the scan of libc's
	 * code then takes well under a millisecond. */
	while (p + 2 <= stop && (p = memchr(p, 0x01, (size_t)(stop - p))) != NULL) {
		opcode = (uint64_t)(uintptr_t)p - 1;
		p++;
		if (opcode <= start || p >= stop || (*p != 0xee && *p != 0xef) || p[-2] != 0x0f)
			continue;
		from = fdes ? uintr__function_start(fdes, opcode - 1) : 0;
		if (from < start || from >= opcode)
			from = start;
		ip = uintr__instruction_with_opcode_at(from, opcode, end);
		if (ip == 0 || !uintr__has_rep_or_lock_prefix(ip, opcode))
			continue;
		if (!uintr__compat_decode(ip, &insn)) {
			/* 66/F2 instead of F3, or LOCK: #UD on a UINTR CPU. */
			insn.op = UINTR__OP_NONE;
			insn.len = (unsigned int)(opcode + 3 - ip);
			insn.reg = 0;
		}
		if (uintr__add_site(ip, &insn) != 0) {
			uintr__cannot_patch(ip, &insn, *p, object);
		} else if (uintr__write_ud2(ip, prot) != 0) {
			uintr__nsites--;
			uintr__cannot_patch(ip, &insn, *p, object);
		}
	}
}

static int uintr__patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct uintr__fde_table fdes, *have_fdes = NULL;
	const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "the program";
	int i, prot;

	(void)size;
	(void)arg;
	if (info->dlpi_addr != 0 && info->dlpi_addr == getauxval(AT_SYSINFO_EHDR))
		return 0; /* the vDSO */
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME &&
		    uintr__fde_table((const unsigned char *)(uintptr_t)(info->dlpi_addr +
						info->dlpi_phdr[i].p_vaddr), &fdes))
			have_fdes = &fdes;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		prot = PROT_EXEC | (ph->p_flags & PF_R ? PROT_READ : 0) |
		       (ph->p_flags & PF_W ? PROT_WRITE : 0);
		uintr__patch_segment(info->dlpi_addr + ph->p_vaddr,
				     info->dlpi_addr + ph->p_vaddr + ph->p_memsz, prot,
				     have_fdes, name);
	}
	return 0;
}

static int uintr__site_order(const void *a, const void *b)
{
	uint64_t x = ((const struct uintr__patch_site *)a)->ip;
	uint64_t y = ((const struct uintr__patch_site *)b)->ip;

	return x < y ? -1 : x > y;
}

void uintr__compat_patch_code(void)
{
	dl_iterate_phdr(uintr__patch_object, NULL);
	if (uintr__nsites > 1)
		qsort(uintr__sites, uintr__nsites, sizeof(*uintr__sites), uintr__site_order);
}

/* Async-signal-safe: a binary search of a table nobody writes any more. */
int uintr__compat_patched(uint64_t ip, struct uintr__compat_insn *insn)
{
	size_t lo = 0, hi = uintr__nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (uintr__sites[mid].ip == ip) {
			*insn = uintr__sites[mid].insn;
			return 1;
		}
		if (uintr__sites[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}
