/*
 * What a send costs the sender, and how many sends and deliveries one
 * receiver takes per second.
 *
 * Sender cost: thread S (CPU 0) times single operations, thread R (CPU 1)
 * is the receiver in a chosen state.  Before each timed operation S waits
 * until the previous one has had its effect (delivered, where it delivers)
 * and then a fixed gap, so every operation starts from the same state:
 *   - send-poll:     R polls (uintr_set_polling(1), uintr_poll() loop): no
 *                    notification is due; PIR was drained by R, so the
 *                    post must take the line back from R's CPU.
 *   - send-pending:  R in polling mode does not poll: the vector is still
 *                    posted, the send coalesces (ON/PIR already set).
 *   - atomic-or:     __atomic_fetch_or on a line R keeps reading.
 *   - atomic-or-drained: the same, but R exchanges the line to 0 whenever
 *                    it sees it set (as a poll drains PIR) and S waits for
 *                    that: the hardware floor of send-poll, whose PIR line
 *                    R has just written.
 *   - send-notify-running: R runs with UIF = 1 and never polls: every send
 *                    notifies (a signal).
 *   - send-notify-blocked: R blocks in uintr_wait (spin 0): every send
 *                    notifies (a futex wake).
 *   - send-epoll-busy: R is an event loop (epoll_wait on uintr_loop_fd,
 *                    uintr_loop_drain when readable) busy in its handlers:
 *                    the handler of each send runs until the next send has
 *                    been made, so every send finds the loop draining (SN
 *                    set) and must not notify.  Only the first send, which
 *                    finds the loop asleep, writes its eventfd (a warm-up
 *                    round).
 * Syscalls per operation are counted as in latency.c, in extra rounds
 * (no handler runs on S, so no window is discarded).
 *
 * Throughput: 1 or 2 sender threads (both on CPU 0: there are only two
 * CPUs) send as fast as they can to one receiver on CPU 1 (each sender its
 * own vector) for a fixed time; the receiver either polls (uintr_poll()
 * loop) or never polls (asynchronous delivery by the notification signal),
 * or is an event loop (issue 15):
 *   - tp-eventfd-epoll-2: the loop blocks in epoll_wait on one eventfd that
 *     each sender writes once per message; when readable, it reads the fd
 *     and runs the handler once (the read's count is the messages it
 *     covers, as coalesced posts are for a vector);
 *   - tp-uintr-epoll-2: the same loop on uintr_loop_fd(), uintr_loop_drain()
 *     running the handlers; the senders uintr_senduipi.
 * "Deliveries" are handler calls in every case; the loop rows also count
 * the loop's wake-ups (epoll_wait returns).  After the stop each sender
 * sends once more, so a loop asleep in epoll_wait sees the stop.
 */
#include "bench.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "uintr.h"

enum {
	SC_POLL,
	SC_PENDING,
	SC_ATOMIC,
	SC_ATOMIC_DRAINED,
	SC_NOTIFY_RUNNING,
	SC_NOTIFY_BLOCKED,
	SC_EPOLL_BUSY
};

const struct sc_case g_sc_cases[] = {
	{"send-poll", "uintr_senduipi, receiver polling (SN=1), PIR drained", SC_POLL},
	{"atomic-or-drained", "__atomic_fetch_or on a line the other CPU drains (xchg 0)",
	 SC_ATOMIC_DRAINED},
	{"atomic-or", "__atomic_fetch_or on a line the other CPU keeps reading", SC_ATOMIC},
	{"send-pending", "uintr_senduipi, vector still posted (coalesces)", SC_PENDING},
	{"send-notify-running", "uintr_senduipi, running receiver UIF=1: signal",
	 SC_NOTIFY_RUNNING},
	{"send-notify-blocked", "uintr_senduipi, receiver in uintr_wait: futex wake",
	 SC_NOTIFY_BLOCKED},
	{"send-epoll-busy", "uintr_senduipi, event loop busy in its handlers (draining)",
	 SC_EPOLL_BUSY},
};
const size_t g_nsc_cases = sizeof(g_sc_cases) / sizeof(g_sc_cases[0]);

const struct tp_case g_tp_cases[] = {
	{"tp-poll-1", "1 sender -> polling receiver", TP_POLL, 1, NULL},
	{"tp-poll-2", "2 senders -> polling receiver", TP_POLL, 2, NULL},
	{"tp-async-1", "1 sender -> async receiver (never polls)", TP_ASYNC, 1, NULL},
	{"tp-async-2", "2 senders -> async receiver (never polls)", TP_ASYNC, 2, NULL},
	{"tp-eventfd-epoll-2", "2 senders -> epoll loop on an eventfd (write per message)",
	 TP_EVENTFD_LOOP, 2, NULL},
	{"tp-uintr-epoll-2", "2 senders -> epoll loop on uintr_loop_fd (uintr_loop_drain)",
	 TP_LOOP, 2, "tp-eventfd-epoll-2"},
};
const size_t g_ntp_cases = sizeof(g_tp_cases) / sizeof(g_tp_cases[0]);

