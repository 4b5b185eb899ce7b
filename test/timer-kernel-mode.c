/*
 * Timer vectors on a receiver that does not poll: the kernel's timer
 * interrupts the receiver thread itself, which takes the vector as from a
 * send (reference 5.3): asynchronously while UIF = 1, held back while
 * UIF = 0 and coalesced into one delivery, with the expiries in between
 * reported as overruns.  One-shot fires once, periodic until disarmed, a
 * CPU-time clock counts only the receiver's running.  Order between two
 * timers replaces sleeping: once a later one-shot timer has delivered,
 * an earlier (or disarmed) one must have delivered exactly what it will.
 */
#include "helpers-timer.h"

#define MS 1000000ull

static void spin_until(_Atomic unsigned long long *c, unsigned long long n)
{
	WAIT_PROGRESS(atomic_load(c) >= n, tt_ns(CLOCK_MONOTONIC) / 100000000ull);
}

int main(void)
{
	int a, b, cpu;
	unsigned long long t0, t1, before;
	struct itimerspec its;
	struct uintr_stats st;

	tt_init();
	CHECK(uintr_register_handler(tt_handler, 0) == 0);
	a = tt_timer(10, CLOCK_MONOTONIC, NULL);
	b = tt_timer(20, CLOCK_MONOTONIC, NULL);
	uintr_stui();

	/* One-shot: exactly one delivery, then disarmed. */
	tt_arm(a, 0, 2 * MS, 0);
	spin_until(&tt_count[10], 1);
	tt_arm(b, 0, 10 * MS, 0);
	spin_until(&tt_count[20], 1);
	CHECK_EQ(atomic_load(&tt_count[10]), 1);
	CHECK_EQ(atomic_load(&tt_overrun[10]), 0);
	CHECK(uintr_timer_gettime(a, &its) == 0);
	CHECK(its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0);
	CHECK(uintr_get_stats(&st, 0) == 0);
	CHECK(st.notifications == 0); /* fired on this thread: no sender's notification */

	/* Periodic: keeps firing; disarmed, it stops. */
	tt_arm(a, 0, 1 * MS, 1 * MS);
	spin_until(&tt_count[10], 6);
	tt_arm(a, 0, 0, 0);
	before = atomic_load(&tt_count[10]);
	tt_arm(b, 0, 5 * MS, 0);
	spin_until(&tt_count[20], 2);
	CHECK_EQ(atomic_load(&tt_count[10]), before);

	/* UIF = 0: expiries coalesce into one pending vector; the handler
	 * sees them as the overrun. */
	uintr_clui();
	t0 = tt_ns(CLOCK_MONOTONIC);
	tt_arm(a, 0, 1 * MS, 1 * MS);
	before = atomic_load(&tt_count[10]);
	WAIT_UNTIL(tt_ns(CLOCK_MONOTONIC) > t0 + 12 * MS);
	/* At least 10 expiries happened by now: stop it, then let it in. */
	tt_arm(a, 0, 0, 0);
	t1 = tt_ns(CLOCK_MONOTONIC);
	td_syscall();
	CHECK_EQ(atomic_load(&tt_count[10]), before);
	CHECK(td_uirr() & (1ull << 10));
	uintr_stui();
	CHECK_EQ(atomic_load(&tt_count[10]), before + 1);
	/* expiries - 1, bounded by the periods between arming and disarming */
	CHECK(atomic_load(&tt_overrun[10]) >= 9);
	CHECK(atomic_load(&tt_overrun[10]) <= (int)((t1 - t0) / MS));
	CHECK(uintr_timer_getoverrun(a) == atomic_load(&tt_overrun[10]));

	/* A CPU-time clock: 3 ms of this thread's running. */
	cpu = tt_timer(30, CLOCK_THREAD_CPUTIME_ID, NULL);
	tt_arm(cpu, 0, 3 * MS, 0);
	spin_until(&tt_count[30], 1);
	CHECK_EQ(atomic_load(&tt_count[30]), 1);

	CHECK(uintr_timer_delete(a) == 0);
	CHECK(uintr_timer_delete(b) == 0);
	CHECK(uintr_timer_delete(cpu) == 0);
	uintr_clui();
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
