/*
 * UINTR_SIGNAL and signal chaining (uintr.h, uintr_notification_signal;
 * the carrier of reference 5.2 must not steal the program's signal): with
 * UINTR_SIGNAL=40 set before any library call and the program's own
 * SA_SIGINFO handler installed on signal 40 before registering, the
 * library uses signal 40; a signal 40 that is not a notification (a
 * pthread_sigqueue with an ordinary value, a pthread_kill) reaches the
 * program's handler only, and a real notification reaches the user
 * interrupt handler only.  Exact counts on both sides.
 */
#include "helpers-delivery.h"

#define SIG 40

static _Atomic int ufd = -1, prog_calls, uintr_calls, finished;
static _Atomic long long prog_value = -1;
static _Atomic int prog_code, prog_signo;
static _Atomic pid_t receiver_tid;
static struct t_chan to_main, to_receiver;

static void prog_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	prog_signo = sig;
	prog_code = si->si_code;
	prog_value = (long long)(intptr_t)si->si_value.sival_ptr;
	atomic_fetch_add(&prog_calls, 1);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&uintr_calls, 1);
}

static void *receiver(void *arg)
{
	(void)arg;
	receiver_tid = t_gettid();
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(2, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	t_chan_post(&to_main);

	/* 1: sigqueue with an ordinary value. */
	WAIT_UNTIL(prog_calls == 1);
	CHECK_EQ(uintr_calls, 0);
	CHECK_EQ(prog_signo, SIG);
	CHECK_EQ(prog_code, SI_QUEUE);
	CHECK_EQ(prog_value, 1234);
	t_chan_post(&to_main);

	/* 2: pthread_kill. */
	WAIT_UNTIL(prog_calls == 2);
	CHECK_EQ(uintr_calls, 0);
	CHECK_EQ(prog_code, SI_TKILL);
	t_chan_post(&to_main);

	/* 3: a real notification. */
	WAIT_UNTIL(uintr_calls == 1);
	td_syscall();
	CHECK_EQ(prog_calls, 2);
	CHECK_EQ(uintr_calls, 1);
	TD_CHECK_EVENTS(2);
	finished = 1;
	t_chan_wait(&to_receiver);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	union sigval v;
	pthread_t t;
	int idx;

	CHECK(setenv("UINTR_SIGNAL", "40", 1) == 0);
	CHECK(SIG >= SIGRTMIN && SIG <= SIGRTMAX);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prog_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIG, &sa, NULL) == 0);
	t_chan_init(&to_main);
	t_chan_init(&to_receiver);

	t = t_start(receiver, NULL);
	t_chan_wait(&to_main);
	CHECK_EQ(uintr_notification_signal(), SIG);
	CHECK_EQ(prog_calls, 0);
	CHECK_EQ(uintr_calls, 0);

	memset(&v, 0, sizeof(v));
	v.sival_ptr = (void *)(intptr_t)1234;
	CHECK(pthread_sigqueue(t, SIG, v) == 0);
	t_chan_wait(&to_main);

	CHECK(pthread_kill(t, SIG) == 0);
	t_chan_wait(&to_main);

	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(finished);
	t_chan_post(&to_receiver);
	t_join(t);
	CHECK_EQ(prog_calls, 2);
	CHECK_EQ(uintr_calls, 1);
	return T_PASS;
}
