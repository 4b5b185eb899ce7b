/*
 * A timer dies with its uintr_fd, as a sender does (reference 2.3): once
 * the last reference to the fd is closed and the release reaches the
 * receiver, uintr_timer_settime fails with ESHUTDOWN, the armed periodic
 * timer posts no more (checked by a later one-shot timer of another
 * vector: once it has delivered, the dead one has delivered nothing more),
 * and the id stays until uintr_timer_delete.
 */
#include "helpers-timer.h"

#define MS 1000000ull

static int settime_fails(int id)
{
	struct itimerspec its = tt_its(1000 * MS, 0);

	return uintr_timer_settime(id, 0, &its, NULL) == -1 && errno == ESHUTDOWN;
}

int main(void)
{
	int a, b, fd;
	unsigned long long seen;

	tt_init();
	CHECK(uintr_register_handler(tt_handler, 0) == 0);
	a = tt_timer(9, CLOCK_MONOTONIC, &fd);
	b = tt_timer(10, CLOCK_MONOTONIC, NULL);
	uintr_stui();
	tt_arm(a, 0, 1 * MS, 1 * MS);
	WAIT_PROGRESS(atomic_load(&tt_count[9]) >= 3, tt_ns(CLOCK_MONOTONIC) / 100000000ull);
	close(fd);
	WAIT_UNTIL(settime_fails(a));
	seen = atomic_load(&tt_count[9]);
	tt_arm(b, 0, 10 * MS, 0);
	WAIT_PROGRESS(atomic_load(&tt_count[10]) == 1, tt_ns(CLOCK_MONOTONIC) / 100000000ull);
	CHECK_EQ(atomic_load(&tt_count[9]), seen);
	CHECK(uintr_timer_getoverrun(a) >= 0);
	CHECK(uintr_timer_delete(a) == 0);
	CHECK(uintr_timer_delete(b) == 0);
	uintr_clui();
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
