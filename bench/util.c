/*
 * The benchmark harness: the timer, statistics, the per-thread syscall
 * counter, CPU pinning, fd passing, a barrier that works across processes
 * (it lives in MAP_SHARED memory), the runner that gives every measurement
 * a fresh watched process, and JSON/plot helpers.  Scenario files
 * (latency.c, sendcost.c, scale.c) and the programs' main files
 * (uintr-bench.c, scale.c) depend on it; it depends on none of them.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int g_timer_tsc;
double g_ns_per_tick = 1.0;
double g_timer_overhead_ns;
double g_timer_step_ns;

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t ns_to_ticks(double ns)
{
	return (uint64_t)(ns / g_ns_per_tick);
}

double ticks_to_ns(uint64_t ticks)
{
	return (double)ticks * g_ns_per_tick;
}

void spin_ns(double ns)
{
	uint64_t end = now_ticks() + ns_to_ticks(ns);

	while (now_ticks() < end)
		cpu_relax();
}

void stall_census(double seconds, struct stall_census *c)
{
	uint64_t t = now_ticks(), end = t + ns_to_ticks(seconds * 1e9);
	uint64_t t20 = ns_to_ticks(20e3), t50 = ns_to_ticks(50e3), t100 = ns_to_ticks(100e3);
	uint64_t longest = 0, lost = 0;

	memset(c, 0, sizeof(*c));
	c->seconds = seconds;
	while (t < end) {
		uint64_t next = now_ticks(), gap = next - t;

		t = next;
		if (gap <= t20)
			continue;
		c->over_20us++;
		c->over_50us += gap > t50;
		c->over_100us += gap > t100;
		lost += gap;
		if (gap > longest)
			longest = gap;
	}
	c->max_ns = ticks_to_ns(longest);
	c->lost_ns = ticks_to_ns(lost);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_abs_dev(const uint64_t *v, size_t n, double sub_ns, double scale, double p50);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The TSC is a fair timer only when it ticks at a constant rate through
 * every power state; Linux says so with these two cpuinfo flags. */
static int tsc_invariant(void)
{
#if defined(__x86_64__)
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int constant = 0, nonstop = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
#else
	return 0;
#endif
}

void timer_init(void)
{
	enum { PAIRS = 20001 };
	static uint64_t d[PAIRS];
	size_t i;

	g_timer_tsc = tsc_invariant();
	g_ns_per_tick = 1.0;
	if (g_timer_tsc) {
		/* Calibrate against CLOCK_MONOTONIC over 200 ms: a few us of
		 * wake-up jitter is an error of about 1e-5. */
		struct timespec nap = {0, 200 * 1000 * 1000};
		uint64_t c0 = mono_ns(), t0 = now_ticks();
		uint64_t c1, t1;

		nanosleep(&nap, NULL);
		c1 = mono_ns();
		t1 = now_ticks();
		if (t1 > t0 && c1 > c0)
			g_ns_per_tick = (double)(c1 - c0) / (double)(t1 - t0);
		else
			g_timer_tsc = 0;
	}
	for (i = 0; i < PAIRS; i++) {
		uint64_t a = now_ticks();
		uint64_t b = now_ticks();

		d[i] = b - a;
	}
	qsort(d, PAIRS, sizeof(d[0]), cmp_u64);
	g_timer_overhead_ns = ticks_to_ns(d[PAIRS / 2]);
	/* The smallest step the timer is seen to take (an upper bound of its
	 * resolution: AMD's TSC, for one, advances in steps of ~10 ns). */
	g_timer_step_ns = 0;
	for (i = 0; i < 1000; i++) {
		uint64_t a = now_ticks(), b;

		while ((b = now_ticks()) == a)
			;
		if (g_timer_step_ns == 0 || ticks_to_ns(b - a) < g_timer_step_ns)
			g_timer_step_ns = ticks_to_ns(b - a);
	}
}

