/*
 * Soak: exact accounting of a long run (issue item "a longer soak target:
 * at least 10^7 interrupts from at least 4 senders across threads and
 * processes, while receivers register and unregister, fds close and
 * threads exit, with exact accounting: 0 lost, 0 extra"; reference 2.2,
 * 2.3, 2.7, 5.1-5.4, 6.2).  Not part of make check: make soak.
 *
 *   soak [COUNT [THREADS [PROCS]]]     defaults 10000000 4 2
 *
 * Stable traffic: two receiver threads sleep in uintr_wait; THREADS sender
 * threads and PROCS sender processes (forked: they inherit the fds) send
 * COUNT interrupts in all.  Sender k owns W vectors on each receiver and
 * keeps up to one interrupt in flight per vector: it posts a vector again
 * only after the handler counted the previous post, so no post may
 * coalesce, and every post must be delivered exactly once.  Sender threads
 * exit and are replaced ten times each (half of them unregistering first,
 * half leaving it to thread exit); sender processes re-register ten times
 * through a dup of their fd and close the old copy.
 *
 * Churn, meanwhile, in rounds: a short-lived receiver thread registers,
 * creates 8 fds, and a churn sender sends it 8 x 16 interrupts one at a time;
 * then, in turn: (0) clean teardown; (1) the receiver thread exits with
 * its fds open: posts through the old entries are harmless (0 delivered),
 * and after the fds are closed SENDUIPI faults; (2) the receiver
 * unregisters and registers again: old entries are harmless, new fds
 * work; (3) the fds are closed while the receiver lives: SENDUIPI faults,
 * the vectors can be created again at once and work.
 *
 * At the end, per receiver and vector: delivered == sent (0 lost,
 * 0 extra); no delivery on a vector nobody sent to; the process's
 * uintr_get_stats agrees; 0 spurious notifications.  A lost interrupt
 * shows as a sender with no credit back for 20 s (it prints which).
 * Runs plain or under AddressSanitizer; skipped (77) under
 * ThreadSanitizer, which merges queued signals of one number.
 */
#include "helpers.h"

#include <linux/futex.h>
#include <sys/mman.h>

#define NRX 2          /* stable receivers */
#define MAXSEND 16     /* senders, threads + processes */
#define STOP_VEC 63    /* wakes a stable receiver to stop */
#define GENERATIONS 10 /* sender thread replacements / process re-registrations */
#define CHURN_VEC 40   /* churn vectors: 40..47, then 48..55 */
#define CHURN_N 8
#define CHURN_REPS 16

struct rxc {
	_Atomic unsigned long long sent[UINTR_MAX_VECTORS];
	_Atomic unsigned long long delivered[UINTR_MAX_VECTORS];
	_Atomic unsigned long long extra; /* delivered more than sent */
};

/* Shared with the sender processes. */
struct shared {
	struct rxc rx[NRX];
	int fd[NRX][UINTR_MAX_VECTORS];
	_Atomic uint32_t wake[MAXSEND];    /* futex: a delivery for sender k */
	_Atomic uint32_t sleeping[MAXSEND];
	_Atomic unsigned long long done[MAXSEND];
	_Atomic unsigned long long stray;  /* handler with no context */
	_Atomic int failed;
};

static struct shared *sh;
static int nsend, nthreads, nprocs, width;
static unsigned long long total;
static double t0;
static _Atomic int senders_running;

static __thread struct rxc *cur_rx;
static __thread int cur_owner_base; /* stable receivers: wake senders */

#define SOAK_FAIL(...)                                                               \
	do {                                                                         \
		fprintf(stderr, "soak: " __VA_ARGS__);                               \
		fprintf(stderr, "\n");                                               \
		atomic_store(&sh->failed, 1);                                        \
		exit(T_FAIL);                                                        \
	} while (0)

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static void handler(struct uintr_frame *f, unsigned long long v)
{
	struct rxc *c = cur_rx;

	(void)f;
	if (!c || v >= UINTR_MAX_VECTORS) {
		atomic_fetch_add(&sh->stray, 1);
		return;
	}
	if (atomic_fetch_add(&c->delivered[v], 1) + 1 > atomic_load(&c->sent[v]))
		atomic_fetch_add(&c->extra, 1);
	if (cur_owner_base && v < (unsigned long long)(nsend * width)) {
		int k = (int)v / width;

		if (atomic_load(&sh->sleeping[k])) {
			atomic_fetch_add(&sh->wake[k], 1);
			futex(&sh->wake[k], FUTEX_WAKE, 1, NULL);
		}
	}
}

