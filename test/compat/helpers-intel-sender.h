/*
 * What selftests/uintr/syscall_sender.c checks (Intel's mainline-tracking
 * and later branches alike), with the calls by number, 471-474 meaning
 * the same in both ABIs here; run under each ABI by
 * intel-syscall-sender.c and later-intel-syscall-sender.c (issue 12):
 *   1. uintr_register_sender(-1) fails: EBADF.
 *   2. uintr_register_sender(an eventfd) fails: EOPNOTSUPP (not a vector
 *      fd).
 *   3. In a forked child: four threads each register a handler and all
 *      64 vectors; the main thread registers every one of those 256 fds
 *      as a sender (all succeed: the table has 256 entries), then becomes
 *      a receiver itself and registers its own vector 0: the 257th entry
 *      fails, ENOSPC.  The child's exit cleans up, as in the selftest.
 * (The selftest's same-fd-twice case is compiled out there.)
 */
#ifndef UINTR_TEST_HELPERS_INTEL_SENDER_H
#define UINTR_TEST_HELPERS_INTEL_SENDER_H

#include <sys/eventfd.h>

#include "helpers-compat.h"

#define THREADS 4

static int uvec_fd[THREADS * 64];
static int threads_ready;
static struct t_chan finish;

static void __attribute__((interrupt))
empty_handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

static void *vector_thread(void *arg)
{
	int base = (int)(intptr_t)arg * 64, i;
	long fd;

	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)empty_handler, 0), 0);
	for (i = 0; i < 64; i++) {
		fd = syscall(NR_uintr_create_fd, i, 0);
		CHECK(fd >= 0);
		uvec_fd[base + i] = (int)fd;
	}
	ADD(threads_ready, 1);
	t_chan_wait(&finish);
	return NULL;
}

static void out_of_uitt_entries(void)
{
	struct rlimit rl;
	long fd;
	int i;

	/* 256 vector fds and what the senders hold: raise the soft limit. */
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	if (rl.rlim_cur < 4096 && rl.rlim_max >= 4096) {
		rl.rlim_cur = 4096;
		CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	}
	t_chan_init(&finish);
	for (i = 0; i < THREADS; i++)
		t_start(vector_thread, (void *)(intptr_t)i);
	WAIT_UNTIL(LOAD(threads_ready) == THREADS);
	for (i = 0; i < THREADS * 64; i++)
		CHECK(syscall(NR_uintr_register_sender, uvec_fd[i], 0) >= 0);
	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)empty_handler, 0), 0);
	fd = syscall(NR_uintr_create_fd, 0, 0);
	CHECK(fd >= 0);
	CHECK_ERR(syscall(NR_uintr_register_sender, fd, 0), ENOSPC);
	_exit(T_PASS);
}

static int intel_syscall_sender(void)
{
	int efd = eventfd(0, 0);
	pid_t pid;

	CHECK_ERR(syscall(NR_uintr_register_sender, -1, 0), EBADF);
	CHECK(efd >= 0);
	CHECK_ERR(syscall(NR_uintr_register_sender, efd, 0), EOPNOTSUPP);
	close(efd);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		out_of_uitt_entries();
	t_wait_child_ok(pid);
	return T_PASS;
}

#endif