void stats_compute(uint64_t *v, size_t n, double sub_ns, double scale, struct stats *st)
{
	double sum = 0, sq = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	st->n = n;
	if (n == 0)
		return;
	qsort(v, n, sizeof(v[0]), cmp_u64);
	for (i = 0; i < n; i++) {
		double x = (ticks_to_ns(v[i]) - sub_ns) * scale;

		sum += x;
		if (x > 1e6)
			st->over_1ms++;
	}
	st->mean = sum / (double)n;
	for (i = 0; i < n; i++) {
		double x = (ticks_to_ns(v[i]) - sub_ns) * scale - st->mean;

		sq += x * x;
	}
	st->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	/* Nearest-rank percentiles. */
	st->min = (ticks_to_ns(v[0]) - sub_ns) * scale;
	st->max = (ticks_to_ns(v[n - 1]) - sub_ns) * scale;
	st->p50 = (ticks_to_ns(v[(size_t)ceil(0.50 * (double)n) - 1]) - sub_ns) * scale;
	st->p99 = (ticks_to_ns(v[(size_t)ceil(0.99 * (double)n) - 1]) - sub_ns) * scale;
	st->p999 = (ticks_to_ns(v[(size_t)ceil(0.999 * (double)n) - 1]) - sub_ns) * scale;
	st->mad = median_abs_dev(v, n, sub_ns, scale, st->p50);
}

/* Median of |x - p50| over the samples, same nearest-rank rule as p50. */
static double median_abs_dev(const uint64_t *v, size_t n, double sub_ns, double scale, double p50)
{
	double *d = malloc(n * sizeof(*d)), mad;
	size_t i;

	if (!d)
		return -1;
	for (i = 0; i < n; i++)
		d[i] = fabs((ticks_to_ns(v[i]) - sub_ns) * scale - p50);
	qsort(d, n, sizeof(d[0]), cmp_dbl);
	mad = d[(size_t)ceil(0.50 * (double)n) - 1];
	free(d);
	return mad;
}

double ratio_median(const double *uintr, const double *base, int npasses)
{
	double q[64];
	int k, n = 0;

	for (k = 0; k < npasses && n < 64; k++)
		if (uintr[k] > 0 && base[k] > 0)
			q[n++] = uintr[k] / base[k];
	if (n == 0)
		return -1;
	return median_sort(q, n);
}

double median_sort(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *ratio_verdict(double r, char *buf, size_t len)
{
	if (r <= 0)
		snprintf(buf, len, "no ratio");
	else if (r < 1.05 && r > 1 / 1.05)
		snprintf(buf, len, "tie (within 5%%: %.2fx)", r);
	else if (r > 1)
		snprintf(buf, len, "libuintr %.2fx slower", r);
	else
		snprintf(buf, len, "libuintr %.2fx faster", 1 / r);
	return buf;
}

void cpu_snap(struct cpu_snap *s)
{
	unsigned long long f[10] = {0};
	struct rusage self, kids;
	double hz = (double)sysconf(_SC_CLK_TCK);
	FILE *p = fopen("/proc/stat", "r");

	s->busy_s = -1;
	if (p) {
		/* cpu  user nice system idle iowait irq softirq steal guest guest_nice */
		if (fscanf(p, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2],
			   &f[3], &f[4], &f[5], &f[6], &f[7]) == 8 && hz > 0)
			s->busy_s = (double)(f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / hz;
		fclose(p);
	}
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	s->own_s = (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
			    kids.ru_stime.tv_sec) +
		   (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
			    kids.ru_stime.tv_usec) / 1e6;
	s->wall_s = (double)mono_ns() / 1e9;
}

double cpu_other(const struct cpu_snap *a, const struct cpu_snap *b)
{
	double wall = b->wall_s - a->wall_s, other;

	if (a->busy_s < 0 || b->busy_s < 0 || wall <= 0)
		return -1;
	other = ((b->busy_s - a->busy_s) - (b->own_s - a->own_s)) / wall;
	return other < 0 ? 0 : other;
}

/* ---- syscall counter ---------------------------------------------------- */

int g_count_ok;
char g_count_why[160];
static long long g_tracepoint_id = -1;
static size_t g_page;

#define SAMPLER_DATA_PAGES 128 /* 512 KiB: 32768 records of 16 bytes */

static long long read_tracepoint_id(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		FILE *f = fopen(paths[i], "r");
		long long id;

		if (!f)
			continue;
		if (fscanf(f, "%lld", &id) == 1) {
			fclose(f);
			return id;
		}
		fclose(f);
	}
	return -1;
}