/* ------------------------------------------------------ stable receivers */

struct stable_rx {
	int i;
	_Atomic int ready, stop;
	pthread_t th;
};

static void *stable_rx_main(void *arg)
{
	struct stable_rx *s = arg;
	int v;

	cur_rx = &sh->rx[s->i];
	cur_owner_base = 1;
	CHECK(uintr_register_handler(handler, 0) == 0);
	for (v = 0; v < nsend * width; v++) {
		sh->fd[s->i][v] = uintr_create_fd((unsigned long long)v, 0);
		CHECK(sh->fd[s->i][v] >= 0);
	}
	sh->fd[s->i][STOP_VEC] = uintr_create_fd(STOP_VEC, 0);
	CHECK(sh->fd[s->i][STOP_VEC] >= 0);
	uintr_stui();
	s->ready = 1;
	while (!atomic_load(&s->stop)) {
		errno = 0;
		CHECK(uintr_wait_since_last(0) == -1 && errno == EINTR); /* race-free: the stop vector may be handled before the call */
	}
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

/* --------------------------------------------------------------- senders */

static unsigned long long quota_of(int k)
{
	return total / (unsigned long long)nsend + ((unsigned long long)k < total % (unsigned long long)nsend);
}

struct sender {
	int k;
	int idx[NRX][UINTR_MAX_VECTORS];
	int fd[NRX][UINTR_MAX_VECTORS]; /* the copies this sender uses */
};

static void sender_register(struct sender *s)
{
	int r, j;

	for (r = 0; r < NRX; r++)
		for (j = 0; j < width; j++) {
			s->idx[r][j] = uintr_register_sender(s->fd[r][j], 0);
			if (s->idx[r][j] < 0)
				SOAK_FAIL("sender %d: uintr_register_sender: %s", s->k, strerror(errno));
		}
}

static void sender_unregister(struct sender *s)
{
	int r, j;

	for (r = 0; r < NRX; r++)
		for (j = 0; j < width; j++)
			if (uintr_unregister_sender(s->fd[r][j], 0) != 0)
				SOAK_FAIL("sender %d: uintr_unregister_sender: %s", s->k, strerror(errno));
}

static int credit(int k, int r, int j)
{
	unsigned v = (unsigned)(k * width + j);

	return atomic_load(&sh->rx[r].delivered[v]) == atomic_load(&sh->rx[r].sent[v]);
}

/* Send n more interrupts for sender k, one in flight per vector. */
static void send_some(struct sender *s, unsigned long long n)
{
	int k = s->k;
	unsigned long long sent = 0;
	double stuck_since = 0;

	while (sent < n) {
		int r, j, progressed = 0;

		for (r = 0; r < NRX && sent < n; r++) {
			for (j = 0; j < width && sent < n; j++) {
				if (!credit(k, r, j))
					continue;
				atomic_fetch_add(&sh->rx[r].sent[k * width + j], 1);
				uintr_senduipi((unsigned long long)s->idx[r][j]);
				atomic_fetch_add(&sh->done[k], 1);
				sent++;
				progressed = 1;
			}
		}
		if (progressed) {
			stuck_since = 0;
			continue;
		}
		{
			uint32_t w = atomic_load(&sh->wake[k]);
			struct timespec ts = { .tv_sec = 1 };
			int any = 0;

			atomic_store(&sh->sleeping[k], 1);
			for (r = 0; r < NRX; r++)
				for (j = 0; j < width; j++)
					any |= credit(k, r, j);
			if (!any)
				futex(&sh->wake[k], FUTEX_WAIT, w, &ts);
			atomic_store(&sh->sleeping[k], 0);
			if (!any) {
				if (stuck_since == 0)
					stuck_since = t_now();
				else if (t_now() - stuck_since > 20.0) {
					for (r = 0; r < NRX; r++)
						for (j = 0; j < width; j++) {
							unsigned v = (unsigned)(k * width + j);

							fprintf(stderr, "receiver %d vector %u: sent %llu delivered %llu\n",
								r, v, atomic_load(&sh->rx[r].sent[v]),
								atomic_load(&sh->rx[r].delivered[v]));
						}
					SOAK_FAIL("sender %d: no delivery for 20 s: interrupts lost", k);
				}
			}
		}
	}
}

/* A sender thread of one generation. */
struct gen {
	struct sender *s;
	unsigned long long n;
	int unregister;
};

static void *sender_gen_main(void *arg)
{
	struct gen *g = arg;

	sender_register(g->s);
	send_some(g->s, g->n);
	if (g->unregister)
		sender_unregister(g->s);
	/* else: thread exit tears the UITT down (2.7) */
	return NULL;
}

/* Drives sender slot k: GENERATIONS threads one after the other. */
static void *sender_driver(void *arg)
{
	struct sender s;
	unsigned long long q = quota_of((int)(intptr_t)arg), left;
	int g, r, j;

	memset(&s, 0, sizeof(s));
	s.k = (int)(intptr_t)arg;
	for (r = 0; r < NRX; r++)
		for (j = 0; j < width; j++)
			s.fd[r][j] = sh->fd[r][s.k * width + j];
	left = q;
	for (g = 0; g < GENERATIONS; g++) {
		struct gen gn = { .s = &s, .n = g == GENERATIONS - 1 ? left : q / GENERATIONS,
				  .unregister = (g + s.k) % 2 };
		pthread_t t = t_start(sender_gen_main, &gn);

		t_join(t);
		left -= gn.n;
	}
	atomic_fetch_sub(&senders_running, 1);
	return NULL;
}

/* A sender process: re-registers GENERATIONS times through a fresh dup of
 * each fd, closing the old copy. */
static void sender_process(int k)
{
	struct sender s;
	unsigned long long q = quota_of(k), left = q;
	int g, r, j;

	memset(&s, 0, sizeof(s));
	s.k = k;
	for (r = 0; r < NRX; r++)
		for (j = 0; j < width; j++)
			s.fd[r][j] = sh->fd[r][k * width + j];
	sender_register(&s);
	for (g = 0; g < GENERATIONS; g++) {
		unsigned long long n = g == GENERATIONS - 1 ? left : q / GENERATIONS;

		send_some(&s, n);
		left -= n;
		for (r = 0; r < NRX; r++)
			for (j = 0; j < width; j++) {
				int copy = dup(s.fd[r][j]);

				CHECK(copy >= 0);
				if (uintr_unregister_sender(s.fd[r][j], 0) != 0)
					SOAK_FAIL("process sender %d: unregister: %s", k, strerror(errno));
				CHECK(close(s.fd[r][j]) == 0);
				s.fd[r][j] = copy;
			}
		if (g < GENERATIONS - 1)
			sender_register(&s);
	}
	/* _exit: a leak checker would run in this forked copy too. */
	_exit(T_PASS);
}

/* ----------------------------------------------------------------- churn */

enum { I_NONE, I_CLOSE_UNREGISTER, I_EXIT, I_REREGISTER, I_RECREATE };

struct round {
	struct rxc c;
	_Atomic uint32_t stage; /* futex: bumped at each step */
	_Atomic int instr;
	int fds[2 * CHURN_N];
	int nfds;
	unsigned base;          /* current vectors: base .. base + CHURN_N - 1 */
};

static _Atomic int churn_stop;
static unsigned long long churn_rounds, churn_sent, churn_noop, churn_faults;

static void churn_make_fds(struct round *rd, unsigned base)
{
	int i;

	rd->base = base;
	for (i = 0; i < CHURN_N; i++) {
		int fd = uintr_create_fd(base + (unsigned)i, 0);

		if (fd < 0)
			SOAK_FAIL("churn receiver: uintr_create_fd(%u): %s", base + i, strerror(errno));
		rd->fds[rd->nfds++] = fd;
	}
}

static void churn_step(struct round *rd)
{
	atomic_fetch_add(&rd->stage, 1);
	futex(&rd->stage, FUTEX_WAKE_PRIVATE, 1, NULL);
}

static void *churn_rx_main(void *arg)
{
	struct round *rd = arg;
	int i;

	cur_rx = &rd->c;
	CHECK(uintr_register_handler(handler, 0) == 0);
	churn_make_fds(rd, CHURN_VEC);
	uintr_stui();
	churn_step(rd);
	for (;;) {
		int in;

		/* Interrupts arrive as notification signals while this thread
		 * sleeps here. */
		while ((in = atomic_exchange(&rd->instr, I_NONE)) == I_NONE)
			futex((_Atomic uint32_t *)&rd->instr, FUTEX_WAIT_PRIVATE, I_NONE, NULL);
		switch (in) {
		case I_EXIT:
			return NULL; /* fds stay open; thread exit unregisters */
		case I_REREGISTER:
			CHECK(uintr_unregister_handler(0) == 0);
			CHECK(uintr_register_handler(handler, 0) == 0);
			churn_make_fds(rd, CHURN_VEC + CHURN_N);
			uintr_stui();
			break;
		case I_RECREATE:
			rd->nfds = 0;
			churn_make_fds(rd, CHURN_VEC); /* no EBUSY: the old fds are closed */
			break;
		default:
			for (i = 0; i < rd->nfds; i++)
				CHECK(close(rd->fds[i]) == 0);
			CHECK(uintr_unregister_handler(0) == 0);
			return NULL;
		}
		churn_step(rd);
	}
}

static void churn_instruct(struct round *rd, int in)
{
	uint32_t st = atomic_load(&rd->stage);

	atomic_store(&rd->instr, in);
	futex((_Atomic uint32_t *)&rd->instr, FUTEX_WAKE_PRIVATE, 1, NULL);
	if (in == I_EXIT || in == I_CLOSE_UNREGISTER)
		return;
	while (atomic_load(&rd->stage) == st)
		futex(&rd->stage, FUTEX_WAIT_PRIVATE, st, NULL);
}

/* Post through idx to vector v of the churn receiver and wait for it. */
static void churn_send_wait(struct round *rd, int idx, unsigned v)
{
	unsigned long long before = atomic_load(&rd->c.delivered[v]);
	double until = t_now() + 20.0;

	atomic_fetch_add(&rd->c.sent[v], 1);
	uintr_senduipi((unsigned long long)idx);
	churn_sent++;
	while (atomic_load(&rd->c.delivered[v]) == before) {
		if (t_now() > until)
			SOAK_FAIL("churn: vector %u not delivered in 20 s", v);
		sched_yield();
	}
}

static void churn_traffic(struct round *rd, const int *idx)
{
	int rep, i;

	for (rep = 0; rep < CHURN_REPS; rep++)
		for (i = 0; i < CHURN_N; i++)
			churn_send_wait(rd, idx[i], rd->base + (unsigned)i);
}

/* Posts through entries whose receiver is gone: harmless, no delivery. */
static void churn_noop_sends(const int *idx)
{
	int i;

	for (i = 0; i < CHURN_N; i++) {
		uintr_senduipi((unsigned long long)idx[i]);
		churn_noop++;
	}
}

/* After the fds were closed, their releases are processed (by the
 * receiver thread, or by whichever thread the kernel tells when the
 * receiver is gone): then this thread has no valid entry left, and
 * SENDUIPI through any of them raises SIGILL (2.3, 2.5). */
static void churn_expect_fault(const int *idx)
{
	struct uintr_state st;
	int i, sig, code;

	do {
		CHECK(uintr_read_state(&st) == 0);
		if (st.uitt_size != 0)
			sched_yield();
	} while (st.uitt_size != 0 && !atomic_load(&sh->failed));
	for (i = 0; i < CHURN_N; i++) {
		sig = t_catch_fault(t_send_index, (void *)(uintptr_t)idx[i], &code);
		if (sig != SIGILL)
			SOAK_FAIL("churn: SENDUIPI through a released entry raised %d, expected SIGILL",
				  sig);
		churn_faults++;
	}
}

static void churn_register(struct round *rd, int first, int *idx)
{
	int i;

	for (i = 0; i < CHURN_N; i++) {
		idx[i] = uintr_register_sender(rd->fds[first + i], 0);
		if (idx[i] < 0)
			SOAK_FAIL("churn: uintr_register_sender: %s", strerror(errno));
	}
}

static void churn_check_round(struct round *rd)
{
	unsigned v;

	for (v = 0; v < UINTR_MAX_VECTORS; v++)
		if (atomic_load(&rd->c.delivered[v]) != atomic_load(&rd->c.sent[v]))
			SOAK_FAIL("churn round %llu: vector %u sent %llu delivered %llu", churn_rounds,
				  v, atomic_load(&rd->c.sent[v]), atomic_load(&rd->c.delivered[v]));
	if (atomic_load(&rd->c.extra))
		SOAK_FAIL("churn round %llu: extra deliveries", churn_rounds);
}

static unsigned long long churn_delivered_total;

static void *churn_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&churn_stop)) {
		struct round *rd = calloc(1, sizeof(*rd));
		int idx[CHURN_N], idx2[CHURN_N], i, mode = (int)(churn_rounds % 4);
		pthread_t c;
		unsigned v;

		CHECK(rd != NULL);
		c = t_start(churn_rx_main, rd);
		while (atomic_load(&rd->stage) == 0)
			futex(&rd->stage, FUTEX_WAIT_PRIVATE, 0, NULL);
		churn_register(rd, 0, idx);
		churn_traffic(rd, idx);
		switch (mode) {
		case 0: /* clean */
			for (i = 0; i < CHURN_N; i++)
				CHECK(uintr_unregister_sender(rd->fds[i], 0) == 0);
			churn_instruct(rd, I_CLOSE_UNREGISTER);
			t_join(c);
			break;
		case 1: /* the receiver thread exits with its fds open */
			churn_instruct(rd, I_EXIT);
			t_join(c);
			churn_noop_sends(idx);
			CHECK_ERR(uintr_register_sender(rd->fds[0], 0), EISCONN);
			for (i = 0; i < rd->nfds; i++)
				CHECK(close(rd->fds[i]) == 0);
			churn_expect_fault(idx);
			break;
		case 2: /* unregister and register again */
			churn_instruct(rd, I_REREGISTER);
			churn_noop_sends(idx);
			churn_register(rd, CHURN_N, idx2);
			churn_traffic(rd, idx2);
			for (i = 0; i < 2 * CHURN_N; i++)
				CHECK(uintr_unregister_sender(rd->fds[i], 0) == 0);
			churn_instruct(rd, I_CLOSE_UNREGISTER);
			t_join(c);
			break;
		default: /* the fds are closed while the receiver lives */
			for (i = 0; i < CHURN_N; i++)
				CHECK(close(rd->fds[i]) == 0);
			churn_expect_fault(idx);
			churn_instruct(rd, I_RECREATE);
			churn_register(rd, 0, idx2);
			churn_traffic(rd, idx2);
			for (i = 0; i < CHURN_N; i++)
				CHECK(uintr_unregister_sender(rd->fds[i], 0) == 0);
			churn_instruct(rd, I_CLOSE_UNREGISTER);
			t_join(c);
			break;
		}
		churn_check_round(rd);
		for (v = 0; v < UINTR_MAX_VECTORS; v++)
			churn_delivered_total += atomic_load(&rd->c.delivered[v]);
		free(rd);
		churn_rounds++;
	}
	return NULL;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	struct stable_rx rx[NRX];
	pthread_t drivers[MAXSEND], churner;
	pid_t pids[MAXSEND];
	unsigned long long sum = 0, last = 0, stable_delivered = 0;
	struct uintr_stats st;
	int k, r, v, stop_idx[NRX];
	double secs, next_report;

	if (T_TSAN) {
		/* It holds back signals that arrive while a thread sleeps in a
		 * raw syscall, and keeps one pending signal per number: queued
		 * notifications and release notices would merge. */
		printf("skip: the soak does not run under ThreadSanitizer\n");
		return T_SKIP;
	}
	total = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
	nthreads = argc > 2 ? atoi(argv[2]) : 4;
	nprocs = argc > 3 ? atoi(argv[3]) : 2;
	nsend = nthreads + nprocs;
	if (nthreads < 1 || nprocs < 0 || nsend > MAXSEND || total < (unsigned long long)nsend * GENERATIONS) {
		fprintf(stderr, "usage: soak [COUNT [THREADS [PROCS]]] (threads + procs <= %d)\n",
			MAXSEND);
		return T_FAIL;
	}
	width = 36 / nsend < 4 ? 36 / nsend : 4; /* vectors 0..35 for senders */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	printf("soak: %llu interrupts from %d sender threads and %d sender processes, "
	       "%d vectors in flight each, 2 receivers; churn alongside\n", total, nthreads, nprocs,
	       NRX * width);
	t0 = t_now();

	for (r = 0; r < NRX; r++) {
		memset(&rx[r], 0, sizeof(rx[r]));
		rx[r].i = r;
		rx[r].th = t_start(stable_rx_main, &rx[r]);
		WAIT_UNTIL(atomic_load(&rx[r].ready));
	}
	fflush(NULL);
	for (k = 0; k < nprocs; k++) {
		pids[k] = fork();
		CHECK(pids[k] >= 0);
		if (pids[k] == 0)
			sender_process(nthreads + k);
	}
	senders_running = nthreads;
	for (k = 0; k < nthreads; k++)
		drivers[k] = t_start(sender_driver, (void *)(intptr_t)k);
	churner = t_start(churn_main, NULL);

	next_report = t_now() + 10.0;
	for (;;) {
		int procs_left = 0;

		for (k = 0, sum = 0; k < nsend; k++)
			sum += atomic_load(&sh->done[k]);
		for (k = 0; k < nprocs; k++)
			if (pids[k] > 0) {
				int status;
				pid_t w = waitpid(pids[k], &status, WNOHANG);

				if (w == pids[k]) {
					if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
						SOAK_FAIL("sender process %d: status %#x", k, status);
					pids[k] = 0;
				} else {
					procs_left++;
				}
			}
		if (atomic_load(&sh->failed))
			return T_FAIL;
		if (!procs_left && atomic_load(&senders_running) == 0)
			break;
		if (t_now() >= next_report) {
			printf("  %6.1f s: %llu sent (%.0f/s), %llu churn rounds\n", t_now() - t0, sum,
			       (double)(sum - last) / 10.0, churn_rounds);
			fflush(stdout);
			last = sum;
			next_report += 10.0;
		}
		usleep(100000);
	}
	for (k = 0; k < nthreads; k++)
		t_join(drivers[k]);
	atomic_store(&churn_stop, 1);
	t_join(churner);
	secs = t_now() - t0;

	/* Every stable post delivered exactly once, by now. */
	for (r = 0; r < NRX; r++) {
		for (v = 0; v < UINTR_MAX_VECTORS; v++) {
			unsigned long long s = atomic_load(&sh->rx[r].sent[v]);
			double until = t_now() + 20.0;

			while (atomic_load(&sh->rx[r].delivered[v]) < s && t_now() < until)
				sched_yield();
			if (atomic_load(&sh->rx[r].delivered[v]) != s)
				SOAK_FAIL("receiver %d vector %d: sent %llu delivered %llu", r, v, s,
					  atomic_load(&sh->rx[r].delivered[v]));
			stable_delivered += s;
		}
		if (atomic_load(&sh->rx[r].extra))
			SOAK_FAIL("receiver %d: %llu extra deliveries", r, atomic_load(&sh->rx[r].extra));
	}
	for (k = 0, sum = 0; k < nsend; k++)
		sum += atomic_load(&sh->done[k]);
	if (sum != total || stable_delivered != total)
		SOAK_FAIL("%llu sent, %llu delivered, expected %llu", sum, stable_delivered, total);
	if (atomic_load(&sh->stray))
		SOAK_FAIL("%llu deliveries with no receiver context", atomic_load(&sh->stray));

	/* Stop the stable receivers through their stop vectors. */
	for (r = 0; r < NRX; r++) {
		stop_idx[r] = uintr_register_sender(sh->fd[r][STOP_VEC], 0);
		CHECK(stop_idx[r] >= 0);
		atomic_fetch_add(&sh->rx[r].sent[STOP_VEC], 1);
		atomic_store(&rx[r].stop, 1);
		uintr_senduipi((unsigned long long)stop_idx[r]);
		t_join(rx[r].th);
		CHECK_EQ(atomic_load(&sh->rx[r].delivered[STOP_VEC]), 1);
	}
	CHECK(uintr_get_stats(&st, UINTR_STATS_PROCESS) == 0);
	if (st.delivered != stable_delivered + NRX + churn_delivered_total)
		SOAK_FAIL("process stats: %llu delivered, expected %llu", st.delivered,
			  stable_delivered + NRX + churn_delivered_total);
	if (st.spurious != 0)
		SOAK_FAIL("process stats: %llu spurious notifications", st.spurious);

	printf("soak: %llu interrupts sent, %llu delivered: 0 lost, 0 extra, in %.1f s (%.0f/s)\n",
	       sum, stable_delivered, secs, (double)sum / secs);
	printf("soak: churn: %llu rounds, %llu interrupts delivered exactly, %llu harmless posts "
	       "to gone receivers, %llu faults after release; %llu notifications, 0 spurious\n",
	       churn_rounds, churn_sent, churn_noop, churn_faults, st.notifications);
	return T_PASS;
}
