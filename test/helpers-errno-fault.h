/*
 * Forked children that execute a faulting SENDUIPI (reference 2.4, 5.1):
 * shared by senduipi-forced-fault and senduipi-forced-fault-handler.
 */
#ifndef UINTR_TEST_HELPERS_ERRNO_FAULT_H
#define UINTR_TEST_HELPERS_ERRNO_FAULT_H

#include "helpers-errno.h"

#include <sys/prctl.h>

/* Survived the fault: the child exits with this status. */
#define TF_SURVIVED 3
/* A handler of ours ran for the fault. */
#define TF_HANDLED 4

__attribute__((unused)) static void tf_handler_exit(int sig)
{
	(void)sig;
	_exit(TF_HANDLED);
}

/*
 * In a child: make it a sender with one valid entry (index 0, to itself)
 * when sig is SIGSEGV, none when SIGILL; let setup() arrange the signal
 * disposition and mask; then send index 1 (SIGSEGV case) or 0 (SIGILL).
 * The parent checks the child was killed by sig.
 */
static inline void tf_expect_killed(int sig, void (*setup)(int sig))
{
	pid_t pid;
	int status;

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		unsigned long long idx = 0;

		/* No core file for the expected crash; the default action
		 * to start from (a sanitizer runtime installs its own). */
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		signal(SIGSEGV, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		if (sig == SIGSEGV) {
			int fd;

			if (uintr_register_handler(te_handler, 0) != 0)
				_exit(10);
			fd = uintr_create_fd(0, 0);
			if (fd < 0 || uintr_register_sender(fd, 0) != 0)
				_exit(11);
			idx = 1;
		}
		setup(sig);
		uintr_senduipi(idx);
		_exit(TF_SURVIVED);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != sig) {
		fprintf(stderr, "child for signal %d: %s %d, expected killed by %d\n", sig,
			WIFSIGNALED(status) ? "killed by" : "exit status",
			WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), sig);
		exit(T_FAIL);
	}
}

#endif
