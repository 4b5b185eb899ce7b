/* variants: built once per optimization level (plugin/Makefile.inc).
 *
 * What the plugin leaves alone has no safepoint: with an interrupt posted
 * to the instrumented receiver (deadline 60 s, so only a safepoint can
 * deliver it), a loop of 10^6 iterations in a function with
 * __attribute__((uintr_no_safepoint)), one with no_instrument_function,
 * and one in a file excluded by -fplugin-arg-uintr_safepoint-exclude= run
 * to the end with nothing delivered (the word still nonzero); the next
 * instrumented function entry (k_leaf, a leaf with no loop) delivers it,
 * exactly once.
 */
#include "plugin.h"

static _Atomic int fds[1] = { -1 }, ready, posted;

static void *receiver(void *arg)
{
	struct uintr_stats s;

	(void)arg;
	tp_receiver_setup(fds, (const int[]){ 3, -1 });
	ready = 1;
	/* Uninstrumented (this driver is not compiled with the plugin). */
	while (!atomic_load(&posted))
		;
	CHECK(ts_word() != 0);
	CHECK_EQ(k_loop_attr(1000000) == k_loop_attr(1000000), 1);
	CHECK_EQ(k_handled, 0);
	CHECK(k_loop_noinstr(1000000) != -1);
	CHECK_EQ(k_handled, 0);
	CHECK(k_loop_file(1000000) != -1);
	CHECK_EQ(k_handled, 0);
	CHECK(ts_word() != 0);
	CHECK_EQ(k_leaf(1), 4);
	CHECK_EQ(k_handled, 1);
	CHECK_EQ(ts_word(), 0);
	CHECK_EQ(k_leaf(2), 7);
	td_syscall();
	s = ts_stats();
	CHECK_EQ(s.notifications, 0);
	CHECK_EQ(s.delivered, 1);
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
	uintr_senduipi((unsigned long long)idx);
	posted = 1;
	t_join(t);
	CHECK_EQ(k_handled, 1);
	CHECK_EQ(k_vectors[0], 3);
	CHECK_EQ(k_bad_uif, 0);
	return T_PASS;
}
