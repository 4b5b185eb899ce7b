/*
 * A holder's shutdown() releases nothing (issue 17, fault 4): only the
 * last close of the uintr_fd, in every process, is its release (2.3).  A
 * forked holder shuts the fd down (SHUT_RD, SHUT_WR, SHUT_RDWR) and exits;
 * the receiver's copy is still open, so after settling the vector is still
 * busy (EBUSY) and a sender through the receiver's copy still delivers.
 * Then the receiver closes it: released, the vector can be created again.
 * The old library took the hang-up for a release.
 */
#include "helpers-lifetime.h"

#include <sys/socket.h>

int main(void)
{
	static const unsigned int vec[1] = { 4 };
	int fd, idx;
	pid_t pid;

	lt_counts_init();
	lt_become_receiver(1, vec, &fd);
	uintr_stui();
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		CHECK(shutdown(fd, SHUT_RD) == 0);
		CHECK(shutdown(fd, SHUT_WR) == 0);
		CHECK(shutdown(fd, SHUT_RDWR) == 0);
		exit(T_PASS);
	}
	t_wait_child_ok(pid);
	lt_settle_releases();
	CHECK_ERR(uintr_create_fd(4, 0), EBUSY);
	idx = uintr_register_sender(fd, 0);
	CHECK(idx >= 0);
	lt_send_wait(idx, 4);
	CHECK_EQ(lt_count(4), 1);
	CHECK(uintr_unregister_sender(fd, 0) == 0);
	CHECK(close(fd) == 0);
	lt_settle_releases();
	fd = uintr_create_fd(4, 0);
	CHECK(fd >= 0);
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
