/*
 * uintr-bench: how fast libuintr notifies, against what Linux offers.
 *
 *   uintr-bench [-n COUNT] [-c CPU0,CPU1] [-m NAME,...] [-o DIR] [-t SEC] [-q] [-h]
 *
 * Measures (reference section 9 and its criticism; see bench.h for files):
 *   1. one-way latency (RTT/2 of a ping-pong between two pinned threads or
 *      processes) of baselines and of libuintr in each receiver state;
 *   2. the cost of one uintr_senduipi when no notification is due, against
 *      one atomic read-modify-write, and syscalls per send;
 *   3. sends/s and deliveries/s from 1 and 2 senders to one receiver, and
 *      from 2 senders to one epoll loop: libuintr's loop fd against an
 *      eventfd written per message (deliveries/s ratio, above 1 better).
 * Prints tables, writes DIR/results.json and, with gnuplot, DIR/latency.svg.
 *
 * Method, and what to keep in mind when reading the numbers:
 *   - Every measurement runs in a fresh runner process (its own process
 *     group) that the main process watches: a run whose rounds stop
 *     advancing for 5 s is a hang (a lost wake-up), is killed and reported;
 *     no library state carries over from one measurement to the next.
 *   - Latency: side A timestamps (TSC with lfence, calibrated against
 *     CLOCK_MONOTONIC; CLOCK_MONOTONIC where the TSC is not invariant),
 *     notifies B, waits for B's reply and timestamps again; one-way =
 *     (RTT - timer overhead) / 2.  Warm-up rounds are dropped.  Endpoints
 *     are pinned to the two CPUs of -c.  Each baseline runs right before
 *     the libuintr mode it is compared with.
 *   - Passes: each measurement is split into -r passes, interleaved, because
 *     on a VM the host moves the vCPUs (a cache line then takes 25 to 165 ns
 *     to cross, changing every few seconds): the cacheline probe before
 *     each pass shows it, and the ratio column is the median of same-pass
 *     ratios.  Sub-microsecond numbers are only comparable within a pass.
 *   - Fairness (reference 9): one channel per direction, blocking waits are
 *     plain blocking calls, spinning waits use the same cpu_relax().
 *     uintr_wait spins 30 us (SN set) before it blocks, so it is compared
 *     with futex-spin, which spins as long and wakes only a sleeper; the
 *     pure blocking baselines are compared with uintr_wait with spin 0.
 *   - Syscalls per send: counted in extra rounds after the timed ones, with
 *     perf sampling of the raw_syscalls:sys_enter tracepoint on the sending
 *     thread (needs root or perf_event_paranoid <= -1, and tracefs); the
 *     samples carry CLOCK_MONOTONIC stamps and are matched to vDSO clock
 *     windows around each send afterwards, so counting adds no syscall to
 *     the loop.  Without the tracepoint the column says why it is missing.
 *   - The machine's load average is recorded: on a busy machine the tails
 *     (p99, mean, stddev) mostly measure the scheduler.
 */
#include "bench.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uintr.h"


#define MAX_PASSES 20

/* ---- options ------------------------------------------------------------- */

struct options {
	uint64_t n;
	int n_given;
	int cpu[2];
	const char *mechs; /* NULL: all */
	const char *outdir;
	double tp_seconds;
	int passes;
	int passes_given;
	int quick;
};

static struct options g_opt = {
	.n = 20000,
	.cpu = {0, 1},
	.outdir = "build/bench",
	.tp_seconds = 1.0,
	.passes = 10,
};

static void list_names(FILE *f, const char *title, const char *const *names, size_t n)
{
	size_t i, col = strlen(title);

	fputs(title, f);
	for (i = 0; i < n; i++) {
		size_t l = strlen(names[i]) + 1;

		if (col + l > 78) {
			fputs("\n   ", f);
			col = 3;
		}
		fprintf(f, " %s", names[i]);
		col += l;
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	const char *names[64];
	size_t i;

	fprintf(f,
		"usage: uintr-bench [-n COUNT] [-c CPU0,CPU1] [-m NAME,...] [-o DIR] [-t SEC] [-r PASSES]\n"
		"                   [-q] [-h]\n"
		"  -n COUNT    round trips per latency mechanism (default 20000; -q: 1000)\n"
		"  -c A,B      the two CPUs to pin the endpoints to (default 0,1)\n"
		"  -m LIST     run only these (names below, or latency, sender-cost, throughput)\n"
		"  -o DIR      output directory for results.json and latency.svg (default build/bench)\n"
		"  -t SEC      duration of each throughput case (default 1; -q: 0.1)\n"
		"  -r PASSES   split every measurement into this many interleaved passes\n"
		"              (default 10; -q: 2), so host drift affects all of them alike\n"
		"  -q          quick smoke run: small counts\n"
		"  -h          this help\n");
	for (i = 0; i < g_nmechs && i < 64; i++)
		names[i] = g_mechs[i].name;
	list_names(f, "latency:", names, i);
	for (i = 0; i < g_nsc_cases && i < 64; i++)
		names[i] = g_sc_cases[i].name;
	list_names(f, "sender-cost:", names, i);
	for (i = 0; i < g_ntp_cases && i < 64; i++)
		names[i] = g_tp_cases[i].name;
	list_names(f, "throughput:", names, i);
}

static int name_known(const char *name)
{
	size_t i;

	if (!strcmp(name, "latency") || !strcmp(name, "sender-cost") ||
	    !strcmp(name, "throughput"))
		return 1;
	for (i = 0; i < g_nmechs; i++)
		if (!strcmp(name, g_mechs[i].name))
			return 1;
	for (i = 0; i < g_nsc_cases; i++)
		if (!strcmp(name, g_sc_cases[i].name))
			return 1;
	for (i = 0; i < g_ntp_cases; i++)
		if (!strcmp(name, g_tp_cases[i].name))
			return 1;
	return 0;
}

/* Is `name` (of group `group`) selected by -m? */
static int selected(const char *name, const char *group)
{
	const char *p = g_opt.mechs;
	size_t ln = strlen(name), lg = strlen(group);

	if (!p)
		return 1;
	while (*p) {
		size_t l = strcspn(p, ",");

		if ((l == ln && !strncmp(p, name, l)) || (l == lg && !strncmp(p, group, l)))
			return 1;
		p += l;
		if (*p == ',')
			p++;
	}
	return 0;
}

static void parse_options(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "n:c:m:o:t:r:qh")) != -1) {
		char *end;

		switch (c) {
		case 'n':
			g_opt.n = strtoull(optarg, &end, 10);
			if (*end || g_opt.n == 0) {
				fprintf(stderr, "uintr-bench: bad -n %s\n", optarg);
				exit(2);
			}
			g_opt.n_given = 1;
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &g_opt.cpu[0], &g_opt.cpu[1]) != 2 ||
			    g_opt.cpu[0] < 0 || g_opt.cpu[1] < 0 || g_opt.cpu[0] == g_opt.cpu[1]) {
				fprintf(stderr, "uintr-bench: -c wants two different CPUs, e.g. 0,1\n");
				exit(2);
			}
			break;
		case 'm':
			g_opt.mechs = optarg;
			break;
		case 'o':
			g_opt.outdir = optarg;
			break;
		case 't':
			g_opt.tp_seconds = strtod(optarg, &end);
			if (*end || g_opt.tp_seconds <= 0 || g_opt.tp_seconds > 60) {
				fprintf(stderr, "uintr-bench: bad -t %s\n", optarg);
				exit(2);
			}
			break;
		case 'r':
			g_opt.passes = (int)strtol(optarg, &end, 10);
			if (*end || g_opt.passes < 1 || g_opt.passes > MAX_PASSES) {
				fprintf(stderr, "uintr-bench: -r wants 1..%d\n", MAX_PASSES);
				exit(2);
			}
			g_opt.passes_given = 1;
			break;
		case 'q':
			g_opt.quick = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		usage(stderr);
		exit(2);
	}
	if (g_opt.quick) {
		if (!g_opt.n_given)
			g_opt.n = 1000;
		if (g_opt.tp_seconds == 1.0)
			g_opt.tp_seconds = 0.1; /* per case, over all passes */
		if (!g_opt.passes_given)
			g_opt.passes = 2;
	}
	if (g_opt.mechs) {
		char *copy = strdup(g_opt.mechs), *save = NULL, *tok;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!name_known(tok)) {
				fprintf(stderr, "uintr-bench: unknown name '%s'\n", tok);
				usage(stderr);
				exit(2);
			}
		}
		free(copy);
	}
}

