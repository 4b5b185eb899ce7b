/*
 * No lost and no duplicate interrupt across the drain-then-wait window of
 * the event-loop state (uintr_loop_fd(3); the protocol: src/loop.c,
 * model/uintr.pml config loop): three sender threads each post their own
 * vector ROUNDS times, each post only after the loop delivered the
 * previous one, so every post must be delivered exactly once.  The loop
 * (the receiver thread) sleeps in epoll_wait on the loop fd without
 * timeout... but for a 20 s hang guard, and varies what it does around the
 * drain: a plain drain; the busy pattern (uintr_set_polling(1) after the
 * wake-up, work, uintr_set_polling(0) before the next wait); a non-blocking
 * epoll_wait.  A lost wake-up leaves the loop asleep with a post pending
 * (epoll_wait gives up after 20 s: fail); a duplicate makes a vector's
 * deliveries exceed its posts (checked in the handler).
 */
#include "helpers-loop.h"

#define NSEND 3
#define ROUNDS 10000

static int fds[NSEND];
static _Atomic unsigned long long sent[NSEND], delivered[NSEND];
static _Atomic int duplicate;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	unsigned int i = (unsigned int)vector - 1;

	(void)frame;
	if (i >= NSEND || atomic_load(&delivered[i]) + 1 > atomic_load(&sent[i]))
		atomic_store(&duplicate, 1);
	else
		atomic_fetch_add(&delivered[i], 1);
}

static void *sender(void *arg)
{
	int i = (int)(intptr_t)arg, idx = uintr_register_sender(fds[i], 0), k;

	CHECK(idx >= 0);
	for (k = 0; k < ROUNDS; k++) {
		WAIT_PROGRESS(atomic_load(&delivered[i]) == (unsigned long long)k || duplicate,
			      atomic_load(&delivered[0]) + atomic_load(&delivered[1]) +
				      atomic_load(&delivered[2]));
		if (duplicate)
			break;
		atomic_fetch_add(&sent[i], 1);
		uintr_senduipi((unsigned long long)idx);
	}
	return NULL;
}

static unsigned long long total(void)
{
	return atomic_load(&delivered[0]) + atomic_load(&delivered[1]) + atomic_load(&delivered[2]);
}

int main(void)
{
	struct epoll_event ev;
	pthread_t s[NSEND];
	unsigned long long iter = 0;
	int lfd, ep, i;

	CHECK(uintr_register_handler(handler, 0) == 0);
	for (i = 0; i < NSEND; i++) {
		fds[i] = uintr_create_fd((unsigned long long)i + 1, 0);
		CHECK(fds[i] >= 0);
	}
	lfd = uintr_loop_fd(0);
	CHECK(lfd >= 0);
	ep = tl_epoll_with(lfd);
	uintr_stui();
	for (i = 0; i < NSEND; i++)
		s[i] = t_start(sender, (void *)(intptr_t)i);

	while (total() < (unsigned long long)NSEND * ROUNDS && !duplicate) {
		int mode = (int)(iter++ % 3), n;

		if (mode == 2) {
			/* A loop that is busy: look without sleeping. */
			n = tl_epoll_wait(ep, &ev, 1, 0);
			if (n == 0)
				continue;
		} else {
			n = tl_epoll_wait(ep, &ev, 1, 20000);
			if (n == 0) {
				fprintf(stderr, "lost wake-up: asleep 20 s, %llu of %d delivered\n",
					total(), NSEND * ROUNDS);
				return T_FAIL;
			}
		}
		CHECK_EQ(ev.data.fd, lfd);
		if (mode == 1) {
			volatile int work;

			CHECK(uintr_set_polling(1) == 0);
			CHECK(uintr_loop_drain(0) >= 0);
			for (work = 0; work < 1000; work++)
				;
			CHECK(uintr_set_polling(0) == 0);
		} else {
			CHECK(uintr_loop_drain(0) >= 0);
		}
	}
	for (i = 0; i < NSEND; i++)
		t_join(s[i]);
	CHECK_EQ(duplicate, 0);
	for (i = 0; i < NSEND; i++) {
		CHECK_EQ(sent[i], ROUNDS);
		CHECK_EQ(delivered[i], ROUNDS);
	}
	/* Everything was drained: nothing left to make the fd readable but a
	 * stale write (a sender slower than the drain's read): at most one
	 * drain that finds nothing. */
	if (tl_readable(lfd, 0))
		CHECK_EQ(uintr_loop_drain(0), 0);
	CHECK(!tl_readable(lfd, 0));
	CHECK(uintr_unregister_handler(0) == 0);
	CHECK(close(ep) == 0);
	CHECK(close(lfd) == 0);
	return T_PASS;
}
