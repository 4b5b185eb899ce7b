/*
 * preempt.c - preempting runaway code with user interrupts.
 *
 * A timer thread posts an interrupt to a worker thread every millisecond.
 * The worker runs tasks one after the other, each with a budget of time
 * slices (ticks).  The handler counts the slices of the running task and,
 * when the task has used up its budget, preempts it: it changes frame->ip
 * and frame->sp so that, when the handler returns, the worker resumes not
 * in the task but in task_overrun(), on the worker's stack below the
 * interrupted code.  task_overrun() siglongjmp()s back to the dispatcher,
 * which abandons the task and goes on with the next one.
 *
 * Why the handler does not simply siglongjmp() itself: the library calls
 * the handler with UIF = 0 and sets UIF back to 1 when it returns (that is
 * its UIRET).  Jumping out of the handler would leave UIF = 0 and the
 * library in the middle of a delivery.  Changing the frame lets the
 * delivery finish; the interrupted code then "resumes" at the new ip/sp.
 * The library applies frame changes when it delivered asynchronously, as
 * here (a running worker interrupted by the timer); it ignores them when
 * it calls the handler from uintr_stui(), uintr_poll() or uintr_wait().
 *
 * Why this abandons the task instead of resuming it later: the frame
 * holds only ip, flags and sp, and pointing them at a second task would
 * resume it with the first task's other registers.  To switch tasks and
 * resume the preempted one exactly, a handler asks instead, with
 * uintr_frame_call(3), that the interrupted code call a yield function
 * after UIRET: examples/ult.c is a preemptive user-level thread runtime
 * built that way.  Abandoning the interrupted code needs nothing but the
 * frame: sigsetjmp() saved all the dispatcher needs.
 *
 * Code that may be abandoned must not hold a lock or be inside a library
 * function (printf, malloc...) when it is preempted: a task here is pure
 * computation, and only the task itself is preemptible ("abortable").
 *
 * x86-64, arm64 and riscv64 only (the library reads and writes the frame
 * there), and not under ThreadSanitizer, which runs handlers on a copy of
 * the interrupted context.
 *
 *   cc -O2 -Wall -Wextra preempt.c -o preempt $(pkg-config --cflags --libs uintr)
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <uintr.h>

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#if !defined(UNDER_TSAN) && (defined(__x86_64__) || defined(__aarch64__) || \
			     (defined(__riscv) && __riscv_xlen == 64))
#define FRAME_WORKS 1
#endif

#define VECTOR 0
#define TICK_NS 1000000L /* one slice: 1 ms */

struct task {
	const char *name;
	unsigned long long (*run)(void);
	unsigned long long expected; /* the result a finished task must give */
	unsigned int budget;         /* slices */
	_Atomic unsigned int slices; /* slices seen while it ran */
	unsigned long long result;
	int finished;
};

/* The sum of i * i mod 1000003 for i < 10000000. */
static unsigned long long sum_squares(void)
{
	unsigned long long s = 0, i;

	for (i = 0; i < 10000000; i++)
		s += i * i % 1000003;
	return s;
}

