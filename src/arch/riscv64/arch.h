/* riscv64: frame from the signal context's pc (__gregs[0]) and sp (x2).
 * RISC-V has no flags register: flags is always 0. */
#ifndef UINTR_ARCH_RISCV64_H
#define UINTR_ARCH_RISCV64_H

#include <sys/ucontext.h>

static inline void uintr__arch_cpu_relax(void)
{
	/* "pause" (Zihintpause) is a hint encoded as a fence: harmless where absent. */
	__asm__ volatile(".4byte 0x0100000f" ::: "memory");
}

/* A no-op without Zicbop (prefetch.w); the post's RMW fetches the line. */
static inline void uintr__arch_prefetch_write(const void *p)
{
	__builtin_prefetch(p, 1, 3);
}

static inline void uintr__arch_frame_read(const ucontext_t *uc, struct uintr_frame *f)
{
	f->ip = uc->uc_mcontext.__gregs[0];
	f->flags = 0;
	f->sp = uc->uc_mcontext.__gregs[2];
}

static inline void uintr__arch_frame_write(ucontext_t *uc, const struct uintr_frame *f)
{
	uc->uc_mcontext.__gregs[0] = f->ip;
	uc->uc_mcontext.__gregs[2] = f->sp;
}

static inline unsigned long long uintr__arch_flags(void)
{
	return 0;
}

static inline uint64_t uintr__arch_cycles(void)
{
	uint64_t v;

	__asm__ volatile("rdtime %0" : "=r"(v));
	return v;
}

static inline void uintr__arch_raise_ud(void)
{
	__asm__ volatile("unimp" ::: "memory");
}

/* A load from a non-canonical (kernel half) address: SIGSEGV. */
static inline void uintr__arch_raise_gp(void)
{
	__asm__ volatile("ld zero, 0(%0)" : : "r"(0xffffffc000000000ull) : "memory");
}

#endif
