/*
 * Timer vectors end uintr_wait: a receiver blocked in its futex sleep is
 * woken by its timer (the kernel timer that stands in for the poll points
 * while it sleeps), and one in the poll phase sees the deadline at its
 * poll points (no notification).  Each wait returns -1/EINTR after
 * exactly one delivery.  Both for a polling and a non-polling receiver.
 */
#include "helpers-timer.h"

#define MS 1000000ull

static void wait_one(int id, int v, unsigned long long spin_ns)
{
	unsigned long long before = atomic_load(&tt_count[v]);

	CHECK(uintr_set_wait_spin(spin_ns) == 0);
	tt_arm(id, 0, 5 * MS, 0);
	while (atomic_load(&tt_count[v]) == before)
		CHECK_ERR(uintr_wait(0), EINTR);
	CHECK_EQ(atomic_load(&tt_count[v]), before + 1);
}

int main(void)
{
	struct uintr_stats st;
	int a;

	tt_init();
	CHECK(uintr_register_handler(tt_handler, 0) == 0);
	a = tt_timer(5, CLOCK_MONOTONIC, NULL);
	uintr_stui();

	wait_one(a, 5, 0);                /* futex sleep, not polling */
	wait_one(a, 5, 2000000000ull);    /* poll phase, not polling */
	CHECK(uintr_set_polling(1) == 0);
	wait_one(a, 5, 0);                /* futex sleep, polling: kernel timer meanwhile */
	CHECK(uintr_get_stats(&st, 0) == 0);
	wait_one(a, 5, 2000000000ull);    /* poll phase, polling */
	{
		struct uintr_stats st2;

		CHECK(uintr_get_stats(&st2, 0) == 0);
		CHECK_EQ(st2.notifications, st.notifications);
	}
	CHECK_EQ(atomic_load(&tt_count[5]), 4);
	CHECK(uintr_timer_delete(a) == 0);
	uintr_clui();
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
