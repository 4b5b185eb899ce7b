/* x86-64: frame from the signal context's RIP, RFLAGS, RSP. */
#ifndef UINTR_ARCH_X86_64_H
#define UINTR_ARCH_X86_64_H

#include <sys/ucontext.h>

/* UIRET restores only CF PF AF ZF SF TF DF OF NT RF AC ID (reference 5.4). */
#define UINTR__ARCH_UIRET_FLAGS 0x254dd5ull

static inline void uintr__arch_cpu_relax(void)
{
	__builtin_ia32_pause();
}

/* PREFETCHW (CPUID 0x80000001 ECX bit 8: every AMD64 CPU, Intel since
 * Broadwell, every CPU with UINTR) fetches the line in the exclusive state,
 * so that a load and a locked RMW after it cost one transfer, not a read
 * and then an upgrade.  Elsewhere PREFETCHT0, which is only a read.  The
 * CPUID result is the same for every caller, so a racing first use stores
 * the same value. */
static inline void uintr__arch_prefetch_write(const void *p)
{
	static _Atomic int has_prefetchw = -1;
	int has = atomic_load_explicit(&has_prefetchw, memory_order_relaxed);

	if (has < 0) {
		unsigned int eax = 0x80000000u, ebx, ecx = 0, edx;

		__asm__("cpuid" : "+a"(eax), "=b"(ebx), "+c"(ecx), "=d"(edx));
		has = 0;
		if (eax >= 0x80000001u) {
			eax = 0x80000001u;
			ecx = 0;
			__asm__("cpuid" : "+a"(eax), "=b"(ebx), "+c"(ecx), "=d"(edx));
			has = (ecx >> 8) & 1;
		}
		atomic_store_explicit(&has_prefetchw, has, memory_order_relaxed);
	}
	if (has)
		__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
	else
		__builtin_prefetch(p, 1, 3);
}

static inline void uintr__arch_frame_read(const ucontext_t *uc, struct uintr_frame *f)
{
	f->ip = (unsigned long long)uc->uc_mcontext.gregs[REG_RIP];
	f->flags = (unsigned long long)uc->uc_mcontext.gregs[REG_EFL];
	f->sp = (unsigned long long)uc->uc_mcontext.gregs[REG_RSP];
}

static inline void uintr__arch_frame_write(ucontext_t *uc, const struct uintr_frame *f)
{
	unsigned long long flags = (unsigned long long)uc->uc_mcontext.gregs[REG_EFL];

	flags = (flags & ~UINTR__ARCH_UIRET_FLAGS) | (f->flags & UINTR__ARCH_UIRET_FLAGS);
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)f->ip;
	uc->uc_mcontext.gregs[REG_EFL] = (greg_t)flags;
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)f->sp;
}

static inline unsigned long long uintr__arch_flags(void)
{
	unsigned long long flags;

	__asm__ volatile("pushfq; popq %0" : "=r"(flags));
	return flags;
}

static inline uint64_t uintr__arch_cycles(void)
{
	return __builtin_ia32_rdtsc();
}

/* #UD: SIGILL, si_code ILL_ILLOPN, as SENDUIPI without a UITT. */
static inline void uintr__arch_raise_ud(void)
{
	__asm__ volatile("ud2" ::: "memory");
}

/* #GP from a non-canonical address: SIGSEGV, si_code SI_KERNEL, si_addr 0,
 * exactly what SENDUIPI's #GP gives. */
static inline void uintr__arch_raise_gp(void)
{
	/* The address in RAX: with RBP or RSP as base the access would use SS
	 * and raise #SS (SIGBUS) instead. */
	unsigned long long addr = 0x8000000000000000ull;

	__asm__ volatile("movq (%0), %0" : "+a"(addr) : : "memory");
}

#define UINTR__ARCH_LOCAL_RMW 1
/* Single instructions without LOCK: an interrupt, hence a signal handler,
 * comes before or after them, never inside (arch.h: local_*).  CMPXCHG
 * against 1 leaves 0 in a byte that held 1 and returns what it held. */
static inline unsigned char uintr__arch_local_take(_Atomic unsigned char *p)
{
	unsigned char old = 1;

	__asm__ volatile("cmpxchgb %2, %1"
			 : "+a"(old), "+m"(*(volatile unsigned char *)p)
			 : "q"((unsigned char)0)
			 : "cc", "memory");
	return old;
}

static inline void uintr__arch_local_or(_Atomic uint64_t *p, uint64_t v)
{
	__asm__ volatile("orq %1, %0" : "+m"(*(volatile uint64_t *)p) : "r"(v) : "cc", "memory");
}

static inline void uintr__arch_local_and(_Atomic uint64_t *p, uint64_t v)
{
	__asm__ volatile("andq %1, %0" : "+m"(*(volatile uint64_t *)p) : "r"(v) : "cc", "memory");
}

#endif
