/*
 * uintr-safepoint (`make bench-safepoint`): how fast a safepoint
 * interrupts running code, and what the safepoints cost (issue 14,
 * uintr-safepoint(7)).
 *
 * Latency, one way, endpoints pinned to two CPUs:
 *   cacheline        a write seen by a thread spinning on it (ping-pong,
 *                    RTT/2): the floor of any notification
 *   uintr-safepoint  uintr_senduipi to a receiver in the instrumented
 *                    state busy in a loop built with the plugin; its
 *                    handler sends back to the other side, busy the same
 *                    way (RTT/2)
 *   uintr-async      the same with receivers not in the instrumented
 *                    state, busy in the same loop: the notification signal
 *   signal-running   tgkill to a busy thread whose handler tgkills back
 *   uintr-fallback   a receiver in the instrumented state (deadline
 *                    FALLBACK_NS) busy in a loop with no safepoint: from
 *                    the send to the handler's first instruction, by the
 *                    TSC both CPUs read (not a ping-pong: one way is ~ the
 *                    deadline, a skew of a few ns does not matter)
 * Slowdown: each compute workload (safepoint-kernels.c) built with and
 * without the plugin, and the programs listed by bench/safepoint-sources.sh
 * (real code bases built from Debian source packages both ways, running
 * their own workload), timed in pairs (one run of each build back to back,
 * the order alternating; 21 pairs for a kernel, 7 for a program):
 * baseline_ns and instrumented_ns are the fastest run of each (other work
 * on the machine only adds), ratio the median over the pairs of
 * instrumented / baseline (a pair shares the machine's state of the
 * moment, so the ratio resists the load changing during the run).
 * geomean_slowdown over all rows.
 *
 * Prints a table and the targets, writes DIR/safepoint.json.
 * Options: -o DIR, -n ROUNDS (latency), -r REPS (slowdown), -w FILE (the
 * program list: "name<TAB>baseline command<TAB>instrumented command"
 * lines), -q (quick).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uintr.h>

#include "bench.h"
#include "safepoint-kernels.h"

#define FALLBACK_NS 20000ull
#define MAX_ROWS    32

enum mode { M_CACHELINE, M_SAFEPOINT, M_ASYNC, M_SIGNAL, M_FALLBACK, M_COUNT };
static const char *const g_mode_name[M_COUNT] = {
	"cacheline", "uintr-safepoint", "uintr-async", "signal-running", "uintr-fallback",
};

struct sp_side {
	_Atomic uint64_t count ALIGNED; /* handled (or, cacheline, seen) */
	_Atomic int fd, idx, ready;
	pid_t tid;
};

static struct {
	enum mode mode;
	uint64_t rounds;
	struct sp_side s[2];
	_Atomic uint64_t ping ALIGNED, pong ALIGNED;
	_Atomic uint64_t stamp ALIGNED; /* uintr-fallback: the handler's TSC */
	_Atomic int start;
	uint64_t *samples;
} g;

static __thread int t_me;

static void on_uintr(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	if (g.mode == M_FALLBACK)
		atomic_store_explicit(&g.stamp, now_ticks(), memory_order_relaxed);
	atomic_fetch_add_explicit(&g.s[t_me].count, 1, memory_order_release);
	if (t_me == 1 && g.mode != M_FALLBACK)
		uintr_senduipi((unsigned long long)g.s[1].idx);
}

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&g.s[t_me].count, 1, memory_order_release);
	if (t_me == 1)
		syscall(SYS_tgkill, getpid(), g.s[0].tid, SIGUSR1);
}

static void side_setup(int me)
{
	struct sp_side *s = &g.s[me];

	t_me = me;
	s->tid = (pid_t)syscall(SYS_gettid);
	if (pin_to_cpu(me) != 0)
		fprintf(stderr, "uintr-safepoint: cannot pin to CPU %d\n", me);
	if (g.mode == M_SAFEPOINT || g.mode == M_ASYNC || g.mode == M_FALLBACK) {
		if (uintr_register_handler(on_uintr, 0) != 0)
			bench_fail("uintr_register_handler: %s", strerror(errno));
		s->fd = uintr_create_fd(1, 0);
		if (s->fd < 0)
			bench_fail("uintr_create_fd: %s", strerror(errno));
		if (g.mode == M_SAFEPOINT &&
		    uintr_set_safepoints(60000000000ull, 0) != 0)
			bench_fail("uintr_set_safepoints: %s", strerror(errno));
		if (g.mode == M_FALLBACK && me == 1 && uintr_set_safepoints(FALLBACK_NS, 0) != 0)
			bench_fail("uintr_set_safepoints: %s", strerror(errno));
		uintr_stui();
	}
	s->ready = 1;
	while (!g.s[!me].ready)
		cpu_relax();
	if (g.mode == M_SAFEPOINT || g.mode == M_ASYNC || g.mode == M_FALLBACK) {
		/* Each side sends to the other. */
		s->idx = uintr_register_sender(g.s[!me].fd, 0);
		if (s->idx < 0)
			bench_fail("uintr_register_sender: %s", strerror(errno));
	}
	atomic_fetch_add(&g.start, 1);
	while (g.start < 2)
		cpu_relax();
}

