/*
 * One-way notification latency by ping-pong (RTT / 2).
 *
 * Side A (0) takes a timestamp, notifies B, waits to be notified back and
 * takes a second timestamp; side B (1) waits and notifies back.  Every
 * mechanism is a pair of operations, notify(me) and await(me), plugged into
 * one loop (pingpong() below, inlined with the operations, so no indirect
 * call is measured).  Each direction has its own channel (Stefan Hajnoczi's
 * criticism of the RFC's eventfd benchmark: one eventfd per direction, no
 * shared write-back), every blocking wait is a plain blocking call, every
 * spin loop uses the same cpu_relax().
 *
 * After the timed rounds, a few more rounds count the syscalls of each
 * notify (util.c: syscall-entry records of the thread matched to a window
 * around each notify; a window in which one of our handlers ran is
 * discarded, since the handler's rt_sigreturn belongs to the other
 * direction).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uintr.h"

enum { UM_POLL, UM_ASYNC, UM_WAIT, UM_WAIT_BLOCK };

/* libuintr's default wait spin (include/uintr.h), and its environment
 * override: futex-spin spins exactly as long as uintr_wait does. */
static double g_wait_spin_ns = 30000;
static __thread int t_me;

typedef void (*op_fn)(struct shared *sh, int me);

static inline struct side *peer_of(struct shared *sh, int me)
{
	return &sh->side[me ^ 1];
}

/* One notify inside a counted window. */
static ALWAYS_INLINE void counted_notify(struct shared *sh, int me, struct counting *c,
					 op_fn notify)
{
	struct side *s = &sh->side[me];
	uint64_t h0 = atomic_load(&s->handled);
	struct window *w = &c->w[c->n];

	w->begin = mono_ns();
	notify(sh, me);
	w->end = mono_ns();
	w->skip = atomic_load(&s->handled) != h0;
	if (c->n + 1 < c->cap)
		c->n++;
}

/* The handler rows (eventfd-epoll-h, uintr-epoll-handler): A's round ends
 * at the entry of its handler (the stamp below), and B answers from its
 * handler, so each half of the round trip runs from a notify to the entry
 * of the peer's handler.  B's counted notifies are made there, through
 * t_hcount. */
static __thread uint64_t t_hstamp;
static __thread struct counting *t_hcount;

static ALWAYS_INLINE void pingpong_at(struct shared *sh, int me, op_fn notify, op_fn await,
				      int at_handler)
{
	/* The sampler is opened only for the counting rounds: while it is
	 * attached, every syscall of the thread takes the kernel's slower
	 * traced path. */
	struct counting c = {.cap = 0};
	int want_count = sh->count_rounds && g_count_ok, counting = 0;
	uint64_t i;

	barrier_wait(&sh->bar, 2);
	if (me == 0) {
		uint64_t total = sh->warm + sh->n, kept = 0;
		uint64_t start = now_ticks();

		for (i = 0; i < total; i++) {
			uint64_t t0 = now_ticks(), t1;

			notify(sh, 0);
			await(sh, 0);
			t1 = at_handler ? t_hstamp : now_ticks();
			if (i >= sh->warm) {
				sh->samples[kept++] = t1 - t0;
				sh->kept = kept; /* usable even if a later round hangs */
			}
			if ((i & 15) == 0) {
				atomic_store_explicit(&sh->progress, i, memory_order_relaxed);
				if (t1 - start > sh->cap_ticks && kept > 0)
					break;
			}
		}
		sh->kept = kept;
		if (want_count && counting_begin(&c, sh->count_rounds) == 0) {
			atomic_store(&sh->ctl, CTL_COUNT);
			for (i = 0; i < sh->count_rounds; i++) {
				counted_notify(sh, 0, &c, notify);
				await(sh, 0);
				atomic_store_explicit(&sh->progress, total + i, memory_order_relaxed);
			}
			counting_end(&c, &sh->side[0]);
		}
		atomic_store(&sh->ctl, CTL_STOP);
		notify(sh, 0);
		atomic_store(&sh->finished, 1);
	} else if (at_handler) {
		/* B's handler notifies; from the first await after CTL_COUNT
		 * on, it counts (one counted notify fewer than A's). */
		for (;;) {
			if ((atomic_load(&sh->ctl) & CTL_COUNT) && want_count) {
				counting = counting_begin(&c, sh->count_rounds) == 0;
				want_count = 0;
				if (counting)
					t_hcount = &c;
			}
			await(sh, 1);
			if (atomic_load(&sh->ctl) & CTL_STOP)
				break;
		}
		t_hcount = NULL;
		if (counting)
			counting_end(&c, &sh->side[1]);
	} else {
		for (;;) {
			uint32_t ctl;

			await(sh, 1);
			ctl = atomic_load(&sh->ctl);
			if (ctl & CTL_STOP)
				break;
			if ((ctl & CTL_COUNT) && want_count) {
				/* once, before the first counted send */
				counting = counting_begin(&c, sh->count_rounds) == 0;
				want_count = 0;
			}
			if ((ctl & CTL_COUNT) && counting)
				counted_notify(sh, 1, &c, notify);
			else
				notify(sh, 1);
		}
		if (counting)
			counting_end(&c, &sh->side[1]);
	}
}

