/*
 * uintr_wait_since_last (the race-free extension, issue 12): it returns
 * at once when an interrupt was delivered since the previous wait
 * returned (since the registration, for the first call), and otherwise
 * waits as uintr_wait does.  The receiver (UIF = 1):
 *  1. takes vector 8 asynchronously, then calls uintr_wait_since_last(0):
 *     -1/EINTR at once, nothing more delivered;
 *  2. calls it again: nothing was delivered since 1 returned, so it
 *     blocks (the thread sleeps) until the next send, and returns
 *     -1/EINTR after the handler ran;
 *  3. takes vector 8 asynchronously again and calls it once more: at
 *     once, the delivery came after 2 returned (the RFC's uintr_wait
 *     would block here: wait-after-handled-blocks).
 */
#include "helpers-delivery.h"

static _Atomic int ufd = -1, ready, handled, phase, returned2;
static _Atomic pid_t receiver_tid;
static struct t_chan go3, done;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	(void)arg;
	receiver_tid = t_gettid();
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(8, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	ready = 1;

	/* 1 */
	WAIT_UNTIL(handled == 1);
	CHECK_ERR(uintr_wait_since_last(0), EINTR);
	CHECK_EQ(handled, 1);

	/* 2 */
	phase = 2;
	CHECK_ERR(uintr_wait_since_last(0), EINTR);
	CHECK_EQ(handled, 2);
	returned2 = 1;

	/* 3 */
	t_chan_wait(&go3);
	WAIT_UNTIL(handled == 3);
	CHECK_ERR(uintr_wait_since_last(0), EINTR);
	CHECK_EQ(handled, 3);
	t_chan_wait(&done);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx;

	t_chan_init(&go3);
	t_chan_init(&done);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	uintr_senduipi((unsigned long long)idx); /* 1 */
	WAIT_UNTIL(phase == 2 && t_thread_state(receiver_tid) == 'S');
	CHECK_EQ(returned2, 0);
	CHECK_EQ(handled, 1);
	uintr_senduipi((unsigned long long)idx); /* 2 */
	WAIT_UNTIL(returned2);
	uintr_senduipi((unsigned long long)idx); /* 3 */
	t_chan_post(&go3);
	t_chan_post(&done);
	t_join(t);
	CHECK_EQ(handled, 3);
	TD_CHECK_EVENTS(8, 8, 8);
	return T_PASS;
}