/* ---- runners ------------------------------------------------------------- */

static void lat_runner(struct shared *sh, int mi)
{
	const struct mech *m = &g_mechs[mi];

	if (m->procs) {
		run_sides_procs(sh, m->side, m->prep);
	} else {
		if (m->prep)
			m->prep(sh);
		run_sides_threads(sh, m->side);
	}
}

static struct shared *shared_new(uint64_t nsamples)
{
	size_t len = sizeof(struct shared) + nsamples * sizeof(uint64_t);
	struct shared *sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int i;

	if (sh == MAP_FAILED) {
		perror("uintr-bench: mmap");
		exit(1);
	}
	sh->samples = (uint64_t *)(sh + 1);
	sh->samples_max = nsamples;
	sh->cpu[0] = g_opt.cpu[0];
	sh->cpu[1] = g_opt.cpu[1];
	for (i = 0; i < 2; i++) {
		sh->side[i].ufd = sh->side[i].efd = sh->side[i].rfd = sh->side[i].wfd = -1;
		sh->side[i].mq = sh->side[i].idx = -1;
	}
	sh->sock[0] = sh->sock[1] = -1;
	return sh;
}

static void shared_free(struct shared *sh)
{
	munmap(sh, sizeof(struct shared) + sh->samples_max * sizeof(uint64_t));
}

/* ---- results --------------------------------------------------------------- */

struct lat_result {
	const struct mech *m;
	uint64_t *samples; /* RTT ticks, all passes */
	size_t nsamples;
	struct stats st;
	long long sys_count, sys_sends, sys_discarded;
	int sys_failed;
	double sys_per_send; /* < 0: not counted */
	double pass_p50[MAX_PASSES];
	char err[256];
	char warn[256];
	int ran, stopped;
};

struct sc_result {
	const struct sc_case *c;
	uint64_t *samples;
	size_t nsamples;
	struct stats st;
	double pass_p50[MAX_PASSES];
	long long sys_count, sys_ops;
	int sys_failed;
	double sys_per_op;
	char err[256];
	int ran;
};

struct tp_result {
	const struct tp_case *c;
	double elapsed_ns;
	uint64_t sends, delivered, wakeups;
	double seconds, sends_per_s, deliveries_per_s, wakeups_per_s;
	double pass_dps[MAX_PASSES]; /* deliveries/s in each pass (0: missing) */
	char err[256];
	int ran;
};

static struct lat_result *g_lat;
static struct sc_result *g_sc;
static struct tp_result *g_tp;

/* A run whose rounds stop advancing for this long is hung (lost wake-up). */
#define STALL_SECONDS (g_opt.quick ? 3 : 5)

/* Syscall-counting rounds per mechanism, over all passes. */
static uint64_t count_rounds(void)
{
	if (!g_count_ok)
		return 0;
	return g_opt.quick ? 100 : (g_opt.n < 1000 ? g_opt.n : 1000);
}

static uint64_t per_pass(uint64_t total, int pass)
{
	uint64_t q = total / (uint64_t)g_opt.passes, r = total % (uint64_t)g_opt.passes;

	return q + ((uint64_t)pass < r);
}

/* The longest a latency mechanism may take, over all passes. */
static double cap_seconds(void)
{
	return g_opt.quick ? 1.0 : 4.5;
}

static uint64_t warmup(uint64_t n)
{
	uint64_t w = n / 10;

	return w < 100 ? 100 : w > 10000 ? 10000 : w;
}

static int append(uint64_t **v, size_t *n, const uint64_t *add, size_t k)
{
	uint64_t *p = realloc(*v, (*n + k + 1) * sizeof(**v));

	if (!p)
		return -1;
	memcpy(p + *n, add, k * sizeof(*add));
	*v = p;
	*n += k;
	return 0;
}

/* UINTR_BENCH_RAW=1: also write each mechanism's sorted samples (one-way ns). */
static void dump_raw(const struct lat_result *r)
{
	char path[4096];
	FILE *f;
	size_t i;

	if (!getenv("UINTR_BENCH_RAW"))
		return;
	snprintf(path, sizeof(path), "%s/raw-%s.txt", g_opt.outdir, r->m->name);
	f = fopen(path, "w");
	if (!f)
		return;
	for (i = 0; i < r->nsamples; i++)
		fprintf(f, "%.1f\n", (ticks_to_ns(r->samples[i]) - g_timer_overhead_ns) / 2);
	fclose(f);
}

