/*
 * The architecture interface: everything that differs between CPUs.
 * Each arch/<arch>/arch.h provides, as static inline functions:
 *
 *   uintr__arch_cpu_relax()            pause in a spin loop
 *   uintr__arch_prefetch_write(p)      ask for p's cache line for writing (a hint)
 *   uintr__arch_frame_read(uc, frame)  ip, flags, sp of an interrupted context
 *   uintr__arch_frame_write(uc, frame) the same, written back as UIRET would (5.4)
 *   uintr__arch_flags()                the flags word of the current context
 *   uintr__arch_cycles()               a cheap, monotonic cycle/tick counter
 *   uintr__arch_raise_ud()             fault as an undefined instruction (SENDUIPI #UD)
 *   uintr__arch_raise_gp()             fault as a bad memory access (SENDUIPI #GP)
 *   uintr__arch_local_take(p)          old = *p, *p = 0, for a 0/1 byte
 *   uintr__arch_local_or(p, v)         *p |= v, for a 64-bit word
 *   uintr__arch_local_and(p, v)        *p &= v, for a 64-bit word
 *
 * The three local_* read-modify-writes are for words that only the
 * calling thread and its own signal handlers write (UIF, UIRR): they must
 * be atomic with respect to a signal handler that interrupts the thread,
 * not with respect to other CPUs, so where one instruction can do it
 * without a bus lock (x86-64, which defines UINTR__ARCH_LOCAL_RMW) it
 * does, and costs a few cycles instead of a locked operation's ~20
 * (issue 16: a polling delivery made six); elsewhere the C11 atomics
 * below serve.
 * Other threads may read these words at any time (uintrstat, timers): an
 * aligned plain store is never seen torn.
 *
 * The two faults are real: the kernel forces the signal (a blocked or
 * ignored SIGILL/SIGSEGV still kills) and, if a handler returns, the
 * faulting instruction runs again, as a faulting SENDUIPI would.
 *
 * generic/arch.h works on any Linux architecture with C11 atomics.
 */
#ifndef UINTR_ARCH_H
#define UINTR_ARCH_H

#include <stdatomic.h>
#include <stdint.h>
#include <ucontext.h>

struct uintr_frame;

#if defined(__x86_64__)
#include "x86_64/arch.h"
#elif defined(__aarch64__)
#include "aarch64/arch.h"
#elif defined(__riscv) && __riscv_xlen == 64
#include "riscv64/arch.h"
#else
#include "generic/arch.h"
#endif

/* An architecture without single-instruction RMWs that need no bus lock
 * (UINTR__ARCH_LOCAL_RMW) uses the C11 atomics for local_*. */
#ifndef UINTR__ARCH_LOCAL_RMW
static inline unsigned char uintr__arch_local_take(_Atomic unsigned char *p)
{
	return atomic_exchange(p, 0);
}

static inline void uintr__arch_local_or(_Atomic uint64_t *p, uint64_t v)
{
	atomic_fetch_or(p, v);
}

static inline void uintr__arch_local_and(_Atomic uint64_t *p, uint64_t v)
{
	atomic_fetch_and(p, v);
}
#endif

#endif
