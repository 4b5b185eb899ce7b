/*
 * uintr-scale (`make bench-scale`): how libuintr behaves as senders,
 * receivers and vectors multiply, beside eventfd and futex under the same
 * load, and what one receiver costs in memory and descriptors.
 *
 *   uintr-scale [-t SEC] [-o DIR] [-s SERIES,...] [-q] [-h]
 *
 * Writes DIR/scaling.json ("context", and "series": one object per series,
 * mechanism and mode with "points" [{x, p50_ns, p99_ns, throughput}]) and,
 * with gnuplot, DIR/scaling.svg.
 *
 * Every point is one closed-loop run in a fresh watched process (util.c):
 * R receivers, S sender threads; sender s owns some channels of one
 * receiver (a vector, for libuintr).  A round: the sender stamps each of
 * its channels, notifies each, then sleeps on a futex until the receiver
 * acknowledged each.  The receiver waits in the mechanism's blocking call,
 * stamps what arrived, acknowledges it (futex wake: the same for every
 * mechanism) and waits again.
 *   - uintr:   uintr_senduipi per channel; the receiver, in polling mode
 *              (uintr_set_polling(1)), loops in uintr_wait(0) (default spin,
 *              then block); its handler stamps.
 *   - eventfd: the sender sets the channel's bit in a pending mask and
 *              writes the receiver's eventfd; the receiver blocks in read().
 *   - futex:   the sender sets the bit, stores 1 to a futex word and calls
 *              FUTEX_WAKE; the receiver FUTEX_WAITs while nothing is pending
 *              (PRIVATE between threads, shared between processes).
 * Latency: the receiver's stamp minus the sender's (TSC: invariant and
 * synchronised here; CLOCK_MONOTONIC otherwise).  Throughput: notifications
 * acknowledged per second, all receivers together.
 *
 * Series:
 *   senders        1..64 sender threads to one receiver, one vector each
 *   receivers      1..1000 receivers, one sender thread each, as threads of
 *                  one process and as one process each; bytes of memory
 *                  (Pss, /proc/self/smaps_rollup) and descriptors added per
 *                  receiver by becoming a receiver with one vector fd
 *   vectors        1..64 vectors of one receiver, posted together by one
 *                  sender thread each round
 *   cross-process  as senders, the receiver in its own process
 * The machine this runs on may have few CPUs (the context says how many):
 * once senders and receivers outnumber them, a point measures contention
 * for CPUs as much as the mechanism.
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uintr.h"

enum mechanism { M_UINTR, M_EVENTFD, M_FUTEX, M_COUNT };
static const char *const g_mech_name[M_COUNT] = {"uintr", "eventfd", "futex"};

enum series { S_SENDERS, S_RECEIVERS, S_VECTORS, S_XPROC, S_COUNT };
static const char *const g_series_name[S_COUNT] = {"senders", "receivers", "vectors",
						   "cross-process"};

#define MAX_RECV 1000
#define MAX_CHANS 1024
#define MAX_SAMPLES 200000
#define MAX_POINTS 8
#define STACK_SIZE (128 * 1024)

static const int g_x_senders[] = {1, 2, 4, 8, 16, 32, 64};
static const int g_x_receivers[] = {1, 4, 16, 64, 256, 1000};
static const int g_x_quick[] = {1, 2, 4};

struct chan {
	_Atomic uint64_t t0 ALIGNED; /* sender's stamp of the round in flight */
	_Atomic uint32_t ack;        /* futex word: rounds acknowledged */
};

struct recv {
	_Atomic uint64_t mask ALIGNED; /* eventfd, futex: channels pending */
	_Atomic uint32_t fword;        /* futex: "something pending" word */
	_Atomic uint32_t done;         /* its senders that have stopped */
	_Atomic uint64_t delivered ALIGNED; /* written by the receiver only */
	uint64_t nsamp;
	int chan_base, nchan, nsenders;
	int efd;
	int fd[64];
	int ready;
	long mem_kb_delta, fd_delta; /* processes: measured by the child itself */
};

struct sbarrier {
	_Atomic uint32_t count ALIGNED;
	_Atomic uint32_t gen;
};

/* One point: what a runner process shares with its children and parent. */
struct point {
	int series, mech, procs, pinned;
	int nrecv, nsend, nchan_per_recv, chans_per_sender;
	double seconds;
	_Atomic int stop ALIGNED;
	struct sbarrier bar;
	double elapsed_ns;
	uint64_t delivered;
	long mem_kb_before, mem_kb_after, fds_before, fds_after;
	size_t per_recv_samples;
	struct recv recv[MAX_RECV];
	struct chan chan[MAX_CHANS];
	uint64_t samples[MAX_SAMPLES];
};