static void lat_pass(size_t mi, struct lat_result *res, int pass)
{
	uint64_t n = per_pass(g_opt.n, pass);
	struct shared *sh;
	struct stats st;
	int rc, i;

	res->m = &g_mechs[mi];
	res->ran = 1;
	if (res->err[0] || res->stopped || n == 0)
		return;
	sh = shared_new(n);
	g_sh = sh;
	sh->mech = (int)mi;
	sh->n = n;
	sh->warm = warmup(n);
	sh->count_rounds = per_pass(count_rounds(), pass);
	sh->cap_ticks = ns_to_ticks(cap_seconds() / g_opt.passes * 1e9);
	rc = run_runner(lat_runner, sh, (int)mi, cap_seconds() + 60, STALL_SECONDS);
	if (rc == -1) {
		snprintf(res->err, sizeof(res->err), "%s", sh->err);
		fprintf(stderr, " %s FAILED: %s\n", res->m->name, res->err);
	} else {
		if (rc == 1)
			snprintf(res->warn, sizeof(res->warn),
				 "hung at shutdown in pass %d (after its measurements)", pass + 1);
		if (rc == -2) {
			/* Keep the rounds done; later passes would only hang again. */
			snprintf(res->warn, sizeof(res->warn),
				 "%.200s in pass %d; later passes skipped", sh->err, pass + 1);
			res->stopped = 1;
			fprintf(stderr, " %s HUNG", res->m->name);
		}
		if (append(&res->samples, &res->nsamples, sh->samples, sh->kept) != 0)
			snprintf(res->err, sizeof(res->err), "out of memory");
		stats_compute(sh->samples, sh->kept, g_timer_overhead_ns, 0.5, &st);
		res->pass_p50[pass] = st.p50;
		for (i = 0; i < 2; i++) {
			res->sys_count += sh->side[i].sys_count;
			res->sys_sends += sh->side[i].sys_sends;
			res->sys_discarded += sh->side[i].sys_discarded;
			res->sys_failed |= sh->side[i].sys_failed;
		}
		fprintf(stderr, " %s=%.0f", res->m->name, st.p50);
	}
	shared_free(sh);
	g_sh = NULL;
}

static void lat_finish(struct lat_result *res)
{
	res->sys_per_send = -1;
	if (!res->ran || res->err[0])
		return;
	if (res->nsamples == 0) {
		snprintf(res->err, sizeof(res->err), "%s", res->warn[0] ? res->warn : "no samples");
		return;
	}
	stats_compute(res->samples, res->nsamples, g_timer_overhead_ns, 0.5, &res->st);
	dump_raw(res);
	if (res->sys_sends > 0 && !res->sys_failed)
		res->sys_per_send = (double)res->sys_count / (double)res->sys_sends;
}

/* The cacheline mechanism, briefly: where the host put our two vCPUs
 * (same core's SMT threads, same L3, across L3s) changes this a lot. */
static double cacheline_probe(void)
{
	struct shared *sh = shared_new(2000);
	struct stats st;
	double p50 = -1;

	g_sh = sh;
	sh->n = 2000;
	sh->warm = 200;
	sh->cap_ticks = ns_to_ticks(1e9);
	if (strcmp(g_mechs[0].name, "cacheline") == 0 &&
	    run_runner(lat_runner, sh, 0, 30, STALL_SECONDS) == 0) {
		stats_compute(sh->samples, sh->kept, g_timer_overhead_ns, 0.5, &st);
		p50 = st.p50;
	}
	shared_free(sh);
	g_sh = NULL;
	return p50;
}

static void sc_pass(size_t k, struct sc_result *res, int pass)
{
	int notify = !strncmp(g_sc_cases[k].name, "send-notify", 11);
	uint64_t total = notify ? g_opt.n / 10 : g_opt.n, n;
	struct shared *sh;

	res->c = &g_sc_cases[k];
	res->ran = 1;
	if (total < 100 * (uint64_t)g_opt.passes)
		total = 100 * (uint64_t)g_opt.passes;
	n = per_pass(total, pass);
	if (res->err[0])
		return;
	sh = shared_new(n);
	g_sh = sh;
	sh->n = n;
	sh->warm = warmup(n);
	sh->count_rounds = per_pass(count_rounds() / (notify ? 4 : 1), pass);
	sh->cap_ticks = ns_to_ticks(cap_seconds() / g_opt.passes * 1e9);
	if (run_runner(sc_run, sh, (int)k, cap_seconds() + 60, STALL_SECONDS) < 0) {
		/* (a hang here is a failure too: every send is awaited) */
		snprintf(res->err, sizeof(res->err), "%s", sh->err);
		fprintf(stderr, " %s FAILED: %s\n", res->c->name, res->err);
	} else {
		struct stats st;

		if (append(&res->samples, &res->nsamples, sh->samples, sh->kept) != 0)
			snprintf(res->err, sizeof(res->err), "out of memory");
		stats_compute(sh->samples, sh->kept, g_timer_overhead_ns, 1.0, &st);
		res->pass_p50[pass] = st.p50;
		res->sys_count += sh->side[0].sys_count;
		res->sys_ops += sh->side[0].sys_sends;
		res->sys_failed |= sh->side[0].sys_failed;
		fprintf(stderr, " %s", res->c->name);
	}
	shared_free(sh);
	g_sh = NULL;
}

static void sc_finish(struct sc_result *res)
{
	res->sys_per_op = -1;
	if (!res->ran || res->err[0])
		return;
	stats_compute(res->samples, res->nsamples, g_timer_overhead_ns, 1.0, &res->st);
	if (res->sys_ops > 0 && !res->sys_failed)
		res->sys_per_op = (double)res->sys_count / (double)res->sys_ops;
}

static void tp_pass(size_t k, struct tp_result *res, int pass)
{
	struct shared *sh;

	res->c = &g_tp_cases[k];
	res->ran = 1;
	if (res->err[0])
		return;
	sh = shared_new(0);
	g_sh = sh;
	sh->duration_s = g_opt.tp_seconds / g_opt.passes;
	if (run_runner(tp_run, sh, (int)k, sh->duration_s + 60, 0) < 0) {
		snprintf(res->err, sizeof(res->err), "%s", sh->err);
		fprintf(stderr, " %s FAILED: %s\n", res->c->name, res->err);
	} else {
		res->elapsed_ns += sh->tp_elapsed_ns;
		res->sends += sh->tp_sends;
		res->delivered += sh->tp_delivered;
		res->wakeups += sh->tp_wakeups;
		if (sh->tp_elapsed_ns > 0)
			res->pass_dps[pass] = (double)sh->tp_delivered / sh->tp_elapsed_ns * 1e9;
		fprintf(stderr, " %s", res->c->name);
	}
	shared_free(sh);
	g_sh = NULL;
}

