/*
 * Shared by the process and lifetime tests (fork, exec, fd passing,
 * receiver exit, stress): per-vector delivery counters that can live in
 * memory shared between processes, one counting handler, a receiver thread
 * that sleeps in uintr_wait, and small fd utilities.
 */
#ifndef UINTR_TEST_HELPERS_LIFETIME_H
#define UINTR_TEST_HELPERS_LIFETIME_H

#include "helpers.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <spawn.h>
#include <sys/mman.h>

/* What the handler records.  MAP_SHARED, so forked or spawned senders see
 * the deliveries they wait for. */
struct lt_counts {
	_Atomic unsigned long long count[UINTR_MAX_VECTORS]; /* deliveries per vector */
	_Atomic unsigned long long total;                     /* all deliveries */
	_Atomic unsigned long long seq[UINTR_MAX_VECTORS];    /* senders write it before posting */
	_Atomic unsigned long long seen[UINTR_MAX_VECTORS];   /* seq as the handler read it */
	_Atomic int owner[UINTR_MAX_VECTORS];                 /* tid meant to receive the vector */
	_Atomic unsigned long long wrong_thread;              /* delivered on another thread */
	_Atomic unsigned long long bad_vector;                /* vector >= 64 */
	_Atomic uint32_t events[UINTR_MAX_VECTORS];           /* deliveries, as a futex word */
	_Atomic uint32_t sleepers[UINTR_MAX_VECTORS];         /* a sender sleeps on events[v] */
};

static struct lt_counts *lt_c;
static __thread pid_t lt_tid; /* this thread's tid, once it is a receiver */

static inline struct lt_counts *lt_counts_map(int fd)
{
	void *p = mmap(NULL, sizeof(struct lt_counts), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	CHECK(p != MAP_FAILED);
	return p;
}

/* Counters in shared anonymous memory: inherited by fork. */
static inline void lt_counts_init(void)
{
	void *p = mmap(NULL, sizeof(struct lt_counts), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	lt_c = p;
}

/* Counters in a memfd (not close-on-exec): can be passed to a new program. */
static inline int lt_counts_init_memfd(void)
{
	int fd = memfd_create("lt-counts", 0);

	CHECK(fd >= 0);
	CHECK(ftruncate(fd, sizeof(struct lt_counts)) == 0);
	lt_c = lt_counts_map(fd);
	return fd;
}

static void lt_handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector >= UINTR_MAX_VECTORS) {
		atomic_fetch_add(&lt_c->bad_vector, 1);
		return;
	}
	if (atomic_load(&lt_c->owner[vector]) != lt_tid)
		atomic_fetch_add(&lt_c->wrong_thread, 1);
	/* Written in this order, and a test waits on the later of the
	 * fields it reads: total, then count[vector], then seen[vector].  A
	 * peer that waits on count[V] and then reads total, or kills this
	 * process, finds this delivery in total; one that waits on seen[V]
	 * finds it in count[V] too. */
	atomic_fetch_add(&lt_c->total, 1);
	atomic_fetch_add(&lt_c->count[vector], 1);
	atomic_store(&lt_c->seen[vector], atomic_load(&lt_c->seq[vector]));
	atomic_fetch_add(&lt_c->events[vector], 1);
	if (atomic_load(&lt_c->sleepers[vector]))
		syscall(SYS_futex, &lt_c->events[vector], FUTEX_WAKE, 1, NULL, NULL, 0);
}

static inline unsigned long long lt_count(unsigned int vector)
{
	return atomic_load(&lt_c->count[vector]);
}

/* Make the calling thread a receiver (lt_handler) owning these vectors;
 * fds[i] gets the uintr_fd of vecs[i]; UIF is left 0. */
static inline void lt_become_receiver(int nvec, const unsigned int *vecs, int *fds)
{
	int i;

	lt_tid = t_gettid();
	CHECK(uintr_register_handler(lt_handler, 0) == 0);
	for (i = 0; i < nvec; i++) {
		atomic_store(&lt_c->owner[vecs[i]], lt_tid);
		fds[i] = uintr_create_fd(vecs[i], 0);
		CHECK(fds[i] >= 0);
	}
}

