/*
 * libevent-loop.c - a libevent loop serving a socket and user interrupts
 * from several sender threads (uintr_loop_fd(3)).
 *
 * The loop thread registers a handler, makes one vector per sender thread,
 * and watches two descriptors with persistent read events (event_new) in
 * one event_base: the loop fd from uintr_loop_fd(), readable while
 * interrupts are posted, and one end of a socket pair that a writer thread
 * fills with messages.  When the loop fd is readable the event callback
 * calls uintr_loop_drain(), which runs the handler.
 *
 * Each sender posts its vector, then waits until the handler has counted
 * it before it posts again: posts of a vector still pending coalesce into
 * one delivery, so only this hand-shake makes the count exact.
 *
 *   cc -O2 -Wall -Wextra libevent-loop.c -o libevent-loop \
 *      $(pkg-config --cflags --libs uintr libevent)
 *   ./libevent-loop
 *
 * Exit status 0 when every interrupt and every message arrived, 1 otherwise.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <uintr.h>

#define SENDERS 3
#define POSTS 200    /* per sender */
#define MESSAGES 200 /* over the socket */

static int vector_fd[SENDERS];             /* one uintr_fd per sender */
static _Atomic unsigned int got[SENDERS];  /* handler calls per vector */
static _Atomic unsigned int unexpected;
static _Atomic int ready;                  /* the loop is set up */
static unsigned int bytes;                 /* loop thread only */
static struct event_base *base;
static int failed;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Runs inside uintr_loop_drain(), on the loop thread. */
static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector >= 1 && vector <= SENDERS)
		atomic_fetch_add(&got[vector - 1], 1);
	else
		atomic_fetch_add(&unexpected, 1);
}

static void *sender(void *arg)
{
	int i = (int)(long)arg, idx, n;

	while (!atomic_load(&ready))
		sched_yield();
	idx = uintr_register_sender(vector_fd[i], 0);
	if (idx < 0)
		die("uintr_register_sender");
	for (n = 1; n <= POSTS; n++) {
		uintr_senduipi((unsigned long long)idx);
		while (atomic_load(&got[i]) < (unsigned int)n)
			sched_yield();
	}
	uintr_unregister_sender(vector_fd[i], 0);
	return NULL;
}

static void *writer(void *arg)
{
	int fd = (int)(long)arg, n;
	char byte = 'x';

	for (n = 0; n < MESSAGES; n++)
		if (write(fd, &byte, 1) != 1)
			die("write");
	return NULL;
}

static int all_done(void)
{
	int i;

	if (bytes < MESSAGES)
		return 0;
	for (i = 0; i < SENDERS; i++)
		if (atomic_load(&got[i]) < POSTS)
			return 0;
	return 1;
}

static void on_uintr(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (uintr_loop_drain(0) < 0) {
		perror("uintr_loop_drain");
		failed = 1;
		event_base_loopbreak(base);
		return;
	}
	if (all_done())
		event_base_loopbreak(base);
}

static void on_sock(evutil_socket_t fd, short what, void *arg)
{
	char buf[64];
	ssize_t r;

	(void)what;
	(void)arg;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		bytes += (unsigned int)r;
	if (r < 0 && errno != EAGAIN)
		die("read");
	if (all_done())
		event_base_loopbreak(base);
}

int main(void)
{
	pthread_t senders[SENDERS], wr;
	struct event *uintr_ev, *sock_ev;
	int sv[2], lfd, i, bad = 0;

	if (uintr_register_handler(handler, 0) != 0)
		die("uintr_register_handler");
	for (i = 0; i < SENDERS; i++) {
		vector_fd[i] = uintr_create_fd(i + 1, 0);
		if (vector_fd[i] < 0)
			die("uintr_create_fd");
	}
	lfd = uintr_loop_fd(0);
	if (lfd < 0)
		die("uintr_loop_fd");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
		die("socketpair");
	base = event_base_new();
	if (!base)
		die("event_base_new");
	/* Level-triggered and persistent: the event stays armed across
	 * callbacks, and fires again while the fd is still readable. */
	uintr_ev = event_new(base, lfd, EV_READ | EV_PERSIST, on_uintr, NULL);
	sock_ev = event_new(base, sv[0], EV_READ | EV_PERSIST, on_sock, NULL);
	if (!uintr_ev || !sock_ev || event_add(uintr_ev, NULL) != 0 ||
	    event_add(sock_ev, NULL) != 0) {
		fprintf(stderr, "event_new/event_add failed\n");
		return 1;
	}
	uintr_stui(); /* UIF = 1: the drain delivers */

	for (i = 0; i < SENDERS; i++)
		if (pthread_create(&senders[i], NULL, sender, (void *)(long)i) != 0)
			die("pthread_create");
	if (pthread_create(&wr, NULL, writer, (void *)(long)sv[1]) != 0)
		die("pthread_create");
	atomic_store(&ready, 1);

	if (event_base_dispatch(base) < 0)
		failed = 1;
	if (failed)
		return 1;

	for (i = 0; i < SENDERS; i++)
		pthread_join(senders[i], NULL);
	pthread_join(wr, NULL);
	for (i = 0; i < SENDERS; i++) {
		printf("vector %d: %u of %d interrupts\n", i + 1,
		       atomic_load(&got[i]), POSTS);
		bad |= atomic_load(&got[i]) != POSTS;
	}
	printf("socket: %u of %d bytes\n", bytes, MESSAGES);
	bad |= bytes != MESSAGES || atomic_load(&unexpected) != 0;
	event_free(uintr_ev);
	event_free(sock_ev);
	event_base_free(base);
	close(lfd);
	close(sv[0]);
	close(sv[1]);
	if (uintr_unregister_handler(0) != 0)
		die("uintr_unregister_handler");
	return bad ? 1 : 0;
}