static void tp_finish(struct tp_result *res)
{
	if (!res->ran || res->err[0] || res->elapsed_ns <= 0)
		return;
	res->seconds = res->elapsed_ns / 1e9;
	res->sends_per_s = (double)res->sends / res->seconds;
	res->deliveries_per_s = (double)res->delivered / res->seconds;
	res->wakeups_per_s = (double)res->wakeups / res->seconds;
}

static int tp_is_loop(const struct tp_case *c)
{
	return c->mode == TP_LOOP || c->mode == TP_EVENTFD_LOOP;
}

/*
 * Throughput ratio of a libuintr case over the baseline it names (c->vs):
 * deliveries/s over deliveries/s, the median of same-pass ratios (above 1:
 * libuintr handles more; the inverse of RATIO_DIRECTION, which is a ratio
 * of times); -1 if either is missing.
 */
static const struct tp_result *tp_baseline(const struct tp_result *r)
{
	size_t i;

	for (i = 0; r->c && r->c->vs && i < g_ntp_cases; i++) /* c: NULL when not run */
		if (g_tp[i].ran && !g_tp[i].err[0] && !strcmp(g_tp[i].c->name, r->c->vs))
			return &g_tp[i];
	return NULL;
}

static double tp_ratio(const struct tp_result *r)
{
	const struct tp_result *b = tp_baseline(r);

	if (!b || r->err[0])
		return -1;
	return ratio_median(r->pass_dps, b->pass_dps, g_opt.passes);
}

static const struct lat_result *lat_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < g_nmechs; i++)
		if (g_lat[i].ran && !g_lat[i].err[0] && !strcmp(g_lat[i].m->name, name))
			return &g_lat[i];
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * libuintr / baseline (RATIO_DIRECTION): p50 of the matching libuintr mode
 * over this baseline's p50.  Paired: the median over passes of the ratio
 * within one pass, where both ran back to back under the same placement
 * of our vCPUs; the ratio of the pooled p50s mixes placements in whatever
 * proportion each mechanism happened to meet them.
 */
static double lat_ratio(const struct lat_result *r, int pooled)
{
	const struct lat_result *u = lat_find(r->m->match);

	if (!u || r->err[0] || u->err[0] || r->st.p50 <= 0 || u->st.p50 <= 0)
		return -1;
	if (pooled)
		return u->st.p50 / r->st.p50;
	return ratio_median(u->pass_p50, r->pass_p50, g_opt.passes);
}

/*
 * p50 of a sender-cost case / p50 of the case `name`, paired like the
 * latency ratios: the median over passes of the same-pass ratio (-1 if
 * either is missing).
 */
static double sc_vs(const struct sc_result *r, const char *name)
{
	double q[MAX_PASSES];
	size_t i;
	int k, n = 0;

	for (i = 0; i < g_nsc_cases; i++) {
		const struct sc_result *a = &g_sc[i];

		if (!a->ran || a->err[0] || strcmp(a->c->name, name) || a == r || r->err[0])
			continue;
		for (k = 0; k < g_opt.passes; k++)
			if (r->pass_p50[k] > 0 && a->pass_p50[k] > 0)
				q[n++] = r->pass_p50[k] / a->pass_p50[k];
	}
	if (n == 0)
		return -1;
	qsort(q, (size_t)n, sizeof(q[0]), cmp_double);
	return n % 2 ? q[n / 2] : (q[n / 2 - 1] + q[n / 2]) / 2;
}

/* ---- context ----------------------------------------------------------------- */

struct context {
	char load_start[64], load_end[64];
	char cpu_model[256];
	char kernel[512];
	char date[64];
	char clocksource[64];
	int ncpus;
	/* CPUs busy with other work than ours (cpu_other): in a short sample
	 * before the first pass, and over the whole run; -1 unknown.  The load
	 * average cannot tell: it still counts the build make bench just ran. */
	double other_start, other_run;
};

static struct context g_ctx;
static double g_cl_probe[MAX_PASSES + 1];

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

static void read_load(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");

	snprintf(buf, len, "unknown");
	if (f && fgets(buf, (int)len, f))
		trim(buf);
	if (f)
		fclose(f);
}

static void read_context(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	struct utsname u;
	time_t t = time(NULL);
	char line[1024];

	snprintf(g_ctx.cpu_model, sizeof(g_ctx.cpu_model), "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (!strncmp(line, "model name", 10) || !strncmp(line, "uarch", 5) ||
		    !strncmp(line, "Hardware", 8)) {
			char *v = colon + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			snprintf(g_ctx.cpu_model, sizeof(g_ctx.cpu_model), "%s", v);
			trim(g_ctx.cpu_model);
			break;
		}
	}
	if (f)
		fclose(f);
	if (uname(&u) == 0)
		snprintf(g_ctx.kernel, sizeof(g_ctx.kernel), "%s %s %s %s", u.sysname, u.release,
			 u.version, u.machine);
	strftime(g_ctx.date, sizeof(g_ctx.date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f && fgets(g_ctx.clocksource, sizeof(g_ctx.clocksource), f))
		trim(g_ctx.clocksource);
	if (f)
		fclose(f);
	g_ctx.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
}

static const char *compiler(void)
{
#if defined(__clang__)
	return "clang " __VERSION__;
#elif defined(__GNUC__)
	return "gcc " __VERSION__;
#else
	return __VERSION__;
#endif
}

static const char *count_method(void)
{
	static char buf[512];

	if (g_count_ok)
		snprintf(buf, sizeof(buf),
			 "perf_event_open sampling of tracepoint raw_syscalls:sys_enter on each "
			 "sending thread (one CLOCK_MONOTONIC-stamped record per syscall entry, "
			 "read after the run), matched to clock_gettime (vDSO) windows around each "
			 "send, in %llu extra rounds after the timed ones; windows in which one of "
			 "our handlers ran on the sender are discarded",
			 (unsigned long long)count_rounds());
	else
		snprintf(buf, sizeof(buf), "not counted: %s", g_count_why);
	return buf;
}

/*
 * Five-second summary: for each libuintr mode, its receiver state and the
 * best baseline it was compared with (the one with the lowest p50), with
 * the paired ratio in words.
 */