/* A receiver thread: registers, creates its fds, STUI, then sleeps in
 * uintr_wait_since_last until `stop` is set and an interrupt wakes it
 * (race-free: the waking interrupt may be handled before the call). */
struct lt_rx {
	int nvec;
	unsigned int vec[UINTR_MAX_VECTORS];
	int fd[UINTR_MAX_VECTORS];
	_Atomic int ready, stop;
	_Atomic pid_t tid;
	_Atomic unsigned long long waits; /* uintr_wait returns */
	pthread_t thread;
};

static void *lt_rx_main(void *arg)
{
	struct lt_rx *rx = arg;

	lt_become_receiver(rx->nvec, rx->vec, rx->fd);
	rx->tid = lt_tid;
	uintr_stui();
	atomic_store(&rx->ready, 1);
	while (!atomic_load(&rx->stop)) {
		errno = 0;
		CHECK(uintr_wait_since_last(0) == -1 && errno == EINTR);
		atomic_fetch_add(&rx->waits, 1);
	}
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

static inline void lt_rx_start(struct lt_rx *rx, int nvec, const unsigned int *vecs)
{
	int i;

	memset(rx, 0, sizeof(*rx));
	rx->nvec = nvec;
	for (i = 0; i < nvec; i++)
		rx->vec[i] = vecs[i];
	rx->thread = t_start(lt_rx_main, rx);
	WAIT_UNTIL(atomic_load(&rx->ready));
}

/* Stop a receiver thread: the caller sends through its own UITT index
 * `idx`, which must lead to one of rx's vectors. */
static inline void lt_rx_stop(struct lt_rx *rx, int idx)
{
	atomic_store(&rx->stop, 1);
	uintr_senduipi((unsigned long long)idx);
	t_join(rx->thread);
}

/*
 * A thread that must take interrupts while it waits for another thread
 * waits here, spinning, rather than in a blocking read(): a notification
 * then interrupts plain code, and ThreadSanitizer (which holds back a
 * signal that arrives while a thread blocks in some calls) delivers it.
 * The syscall at the end: a signal queued to this thread before the step
 * was posted has been handled when this returns.
 */
static inline void lt_wait_step(_Atomic int *step, int n)
{
	WAIT_UNTIL(atomic_load(step) >= n);
	getppid();
}

/* Post through `idx` (to `vector`) and wait until it has been delivered:
 * one sender per vector at a time, so the count moves by exactly one. */
static inline void lt_send_wait(int idx, unsigned int vector)
{
	unsigned long long before = lt_count(vector);

	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(lt_count(vector) != before);
	CHECK_EQ(lt_count(vector), before + 1);
}

/* As lt_send_wait, but the sender sleeps (futex) instead of spinning: for
 * tests with more threads than CPUs.  The receiver's handler wakes it. */
static inline void lt_send_wait_sleeping(int idx, unsigned int vector)
{
	_Atomic uint32_t *ev = &lt_c->events[vector];
	unsigned long long before = lt_count(vector);
	uint32_t seen = atomic_load(ev);
	double until = t_now() + 20.0;
	struct timespec ts = { .tv_sec = 1 };

	uintr_senduipi((unsigned long long)idx);
	atomic_store(&lt_c->sleepers[vector], 1);
	while (atomic_load(ev) == seen) {
		syscall(SYS_futex, ev, FUTEX_WAIT, seen, &ts, NULL, 0);
		if (t_now() > until) {
			fprintf(stderr, "vector %u: no delivery after 20 s\n", vector);
			exit(T_FAIL);
		}
	}
	atomic_store(&lt_c->sleepers[vector], 0);
	CHECK_EQ(lt_count(vector), before + 1);
}

/* SENDUIPI that must fault: returns the signal, *code its si_code. */
/*
 * Releases are performed by the receiver process's watcher thread, soon
 * after the last close (src/vector_fd.c).  Where a test needs one to be
 * complete now, it calls the library's own settle step, in the receiver's
 * process: every end whose uintr_fd is gone is released before it returns.
 */
void uintr__vector_ends_settle(void);

static inline void lt_settle_releases(void)
{
	uintr__vector_ends_settle();
}

static inline int lt_send_fault(int idx, int *code)
{
	return t_catch_fault(t_send_index, (void *)(uintptr_t)idx, code);
}

/*
 * The si_code of a SENDUIPI fault is the x86 one (#UD: ILL_ILLOPN, #GP:
 * SI_KERNEL) on x86-64 only; elsewhere the library borrows whatever fault
 * the architecture has, so only the signal is checked there.
 */
#if defined(__x86_64__)
#define LT_CHECK_FAULT_CODE(code, want) CHECK_EQ(code, want)
#else
#define LT_CHECK_FAULT_CODE(code, want) ((void)(code))
#endif

/*
 * Start this test's executable again as a new program image, with
 * arguments args[1..] (args[0] is set here).  The path comes from
 * readlink(/proc/self/exe), which an emulator such as qemu-user reports
 * as the test's own file.  Returns posix_spawn's result.
 */
static inline int lt_spawn_self(char **args, pid_t *pid)
{
	extern char **environ;
	static char exe[4096], runner[512];
	char *argv[64], *save = NULL, *word;
	const char *env = getenv("UINTR_TEST_RUNNER");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int k = 0, i;

	CHECK(n > 0);
	exe[n] = '\0';
	args[0] = exe;
	if (!env || !*env)
		return posix_spawn(pid, exe, NULL, NULL, args, environ);
	/* Under an emulator (make check-cross), start the new image through it. */
	snprintf(runner, sizeof(runner), "%s", env);
	for (word = strtok_r(runner, " ", &save); word && k < 32; word = strtok_r(NULL, " ", &save))
		argv[k++] = word;
	for (i = 0; args[i] && k < 63; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	return posix_spawnp(pid, argv[0], NULL, NULL, argv, environ);
}

/* A spawned program that could not be executed exits 127 (posix_spawn
 * may report the failure only that way): the test is then skipped. */
#define LT_SPAWN_FAILED 127

static inline void lt_skip_if_not_executed(int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == LT_SPAWN_FAILED) {
		printf("skip: cannot start a new program image here (emulator without binfmt?)\n");
		exit(T_SKIP);
	}
}

/* The open fds of this process, ascending; returns how many. */
static inline int lt_open_fds(int *out, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0, self, i, j;

	CHECK(d != NULL);
	self = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		fd = atoi(e->d_name);
		if (fd != self && n < max)
			out[n++] = fd;
	}
	closedir(d);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && out[j - 1] > out[j]; j--) {
			int tmp = out[j];

			out[j] = out[j - 1];
			out[j - 1] = tmp;
		}
	return n;
}

