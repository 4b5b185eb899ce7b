/*
 * A receiver that blocks the notification signal defers delivery (README
 * "Differences from the RFC kernel": as UIF = 0 would; reference 5.1 and
 * 2.4 coalescing): the sender posts the same vector three times while the
 * receiver thread has the signal blocked; after the sender is done, the
 * receiver makes system calls and sees no delivery; unblocking the signal
 * delivers exactly once, before pthread_sigmask returns.
 */
#include "helpers-delivery.h"

static _Atomic int ufd = -1, ready, sent, handled;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	struct uintr_stats st;
	int i;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(17, 0);
	CHECK(ufd >= 0);
	td_mask_notifications(SIG_BLOCK);
	uintr_stui();
	ready = 1;
	WAIT_UNTIL(sent);
	for (i = 0; i < 100; i++) {
		td_syscall();
		CHECK_EQ(handled, 0);
	}
	CHECK_EQ(uintr_testui(), 1);

	td_mask_notifications(SIG_UNBLOCK);
	CHECK_EQ(handled, 1);
	TD_CHECK_EVENTS(17);
	td_syscall();
	CHECK_EQ(handled, 1);
	CHECK(uintr_get_stats(&st, 0) == 0);
	CHECK_EQ(st.notifications, 1);
	CHECK_EQ(st.delivered, 1);
	CHECK_EQ(st.spurious, 0);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int idx, i;

	WAIT_UNTIL(ready);
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	for (i = 0; i < 3; i++)
		uintr_senduipi((unsigned long long)idx);
	sent = 1;
	t_join(t);
	CHECK_EQ(handled, 1);
	return T_PASS;
}