static void print_summary(void)
{
	size_t i, j;
	int any = 0;

	for (i = 0; i < g_nmechs; i++) {
		const struct lat_result *u = &g_lat[i], *best = NULL;
		char verdict[64];

		if (!u->ran || u->m->kind != KIND_UINTR)
			continue;
		for (j = 0; j < g_nmechs; j++) {
			const struct lat_result *b = &g_lat[j];

			if (!b->ran || b->err[0] || !b->m->match || strcmp(b->m->match, u->m->name))
				continue;
			/* Prefer a baseline with a ratio; one whose p50 came out
			 * at or below the timer's overhead (a cache line under
			 * qemu) is still named, with no ratio. */
			if (!best || (lat_ratio(b, 0) > 0 && lat_ratio(best, 0) <= 0) ||
			    ((lat_ratio(b, 0) > 0) == (lat_ratio(best, 0) > 0) &&
			     b->st.p50 < best->st.p50))
				best = b;
		}
		if (!any++)
			printf("\nSummary (one-way p50; %s):\n", RATIO_DIRECTION);
		if (u->err[0]) {
			printf("  %-40s %-22s FAILED\n", u->m->state, u->m->name);
			continue;
		}
		if (!best) {
			printf("  %-40s %-22s %6.0f ns, no baseline ran\n", u->m->state, u->m->name,
			       u->st.p50);
			continue;
		}
		if (lat_ratio(best, 0) > 0)
			ratio_verdict(lat_ratio(best, 0), verdict, sizeof(verdict));
		else
			snprintf(verdict, sizeof(verdict), "no ratio (a p50 at or below the timer's overhead)");
		printf("  %-40s %-22s %6.0f ns vs %-18s %6.0f ns: %s\n", u->m->state, u->m->name,
		       u->st.p50, best->m->name, best->st.p50, verdict);
	}
	any = 0;
	for (i = 0; i < g_ntp_cases; i++) {
		const struct tp_result *u = &g_tp[i], *b = tp_baseline(u);

		if (!u->ran || !u->c->vs)
			continue;
		if (!any++)
			printf("\nSummary (throughput, deliveries/s; libuintr / baseline, above 1: "
			       "libuintr handles more):\n");
		if (u->err[0] || !b || tp_ratio(u) <= 0) {
			printf("  %-22s %s\n", u->c->name, u->err[0] ? "FAILED" : "no baseline ran");
			continue;
		}
		printf("  %-22s %12.0f/s vs %-18s %12.0f/s: %.2fx\n", u->c->name,
		       u->deliveries_per_s, b->c->name, b->deliveries_per_s, tp_ratio(u));
	}
}

/* ---- output ------------------------------------------------------------------ */

static void print_tables(double seconds)
{
	size_t i;

	printf("\nuintr-bench: %s, %d CPUs, %s\n", g_ctx.cpu_model, g_ctx.ncpus, g_ctx.kernel);
	printf("load average (/proc/loadavg) at start: %s, at end: %s\n", g_ctx.load_start,
	       g_ctx.load_end);
	printf("CPUs %d,%d  timer %s (%.3f ns/tick, smallest step %.0f ns, overhead %.1f ns "
	       "subtracted from each RTT)\n",
	       g_opt.cpu[0], g_opt.cpu[1], g_timer_tsc ? "TSC" : "CLOCK_MONOTONIC", g_ns_per_tick,
	       g_timer_step_ns, g_timer_overhead_ns);
	printf("passes %d; cacheline probe p50 (one-way, ns) before each pass and at the end:",
	       g_opt.passes);
	for (i = 0; i <= (size_t)g_opt.passes; i++)
		printf(" %.0f", g_cl_probe[i]);
	printf("\n");
	printf("syscalls/send (method: %s)\n",
	       g_count_ok ? "perf sampling of raw_syscalls:sys_enter on the sending thread, "
			    "records matched to a clock_gettime window around each send"
			  : count_method());

	for (i = 0; i < g_nmechs; i++)
		if (g_lat[i].ran)
			break;
	if (i == g_nmechs)
		goto sender_cost;
	printf("\nOne-way latency (RTT/2) in ns, all passes pooled; spread: p99.9 and the median "
	       "absolute deviation (mean and stddev in the JSON).\nratio = %s:\n"
	       "p50 of the libuintr mode in 'vs' / p50 of this row, median over passes of the "
	       "same-pass ratio\n", RATIO_DIRECTION);
	printf("%-22s %7s %8s %8s %8s %8s %8s %8s  %-22s %7s\n", "mechanism", "n", "min", "p50",
	       "p99", "p99.9", "MAD", "sys/send", "vs", "ratio");
	for (i = 0; i < g_nmechs; i++) {
		const struct lat_result *r = &g_lat[i];
		char sys[32] = "-", ratio[32] = "-";
		double q;

		if (!r->ran)
			continue;
		if (r->err[0]) {
			printf("%-22s FAILED: %s\n", r->m->name, r->err);
			continue;
		}
		if (r->sys_per_send >= 0)
			snprintf(sys, sizeof(sys), "%.2f", r->sys_per_send);
		q = lat_ratio(r, 0);
		if (q > 0)
			snprintf(ratio, sizeof(ratio), "%.2f", q);
		printf("%-22s %7zu %8.0f %8.0f %8.0f %8.0f %8.0f %8s  %-22s %7s%s%s\n", r->m->name,
		       r->st.n, r->st.min, r->st.p50, r->st.p99, r->st.p999, r->st.mad, sys,
		       r->m->match ? r->m->match : "-", ratio, r->warn[0] ? "  WARNING: " : "",
		       r->warn);
	}
	printf("receiver states:\n");
	for (i = 0; i < g_nmechs; i++)
		if (g_lat[i].ran)
			printf("  %-22s %s (%s)\n", g_lat[i].m->name, g_lat[i].m->state,
			       g_lat[i].m->procs ? "two processes" : "two threads");

sender_cost:
	for (i = 0; i < g_nsc_cases; i++)
		if (g_sc[i].ran)
			break;
	if (i < g_nsc_cases) {
		printf("\nSender cost: time of one operation on CPU %d, ns (timer overhead "
		       "subtracted; timer step %.0f ns);\n/atomic, /drained = p50 / p50 of atomic-or, "
		       "atomic-or-drained (median of same-pass ratios)\n",
		       g_opt.cpu[0], g_timer_step_ns);
		printf("%-22s %7s %8s %8s %8s %8s %8s %8s %8s  %s\n", "operation", "n", "min",
		       "p50", "mean", "p99", "sys/op", "/atomic", "/drained", "what");
		for (i = 0; i < g_nsc_cases; i++) {
			const struct sc_result *r = &g_sc[i];
			char sys[32] = "-", vs[32] = "-", vs2[32] = "-";

			if (!r->ran)
				continue;
			if (r->err[0]) {
				printf("%-22s FAILED: %s\n", r->c->name, r->err);
				continue;
			}
			if (r->sys_per_op >= 0)
				snprintf(sys, sizeof(sys), "%.2f", r->sys_per_op);
			if (sc_vs(r, "atomic-or") > 0)
				snprintf(vs, sizeof(vs), "%.1f", sc_vs(r, "atomic-or"));
			if (sc_vs(r, "atomic-or-drained") > 0)
				snprintf(vs2, sizeof(vs2), "%.1f", sc_vs(r, "atomic-or-drained"));
			printf("%-22s %7zu %8.0f %8.0f %8.0f %8.0f %8s %8s %8s  %s\n", r->c->name,
			       r->st.n, r->st.min, r->st.p50, r->st.mean, r->st.p99, sys, vs, vs2,
			       r->c->what);
		}
	}

	for (i = 0; i < g_ntp_cases; i++)
		if (g_tp[i].ran)
			break;
	if (i < g_ntp_cases) {
		printf("\nThroughput (senders on CPU %d, receiver on CPU %d, each sender its own "
		       "vector; eventfd: one fd);\ndeliveries = handler calls; wakeups/s = the "
		       "loop's epoll_wait returns; x vs = deliveries/s over\ndeliveries/s of the "
		       "case in 'vs', median of same-pass ratios (above 1: libuintr handles more)\n",
		       g_opt.cpu[0], g_opt.cpu[1]);
		printf("%-18s %7s %12s %12s %10s %10s  %-18s %6s  %s\n", "case", "seconds",
		       "sends/s", "deliveries/s", "deliv/send", "wakeups/s", "vs", "x vs", "what");
		for (i = 0; i < g_ntp_cases; i++) {
			const struct tp_result *r = &g_tp[i];
			char wk[32] = "-", x[32] = "-";

			if (!r->ran)
				continue;
			if (r->err[0]) {
				printf("%-18s FAILED: %s\n", r->c->name, r->err);
				continue;
			}
			if (tp_is_loop(r->c))
				snprintf(wk, sizeof(wk), "%.0f", r->wakeups_per_s);
			if (tp_ratio(r) > 0)
				snprintf(x, sizeof(x), "%.2f", tp_ratio(r));
			printf("%-18s %7.2f %12.0f %12.0f %10.4f %10s  %-18s %6s  %s\n", r->c->name,
			       r->seconds, r->sends_per_s, r->deliveries_per_s,
			       r->sends_per_s > 0 ? r->deliveries_per_s / r->sends_per_s : 0, wk,
			       r->c->vs ? r->c->vs : "-", x, r->c->what);
		}
	}
	print_summary();
	printf("\ntotal run time %.1f s\n", seconds);
}

