/*
 * Shared by the errno / state / UITT / fault tests (errno-*, state-layout,
 * uitt-index-order, senduipi-*): small helpers on top of helpers.h.
 */
#ifndef UINTR_TEST_HELPERS_ERRNO_H
#define UINTR_TEST_HELPERS_ERRNO_H

#include "helpers.h"

#include <fcntl.h>
#include <sys/resource.h>

/* A handler that only counts, per vector.  The total first: a thread that
 * waits until te_count[v] reaches k and then reads te_total finds every
 * delivery up to that one in it (senduipi-sigsegv's sender thread found
 * te_total 0 under qemu when the per-vector count came first). */
static _Atomic unsigned int te_count[UINTR_MAX_VECTORS];
static _Atomic unsigned int te_total;

__attribute__((unused)) static void te_handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	atomic_fetch_add(&te_total, 1);
	if (vector < UINTR_MAX_VECTORS)
		atomic_fetch_add(&te_count[vector], 1);
}

/* A second handler, to tell registrations apart by address. */
__attribute__((unused)) static void te_other_handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	atomic_fetch_add(&te_total, 1000);
}

/* The calling thread's state must be entirely zero: no receiver, no
 * sender table, UIF = 0. */
static inline void te_check_state_zero(void)
{
	struct uintr_state s;
	unsigned char zero[sizeof(s)];

	memset(&s, 0x5a, sizeof(s));
	memset(zero, 0, sizeof(zero));
	CHECK_EQ(uintr_read_state(&s), 0);
	CHECK(memcmp(&s, zero, sizeof(s)) == 0);
}

static inline struct uintr_state te_state(void)
{
	struct uintr_state s;

	CHECK_EQ(uintr_read_state(&s), 0);
	return s;
}

/* Run fn(arg) in a new thread and wait for it. */
static inline void *te_in_thread(void *(*fn)(void *), void *arg)
{
	return t_join(t_start(fn, arg));
}

/* Raise the soft RLIMIT_NOFILE to at least `want` (up to the hard limit);
 * skip the test if the hard limit is too low. */
static inline void te_need_fds(rlim_t want)
{
	struct rlimit rl;

	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	if (rl.rlim_cur >= want)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		printf("skip: RLIMIT_NOFILE hard limit %llu < %llu\n",
		       (unsigned long long)rl.rlim_max, (unsigned long long)want);
		exit(T_SKIP);
	}
	rl.rlim_cur = want;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
}

/*
 * A receiver thread: registers te_handler, creates vectors first..first+n-1
 * (fds in fd[]), then obeys commands: te_rx_unregister() unregisters its
 * handler, te_rx_command(rx, 's') stores its UIRR in rx->uirr,
 * te_rx_stop() makes it return (and joins it).  It blocks in read()
 * between commands, with UIF = 0.  A notification sent to it before a
 * command is processed before it executes the command: the signal is
 * pending when its read() returns.
 */
struct te_rx {
	unsigned long long first;
	int n;
	int fd[UINTR_MAX_VECTORS];
	pid_t tid;
	_Atomic unsigned long long uirr; /* its UIRR, at the last 's' command */
	struct t_chan cmd, ack;
	pthread_t thread;
};

static inline void *te_rx_main(void *arg)
{
	struct te_rx *rx = arg;
	int i;

	rx->tid = t_gettid();
	CHECK_EQ(uintr_register_handler(te_handler, 0), 0);
	for (i = 0; i < rx->n; i++) {
		rx->fd[i] = uintr_create_fd(rx->first + (unsigned long long)i, 0);
		CHECK(rx->fd[i] >= 0);
	}
	t_chan_post(&rx->ack);
	for (;;) {
		char c;
		ssize_t r;

		do
			r = read(rx->cmd.rd, &c, 1);
		while (r < 0 && errno == EINTR);
		CHECK_EQ(r, 1);
		if (c == 'u') {
			CHECK_EQ(uintr_unregister_handler(0), 0);
		} else if (c == 's') {
			rx->uirr = te_state().uirr;
		} else if (c == 'q') {
			t_chan_post(&rx->ack);
			return NULL;
		}
		t_chan_post(&rx->ack);
	}
}

/* Start a receiver thread; returns once its fds exist. */
static inline void te_rx_start(struct te_rx *rx, unsigned long long first, int n)
{
	memset(rx, 0, sizeof(*rx));
	rx->first = first;
	rx->n = n;
	t_chan_init(&rx->cmd);
	t_chan_init(&rx->ack);
	rx->thread = t_start(te_rx_main, rx);
	t_chan_wait(&rx->ack);
}

static inline void te_rx_command(struct te_rx *rx, char c)
{
	CHECK(write(rx->cmd.wr, &c, 1) == 1);
	t_chan_wait(&rx->ack);
}

static inline void te_rx_unregister(struct te_rx *rx)
{
	te_rx_command(rx, 'u');
}

/* The thread exits (its fds stay open) and is joined. */
static inline void te_rx_stop(struct te_rx *rx)
{
	te_rx_command(rx, 'q');
	t_join(rx->thread);
	close(rx->cmd.rd);
	close(rx->cmd.wr);
	close(rx->ack.rd);
	close(rx->ack.wr);
}

#endif
