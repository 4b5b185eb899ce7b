/*
 * A receiver thread that carries out the main thread's commands one at a
 * time, for tests that step a receiver through states and look at the
 * process between steps (safepoint-watchdog-lifetime, -cpus).
 * tc_start(handler, act) starts it: it registers `handler`, then waits
 * for commands; tc_step(c) (c > 0, each different from the last) has it
 * run act(c) and returns once it has; the thread exits after a command
 * for which act returns nonzero.
 */
#ifndef UINTR_TEST_HELPERS_COMMANDS_H
#define UINTR_TEST_HELPERS_COMMANDS_H

#include "helpers.h"

static _Atomic int tc_cmd, tc_done;
static uintr_handler_t tc_handler;
static int (*tc_act)(int);

static void *tc_receiver(void *arg)
{
	int last = 0, c, end;

	(void)arg;
	CHECK(uintr_register_handler(tc_handler, 0) == 0);
	atomic_store(&tc_done, -1);
	do {
		WAIT_UNTIL((c = atomic_load(&tc_cmd)) != last);
		last = c;
		end = tc_act(c);
		atomic_store(&tc_done, c);
	} while (!end);
	return NULL;
}

static inline pthread_t tc_start(uintr_handler_t handler, int (*act)(int))
{
	pthread_t t;

	tc_handler = handler;
	tc_act = act;
	t = t_start(tc_receiver, NULL);
	WAIT_UNTIL(atomic_load(&tc_done) == -1);
	return t;
}

static inline void tc_step(int c)
{
	atomic_store(&tc_cmd, c);
	WAIT_UNTIL(atomic_load(&tc_done) == c);
}

#endif
