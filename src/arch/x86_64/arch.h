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

#endif