static struct point *g_pt;
static double g_seconds = 0.4;
static int g_quick;
static const char *g_outdir = "build/bench";
static const char *g_only;
static pid_t g_runner_pid;

/* ---- small tools ---------------------------------------------------------- */

static long futex_(_Atomic uint32_t *w, int op, uint32_t val, int shared)
{
	return syscall(SYS_futex, w, op | (shared ? 0 : FUTEX_PRIVATE_FLAG), val, NULL, NULL, 0);
}

/* A futex barrier: hundreds of parties may wait here on two CPUs. */
static void sbarrier_wait(struct sbarrier *b, uint32_t parties)
{
	uint32_t gen = atomic_load(&b->gen);

	if (atomic_fetch_add(&b->count, 1) + 1 == parties) {
		atomic_store(&b->count, 0);
		atomic_fetch_add(&b->gen, 1);
		futex_(&b->gen, FUTEX_WAKE, INT32_MAX, 1);
		return;
	}
	while (atomic_load(&b->gen) == gen)
		futex_(&b->gen, FUTEX_WAIT, gen, 1);
}

static long read_pss_kb(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Pss: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;

	/* (The directory's own descriptor is counted every time alike.) */
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static int send_fd_tagged(int sock, int fd, int tag)
{
	struct iovec iov = {&tag, sizeof(tag)};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m;
	struct cmsghdr *c;

	memset(&m, 0, sizeof(m));
	memset(&u, 0, sizeof(u));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == (ssize_t)sizeof(tag) ? 0 : -1;
}

static int recv_fd_tagged(int sock, int *tag)
{
	struct iovec iov = {tag, sizeof(*tag)};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m;
	struct cmsghdr *c;
	int fd = -1;

	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(*tag))
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* ---- receiver ------------------------------------------------------------- */

static __thread _Atomic uint64_t t_fired;
static __thread uint64_t t_stamp[64];

static void on_uintr(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	t_stamp[vector] = now_ticks();
	atomic_fetch_or(&t_fired, 1ull << vector);
}

/* Become receiver r of the point's mechanism (its vector fds, or eventfd). */
static void receiver_setup(struct point *p, int r)
{
	struct recv *rv = &p->recv[r];
	int c;

	if (p->mech == M_UINTR) {
		if (uintr_register_handler(on_uintr, 0) != 0)
			bench_fail("uintr_register_handler: %s", strerror(errno));
		for (c = 0; c < rv->nchan; c++) {
			rv->fd[c] = uintr_create_fd((unsigned long long)c, 0);
			if (rv->fd[c] < 0)
				bench_fail("uintr_create_fd (receiver %d, vector %d): %s", r, c,
					   strerror(errno));
		}
		/* SN kept set: senders never notify while the receiver is busy
		 * acknowledging; it takes its interrupts in uintr_wait, as the
		 * baselines take theirs in read() and FUTEX_WAIT. */
		if (uintr_set_polling(1) != 0)
			bench_fail("uintr_set_polling: %s", strerror(errno));
		uintr_stui();
	} else if (p->mech == M_EVENTFD && !p->procs) {
		rv->efd = eventfd(0, EFD_CLOEXEC);
		if (rv->efd < 0)
			bench_fail("eventfd: %s", strerror(errno));
	}
}

static uint64_t receiver_wait(struct point *p, struct recv *rv, uint64_t *stamp_one)
{
	uint64_t fired = 0, v;

	switch (p->mech) {
	case M_UINTR:
		while (!(fired = atomic_exchange(&t_fired, 0)))
			uintr_wait(0);
		*stamp_one = 0;
		break;
	case M_EVENTFD:
		while (!fired) {
			if (read(rv->efd, &v, sizeof(v)) != (ssize_t)sizeof(v) && errno != EINTR)
				bench_fail("eventfd read: %s", strerror(errno));
			fired = atomic_exchange(&rv->mask, 0);
		}
		*stamp_one = now_ticks();
		break;
	default:
		for (;;) {
			atomic_store(&rv->fword, 0);
			fired = atomic_exchange(&rv->mask, 0);
			if (fired)
				break;
			futex_(&rv->fword, FUTEX_WAIT, 0, p->procs);
		}
		*stamp_one = now_ticks();
		break;
	}
	return fired;
}

static void receiver_loop(struct point *p, int r)
{
	struct recv *rv = &p->recv[r];
	uint64_t *samples = p->samples + (size_t)r * p->per_recv_samples;
	uint64_t n = 0, delivered = 0;

	for (;;) {
		uint64_t stamp, fired = receiver_wait(p, rv, &stamp);
		int stopping = atomic_load(&p->stop);

		while (fired) {
			int c = __builtin_ctzll(fired);
			struct chan *ch = &p->chan[rv->chan_base + c];
			uint64_t t = stamp ? stamp : t_stamp[c];

			fired &= fired - 1;
			if (!stopping) {
				uint64_t t0 = atomic_load(&ch->t0);

				samples[n++ % p->per_recv_samples] = t > t0 ? t - t0 : 0;
				delivered++;
			}
			atomic_fetch_add(&ch->ack, 1);
			futex_(&ch->ack, FUTEX_WAKE, 1, p->procs);
		}
		atomic_store_explicit(&rv->delivered, delivered, memory_order_relaxed);
		if (stopping && atomic_load(&rv->done) == (uint32_t)rv->nsenders)
			break;
	}
	rv->nsamp = n < p->per_recv_samples ? n : p->per_recv_samples;
}

struct thread_arg {
	struct point *p;
	int id;
};

static void pin_if(struct point *p, int cpu)
{
	if (p->pinned && pin_to_cpu(cpu) != 0)
		bench_fail("pin to CPU %d: %s", cpu, strerror(errno));
}

/* Threads: parked, (measured), set up, (measured), then run. */
static void *receiver_thread(void *arg)
{
	struct thread_arg *a = arg;
	struct point *p = a->p;

	pin_if(p, 1);
	sbarrier_wait(&p->bar, (uint32_t)p->nrecv + 1); /* all threads exist */
	sbarrier_wait(&p->bar, (uint32_t)p->nrecv + 1); /* measured: set up */
	receiver_setup(p, a->id);
	sbarrier_wait(&p->bar, (uint32_t)p->nrecv + 1); /* set up: measured */
	sbarrier_wait(&p->bar, (uint32_t)(p->nrecv + p->nsend + 1)); /* go */
	receiver_loop(p, a->id);
	return NULL;
}

/* Processes: each measures its own cost, sends its fds to the runner. */
static void receiver_process(struct point *p, int r, int sock)
{
	struct recv *rv = &p->recv[r];
	long kb0, fd0;
	int c;

	pin_if(p, 1);
	kb0 = read_pss_kb();
	fd0 = count_fds();
	receiver_setup(p, r);
	rv->mem_kb_delta = read_pss_kb() - kb0;
	rv->fd_delta = count_fds() - fd0;
	for (c = 0; p->mech == M_UINTR && c < rv->nchan; c++)
		if (send_fd_tagged(sock, rv->fd[c], r * 64 + c) != 0)
			bench_fail("send fd: %s", strerror(errno));
	sbarrier_wait(&p->bar, (uint32_t)(p->nrecv + p->nsend + 1)); /* go */
	receiver_loop(p, r);
}

/* ---- sender --------------------------------------------------------------- */

struct sender {
	int recv, first, n;
	int idx[64];
};
static struct sender g_senders[MAX_RECV];

static void notify(struct point *p, struct sender *s, int c)
{
	struct recv *rv = &p->recv[s->recv];
	uint64_t one = 1;

	switch (p->mech) {
	case M_UINTR:
		uintr_senduipi((unsigned long long)s->idx[c - s->first]);
		break;
	case M_EVENTFD:
		atomic_fetch_or(&rv->mask, 1ull << c);
		if (write(rv->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
			bench_fail("eventfd write: %s", strerror(errno));
		break;
	default:
		atomic_fetch_or(&rv->mask, 1ull << c);
		atomic_store(&rv->fword, 1);
		futex_(&rv->fword, FUTEX_WAKE, 1, p->procs);
		break;
	}
}

static void *sender_thread(void *arg)
{
	struct thread_arg *a = arg;
	struct point *p = a->p;
	struct sender *s = &g_senders[a->id];
	struct recv *rv = &p->recv[s->recv];
	uint32_t k;
	int c;

	pin_if(p, 0);
	for (c = 0; p->mech == M_UINTR && c < s->n; c++) {
		s->idx[c] = uintr_register_sender(rv->fd[s->first + c], 0);
		if (s->idx[c] < 0)
			bench_fail("uintr_register_sender: %s", strerror(errno));
	}
	sbarrier_wait(&p->bar, (uint32_t)(p->nrecv + p->nsend + 1));
	for (k = 1; !atomic_load(&p->stop); k++) {
		for (c = s->first; c < s->first + s->n; c++)
			atomic_store(&p->chan[rv->chan_base + c].t0, now_ticks());
		for (c = s->first; c < s->first + s->n; c++)
			notify(p, s, c);
		for (c = s->first; c < s->first + s->n; c++) {
			struct chan *ch = &p->chan[rv->chan_base + c];
			uint32_t v;

			while ((v = atomic_load(&ch->ack)) < k)
				futex_(&ch->ack, FUTEX_WAIT, v, p->procs);
		}
	}
	/* Stopped: tell the receiver, then wake it to see that. */
	atomic_fetch_add(&rv->done, 1);
	for (c = s->first; c < s->first + s->n; c++)
		notify(p, s, c);
	return NULL;
}

/* ---- one point, in a runner process ---------------------------------------- */

static pthread_t spawn(void *(*fn)(void *), struct thread_arg *a)
{
	pthread_attr_t at;
	pthread_t t;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, STACK_SIZE);
	if (pthread_create(&t, &at, fn, a) != 0)
		bench_fail("pthread_create: out of threads (%d receivers, %d senders)",
			   g_pt->nrecv, g_pt->nsend);
	pthread_attr_destroy(&at);
	return t;
}

static void point_run(struct shared *sh, int unused)
{
	struct point *p = g_pt;
	int total = p->nrecv + p->nsend, i, sock[2] = {-1, -1};
	struct thread_arg *args = calloc((size_t)total, sizeof(*args));
	pthread_t *tids = calloc((size_t)total, sizeof(*tids));
	pid_t *kids = calloc((size_t)p->nrecv, sizeof(*kids));
	uint64_t t0, t1;
	long step;

	(void)unused;
	g_runner_pid = getpid();
	if (!args || !tids || !kids)
		bench_fail("out of memory");
	if (p->procs) {
		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sock) != 0)
			bench_fail("socketpair: %s", strerror(errno));
		for (i = 0; i < p->nrecv; i++) {
			if (p->mech == M_EVENTFD &&
			    (p->recv[i].efd = eventfd(0, EFD_CLOEXEC)) < 0)
				bench_fail("eventfd: %s", strerror(errno));
			kids[i] = fork();
			if (kids[i] < 0)
				bench_fail("fork: %s", strerror(errno));
			if (kids[i] == 0) {
				close(sock[0]);
				receiver_process(p, i, sock[1]);
				_exit(0);
			}
		}
		for (i = 0; p->mech == M_UINTR && i < p->nrecv * p->nchan_per_recv; i++) {
			int tag = 0, fd = recv_fd_tagged(sock[0], &tag);

			if (fd < 0 || tag / 64 >= p->nrecv)
				bench_fail("receive fd: %s", strerror(errno));
			p->recv[tag / 64].fd[tag % 64] = fd;
		}
	} else {
		for (i = 0; i < p->nrecv; i++) {
			args[i] = (struct thread_arg){p, i};
			tids[i] = spawn(receiver_thread, &args[i]);
		}
		sbarrier_wait(&p->bar, (uint32_t)p->nrecv + 1);
		p->mem_kb_before = read_pss_kb();
		p->fds_before = count_fds();
		sbarrier_wait(&p->bar, (uint32_t)p->nrecv + 1);
		sbarrier_wait(&p->bar, (uint32_t)p->nrecv + 1);
		p->mem_kb_after = read_pss_kb();
		p->fds_after = count_fds();
	}
	for (i = 0; i < p->nsend; i++) {
		args[p->nrecv + i] = (struct thread_arg){p, i};
		tids[p->nrecv + i] = spawn(sender_thread, &args[p->nrecv + i]);
	}
	sbarrier_wait(&p->bar, (uint32_t)(total + 1));
	t0 = mono_ns();
	for (step = 0; (double)(mono_ns() - t0) < p->seconds * 1e9; step++) {
		struct timespec d = {0, 10 * 1000 * 1000};
		uint64_t sum = 0;

		nanosleep(&d, NULL);
		for (i = 0; i < p->nrecv; i++)
			sum += atomic_load_explicit(&p->recv[i].delivered, memory_order_relaxed);
		atomic_store(&sh->progress, sum + (uint64_t)step);
	}
	atomic_store(&p->stop, 1);
	t1 = mono_ns();
	for (i = p->procs ? p->nrecv : 0; i < total; i++)
		pthread_join(tids[i], NULL);
	for (i = 0; p->procs && i < p->nrecv; i++) {
		int st;

		if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			bench_fail("receiver process %d failed (status 0x%x)", i, st);
	}
	p->elapsed_ns = (double)(t1 - t0);
	p->delivered = 0;
	for (i = 0; i < p->nrecv; i++)
		p->delivered += p->recv[i].delivered;
	atomic_store(&sh->finished, 1);
}