/*
 * One record per syscall entry of the calling thread, stamped with
 * CLOCK_MONOTONIC, in a ring we read only at the end: nothing is added to
 * the code being counted but the kernel's own record write.
 */
int sampler_open(struct sampler *s)
{
	struct perf_event_attr pa;
	void *p;

	s->fd = -1;
	s->ring = NULL;
	if (g_tracepoint_id < 0)
		return -1;
	g_page = (size_t)sysconf(_SC_PAGESIZE);
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = (uint64_t)g_tracepoint_id;
	pa.sample_period = 1;
	pa.sample_type = PERF_SAMPLE_TIME;
	pa.use_clockid = 1;
	pa.clockid = CLOCK_MONOTONIC;
	/* pid 0, cpu -1: this thread, wherever it runs. */
	s->fd = (int)syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (s->fd < 0)
		return -1;
	s->len = (1 + SAMPLER_DATA_PAGES) * g_page;
	p = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (p == MAP_FAILED) {
		close(s->fd);
		s->fd = -1;
		return -1;
	}
	s->ring = p;
	return 0;
}

void sampler_close(struct sampler *s)
{
	if (s->ring)
		munmap(s->ring, s->len);
	if (s->fd >= 0)
		close(s->fd);
	s->ring = NULL;
	s->fd = -1;
}

static void ring_copy(const unsigned char *data, uint64_t size, uint64_t pos, void *dst,
		      size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		((unsigned char *)dst)[i] = data[(pos + i) % size];
}

/*
 * Count the records that fall inside the windows (sorted, disjoint) not
 * marked skip.  -1 if the ring overflowed or a record was lost.
 */
long long sampler_count(struct sampler *s, const struct window *w, size_t nw)
{
	const struct perf_event_mmap_page *pg = s->ring;
	const unsigned char *data;
	uint64_t head, pos = 0, size;
	long long count = 0;
	size_t k = 0;

	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	size = pg->data_size ? pg->data_size : SAMPLER_DATA_PAGES * g_page;
	data = (const unsigned char *)s->ring + (pg->data_offset ? pg->data_offset : g_page);
	if (head + 64 >= size) /* full: the kernel dropped what did not fit */
		return -1;
	while (pos < head) {
		struct perf_event_header h;
		uint64_t t;

		ring_copy(data, size, pos, &h, sizeof(h));
		if (h.size < sizeof(h))
			return -1;
		if (h.type == PERF_RECORD_LOST)
			return -1;
		if (h.type == PERF_RECORD_SAMPLE) {
			ring_copy(data, size, pos + sizeof(h), &t, sizeof(t));
			while (k < nw && w[k].end < t)
				k++;
			if (k < nw && w[k].begin <= t && !w[k].skip)
				count++;
		}
		pos += h.size;
	}
	return count;
}

/* Can we count?  Checked on known windows: 1 syscall, none, 3. */
void counter_probe(void)
{
	struct window w[3];
	struct sampler s;
	long long n;
	int i;

	g_count_ok = 0;
	g_tracepoint_id = read_tracepoint_id();
	if (g_tracepoint_id < 0) {
		snprintf(g_count_why, sizeof(g_count_why),
			 "raw_syscalls:sys_enter id not readable (tracefs not mounted at "
			 "/sys/kernel/tracing?)");
		return;
	}
	if (sampler_open(&s) != 0) {
		snprintf(g_count_why, sizeof(g_count_why), "perf_event_open/mmap: %s",
			 strerror(errno));
		return;
	}
	memset(w, 0, sizeof(w));
	w[0].begin = mono_ns();
	(void)syscall(SYS_getppid);
	w[0].end = mono_ns();
	w[1].begin = mono_ns();
	w[1].end = mono_ns();
	w[2].begin = mono_ns();
	for (i = 0; i < 3; i++)
		(void)syscall(SYS_getppid);
	w[2].end = mono_ns();
	n = sampler_count(&s, &w[0], 1);
	if (n == 1)
		n = sampler_count(&s, &w[1], 1) == 0 && sampler_count(&s, &w[2], 1) == 3;
	else
		n = 0;
	sampler_close(&s);
	if (n != 1) {
		snprintf(g_count_why, sizeof(g_count_why),
			 "perf samples do not match known syscalls (clock mismatch?)");
		return;
	}
	g_count_ok = 1;
}