static void on_uintr_count(struct uintr_frame *frame, unsigned long long vector)
{
	struct side *s = &g_sh->side[vector & 1];

	(void)frame;
	atomic_store_explicit(&s->handled,
			      atomic_load_explicit(&s->handled, memory_order_relaxed) + 1,
			      memory_order_release);
}

static int stopped(struct shared *sh)
{
	return atomic_load_explicit(&sh->ctl, memory_order_relaxed) & CTL_STOP;
}

/* send-epoll-busy: count, then stay busy until the sender has made its
 * next send (sh->line: sends made, written by the sender). */
static void on_uintr_busy(struct uintr_frame *frame, unsigned long long vector)
{
	struct side *s = &g_sh->side[0];
	uint64_t h = atomic_load_explicit(&s->handled, memory_order_relaxed) + 1;

	(void)frame;
	(void)vector;
	atomic_store_explicit(&s->handled, h, memory_order_release);
	while (__atomic_load_n(&g_sh->line, __ATOMIC_ACQUIRE) <= h && !stopped(g_sh))
		cpu_relax();
}

static void become_receiver(struct shared *sh, int vectors, uintr_handler_t handler)
{
	int v;

	if (uintr_register_handler(handler, 0) != 0)
		bench_fail("uintr_register_handler: %s", strerror(errno));
	for (v = 0; v < vectors; v++) {
		sh->side[v].ufd = uintr_create_fd((unsigned long long)v, 0);
		if (sh->side[v].ufd < 0)
			bench_fail("uintr_create_fd: %s", strerror(errno));
	}
}

/* The event loops of send-epoll-busy and tp-*-epoll: one epoll set
 * watching fd, made before the run starts. */
static int epoll_on(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		bench_fail("epoll: %s", strerror(errno));
	return ep;
}

/* Until the stop: epoll_wait; when fd is readable, uintr_loop_drain (the
 * uintr loop) or read the eventfd and run the handler once (it counts on
 * side 0).  Returns the wake-ups. */
