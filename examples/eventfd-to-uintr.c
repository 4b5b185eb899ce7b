/*
 * eventfd-to-uintr.c - porting an eventfd wake-up to user interrupts.
 *
 * A producer thread puts the numbers 1..N into a ring; a worker thread
 * takes them out and adds up their squares.  When the ring is empty the
 * worker sleeps until the producer wakes it.  The same program does this
 * two ways:
 *
 *   ./eventfd-to-uintr --eventfd   the worker sleeps in read(eventfd) and
 *                                  the producer wakes it with write(eventfd)
 *   ./eventfd-to-uintr             the worker sleeps in uintr_wait() and the
 *                                  producer wakes it with uintr_senduipi()
 *
 * (-v also tells how many times the worker woke up.)  Both print the same
 * result.  The calls line up:
 *
 *   eventfd                         user interrupts
 *   efd = eventfd(0, 0)             uintr_register_handler(handler, 0)
 *                                   ufd = uintr_create_fd(vector, 0)
 *                                   uintr_stui()
 *   (share efd)                     idx = uintr_register_sender(ufd, 0)
 *   write(efd, &one, 8)             uintr_senduipi(idx)
 *   read(efd, &count, 8)            uintr_wait_since_last(0)
 *
 * A wake-up never gets lost either way.  read() returns at once when the
 * eventfd counter is not zero, that is, when the producer wrote while the
 * worker was busy.  uintr_wait_since_last() returns at once when an
 * interrupt is pending or when the handler ran since the previous wait
 * returned, that is, when the producer posted while the worker was busy.
 * (The RFC's uintr_wait() would not notice a handler that ran before the
 * call, and could sleep through the last wake-up.)
 *
 * The difference: write(eventfd) is a system call every time, while
 * uintr_senduipi() makes one only when the worker has to be notified: not
 * while the previous wake-up has not been noticed yet, and not while the
 * worker polls at the start of its wait.
 *
 *   cc -O2 -Wall -Wextra eventfd-to-uintr.c -o eventfd-to-uintr $(pkg-config --cflags --libs uintr)
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <uintr.h>

#define N 100000ull
#define RING 256 /* a power of two */
#define VECTOR 1

static unsigned long long ring[RING];
static _Atomic unsigned long long head; /* written by the producer only */
static _Atomic unsigned long long tail; /* written by the worker only */
static _Atomic int finished;            /* no more items will come */

static int use_eventfd, verbose;
static int efd = -1;                    /* --eventfd */
static _Atomic int ufd = -1;            /* user interrupts: the worker's uintr_fd */
static int uipi_index;
static _Atomic unsigned long long wakeups;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	atomic_fetch_add(&wakeups, 1);
}

/* The worker sleeps until the producer has called wake_worker(). */
static void wait_for_work(void)
{
	if (use_eventfd) {
		uint64_t count;

		if (read(efd, &count, sizeof(count)) != sizeof(count))
			die("read(eventfd)");
		atomic_fetch_add(&wakeups, 1);
	} else {
		uintr_wait_since_last(0); /* always -1 with errno EINTR */
	}
}

static void wake_worker(void)
{
	if (use_eventfd) {
		uint64_t one = 1;

		if (write(efd, &one, sizeof(one)) != sizeof(one))
			die("write(eventfd)");
	} else {
		uintr_senduipi((unsigned long long)uipi_index);
	}
}

static void *worker(void *arg)
{
	unsigned long long *sum = arg, t;
	int done;

	if (!use_eventfd) {
		int fd;

		if (uintr_register_handler(handler, 0) != 0)
			die("uintr_register_handler");
		fd = uintr_create_fd(VECTOR, 0);
		if (fd < 0)
			die("uintr_create_fd");
		atomic_store(&ufd, fd);
		uintr_stui(); /* UIF = 1: the handler may run from now on */
	}

	for (;;) {
		/* Read `finished` first: if it was set, the drain sees every item. */
		done = atomic_load(&finished);
		for (t = atomic_load(&tail); t != atomic_load(&head); t++) {
			unsigned long long v = ring[t % RING];

			*sum += v * v;
			atomic_store(&tail, t + 1);
		}
		if (done)
			break;
		wait_for_work();
	}

	if (!use_eventfd)
		uintr_unregister_handler(0);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long long sum = 0, i;
	pthread_t w;
	int a;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--eventfd") == 0) {
			use_eventfd = 1;
		} else if (strcmp(argv[a], "-v") == 0) {
			verbose = 1;
		} else {
			fprintf(stderr, "usage: %s [--eventfd] [-v]\n", argv[0]);
			return 2;
		}
	}
	if (use_eventfd) {
		efd = eventfd(0, EFD_CLOEXEC);
		if (efd < 0)
			die("eventfd");
	}
	if (pthread_create(&w, NULL, worker, &sum) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	if (!use_eventfd) {
		int fd;

		while ((fd = atomic_load(&ufd)) < 0)
			sched_yield();
		uipi_index = uintr_register_sender(fd, 0);
		if (uipi_index < 0)
			die("uintr_register_sender");
	}

	for (i = 1; i <= N; i++) {
		unsigned long long h = atomic_load(&head);

		while (h - atomic_load(&tail) == RING) /* full: let the worker run */
			sched_yield();
		ring[h % RING] = i;
		atomic_store(&head, h + 1);
		wake_worker();
	}
	atomic_store(&finished, 1);
	wake_worker();
	pthread_join(w, NULL);

	if (use_eventfd) {
		close(efd);
	} else {
		uintr_unregister_sender(atomic_load(&ufd), 0);
		close(atomic_load(&ufd));
	}

	printf("sum of the squares of 1..%llu = %llu\n", N, sum);
	if (verbose)
		printf("(%s: the worker woke up %llu times)\n",
		       use_eventfd ? "eventfd" : "user interrupts", atomic_load(&wakeups));
	return sum == N * (N + 1) * (2 * N + 1) / 6 ? 0 : 1;
}
