/*
 * The watchdog thread exists only while some receiver is instrumented:
 * one more thread in /proc/self/task once uintr_set_safepoints returns,
 * gone after uintr_set_safepoints(0, 0), after unregistering, and after
 * the receiver thread exits while still instrumented; one watchdog for
 * two instrumented receivers.
 */
#include <dirent.h>

#include "helpers-commands.h"
#include "helpers-safepoint.h"

static int tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

/* The receiver's commands: 1 enter, 2 leave, 3 unregister and register
 * again, 4 exit the thread, as it is (helpers-commands.h). */
static int act(int c)
{
	if (c == 1)
		CHECK(uintr_set_safepoints(TS_NO_DEADLINE, 0) == 0);
	else if (c == 2)
		CHECK(uintr_set_safepoints(0, 0) == 0);
	else if (c == 3) {
		CHECK(uintr_unregister_handler(0) == 0);
		CHECK(uintr_register_handler(handler, 0) == 0);
	}
	return c == 4;
}

static void *second(void *arg)
{
	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	CHECK(uintr_set_safepoints(TS_NO_DEADLINE, 0) == 0);
	return NULL; /* exits instrumented */
}

int main(void)
{
	pthread_t t = tc_start(handler, act);
	int base;

	base = tasks(); /* with a sanitizer's own threads */
	tc_step(1);
	CHECK_EQ(tasks(), base + 1);
	tc_step(2);
	WAIT_UNTIL(tasks() == base);
	tc_step(1);
	CHECK_EQ(tasks(), base + 1);
	tc_step(3); /* unregistered: the watchdog goes */
	WAIT_UNTIL(tasks() == base);
	tc_step(1);
	CHECK_EQ(tasks(), base + 1);
	t_join(t_start(second, NULL)); /* shares the watchdog, then exits */
	/* A joined thread may linger in /proc for a moment; the watchdog
	 * stays for the first receiver. */
	WAIT_UNTIL(tasks() == base + 1);
	tc_step(4); /* the receiver, instrumented, exits */
	t_join(t);
	WAIT_UNTIL(tasks() == base - 1);
	return T_PASS;
}
