/* arm64: frame from the signal context's pc, pstate (NZCV and friends), sp. */
#ifndef UINTR_ARCH_AARCH64_H
#define UINTR_ARCH_AARCH64_H

#include <sys/ucontext.h>

/* A handler may change the condition flags NZCV (bits 31:28) only. */
#define UINTR__ARCH_UIRET_FLAGS 0xf0000000ull

static inline void uintr__arch_cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

/* PRFM PSTL1KEEP: the line for a store, so that the load and the RMW
 * after it cost one transfer. */
static inline void uintr__arch_prefetch_write(const void *p)
{
	__builtin_prefetch(p, 1, 3);
}

static inline void uintr__arch_frame_read(const ucontext_t *uc, struct uintr_frame *f)
{
	f->ip = uc->uc_mcontext.pc;
	f->flags = uc->uc_mcontext.pstate;
	f->sp = uc->uc_mcontext.sp;
}

static inline void uintr__arch_frame_write(ucontext_t *uc, const struct uintr_frame *f)
{
	unsigned long long flags = uc->uc_mcontext.pstate;

	uc->uc_mcontext.pc = f->ip;
	uc->uc_mcontext.pstate = (flags & ~UINTR__ARCH_UIRET_FLAGS) | (f->flags & UINTR__ARCH_UIRET_FLAGS);
	uc->uc_mcontext.sp = f->sp;
}

static inline unsigned long long uintr__arch_flags(void)
{
	unsigned long long nzcv;

	__asm__ volatile("mrs %0, nzcv" : "=r"(nzcv));
	return nzcv;
}

static inline uint64_t uintr__arch_cycles(void)
{
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
}

static inline void uintr__arch_raise_ud(void)
{
	__asm__ volatile("udf #0" ::: "memory");
}

/* A load from the kernel half of the address space: SIGSEGV. */
static inline void uintr__arch_raise_gp(void)
{
	__asm__ volatile("ldr xzr, [%0]" : : "r"(0xffff800000000000ull) : "memory");
}

#endif
