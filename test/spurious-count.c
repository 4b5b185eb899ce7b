/*
 * Spurious notifications are counted (reference 6.2: a notification that
 * reaches a thread which is no longer the receiver it was sent to counts
 * as UIS; 2.2: re-registering makes a new UPID, old fds stay dead): the
 * receiver blocks the notification signal; the sender posts (the
 * notification waits as a pending signal); the receiver unregisters and
 * registers again, then unblocks.  uintr_get_stats: thread spurious 1,
 * notifications 0, delivered 0; process spurious 1.  A real send to the
 * new receiver's new fd is then delivered once: thread notifications 1,
 * spurious still 1; process spurious still 1.
 */
#include "helpers-delivery.h"

static _Atomic int old_fd = -1, new_fd = -1, ready, sent, reregistered, handled, done;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	struct uintr_stats st, ps;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	old_fd = uintr_create_fd(3, 0);
	CHECK(old_fd >= 0);
	td_mask_notifications(SIG_BLOCK);
	uintr_stui();
	ready = 1;
	WAIT_UNTIL(sent);

	CHECK(uintr_unregister_handler(0) == 0);
	CHECK(uintr_register_handler(handler, 0) == 0);
	new_fd = uintr_create_fd(3, 0);
	CHECK(new_fd >= 0);
	uintr_stui();
	CHECK(uintr_get_stats(&st, 0) == 0);
	CHECK_EQ(st.notifications, 0);
	CHECK_EQ(st.spurious, 0);
	CHECK(uintr_get_stats(&ps, UINTR_STATS_PROCESS) == 0);
	CHECK_EQ(ps.spurious, 0);

	td_mask_notifications(SIG_UNBLOCK); /* the stale notification arrives */
	td_syscall();
	CHECK_EQ(handled, 0);
	CHECK(uintr_get_stats(&st, 0) == 0);
	CHECK_EQ(st.spurious, 1);
	CHECK_EQ(st.notifications, 0);
	CHECK_EQ(st.delivered, 0);
	CHECK(uintr_get_stats(&ps, UINTR_STATS_PROCESS) == 0);
	CHECK_EQ(ps.spurious, 1);
	CHECK_EQ(ps.delivered, 0);

	reregistered = 1;
	WAIT_UNTIL(handled == 1);
	WAIT_UNTIL(done);
	td_syscall();
	CHECK_EQ(handled, 1);
	TD_CHECK_EVENTS(3);
	CHECK(uintr_get_stats(&st, 0) == 0);
	CHECK_EQ(st.notifications, 1);
	CHECK_EQ(st.delivered, 1);
	CHECK_EQ(st.spurious, 1);
	CHECK(uintr_get_stats(&ps, UINTR_STATS_PROCESS) == 0);
	CHECK_EQ(ps.spurious, 1);
	CHECK_EQ(ps.delivered, 1);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int idx;

	WAIT_UNTIL(ready);
	idx = uintr_register_sender(old_fd, 0);
	CHECK(idx >= 0);
	uintr_senduipi((unsigned long long)idx);
	sent = 1;
	WAIT_UNTIL(reregistered);
	idx = uintr_register_sender(new_fd, 0);
	CHECK(idx >= 0);
	uintr_senduipi((unsigned long long)idx);
	done = 1;
	t_join(t);
	CHECK_EQ(handled, 1);
	return T_PASS;
}
