/*
 * The RFC's uintr_wait (reference 2.6, issue 12): an interrupt whose
 * handler already ran before the call does not end the wait.  The
 * receiver (UIF = 1) takes vector 6 asynchronously, outside any wait;
 * then it calls uintr_wait(0), which must block (the thread sleeps, the
 * call has not returned, the handler ran once) until the next send, and
 * then return -1/EINTR after the handler ran a second time.  This is the
 * selftest x86/uintr.c's test_blocking_ipi after its test_base_ipi.
 */
#include "helpers-delivery.h"

static _Atomic int ufd = -1, ready, handled, waiting, returned;
static _Atomic int wait_ret = -2, wait_errno, handled_at_return = -1;
static _Atomic pid_t receiver_tid;
static struct t_chan done;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	int r;

	(void)arg;
	receiver_tid = t_gettid();
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(6, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	ready = 1;
	WAIT_UNTIL(handled == 1); /* delivered asynchronously, not in a wait */
	waiting = 1;
	errno = 0;
	r = uintr_wait(0);
	wait_errno = errno;
	handled_at_return = handled;
	wait_ret = r;
	returned = 1;
	t_chan_wait(&done); /* sleeps too: a wrong early return is seen at once */
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx;

	t_chan_init(&done);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(waiting && t_thread_state(receiver_tid) == 'S');
	CHECK_EQ(returned, 0);
	CHECK_EQ(handled, 1);
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(returned);
	t_chan_post(&done);
	t_join(t);
	CHECK_EQ(wait_ret, -1);
	CHECK_EQ(wait_errno, EINTR);
	CHECK_EQ(handled_at_return, 2);
	CHECK_EQ(handled, 2);
	TD_CHECK_EVENTS(6, 6);
	return T_PASS;
}
