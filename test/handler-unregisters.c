/*
 * A handler that unregisters its own receiver (reference 2.2: unregister
 * discards UIRR, sets SN, later sends succeed silently and
 * uintr_register_sender on the fds fails with ESHUTDOWN; 6.2 spurious
 * notifications).  With UIF = 0, vectors 8 and 2 are both recognized;
 * STUI delivers 8, whose handler calls uintr_unregister_handler(0)
 * (returns 0).  Vector 2, already in UIRR, is discarded: never delivered.
 * Later sends through both entries are harmless: no delivery, no
 * notification signal at all (the process notification and spurious
 * counters do not move), no crash; registering as a sender on either fd
 * fails with ESHUTDOWN.
 */
#include "helpers-delivery.h"

static _Atomic int fd8 = -1, fd2 = -1, ready, sent, resent, checked, handled;
static _Atomic int unregister_ret = 99, unregister_errno;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
	errno = 0;
	unregister_ret = uintr_unregister_handler(0);
	unregister_errno = errno;
}

static void *receiver(void *arg)
{
	struct uintr_stats ps0, ps1;
	struct uintr_state s;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd8 = uintr_create_fd(8, 0);
	fd2 = uintr_create_fd(2, 0);
	CHECK(fd8 >= 0 && fd2 >= 0);
	ready = 1;
	WAIT_UNTIL(sent);
	td_syscall();
	WAIT_UNTIL(td_uirr() == ((1ull << 8) | (1ull << 2)));
	CHECK_EQ(handled, 0);

	uintr_stui();
	CHECK_EQ(handled, 1);
	TD_CHECK_EVENTS(8);
	CHECK_EQ(unregister_ret, 0);
	CHECK_EQ(unregister_errno, 0);
	CHECK(uintr_read_state(&s) == 0);
	CHECK_EQ(s.handler, 0);
	CHECK_EQ(s.uirr, 0);
	CHECK_ERR(uintr_unregister_handler(0), EINVAL); /* really gone */
	CHECK_ERR(uintr_get_stats(&ps0, 0), EOPNOTSUPP);
	CHECK(uintr_get_stats(&ps0, UINTR_STATS_PROCESS) == 0);
	CHECK_EQ(ps0.spurious, 0);

	/* The receiver is dead: new senders are refused. */
	CHECK_ERR(uintr_register_sender(fd8, 0), ESHUTDOWN);
	CHECK_ERR(uintr_register_sender(fd2, 0), ESHUTDOWN);

	/* Posts after the unregistration notify nobody. */
	checked = 1;
	WAIT_UNTIL(resent);
	td_syscall();
	CHECK_EQ(handled, 1);
	TD_CHECK_EVENTS(8);
	CHECK(uintr_get_stats(&ps1, UINTR_STATS_PROCESS) == 0);
	CHECK_EQ(ps1.notifications, ps0.notifications);
	CHECK_EQ(ps1.spurious, 0);
	CHECK_EQ(ps1.delivered, 1);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int i8, i2, i;

	WAIT_UNTIL(ready);
	i8 = uintr_register_sender(fd8, 0);
	i2 = uintr_register_sender(fd2, 0);
	CHECK(i8 >= 0 && i2 >= 0);
	uintr_senduipi((unsigned long long)i8);
	uintr_senduipi((unsigned long long)i2);
	sent = 1;
	WAIT_UNTIL(checked);
	for (i = 0; i < 10; i++) {
		uintr_senduipi((unsigned long long)i8);
		uintr_senduipi((unsigned long long)i2);
	}
	resent = 1;
	t_join(t);
	CHECK_EQ(handled, 1);
	return T_PASS;
}