static void side_done(void)
{
	if (g.mode == M_SAFEPOINT || g.mode == M_ASYNC || g.mode == M_FALLBACK) {
		uintr_unregister_sender(g.s[t_me].idx, 0);
		uintr_unregister_handler(0);
	}
}

/* The receiver side: busy until the sender's last round. */
static void *side_b(void *arg)
{
	uint64_t n = g.rounds;

	(void)arg;
	side_setup(1);
	switch (g.mode) {
	case M_CACHELINE:
		for (uint64_t i = 1; i <= n; i++) {
			while (atomic_load_explicit(&g.ping, memory_order_acquire) != i)
				;
			atomic_store_explicit(&g.pong, i, memory_order_release);
		}
		break;
	case M_SAFEPOINT:
		bk_spin_until(&g.s[1].count, n);
		break;
	case M_FALLBACK:
	case M_ASYNC:
	case M_SIGNAL:
		bk_spin_until_plain(&g.s[1].count, n);
		break;
	default:
		break;
	}
	side_done();
	return NULL;
}

static void run_mode(enum mode m, uint64_t rounds, uint64_t warm, struct stats *st)
{
	pthread_t t;
	uint64_t n = rounds + warm;
	struct sigaction sa;

	memset(&g, 0, sizeof(g));
	g.mode = m;
	g.rounds = n;
	g.samples = calloc(n, sizeof(uint64_t));
	if (!g.samples)
		bench_fail("out of memory");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&t, NULL, side_b, NULL) != 0)
		bench_fail("pthread_create");
	side_setup(0);
	for (uint64_t i = 1; i <= n; i++) {
		uint64_t t0 = now_ticks(), t1;

		switch (m) {
		case M_CACHELINE:
			atomic_store_explicit(&g.ping, i, memory_order_release);
			while (atomic_load_explicit(&g.pong, memory_order_acquire) != i)
				;
			break;
		case M_SAFEPOINT:
			uintr_senduipi((unsigned long long)g.s[0].idx);
			bk_spin_until(&g.s[0].count, i);
			break;
		case M_ASYNC:
			uintr_senduipi((unsigned long long)g.s[0].idx);
			bk_spin_until_plain(&g.s[0].count, i);
			break;
		case M_SIGNAL:
			syscall(SYS_tgkill, getpid(), g.s[1].tid, SIGUSR1);
			bk_spin_until_plain(&g.s[0].count, i);
			break;
		case M_FALLBACK:
			uintr_senduipi((unsigned long long)g.s[0].idx);
			/* Yielding: on two CPUs the watchdog needs this one. */
			while (atomic_load_explicit(&g.s[1].count, memory_order_acquire) != i)
				sched_yield();
			break;
		default:
			break;
		}
		t1 = m == M_FALLBACK ? atomic_load(&g.stamp) : now_ticks();
		g.samples[i - 1] = t1 > t0 ? t1 - t0 : 0;
	}
	pthread_join(t, NULL);
	side_done();
	signal(SIGUSR1, SIG_DFL);
	/* Round trips halve to one way; uintr-fallback is one way already. */
	stats_compute(g.samples + warm, rounds, m == M_FALLBACK ? 0 : g_timer_overhead_ns,
		      m == M_FALLBACK ? 1.0 : 0.5, st);
	free(g.samples);
}

/* ---- slowdown ------------------------------------------------------------ */

