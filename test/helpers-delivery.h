/*
 * Shared by the delivery-semantics tests (thread to thread, waiting):
 * an ordered event log that handlers write, the calling thread's UIRR,
 * a way to make sure pending notification signals have been handled,
 * and an async-signal-safe hang guard for use inside handlers.
 */
#ifndef UINTR_TEST_HELPERS_DELIVERY_H
#define UINTR_TEST_HELPERS_DELIVERY_H

#include "helpers.h"

/* Ordered log of events (vectors, or test-defined codes), lock-free so
 * that user-interrupt handlers may append to it. */
#define TD_MAX_EVENTS 64
static _Atomic int td_events[TD_MAX_EVENTS];
static _Atomic int td_nevents;

static inline void td_record(int ev)
{
	int i = atomic_fetch_add(&td_nevents, 1);

	if (i < TD_MAX_EVENTS)
		atomic_store(&td_events[i], ev);
}

static inline void td_check_events(const char *file, int line, const int *want, int n)
{
	int got = atomic_load(&td_nevents), i, same = got == n;

	for (i = 0; same && i < n; i++)
		same = atomic_load(&td_events[i]) == want[i];
	if (same)
		return;
	fprintf(stderr, "%s:%d: events:", file, line);
	for (i = 0; i < got && i < TD_MAX_EVENTS; i++)
		fprintf(stderr, " %d", atomic_load(&td_events[i]));
	fprintf(stderr, " (%d), expected:", got);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %d", want[i]);
	fprintf(stderr, " (%d)\n", n);
	exit(T_FAIL);
}

/* TD_CHECK_EVENTS(9, 3): the log holds exactly these events, in order. */
#define TD_CHECK_EVENTS(...)                                                         \
	td_check_events(__FILE__, __LINE__, (const int[]){ __VA_ARGS__ },            \
			(int)(sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int)))

/* The calling thread's UIRR (recognized, undelivered vectors). */
static inline unsigned long long td_uirr(void)
{
	struct uintr_state s;

	CHECK(uintr_read_state(&s) == 0);
	return s.uirr;
}

/*
 * One system call.  A signal pending for the calling thread and not
 * blocked is handled before any system call returns to user mode, so a
 * notification that a sender issued before telling us (through memory)
 * that it is done has been processed once this returns.
 */
static inline void td_syscall(void)
{
	syscall(SYS_getppid);
}

/* Block (SIG_BLOCK) or unblock (SIG_UNBLOCK) the notification signal in
 * the calling thread. */
static inline void td_mask_notifications(int how)
{
	sigset_t set;
	int signo = uintr_notification_signal();

	CHECK(signo > 0);
	sigemptyset(&set);
	sigaddset(&set, signo);
	CHECK(pthread_sigmask(how, &set, NULL) == 0);
}

/* Fail from a handler: write(2) and _exit(2) only. */
static inline void td_fail_async(const char *msg)
{
	ssize_t n = write(2, msg, strlen(msg));

	(void)n;
	_exit(T_FAIL);
}

/* WAIT_UNTIL for handler context: async-signal-safe calls only. */
#define TD_HANDLER_WAIT(cond)                                                        \
	do {                                                                         \
		struct timespec s_, n_;                                              \
		clock_gettime(CLOCK_MONOTONIC, &s_);                                 \
		while (!(cond)) {                                                    \
			clock_gettime(CLOCK_MONOTONIC, &n_);                         \
			if (n_.tv_sec - s_.tv_sec > 20)                              \
				td_fail_async("handler gave up waiting for " #cond  \
					      "\n");                                 \
			sched_yield();                                               \
		}                                                                    \
	} while (0)

#endif