static void json_num(FILE *f, double v, int valid)
{
	if (valid)
		fprintf(f, "%.3f", v);
	else
		fputs("null", f);
}

static void json_stats(FILE *f, const struct stats *st)
{
	fprintf(f, "\"samples\": %zu, \"min_ns\": %.1f, \"p50_ns\": %.1f, \"mean_ns\": %.1f, "
		   "\"p99_ns\": %.1f, \"p999_ns\": %.1f, \"max_ns\": %.1f, \"stddev_ns\": %.1f, "
		   "\"mad_ns\": %.1f",
		st->n, st->min, st->p50, st->mean, st->p99, st->p999, st->max, st->stddev, st->mad);
}

static int write_json(const char *path, double seconds)
{
	FILE *f = fopen(path, "w");
	const char *sep = "";
	size_t i;
	int k;

	if (!f)
		return -1;
	fprintf(f, "{\n  \"context\": {\n    \"cpu_model\": ");
	json_str(f, g_ctx.cpu_model);
	fprintf(f, ",\n    \"cpus_online\": %d,\n    \"kernel\": ", g_ctx.ncpus);
	json_str(f, g_ctx.kernel);
	fprintf(f, ",\n    \"loadavg_start\": ");
	json_str(f, g_ctx.load_start);
	fprintf(f, ",\n    \"loadavg_end\": ");
	json_str(f, g_ctx.load_end);
	fprintf(f, ",\n    \"other_cpus_before\": ");
	json_num(f, g_ctx.other_start, g_ctx.other_start >= 0);
	fprintf(f, ",\n    \"other_cpus_during\": ");
	json_num(f, g_ctx.other_run, g_ctx.other_run >= 0);
	fprintf(f, ",\n    \"ratio_direction\": ");
	json_str(f, RATIO_DIRECTION);
	fprintf(f, ",\n    \"compiler\": ");
	json_str(f, compiler());
	fprintf(f, ",\n    \"date\": ");
	json_str(f, g_ctx.date);
	fprintf(f, ",\n    \"libuintr_version\": \"%d.%d\",\n", UINTR_VERSION_MAJOR,
		UINTR_VERSION_MINOR);
	fprintf(f, "    \"options\": {\"n\": %llu, \"cpus\": [%d, %d], \"mechanisms\": ",
		(unsigned long long)g_opt.n, g_opt.cpu[0], g_opt.cpu[1]);
	json_str(f, g_opt.mechs ? g_opt.mechs : "all");
	fprintf(f, ", \"outdir\": ");
	json_str(f, g_opt.outdir);
	fprintf(f, ", \"quick\": %s, \"throughput_seconds\": %.3f, \"warmup\": %llu, "
		   "\"cap_seconds_per_mechanism\": %.0f},\n",
		g_opt.quick ? "true" : "false", g_opt.tp_seconds,
		(unsigned long long)warmup(g_opt.n), cap_seconds());
	fprintf(f, "    \"timer\": {\"source\": \"%s\", \"ns_per_tick\": %.6f, "
		   "\"smallest_step_ns\": %.2f, \"overhead_ns_subtracted\": %.2f, \"clocksource\": ",
		g_timer_tsc ? "tsc" : "clock_monotonic", g_ns_per_tick, g_timer_step_ns,
		g_timer_overhead_ns);
	json_str(f, g_ctx.clocksource);
	fprintf(f, "},\n    \"latency_definition\": \"one-way = (RTT - timer overhead) / 2, "
		   "RTT timed on side A\",\n    \"uintr_wait_spin_ns\": %.0f,\n",
		bench_wait_spin_ns());
	fprintf(f, "    \"passes\": %d,\n    \"cacheline_probe_p50_ns\": [", g_opt.passes);
	for (i = 0; i <= (size_t)g_opt.passes; i++)
		fprintf(f, "%s%.1f", i ? ", " : "", g_cl_probe[i]);
	fprintf(f, "],\n");
	fprintf(f, "    \"syscall_count_method\": ");
	json_str(f, count_method());
	fprintf(f, ",\n    \"run_seconds\": %.1f\n  },\n  \"results\": [", seconds);

	for (i = 0; i < g_nmechs; i++) {
		const struct lat_result *r = &g_lat[i];
		double q;

		if (!r->ran)
			continue;
		fprintf(f, "%s\n    {\"kind\": \"latency\", \"name\": \"%s\", \"mode\": \"%s\", "
			   "\"class\": \"%s\", \"receiver_state\": ",
			sep, r->m->name, r->m->procs ? "processes" : "threads",
			r->m->kind == KIND_UINTR ? "libuintr" : "baseline");
		sep = ",";
		json_str(f, r->m->state);
		if (r->err[0]) {
			fprintf(f, ", \"error\": ");
			json_str(f, r->err);
			fprintf(f, "}");
			continue;
		}
		fprintf(f, ", ");
		json_stats(f, &r->st);
		fprintf(f, ", \"syscalls_per_send\": ");
		json_num(f, r->sys_per_send, r->sys_per_send >= 0);
		fprintf(f, ", \"syscall_counted_sends\": %lld, \"syscall_discarded_sends\": %lld",
			r->sys_sends, r->sys_discarded);
		q = lat_ratio(r, 0);
		fprintf(f, ", \"compared_with\": ");
		if (r->m->match)
			json_str(f, r->m->match);
		else
			fputs("null", f);
		fprintf(f, ", \"p50_ratio\": ");
		json_num(f, q, q > 0);
		fprintf(f, ", \"p50_ratio_pooled\": ");
		json_num(f, lat_ratio(r, 1), lat_ratio(r, 1) > 0);
		fprintf(f, ", \"pass_p50_ns\": [");
		for (k = 0; k < g_opt.passes; k++)
			fprintf(f, "%s%.1f", k ? ", " : "", r->pass_p50[k]);
		fprintf(f, "]");
		if (q > 0) {
			const struct lat_result *u = lat_find(r->m->match);

			/* Same pass, same host placement: the paired view. */
			fprintf(f, ", \"pass_p50_ratios\": [");
			for (k = 0; k < g_opt.passes; k++)
				fprintf(f, "%s%.3f", k ? ", " : "",
					r->pass_p50[k] > 0 ? u->pass_p50[k] / r->pass_p50[k] : 0);
			fprintf(f, "]");
		}
		if (r->warn[0]) {
			fprintf(f, ", \"warning\": ");
			json_str(f, r->warn);
		}
		fprintf(f, "}");
	}
	for (i = 0; i < g_nsc_cases; i++) {
		const struct sc_result *r = &g_sc[i];

		if (!r->ran)
			continue;
		fprintf(f, "%s\n    {\"kind\": \"sender_cost\", \"name\": \"%s\", \"what\": ", sep,
			r->c->name);
		sep = ",";
		json_str(f, r->c->what);
		if (r->err[0]) {
			fprintf(f, ", \"error\": ");
			json_str(f, r->err);
			fprintf(f, "}");
			continue;
		}
		fprintf(f, ", ");
		json_stats(f, &r->st);
		fprintf(f, ", \"syscalls_per_op\": ");
		json_num(f, r->sys_per_op, r->sys_per_op >= 0);
		fprintf(f, ", \"p50_ratio_vs_atomic_or\": ");
		json_num(f, sc_vs(r, "atomic-or"), sc_vs(r, "atomic-or") > 0);
		fprintf(f, ", \"p50_ratio_vs_atomic_or_drained\": ");
		json_num(f, sc_vs(r, "atomic-or-drained"), sc_vs(r, "atomic-or-drained") > 0);
		fprintf(f, ", \"pass_p50_ns\": [");
		for (k = 0; k < g_opt.passes; k++)
			fprintf(f, "%s%.1f", k ? ", " : "", r->pass_p50[k]);
		fprintf(f, "], \"syscall_counted_ops\": %lld}", r->sys_ops);
	}
	for (i = 0; i < g_ntp_cases; i++) {
		const struct tp_result *r = &g_tp[i];

		if (!r->ran)
			continue;
		fprintf(f, "%s\n    {\"kind\": \"throughput\", \"name\": \"%s\", \"what\": ", sep,
			r->c->name);
		sep = ",";
		json_str(f, r->c->what);
		fprintf(f, ", \"senders\": %d, \"receiver\": \"%s\"", r->c->senders,
			r->c->mode == TP_ASYNC	       ? "async"
			: r->c->mode == TP_LOOP	       ? "uintr-epoll-loop"
			: r->c->mode == TP_EVENTFD_LOOP ? "eventfd-epoll-loop"
						       : "poll");
		if (r->err[0]) {
			fprintf(f, ", \"error\": ");
			json_str(f, r->err);
			fprintf(f, "}");
			continue;
		}
		fprintf(f, ", \"seconds\": %.3f, \"sends_per_s\": %.0f, \"deliveries_per_s\": %.0f",
			r->seconds, r->sends_per_s, r->deliveries_per_s);
		if (tp_is_loop(r->c))
			fprintf(f, ", \"wakeups_per_s\": %.0f", r->wakeups_per_s);
		fprintf(f, ", \"pass_deliveries_per_s\": [");
		for (k = 0; k < g_opt.passes; k++)
			fprintf(f, "%s%.0f", k ? ", " : "", r->pass_dps[k]);
		fprintf(f, "], \"compared_with\": ");
		if (r->c->vs)
			json_str(f, r->c->vs);
		else
			fputs("null", f);
		/* deliveries/s over the baseline's: above 1 libuintr handles more */
		fprintf(f, ", \"deliveries_ratio\": ");
		json_num(f, tp_ratio(r), tp_ratio(r) > 0);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]\n}\n");
	return fclose(f);
}

