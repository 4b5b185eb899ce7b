/*
 * Closing loop fds while the loop waits (uintr_loop_fd(3): "closing the
 * descriptor does not end" the event-loop state; every call gives a new fd
 * with the same readiness).  The main thread is the loop, a helper thread
 * posts (its uintr_senduipi() returns before the loop looks, so counts are
 * exact):
 *   1. the loop sleeps in epoll_wait on lfd2; the helper closes lfd1 (a
 *      duplicate the loop does not watch), then posts: the loop wakes on
 *      lfd2, the drain delivers exactly once, lfd2 is then not readable;
 *   2. with every loop fd closed (no wake-up possible), the helper posts
 *      twice (coalesced); a new uintr_loop_fd() is readable at once: the
 *      post was not lost, the drain delivers exactly once;
 *   3. the state survived: a post while the loop sleeps on the new fd
 *      wakes it, one delivery.
 */
#include "helpers-loop.h"

static int vfd, lfd1, lfd2;
static _Atomic int req, done, asleep;
static pid_t loop_tid;

static void *helper(void *arg)
{
	int idx = uintr_register_sender(vfd, 0), seen = 0;

	(void)arg;
	CHECK(idx >= 0);
	for (;;) {
		WAIT_UNTIL(atomic_load(&req) != seen);
		seen = atomic_load(&req);
		if (seen == 1) {
			/* the loop asleep (or about to be: either way a post
			 * that comes first keeps the fd readable) */
			WAIT_UNTIL(atomic_load(&asleep) && t_thread_state(loop_tid) == 'S');
			CHECK(close(lfd1) == 0);
			uintr_senduipi((unsigned long long)idx);
		} else if (seen == 2) {
			uintr_senduipi((unsigned long long)idx);
			uintr_senduipi((unsigned long long)idx);
		} else if (seen == 3) {
			WAIT_UNTIL(atomic_load(&asleep) && t_thread_state(loop_tid) == 'S');
			uintr_senduipi((unsigned long long)idx);
		} else {
			break;
		}
		atomic_store(&done, seen);
	}
	return NULL;
}

static void sleep_until_readable(int ep, int fd)
{
	struct epoll_event ev;

	atomic_store(&asleep, 1);
	CHECK_EQ(tl_epoll_wait(ep, &ev, 1, 20000), 1);
	atomic_store(&asleep, 0);
	CHECK_EQ(ev.data.fd, fd);
}

int main(void)
{
	pthread_t h;
	int ep, lfd3;

	CHECK(uintr_register_handler(tl_handler, 0) == 0);
	vfd = uintr_create_fd(4, 0);
	CHECK(vfd >= 0);
	lfd1 = uintr_loop_fd(0);
	lfd2 = uintr_loop_fd(0);
	CHECK(lfd1 >= 0 && lfd2 >= 0);
	loop_tid = t_gettid();
	uintr_stui();
	h = t_start(helper, NULL);

	/* 1. */
	ep = tl_epoll_with(lfd2);
	atomic_store(&req, 1);
	sleep_until_readable(ep, lfd2);
	WAIT_UNTIL(atomic_load(&done) == 1);
	CHECK_EQ(uintr_loop_drain(0), 1);
	CHECK_EQ(atomic_load(&tl_count[4]), 1);
	CHECK(!tl_readable(lfd2, 0));
	CHECK(close(ep) == 0);
	CHECK(close(lfd2) == 0);

	/* 2. */
	atomic_store(&req, 2);
	WAIT_UNTIL(atomic_load(&done) == 2);
	CHECK_EQ(atomic_load(&tl_count[4]), 1);
	lfd3 = uintr_loop_fd(0);
	CHECK(lfd3 >= 0);
	CHECK(tl_readable(lfd3, 0));
	CHECK_EQ(uintr_loop_drain(0), 1);
	CHECK_EQ(atomic_load(&tl_count[4]), 2);
	CHECK(!tl_readable(lfd3, 0));

	/* 3. */
	ep = tl_epoll_with(lfd3);
	atomic_store(&req, 3);
	sleep_until_readable(ep, lfd3);
	WAIT_UNTIL(atomic_load(&done) == 3);
	CHECK_EQ(uintr_loop_drain(0), 1);
	CHECK_EQ(atomic_load(&tl_count[4]), 3);
	CHECK(!tl_readable(lfd3, 0));
	CHECK_EQ(atomic_load(&tl_total), 3);

	atomic_store(&req, 4);
	t_join(h);
	CHECK(uintr_unregister_handler(0) == 0);
	CHECK(close(ep) == 0);
	CHECK(close(lfd3) == 0);
	CHECK(close(vfd) == 0);
	return T_PASS;
}
