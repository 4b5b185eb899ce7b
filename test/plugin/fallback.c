/*
 * The fallback with plugin-built code: a receiver in the instrumented
 * state (deadline 1 ms) runs instrumented code that calls code with no
 * safepoint (k_spin_until_excluded, a loop with no call), where each of
 * 10 sends is delivered by the notification signal the watchdog sends,
 * exactly once (notifications = deliveries = sends); back in
 * instrumented code its safepoints find nothing more to deliver, and a
 * system call after the last send takes no second signal.
 */
#include "plugin.h"

#define K 10

static _Atomic int fd = -1, ready, go;

/* Code with no safepoint.  Under ThreadSanitizer, the driver's own loop
 * (not built with the plugin either): TSan runs an asynchronous signal's
 * handler only when the thread next enters its runtime, which its atomics
 * do and the uninstrumented kernels never would. */
static void spin_uninstrumented(int n)
{
#if T_TSAN
	while (atomic_load_explicit(&k_handled, memory_order_relaxed) < n)
		;
#else
	k_spin_until_excluded(&k_handled, n);
#endif
}

static void *receiver(void *arg)
{
	struct uintr_stats s;

	(void)arg;
	CHECK(uintr_register_handler(k_handler, 0) == 0);
	fd = uintr_create_fd(8, 0);
	CHECK(fd >= 0);
	CHECK(uintr_set_safepoints(1000000, 0) == 0);
	uintr_stui();
	ready = 1;
	for (int i = 1; i <= K; i++) {
		CHECK_EQ(k_leaf(i), 3 * i + 1); /* instrumented: nothing is posted yet */
		atomic_store(&go, i);
		spin_uninstrumented(i);
		CHECK_EQ(ts_word(), 0);
		k_spin_until(&k_handled, i); /* instrumented: returns at once */
		s = ts_stats();
		CHECK_EQ(s.notifications, i);
		CHECK_EQ(s.delivered, i);
	}
	td_syscall();
	s = ts_stats();
	CHECK_EQ(s.notifications, K);
	CHECK_EQ(s.delivered, K);
	CHECK_EQ(s.spurious, 0);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int idx;

	WAIT_UNTIL(ready);
	idx = uintr_register_sender(fd, 0);
	CHECK(idx >= 0);
	for (int i = 1; i <= K; i++) {
		WAIT_UNTIL(go == i);
		uintr_senduipi((unsigned long long)idx);
		WAIT_UNTIL(k_handled >= i);
	}
	t_join(t);
	CHECK_EQ(k_handled, K);
	for (int i = 0; i < K; i++)
		CHECK_EQ(k_vectors[i], 8);
	CHECK_EQ(k_bad_uif, 0);
	return T_PASS;
}
