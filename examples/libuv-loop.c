/*
 * libuv-loop.c - a libuv loop serving a socket and user interrupts from
 * several sender threads (uintr_loop_fd(3)).
 *
 * The loop thread registers a handler, makes one vector per sender thread,
 * and watches two descriptors with uv_poll_t handles in one uv_loop_t: the
 * loop fd from uintr_loop_fd(), readable while interrupts are posted, and
 * one end of a socket pair that a writer thread fills with messages.  When
 * the loop fd is readable the poll callback calls uintr_loop_drain(), which
 * runs the handler.
 *
 * Each sender posts its vector, then waits until the handler has counted
 * it before it posts again: posts of a vector still pending coalesce into
 * one delivery, so only this hand-shake makes the count exact.
 *
 *   cc -O2 -Wall -Wextra libuv-loop.c -o libuv-loop \
 *      $(pkg-config --cflags --libs uintr libuv)
 *   ./libuv-loop
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

#include <uv.h>
#include <uintr.h>

#define SENDERS 3
#define POSTS 200    /* per sender */
#define MESSAGES 200 /* over the socket */

static int vector_fd[SENDERS];             /* one uintr_fd per sender */
static _Atomic unsigned int got[SENDERS];  /* handler calls per vector */
static _Atomic unsigned int unexpected;
static _Atomic int ready;                  /* the loop is set up */
static unsigned int bytes;                 /* loop thread only */
static int sock;                           /* the loop's end of the pair */
static uv_poll_t uintr_watch, sock_watch;
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

/* With both handles closed, uv_run() returns: the loop has nothing left. */
static void stop_if_done(void)
{
	if (!all_done())
		return;
	uv_close((uv_handle_t *)&uintr_watch, NULL);
	uv_close((uv_handle_t *)&sock_watch, NULL);
}

static void on_uintr(uv_poll_t *h, int status, int events)
{
	(void)h;
	(void)events;
	if (status < 0 || uintr_loop_drain(0) < 0) {
		fprintf(stderr, "loop fd: %s\n",
			status < 0 ? uv_strerror(status) : "uintr_loop_drain failed");
		failed = 1;
		uv_stop(uv_default_loop());
		return;
	}
	stop_if_done();
}

static void on_sock(uv_poll_t *h, int status, int events)
{
	char buf[64];
	ssize_t r;

	(void)h;
	(void)events;
	if (status < 0) {
		fprintf(stderr, "socket: %s\n", uv_strerror(status));
		failed = 1;
		uv_stop(uv_default_loop());
		return;
	}
	while ((r = read(sock, buf, sizeof(buf))) > 0)
		bytes += (unsigned int)r;
	if (r < 0 && errno != EAGAIN)
		die("read");
	stop_if_done();
}

int main(void)
{
	pthread_t senders[SENDERS], wr;
	uv_loop_t *loop = uv_default_loop();
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
	sock = sv[0];
	if (uv_poll_init(loop, &uintr_watch, lfd) != 0 ||
	    uv_poll_init(loop, &sock_watch, sock) != 0 ||
	    uv_poll_start(&uintr_watch, UV_READABLE, on_uintr) != 0 ||
	    uv_poll_start(&sock_watch, UV_READABLE, on_sock) != 0) {
		fprintf(stderr, "uv_poll_init/uv_poll_start failed\n");
		return 1;
	}
	uintr_stui(); /* UIF = 1: the drain delivers */

	for (i = 0; i < SENDERS; i++)
		if (pthread_create(&senders[i], NULL, sender, (void *)(long)i) != 0)
			die("pthread_create");
	if (pthread_create(&wr, NULL, writer, (void *)(long)sv[1]) != 0)
		die("pthread_create");
	atomic_store(&ready, 1);

	uv_run(loop, UV_RUN_DEFAULT);
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
	if (uv_loop_close(loop) != 0)
		bad = 1;
	close(lfd);
	close(sv[0]);
	close(sv[1]);
	if (uintr_unregister_handler(0) != 0)
		die("uintr_unregister_handler");
	return bad ? 1 : 0;
}
