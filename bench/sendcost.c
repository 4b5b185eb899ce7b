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
 * Syscalls per operation are counted as in latency.c, in extra rounds
 * (no handler runs on S, so no window is discarded).
 *
 * Throughput: 1 or 2 sender threads (both on CPU 0: there are only two
 * CPUs) send as fast as they can to one receiver on CPU 1 (each sender its
 * own vector) for a fixed time; the receiver either polls (uintr_poll()
 * loop) or never polls (asynchronous delivery by the notification signal).
 */
#include "bench.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uintr.h"

enum { SC_POLL, SC_PENDING, SC_ATOMIC, SC_ATOMIC_DRAINED, SC_NOTIFY_RUNNING, SC_NOTIFY_BLOCKED };

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
};
const size_t g_nsc_cases = sizeof(g_sc_cases) / sizeof(g_sc_cases[0]);

const struct tp_case g_tp_cases[] = {
	{"tp-poll-1", "1 sender -> polling receiver", 0, 1},
	{"tp-poll-2", "2 senders -> polling receiver", 0, 2},
	{"tp-async-1", "1 sender -> async receiver (never polls)", 1, 1},
	{"tp-async-2", "2 senders -> async receiver (never polls)", 1, 2},
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

static void become_receiver(struct shared *sh, int vectors)
{
	int v;

	if (uintr_register_handler(on_uintr_count, 0) != 0)
		bench_fail("uintr_register_handler: %s", strerror(errno));
	for (v = 0; v < vectors; v++) {
		sh->side[v].ufd = uintr_create_fd((unsigned long long)v, 0);
		if (sh->side[v].ufd < 0)
			bench_fail("uintr_create_fd: %s", strerror(errno));
	}
}

static int stopped(struct shared *sh)
{
	return atomic_load_explicit(&sh->ctl, memory_order_relaxed) & CTL_STOP;
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

	if (pin_to_cpu(sh->cpu[1]) != 0)
		bench_fail("pin to CPU %d: %s", sh->cpu[1], strerror(errno));
	if (a->kind != SC_ATOMIC && a->kind != SC_ATOMIC_DRAINED) {
		become_receiver(sh, 1);
		if ((a->kind == SC_POLL || a->kind == SC_PENDING) && uintr_set_polling(1) != 0)
			bench_fail("uintr_set_polling: %s", strerror(errno));
		if (a->kind == SC_NOTIFY_BLOCKED && uintr_set_wait_spin(0) != 0)
			bench_fail("uintr_set_wait_spin: %s", strerror(errno));
		uintr_stui();
	}
	barrier_wait(&sh->bar, 2);
	switch (a->kind) {
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
	 * an op could find ON still set by the previous one and coalesce. */
	int wait_delivery = kind == SC_POLL || kind == SC_ATOMIC_DRAINED || notify;
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
			w->skip = 0;
			if (c.n + 1 < c.cap)
				c.n++;
			atomic_store_explicit(&sh->progress, total + i, memory_order_relaxed);
		}
		counting_end(&c, s);
	}
	atomic_store(&sh->finished, 1);
	atomic_store(&sh->ctl, CTL_STOP);
	if (kind == SC_NOTIFY_BLOCKED)
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
	int async, k;
};

static void *tp_receiver(void *p)
{
	struct tp_arg *a = p;
	struct shared *sh = a->sh;

	if (pin_to_cpu(sh->cpu[1]) != 0)
		bench_fail("pin to CPU %d: %s", sh->cpu[1], strerror(errno));
	become_receiver(sh, sh->nsenders);
	if (!a->async && uintr_set_polling(1) != 0)
		bench_fail("uintr_set_polling: %s", strerror(errno));
	uintr_stui();
	barrier_wait(&sh->bar, sh->nsenders + 2); /* fds exist */
	barrier_wait(&sh->bar, sh->nsenders + 2); /* go */
	if (a->async)
		while (!stopped(sh))
			cpu_relax();
	else
		while (!stopped(sh))
			uintr_poll();
	return NULL;
}

static void *tp_sender(void *p)
{
	struct tp_arg *a = p;
	struct shared *sh = a->sh;
	struct side *s = &sh->side[a->k];
	uint64_t n = 0;
	int idx;

	if (pin_to_cpu(sh->cpu[0]) != 0)
		bench_fail("pin to CPU %d: %s", sh->cpu[0], strerror(errno));
	barrier_wait(&sh->bar, sh->nsenders + 2);
	idx = uintr_register_sender(s->ufd, 0);
	if (idx < 0)
		bench_fail("uintr_register_sender: %s", strerror(errno));
	barrier_wait(&sh->bar, sh->nsenders + 2);
	while (!stopped(sh)) {
		uintr_senduipi((unsigned long long)idx);
		n++;
	}
	s->sends = n;
	return NULL;
}

void tp_run(struct shared *sh, int kase)
{
	const struct tp_case *c = &g_tp_cases[kase];
	struct tp_arg ra = {sh, c->async, 0}, sa[2];
	struct timespec d;
	pthread_t r, s[2];
	uint64_t t0, t1;
	int k;

	sh->nsenders = c->senders;
	if (pthread_create(&r, NULL, tp_receiver, &ra) != 0)
		bench_fail("pthread_create");
	for (k = 0; k < c->senders; k++) {
		sa[k] = (struct tp_arg){sh, c->async, k};
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