/* ---- the series ------------------------------------------------------------ */

struct result {
	int x;
	struct stats st;
	double throughput;
	double bytes_per_receiver, fds_per_receiver; /* < 0: not measured */
	char err[256];
};

struct row {
	int series, mech, procs;
	int npoints;
	struct result pt[MAX_POINTS];
};

static struct row g_rows[S_COUNT * M_COUNT * 2];
static int g_nrows;

static int series_selected(int s)
{
	const char *p = g_only;
	size_t l = strlen(g_series_name[s]);

	if (!p)
		return 1;
	while (*p) {
		size_t k = strcspn(p, ",");

		if (k == l && !strncmp(p, g_series_name[s], l))
			return 1;
		p += k;
		if (*p == ',')
			p++;
	}
	return 0;
}

static void point_setup(struct point *p, int series, int mech, int procs, int x)
{
	int i;

	memset(p, 0, offsetof(struct point, samples));
	p->series = series;
	p->mech = mech;
	p->procs = procs;
	p->pinned = series != S_RECEIVERS;
	p->seconds = g_seconds;
	switch (series) {
	case S_RECEIVERS:
		p->nrecv = x;
		p->nsend = x;
		p->nchan_per_recv = 1;
		break;
	case S_VECTORS:
		p->nrecv = 1;
		p->nsend = 1;
		p->nchan_per_recv = x;
		break;
	default: /* senders, cross-process */
		p->nrecv = 1;
		p->nsend = x;
		p->nchan_per_recv = x;
		break;
	}
	for (i = 0; i < p->nrecv; i++) {
		p->recv[i].chan_base = i * p->nchan_per_recv;
		p->recv[i].nchan = p->nchan_per_recv;
		p->recv[i].nsenders = series == S_RECEIVERS || series == S_VECTORS ? 1 : x;
		p->recv[i].efd = -1;
	}
	for (i = 0; i < p->nsend; i++) {
		struct sender *s = &g_senders[i];

		memset(s, 0, sizeof(*s));
		if (series == S_RECEIVERS) {
			s->recv = i;
			s->first = 0;
			s->n = 1;
		} else if (series == S_VECTORS) {
			s->recv = 0;
			s->first = 0;
			s->n = x;
		} else {
			s->recv = 0;
			s->first = i;
			s->n = 1;
		}
	}
	p->per_recv_samples = MAX_SAMPLES / (size_t)p->nrecv;
}

