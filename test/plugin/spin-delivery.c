/* variants: built once per optimization level (plugin/Makefile.inc).
 *
 * A receiver in the instrumented state spins in k_spin_until, a loop with
 * no call compiled with the plugin; 200 sends from another thread are each
 * delivered exactly once, at a safepoint of that loop: no notification
 * signal (notifications 0: the watchdog's deadline is 60 s), the handler
 * runs with UIF 0 and the vector sent, its frame's ip is inside
 * k_spin_until, and UIF is 1 again after each.
 */
#include "plugin.h"

#define N 200

static _Atomic int fds[1] = { -1 }, ready;

static void *receiver(void *arg)
{
	struct uintr_stats s;

	(void)arg;
	tp_receiver_setup(fds, (const int[]){ 6, -1 });
	ready = 1;
	for (int i = 1; i <= N; i++) {
		k_spin_until(&k_handled, i);
		CHECK_EQ(uintr_testui(), 1);
	}
	td_syscall(); /* a notification signal, if one were on its way, lands here */
	s = ts_stats();
	CHECK_EQ(s.notifications, 0);
	CHECK_EQ(s.delivered, N);
	CHECK_EQ(s.spurious, 0);
	CHECK_EQ(ts_word(), 0);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int idx;

	WAIT_UNTIL(ready);
	idx = uintr_register_sender(fds[0], 0);
	CHECK(idx >= 0);
	for (int i = 1; i <= N; i++) {
		uintr_senduipi((unsigned long long)idx);
		WAIT_UNTIL(k_handled >= i);
	}
	t_join(t);
	CHECK_EQ(k_handled, N);
	CHECK_EQ(k_bad_uif, 0);
	for (int i = 0; i < N; i++) {
		CHECK_EQ(k_vectors[i], 6);
		if (!tp_in(k_ips[i], __start_uintr_spin_text, __stop_uintr_spin_text)) {
			fprintf(stderr, "delivery %d: frame ip %#llx outside k_spin_until [%p, %p) (%s)\n",
				i, k_ips[i], (void *)__start_uintr_spin_text,
				(void *)__stop_uintr_spin_text, VARIANT);
			return T_FAIL;
		}
	}
	printf("%d deliveries at safepoints of k_spin_until (%s)\n", N, VARIANT);
	return T_PASS;
}
