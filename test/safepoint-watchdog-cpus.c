/*
 * Where the watchdog thread runs (uintr_set_safepoints(3)): on the CPUs
 * of the process's main thread except the one an instrumented receiver
 * is pinned to, and on all of the main thread's CPUs where that leaves
 * none.  Before stop 30 it kept the affinity of the thread that created
 * it: a receiver pinned to CPU C started a watchdog pinned to C, which
 * then took the receiver's CPU at every scan (uintr-safepoint's fallback
 * row: every scan on the receiver's CPU 1; the old code fails phase 1,
 * though first for want of the thread's name).
 *   1. main on all its CPUs; the receiver pins itself to C (the last of
 *      them) and enters the state: the watchdog's CPUs are main's minus C.
 *   2. the receiver leaves, the watchdog exits; main pins itself to C;
 *      the receiver enters again: the watchdog's CPUs are {C}.
 * Needs two CPUs (77 with one).  The watchdog is found by its name,
 * uintr-watchdog, in /proc/self/task.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "helpers-commands.h"
#include "helpers-safepoint.h"

static _Atomic int pin_cpu = -1;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

/* The tid of the thread named uintr-watchdog, or 0. */
static pid_t watchdog_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t found = 0;

	CHECK(d != NULL);
	while (!found && (e = readdir(d))) {
		char path[320], name[32] = "";
		int fd;
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue; /* a thread that just exited */
		n = read(fd, name, sizeof(name) - 1);
		close(fd);
		if (n > 0 && strncmp(name, "uintr-watchdog\n", 15) == 0)
			found = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return found;
}

/* The watchdog exists and runs on exactly `want`. */
static int watchdog_on(const cpu_set_t *want)
{
	pid_t tid = watchdog_tid();
	cpu_set_t have;

	if (!tid || sched_getaffinity(tid, sizeof(have), &have) != 0)
		return 0;
	return CPU_EQUAL(&have, want);
}

static void pin_self(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
}

/* The receiver's commands: 1 pin to pin_cpu and enter, 2 leave, 3
 * unregister and exit (helpers-commands.h). */
static int act(int c)
{
	if (c == 1) {
		pin_self(pin_cpu);
		CHECK(uintr_set_safepoints(TS_NO_DEADLINE, 0) == 0);
	} else if (c == 2) {
		CHECK(uintr_set_safepoints(0, 0) == 0);
	} else {
		CHECK(uintr_unregister_handler(0) == 0);
	}
	return c == 3;
}

int main(void)
{
	cpu_set_t all, rest, only;
	pthread_t t;
	int c;

	CHECK(sched_getaffinity(0, sizeof(all), &all) == 0);
	if (CPU_COUNT(&all) < 2) {
		printf("one CPU: no CPU to keep the watchdog off\n");
		return T_SKIP;
	}
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all))
			pin_cpu = c;
	rest = all;
	CPU_CLR(pin_cpu, &rest);
	CPU_ZERO(&only);
	CPU_SET(pin_cpu, &only);

	t = tc_start(handler, act);
	tc_step(1);
	WAIT_UNTIL(watchdog_on(&rest));

	tc_step(2);
	WAIT_UNTIL(watchdog_tid() == 0);
	pin_self(pin_cpu);
	tc_step(1);
	WAIT_UNTIL(watchdog_on(&only));
	tc_step(2);
	tc_step(3);
	t_join(t);
	return T_PASS;
}
