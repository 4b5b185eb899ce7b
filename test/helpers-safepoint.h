/*
 * Shared by the safepoint tests (uintr_set_safepoints(3)): the check the
 * GCC plugin inserts, written by hand.  The plugin's load is a plain one;
 * here it is a relaxed atomic load (the same instruction) so that
 * ThreadSanitizer sees no race with the senders' RMW of the word.
 */
#ifndef UINTR_TEST_HELPERS_SAFEPOINT_H
#define UINTR_TEST_HELPERS_SAFEPOINT_H

#include "helpers-delivery.h"

static inline unsigned long long ts_word(void)
{
	return __atomic_load_n(uintr_safepoint_word, __ATOMIC_RELAXED);
}

/* One safepoint, as instrumented code has it. */
static inline void ts_safepoint(void)
{
	if (__builtin_expect(ts_word() != 0, 0))
		uintr_safepoint();
}

/* The calling thread's counters. */
static inline struct uintr_stats ts_stats(void)
{
	struct uintr_stats s;

	CHECK(uintr_get_stats(&s, 0) == 0);
	return s;
}

/* A deadline no test reaches, even on a loaded machine: the watchdog
 * never notifies. */
#define TS_NO_DEADLINE 60000000000ull

#endif
