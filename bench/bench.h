/*
 * uintr-bench: notification latency, sender cost and throughput of libuintr
 * against the Linux mechanisms a program would otherwise use (reference
 * section 9: the RFC's benchmark, and Stefan Hajnoczi's criticism of it).
 *
 * Declarations shared by the benchmark's files.  Dependencies go one way:
 * the programs (uintr-bench.c, scale.c) use the scenarios, the scenarios
 * (latency.c, sendcost.c) use the harness (util.c), which uses nothing.
 *   uintr-bench.c  `make bench`: options, passes, tables, JSON, plot
 *   latency.c      ping-pong latency of every mechanism
 *   sendcost.c     cost of one uintr_senduipi, and throughput
 *   scale.c        `make bench-scale`: senders, receivers, vectors, processes
 *   util.c         timer, statistics, syscall counter, pinning, barriers,
 *                  runner processes, JSON and plot helpers
 */
#ifndef UINTR_BENCH_H
#define UINTR_BENCH_H

#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define CACHELINE 64
#define ALIGNED __attribute__((aligned(CACHELINE)))
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- timer (util.c) ---------------------------------------------------- */

/* 1 when the TSC (constant, non-stop) is the timer, else CLOCK_MONOTONIC. */
extern int g_timer_tsc;
extern double g_ns_per_tick;
/* Median cost of two back-to-back now_ticks(), in ns (subtracted from RTTs). */
extern double g_timer_overhead_ns;
/* Smallest step seen between two reads, ns. */
extern double g_timer_step_ns;

