/*
 * Shared by the timer-vector tests: a handler that counts deliveries per
 * vector, logs the order, and reads the overrun of the timer that posts
 * each vector, as a timer_getoverrun() caller in a signal handler would.
 */
#ifndef UINTR_TEST_HELPERS_TIMER_H
#define UINTR_TEST_HELPERS_TIMER_H

#include "helpers-delivery.h"

static _Atomic unsigned long long tt_count[UINTR_MAX_VECTORS];
static _Atomic int tt_timer_of[UINTR_MAX_VECTORS]; /* timer id posting vector v, or -1 */
static _Atomic int tt_overrun[UINTR_MAX_VECTORS];  /* its overrun, read in the handler */

static void tt_handler(struct uintr_frame *frame, unsigned long long vector)
{
	int id = atomic_load(&tt_timer_of[vector]);

	(void)frame;
	if (id >= 0)
		atomic_store(&tt_overrun[vector], uintr_timer_getoverrun(id));
	td_record((int)vector);
	atomic_fetch_add(&tt_count[vector], 1);
}

static inline void tt_init(void)
{
	int v;

	for (v = 0; v < UINTR_MAX_VECTORS; v++)
		atomic_store(&tt_timer_of[v], -1);
}

static inline unsigned long long tt_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static inline struct itimerspec tt_its(unsigned long long value_ns, unsigned long long interval_ns)
{
	struct itimerspec its;

	its.it_value.tv_sec = (time_t)(value_ns / 1000000000ull);
	its.it_value.tv_nsec = (long)(value_ns % 1000000000ull);
	its.it_interval.tv_sec = (time_t)(interval_ns / 1000000000ull);
	its.it_interval.tv_nsec = (long)(interval_ns % 1000000000ull);
	return its;
}

/* A timer that posts vector v of the calling receiver. */
static inline int tt_timer(int v, clockid_t clock, int *fdp)
{
	int fd = uintr_create_fd((unsigned long long)v, 0), id;

	CHECK(fd >= 0);
	id = uintr_timer_create(fd, clock, 0);
	CHECK(id >= 0);
	atomic_store(&tt_timer_of[v], id);
	if (fdp)
		*fdp = fd;
	return id;
}

static inline void tt_arm(int id, int flags, unsigned long long value_ns, unsigned long long interval_ns)
{
	struct itimerspec its = tt_its(value_ns, interval_ns);

	CHECK(uintr_timer_settime(id, flags, &its, NULL) == 0);
}

#endif
