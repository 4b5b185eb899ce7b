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

#endif
