/*
 * Safepoints and the watchdog's signal race for the same posts: the
 * receiver reaches a safepoint after a varying stretch of code without
 * one, with a deadline of 2000 ns, so some posts are taken at a safepoint
 * and some by the signal, often both at once.  Over 1000 sends, each
 * waited for (no coalescing), every one is delivered exactly once: the
 * handler never runs more often than the sender has sent.
 */
#include "helpers-safepoint.h"

#define N 1000

static _Atomic int fd = -1, ready, stop, handled, sent, extra;
static volatile unsigned int sink; /* work without a safepoint */

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	if (atomic_fetch_add(&handled, 1) + 1 > atomic_load(&sent))
		extra = 1;
}

static void *receiver(void *arg)
{
	unsigned int seed = 1, i, n;
	struct uintr_stats s;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd = uintr_create_fd(4, 0);
	CHECK(fd >= 0);
	CHECK(uintr_set_safepoints(2000, 0) == 0);
	uintr_stui();
	ready = 1;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		seed = seed * 1103515245u + 12345u;
		n = (seed >> 16) % 16000;
		for (i = 0; i < n; i++)
			sink += i;
		ts_safepoint();
	}
	s = ts_stats();
	CHECK_EQ(s.delivered, N);
	CHECK_EQ(s.spurious, 0);
	fprintf(stderr, "safepoint-race: %d sends, %llu notification signals\n", N,
		s.notifications);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int idx, i;

	WAIT_UNTIL(ready);
	idx = uintr_register_sender(fd, 0);
	CHECK(idx >= 0);
	for (i = 0; i < N; i++) {
		atomic_store(&sent, i + 1);
		uintr_senduipi((unsigned long long)idx);
		WAIT_UNTIL(handled == i + 1);
	}
	stop = 1;
	t_join(t);
	CHECK_EQ(handled, N);
	CHECK_EQ(extra, 0);
	return T_PASS;
}