static inline int lt_fd_in(int fd, const int *set, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i] == fd)
			return 1;
	return 0;
}

/* Field 22 of /proc/self/task/<tid>/stat: the thread's start time, in
 * clock ticks; 0 if the thread does not exist. */
static inline unsigned long long lt_thread_start_time(pid_t tid)
{
	char path[64], buf[1024], *p;
	int field;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return 0;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/*
 * A thread on a stack of our own.  For threads that leave with a raw
 * SYS_exit: libc never learns they ended, so their stack and thread
 * descriptor must not be cached and handed to a later thread.  Unmap the
 * stack (LT_STACK bytes) after joining.
 */
#define LT_STACK (1024 * 1024)
static inline pthread_t lt_start_own_stack(void *(*fn)(void *), void *arg, void **stack)
{
	pthread_attr_t attr;
	pthread_t t;

	*stack = mmap(NULL, LT_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(*stack != MAP_FAILED);
	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_setstack(&attr, *stack, LT_STACK) == 0);
	CHECK(pthread_create(&t, &attr, fn, arg) == 0);
	CHECK(pthread_attr_destroy(&attr) == 0);
	return t;
}

static inline int lt_sig_pending(int signo)
{
	sigset_t set;

	CHECK(sigpending(&set) == 0);
	return sigismember(&set, signo);
}

static inline void lt_block(int signo, int block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, signo);
	CHECK(pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL) == 0);
}

static inline struct uintr_stats lt_process_stats(void)
{
	struct uintr_stats s;

	CHECK(uintr_get_stats(&s, UINTR_STATS_PROCESS) == 0);
	return s;
}

#endif
