/*
 * threads.c - one receiver thread, one sender thread, N user interrupts.
 *
 * The receiver registers a handler, makes vector 7 a file descriptor and
 * waits in uintr_wait().  The sender registers through that descriptor and
 * posts N interrupts, one at a time: it waits until the handler has run
 * before it posts the next one, because posts of a vector that is still
 * pending coalesce into a single delivery.
 *
 *   cc -O2 -Wall -Wextra threads.c -o threads $(pkg-config --cflags --libs uintr)
 *   ./threads
 *
 * Exit status 0 when every interrupt arrived, 1 otherwise.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <uintr.h>

#define VECTOR 7
#define N 1000

static _Atomic int shared_fd = -1;    /* the uintr_fd, published by the receiver */
static _Atomic unsigned int received; /* handler calls for VECTOR */
static _Atomic unsigned int unexpected;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/*
 * Runs on the receiver thread with UIF = 0.  It may interrupt any code of
 * that thread, like a signal handler: keep it short, async-signal-safe.
 */
static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector == VECTOR)
		atomic_fetch_add(&received, 1);
	else
		atomic_fetch_add(&unexpected, 1);
}

static void *receiver(void *arg)
{
	struct uintr_stats stats;
	int fd;

	(void)arg;
	if (uintr_register_handler(handler, 0) != 0)
		die("uintr_register_handler");
	fd = uintr_create_fd(VECTOR, 0);
	if (fd < 0)
		die("uintr_create_fd");
	atomic_store(&shared_fd, fd);
	uintr_stui(); /* UIF = 1: interrupts may be delivered from now on */

	/*
	 * uintr_wait_since_last() sleeps until an interrupt arrives and
	 * returns (-1, errno EINTR) after the handler ran.  It also returns at
	 * once if the handler ran since the previous wait returned, so an
	 * interrupt delivered between the test and the call is not missed
	 * (the RFC's uintr_wait() would sleep through it).
	 */
	while (atomic_load(&received) < N)
		uintr_wait_since_last(0);

	if (uintr_get_stats(&stats, 0) != 0)
		die("uintr_get_stats");
	printf("receiver: %u interrupts on vector %d, %llu handler calls\n",
	       atomic_load(&received), VECTOR, stats.delivered);
	if (uintr_unregister_handler(0) != 0)
		die("uintr_unregister_handler");
	return NULL;
}

static void *sender(void *arg)
{
	unsigned int i;
	int fd, idx;

	(void)arg;
	while ((fd = atomic_load(&shared_fd)) < 0)
		sched_yield();
	idx = uintr_register_sender(fd, 0);
	if (idx < 0)
		die("uintr_register_sender");

	for (i = 0; i < N; i++) {
		uintr_senduipi((unsigned long long)idx);
		while (atomic_load(&received) == i) /* wait for the delivery */
			sched_yield();
	}
	printf("sender: %u interrupts sent through UITT index %d\n", i, idx);
	if (uintr_unregister_sender(fd, 0) != 0)
		die("uintr_unregister_sender");
	return NULL;
}

int main(void)
{
	pthread_t r, s;

	if (pthread_create(&r, NULL, receiver, NULL) != 0 ||
	    pthread_create(&s, NULL, sender, NULL) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	close(atomic_load(&shared_fd)); /* the last reference: the vector is released */

	if (atomic_load(&received) != N || atomic_load(&unexpected) != 0) {
		fprintf(stderr, "received %u of %d, %u unexpected\n",
			atomic_load(&received), N, atomic_load(&unexpected));
		return 1;
	}
	printf("all %d interrupts arrived\n", N);
	return 0;
}
