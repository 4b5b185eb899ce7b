/*
 * The code the plugin tests compile with the plugin (kernels.c, as
 * k-sp-VARIANT.o) and without it (the same file with -DPLAIN, every name
 * with a _plain suffix, k-plain-VARIANT.o), and kernels-excluded.c (with
 * the plugin, the file excluded by -fplugin-arg-uintr_safepoint-exclude).
 * Built with gcc whatever CC is; no sanitizer.
 */
#ifndef UINTR_TEST_PLUGIN_KERNELS_H
#define UINTR_TEST_PLUGIN_KERNELS_H

#include <stdatomic.h>
#include <stdint.h>

#include "uintr.h"

/* The compute kernels: pure functions of their arguments. */
#define K_DECLS(S)                                                                   \
	long k_sum##S(const long *a, int n);             /* leaf loop, no call */     \
	int k_fib##S(int n);                             /* recursion */              \
	long k_chase##S(const int *next, int start, long steps); /* pointer chasing */ \
	long k_calls##S(int n);                          /* a call per iteration */   \
	long k_nested##S(int n);                         /* loop nest, break/continue */ \
	uint32_t k_crc##S(const unsigned char *p, long n); /* bitwise inner loop */   \
	void k_sort##S(int *a, int n);                   /* insertion sort, in place */ \
	long k_state##S(const unsigned char *p, long n); /* switch in a loop, goto */ \
	long k_leaf##S(long x);                          /* leaf, no loop: entry only */
K_DECLS()
K_DECLS(_plain)

/* Spins, with no call, until *p >= n: safepoints only on its latch and
 * entry.  In section uintr_spin_text (its bounds: __start_/__stop_). */
void k_spin_until(const _Atomic int *p, int n);
extern const char __start_uintr_spin_text[], __stop_uintr_spin_text[];
/* Every instrumented kernel is in section uintr_sp_text. */
extern const char __start_uintr_sp_text[], __stop_uintr_sp_text[];

/* A handler with safepoints: logs the vector, the frame's ip and UIF; with
 * k_hold set, it spins (instrumented) until k_hold is 0 again, counting
 * its iterations in k_hold_iters; k_in_handler counts the handlers
 * running (2 would be a nested delivery). */
#define K_LOG 512
extern _Atomic int k_handled, k_bad_uif, k_hold, k_in_handler;
extern _Atomic unsigned long k_hold_iters;
extern _Atomic unsigned long long k_vectors[K_LOG], k_ips[K_LOG];
void k_handler(struct uintr_frame *frame, unsigned long long vector);

/* Loops with no safepoint: excluded by the attribute, by
 * no_instrument_function, and by file (kernels-excluded.c).  Each runs n
 * iterations that the optimizer cannot remove and returns a checksum. */
long k_loop_attr(long n);
long k_loop_noinstr(long n);
long k_loop_file(long n);
/* Spins with no safepoint until *p >= n (an excluded function). */
void k_spin_until_excluded(const _Atomic int *p, int n);

#endif
