/*
 * The later ABI's uintr_wait(usec, flags) (reference 3): 0 when the
 * timeout passes with nothing delivered; -1/EINTR after the handler ran
 * when an interrupt comes during the call (the RFC's rule for what ends a
 * wait, 2.6: one posted before the call counts, one handled before it does
 * not).
 *  1. Nothing sent: uintr_later_wait(20000, 0) returns 0, handler not run.
 *  2. An interrupt handled before the call: the wait still times out (0).
 *  3. The receiver sleeps in uintr_later_wait(10^9, 0) (1000 s); a send
 *     ends it: -1/EINTR, the handler ran once, before the return.
 *  4. An interrupt posted while the notification signal is blocked, not
 *     delivered: uintr_later_wait(10^9, 0) returns -1/EINTR at once.
 */
#include "helpers-delivery.h"

static _Atomic int ufd = -1, ready, handled, phase, returned, handled_at_return = -1;
static _Atomic pid_t receiver_tid;
static struct t_chan posted;

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
	CHECK_EQ(uintr_later_register_handler(handler, UINTR_HANDLER_FLAG_WAITING_RECEIVER), 0);
	ufd = uintr_later_vector_fd(2, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	ready = 1;

	/* 1 */
	CHECK_EQ(uintr_later_wait(20000, 0), 0);
	CHECK_EQ(handled, 0);

	/* 2 */
	phase = 2;
	WAIT_UNTIL(handled == 1);
	CHECK_EQ(uintr_later_wait(20000, 0), 0);
	CHECK_EQ(handled, 1);

	/* 3 */
	phase = 3;
	CHECK_ERR(uintr_later_wait(1000000000ull, 0), EINTR);
	handled_at_return = handled;
	returned = 1;

	/* 4 */
	td_mask_notifications(SIG_BLOCK);
	phase = 4;
	t_chan_wait(&posted);
	CHECK_ERR(uintr_later_wait(1000000000ull, 0), EINTR);
	CHECK_EQ(handled, 3);
	td_mask_notifications(SIG_UNBLOCK);
	td_syscall();
	CHECK_EQ(handled, 3);
	CHECK_EQ(uintr_later_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx;

	t_chan_init(&posted);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	idx = uintr_later_register_sender(ufd, 0);
	CHECK_EQ(idx, 0);
	WAIT_UNTIL(phase == 2);
	uintr_senduipi(0);
	WAIT_UNTIL(phase == 3 && t_thread_state(receiver_tid) == 'S');
	CHECK_EQ(returned, 0);
	CHECK_EQ(handled, 1);
	uintr_senduipi(0);
	WAIT_UNTIL(returned);
	CHECK_EQ(handled_at_return, 2);
	WAIT_UNTIL(phase == 4);
	uintr_senduipi(0);
	t_chan_post(&posted);
	t_join(t);
	TD_CHECK_EVENTS(2, 2, 2);
	return T_PASS;
}
