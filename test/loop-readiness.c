/*
 * The event-loop state (uintr_loop_fd(3), uintr(7) "Event loops"): the
 * loop fd is readable exactly when something was posted and not yet
 * drained, and uintr_loop_drain() runs the handler for it, with the usual
 * rules: coalescing (three posts of a vector, one delivery), highest vector
 * first, UIF = 0 leaves the vector recognized (delivered at STUI, not by a
 * later drain), and uintr_set_polling(1) keeps the loop busy (senders post
 * without making the fd readable; leaving polling delivers).  Handlers run
 * only inside the drain, never asynchronously.  uintr_wait still works in
 * this state and leaves the receiver in it.  Each uintr_loop_fd() call
 * gives a new close-on-exec fd with the same readiness.  Errnos: not a
 * receiver -> EOPNOTSUPP, flags -> EINVAL, drain before uintr_loop_fd ->
 * EINVAL.
 */
#include "helpers-loop.h"

#include <fcntl.h>

static void *not_receiver(void *arg)
{
	(void)arg;
	CHECK_ERR(uintr_loop_fd(0), EOPNOTSUPP);
	CHECK_ERR(uintr_loop_drain(0), EOPNOTSUPP);
	return NULL;
}

int main(void)
{
	static const int v5[] = { 5 }, v9[] = { 9 }, many[] = { 5, 9, 5, 5 };
	struct uintr_state st;
	struct epoll_event ev;
	pthread_t s;
	int lfd, lfd2, ep, v;

	for (v = 0; v < UINTR_MAX_VECTORS; v++)
		tl_fds[v] = -1;
	t_join(t_start(not_receiver, NULL));
	CHECK(uintr_register_handler(tl_handler, 0) == 0);
	CHECK_ERR(uintr_loop_drain(0), EINVAL); /* not in the state yet */
	CHECK_ERR(uintr_loop_fd(1), EINVAL);
	tl_fds[5] = uintr_create_fd(5, 0);
	tl_fds[9] = uintr_create_fd(9, 0);
	CHECK(tl_fds[5] >= 0 && tl_fds[9] >= 0);

	lfd = uintr_loop_fd(0);
	lfd2 = uintr_loop_fd(0);
	CHECK(lfd >= 0 && lfd2 >= 0 && lfd != lfd2);
	CHECK(fcntl(lfd, F_GETFD) & FD_CLOEXEC);
	CHECK(fcntl(lfd2, F_GETFD) & FD_CLOEXEC);
	CHECK_ERR(uintr_loop_drain(1), EINVAL);
	CHECK(!tl_readable(lfd, 0));
	CHECK_EQ(uintr_loop_drain(0), 0); /* nothing posted: nothing run */
	uintr_stui();
	s = t_start(tl_sender, NULL);

	/* One post: readable (both fds), nothing delivered until the drain. */
	tl_post(1, v5);
	TL_WAIT_READABLE(lfd);
	CHECK(tl_readable(lfd2, 0));
	CHECK_EQ(tl_total, 0);
	CHECK_EQ(uintr_loop_drain(0), 1);
	CHECK_EQ(tl_count[5], 1);
	CHECK(!tl_readable(lfd, 0));
	CHECK(!tl_readable(lfd2, 0));
	CHECK_EQ(uintr_loop_drain(0), 0);
	CHECK_EQ(tl_total, 1);

	/* 5, 9, 5, 5 before a drain: one delivery each, 9 first. */
	tl_post(4, many);
	TL_WAIT_READABLE(lfd);
	CHECK_EQ(tl_total, 1);
	CHECK_EQ(uintr_loop_drain(0), 2);
	CHECK_EQ(tl_total, 3);
	CHECK_EQ(tl_norder, 3);
	CHECK_EQ(tl_order[1], 9);
	CHECK_EQ(tl_order[2], 5);
	CHECK(!tl_readable(lfd, 0));

	/* UIF = 0: the drain recognizes only; STUI delivers. */
	uintr_clui();
	tl_post(1, v9);
	TL_WAIT_READABLE(lfd);
	CHECK_EQ(uintr_loop_drain(0), 0);
	CHECK(!tl_readable(lfd, 0));
	CHECK(uintr_read_state(&st) == 0);
	CHECK_EQ(st.uirr, 1ull << 9);
	CHECK_EQ(uintr_loop_drain(0), 0); /* recognized, not posted: stays */
	CHECK_EQ(tl_count[9], 1);
	uintr_stui();
	CHECK_EQ(tl_count[9], 2);
	CHECK(uintr_read_state(&st) == 0);
	CHECK_EQ(st.uirr, 0);

	/* Busy (polling): the post makes no fd readable; leaving delivers. */
	CHECK(uintr_set_polling(1) == 0);
	tl_post(1, v5);
	CHECK(!tl_readable(lfd, 0));
	CHECK_EQ(tl_count[5], 2);
	CHECK(uintr_set_polling(0) == 0);
	CHECK_EQ(tl_count[5], 3);
	CHECK(!tl_readable(lfd, 0));

	/* Busy from inside a drain: uintr_loop_drain while polling keeps SN. */
	CHECK(uintr_set_polling(1) == 0);
	CHECK_EQ(uintr_loop_drain(0), 0);
	tl_post(1, v9);
	CHECK(!tl_readable(lfd, 0));
	CHECK_EQ(uintr_loop_drain(0), 1); /* drains PIR without readiness */
	CHECK_EQ(tl_count[9], 3);
	CHECK(uintr_set_polling(0) == 0);

	/* An epoll set with the fd: the post wakes epoll_wait. */
	ep = tl_epoll_with(lfd);
	CHECK_EQ(tl_epoll_wait(ep, &ev, 1, 0), 0);
	tl_post(1, v9);
	CHECK_EQ(tl_epoll_wait(ep, &ev, 1, 20000), 1);
	CHECK_EQ(ev.data.fd, lfd);
	CHECK_EQ(uintr_loop_drain(0), 1);
	CHECK_EQ(tl_epoll_wait(ep, &ev, 1, 0), 0);
	CHECK_EQ(tl_count[9], 4);

	/* uintr_wait in the event-loop state: the post (which made the fd
	 * readable) ends it and is delivered by it; the readiness it leaves
	 * is stale (the drain finds nothing).  Afterwards the state is the
	 * loop's again. */
	CHECK_EQ(tl_total, 7);
	tl_post(1, v5);
	CHECK_ERR(uintr_wait(0), EINTR);
	CHECK_EQ(tl_count[5], 4);
	CHECK(tl_readable(lfd, 0));
	CHECK_EQ(uintr_loop_drain(0), 0);
	CHECK(!tl_readable(lfd, 0));
	tl_post(1, v5);
	TL_WAIT_READABLE(lfd);
	CHECK_EQ(tl_count[5], 4);
	CHECK_EQ(uintr_loop_drain(0), 1);
	CHECK_EQ(tl_count[5], 5);
	CHECK_EQ(tl_total, 9);

	atomic_store(&tl_stop, 1);
	t_join(s);
	CHECK(close(ep) == 0);
	CHECK(close(lfd2) == 0);
	/* Closing the caller's fds leaves the state alone. */
	CHECK_EQ(uintr_loop_drain(0), 0);
	CHECK(uintr_unregister_handler(0) == 0);
	CHECK_ERR(uintr_loop_drain(0), EOPNOTSUPP);
	/* The fd outlives the receiver and is never readable again. */
	CHECK(!tl_readable(lfd, 0));
	CHECK(close(lfd) == 0);
	CHECK(close(tl_fds[5]) == 0);
	CHECK(close(tl_fds[9]) == 0);
	return T_PASS;
}