/* latency.dat + latency.gp in outdir; gnuplot renders latency.svg. */
static void plot(const char *dir)
{
	char dat[4096], gp[4096], svg[4096];
	FILE *f;
	size_t i;
	int x = 0;

	snprintf(dat, sizeof(dat), "%s/latency.dat", dir);
	snprintf(gp, sizeof(gp), "%s/latency.gp", dir);
	snprintf(svg, sizeof(svg), "%s/latency.svg", dir);
	f = fopen(dat, "w");
	if (!f)
		return;
	fprintf(f, "# x name p50_ns p99_ns class(0 baseline, 1 libuintr)\n");
	for (i = 0; i < g_nmechs; i++) {
		const struct lat_result *r = &g_lat[i];

		if (!r->ran || r->err[0] || r->st.n == 0)
			continue;
		fprintf(f, "%d %s %.1f %.1f %d\n", x++, r->m->name, r->st.p50 > 1 ? r->st.p50 : 1,
			r->st.p99 > 1 ? r->st.p99 : 1, r->m->kind == KIND_UINTR);
	}
	fclose(f);
	if (x == 0)
		return;
	f = fopen(gp, "w");
	if (!f)
		return;
	fprintf(f,
		"# gnuplot %s   (written by uintr-bench)\n"
		"set terminal svg size 1200,650 dynamic enhanced font 'sans,11' background '#ffffff'\n"
		"set output '%s'\n"
		"set title \"One-way notification latency (RTT/2): p50 bars, p99 whiskers; %s\"\n"
		"set logscale y\n"
		"set format y '10^{%%L}'\n"
		"set ylabel 'one-way latency, ns (log scale)'\n"
		"set yrange [10:*]\n"
		"set xrange [-0.6:%d]\n"
		"set rmargin 14\n"
		"set grid ytics mytics\n"
		"set style fill solid 0.75 border -1\n"
		"set boxwidth 0.7\n"
		"set xtics rotate by -40 left nomirror\n"
		"set bmargin 9\n"
		"set key top left\n"
		"plot '%s' using 1:($5==0?$3:1/0):xtic(2) with boxes lc rgb '#8c8c8c' title "
		"'baseline (p50)', \\\n"
		"     '' using 1:($5==1?$3:1/0) with boxes lc rgb '#2b7bba' title 'libuintr (p50)', "
		"\\\n"
		"     '' using 1:3:3:4 with yerrorbars lc rgb '#000000' pt 0 title 'p50..p99'\n",
		gp, svg, g_ctx.cpu_model, x, dat);
	fclose(f);
	run_gnuplot(gp, svg);
}

