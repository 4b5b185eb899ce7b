/*
 * Binary compatibility across processes (issue: "sends across processes
 * (fork and SCM_RIGHTS)"; RFC 2.3, 2.4, 2.7).  The receiver (main thread,
 * UIF = 1) gets:
 *   - vector 11 from a child forked after uintr_create_fd: it inherited the
 *     fd, registers as sender (index 0) and executes SENDUIPI; fork gave it
 *     no handler (unregister: EINVAL, create_fd: EINVAL) and UIF = 0 though
 *     the parent's was 1;
 *   - vector 12 from a process forked before the fd existed, which receives
 *     it over a UNIX socket (SCM_RIGHTS).
 * Each exactly once, in that order; both children run the emulation they
 * inherited (signal handlers, seccomp filter) and exit 0.
 */
#include "helpers-compat.h"

static int handled;
static unsigned long long order[4];

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	int n = LOAD(handled);

	(void)frame;
	if (n < 4)
		STORE(order[n], vector);
	ADD(handled, 1);
}

static int sender_child(int fd)
{
	long idx = u_register_sender(fd, 0);

	if (idx != 0) {
		fprintf(stderr, "child %d: register_sender %ld errno %d\n", (int)getpid(), idx, errno);
		return 1;
	}
	_senduipi((unsigned long long)idx);
	return 0;
}

int main(void)
{
	pid_t forked_before, forked_after;
	int sv[2], status;
	long fd11, fd12;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	forked_before = fork();
	CHECK(forked_before >= 0);
	if (forked_before == 0) {
		close(sv[0]);
		_exit(sender_child(t_recv_fd(sv[1])));
	}
	close(sv[1]);

	CHECK_EQ(u_register_handler(handler, 0), 0);
	fd11 = u_create_fd(11, 0);
	CHECK(fd11 >= 0);
	_stui();

	forked_after = fork();
	CHECK(forked_after >= 0);
	if (forked_after == 0) {
		if (_testui() != 0 || u_unregister_handler(0) != -1 || errno != EINVAL ||
		    u_create_fd(13, 0) != -1 || errno != EINVAL) {
			fprintf(stderr, "child: inherited receiver state\n");
			_exit(1);
		}
		_exit(sender_child((int)fd11));
	}
	CHECK(waitpid(forked_after, &status, 0) == forked_after);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	WAIT_UNTIL(LOAD(handled) == 1);

	fd12 = u_create_fd(12, 0);
	CHECK(fd12 >= 0);
	t_send_fd(sv[0], (int)fd12);
	t_wait_child_ok(forked_before);
	WAIT_UNTIL(LOAD(handled) == 2);

	CHECK_EQ(LOAD(order[0]), 11);
	CHECK_EQ(LOAD(order[1]), 12);
	CHECK_EQ(u_unregister_handler(0), 0);
	CHECK_EQ(LOAD(handled), 2);
	return T_PASS;
}
