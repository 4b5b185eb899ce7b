/*
 * uring-loop.c - an io_uring loop (liburing) serving a socket and user
 * interrupts from several sender threads (uintr_loop_fd(3)).
 *
 * The loop thread registers a handler, makes one vector per sender thread,
 * and keeps one poll request (IORING_OP_POLL_ADD) in flight on each of two
 * descriptors: the loop fd from uintr_loop_fd(), readable while interrupts
 * are posted, and one end of a socket pair that a writer thread fills with
 * messages.  When the loop fd's request completes the loop calls
 * uintr_loop_drain(), which runs the handler, and re-arms the request.  A
 * one-shot request re-armed after the drain is level-triggered in effect:
 * it completes at once if the fd became readable again meanwhile, so a
 * post between the drain and the re-arm is not lost.  (Multishot poll,
 * io_uring_prep_poll_multishot, would save the re-arm on kernels >= 5.13.)
 *
 * Each sender posts its vector, then waits until the handler has counted
 * it before it posts again: posts of a vector still pending coalesce into
 * one delivery, so only this hand-shake makes the count exact.
 *
 *   cc -O2 -Wall -Wextra uring-loop.c -o uring-loop \
 *      $(pkg-config --cflags --libs uintr liburing)
 *   ./uring-loop
 *
 * Exit status 0 when every interrupt and every message arrived, 1
 * otherwise, 77 when the kernel (or a sandbox) refuses io_uring.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <liburing.h>
#include <uintr.h>

#define SENDERS 3
#define POSTS 200    /* per sender */
#define MESSAGES 200 /* over the socket */

static int vector_fd[SENDERS];             /* one uintr_fd per sender */
static _Atomic unsigned int got[SENDERS];  /* handler calls per vector */
static _Atomic unsigned int unexpected;
static _Atomic int ready;                  /* the loop is set up */
static unsigned int bytes;                 /* loop thread only */
static struct io_uring ring;

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

/* One POLLIN request on fd; user_data names the fd. */
static void arm(int fd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	int r;

	if (!sqe) {
		fprintf(stderr, "io_uring_get_sqe: submission queue full\n");
		exit(1);
	}
	io_uring_prep_poll_add(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, (unsigned long long)fd);
	r = io_uring_submit(&ring);
	if (r < 0) {
		fprintf(stderr, "io_uring_submit: %s\n", strerror(-r));
		exit(1);
	}
}

int main(void)
{
	pthread_t senders[SENDERS], wr;
	struct io_uring_cqe *cqe;
	int sv[2], lfd, fd, i, r, bad = 0;
	char buf[64];
	ssize_t n;

	r = io_uring_queue_init(8, &ring, 0);
	if (r == -ENOSYS || r == -EPERM || r == -EACCES) {
		printf("skipped: io_uring refused by the kernel or sandbox "
		       "(io_uring_queue_init: %s)\n", strerror(-r));
		return 77;
	}
	if (r < 0) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-r));
		return 1;
	}
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
	arm(lfd);
	arm(sv[0]);
	uintr_stui(); /* UIF = 1: the drain delivers */

	for (i = 0; i < SENDERS; i++)
		if (pthread_create(&senders[i], NULL, sender, (void *)(long)i) != 0)
			die("pthread_create");
	if (pthread_create(&wr, NULL, writer, (void *)(long)sv[1]) != 0)
		die("pthread_create");
	atomic_store(&ready, 1);

	while (!all_done()) {
		r = io_uring_wait_cqe(&ring, &cqe);
		if (r == -EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "io_uring_wait_cqe: %s\n", strerror(-r));
			return 1;
		}
		fd = (int)io_uring_cqe_get_data64(cqe);
		r = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		if (r < 0) {
			fprintf(stderr, "poll on fd %d: %s\n", fd, strerror(-r));
			return 1;
		}
		if (fd == lfd) {
			if (uintr_loop_drain(0) < 0)
				die("uintr_loop_drain");
		} else {
			while ((n = read(sv[0], buf, sizeof(buf))) > 0)
				bytes += (unsigned int)n;
			if (n < 0 && errno != EAGAIN)
				die("read");
		}
		/* Re-armed after the drain or the read: readiness that came
		 * after them completes the new request at once. */
		if (!all_done())
			arm(fd);
	}

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
	/* The other fd's request may still be in flight: the ring's exit
	 * cancels it. */
	io_uring_queue_exit(&ring);
	close(lfd);
	close(sv[0]);
	close(sv[1]);
	if (uintr_unregister_handler(0) != 0)
		die("uintr_unregister_handler");
	return bad ? 1 : 0;
}