static int is_prime(unsigned long long n)
{
	unsigned long long d;

	if (n < 2)
		return 0;
	for (d = 2; d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return 1;
}

/* The number of primes below 200000. */
static unsigned long long count_primes(void)
{
	unsigned long long n, count = 0;

	for (n = 0; n < 200000; n++)
		count += is_prime(n);
	return count;
}

/* A bug: looks for an even prime above 2, forever. */
static unsigned long long runaway(void)
{
	unsigned long long n = 4;

	while (!is_prime(n))
		n += 2;
	return n;
}

static struct task tasks[] = {
	{ "sum_squares", sum_squares, 4998974987425ull, 500, 0, 0, 0 },
	{ "runaway", runaway, 0, 50, 0, 0, 0 },
	{ "count_primes", count_primes, 17984, 500, 0, 0, 0 },
};
#define NTASKS (sizeof(tasks) / sizeof(tasks[0]))

static _Atomic int worker_fd = -1;
static _Atomic int stop_timer;
static _Atomic int abortable;      /* the current task may be abandoned */
static struct task *_Atomic current;
static sigjmp_buf dispatcher;

/* Reached instead of the interrupted task, on the worker thread. */
__attribute__((noreturn, noinline)) static void task_overrun(void)
{
	siglongjmp(dispatcher, 1);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	struct task *t = atomic_load(&current);
	unsigned long long sp;

	(void)vector;
	if (!t)
		return;
	if (atomic_fetch_add(&t->slices, 1) + 1 <= t->budget || !atomic_load(&abortable))
		return;
	atomic_store(&abortable, 0);

	/*
	 * Resume in task_overrun(), as if the interrupted code had called it,
	 * on the same stack: below the interrupted stack pointer and the
	 * 128-byte red zone under it (x86-64), so that nothing the live frames
	 * of the dispatcher hold is overwritten; 16-byte aligned.
	 */
	sp = (frame->sp - 256) & ~15ull;
#if defined(__x86_64__)
	sp -= 8; /* at a function's entry, sp + 8 is 16-byte aligned */
#endif
	frame->sp = sp;
	frame->ip = (unsigned long long)(uintptr_t)task_overrun;
}

static void *timer(void *arg)
{
	struct timespec next;
	int fd, idx;

	(void)arg;
	while ((fd = atomic_load(&worker_fd)) < 0)
		sched_yield();
	idx = uintr_register_sender(fd, 0);
	if (idx < 0) {
		perror("uintr_register_sender");
		exit(1);
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&stop_timer)) {
		next.tv_nsec += TICK_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		uintr_senduipi((unsigned long long)idx);
	}
	uintr_unregister_sender(fd, 0);
	return NULL;
}

int main(void)
{
	volatile unsigned int i; /* changed between sigsetjmp and siglongjmp */
	pthread_t tm;
	int fd, ok = 1;

#ifndef FRAME_WORKS
	fprintf(stderr, "preempt: handlers cannot change the frame here; nothing to show\n");
	return 77;
#endif
	/* The main thread is the worker. */
	if (uintr_register_handler(handler, 0) != 0) {
		perror("uintr_register_handler");
		return 1;
	}
	fd = uintr_create_fd(VECTOR, 0);
	if (fd < 0) {
		perror("uintr_create_fd");
		return 1;
	}
	atomic_store(&worker_fd, fd);
	if (pthread_create(&tm, NULL, timer, NULL) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	uintr_stui(); /* UIF = 1: ticks interrupt whatever the worker runs */

	for (i = 0; i < NTASKS; i++) {
		struct task *t = &tasks[i];

		atomic_store(&current, t);
		if (sigsetjmp(dispatcher, 1) == 0) {
			atomic_store(&abortable, 1);
			t->result = t->run();
			atomic_store(&abortable, 0);
			t->finished = 1;
		}
		atomic_store(&current, NULL);
	}

	atomic_store(&stop_timer, 1);
	pthread_join(tm, NULL);
	uintr_clui();
	uintr_unregister_handler(0);
	close(fd);

	printf("%-13s %7s %7s  %s\n", "task", "slices", "budget", "outcome");
	for (i = 0; i < NTASKS; i++) {
		struct task *t = &tasks[i];

		printf("%-13s %7u %7u  ", t->name, atomic_load(&t->slices), t->budget);
		if (t->finished)
			printf("finished, result %llu\n", t->result);
		else
			printf("preempted\n");
	}
	/* The runaway task must be preempted, the others must finish right. */
	for (i = 0; i < NTASKS; i++) {
		struct task *t = &tasks[i];

		if (t->run == runaway ? t->finished : !t->finished || t->result != t->expected)
			ok = 0;
	}
	return ok ? 0 : 1;
}
