/*
 * Timer vectors on a polling receiver (uintr_set_polling(1)): no kernel
 * timer and no signal; uintr_poll() finds the deadline itself.  Checked:
 * with UIF = 0 a poll made between the 6th and 7th expiry of a periodic
 * timer recognizes the vector once with overrun 5 (6 expiries, one post);
 * two timers due at one poll point are delivered highest vector first; an
 * expiry coalesces with a send of the same vector; no notification is
 * ever processed.
 */
#include "helpers-timer.h"

#define MS 1000000ull
#define P (20 * MS)

static _Atomic int sender_fd = -1, send_now, sent;

static void *sender(void *arg)
{
	int idx;

	(void)arg;
	WAIT_UNTIL(atomic_load(&sender_fd) >= 0);
	idx = uintr_register_sender(atomic_load(&sender_fd), 0);
	CHECK(idx >= 0);
	WAIT_UNTIL(atomic_load(&send_now));
	uintr_senduipi((unsigned long long)idx);
	atomic_store(&sent, 1);
	return NULL;
}

int main(void)
{
	int a, b, fd3, tries;
	unsigned long long t0, now;
	struct uintr_stats st;
	pthread_t th;

	tt_init();
	CHECK(uintr_register_handler(tt_handler, 0) == 0);
	CHECK(uintr_set_polling(1) == 0);
	a = tt_timer(3, CLOCK_MONOTONIC, &fd3);
	b = tt_timer(7, CLOCK_MONOTONIC, NULL);
	th = t_start(sender, NULL);
	atomic_store(&sender_fd, fd3);

	/* Six expiries, one poll: one post, overrun 5.  A poll that comes
	 * too late (preempted) starts the round again. */
	for (tries = 0;; tries++) {
		CHECK(tries < 20);
		t0 = tt_ns(CLOCK_MONOTONIC) + P;
		tt_arm(a, TIMER_ABSTIME, t0, P);
		WAIT_UNTIL(tt_ns(CLOCK_MONOTONIC) >= t0 + 5 * P + P / 4);
		CHECK_EQ(uintr_poll(), 0); /* UIF = 0: recognized, not delivered */
		now = tt_ns(CLOCK_MONOTONIC);
		tt_arm(a, 0, 0, 0);
		if (now < t0 + 6 * P)
			break;
		uintr_stui();
		uintr_clui();
	}
	CHECK(td_uirr() & (1ull << 3));
	CHECK_EQ(uintr_timer_getoverrun(a), 5);
	/* A send of the pending vector coalesces. */
	atomic_store(&send_now, 1);
	WAIT_UNTIL(atomic_load(&sent));
	uintr_poll();
	atomic_store(&tt_count[3], 0);
	atomic_store(&td_nevents, 0);
	uintr_stui();
	CHECK_EQ(atomic_load(&tt_count[3]), 1);
	CHECK_EQ(atomic_load(&tt_overrun[3]), 5);
	TD_CHECK_EVENTS(3);

	/* Two timers due at one poll point: priority, 7 before 3. */
	uintr_clui();
	t0 = tt_ns(CLOCK_MONOTONIC) + 2 * MS;
	tt_arm(a, TIMER_ABSTIME, t0, 0);
	tt_arm(b, TIMER_ABSTIME, t0 + MS, 0);
	WAIT_UNTIL(tt_ns(CLOCK_MONOTONIC) >= t0 + 2 * MS);
	atomic_store(&td_nevents, 0);
	uintr_stui();
	CHECK_EQ(atomic_load(&td_nevents), 0); /* not polled yet: nothing recognized */
	CHECK_EQ(uintr_poll(), 2);
	TD_CHECK_EVENTS(7, 3);
	CHECK_EQ(atomic_load(&tt_overrun[3]), 0);

	/* A one-shot timer: due once, and the poll points made no syscall
	 * to see it (no notification, no signal). */
	tt_arm(b, 0, 1 * MS, 0);
	WAIT_UNTIL(atomic_load(&tt_count[7]) == 2 || (uintr_poll(), 0));
	CHECK(uintr_get_stats(&st, 0) == 0);
	CHECK_EQ(st.notifications, 0);

	t_join(th);
	CHECK(uintr_timer_delete(a) == 0);
	CHECK(uintr_timer_delete(b) == 0);
	uintr_clui();
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
