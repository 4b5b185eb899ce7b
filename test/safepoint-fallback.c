/*
 * The fallback of the instrumented state: the receiver spins in a loop
 * with no safepoint (uninstrumented code); each of 10 sends is still
 * delivered, by the notification signal the watchdog sends once the
 * deadline (UINTR_SAFEPOINT_DEADLINE_NS=1000000 through
 * UINTR_SAFEPOINT_DEFAULT) passed: exactly one notification and one
 * delivery per send, and the safepoint word is 0 again after each.
 */
#include "helpers-safepoint.h"

#define K 10

static _Atomic int fd = -1, ready, handled, go;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	atomic_fetch_add(&handled, 1);
}

/* No call, no safepoint: the code the plugin did not compile. */
__attribute__((noinline)) static void spin_until(int n)
{
	while (atomic_load_explicit(&handled, memory_order_relaxed) < n)
		;
}

static void *receiver(void *arg)
{
	struct uintr_stats s;
	int i;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd = uintr_create_fd(2, 0);
	CHECK(fd >= 0);
	CHECK(uintr_set_safepoints(UINTR_SAFEPOINT_DEFAULT, 0) == 0);
	uintr_stui();
	ready = 1;
	for (i = 1; i <= K; i++) {
		spin_until(i);
		CHECK_EQ(ts_word(), 0);
		s = ts_stats();
		CHECK_EQ(s.notifications, i);
		CHECK_EQ(s.delivered, i);
		atomic_store(&go, i);
	}
	td_syscall(); /* a second signal, if one were on its way, lands here */
	s = ts_stats();
	CHECK_EQ(s.notifications, K);
	CHECK_EQ(s.delivered, K);
	CHECK_EQ(s.spurious, 0);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx, i;

	CHECK(setenv("UINTR_SAFEPOINT_DEADLINE_NS", "1000000", 1) == 0);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	idx = uintr_register_sender(fd, 0);
	CHECK(idx >= 0);
	for (i = 1; i <= K; i++) {
		uintr_senduipi((unsigned long long)idx);
		WAIT_UNTIL(go == i);
	}
	t_join(t);
	CHECK_EQ(handled, K);
	return T_PASS;
}
