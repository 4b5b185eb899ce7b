/*
 * Priority order (reference 2.3 "vector 63 highest, 0 lowest", 5.3 "one
 * vector per delivery, most significant bit of UIRR first", 5.4 "a pending
 * vector is delivered immediately after UIRET"): with UIF = 0, one sender
 * posts vectors 1, 40, 7, 63, 0 through five fds; once all five are in
 * UIRR, a single STUI runs the handler five times, in the order 63, 40, 7,
 * 1, 0, all before STUI returns.
 */
#include "helpers-delivery.h"

static const int vectors[5] = { 1, 40, 7, 63, 0 };
static _Atomic int fds[5], ready, sent, handled;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	unsigned long long all = 0;
	int i;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	for (i = 0; i < 5; i++) {
		fds[i] = uintr_create_fd((unsigned long long)vectors[i], 0);
		CHECK(fds[i] >= 0);
		all |= 1ull << vectors[i];
	}
	ready = 1;

	WAIT_UNTIL(sent);
	td_syscall();
	WAIT_UNTIL(td_uirr() == all);
	CHECK_EQ(handled, 0);

	uintr_stui();
	CHECK_EQ(handled, 5);
	TD_CHECK_EVENTS(63, 40, 7, 1, 0);
	CHECK_EQ(td_uirr(), 0);
	td_syscall();
	CHECK_EQ(handled, 5);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int idx[5], i;

	WAIT_UNTIL(ready);
	for (i = 0; i < 5; i++) {
		idx[i] = uintr_register_sender(fds[i], 0);
		CHECK_EQ(idx[i], i); /* lowest free UITT index first */
	}
	for (i = 0; i < 5; i++)
		uintr_senduipi((unsigned long long)idx[i]);
	sent = 1;
	t_join(t);
	return T_PASS;
}