static ALWAYS_INLINE void pingpong(struct shared *sh, int me, op_fn notify, op_fn await)
{
	pingpong_at(sh, me, notify, await, 0);
}

/* The handler of the handler rows: A stamps the end of its round trip, B
 * answers at once (not after the stop: A no longer waits). */
static ALWAYS_INLINE void h_entry(struct shared *sh, int me, op_fn notify)
{
	struct side *s = &sh->side[me];

	if (me == 0)
		t_hstamp = now_ticks();
	else if (!(atomic_load(&sh->ctl) & CTL_STOP)) {
		if (t_hcount)
			counted_notify(sh, 1, t_hcount, notify);
		else
			notify(sh, 1);
	}
	atomic_store(&s->flag, 1);
	atomic_store_explicit(&s->handled,
			      atomic_load_explicit(&s->handled, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static void publish_self(struct shared *sh, int me)
{
	t_me = me;
	sh->side[me].tid = gettid_();
	sh->side[me].pid = getpid();
}

/* ---- cacheline: both sides spin on one shared line ---------------------- */

static ALWAYS_INLINE void cl_notify(struct shared *sh, int me)
{
	atomic_store(&sh->turn, (uint64_t)(me ^ 1) + 1);
}

static ALWAYS_INLINE void cl_await(struct shared *sh, int me)
{
	while (atomic_load(&sh->turn) != (uint64_t)me + 1)
		cpu_relax();
}

static void side_cacheline(struct shared *sh, int me)
{
	publish_self(sh, me);
	pingpong(sh, me, cl_notify, cl_await);
}

/* ---- futex: FUTEX_WAIT / FUTEX_WAKE, one word per direction ------------ */

static inline long futex(_Atomic uint32_t *w, int op, uint32_t val, int procs)
{
	return syscall(SYS_futex, w, op | (procs ? 0 : FUTEX_PRIVATE_FLAG), val, NULL, NULL, 0);
}

static ALWAYS_INLINE void fx_notify(struct shared *sh, int me)
{
	struct side *p = peer_of(sh, me);

	atomic_store(&p->fword, 1);
	futex(&p->fword, FUTEX_WAKE, 1, sh->procs);
}

static ALWAYS_INLINE void fx_await(struct shared *sh, int me)
{
	struct side *s = &sh->side[me];

	while (atomic_load(&s->fword) == 0)
		futex(&s->fword, FUTEX_WAIT, 0, sh->procs);
	atomic_store(&s->fword, 0);
}

static void side_futex(struct shared *sh, int me)
{
	publish_self(sh, me);
	pingpong(sh, me, fx_notify, fx_await);
}

/* ---- futex-spin: spin as long as uintr_wait does, then FUTEX_WAIT; the
 * notifier makes the FUTEX_WAKE syscall only for a waiter that sleeps --- */

static ALWAYS_INLINE void fs_notify(struct shared *sh, int me)
{
	struct side *p = peer_of(sh, me);

	atomic_store(&p->fword, 1);            /* seq_cst: Dekker with the waiter */
	if (atomic_load(&p->sleeping))
		futex(&p->fword, FUTEX_WAKE, 1, sh->procs);
}

static ALWAYS_INLINE void fs_await(struct shared *sh, int me)
{
	struct side *s = &sh->side[me];
	uint64_t deadline = now_ticks() + ns_to_ticks(g_wait_spin_ns);
	unsigned int k = 0;

	while (atomic_load(&s->fword) == 0) {
		cpu_relax();
		if ((++k & 63) == 0 && now_ticks() >= deadline) {
			atomic_store(&s->sleeping, 1);
			while (atomic_load(&s->fword) == 0)
				futex(&s->fword, FUTEX_WAIT, 0, sh->procs);
			atomic_store(&s->sleeping, 0);
			break;
		}
	}
	atomic_store(&s->fword, 0);
}

static void side_futex_spin(struct shared *sh, int me)
{
	publish_self(sh, me);
	pingpong(sh, me, fs_notify, fs_await);
}

/* ---- eventfd: one per direction, blocking read / write ----------------- */

static void prep_eventfd(struct shared *sh)
{
	int i;

	for (i = 0; i < 2; i++) {
		sh->side[i].efd = eventfd(0, EFD_CLOEXEC);
		if (sh->side[i].efd < 0)
			bench_fail("eventfd: %s", strerror(errno));
	}
}

static ALWAYS_INLINE void ev_notify(struct shared *sh, int me)
{
	uint64_t one = 1;

	if (write(peer_of(sh, me)->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		bench_fail("eventfd write: %s", strerror(errno));
}

static ALWAYS_INLINE void ev_await(struct shared *sh, int me)
{
	uint64_t v;

	if (read(sh->side[me].efd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		bench_fail("eventfd read: %s", strerror(errno));
}

static void side_eventfd(struct shared *sh, int me)
{
	publish_self(sh, me);
	pingpong(sh, me, ev_notify, ev_await);
}

/* ---- pipe (one per direction) and socketpair (stream, one byte) --------- */

static void prep_pipe(struct shared *sh)
{
	int i, p[2];

	for (i = 0; i < 2; i++) {
		if (pipe2(p, O_CLOEXEC) != 0)
			bench_fail("pipe2: %s", strerror(errno));
		sh->side[i].rfd = p[0]; /* side i reads here */
		sh->side[i].wfd = p[1]; /* its peer writes here */
	}
}

static void prep_socketpair(struct shared *sh)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		bench_fail("socketpair: %s", strerror(errno));
	/* Each side owns one end; each direction has its own buffer. */
	sh->side[0].rfd = sv[0];
	sh->side[1].wfd = sv[0];
	sh->side[1].rfd = sv[1];
	sh->side[0].wfd = sv[1];
}

static ALWAYS_INLINE void pipe_notify(struct shared *sh, int me)
{
	char c = 'x';

	if (write(peer_of(sh, me)->wfd, &c, 1) != 1)
		bench_fail("write: %s", strerror(errno));
}

/* socketpair: we write into our own end, the byte arrives at the peer's. */
static ALWAYS_INLINE void sock_notify(struct shared *sh, int me)
{
	char c = 'x';

	if (write(sh->side[me].rfd, &c, 1) != 1)
		bench_fail("write: %s", strerror(errno));
}

static ALWAYS_INLINE void fd_await(struct shared *sh, int me)
{
	char c;

	if (read(sh->side[me].rfd, &c, 1) != 1)
		bench_fail("read: %s", strerror(errno));
}

static void side_pipe(struct shared *sh, int me)
{
	publish_self(sh, me);
	pingpong(sh, me, pipe_notify, fd_await);
}

static void side_socketpair(struct shared *sh, int me)
{
	publish_self(sh, me);
	pingpong(sh, me, sock_notify, fd_await);
}

/* ---- POSIX message queues: one per direction ---------------------------- */

static void prep_mq(struct shared *sh)
{
	struct mq_attr a;
	char name[64];
	int i;

	memset(&a, 0, sizeof(a));
	a.mq_maxmsg = 4;
	a.mq_msgsize = 8;
	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "/uintr-bench.%d.%d", (int)getpid(), i);
		sh->side[i].mq = (int)mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &a);
		if (sh->side[i].mq < 0)
			bench_fail("mq_open %s: %s", name, strerror(errno));
		mq_unlink(name); /* the descriptors keep the queue */
	}
}

static ALWAYS_INLINE void mq_notify_(struct shared *sh, int me)
{
	if (mq_send((mqd_t)peer_of(sh, me)->mq, "x", 1, 0) != 0)
		bench_fail("mq_send: %s", strerror(errno));
}

static ALWAYS_INLINE void mq_await(struct shared *sh, int me)
{
	char buf[8];

	if (mq_receive((mqd_t)sh->side[me].mq, buf, sizeof(buf), NULL) != 1)
		bench_fail("mq_receive: %s", strerror(errno));
}

static void side_mq(struct shared *sh, int me)
{
	publish_self(sh, me);
	pingpong(sh, me, mq_notify_, mq_await);
}

/* ---- signals: to a running (spinning) thread, to one in sigwaitinfo ---- */

#define SIG_RUNNING SIGUSR1
#define SIG_WAITING SIGUSR2

static void on_signal(int sig)
{
	struct side *s = &g_sh->side[t_me];

	(void)sig;
	atomic_store(&s->flag, 1);
	atomic_store_explicit(&s->handled,
			      atomic_load_explicit(&s->handled, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static void prep_signal_running(struct shared *sh)
{
	struct sigaction sa;

	(void)sh;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIG_RUNNING, &sa, NULL) != 0)
		bench_fail("sigaction: %s", strerror(errno));
}

static ALWAYS_INLINE void sig_notify(struct shared *sh, int me)
{
	struct side *p = peer_of(sh, me);

	if (tgkill_(p->pid, p->tid, SIG_RUNNING) != 0)
		bench_fail("tgkill: %s", strerror(errno));
}

static ALWAYS_INLINE void flag_await(struct shared *sh, int me)
{
	struct side *s = &sh->side[me];

	while (!atomic_load(&s->flag))
		cpu_relax();
	atomic_store(&s->flag, 0);
}

static void side_signal_running(struct shared *sh, int me)
{
	publish_self(sh, me);
	pingpong(sh, me, sig_notify, flag_await);
}

static sigset_t g_waitset;

/* Blocked in every thread (the mask is inherited by threads and fork). */
static void prep_signal_wait(struct shared *sh)
{
	(void)sh;
	sigemptyset(&g_waitset);
	sigaddset(&g_waitset, SIG_WAITING);
	if (pthread_sigmask(SIG_BLOCK, &g_waitset, NULL) != 0)
		bench_fail("pthread_sigmask");
}

static ALWAYS_INLINE void sigw_notify(struct shared *sh, int me)
{
	struct side *p = peer_of(sh, me);

	if (tgkill_(p->pid, p->tid, SIG_WAITING) != 0)
		bench_fail("tgkill: %s", strerror(errno));
}

static ALWAYS_INLINE void sigw_await(struct shared *sh, int me)
{
	(void)sh;
	(void)me;
	while (sigwaitinfo(&g_waitset, NULL) != SIG_WAITING)
		;
}

static void side_signal_wait(struct shared *sh, int me)
{
	publish_self(sh, me);
	pingpong(sh, me, sigw_notify, sigw_await);
}

/* ---- libuintr ----------------------------------------------------------
 * Each side is a receiver (vector = its side number, so the handler knows
 * whose flag to set) and a sender to the other side's fd. */

static void on_uintr(struct uintr_frame *frame, unsigned long long vector)
{
	struct side *s = &g_sh->side[vector & 1];

	(void)frame;
	atomic_store(&s->flag, 1);
	atomic_store_explicit(&s->handled,
			      atomic_load_explicit(&s->handled, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static void uintr_become_receiver(struct shared *sh, int me, uintr_handler_t handler)
{
	if (uintr_register_handler(handler, 0) != 0)
		bench_fail("uintr_register_handler: %s", strerror(errno));
	sh->side[me].ufd = uintr_create_fd((unsigned long long)me, 0);
	if (sh->side[me].ufd < 0)
		bench_fail("uintr_create_fd: %s", strerror(errno));
}

/* Processes: A (the runner) becomes a receiver before fork, so B inherits
 * A's uintr_fd; B's fd, made after fork, comes back over a socketpair. */
static void prefork_uintr(struct shared *sh)
{
	uintr_become_receiver(sh, 0, on_uintr);
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sh->sock) != 0)
		bench_fail("socketpair: %s", strerror(errno));
}

static void uintr_setup_with(struct shared *sh, int me, int mode, uintr_handler_t handler)
{
	int peer_fd, idx;

	publish_self(sh, me);
	if (!sh->procs) {
		uintr_become_receiver(sh, me, handler);
		barrier_wait(&sh->bar, 2);
		peer_fd = peer_of(sh, me)->ufd;
	} else if (me == 1) {
		uintr_become_receiver(sh, 1, handler);
		if (send_fd(sh->sock[1], sh->side[1].ufd) != 0)
			bench_fail("send_fd: %s", strerror(errno));
		peer_fd = sh->side[0].ufd; /* inherited */
	} else {
		peer_fd = recv_fd(sh->sock[0]);
		if (peer_fd < 0)
			bench_fail("recv_fd: %s", strerror(errno));
	}
	idx = uintr_register_sender(peer_fd, 0);
	if (idx < 0)
		bench_fail("uintr_register_sender: %s", strerror(errno));
	sh->side[me].idx = idx;
	if (mode == UM_POLL && uintr_set_polling(1) != 0)
		bench_fail("uintr_set_polling: %s", strerror(errno));
	if (mode == UM_WAIT_BLOCK && uintr_set_wait_spin(0) != 0)
		bench_fail("uintr_set_wait_spin: %s", strerror(errno));
	uintr_stui();
}

static void uintr_setup(struct shared *sh, int me, int mode)
{
	uintr_setup_with(sh, me, mode, on_uintr);
}

static ALWAYS_INLINE void u_notify(struct shared *sh, int me)
{
	uintr_senduipi((unsigned long long)sh->side[me].idx);
}

static ALWAYS_INLINE void u_await_poll(struct shared *sh, int me)
{
	struct side *s = &sh->side[me];

	while (!atomic_load(&s->flag))
		uintr_poll();
	atomic_store(&s->flag, 0);
}

static ALWAYS_INLINE void u_await_wait(struct shared *sh, int me)
{
	struct side *s = &sh->side[me];

	while (!atomic_load(&s->flag))
		uintr_wait_since_last(0);
	atomic_store(&s->flag, 0);
}

static void side_uintr_poll(struct shared *sh, int me)
{
	uintr_setup(sh, me, UM_POLL);
	pingpong(sh, me, u_notify, u_await_poll);
}

/* Asynchronous: the receiver spins on a flag only the handler sets. */
static void side_uintr_async(struct shared *sh, int me)
{
	uintr_setup(sh, me, UM_ASYNC);
	pingpong(sh, me, u_notify, flag_await);
}

static void side_uintr_wait(struct shared *sh, int me)
{
	uintr_setup(sh, me, UM_WAIT);
	pingpong(sh, me, u_notify, u_await_wait);
}

static void side_uintr_wait_block(struct shared *sh, int me)
{
	uintr_setup(sh, me, UM_WAIT_BLOCK);
	pingpong(sh, me, u_notify, u_await_wait);
}

/* ---- event loops (issue 15): each side blocks in epoll_wait on one fd --
 * eventfd-epoll: the fd is the side's eventfd, read once epoll says so;
 * uintr-epoll: the fd is uintr_loop_fd(), drained by uintr_loop_drain(),
 * which runs the handler (that sets the flag).  Same loop, same wake-up
 * (one fd in one epoll set), only the notification differs. */
static __thread int t_ep = -1;

static int epoll_on(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		bench_fail("epoll: %s", strerror(errno));
	return ep;
}

static ALWAYS_INLINE void epoll_block(void)
{
	struct epoll_event ev;
	int n;

	do
		n = epoll_wait(t_ep, &ev, 1, -1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		bench_fail("epoll_wait: %s", strerror(errno));
}

static ALWAYS_INLINE void evep_await(struct shared *sh, int me)
{
	epoll_block();
	ev_await(sh, me);
}

static void side_eventfd_epoll(struct shared *sh, int me)
{
	publish_self(sh, me);
	t_ep = epoll_on(sh->side[me].efd);
	pingpong(sh, me, ev_notify, evep_await);
}

/* eventfd-epoll-msg: the eventfd loop as a program that passes data uses
 * it: the sender stores a one-word message in shared memory (fword, on
 * its own line) before its write, and the woken loop takes it with an
 * exchange after its read.  That moves the message's cache line to the
 * sender and back per message, as a post moves the receiver's UPID line
 * (its PIR RMW, then the drain's status CAS and PIR exchange), so the
 * pair differs only in the mechanism, not in the data it carries. */
static ALWAYS_INLINE void evmsg_notify(struct shared *sh, int me)
{
	atomic_store(&peer_of(sh, me)->fword, 1);
	ev_notify(sh, me);
}

static ALWAYS_INLINE void evmsg_await(struct shared *sh, int me)
{
	epoll_block();
	ev_await(sh, me);
	if (atomic_exchange(&sh->side[me].fword, 0) != 1)
		bench_fail("eventfd-epoll-msg: woken with no message");
}

static void side_eventfd_epoll_msg(struct shared *sh, int me)
{
	publish_self(sh, me);
	t_ep = epoll_on(sh->side[me].efd);
	pingpong(sh, me, evmsg_notify, evmsg_await);
}

static ALWAYS_INLINE void u_await_epoll(struct shared *sh, int me)
{
	struct side *s = &sh->side[me];

	while (!atomic_load(&s->flag)) {
		epoll_block();
		if (uintr_loop_drain(0) < 0)
			bench_fail("uintr_loop_drain: %s", strerror(errno));
	}
	atomic_store(&s->flag, 0);
}

static void side_uintr_epoll(struct shared *sh, int me)
{
	int lfd;

	uintr_setup(sh, me, UM_ASYNC);
	lfd = uintr_loop_fd(0);
	if (lfd < 0)
		bench_fail("uintr_loop_fd: %s", strerror(errno));
	t_ep = epoll_on(lfd);
	pingpong(sh, me, u_notify, u_await_epoll);
}

/* eventfd-epoll-h / uintr-epoll-handler: the same loops, timed at the
 * entry of the handler rather than when the wake-up is over.  The eventfd
 * loop reads its eventfd, then calls the handler; uintr_loop_drain runs
 * it before its own read of the loop's eventfd. */
static ALWAYS_INLINE void evep_await_h(struct shared *sh, int me)
{
	epoll_block();
	ev_await(sh, me);
	h_entry(sh, me, ev_notify);
	atomic_store(&sh->side[me].flag, 0);
}

static void side_eventfd_epoll_h(struct shared *sh, int me)
{
	publish_self(sh, me);
	t_ep = epoll_on(sh->side[me].efd);
	pingpong_at(sh, me, ev_notify, evep_await_h, 1);
}

static void on_uintr_h(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	h_entry(g_sh, (int)(vector & 1), u_notify);
}

static void side_uintr_epoll_h(struct shared *sh, int me)
{
	int lfd;

	uintr_setup_with(sh, me, UM_ASYNC, on_uintr_h);
	lfd = uintr_loop_fd(0);
	if (lfd < 0)
		bench_fail("uintr_loop_fd: %s", strerror(errno));
	t_ep = epoll_on(lfd);
	pingpong_at(sh, me, u_notify, u_await_epoll, 1);
}

/* The wait spin, as the library computes it (include/uintr.h). */
static void __attribute__((constructor)) read_wait_spin(void)
{
	const char *env = getenv("UINTR_WAIT_SPIN_NS");
	char *end;
	unsigned long long v;

	if (!env || !*env)
		return;
	v = strtoull(env, &end, 10);
	if (*end == '\0')
		g_wait_spin_ns = (double)v;
}

/*
 * Order matters: each baseline runs right before the libuintr mode it is
 * compared with, so that inside one pass the pair shares the same
 * placement of our vCPUs by the host (which changes every few seconds).
 */
#define BLOCKED "uintr-wait-block"
const struct mech g_mechs[] = {
	{"cacheline", 0, KIND_BASELINE, "spins on the line the peer writes", "uintr-poll",
	 NULL, side_cacheline},
	{"uintr-poll", 0, KIND_UINTR, "uintr_poll() loop, SN=1", NULL, NULL, side_uintr_poll},
	{"futex-spin", 0, KIND_BASELINE, "spins like uintr_wait, then FUTEX_WAIT", "uintr-wait",
	 NULL, side_futex_spin},
	{"uintr-wait", 0, KIND_UINTR, "uintr_wait(0), default spin then block", NULL, NULL,
	 side_uintr_wait},
	{"signal-running", 0, KIND_BASELINE, "spins; SIGUSR1 handler sets flag", "uintr-async",
	 prep_signal_running, side_signal_running},
	{"uintr-async", 0, KIND_UINTR, "spins, never polls, UIF=1", NULL, NULL,
	 side_uintr_async},
	{"futex", 0, KIND_BASELINE, "blocked in FUTEX_WAIT", BLOCKED, NULL, side_futex},
	{"eventfd", 0, KIND_BASELINE, "blocked in read(eventfd)", BLOCKED, prep_eventfd,
	 side_eventfd},
	{"uintr-wait-block", 0, KIND_UINTR, "uintr_wait(0), spin 0: blocks", NULL, NULL,
	 side_uintr_wait_block},
	{"pipe", 0, KIND_BASELINE, "blocked in read(pipe)", BLOCKED, prep_pipe, side_pipe},
	{"socketpair", 0, KIND_BASELINE, "blocked in read(unix stream)", BLOCKED,
	 prep_socketpair, side_socketpair},
	{"mq", 0, KIND_BASELINE, "blocked in mq_receive", BLOCKED, prep_mq, side_mq},
	{"signal-sigwaitinfo", 0, KIND_BASELINE, "blocked in sigwaitinfo", BLOCKED,
	 prep_signal_wait, side_signal_wait},
	{"eventfd-epoll-msg", 0, KIND_BASELINE,
	 "as eventfd-epoll, with a one-word message in shared memory", "uintr-epoll",
	 prep_eventfd, side_eventfd_epoll_msg},
	{"eventfd-epoll", 0, KIND_BASELINE, "blocked in epoll_wait on an eventfd", "uintr-epoll",
	 prep_eventfd, side_eventfd_epoll},
	{"uintr-epoll", 0, KIND_UINTR, "epoll_wait on uintr_loop_fd, uintr_loop_drain", NULL,
	 NULL, side_uintr_epoll},
	{"eventfd-epoll-h", 0, KIND_BASELINE, "as eventfd-epoll, read, handler; timed at its entry",
	 "uintr-epoll-handler", prep_eventfd, side_eventfd_epoll_h},
	{"uintr-epoll-handler", 0, KIND_UINTR, "as uintr-epoll, timed at the handler's entry", NULL,
	 NULL, side_uintr_epoll_h},
	{"cacheline-proc", 1, KIND_BASELINE, "spins on the line the peer writes",
	 "uintr-poll-proc", NULL, side_cacheline},
	{"uintr-poll-proc", 1, KIND_UINTR, "uintr_poll() loop, SN=1", NULL, prefork_uintr,
	 side_uintr_poll},
	{"futex-spin-proc", 1, KIND_BASELINE, "spins like uintr_wait, then FUTEX_WAIT",
	 "uintr-wait-proc", NULL, side_futex_spin},
	{"uintr-wait-proc", 1, KIND_UINTR, "uintr_wait(0), default spin then block", NULL,
	 prefork_uintr, side_uintr_wait},
	{"signal-running-proc", 1, KIND_BASELINE, "spins; SIGUSR1 handler sets flag",
	 "uintr-async-proc", prep_signal_running, side_signal_running},
	{"uintr-async-proc", 1, KIND_UINTR, "spins, never polls, UIF=1", NULL, prefork_uintr,
	 side_uintr_async},
	{"futex-proc", 1, KIND_BASELINE, "blocked in FUTEX_WAIT", BLOCKED "-proc", NULL,
	 side_futex},
	{"uintr-wait-block-proc", 1, KIND_UINTR, "uintr_wait(0), spin 0: blocks", NULL,
	 prefork_uintr, side_uintr_wait_block},
};
const size_t g_nmechs = sizeof(g_mechs) / sizeof(g_mechs[0]);

double bench_wait_spin_ns(void)
{
	return g_wait_spin_ns;
}
