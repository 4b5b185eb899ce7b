/*
 * ult.c - a small preemptive user-level thread runtime on user interrupts.
 *
 * The pattern of LibPreemptible, Skyloft, Shinjuku and Concord, in one
 * file: each worker (a kernel thread) runs user-level threads (ULTs) from
 * its own run queue.  A timer vector (uintr_timer_create) interrupts the
 * worker every quantum; a dispatcher thread can also preempt it at once
 * with a send.  The handler does not switch itself: it asks, with
 * uintr_frame_call(3), that the interrupted ULT call preempt() after
 * UIRET, and preempt() switches to the worker's scheduler.  When the ULT
 * is resumed later, preempt() returns and the ULT goes on with every
 * register as it was.  A ULT may also give up the CPU itself (ult_yield).
 *
 * The demo: one long request computes for as long as it takes the short
 * requests to finish, and never yields.  Ten short requests arrive after
 * it on the same worker.  Without preemption they would wait forever;
 * here each is served within a few quanta.  The long request's result is
 * checked against the same computation done without interruption: a lost
 * register would show.  Exit 0 when every request ran exactly once with
 * the right result.
 *
 * What may be preempted: only ULT code that holds no lock and is not
 * inside a library (malloc, printf).  The requests here compute; the
 * runtime turns preemption off (w->preemptible = 0) in its own code.
 *
 * Two ways to be interrupted:
 *   ./ult [quantum_us]      the worker runs its requests and is interrupted
 *                           by the kernel timer's signal (a few us each on
 *                           a VM: quanta below 20 us would leave it no time
 *                           for anything else, so they are refused);
 *   ./ult -p [quantum_us]   polling: the requests call uintr_poll() in
 *                           their loops, the timer fires there, no signal,
 *                           no syscall (quanta down to 1 us).
 * The default quantum is 100 us.
 *
 *   cc -O2 -Wall -Wextra ult.c -o ult $(pkg-config --cflags --libs uintr)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <uintr.h>

/* ThreadSanitizer follows stack switches only through its fiber calls. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifdef UNDER_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#define TIMER_VECTOR    10
#define DISPATCH_VECTOR 20
#define STACK_SIZE      (256 * 1024)
#define NSHORT          10

struct ult {
	ucontext_t ctx;
	void (*fn)(void *);
	void *arg;
	int done;
	struct ult *next;
	void *stack;
	void *fiber; /* ThreadSanitizer's, or NULL */
};

struct worker {
	pthread_t thread;
	pthread_mutex_t lock; /* run queue; taken only with preemption off */
	struct ult *head, *tail;
	int stop;
	ucontext_t sched_ctx;
	void *sched_fiber;
	struct ult *current;
	/* 1 only while a ULT's own code runs: the handler preempts nothing
	 * else (the scheduler, the switch itself). Same thread as the
	 * handler: volatile is enough. */
	volatile sig_atomic_t preemptible;
	long quantum_ns;
	int polling;
	int timer_fd, dispatch_fd, timer_id;
	_Atomic int ready;
	/* what happened, for the summary */
	unsigned long timer_preemptions, dispatch_preemptions, yields;
	volatile unsigned long pending_kind; /* vector of the preemption asked for */
};

static __thread struct worker *self;

static void switch_to(ucontext_t *from, ucontext_t *to, void *to_fiber)
{
#ifdef UNDER_TSAN
	__tsan_switch_to_fiber(to_fiber, 0);
#else
	(void)to_fiber;
#endif
	if (swapcontext(from, to) == -1) {
		perror("swapcontext");
		abort();
	}
}

/*
 * The switch code lives in a section of its own.  A preempted ULT resumes
 * inside preempt(), below the notification's kernel frame, and is
 * preemptible again (to_scheduler) a few instructions before it is back
 * in its own code.  An interrupt there must not preempt it again: the new
 * frame would nest below the old one, and a timer that fires just after
 * each resumption would grow the ULT's stack until it overflows.  So the
 * handler leaves code at these addresses alone (uintr_frame_call(3),
 * "Unsafe points"; libuintr does the same in its own code).
 */
#define SWITCH_CODE __attribute__((section("ult_switch"), noinline))
extern const char __start_ult_switch[], __stop_ult_switch[];

static int in_switch_code(unsigned long long ip)
{
	return ip >= (uintptr_t)__start_ult_switch && ip < (uintptr_t)__stop_ult_switch;
}

/* From a ULT to its worker's scheduler; returns when the ULT is resumed. */
SWITCH_CODE static void to_scheduler(struct worker *w)
{
	struct ult *u = w->current;

	w->preemptible = 0;
	switch_to(&u->ctx, &w->sched_ctx, w->sched_fiber);
	w->preemptible = 1;
}