int counting_begin(struct counting *c, uint64_t rounds)
{
	memset(c, 0, sizeof(*c));
	c->cap = (size_t)rounds + 1;
	c->w = calloc(c->cap, sizeof(*c->w));
	if (!c->w)
		return -1;
	if (sampler_open(&c->smp) != 0) {
		free(c->w);
		c->w = NULL;
		return -1;
	}
	return 0;
}

void counting_end(struct counting *c, struct side *s)
{
	long long k = sampler_count(&c->smp, c->w, c->n);
	size_t i;

	if (k < 0) {
		s->sys_failed = 1;
	} else {
		s->sys_count += k;
		for (i = 0; i < c->n; i++) {
			if (c->w[i].skip)
				s->sys_discarded++;
			else
				s->sys_sends++;
		}
	}
	sampler_close(&c->smp);
	free(c->w);
	c->w = NULL;
}

/* ---- misc --------------------------------------------------------------- */

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int tgkill_(pid_t tgid, pid_t tid, int sig)
{
	return (int)syscall(SYS_tgkill, tgid, tid, sig);
}

int send_fd(int sock, int fd)
{
	char byte = 'F';
	struct iovec iov = {&byte, 1};
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
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

int recv_fd(int sock)
{
	char byte;
	struct iovec iov = {&byte, 1};
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
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Generation barrier: spins (with yields: parties may share a CPU). */
void barrier_wait(struct barrier *b, int parties)
{
	int gen = atomic_load(&b->gen);

	if (atomic_fetch_add(&b->count, 1) + 1 == parties) {
		atomic_store(&b->count, 0);
		atomic_fetch_add(&b->gen, 1);
		return;
	}
	while (atomic_load(&b->gen) == gen)
		sched_yield();
}

/* ---- runners: every measurement in a fresh, watched process ------------ */

struct shared *g_sh;
static pid_t g_main_pid;

/* The process that watches the runners; bench_fail in any other one ends
 * its runner's whole process group. */
void bench_set_main(void)
{
	g_main_pid = getpid();
}

void bench_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (g_sh && !g_sh->err[0])
		vsnprintf(g_sh->err, sizeof(g_sh->err), fmt, ap);
	else if (!g_sh)
		vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (getpid() != g_main_pid && getpgrp() != getpgid(g_main_pid))
		kill(0, SIGKILL); /* the runner's whole process group */
	_exit(3);
}

struct side_arg {
	struct shared *sh;
	void (*side)(struct shared *, int);
	int me;
};

static void *side_thread(void *p)
{
	struct side_arg *a = p;

	if (pin_to_cpu(a->sh->cpu[a->me]) != 0)
		bench_fail("pin to CPU %d: %s", a->sh->cpu[a->me], strerror(errno));
	a->side(a->sh, a->me);
	return NULL;
}

void run_sides_threads(struct shared *sh, void (*side)(struct shared *, int))
{
	struct side_arg a[2] = {{sh, side, 0}, {sh, side, 1}};
	pthread_t t[2];
	int i;

	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, side_thread, &a[i]) != 0)
			bench_fail("pthread_create");
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

void run_sides_procs(struct shared *sh, void (*side)(struct shared *, int),
		     void (*prefork)(struct shared *))
{
	pid_t pid;
	int st;

	sh->procs = 1;
	if (pin_to_cpu(sh->cpu[0]) != 0)
		bench_fail("pin to CPU %d: %s", sh->cpu[0], strerror(errno));
	if (prefork)
		prefork(sh);
	pid = fork();
	if (pid < 0)
		bench_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		if (pin_to_cpu(sh->cpu[1]) != 0)
			bench_fail("pin to CPU %d: %s", sh->cpu[1], strerror(errno));
		side(sh, 1);
		_exit(0);
	}
	side(sh, 0);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		bench_fail("side B (process) failed, status 0x%x", st);
}