static void measure(struct shared *sh, struct row *row, int x)
{
	struct point *p = g_pt;
	struct result *res = &row->pt[row->npoints++];
	size_t n = 0;
	int i, rc;

	memset(res, 0, sizeof(*res));
	res->x = x;
	res->bytes_per_receiver = res->fds_per_receiver = -1;
	point_setup(p, row->series, row->mech, row->procs, x);
	memset(sh, 0, sizeof(*sh));
	g_sh = sh;
	rc = run_runner(point_run, sh, 0, p->seconds + 120, 10);
	if (rc < 0) {
		snprintf(res->err, sizeof(res->err), "%s", sh->err);
		fprintf(stderr, " [%s %s%s x=%d FAILED: %s]", g_series_name[row->series],
			g_mech_name[row->mech], row->procs ? " procs" : "", x, res->err);
		return;
	}
	/* Pool each receiver's samples at the front. */
	for (i = 0; i < p->nrecv; i++) {
		memmove(p->samples + n, p->samples + (size_t)i * p->per_recv_samples,
			p->recv[i].nsamp * sizeof(uint64_t));
		n += p->recv[i].nsamp;
	}
	stats_compute(p->samples, n, 0, 1.0, &res->st);
	res->throughput = p->elapsed_ns > 0 ? (double)p->delivered / (p->elapsed_ns / 1e9) : 0;
	if (row->series == S_RECEIVERS) {
		if (row->procs) {
			double kb = 0, fds = 0;

			for (i = 0; i < p->nrecv; i++) {
				kb += (double)p->recv[i].mem_kb_delta;
				fds += (double)p->recv[i].fd_delta;
			}
			res->bytes_per_receiver = kb * 1024 / p->nrecv;
			res->fds_per_receiver = fds / p->nrecv;
		} else {
			res->bytes_per_receiver =
				(double)(p->mem_kb_after - p->mem_kb_before) * 1024 / p->nrecv;
			res->fds_per_receiver = (double)(p->fds_after - p->fds_before) / p->nrecv;
		}
	}
	fprintf(stderr, " %d:%.0f", x, res->st.p50);
}

