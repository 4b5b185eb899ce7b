/*
 * uintr_wait with an interrupt posted before the call and not yet
 * delivered (reference 2.6: it counts as arriving during the call, issue
 * 12; README: with UIF = 0 it returns -1/EINTR as soon as something is
 * pending, without delivering).  The receiver blocks the
 * notification signal so the post stays in the UPID.
 *  A: UIF = 1; the sender posts vector 4; uintr_wait returns -1/EINTR at
 *     once, after running the handler exactly once.
 *  B: UIF = 0; the sender posts vector 5; uintr_wait returns -1/EINTR at
 *     once without running the handler; UIRR shows vector 5; STUI then
 *     delivers it.
 * The notification signals, unblocked at the end, deliver nothing more.
 */
#include "helpers-delivery.h"

static _Atomic int fd4 = -1, fd5 = -1, handled;
static struct t_chan to_main, to_receiver;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

/* Have the main thread post through index i and wait until it has. */
static void post(int i)
{
	char b = (char)i;

	CHECK(write(to_main.wr, &b, 1) == 1);
	t_chan_wait(&to_receiver);
}

static void *receiver(void *arg)
{
	struct uintr_stats st;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd4 = uintr_create_fd(4, 0);
	fd5 = uintr_create_fd(5, 0);
	CHECK(fd4 >= 0 && fd5 >= 0);
	td_mask_notifications(SIG_BLOCK);
	t_chan_post(&to_main);

	/* A: UIF = 1. */
	uintr_stui();
	post(0);
	CHECK_EQ(handled, 0);
	CHECK_ERR(uintr_wait(0), EINTR);
	CHECK_EQ(handled, 1);
	TD_CHECK_EVENTS(4);
	CHECK_EQ(td_uirr(), 0);

	/* B: UIF = 0. */
	uintr_clui();
	post(1);
	CHECK_ERR(uintr_wait(0), EINTR);
	CHECK_EQ(handled, 1);
	CHECK_EQ(td_uirr(), 1ull << 5);
	CHECK_EQ(uintr_testui(), 0);
	uintr_stui();
	CHECK_EQ(handled, 2);
	TD_CHECK_EVENTS(4, 5);
	CHECK_EQ(td_uirr(), 0);

	/* The deferred notification signals find nothing left to deliver. */
	td_mask_notifications(SIG_UNBLOCK);
	td_syscall();
	CHECK_EQ(handled, 2);
	CHECK(uintr_get_stats(&st, 0) == 0);
	CHECK_EQ(st.delivered, 2);
	CHECK_EQ(st.spurious, 0);
	t_chan_post(&to_main);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx[2], k;
	char b;

	t_chan_init(&to_main);
	t_chan_init(&to_receiver);
	t = t_start(receiver, NULL);
	t_chan_wait(&to_main);
	idx[0] = uintr_register_sender(fd4, 0);
	idx[1] = uintr_register_sender(fd5, 0);
	CHECK(idx[0] >= 0 && idx[1] >= 0);
	for (k = 0; k < 2; k++) {
		CHECK(read(to_main.rd, &b, 1) == 1);
		CHECK(b == 0 || b == 1);
		uintr_senduipi((unsigned long long)idx[(int)b]);
		t_chan_post(&to_receiver);
	}
	t_chan_wait(&to_main);
	t_join(t);
	CHECK_EQ(handled, 2);
	return T_PASS;
}
