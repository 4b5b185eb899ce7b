/*
 * uintr_loop_drain() runs the handlers before it reads the eventfd
 * (src/loop.c steps 2 and 3, uintr_loop_drain(3)): a handler that polls
 * the loop fd (timeout 0) finds it still readable, and once the drain
 * returns the fd is not readable.  Every post here is made by a sender
 * thread whose uintr_senduipi() has returned before the loop drains, so no
 * write can land after the drain (the one documented spurious wake-up)
 * and each check below is exact.
 *   1. vectors 3 (posted twice: coalesced) and 7: the drain returns 2, the
 *      handler runs for 7 then 3, and sees the fd readable both times;
 *   2. ten rounds of one post each, the loop asleep in epoll_wait: each
 *      handler run sees the fd readable, each drain leaves it not;
 *   3. the handler of vector 9 calls uintr_loop_drain() itself: the inner
 *      drain returns 0 (UIF = 0 in a handler: it delivers nothing) and
 *      reads the fd, so the handler of 3, run after it by the outer drain,
 *      sees the fd not readable; the outer drain returns 2;
 *   4. a drain with nothing posted returns 0 and leaves errno alone (its
 *      read fails with EAGAIN);
 *   5. the handler of vector 5 unregisters the receiver: the drain still
 *      reads the fd (not readable afterwards), returns 1, and the next
 *      drain fails with EOPNOTSUPP.
 * On the order before (read first, then deliver) every "readable in the
 * handler" check of 1 and 2 fails.
 */
#include "helpers-loop.h"

static int lfd = -1;

/* What the handler saw, per vector: runs, and runs with the fd readable. */
static _Atomic int runs[UINTR_MAX_VECTORS], readable[UINTR_MAX_VECTORS];
static int order[16];
static _Atomic int norder;
static _Atomic int inner_ret = -2, inner_errno, inner_readable_after = -1;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	int n = atomic_load(&norder);

	(void)frame;
	if (n < 16)
		order[n] = (int)vector;
	atomic_store(&norder, n + 1);
	if (tl_readable(lfd, 0))
		atomic_fetch_add(&readable[vector], 1);
	atomic_fetch_add(&runs[vector], 1);
	if (vector == 9) {
		errno = 0;
		atomic_store(&inner_ret, uintr_loop_drain(0));
		atomic_store(&inner_errno, errno);
		atomic_store(&inner_readable_after, tl_readable(lfd, 0));
	} else if (vector == 5) {
		CHECK(uintr_unregister_handler(0) == 0);
	}
}

static void reset(void)
{
	int v;

	for (v = 0; v < UINTR_MAX_VECTORS; v++) {
		atomic_store(&runs[v], 0);
		atomic_store(&readable[v], 0);
	}
	atomic_store(&norder, 0);
}

int main(void)
{
	static const int vec[] = { 3, 5, 7, 9 };
	struct epoll_event ev;
	pthread_t s;
	int ep, i, k;

	for (i = 0; i < UINTR_MAX_VECTORS; i++)
		tl_fds[i] = -1;
	CHECK(uintr_register_handler(handler, 0) == 0);
	for (i = 0; i < 4; i++) {
		tl_fds[vec[i]] = uintr_create_fd((unsigned long long)vec[i], 0);
		CHECK(tl_fds[vec[i]] >= 0);
	}
	lfd = uintr_loop_fd(0);
	CHECK(lfd >= 0);
	ep = tl_epoll_with(lfd);
	uintr_stui();
	s = t_start(tl_sender, NULL);

	/* 1. Two vectors, one coalesced: highest first, fd readable in both runs. */
	{
		static const int p[] = { 3, 7, 3 };

		reset();
		tl_post(3, p);
		CHECK(tl_readable(lfd, 0));
		CHECK_EQ(uintr_loop_drain(0), 2);
		CHECK_EQ(atomic_load(&norder), 2);
		CHECK_EQ(order[0], 7);
		CHECK_EQ(order[1], 3);
		CHECK_EQ(atomic_load(&runs[7]), 1);
		CHECK_EQ(atomic_load(&runs[3]), 1);
		CHECK_EQ(atomic_load(&readable[7]), 1);
		CHECK_EQ(atomic_load(&readable[3]), 1);
		CHECK(!tl_readable(lfd, 0));
	}

	/* 2. The loop asleep in epoll_wait, one post per round. */
	reset();
	for (k = 0; k < 10; k++) {
		static const int p[] = { 7 };

		tl_post(1, p);
		CHECK_EQ(tl_epoll_wait(ep, &ev, 1, 20000), 1);
		CHECK_EQ(ev.data.fd, lfd);
		CHECK_EQ(uintr_loop_drain(0), 1);
		CHECK_EQ(atomic_load(&runs[7]), k + 1);
		CHECK_EQ(atomic_load(&readable[7]), k + 1);
		CHECK(!tl_readable(lfd, 0));
		CHECK_EQ(tl_epoll_wait(ep, &ev, 1, 0), 0);
	}

	/* 3. A handler that drains recursively. */
	{
		static const int p[] = { 9, 3 };

		reset();
		tl_post(2, p);
		CHECK(tl_readable(lfd, 0));
		CHECK_EQ(uintr_loop_drain(0), 2);
		CHECK_EQ(atomic_load(&norder), 2);
		CHECK_EQ(order[0], 9);
		CHECK_EQ(order[1], 3);
		CHECK_EQ(atomic_load(&readable[9]), 1);
		CHECK_EQ(atomic_load(&inner_ret), 0);
		CHECK_EQ(atomic_load(&inner_errno), 0);
		CHECK_EQ(atomic_load(&inner_readable_after), 0);
		CHECK_EQ(atomic_load(&runs[3]), 1);
		CHECK_EQ(atomic_load(&readable[3]), 0);
		CHECK(!tl_readable(lfd, 0));
	}

	/* 4. Nothing posted: 0, errno kept. */
	reset();
	errno = ERANGE;
	CHECK_EQ(uintr_loop_drain(0), 0);
	CHECK_EQ(errno, ERANGE);
	CHECK_EQ(atomic_load(&norder), 0);
	CHECK(!tl_readable(lfd, 0));

	/* 5. The handler unregisters the receiver. */
	{
		static const int p[] = { 5 };

		reset();
		tl_post(1, p);
		CHECK(tl_readable(lfd, 0));
		CHECK_EQ(uintr_loop_drain(0), 1);
		CHECK_EQ(atomic_load(&runs[5]), 1);
		CHECK_EQ(atomic_load(&readable[5]), 1);
		CHECK(!tl_readable(lfd, 0));
		CHECK_ERR(uintr_loop_drain(0), EOPNOTSUPP);
	}

	atomic_store(&tl_stop, 1);
	t_join(s);
	/* Posts to the receiver that is gone make no write (SN is set). */
	CHECK(!tl_readable(lfd, 0));
	CHECK(close(ep) == 0);
	CHECK(close(lfd) == 0);
	return T_PASS;
}
