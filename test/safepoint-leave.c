/*
 * Leaving the instrumented state with posts pending: uintr_set_safepoints
 * (0, 0) delivers them before it returns, once each, highest first, with
 * no signal; the word is the static zero again; the next send is
 * delivered by the notification signal, as to any running receiver.
 */
#include "helpers-safepoint.h"

static _Atomic int fd2 = -1, fd4 = -1, ready, sent, handled;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	const volatile unsigned long long *zero = uintr_safepoint_word;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd2 = uintr_create_fd(2, 0);
	fd4 = uintr_create_fd(4, 0);
	CHECK(fd2 >= 0 && fd4 >= 0);
	CHECK(uintr_set_safepoints(TS_NO_DEADLINE, 0) == 0);
	CHECK(uintr_safepoint_word != zero);
	uintr_stui();
	ready = 1;
	WAIT_UNTIL(sent);
	CHECK(ts_word() != 0);
	CHECK_EQ(handled, 0);
	CHECK(uintr_set_safepoints(0, 0) == 0);
	CHECK_EQ(handled, 2);
	TD_CHECK_EVENTS(4, 2);
	CHECK(uintr_safepoint_word == zero);
	CHECK_EQ(ts_stats().notifications, 0);
	CHECK(uintr_set_safepoints(0, 0) == 0); /* not in the state: nothing */
	ready = 2;
	WAIT_UNTIL(handled == 3); /* the signal's delivery */
	TD_CHECK_EVENTS(4, 2, 2);
	CHECK_EQ(ts_stats().notifications, 1);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int i2, i4;

	WAIT_UNTIL(ready);
	i2 = uintr_register_sender(fd2, 0);
	i4 = uintr_register_sender(fd4, 0);
	CHECK(i2 >= 0 && i4 >= 0);
	uintr_senduipi((unsigned long long)i2);
	uintr_senduipi((unsigned long long)i4);
	sent = 1;
	WAIT_UNTIL(ready == 2);
	uintr_senduipi((unsigned long long)i2);
	t_join(t);
	CHECK_EQ(handled, 3);
	return T_PASS;
}
