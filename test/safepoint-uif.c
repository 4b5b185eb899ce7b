/*
 * A safepoint with UIF = 0 only recognizes: posts of vectors 1, 5, 3, 5, 1
 * are in UIRR after one uintr_safepoint(), coalesced to three bits, the
 * word is 0 again and no handler has run; STUI delivers 5, 3, 1, once
 * each.  A safepoint inside a handler (UIF = 0) delivers nothing there.
 * A safepoint in a signal handler on the receiver thread delivers, as a
 * notification there would.  No notification signal is taken.
 */
#include "helpers-safepoint.h"

static _Atomic int fd[6] = {-1, -1, -1, -1, -1, -1}, ready, sent, sent2, handled;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	uintr_safepoint(); /* UIF = 0: recognizes, delivers nothing here */
	atomic_fetch_add(&handled, 1);
}

static void on_usr1(int signo)
{
	(void)signo;
	td_record(100);
	ts_safepoint();
	td_record(101);
}

static void *receiver(void *arg)
{
	unsigned long long want = (1ull << 1) | (1ull << 3) | (1ull << 5);

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd[1] = uintr_create_fd(1, 0);
	fd[3] = uintr_create_fd(3, 0);
	fd[5] = uintr_create_fd(5, 0);
	CHECK(fd[1] >= 0 && fd[3] >= 0 && fd[5] >= 0);
	CHECK(uintr_set_safepoints(TS_NO_DEADLINE, 0) == 0);
	CHECK_EQ(uintr_testui(), 0);
	ready = 1;
	WAIT_UNTIL(sent);
	CHECK(ts_word() != 0);
	ts_safepoint();
	CHECK_EQ(ts_word(), 0);
	CHECK_EQ(td_uirr(), want);
	CHECK_EQ(handled, 0);
	ts_safepoint(); /* nothing posted: nothing happens */
	CHECK_EQ(td_uirr(), want);
	uintr_stui();
	CHECK_EQ(handled, 3);
	TD_CHECK_EVENTS(5, 3, 1);
	CHECK_EQ(td_uirr(), 0);

	/* In a signal handler on this thread, UIF = 1. */
	WAIT_UNTIL(sent2);
	CHECK(ts_word() != 0);
	CHECK(raise(SIGUSR1) == 0);
	CHECK_EQ(handled, 4);
	TD_CHECK_EVENTS(5, 3, 1, 100, 3, 101);
	CHECK_EQ(ts_stats().notifications, 0);
	CHECK_EQ(ts_stats().delivered, 4);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i1, i3, i5;

	signal(SIGUSR1, on_usr1);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	i1 = uintr_register_sender(fd[1], 0);
	i3 = uintr_register_sender(fd[3], 0);
	i5 = uintr_register_sender(fd[5], 0);
	CHECK(i1 >= 0 && i3 >= 0 && i5 >= 0);
	uintr_senduipi((unsigned long long)i1);
	uintr_senduipi((unsigned long long)i5);
	uintr_senduipi((unsigned long long)i3);
	uintr_senduipi((unsigned long long)i5);
	uintr_senduipi((unsigned long long)i1);
	sent = 1;
	WAIT_UNTIL(handled == 3);
	uintr_senduipi((unsigned long long)i3);
	sent2 = 1;
	t_join(t);
	return T_PASS;
}
