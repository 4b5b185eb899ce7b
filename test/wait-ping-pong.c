/*
 * uintr_wait_since_last ping-pong (reference 2.6: callers loop "while (!flag)
 * uintr_wait(0)"; 9: the ipc-bench uintrfd-bi-wait harness): two receiver
 * threads, each a sender to the other, exchange 20000 round trips, each
 * side sleeping in uintr_wait_since_last (race-free: issue 12) until its handler sets its flag.  No
 * interrupt is lost (the test ends) and the counts are exact on both
 * sides: 20000 handler runs each, thread stats delivered 20000 each, no
 * spurious notification.  It runs twice: with the default wait policy
 * (a short poll, then sleep) and with uintr_set_wait_spin(0), where every
 * wait that finds nothing sleeps on the futex at once, as in the RFC.
 */
#include "helpers-delivery.h"

#define ROUNDS 20000

static int no_spin; /* phase 2: uintr_set_wait_spin(0) on both sides */

static _Atomic int fd_a = -1, fd_b = -1, a_ready, b_ready, a_sender, b_sender;
static _Atomic int flag_a, flag_b, handled_a, handled_b, bad_vector, done_a, done_b;
static _Atomic unsigned long long delivered_a, delivered_b;

/* Vector 0 is A's, vector 1 is B's. */
static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector == 0) {
		atomic_fetch_add(&handled_a, 1);
		flag_a = 1;
	} else if (vector == 1) {
		atomic_fetch_add(&handled_b, 1);
		flag_b = 1;
	} else {
		bad_vector = 1;
	}
}

static void *thread_a(void *arg)
{
	struct uintr_stats st;
	int idx, i;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd_a = uintr_create_fd(0, 0);
	CHECK(fd_a >= 0);
	if (no_spin)
		CHECK(uintr_set_wait_spin(0) == 0);
	uintr_stui();
	a_ready = 1;
	WAIT_UNTIL(b_ready);
	idx = uintr_register_sender(fd_b, 0);
	CHECK(idx >= 0);
	a_sender = 1;
	WAIT_UNTIL(b_sender);
	for (i = 0; i < ROUNDS; i++) {
		uintr_senduipi((unsigned long long)idx);
		while (!flag_a)
			uintr_wait_since_last(0);
		flag_a = 0;
	}
	CHECK(uintr_get_stats(&st, 0) == 0);
	delivered_a = st.delivered;
	CHECK(uintr_unregister_handler(0) == 0);
	done_a = 1;
	return NULL;
}

static void *thread_b(void *arg)
{
	struct uintr_stats st;
	int idx, i;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd_b = uintr_create_fd(1, 0);
	CHECK(fd_b >= 0);
	if (no_spin)
		CHECK(uintr_set_wait_spin(0) == 0);
	uintr_stui();
	b_ready = 1;
	WAIT_UNTIL(a_ready);
	idx = uintr_register_sender(fd_a, 0);
	CHECK(idx >= 0);
	b_sender = 1;
	WAIT_UNTIL(a_sender);
	for (i = 0; i < ROUNDS; i++) {
		while (!flag_b)
			uintr_wait_since_last(0);
		flag_b = 0;
		uintr_senduipi((unsigned long long)idx);
	}
	CHECK(uintr_get_stats(&st, 0) == 0);
	delivered_b = st.delivered;
	/* Stay a receiver until A has its last interrupt. */
	WAIT_UNTIL(handled_a == ROUNDS);
	CHECK(uintr_unregister_handler(0) == 0);
	done_b = 1;
	return NULL;
}

static void run_phase(void)
{
	pthread_t a, b;
	double until;

	fd_a = fd_b = -1;
	a_ready = b_ready = a_sender = b_sender = 0;
	flag_a = flag_b = handled_a = handled_b = done_a = done_b = 0;
	delivered_a = delivered_b = 0;
	a = t_start(thread_a, NULL);
	b = t_start(thread_b, NULL);
	/* Hang guard: a lost wake-up leaves a thread asleep in uintr_wait. */
	until = t_now() + 20.0;
	while (!(done_a && done_b)) {
		if (t_now() > until) {
			fprintf(stderr, "%s: stuck after %d/%d round trips: flag_a %d flag_b %d\n",
				no_spin ? "no-spin phase" : "default phase", (int)handled_a,
				(int)handled_b, (int)flag_a, (int)flag_b);
			exit(T_FAIL);
		}
		usleep(1000);
	}
	t_join(a);
	t_join(b);
	CHECK_EQ(bad_vector, 0);
	CHECK_EQ(handled_a, ROUNDS);
	CHECK_EQ(handled_b, ROUNDS);
	CHECK_EQ(delivered_a, ROUNDS);
	CHECK_EQ(delivered_b, ROUNDS);
}

int main(void)
{
	struct uintr_stats ps;

	run_phase();
	no_spin = 1;
	run_phase();
	CHECK(uintr_get_stats(&ps, UINTR_STATS_PROCESS) == 0);
	CHECK_EQ(ps.delivered, 4 * ROUNDS);
	CHECK_EQ(ps.spurious, 0);
	return T_PASS;
}