static void run_series(struct shared *sh, int series)
{
	const int *xs = series == S_RECEIVERS ? g_x_receivers : g_x_senders;
	size_t nx = series == S_RECEIVERS ? sizeof(g_x_receivers) / sizeof(int)
					   : sizeof(g_x_senders) / sizeof(int);
	int procs, mech;
	size_t i;

	if (g_quick) {
		xs = g_x_quick;
		nx = sizeof(g_x_quick) / sizeof(int);
	}
	for (procs = 0; procs < 2; procs++) {
		if (procs != (series == S_XPROC) && series != S_RECEIVERS)
			continue;
		for (mech = 0; mech < M_COUNT; mech++) {
			struct row *row = &g_rows[g_nrows++];

			row->series = series;
			row->mech = mech;
			row->procs = procs;
			fprintf(stderr, "%s %s%s (p50 ns):", g_series_name[series], g_mech_name[mech],
				procs ? " (processes)" : "");
			for (i = 0; i < nx; i++)
				measure(sh, row, xs[i]);
			fprintf(stderr, "\n");
		}
	}
}

/* ---- output ---------------------------------------------------------------- */

static char g_cpu[256] = "unknown", g_kernel[512], g_date[64], g_load0[64], g_load1[64];
static struct rlimit g_nofile;

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "unknown");
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

