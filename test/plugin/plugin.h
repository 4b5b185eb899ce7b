/*
 * Shared by the plugin tests (test/plugin/): the receiver's set-up, with
 * the handler of kernels.c (which has safepoints of its own).
 */
#ifndef UINTR_TEST_PLUGIN_H
#define UINTR_TEST_PLUGIN_H

#include "helpers-safepoint.h"
#include "kernels.h"

#ifndef VARIANT
#define VARIANT "?"
#endif

/* In the receiver thread: k_handler, vector fd(s) for `vectors` (a list
 * ending with -1), the instrumented state with a deadline no test reaches
 * (so the watchdog never delivers), UIF = 1. */
static inline void tp_receiver_setup(_Atomic int *fds, const int *vectors)
{
	CHECK(uintr_register_handler(k_handler, 0) == 0);
	for (int i = 0; vectors[i] >= 0; i++) {
		fds[i] = uintr_create_fd(vectors[i], 0);
		CHECK(fds[i] >= 0);
	}
	CHECK(uintr_set_safepoints(TS_NO_DEADLINE, 0) == 0);
	uintr_stui();
}

static inline int tp_in(unsigned long long ip, const char *lo, const char *hi)
{
	return ip >= (unsigned long long)(uintptr_t)lo && ip < (unsigned long long)(uintptr_t)hi;
}

#endif
