/*
 * SENDUIPI is async-signal-safe (README: the post is "lock-free,
 * allocation-free, async-signal-safe"; reference 5.1: a single
 * instruction): a sender thread's SIGUSR1 handler calls uintr_senduipi;
 * the main thread triggers it 100 times with pthread_kill, one at a time,
 * waiting for each delivery: exactly 100 SIGUSR1 handler runs and exactly
 * 100 deliveries.
 */
#include "helpers-delivery.h"

#define ROUNDS 100

static _Atomic int ufd = -1, receiver_ready, sender_ready, stop, handled, usr1_calls;
static _Atomic int bad_vector;
static int sender_index = -1;
static _Atomic int sender_stop;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector != 21)
		bad_vector = 1;
	atomic_fetch_add(&handled, 1);
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr1_calls, 1);
	uintr_senduipi((unsigned long long)sender_index);
}

static void *receiver(void *arg)
{
	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(21, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	receiver_ready = 1;
	WAIT_UNTIL(stop);
	td_syscall();
	CHECK_EQ(handled, ROUNDS);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

static void *sender(void *arg)
{
	(void)arg;
	sender_index = uintr_register_sender(ufd, 0);
	CHECK(sender_index >= 0);
	sender_ready = 1;
	WAIT_UNTIL(sender_stop); /* SIGUSR1 interrupts this loop */
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t r, s;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);

	r = t_start(receiver, NULL);
	WAIT_UNTIL(receiver_ready);
	s = t_start(sender, NULL);
	WAIT_UNTIL(sender_ready);
	for (i = 0; i < ROUNDS; i++) {
		CHECK(pthread_kill(s, SIGUSR1) == 0);
		WAIT_UNTIL(handled == i + 1);
		CHECK_EQ(usr1_calls, i + 1);
	}
	sender_stop = 1;
	t_join(s);
	stop = 1;
	t_join(r);
	CHECK_EQ(handled, ROUNDS);
	CHECK_EQ(usr1_calls, ROUNDS);
	CHECK_EQ(bad_vector, 0);
	return T_PASS;
}