/* Called by the interrupted ULT after the handler's UIRET. */
SWITCH_CODE static void preempt(void *arg)
{
	struct worker *w = arg;

	if (w->pending_kind == TIMER_VECTOR)
		w->timer_preemptions++;
	else
		w->dispatch_preemptions++;
	to_scheduler(w);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	struct worker *w = self;

	if (!w->preemptible || in_switch_code(frame->ip))
		return; /* the scheduler runs, or a switch is under way */
	/* EBUSY: a preemption is already asked for in this delivery (both
	 * vectors came at once; the higher, the dispatcher's, went first). */
	if (uintr_frame_call(frame, preempt, w) == 0) {
		w->pending_kind = vector;
		/* Until the switch is done: another interrupt that comes
		 * while preempt() starts must not ask for a second one. */
		w->preemptible = 0;
	}
}

static void ult_yield(void)
{
	self->yields++;
	to_scheduler(self);
}

static void ult_start(void)
{
	struct worker *w = self;
	struct ult *u = w->current;

	w->preemptible = 1;
	u->fn(u->arg);
	w->preemptible = 0;
	u->done = 1;
	switch_to(&u->ctx, &w->sched_ctx, w->sched_fiber);
	abort(); /* a finished ULT is never resumed */
}

static void enqueue(struct worker *w, struct ult *u)
{
	pthread_mutex_lock(&w->lock);
	u->next = NULL;
	if (w->tail)
		w->tail->next = u;
	else
		w->head = u;
	w->tail = u;
	pthread_mutex_unlock(&w->lock);
}

static struct ult *dequeue(struct worker *w, int *stop)
{
	struct ult *u;

	pthread_mutex_lock(&w->lock);
	u = w->head;
	if (u) {
		w->head = u->next;
		if (!w->head)
			w->tail = NULL;
	}
	*stop = w->stop;
	pthread_mutex_unlock(&w->lock);
	return u;
}

/* From any thread but the worker's ULTs: a new ULT at the queue's end. */
static void ult_spawn(struct worker *w, void (*fn)(void *), void *arg)
{
	struct ult *u = calloc(1, sizeof(*u));

	if (!u || !(u->stack = malloc(STACK_SIZE)) || getcontext(&u->ctx) == -1) {
		perror("ult_spawn");
		exit(EXIT_FAILURE);
	}
	u->fn = fn;
	u->arg = arg;
	u->ctx.uc_stack.ss_sp = u->stack;
	u->ctx.uc_stack.ss_size = STACK_SIZE;
	u->ctx.uc_link = NULL;
	makecontext(&u->ctx, ult_start, 0);
#ifdef UNDER_TSAN
	u->fiber = __tsan_create_fiber(0);
#endif
	enqueue(w, u);
}

static void ult_free(struct ult *u)
{
#ifdef UNDER_TSAN
	__tsan_destroy_fiber(u->fiber);
#endif
	free(u->stack);
	free(u);
}

static void die(const char *what)
{
	perror(what);
	exit(EXIT_FAILURE);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct itimerspec quantum = {
		.it_interval = { 0, w->quantum_ns },
		.it_value = { 0, w->quantum_ns },
	};
	int stop = 0;

	self = w;
#ifdef UNDER_TSAN
	w->sched_fiber = __tsan_get_current_fiber();
#endif
	if (uintr_register_handler(handler, 0) == -1)
		die("uintr_register_handler");
	w->timer_fd = uintr_create_fd(TIMER_VECTOR, 0);
	w->dispatch_fd = uintr_create_fd(DISPATCH_VECTOR, 0);
	if (w->timer_fd == -1 || w->dispatch_fd == -1)
		die("uintr_create_fd");
	/* Polling before the timer is armed: a 1 us kernel timer would leave
	 * no time between its signals. */
	if (w->polling && uintr_set_polling(1) == -1)
		die("uintr_set_polling");
	w->timer_id = uintr_timer_create(w->timer_fd, CLOCK_MONOTONIC, 0);
	if (w->timer_id == -1 || uintr_timer_settime(w->timer_id, 0, &quantum, NULL) == -1)
		die("uintr_timer");
	uintr_stui();
	atomic_store(&w->ready, 1);

	/* The scheduler: run queue order, a preempted or yielding ULT goes
	 * to the end.  Idle: sleep until an interrupt (the next quantum, or
	 * the dispatcher's send).  Stops once asked to and the queue is
	 * empty. */
	for (;;) {
		struct ult *u = dequeue(w, &stop);

		if (!u) {
			if (stop)
				break; /* asked to stop, and nothing left to run */
			uintr_wait_since_last(0);
			continue;
		}
		w->current = u;
		switch_to(&w->sched_ctx, &u->ctx, u->fiber);
		w->current = NULL;
		if (u->done)
			ult_free(u);
		else
			enqueue(w, u);
	}
	uintr_timer_delete(w->timer_id);
	uintr_unregister_handler(0);
	close(w->timer_fd);
	return NULL;
}