struct slow {
	char name[64];
	double base_ns, instr_ns; /* fastest run of each build */
	double ratio;             /* median of the pairs' instrumented / baseline */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define MAX_REPS 101
static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static struct slow g_slow[MAX_ROWS];
static int g_nslow;
static volatile uint64_t g_sink;

static uint32_t *g_next, *g_ma, *g_mb, *g_mc, *g_sortbuf;
static unsigned char *g_bytes;
#define CHASE_N  (1u << 22) /* 16 MiB of indices */
#define SORT_N   (1 << 18)
#define BYTES_N  (1 << 20)

static void kernels_setup(void)
{
	uint64_t x = 88172645463325252ull;

	g_next = malloc(CHASE_N * sizeof(uint32_t));
	g_ma = malloc(BK_DIM * BK_DIM * sizeof(uint32_t));
	g_mb = malloc(BK_DIM * BK_DIM * sizeof(uint32_t));
	g_mc = malloc(BK_DIM * BK_DIM * sizeof(uint32_t));
	g_sortbuf = malloc(SORT_N * sizeof(uint32_t));
	g_bytes = malloc(BYTES_N);
	if (!g_next || !g_ma || !g_mb || !g_mc || !g_sortbuf || !g_bytes)
		bench_fail("out of memory");
	/* One random cycle through all the indices (Sattolo). */
	for (uint32_t i = 0; i < CHASE_N; i++)
		g_next[i] = i;
	for (uint32_t i = CHASE_N - 1; i > 0; i--) {
		uint32_t j, t;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = (uint32_t)(x % i);
		t = g_next[i], g_next[i] = g_next[j], g_next[j] = t;
	}
	for (int i = 0; i < BK_DIM * BK_DIM; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		g_ma[i] = (uint32_t)x;
		g_mb[i] = (uint32_t)(x >> 32);
	}
	for (int i = 0; i < BYTES_N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		g_bytes[i] = (unsigned char)x;
	}
}

static uint64_t run_kernel(int k, int plain)
{
	switch (k) {
	case 0: return plain ? bk_tight_plain(10000000) : bk_tight(10000000);
	case 1: return plain ? bk_fib_plain(32) : bk_fib(32);
	case 2: return plain ? bk_chase_plain(g_next, 300000) : bk_chase(g_next, 300000);
	case 3: return plain ? bk_calls_plain(10000000) : bk_calls(10000000);
	case 4: return plain ? bk_matmul_plain(g_ma, g_mb, g_mc, 6) : bk_matmul(g_ma, g_mb, g_mc, 6);
	case 5: return plain ? bk_sort_plain(g_sortbuf, SORT_N, 1) : bk_sort(g_sortbuf, SORT_N, 1);
	case 6: return plain ? bk_hash_plain(g_bytes, BYTES_N, 10) : bk_hash(g_bytes, BYTES_N, 10);
	default: return 0;
	}
}
static const char *const g_kernel_name[] = {
	"tight-loop", "recursion-fib", "pointer-chase", "call-heavy", "matmul-nest", "quicksort",
	"byte-hash",
};
#define NKERNELS 7

static void slow_kernels(int reps)
{
	for (int k = 0; k < NKERNELS; k++) {
		struct slow *r = &g_slow[g_nslow++];

		snprintf(r->name, sizeof(r->name), "%s", g_kernel_name[k]);
		r->base_ns = r->instr_ns = INFINITY;
		if (run_kernel(k, 0) != run_kernel(k, 1))
			bench_fail("%s: the instrumented build gives another answer", r->name);
		double pr[MAX_REPS];

		for (int i = 0; i < reps; i++) {
			double t[2];

			/* The order alternates, so neither build always runs
			 * first after the other's caches. */
			for (int j = 0; j < 2; j++) {
				int plain = (i + j) % 2;
				uint64_t t0 = mono_ns();

				g_sink += run_kernel(k, plain);
				t[plain] = (double)(mono_ns() - t0);
			}
			if (t[1] < r->base_ns)
				r->base_ns = t[1];
			if (t[0] < r->instr_ns)
				r->instr_ns = t[0];
			pr[i] = t[0] / t[1];
		}
		r->ratio = median_of(pr, reps);
	}
}

static double run_cmd(const char *cmd)
{
	uint64_t t0 = mono_ns();
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return (double)(mono_ns() - t0);
}

static void slow_programs(const char *list, int reps)
{
	FILE *f = list ? fopen(list, "r") : NULL;
	char line[4096];

	if (!f) {
		printf("real code bases: skipped (no program list%s%s)\n", list ? " at " : "",
		       list ? list : "");
		return;
	}
	while (fgets(line, sizeof(line), f) && g_nslow < MAX_ROWS) {
		char *name = strtok(line, "\t\n"), *base = strtok(NULL, "\t\n"),
		     *instr = strtok(NULL, "\t\n");
		struct slow *r;
		int ok = 1;

		if (!name || !base || !instr)
			continue;
		r = &g_slow[g_nslow];
		snprintf(r->name, sizeof(r->name), "%s", name);
		r->base_ns = r->instr_ns = INFINITY;
		double pr[MAX_REPS];

		for (int i = 0; i < reps && ok; i++) {
			double b, s;

			if (i % 2) {
				s = run_cmd(instr);
				b = run_cmd(base);
			} else {
				b = run_cmd(base);
				s = run_cmd(instr);
			}
			if (b < 0 || s < 0)
				ok = 0;
			if (b < r->base_ns)
				r->base_ns = b;
			if (s < r->instr_ns)
				r->instr_ns = s;
			pr[i] = s / b;
		}
		if (ok)
			r->ratio = median_of(pr, reps);
		if (!ok) {
			printf("%s: a run failed, row skipped\n", name);
			continue;
		}
		g_nslow++;
	}
	fclose(f);
}

/* ---- output ---------------------------------------------------------------- */

static void read_file_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[1024];

