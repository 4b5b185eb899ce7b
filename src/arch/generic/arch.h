/* Any other Linux architecture: no context decoding (the frame reads as
 * zeros and handler changes to it are ignored), clock_gettime as counter. */
#ifndef UINTR_ARCH_GENERIC_H
#define UINTR_ARCH_GENERIC_H

#include <signal.h>
#include <stdatomic.h>
#include <time.h>

static inline void uintr__arch_cpu_relax(void)
{
	atomic_signal_fence(memory_order_seq_cst);
}

/* The compiler's write prefetch, where the CPU has one. */
static inline void uintr__arch_prefetch_write(const void *p)
{
	__builtin_prefetch(p, 1, 3);
}

static inline void uintr__arch_frame_read(const ucontext_t *uc, struct uintr_frame *f)
{
	(void)uc;
	f->ip = 0;
	f->flags = 0;
	f->sp = 0;
}

static inline void uintr__arch_frame_write(ucontext_t *uc, const struct uintr_frame *f)
{
	(void)uc;
	(void)f;
}

static inline unsigned long long uintr__arch_flags(void)
{
	return 0;
}

static inline uint64_t uintr__arch_cycles(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* No instruction to borrow: sys.c raises the signal the kernel's way. */
void uintr__raise_fault(int signo, int code);

static inline void uintr__arch_raise_ud(void)
{
	uintr__raise_fault(SIGILL, ILL_ILLOPN);
}

static inline void uintr__arch_raise_gp(void)
{
	uintr__raise_fault(SIGSEGV, SI_KERNEL);
}

#endif