static ALWAYS_INLINE uint64_t now_ticks(void)
{
#if defined(__x86_64__)
	if (g_timer_tsc) {
		uint32_t lo, hi;

		/* lfence before and after: rdtsc neither starts early nor lets
		 * later instructions start before it. */
		__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

void timer_init(void);
uint64_t ns_to_ticks(double ns);
double ticks_to_ns(uint64_t ticks);
uint64_t mono_ns(void);
void spin_ns(double ns);

/* ---- statistics (util.c) ----------------------------------------------- */

struct stats {
	size_t n;
	double min, p50, mean, p99, max, stddev; /* ns */
	size_t over_1ms;                         /* samples above 1 ms */
	/* Robust spread, beside mean and stddev (which a few scheduler
	 * outliers swamp): the 99.9th percentile and the median absolute
	 * deviation from p50, ns. */
	double p999, mad;
};

/* Sort `v` (ticks) and compute stats of (ticks_to_ns(v) - sub_ns) * scale. */
void stats_compute(uint64_t *v, size_t n, double sub_ns, double scale, struct stats *st);

/* ---- ratios (util.c) -----------------------------------------------------
 * One direction everywhere: libuintr / baseline (time of the libuintr mode
 * over time of the baseline): below 1 libuintr is faster, above 1 slower.
 * Paired by pass: the median over the passes where both ran of
 * uintr[k] / base[k] (<= 0 entries are missing); -1 if none. */
#define RATIO_DIRECTION "libuintr / baseline (below 1: libuintr faster, above 1: slower)"
double ratio_median(const double *uintr, const double *base, int npasses);
/* The median of v[0..n-1], n > 0; sorts v. */
double median_sort(double *v, int n);
/* "libuintr 2.10x slower", "libuintr 1.35x faster", "tie (within 5%)". */
const char *ratio_verdict(double uintr_over_base, char *buf, size_t len);

/* ---- other work on the machine (util.c) ----------------------------------
 * CPUs kept busy by everything but this process and its waited-for
 * children (/proc/stat minus our own CPU time), between two snapshots: a
 * compile that finished before the run does not count, unlike in the
 * load average. */
struct cpu_snap {
	double busy_s, own_s, wall_s;
};
void cpu_snap(struct cpu_snap *s);
double cpu_other(const struct cpu_snap *a, const struct cpu_snap *b); /* in CPUs, -1 unknown */

/* ---- stalls of the CPU itself (util.c) ------------------------------------
 * The calling thread spins reading the timer for `seconds` and counts the
 * gaps between two reads: time the thread lost to interrupts, other tasks
 * or (in a VM) the host.  No mechanism's latency tail can be shorter than
 * these gaps; stop 31 counted about 70 per second above 50 us on an idle
 * 2-vCPU KVM guest. */
struct stall_census {
	double seconds;
	uint64_t over_20us, over_50us, over_100us;
	double max_ns, lost_ns; /* the longest gap; all gaps above 20 us */
};
void stall_census(double seconds, struct stall_census *c);

/* ---- syscall counter (util.c) -------------------------------------------
 * Syscalls made inside chosen windows of a thread: a perf_event_open()
 * sampler on the raw_syscalls:sys_enter tracepoint of the calling thread
 * writes one CLOCK_MONOTONIC-stamped record per syscall entry into a ring;
 * afterwards the records are matched to windows [begin, end] taken with
 * mono_ns() (vDSO, no syscall) around each send. */
extern int g_count_ok;
extern char g_count_why[160];

struct sampler {
	int fd;
	void *ring;
	size_t len;
};
struct window {
	uint64_t begin, end; /* CLOCK_MONOTONIC ns */
	int skip;            /* a handler ran inside: its rt_sigreturn is not the send's */
};
void counter_probe(void);
int sampler_open(struct sampler *s);
void sampler_close(struct sampler *s);
long long sampler_count(struct sampler *s, const struct window *w, size_t nw);

/* The counted rounds of one thread: windows, then the side's totals. */
struct counting {
	struct sampler smp;
	struct window *w;
	size_t n, cap;
};
int counting_begin(struct counting *c, uint64_t rounds);
struct side;
void counting_end(struct counting *c, struct side *s);

/* ---- misc (util.c) ----------------------------------------------------- */

int pin_to_cpu(int cpu); /* the calling thread; 0 or -1 */
pid_t gettid_(void);
int tgkill_(pid_t tgid, pid_t tid, int sig);
int send_fd(int sock, int fd);
int recv_fd(int sock);

struct barrier {
	_Atomic int count ALIGNED;
	_Atomic int gen;
};
void barrier_wait(struct barrier *b, int parties);

/* ---- shared state of one run (lives in MAP_SHARED memory) -------------- */

/* One side of a ping-pong (side 0 = A, the initiator; side 1 = B), also
 * one vector of a throughput receiver. */
struct side {
	_Atomic uint32_t flag ALIGNED;   /* set by the handler (or peer), cleared by owner */
	_Atomic uint64_t handled ALIGNED; /* handler calls on this side (single writer) */
	_Atomic uint32_t fword ALIGNED;  /* futex word (written by the peer) */
	_Atomic uint32_t sleeping;       /* futex-spin: owner is (about to be) in FUTEX_WAIT */
	/* setup, not hot */
	int tid ALIGNED, pid;
	int ufd, idx;                    /* uintr fd (this side's receiver), UITT index */
	int efd, rfd, wfd;               /* eventfd / pipe read end / our write end to peer */
	int mq;                          /* our message queue (we receive on it) */
	/* syscall counting */
	long long sys_count, sys_sends, sys_discarded;
	int sys_failed;                  /* records lost: the count is unusable */
	uint64_t sends, coalesced;       /* throughput / misc counters of this side */
};

#define CTL_STOP  0x1u
#define CTL_COUNT 0x2u

struct shared {
	_Atomic uint64_t turn ALIGNED; /* the cacheline mechanism's line */
	uint64_t line ALIGNED;         /* sender-cost: __atomic_fetch_or target */
	_Atomic uint32_t ctl ALIGNED;  /* CTL_STOP | CTL_COUNT, read-mostly */
	_Atomic uint64_t progress ALIGNED; /* rounds done, for the hang watchdog */
	_Atomic int finished;          /* measurements complete (only shutdown left) */
	struct side side[2];
	struct barrier bar;
	/* configuration */
	int cpu[2];
	int procs;           /* sides are processes, not threads */
	int mech;            /* index in the mechanism table */
	int nsenders;        /* throughput */
	uint64_t n, warm, count_rounds, cap_ticks;
	double duration_s;
	int sock[2];         /* fd passing between processes */
	/* results */
	uint64_t kept ALIGNED; /* written by side A every round: own line */
	uint64_t *samples;   /* RTT or per-call time, in ticks */
	uint64_t samples_max;
	double tp_elapsed_ns;
	uint64_t tp_sends, tp_delivered;
	uint64_t tp_wakeups;  /* event-loop cases: epoll_wait returns */
	char err[256];
};

/* ---- runners (util.c) ---------------------------------------------------- */

extern struct shared *g_sh;

/* Record an error for the parent and end the run (all of its processes). */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Call once in main(): the watching process. */
void bench_set_main(void);
/*
 * Run fn(sh, arg) in a fresh process group; at most timeout_s, and at most
 * stall_s (if > 0) without sh->progress moving.  0: finished cleanly; 1:
 * measurements finished, then it hung; -2: hung while measuring (rounds
 * before usable); -1: failed (sh->err says why).
 */
int run_runner(void (*fn)(struct shared *, int), struct shared *sh, int arg, double timeout_s,
	       int stall_s);
void json_str(FILE *f, const char *s);
int have_program(const char *prog); /* on $PATH */
void run_gnuplot(const char *script, const char *svg); /* prints plot: ... */
int mkdir_p(const char *dir);

/* ---- latency mechanisms (latency.c) ------------------------------------ */

enum mech_kind { KIND_BASELINE, KIND_UINTR };

struct mech {
	const char *name;
	int procs;
	enum mech_kind kind;
	const char *state;   /* what the receiver does */
	const char *match;   /* the libuintr mode its p50 is compared with */
	void (*prep)(struct shared *sh);          /* in the runner, before the sides start */
	void (*side)(struct shared *sh, int me);  /* one side, already pinned */
};

extern const struct mech g_mechs[];
extern const size_t g_nmechs;
/* How long uintr_wait spins by default (and futex-spin spins), ns. */
double bench_wait_spin_ns(void);

/* ---- sender cost and throughput (sendcost.c) --------------------------- */

struct sc_case {
	const char *name;
	const char *what;
	int kind;
};
extern const struct sc_case g_sc_cases[];
extern const size_t g_nsc_cases;
void sc_run(struct shared *sh, int kase); /* in a runner process */

/* What the throughput receiver does: polls; never polls (asynchronous
 * delivery); an epoll loop on uintr_loop_fd; the same loop on an eventfd
 * the senders write (issue 15's baseline). */
enum tp_mode { TP_POLL, TP_ASYNC, TP_LOOP, TP_EVENTFD_LOOP };

struct tp_case {
	const char *name;
	const char *what;
	int mode;     /* enum tp_mode */
	int senders;
	const char *vs; /* the baseline case its deliveries/s are compared with */
};
extern const struct tp_case g_tp_cases[];
extern const size_t g_ntp_cases;
void tp_run(struct shared *sh, int kase); /* in a runner process */

/* Run both sides as threads (pinned) of the calling process and join them. */
void run_sides_threads(struct shared *sh, void (*side)(struct shared *, int));
/* Run side A in the calling process (pinned) and side B in a forked child. */
void run_sides_procs(struct shared *sh, void (*side)(struct shared *, int),
		     void (*prefork)(struct shared *));

#endif
