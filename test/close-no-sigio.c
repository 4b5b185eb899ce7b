/*
 * Closing vector fds never sends the receiver SIGIO (issue 17, fault 3):
 * whatever RLIMIT_SIGPENDING is, and whether or not the receiver blocks
 * the notification signal, a release is no signal at all (src/vector_fd.c:
 * the process's watcher notices it).  In a child with RLIMIT_SIGPENDING
 * 0, then 2, a receiver that blocks the notification signal creates
 * vectors 1, 2 and 3 and closes all three fds: the child survives (the
 * old library queued a real-time signal per release, and the kernel fell
 * back to SIGIO, whose default action ends the process), the releases
 * complete, and the three vectors can be created again.
 */
#include "helpers-lifetime.h"

#include <sys/resource.h>

static void child(rlim_t limit)
{
	static const unsigned int vecs[3] = { 1, 2, 3 };
	struct rlimit rl = { .rlim_cur = limit, .rlim_max = limit };
	int fds[3], i;

	CHECK(setrlimit(RLIMIT_SIGPENDING, &rl) == 0);
	lt_become_receiver(3, vecs, fds);
	lt_block(uintr_notification_signal(), 1);
	for (i = 0; i < 3; i++)
		CHECK(close(fds[i]) == 0);
	lt_settle_releases();
	CHECK(!lt_sig_pending(SIGIO));
	for (i = 0; i < 3; i++) {
		fds[i] = uintr_create_fd(vecs[i], 0);
		CHECK(fds[i] >= 0);
	}
	lt_block(uintr_notification_signal(), 0);
	CHECK(uintr_unregister_handler(0) == 0);
	exit(T_PASS);
}

int main(void)
{
	static const rlim_t limits[2] = { 0, 2 };
	int k;

	lt_counts_init();
	for (k = 0; k < 2; k++) {
		pid_t pid = fork();

		CHECK(pid >= 0);
		if (pid == 0)
			child(limits[k]);
		t_wait_child_ok(pid);
	}
	return T_PASS;
}
