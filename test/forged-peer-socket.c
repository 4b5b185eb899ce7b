/*
 * A hostile peer cannot fake a uintr_fd (reference 2.4: "fd not a uintrfd
 * -> EOPNOTSUPP"; the RFC checks the file's type, which a process cannot
 * forge).  A forked child, holding a real uintr_fd, copies its queued
 * message byte for byte (MSG_PEEK, with the two memfds it carries) into a
 * SOCK_SEQPACKET socket pair of its own making, and hands that socket to
 * the receiver's process.  Registering a sender on it fails EOPNOTSUPP, in
 * the child and in the parent, while the real fd (same bytes) works.
 */
#include "helpers-lifetime.h"

#define V 5

static int forge(int real)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} u;
	char data[512];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	ssize_t n;
	int sv[2], nfds;

	memset(&u, 0, sizeof(u));
	n = recvmsg(real, &msg, MSG_PEEK | MSG_DONTWAIT);
	CHECK(n > 0);
	CHECK(!(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)));
	CHECK(CMSG_FIRSTHDR(&msg) && CMSG_FIRSTHDR(&msg)->cmsg_type == SCM_RIGHTS);
	nfds = (int)((CMSG_FIRSTHDR(&msg)->cmsg_len - CMSG_LEN(0)) / sizeof(int));
	CHECK_EQ(nfds, 3); /* the UPID and info memfds, the eventfd (loop.c) */

	/* The same bytes and the same fds, in a socket we made. */
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
	iov.iov_len = (size_t)n;
	msg.msg_controllen = CMSG_SPACE(3 * sizeof(int));
	msg.msg_flags = 0;
	CHECK(sendmsg(sv[0], &msg, 0) == n);
	return sv[1];
}

static void child(int real, int sock)
{
	int forged = forge(real);

	CHECK_ERR(uintr_register_sender(forged, 0), EOPNOTSUPP);
	t_send_fd(sock, forged);
	exit(T_PASS);
}

int main(void)
{
	static const unsigned int vec[] = { V };
	int fd, sv[2], forged;
	pid_t pid;

	lt_counts_init();
	lt_become_receiver(1, vec, &fd);
	uintr_stui();
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		child(fd, sv[1]);
	forged = t_recv_fd(sv[0]);
	t_wait_child_ok(pid);

	CHECK_ERR(uintr_register_sender(forged, 0), EOPNOTSUPP);
	CHECK_ERR(uintr_unregister_sender(forged, 0), EOPNOTSUPP);
	CHECK_EQ(uintr_register_sender(fd, 0), 0);
	lt_send_wait(0, V);
	CHECK_EQ(lt_count(V), 1);
	return T_PASS;
}