static void check_cpus(void)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	for (i = 0; i < 2; i++) {
		if (g_opt.cpu[i] >= CPU_SETSIZE || !CPU_ISSET(g_opt.cpu[i], &set)) {
			fprintf(stderr, "uintr-bench: CPU %d is not available to us\n", g_opt.cpu[i]);
			exit(2);
		}
	}
}

/* Is anything else running?  Sample the CPU time the machine spends on
 * work that is not ours for 300 ms; warn above a quarter of a CPU.  `run`
 * gets the snapshot the whole-run figure starts from. */
static void idle_check(struct cpu_snap *run)
{
	struct timespec ts = {0, 300 * 1000 * 1000};
	struct cpu_snap a;

	cpu_snap(&a);
	nanosleep(&ts, NULL);
	cpu_snap(run);
	g_ctx.other_start = cpu_other(&a, run);
	if (g_ctx.other_start > 0.25)
		fprintf(stderr, "uintr-bench: the machine is not idle: other work uses %.2f CPUs "
			"(not counting this benchmark): expect noisy numbers\n",
			g_ctx.other_start);
}

int main(int argc, char **argv)
{
	struct cpu_snap run_snap, end_snap;
	uint64_t t0 = mono_ns();
	char path[4096];
	double seconds;
	size_t i;
	int pass;

	bench_set_main();
	parse_options(argc, argv);
	check_cpus();
	if (mkdir_p(g_opt.outdir) != 0) {
		fprintf(stderr, "uintr-bench: cannot create %s: %s\n", g_opt.outdir, strerror(errno));
		return 1;
	}
	read_context();
	read_load(g_ctx.load_start, sizeof(g_ctx.load_start));
	idle_check(&run_snap);
	timer_init();
	counter_probe();
	g_lat = calloc(g_nmechs, sizeof(*g_lat));
	g_sc = calloc(g_nsc_cases, sizeof(*g_sc));
	g_tp = calloc(g_ntp_cases, sizeof(*g_tp));
	if (!g_lat || !g_sc || !g_tp)
		return 1;
	if (!g_count_ok)
		fprintf(stderr, "uintr-bench: syscalls not counted: %s\n", g_count_why);

	/* Passes: every selected measurement once per pass, so that a slow
	 * drift of the host (where it puts our vCPUs) affects all alike. */
	for (pass = 0; pass < g_opt.passes; pass++) {
		g_cl_probe[pass] = cacheline_probe();
		fprintf(stderr, "pass %d/%d (cacheline probe %.0f ns):", pass + 1, g_opt.passes,
			g_cl_probe[pass]);
		for (i = 0; i < g_nmechs; i++)
			if (selected(g_mechs[i].name, "latency"))
				lat_pass(i, &g_lat[i], pass);
		for (i = 0; i < g_nsc_cases; i++)
			if (selected(g_sc_cases[i].name, "sender-cost"))
				sc_pass(i, &g_sc[i], pass);
		for (i = 0; i < g_ntp_cases; i++)
			if (selected(g_tp_cases[i].name, "throughput"))
				tp_pass(i, &g_tp[i], pass);
		fprintf(stderr, "\n");
	}
	g_cl_probe[g_opt.passes] = cacheline_probe();
	read_load(g_ctx.load_end, sizeof(g_ctx.load_end));
	cpu_snap(&end_snap);
	g_ctx.other_run = cpu_other(&run_snap, &end_snap);
	for (i = 0; i < g_nmechs; i++)
		lat_finish(&g_lat[i]);
	for (i = 0; i < g_nsc_cases; i++)
		sc_finish(&g_sc[i]);
	for (i = 0; i < g_ntp_cases; i++)
		tp_finish(&g_tp[i]);
	seconds = (double)(mono_ns() - t0) / 1e9;
	print_tables(seconds);
	snprintf(path, sizeof(path), "%s/results.json", g_opt.outdir);
	if (write_json(path, seconds) != 0)
		fprintf(stderr, "uintr-bench: cannot write %s: %s\n", path, strerror(errno));
	else
		printf("json: %s\n", path);
	plot(g_opt.outdir);
	for (i = 0; i < g_nmechs; i++)
		if (g_lat[i].ran && g_lat[i].err[0])
			return 1;
	for (i = 0; i < g_nsc_cases; i++)
		if (g_sc[i].ran && g_sc[i].err[0])
			return 1;
	for (i = 0; i < g_ntp_cases; i++)
		if (g_tp[i].ran && g_tp[i].err[0])
			return 1;
	return 0;
}