/* ---- the demo's requests --------------------------------------------- */

static _Atomic int shorts_done, long_started;
static int polling;
static unsigned long long short_result[NSHORT];
static unsigned long long long_steps, long_result;

static unsigned long long lcg(unsigned long long x, unsigned long long steps)
{
	while (steps--)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* Computes, never yields, until every short request is done. */
static void long_request(void *arg)
{
	unsigned long long x = 1, steps = 0;

	(void)arg;
	atomic_store(&long_started, 1);
	while (atomic_load_explicit(&shorts_done, memory_order_relaxed) < NSHORT) {
		x = lcg(x, 1000);
		steps += 1000;
		if (polling)
			uintr_poll(); /* a poll point: where a polling worker is preempted */
	}
	long_steps = steps;
	long_result = x;
}

static void short_request(void *arg)
{
	int i = (int)(intptr_t)arg;
	unsigned long long x = lcg((unsigned long long)i, 5000);

	ult_yield(); /* cooperative: let the others go first */
	short_result[i] = lcg(x, 5000);
	atomic_fetch_add(&shorts_done, 1);
}

int main(int argc, char **argv)
{
	struct worker w;
	long quantum_us = 100;
	int idx, i, ok = 1;
	struct timespec t0, t1;

	if (argc > 1 && strcmp(argv[1], "-p") == 0) {
		polling = 1;
		argc--;
		argv++;
	}
#ifdef UNDER_TSAN
	/* ThreadSanitizer holds an asynchronous signal back until the thread
	 * enters its runtime, which the long request never does. */
	if (!polling)
		printf("ThreadSanitizer: polling, signals would wait for the runtime\n");
	polling = 1;
#endif
	if (argc > 1)
		quantum_us = strtol(argv[1], NULL, 10);
	if (quantum_us < (polling ? 1 : 20) || quantum_us > 1000000) {
		fprintf(stderr, "usage: ult [-p] [quantum_us]: 20..1000000 us, "
			"1..1000000 with -p (polling)\n");
		return EXIT_FAILURE;
	}
	memset(&w, 0, sizeof(w));
	pthread_mutex_init(&w.lock, NULL);
	w.quantum_ns = quantum_us * 1000;
	w.polling = polling;
	ult_spawn(&w, long_request, NULL);
	if (pthread_create(&w.thread, NULL, worker_main, &w) != 0)
		die("pthread_create");
	while (!atomic_load(&w.ready) || !atomic_load(&long_started))
		sched_yield();

	/* The dispatcher: short requests behind the long one, and a send
	 * that preempts the worker now rather than at the quantum's end. */
	idx = uintr_register_sender(w.dispatch_fd, 0);
	if (idx == -1)
		die("uintr_register_sender");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < NSHORT; i++)
		ult_spawn(&w, short_request, (void *)(intptr_t)i);
	uintr_senduipi((unsigned long long)idx);
	while (atomic_load(&shorts_done) < NSHORT)
		sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &t1);

	pthread_mutex_lock(&w.lock);
	w.stop = 1;
	pthread_mutex_unlock(&w.lock);
	uintr_senduipi((unsigned long long)idx); /* wake it if idle */
	pthread_join(w.thread, NULL);
	uintr_unregister_sender(w.dispatch_fd, 0);
	close(w.dispatch_fd);

	for (i = 0; i < NSHORT; i++)
		if (short_result[i] != lcg(lcg((unsigned long long)i, 5000), 5000)) {
			fprintf(stderr, "short request %d: wrong result\n", i);
			ok = 0;
		}
	if (long_result != lcg(1, long_steps)) {
		fprintf(stderr, "long request: wrong result after %llu steps\n", long_steps);
		ok = 0;
	}
	/* The long request never yields: the short ones can only have run if
	 * it was preempted. */
	if (w.timer_preemptions + w.dispatch_preemptions == 0 || w.yields != NSHORT) {
		fprintf(stderr, "preemptions %lu + %lu, yields %lu\n", w.timer_preemptions,
			w.dispatch_preemptions, w.yields);
		ok = 0;
	}
	printf("%s, quantum %ld us: %d short requests served in %.0f us behind a long one "
	       "(%llu steps, result checked);\n"
	       "preemptions: %lu by the timer, %lu by the dispatcher's send; %lu yields\n",
	       polling ? "polling" : "timer signal", quantum_us, NSHORT,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3,
	       long_steps, w.timer_preemptions, w.dispatch_preemptions, w.yields);
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
