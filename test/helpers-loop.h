/*
 * Shared by the tests of the event-loop state (uintr_loop_fd(3)): a
 * handler that counts deliveries per vector and records their order, and
 * readiness checks of the loop fd.
 */
#ifndef UINTR_TEST_HELPERS_LOOP_H
#define UINTR_TEST_HELPERS_LOOP_H

#include <poll.h>
#include <sys/epoll.h>

#include "helpers.h"

#define TL_MAX_EVENTS 64

static _Atomic unsigned long long tl_count[UINTR_MAX_VECTORS];
static _Atomic unsigned long long tl_total;
static int tl_order[TL_MAX_EVENTS];
static _Atomic int tl_norder;

/* total is written last: a waiter on it sees the per-vector count. */
static inline void tl_handler(struct uintr_frame *frame, unsigned long long vector)
{
	int n = atomic_load(&tl_norder);

	(void)frame;
	if (n < TL_MAX_EVENTS)
		tl_order[n] = (int)vector;
	atomic_store(&tl_norder, n + 1);
	atomic_fetch_add(&tl_count[vector], 1);
	atomic_fetch_add(&tl_total, 1);
}

/* Is fd readable within ms milliseconds (0: now)?  A timeout is only a
 * hang guard where the test waits for readiness that must come. */
static inline int tl_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	CHECK(n >= 0);
	return n == 1 && (p.revents & POLLIN);
}

/* Wait (20 s hang guard) for the loop fd to become readable. */
#define TL_WAIT_READABLE(fd) CHECK(tl_readable((fd), 20000))

/* epoll_wait on an epoll set, retried on EINTR (the library's own signal
 * may interrupt it, e.g. a uintr_fd release notice); returns events. */
static inline int tl_epoll_wait(int ep, struct epoll_event *ev, int max, int ms)
{
	int n;

	do
		n = epoll_wait(ep, ev, max, ms);
	while (n < 0 && errno == EINTR);
	CHECK(n >= 0);
	return n;
}

static inline int tl_epoll_with(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	CHECK(ep >= 0);
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
	return ep;
}

/* A sender thread (tl_sender) that posts the vectors of a request, in
 * order, through the uintr_fds in tl_fds (-1: none), and tl_post(), which
 * hands it a request and returns once its uintr_senduipi() calls have:
 * every post is complete before the test looks. */
#define TL_MAX_REQUEST 8
static int tl_fds[UINTR_MAX_VECTORS];
static int tl_req_vec[TL_MAX_REQUEST], tl_req_n;
static _Atomic int tl_req_seq, tl_done_seq, tl_stop;

static inline void *tl_sender(void *arg)
{
	int idx[UINTR_MAX_VECTORS], v, seen = 0, i;

	(void)arg;
	for (v = 0; v < UINTR_MAX_VECTORS; v++)
		idx[v] = tl_fds[v] >= 0 ? uintr_register_sender(tl_fds[v], 0) : -1;
	for (;;) {
		WAIT_UNTIL(atomic_load(&tl_req_seq) != seen || atomic_load(&tl_stop));
		if (atomic_load(&tl_stop))
			break;
		seen = atomic_load(&tl_req_seq);
		for (i = 0; i < tl_req_n; i++) {
			CHECK(idx[tl_req_vec[i]] >= 0);
			uintr_senduipi((unsigned long long)idx[tl_req_vec[i]]);
		}
		atomic_store(&tl_done_seq, seen);
	}
	return NULL;
}

static inline void tl_post(int n, const int *vecs)
{
	int i, s = atomic_load(&tl_req_seq) + 1;

	CHECK(n <= TL_MAX_REQUEST);
	for (i = 0; i < n; i++)
		tl_req_vec[i] = vecs[i];
	tl_req_n = n;
	atomic_store(&tl_req_seq, s);
	WAIT_UNTIL(atomic_load(&tl_done_seq) == s);
}

#endif
