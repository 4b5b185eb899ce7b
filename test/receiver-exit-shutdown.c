/*
 * Issue item 7, reference 2.2 and 2.7 (after unregister or thread exit:
 * SN set, "senders' SENDUIPI still succeeds silently ... no IPI"; new
 * uintr_register_sender on those fds -> ESHUTDOWN; re-registering makes a
 * new UPID and old fds stay dead).
 *
 * 1. A receiver thread returns (its exit is the library's thread exit):
 *    sends through the entry made before are harmless: no crash, nothing
 *    delivered, no notification signal reaches any thread (the process-wide
 *    notification and spurious counts do not move, none is pending);
 *    registering a sender on its fd, from a thread not yet connected,
 *    fails ESHUTDOWN (also through a dup).
 * 2. The same after uintr_unregister_handler by a thread that stays alive;
 *    then the thread registers again: the old entry still reaches nothing
 *    (its new registration sees no notification), the old fd still says
 *    ESHUTDOWN, a new fd for the same vector works.
 */
#include "helpers-lifetime.h"

static int result;

static void *try_register(void *arg)
{
	result = uintr_register_sender(*(int *)arg, 0);
	if (result < 0)
		result = -errno;
	return NULL;
}

/* uintr_register_sender on a thread with no UITT: index or -errno. */
static int register_fresh(int fd)
{
	t_join(t_start(try_register, &fd));
	return result;
}

static void check_quiet(struct uintr_stats before)
{
	struct uintr_stats now = lt_process_stats();

	CHECK_EQ(now.notifications, before.notifications);
	CHECK_EQ(now.spurious, before.spurious);
	CHECK_EQ(now.delivered, before.delivered);
	CHECK(!lt_sig_pending(uintr_notification_signal()));
}

/* Receiver thread of part 1: returns when told. */
static _Atomic int go1;
static int fd4;
static _Atomic int ready1;

static void *receiver1(void *arg)
{
	static const unsigned int vec[] = { 4 };

	(void)arg;
	lt_become_receiver(1, vec, &fd4);
	uintr_stui();
	ready1 = 1;
	lt_wait_step(&go1, 1);
	return NULL;
}

/* Receiver thread of part 2: steps on command, acknowledges each. */
static _Atomic int go2;
static struct t_chan ack2;
static int fd5, fd5b;
static _Atomic int ready2;

static void *receiver2(void *arg)
{
	static const unsigned int vec[] = { 5 };
	struct uintr_stats st;

	(void)arg;
	lt_become_receiver(1, vec, &fd5);
	uintr_stui();
	ready2 = 1;
	lt_wait_step(&go2, 1);
	CHECK(uintr_unregister_handler(0) == 0);
	t_chan_post(&ack2);
	lt_wait_step(&go2, 2); /* main has sent: any signal is handled by now */
	t_chan_post(&ack2);
	lt_wait_step(&go2, 3);
	lt_become_receiver(1, vec, &fd5b);
	uintr_stui();
	t_chan_post(&ack2);
	lt_wait_step(&go2, 4); /* main has sent through the old entry */
	CHECK(uintr_get_stats(&st, 0) == 0);
	CHECK_EQ(st.notifications, 0);
	CHECK_EQ(st.spurious, 0);
	CHECK_EQ(st.delivered, 0);
	t_chan_post(&ack2);
	lt_wait_step(&go2, 5);
	return NULL;
}

int main(void)
{
	struct uintr_stats before;
	pthread_t t;
	int i, d, idx5b;

	lt_counts_init();

	/* 1: thread exit. */
	t = t_start(receiver1, NULL);
	WAIT_UNTIL(ready1);
	CHECK_EQ(uintr_register_sender(fd4, 0), 0);
	lt_send_wait(0, 4);
	go1 = 1;
	t_join(t);
	before = lt_process_stats();
	for (i = 0; i < 10; i++)
		uintr_senduipi(0);
	getppid();
	check_quiet(before);
	CHECK_EQ(lt_count(4), 1);
	CHECK_EQ(register_fresh(fd4), -ESHUTDOWN);
	d = dup(fd4);
	CHECK(d >= 0);
	CHECK_EQ(register_fresh(d), -ESHUTDOWN);
	CHECK(close(d) == 0);

	/* 2: unregister, the thread lives on. */
	t_chan_init(&ack2);
	t = t_start(receiver2, NULL);
	WAIT_UNTIL(ready2);
	CHECK_EQ(uintr_register_sender(fd5, 0), 1);
	lt_send_wait(1, 5);
	atomic_fetch_add(&go2, 1);
	t_chan_wait(&ack2); /* unregistered */
	before = lt_process_stats();
	for (i = 0; i < 10; i++)
		uintr_senduipi(1);
	atomic_fetch_add(&go2, 1);
	t_chan_wait(&ack2);
	check_quiet(before);
	CHECK_EQ(lt_count(5), 1);
	CHECK_EQ(register_fresh(fd5), -ESHUTDOWN);

	atomic_fetch_add(&go2, 1);
	t_chan_wait(&ack2); /* registered again, new fd5b */
	before = lt_process_stats();
	for (i = 0; i < 10; i++)
		uintr_senduipi(1);
	atomic_fetch_add(&go2, 1);
	t_chan_wait(&ack2); /* it saw nothing */
	check_quiet(before);
	CHECK_EQ(lt_count(5), 1);
	CHECK_EQ(register_fresh(fd5), -ESHUTDOWN);
	idx5b = uintr_register_sender(fd5b, 0);
	CHECK_EQ(idx5b, 2);
	lt_send_wait(idx5b, 5);
	CHECK_EQ(lt_count(5), 2);
	atomic_fetch_add(&go2, 1);
	t_join(t);
	CHECK_EQ(atomic_load(&lt_c->wrong_thread), 0);
	return T_PASS;
}