static pid_t pidfd_open_(pid_t pid)
{
	return (pid_t)syscall(SYS_pidfd_open, pid, 0);
}

/*
 * Run fn(sh, arg) in a fresh process; wait at most timeout_s, and at most
 * stall_s (if > 0) without sh->progress moving: a lost wake-up shows as a
 * stall.  Returns 0 if it finished cleanly, 1 if its measurements finished
 * but it then hung (results usable), -2 if it hung while measuring (the
 * rounds before are usable), else -1; sh->err says why.
 */
int run_runner(void (*fn)(struct shared *, int), struct shared *sh, int arg,
		      double timeout_s, int stall_s)
{
	uint64_t t0 = mono_ns(), last = 0, last_move = t0;
	pid_t pid;
	int st = 0, pfd, hung = 0;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(sh->err, sizeof(sh->err), "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		fn(sh, arg);
		_exit(0);
	}
	setpgid(pid, pid);
	pfd = pidfd_open_(pid);
	while (pfd >= 0) {
		struct pollfd p = {.fd = pfd, .events = POLLIN};
		uint64_t now, prog;
		int r = poll(&p, 1, 1000);

		if (r > 0)
			break;
		if (r < 0 && errno != EINTR)
			break;
		now = mono_ns();
		prog = atomic_load(&sh->progress);
		if (prog != last) {
			last = prog;
			last_move = now;
		}
		if ((double)(now - t0) / 1e9 > timeout_s) {
			hung = 1;
			break;
		}
		if (stall_s > 0 && (now - last_move) / 1000000000ull >= (uint64_t)stall_s) {
			hung = 2;
			break;
		}
	}
	if (pfd >= 0)
		close(pfd);
	kill(-pid, SIGKILL); /* a hung run, or what a failed run left */
	waitpid(pid, &st, 0);
	if (hung && atomic_load(&sh->finished) && !sh->err[0])
		return 1;
	if (hung == 2 && !sh->err[0]) {
		snprintf(sh->err, sizeof(sh->err),
			 "hang: no progress for %d s after %llu rounds (lost wake-up?)", stall_s,
			 (unsigned long long)last);
		return -2;
	}
	if (hung) {
		char before[sizeof(sh->err)];

		memcpy(before, sh->err, sizeof(before));
		before[sizeof(before) - 1] = '\0';
		if (hung == 1)
			snprintf(sh->err, sizeof(sh->err), "timed out after %.0f s%s%.200s",
				 timeout_s, before[0] ? ": " : "", before);
		else
			snprintf(sh->err, sizeof(sh->err),
				 "hang: no progress for %d s after %llu rounds (lost wake-up?)%s%.150s",
				 stall_s, (unsigned long long)last, before[0] ? ": " : "", before);
		return -1;
	}
	if (sh->err[0])
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (WIFSIGNALED(st))
			snprintf(sh->err, sizeof(sh->err), "runner killed by signal %d (%s)",
				 WTERMSIG(st), strsignal(WTERMSIG(st)));
		else
			snprintf(sh->err, sizeof(sh->err), "runner exit status %d", WEXITSTATUS(st));
		return -1;
	}
	return 0;
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int have_program(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	while (path && *path) {
		size_t l = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, path, prog);
		if (access(buf, X_OK) == 0)
			return 1;
		path += l;
		if (*path == ':')
			path++;
	}
	return 0;
}

/* Render a gnuplot script into svg, and say on stdout what happened. */
void run_gnuplot(const char *script, const char *svg)
{
	char cmd[8400];

	if (!have_program("gnuplot")) {
		printf("plot: gnuplot not found, skipped (script %s)\n", script);
		return;
	}
	snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>/dev/null", script);
	if (system(cmd) == 0)
		printf("plot: %s\n", svg);
	else
		printf("plot: gnuplot failed (script %s)\n", script);
}

int mkdir_p(const char *dir)
{
	char buf[4096];
	size_t i;

	snprintf(buf, sizeof(buf), "%s", dir);
	for (i = 1; buf[i]; i++) {
		if (buf[i] == '/') {
			buf[i] = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return -1;
			buf[i] = '/';
		}
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}
