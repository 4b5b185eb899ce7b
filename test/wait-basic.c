/*
 * uintr_wait (reference 2.6: blocks until a user interrupt is received and
 * "returns only when ... the interrupt handler returned", always -1/EINTR;
 * 6.3): a receiver with UIF = 1 blocks in uintr_wait(0) (the main thread
 * sees it sleeping); a send of vector 7 wakes it; the handler runs exactly
 * once, with vector 7, before uintr_wait returns -1 with errno EINTR.
 */
#include "helpers-delivery.h"

static _Atomic int ufd = -1, ready, waiting, handled, returned;
static _Atomic int handled_at_return = -1, wait_ret = -2, wait_errno, returned_in_handler = -1;
static _Atomic pid_t receiver_tid;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	returned_in_handler = returned;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	int r;

	(void)arg;
	receiver_tid = t_gettid();
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(7, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	ready = 1;
	waiting = 1;
	errno = 0;
	r = uintr_wait(0);
	wait_errno = errno;
	handled_at_return = handled;
	wait_ret = r;
	returned = 1;
	td_syscall();
	CHECK_EQ(handled, 1);
	CHECK_EQ(uintr_testui(), 1);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int idx;

	WAIT_UNTIL(ready);
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	WAIT_UNTIL(waiting && t_thread_state(receiver_tid) == 'S');
	CHECK_EQ(handled, 0);
	CHECK_EQ(returned, 0);
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(returned);
	t_join(t);
	CHECK_EQ(wait_ret, -1);
	CHECK_EQ(wait_errno, EINTR);
	CHECK_EQ(handled_at_return, 1);
	CHECK_EQ(returned_in_handler, 0);
	CHECK_EQ(handled, 1);
	TD_CHECK_EVENTS(7);
	return T_PASS;
}