	snprintf(buf, len, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && !strncmp(line, "model name", 10)) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
}

static void usage(void)
{
	fprintf(stderr, "usage: uintr-safepoint [-q] [-o DIR] [-n ROUNDS] [-r REPS] [-w LIST]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dir = "build/bench", *list = NULL;
	uint64_t rounds = 20000, fb_rounds = 2000;
	int reps = 21, quick = 0, opt;
	struct stats lat[M_COUNT];
	char cpu[256], kernel[256], date[64], load0[128], load1[128], path[4096];
	struct utsname u;
	time_t now = time(NULL);
	double logsum = 0, worst = 0;
	FILE *f;

	while ((opt = getopt(argc, argv, "qo:n:r:w:h")) != -1) {
		switch (opt) {
		case 'q': quick = 1; rounds = 2000; fb_rounds = 200; reps = 5; break;
		case 'o': dir = optarg; break;
		case 'n': rounds = strtoull(optarg, NULL, 0); fb_rounds = rounds / 10 + 1; break;
		case 'r': reps = atoi(optarg); break;
		case 'w': list = optarg; break;
		default: usage();
		}
	}
	if (reps < 1 || reps > MAX_REPS)
		bench_fail("-r: 1 to %d", MAX_REPS);
	bench_set_main();
	timer_init();
	if (!g_timer_tsc)
		fprintf(stderr, "uintr-safepoint: no invariant TSC: uintr-fallback is measured "
				"by CLOCK_MONOTONIC\n");
	read_file_line("/proc/loadavg", load0, sizeof(load0));
	cpu_model(cpu, sizeof(cpu));
	if (uname(&u) == 0)
		snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

	for (int m = 0; m < M_COUNT; m++)
		run_mode((enum mode)m, m == M_FALLBACK ? fb_rounds : rounds,
			 (m == M_FALLBACK ? fb_rounds : rounds) / 10, &lat[m]);

	kernels_setup();
	slow_kernels(reps);
	slow_programs(list, quick ? 1 : 7);
	read_file_line("/proc/loadavg", load1, sizeof(load1));

	printf("uintr-safepoint: %s, %ld CPUs, load %s -> %s\n", cpu, sysconf(_SC_NPROCESSORS_ONLN),
	       load0, load1);
	printf("\n%-18s %10s %10s %10s %8s\n", "latency (one way)", "p50 ns", "p99 ns", "max ns",
	       "samples");
	for (int m = 0; m < M_COUNT; m++)
		printf("%-18s %10.0f %10.0f %10.0f %8zu\n", g_mode_name[m], lat[m].p50, lat[m].p99,
		       lat[m].max, lat[m].n);
	printf("\n%-18s %14s %14s %8s\n", "slowdown", "baseline ns", "instrumented", "ratio");
	for (int i = 0; i < g_nslow; i++) {
		double r = g_slow[i].ratio;

		logsum += log(r);
		if (r > worst)
			worst = r;
		printf("%-18s %14.0f %14.0f %8.3f\n", g_slow[i].name, g_slow[i].base_ns,
		       g_slow[i].instr_ns, r);
	}
	double geo = g_nslow ? exp(logsum / g_nslow) : 0;
	double lim = (double)FALLBACK_NS + lat[M_SIGNAL].p50;

	printf("%-18s %38.3f\n", "geomean", geo);
	printf("\ntargets:\n");
	printf("  uintr-safepoint p50 %.0f ns <= 2 x cacheline %.0f ns: %s (%.2fx)\n",
	       lat[M_SAFEPOINT].p50, 2 * lat[M_CACHELINE].p50,
	       lat[M_SAFEPOINT].p50 <= 2 * lat[M_CACHELINE].p50 ? "met" : "MISSED",
	       lat[M_SAFEPOINT].p50 / lat[M_CACHELINE].p50);
	printf("  geomean slowdown %.3f <= 1.03: %s; worst %.3f <= 1.10: %s\n", geo,
	       geo <= 1.03 ? "met" : "MISSED", worst, worst <= 1.10 ? "met" : "MISSED");
	printf("  uninstrumented receiver: fallback p50 %.0f ns, p99 %.0f ns <= deadline %llu + "
	       "signal-running p50 %.0f = %.0f ns: %s (p50), %s (p99)\n",
	       lat[M_FALLBACK].p50, lat[M_FALLBACK].p99, FALLBACK_NS, lat[M_SIGNAL].p50, lim,
	       lat[M_FALLBACK].p50 <= lim ? "met" : "MISSED",
	       lat[M_FALLBACK].p99 <= lim ? "met" : "MISSED");

	if (mkdir_p(dir) != 0)
		bench_fail("mkdir %s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/safepoint.json", dir);
	f = fopen(path, "w");
	if (!f)
		bench_fail("%s: %s", path, strerror(errno));
	fprintf(f, "{\n  \"context\": {\n    \"cpu_model\": ");
	json_str(f, cpu);
	fprintf(f, ",\n    \"cpus_online\": %ld,\n    \"kernel\": ", sysconf(_SC_NPROCESSORS_ONLN));
	json_str(f, kernel);
	fprintf(f, ",\n    \"date\": ");
	json_str(f, date);
	fprintf(f, ",\n    \"loadavg_start\": ");
	json_str(f, load0);
	fprintf(f, ",\n    \"loadavg_end\": ");
	json_str(f, load1);
	fprintf(f, ",\n    \"compiler\": \"gcc %s\",\n    \"timer\": \"%s\",\n    \"quick\": %s,\n"
		   "    \"fallback_deadline_ns\": %llu,\n",
		__VERSION__, g_timer_tsc ? "tsc" : "clock_monotonic", quick ? "true" : "false",
		FALLBACK_NS);
	fprintf(f, "    \"method\": \"latency: one way, CPUs 0 and 1; cacheline, uintr-safepoint, "
		   "uintr-async, signal-running: ping-pong RTT/2; uintr-fallback: TSC at the handler "
		   "minus TSC before the send. slowdown: pairs of runs, one of each build back to back "
		   "in alternating order (kernels %d pairs, programs %d); baseline_ns and "
		   "instrumented_ns: the fastest run of each; ratio: the median over the pairs of "
		   "instrumented / baseline\"\n  },\n", reps, quick ? 1 : 7);
	fprintf(f, "  \"latency\": [\n");
	for (int m = 0; m < M_COUNT; m++)
		fprintf(f, "    {\"name\": \"%s\", \"p50_ns\": %.1f, \"p99_ns\": %.1f, \"max_ns\": %.1f, "
			   "\"samples\": %zu}%s\n", g_mode_name[m], lat[m].p50, lat[m].p99,
			lat[m].max, lat[m].n, m + 1 < M_COUNT ? "," : "");
	fprintf(f, "  ],\n  \"slowdown\": [\n");
	for (int i = 0; i < g_nslow; i++) {
		fprintf(f, "    {\"workload\": ");
		json_str(f, g_slow[i].name);
		fprintf(f, ", \"baseline_ns\": %.0f, \"instrumented_ns\": %.0f, \"ratio\": %.4f}%s\n",
			g_slow[i].base_ns, g_slow[i].instr_ns, g_slow[i].ratio,
			i + 1 < g_nslow ? "," : "");
	}
	fprintf(f, "  ],\n  \"geomean_slowdown\": %.4f,\n  \"max_slowdown\": %.4f,\n", geo, worst);
	fprintf(f, "  \"targets\": {\"safepoint_over_cacheline\": %.3f, \"fallback_p50_ns\": %.1f, "
		   "\"fallback_limit_ns\": %.1f}\n}\n",
		lat[M_SAFEPOINT].p50 / lat[M_CACHELINE].p50, lat[M_FALLBACK].p50, lim);
	fclose(f);
	printf("\nwrote %s\n", path);
	return 0;
}
