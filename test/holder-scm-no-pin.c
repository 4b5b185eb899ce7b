/*
 * A holder cannot pin a vector (issue 17, fault 5).  A forked holder
 * tries to park the uintr_fd in its own socket queue, sending it into
 * itself with SCM_RIGHTS (the only queue that would outlive the holder is
 * the receiver's own end): the send fails with EPIPE, and the holder
 * exits.  When the receiver closes its copy, the fd is released and the
 * vector can be created again.  Under the old library the send succeeded
 * and the vector stayed busy (EBUSY) for the receiver's whole life.
 */
#include "helpers-lifetime.h"

#include "helpers-scm.h"

int main(void)
{
	static const unsigned int vec[1] = { 6 };
	int fd;
	pid_t pid;

	lt_counts_init();
	lt_become_receiver(1, vec, &fd);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		errno = 0;
		CHECK(t_sendmsg_fds(fd, "x", 1, &fd, 1) == -1 && errno == EPIPE);
		exit(T_PASS);
	}
	t_wait_child_ok(pid);
	CHECK(close(fd) == 0);
	lt_settle_releases();
	fd = uintr_create_fd(6, 0);
	CHECK(fd >= 0);
	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