static uint64_t epoll_loop(struct shared *sh, int ep, int fd, int is_eventfd)
{
	struct epoll_event ev;
	uint64_t wakeups = 0, count;

	while (!stopped(sh)) {
		int n = epoll_wait(ep, &ev, 1, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			bench_fail("epoll_wait: %s", strerror(errno));
		wakeups++;
		if (!is_eventfd) {
			if (uintr_loop_drain(0) < 0)
				bench_fail("uintr_loop_drain: %s", strerror(errno));
		} else if (read(fd, &count, sizeof(count)) == (ssize_t)sizeof(count)) {
			sh->side[0].coalesced += count - 1;
			on_uintr_count(NULL, 0);
		}
	}
	close(ep);
	return wakeups;
}

/* ---- sender cost --------------------------------------------------------- */

struct sc_arg {
	struct shared *sh;
	int kind;
};

static void *sc_receiver(void *p)
{
	struct sc_arg *a = p;
	struct shared *sh = a->sh;
	int lfd = -1, ep = -1;

	if (pin_to_cpu(sh->cpu[1]) != 0)
		bench_fail("pin to CPU %d: %s", sh->cpu[1], strerror(errno));
	if (a->kind != SC_ATOMIC && a->kind != SC_ATOMIC_DRAINED) {
		become_receiver(sh, 1, a->kind == SC_EPOLL_BUSY ? on_uintr_busy : on_uintr_count);
		if ((a->kind == SC_POLL || a->kind == SC_PENDING) && uintr_set_polling(1) != 0)
			bench_fail("uintr_set_polling: %s", strerror(errno));
		if (a->kind == SC_NOTIFY_BLOCKED && uintr_set_wait_spin(0) != 0)
			bench_fail("uintr_set_wait_spin: %s", strerror(errno));
		if (a->kind == SC_EPOLL_BUSY) {
			lfd = uintr_loop_fd(0);
			if (lfd < 0)
				bench_fail("uintr_loop_fd: %s", strerror(errno));
			ep = epoll_on(lfd);
		}
		uintr_stui();
	}
	barrier_wait(&sh->bar, 2);
	switch (a->kind) {
	case SC_EPOLL_BUSY:
		epoll_loop(sh, ep, lfd, 0);
		close(lfd);
		break;
	case SC_POLL:
		while (!stopped(sh))
			uintr_poll();
		break;
	case SC_ATOMIC:
		while (!stopped(sh)) {
			(void)__atomic_load_n(&sh->line, __ATOMIC_SEQ_CST);
			cpu_relax();
		}
		break;
	case SC_ATOMIC_DRAINED:
		while (!stopped(sh)) {
			if (__atomic_load_n(&sh->line, __ATOMIC_SEQ_CST)) {
				struct side *s = &sh->side[0];

				__atomic_exchange_n(&sh->line, 0, __ATOMIC_SEQ_CST);
				atomic_store_explicit(&s->handled,
						      atomic_load_explicit(&s->handled,
									   memory_order_relaxed) + 1,
						      memory_order_release);
			}
			cpu_relax();
		}
		break;
	case SC_NOTIFY_BLOCKED:
		while (!stopped(sh))
			uintr_wait_since_last(0);
		break;
	default: /* pending, notify-running: run without polling */
		while (!stopped(sh))
			cpu_relax();
		break;
	}
	return NULL;
}

static ALWAYS_INLINE void sc_op(struct shared *sh, int kind, int idx)
{
	if (kind == SC_ATOMIC || kind == SC_ATOMIC_DRAINED)
		__atomic_fetch_or(&sh->line, 1, __ATOMIC_SEQ_CST);
	else
		uintr_senduipi((unsigned long long)idx);
}

static void sc_sender(struct shared *sh, int kind)
{
	struct side *s = &sh->side[0];
	int notify = kind == SC_NOTIFY_RUNNING || kind == SC_NOTIFY_BLOCKED;
	/* Wait until every earlier op had its effect where ops deliver: else
	 * an op could find ON still set by the previous one and coalesce.
	 * (send-epoll-busy: the handler of the previous send has started.) */
	int wait_delivery = kind == SC_POLL || kind == SC_ATOMIC_DRAINED || notify ||
			    kind == SC_EPOLL_BUSY;
	uint64_t sent = 0;
	double gap_ns = notify ? 50000 : 1000;
	uint64_t i, total = sh->warm + sh->n, kept = 0, start;
	struct counting c = {.cap = 0};
	int idx = -1;

	if (pin_to_cpu(sh->cpu[0]) != 0)
		bench_fail("pin to CPU %d: %s", sh->cpu[0], strerror(errno));
	barrier_wait(&sh->bar, 2); /* R is ready, its fd exists */
	if (kind != SC_ATOMIC && kind != SC_ATOMIC_DRAINED) {
		idx = uintr_register_sender(s->ufd, 0);
		if (idx < 0)
			bench_fail("uintr_register_sender: %s", strerror(errno));
	}
	start = now_ticks();
	for (i = 0; i < total; i++) {
		uint64_t t0, t1;

		if (wait_delivery)
			while (atomic_load_explicit(&s->handled, memory_order_acquire) != sent)
				cpu_relax();
		spin_ns(gap_ns);
		t0 = now_ticks();
		sc_op(sh, kind, idx);
		t1 = now_ticks();
		sent++;
		if (kind == SC_EPOLL_BUSY)
			__atomic_store_n(&sh->line, sent, __ATOMIC_RELEASE);
		if (i >= sh->warm)
			sh->samples[kept++] = t1 - t0;
		atomic_store_explicit(&sh->progress, i, memory_order_relaxed);
		if (t1 - start > sh->cap_ticks && kept > 0)
			break;
	}
	sh->kept = kept;
	/* Counted rounds: the same, with a window around the op. */
	if (sh->count_rounds && g_count_ok && counting_begin(&c, sh->count_rounds) == 0) {
		for (i = 0; i < sh->count_rounds; i++) {
			struct window *w = &c.w[c.n];

			if (wait_delivery)
				while (atomic_load_explicit(&s->handled, memory_order_acquire) != sent)
					cpu_relax();
			spin_ns(gap_ns);
			w->begin = mono_ns();
			sc_op(sh, kind, idx);
			w->end = mono_ns();
			sent++;
			if (kind == SC_EPOLL_BUSY)
				__atomic_store_n(&sh->line, sent, __ATOMIC_RELEASE);
			w->skip = 0;
			if (c.n + 1 < c.cap)
				c.n++;
			atomic_store_explicit(&sh->progress, total + i, memory_order_relaxed);
		}
		counting_end(&c, s);
	}
	atomic_store(&sh->finished, 1);
	atomic_store(&sh->ctl, CTL_STOP);
	if (kind == SC_NOTIFY_BLOCKED || kind == SC_EPOLL_BUSY)
		uintr_senduipi((unsigned long long)idx); /* wake R to see the stop */
}

void sc_run(struct shared *sh, int kase)
{
	struct sc_arg a = {sh, g_sc_cases[kase].kind};
	pthread_t r;

	if (pthread_create(&r, NULL, sc_receiver, &a) != 0)
		bench_fail("pthread_create");
	sc_sender(sh, a.kind);
	pthread_join(r, NULL);
}

/* ---- throughput ---------------------------------------------------------- */

struct tp_arg {
	struct shared *sh;
	int mode, k;
};

static void *tp_receiver(void *p)
{
	struct tp_arg *a = p;
	struct shared *sh = a->sh;
	int fd = -1, ep = -1;

	if (pin_to_cpu(sh->cpu[1]) != 0)
		bench_fail("pin to CPU %d: %s", sh->cpu[1], strerror(errno));
	if (a->mode == TP_EVENTFD_LOOP) {
		sh->side[0].efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (sh->side[0].efd < 0)
			bench_fail("eventfd: %s", strerror(errno));
		fd = sh->side[0].efd;
	} else {
		become_receiver(sh, sh->nsenders, on_uintr_count);
		if (a->mode == TP_POLL && uintr_set_polling(1) != 0)
			bench_fail("uintr_set_polling: %s", strerror(errno));
		if (a->mode == TP_LOOP) {
			fd = uintr_loop_fd(0);
			if (fd < 0)
				bench_fail("uintr_loop_fd: %s", strerror(errno));
		}
		uintr_stui();
	}
	if (fd >= 0)
		ep = epoll_on(fd);
	barrier_wait(&sh->bar, sh->nsenders + 2); /* fds exist */
	barrier_wait(&sh->bar, sh->nsenders + 2); /* go */
	switch (a->mode) {
	case TP_POLL:
		while (!stopped(sh))
			uintr_poll();
		break;
	case TP_ASYNC:
		while (!stopped(sh))
			cpu_relax();
		break;
	default:
		sh->tp_wakeups = epoll_loop(sh, ep, fd, a->mode == TP_EVENTFD_LOOP);
		break;
	}
	return NULL;
}

static void *tp_sender(void *p)
{
	struct tp_arg *a = p;
	struct shared *sh = a->sh;
	struct side *s = &sh->side[a->k];
	uint64_t n = 0, one = 1;
	int idx = -1, efd = -1;

	if (pin_to_cpu(sh->cpu[0]) != 0)
		bench_fail("pin to CPU %d: %s", sh->cpu[0], strerror(errno));
	barrier_wait(&sh->bar, sh->nsenders + 2);
	if (a->mode == TP_EVENTFD_LOOP) {
		efd = sh->side[0].efd;
	} else {
		idx = uintr_register_sender(s->ufd, 0);
		if (idx < 0)
			bench_fail("uintr_register_sender: %s", strerror(errno));
	}
	barrier_wait(&sh->bar, sh->nsenders + 2);
	if (efd >= 0) {
		while (!stopped(sh)) {
			if (write(efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
				bench_fail("write(eventfd): %s", strerror(errno));
			n++;
		}
	} else {
		while (!stopped(sh)) {
			uintr_senduipi((unsigned long long)idx);
			n++;
		}
	}
	s->sends = n;
	/* One more, uncounted: a loop asleep in epoll_wait sees the stop. */
	if (efd >= 0 && write(efd, &one, sizeof(one)) < 0)
		bench_fail("write(eventfd): %s", strerror(errno));
	if (a->mode == TP_LOOP)
		uintr_senduipi((unsigned long long)idx);
	return NULL;
}

void tp_run(struct shared *sh, int kase)
{
	const struct tp_case *c = &g_tp_cases[kase];
	struct tp_arg ra = {sh, c->mode, 0}, sa[2];
	struct timespec d;
	pthread_t r, s[2];
	uint64_t t0, t1;
	int k;

	sh->nsenders = c->senders;
	if (pthread_create(&r, NULL, tp_receiver, &ra) != 0)
		bench_fail("pthread_create");
	for (k = 0; k < c->senders; k++) {
		sa[k] = (struct tp_arg){sh, c->mode, k};
		if (pthread_create(&s[k], NULL, tp_sender, &sa[k]) != 0)
			bench_fail("pthread_create");
	}
	barrier_wait(&sh->bar, sh->nsenders + 2);
	barrier_wait(&sh->bar, sh->nsenders + 2);
	t0 = mono_ns();
	d.tv_sec = (time_t)sh->duration_s;
	d.tv_nsec = (long)((sh->duration_s - (double)d.tv_sec) * 1e9);
	nanosleep(&d, NULL);
	atomic_store(&sh->ctl, CTL_STOP);
	t1 = mono_ns();
	sh->tp_delivered = atomic_load(&sh->side[0].handled) + atomic_load(&sh->side[1].handled);
	for (k = 0; k < c->senders; k++)
		pthread_join(s[k], NULL);
	pthread_join(r, NULL);
	sh->tp_sends = sh->side[0].sends + sh->side[1].sends;
	sh->tp_elapsed_ns = (double)(t1 - t0);
}
