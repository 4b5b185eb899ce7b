/*
 * UINTR's rules at safepoints (the kernels at -O2):
 *  - priority and coalescing: vectors 3, 9, 3 posted while the receiver
 *    runs uninstrumented code are delivered at the next safepoint (an
 *    instrumented function's entry) as 9 then 3, two deliveries;
 *  - safepoints in a handler are harmless: while the handler of vector 5
 *    spins in an instrumented loop (UIF 0), vector 9 is posted and the
 *    loop passes 10^5 more safepoints with no nested delivery; 9 is
 *    delivered once the handler returns (UIF 1 again);
 * and never a notification signal (deadline 60 s).
 */
#include "plugin.h"

static _Atomic int fds[3] = { -1, -1, -1 }, ready, posted, stage;

static void *receiver(void *arg)
{
	struct uintr_stats s;

	(void)arg;
	tp_receiver_setup(fds, (const int[]){ 3, 9, 5, -1 });
	ready = 1;
	while (!atomic_load(&posted))
		; /* no safepoint here */
	CHECK_EQ(k_handled, 0);
	CHECK_EQ(k_leaf(0), 1); /* its entry delivers 9, then 3 */
	CHECK_EQ(k_handled, 2);
	atomic_store(&stage, 1);
	k_spin_until(&k_handled, 4); /* 5 (which holds), then 9 */
	td_syscall();
	s = ts_stats();
	CHECK_EQ(s.notifications, 0);
	CHECK_EQ(s.delivered, 4);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int i3, i9, i5;
	unsigned long iters;

	WAIT_UNTIL(ready);
	i3 = uintr_register_sender(fds[0], 0);
	i9 = uintr_register_sender(fds[1], 0);
	i5 = uintr_register_sender(fds[2], 0);
	CHECK(i3 >= 0 && i9 >= 0 && i5 >= 0);
	uintr_senduipi((unsigned long long)i3);
	uintr_senduipi((unsigned long long)i9);
	uintr_senduipi((unsigned long long)i3);
	posted = 1;
	WAIT_UNTIL(stage == 1);

	atomic_store(&k_hold, 1);
	uintr_senduipi((unsigned long long)i5);
	WAIT_UNTIL(k_in_handler >= 1);
	uintr_senduipi((unsigned long long)i9);
	iters = atomic_load(&k_hold_iters);
	WAIT_PROGRESS(atomic_load(&k_hold_iters) - iters >= 100000 || k_in_handler != 1,
		      (unsigned long long)atomic_load(&k_hold_iters));
	CHECK_EQ(k_in_handler, 1);
	CHECK_EQ(k_handled, 2);
	atomic_store(&k_hold, 0);
	t_join(t);

	CHECK_EQ(k_handled, 4);
	CHECK_EQ(k_vectors[0], 9);
	CHECK_EQ(k_vectors[1], 3);
	CHECK_EQ(k_vectors[2], 5);
	CHECK_EQ(k_vectors[3], 9);
	CHECK_EQ(k_bad_uif, 0);
	return T_PASS;
}