static void read_context(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[1024];
	struct utsname u;
	time_t t = time(NULL);

	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && !strncmp(line, "model name", 10)) {
			snprintf(g_cpu, sizeof(g_cpu), "%s", colon + 2);
			g_cpu[strcspn(g_cpu, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	if (uname(&u) == 0)
		snprintf(g_kernel, sizeof(g_kernel), "%s %s %s", u.sysname, u.release, u.machine);
	strftime(g_date, sizeof(g_date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
}

static const char *contention_note(void)
{
	static char buf[256];

	snprintf(buf, sizeof(buf),
		 "this machine has %ld CPUs: past %ld threads (senders + receivers) a point "
		 "measures contention for CPUs as much as the mechanism",
		 sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_NPROCESSORS_ONLN));
	return buf;
}

static const struct row *find_row(int series, int mech, int procs)
{
	int i;

	for (i = 0; i < g_nrows; i++)
		if (g_rows[i].series == series && g_rows[i].mech == mech && g_rows[i].procs == procs)
			return &g_rows[i];
	return NULL;
}

static void print_tables(double seconds)
{
	int i, k;

	printf("\nuintr-scale: %s, %ld CPUs, %s\n%s\nload average at start: %s, at end: %s\n",
	       g_cpu, sysconf(_SC_NPROCESSORS_ONLN), g_kernel, contention_note(), g_load0, g_load1);
	printf("latency = receiver's stamp - sender's stamp (ns); throughput = notifications "
	       "acknowledged per second\n");
	for (i = 0; i < g_nrows; i++) {
		const struct row *r = &g_rows[i];
		const struct row *b[2] = {find_row(r->series, M_EVENTFD, r->procs),
					  find_row(r->series, M_FUTEX, r->procs)};

		if (i == 0 || g_rows[i - 1].series != r->series || g_rows[i - 1].procs != r->procs)
			printf("\n%s%s\n%-8s %6s %10s %10s %12s %9s %9s %10s %8s\n",
			       g_series_name[r->series], r->procs ? " (processes)" : "", "mech", "x",
			       "p50_ns", "p99_ns", "per_s", "p50/evfd", "p50/futex", "bytes/recv",
			       "fds/recv");
		for (k = 0; k < r->npoints; k++) {
			const struct result *p = &r->pt[k];
			char q[2][16], mem[32] = "-", fds[32] = "-";
			int j;

			if (p->err[0]) {
				printf("%-8s %6d FAILED: %s\n", g_mech_name[r->mech], p->x, p->err);
				continue;
			}
			for (j = 0; j < 2; j++) {
				snprintf(q[j], sizeof(q[j]), "-");
				if (r->mech == M_UINTR && b[j] && k < b[j]->npoints &&
				    !b[j]->pt[k].err[0] && b[j]->pt[k].st.p50 > 0)
					snprintf(q[j], sizeof(q[j]), "%.2f",
						 p->st.p50 / b[j]->pt[k].st.p50);
			}
			if (p->bytes_per_receiver >= 0) {
				snprintf(mem, sizeof(mem), "%.0f", p->bytes_per_receiver);
				snprintf(fds, sizeof(fds), "%.2f", p->fds_per_receiver);
			}
			printf("%-8s %6d %10.0f %10.0f %12.0f %9s %9s %10s %8s\n",
			       g_mech_name[r->mech], p->x, p->st.p50, p->st.p99, p->throughput, q[0],
			       q[1], mem, fds);
		}
	}
	printf("\ntotal run time %.1f s\n", seconds);
}

static void json_num_or_null(FILE *f, double v, int ok)
{
	if (ok)
		fprintf(f, "%.1f", v);
	else
		fputs("null", f);
}

static int write_json(const char *path, double seconds)
{
	FILE *f = fopen(path, "w");
	int i, k;

	if (!f)
		return -1;
	fprintf(f, "{\n  \"context\": {\n    \"cpu_model\": ");
	json_str(f, g_cpu);
	fprintf(f, ",\n    \"cpus_online\": %ld,\n    \"kernel\": ", sysconf(_SC_NPROCESSORS_ONLN));
	json_str(f, g_kernel);
	fprintf(f, ",\n    \"date\": ");
	json_str(f, g_date);
	fprintf(f, ",\n    \"loadavg_start\": ");
	json_str(f, g_load0);
	fprintf(f, ",\n    \"loadavg_end\": ");
	json_str(f, g_load1);
	fprintf(f, ",\n    \"contention\": ");
	json_str(f, contention_note());
	fprintf(f, ",\n    \"libuintr_version\": \"%d.%d\",\n    \"seconds_per_point\": %.3f,\n"
		   "    \"quick\": %s,\n    \"timer\": \"%s\",\n    \"rlimit_nofile\": %llu,\n",
		UINTR_VERSION_MAJOR, UINTR_VERSION_MINOR, g_seconds, g_quick ? "true" : "false",
		g_timer_tsc ? "tsc" : "clock_monotonic", (unsigned long long)g_nofile.rlim_cur);
	fprintf(f, "    \"method\": \"closed loop: each sender stamps and notifies its channels, "
		   "then sleeps on a futex until the receiver acknowledged each (the same for every "
		   "mechanism); p50/p99 = receiver's stamp - sender's stamp; throughput = "
		   "notifications acknowledged per second, all receivers together; uintr: "
		   "uintr_senduipi, receiver in polling mode looping in uintr_wait(0) (default spin, then block); eventfd: "
		   "pending mask + write(), receiver blocked in read(); futex: pending mask + "
		   "FUTEX_WAKE, receiver in FUTEX_WAIT (private between threads)\",\n");
	fprintf(f, "    \"bytes_per_receiver\": \"growth of Pss (/proc/self/smaps_rollup) when "
		   "the parked receiver threads become receivers with one vector fd (threads: the "
		   "whole process / receivers; processes: each child measures itself), kernel "
		   "memory not included\",\n"
		   "    \"fds_per_receiver\": \"growth of open descriptors over the same step, "
		   "including the one vector fd the receiver asked for\",\n");
	fprintf(f, "    \"run_seconds\": %.1f\n  },\n  \"series\": [", seconds);
	for (i = 0; i < g_nrows; i++) {
		const struct row *r = &g_rows[i];

		fprintf(f, "%s\n    {\"series\": \"%s\", \"mechanism\": \"%s\", \"mode\": \"%s\", "
			   "\"unit\": {\"x\": \"%s\", \"p50_ns\": \"ns\", \"p99_ns\": \"ns\", "
			   "\"throughput\": \"notifications/s\"}, \"points\": [",
			i ? "," : "", g_series_name[r->series], g_mech_name[r->mech],
			r->procs ? "processes" : "threads",
			r->series == S_RECEIVERS ? "receivers"
			: r->series == S_VECTORS ? "vectors"
						 : "sender threads");
		for (k = 0; k < r->npoints; k++) {
			const struct result *p = &r->pt[k];

			fprintf(f, "%s\n      {\"x\": %d, \"p50_ns\": ", k ? "," : "", p->x);
			json_num_or_null(f, p->st.p50, !p->err[0]);
			fprintf(f, ", \"p99_ns\": ");
			json_num_or_null(f, p->st.p99, !p->err[0]);
			fprintf(f, ", \"throughput\": ");
			json_num_or_null(f, p->throughput, !p->err[0]);
			fprintf(f, ", \"samples\": %zu", p->st.n);
			if (r->series == S_RECEIVERS) {
				fprintf(f, ", \"bytes_per_receiver\": ");
				json_num_or_null(f, p->bytes_per_receiver, p->bytes_per_receiver >= 0);
				fprintf(f, ", \"fds_per_receiver\": ");
				json_num_or_null(f, p->fds_per_receiver, p->bytes_per_receiver >= 0);
			}
			if (p->err[0]) {
				fprintf(f, ", \"error\": ");
				json_str(f, p->err);
			}
			fprintf(f, "}");
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ]\n}\n");
	return fclose(f);
}

/* scaling-<row>.dat per row; scaling.gp draws p50 and throughput per series. */
static void plot(void)
{
	static const char *const color[M_COUNT] = {"#2b7bba", "#8c8c8c", "#d95f02"};
	char path[4096], svg[4200];
	FILE *gp;
	int i, k, s, pass;

	for (i = 0; i < g_nrows; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/scaling-%d.dat", g_outdir, i);
		f = fopen(path, "w");
		if (!f)
			return;
		fprintf(f, "# x p50_ns p99_ns throughput (%s %s %s)\n",
			g_series_name[g_rows[i].series], g_mech_name[g_rows[i].mech],
			g_rows[i].procs ? "processes" : "threads");
		for (k = 0; k < g_rows[i].npoints; k++)
			if (!g_rows[i].pt[k].err[0])
				fprintf(f, "%d %.1f %.1f %.1f\n", g_rows[i].pt[k].x,
					g_rows[i].pt[k].st.p50 > 1 ? g_rows[i].pt[k].st.p50 : 1,
					g_rows[i].pt[k].st.p99, g_rows[i].pt[k].throughput);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/scaling.gp", g_outdir);
	gp = fopen(path, "w");
	if (!gp)
		return;
	fprintf(gp, "set terminal svg size 1600,800 dynamic enhanced font 'sans,10' background '#ffffff'\n"
		    "set output '%s/scaling.svg'\n"
		    "set multiplot layout 2,4 title \"libuintr scaling: %s; %s\"\n"
		    "set logscale xy\nset grid\nset key top left font ',8'\n",
		g_outdir, g_cpu, contention_note());
	for (pass = 0; pass < 2; pass++) {
		for (s = 0; s < S_COUNT; s++) {
			const char *sep = "plot ";

			fprintf(gp, "set title '%s: %s'\nset xlabel '%s'\nset ylabel '%s'\n",
				g_series_name[s], pass ? "throughput" : "p50 latency",
				s == S_RECEIVERS ? "receivers" : s == S_VECTORS ? "vectors" : "senders",
				pass ? "notifications/s" : "ns");
			for (i = 0; i < g_nrows; i++) {
				if (g_rows[i].series != s || g_rows[i].npoints == 0)
					continue;
				fprintf(gp, "%s'%s/scaling-%d.dat' using 1:%d with linespoints lc rgb '%s' "
					    "dt %d title '%s%s'",
					sep, g_outdir, i, pass ? 4 : 2, color[g_rows[i].mech],
					g_rows[i].procs ? 2 : 1, g_mech_name[g_rows[i].mech],
					g_rows[i].procs && s == S_RECEIVERS ? " (processes)" : "");
				sep = ", \\\n     ";
			}
			if (!strcmp(sep, "plot "))
				fprintf(gp, "set title '%s: not run'\nunset logscale\nplot [0:1][0:1] -1 notitle\nset logscale xy\n",
					g_series_name[s]);
			else
				fprintf(gp, "\n");
		}
	}
	fprintf(gp, "unset multiplot\n");
	fclose(gp);
	snprintf(svg, sizeof(svg), "%s/scaling.svg", g_outdir);
	run_gnuplot(path, svg);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: uintr-scale [-t SEC] [-o DIR] [-s SERIES,...] [-q] [-h]\n"
		   "  -t SEC     measured time of each point (default 0.4; -q: 0.05)\n"
		   "  -o DIR     output directory for scaling.json and scaling.svg (default build/bench)\n"
		   "  -s LIST    only these series: senders, receivers, vectors, cross-process\n"
		   "  -q         quick smoke run: x = 1, 2, 4 only, short points\n");
}

int main(int argc, char **argv)
{
	uint64_t t0 = mono_ns();
	struct shared *sh;
	char path[4096];
	int c, s, t_given = 0;

	while ((c = getopt(argc, argv, "t:o:s:qh")) != -1) {
		switch (c) {
		case 't':
			g_seconds = atof(optarg);
			t_given = 1;
			if (g_seconds <= 0 || g_seconds > 60) {
				fprintf(stderr, "uintr-scale: bad -t %s\n", optarg);
				return 2;
			}
			break;
		case 'o':
			g_outdir = optarg;
			break;
		case 's':
			g_only = optarg;
			break;
		case 'q':
			g_quick = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (g_quick && !t_given)
		g_seconds = 0.05;
	bench_set_main();
	if (mkdir_p(g_outdir) != 0) {
		fprintf(stderr, "uintr-scale: cannot create %s: %s\n", g_outdir, strerror(errno));
		return 1;
	}
	/* 1000 receivers in one process with their senders need several
	 * thousand descriptors (uintr_register_handler(3), LIMITS). */
	if (getrlimit(RLIMIT_NOFILE, &g_nofile) == 0 && g_nofile.rlim_cur < g_nofile.rlim_max) {
		g_nofile.rlim_cur = g_nofile.rlim_max > 65536 ? 65536 : g_nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &g_nofile);
	}
	getrlimit(RLIMIT_NOFILE, &g_nofile);
	read_context();
	read_line("/proc/loadavg", g_load0, sizeof(g_load0));
	timer_init();
	g_pt = mmap(NULL, sizeof(*g_pt), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_pt == MAP_FAILED || sh == MAP_FAILED) {
		perror("uintr-scale: mmap");
		return 1;
	}
	for (s = 0; s < S_COUNT; s++)
		if (series_selected(s))
			run_series(sh, s);
	read_line("/proc/loadavg", g_load1, sizeof(g_load1));
	print_tables((double)(mono_ns() - t0) / 1e9);
	snprintf(path, sizeof(path), "%s/scaling.json", g_outdir);
	if (write_json(path, (double)(mono_ns() - t0) / 1e9) != 0) {
		fprintf(stderr, "uintr-scale: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("json: %s\n", path);
	plot();
	for (s = 0; s < g_nrows; s++)
		for (c = 0; c < g_rows[s].npoints; c++)
			if (g_rows[s].pt[c].err[0])
				return 1;
	return 0;
}
