/*
 * A forged socket is not a uintr_fd (reference 2.4: "fd not a uintrfd ->
 * EOPNOTSUPP"; helper context: forged sockets with crafted contents), even
 * when it carries an exact copy of a genuine uintr_fd's message bytes: with
 * two foreign memfds attached instead of the receiver's pages,
 * uintr_register_sender and uintr_unregister_sender must fail with
 * EOPNOTSUPP, whether this thread is not yet connected to that receiver,
 * connected through another of its fds, or connected through the very fd
 * copied.  The genuine connection is left intact (it still delivers).
 */
#include "helpers-errno.h"

#include <sys/mman.h>

/* kind 0: plain memfd; 1: sealed as the library seals its UPID page
 * (which == 0) and info page (which == 1); 2: sealed against writes. */
static int foreign_memfd(int kind, int which)
{
	int fd = memfd_create("foreign", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int seals = F_SEAL_SHRINK | F_SEAL_GROW;

	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 4096) == 0);
	if (kind == 2 || (kind == 1 && which == 1))
		seals |= F_SEAL_FUTURE_WRITE;
	if (kind != 0)
		CHECK(fcntl(fd, F_ADD_SEALS, seals) == 0);
	return fd;
}

/* A SEQPACKET end holding a copy of uintr_fd's message bytes, with two
 * foreign memfds of the given kind attached. */
static int forged_copy(int uintr_fd, int kind)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	unsigned char bytes[512];
	struct iovec iov = { .iov_base = bytes, .iov_len = 0 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fds[2] = { foreign_memfd(kind, 0), foreign_memfd(kind, 1) }, sv[2];
	ssize_t n = recv(uintr_fd, bytes, sizeof(bytes), MSG_PEEK | MSG_DONTWAIT);

	CHECK(n > 0 && n < (ssize_t)sizeof(bytes));
	iov.iov_len = (size_t)n;
	memset(&u, 0, sizeof(u));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(sendmsg(sv[0], &msg, 0) == n);
	CHECK(close(sv[0]) == 0);
	CHECK(close(fds[0]) == 0);
	CHECK(close(fds[1]) == 0);
	return sv[1];
}

static void expect_forged_rejected(int uintr_fd)
{
	int kind;

	for (kind = 0; kind < 3; kind++) {
		int f = forged_copy(uintr_fd, kind);

		CHECK_ERR(uintr_register_sender(f, 0), EOPNOTSUPP);
		CHECK_ERR(uintr_unregister_sender(f, 0), EOPNOTSUPP);
		CHECK(close(f) == 0);
	}
}

int main(void)
{
	struct te_rx rx;

	te_rx_start(&rx, 0, 3);

	/* Not connected to the receiver at all. */
	expect_forged_rejected(rx.fd[0]);
	te_check_state_zero();

	/* Connected through another fd of the same receiver. */
	CHECK_EQ(uintr_register_sender(rx.fd[1], 0), 0);
	expect_forged_rejected(rx.fd[0]);
	expect_forged_rejected(rx.fd[2]);

	/* Connected through the copied fd itself. */
	CHECK_EQ(uintr_register_sender(rx.fd[0], 0), 1);
	expect_forged_rejected(rx.fd[0]);
	expect_forged_rejected(rx.fd[1]);

	/* Nothing changed: the genuine entries are 0 and 1, the next is 2,
	 * and both still deliver, once each. */
	CHECK_EQ(uintr_register_sender(rx.fd[2], 0), 2);
	uintr_senduipi(0);
	uintr_senduipi(1);
	uintr_senduipi(2);
	CHECK_EQ(uintr_unregister_sender(rx.fd[0], 0), 0);
	CHECK_EQ(uintr_unregister_sender(rx.fd[1], 0), 0);
	CHECK_EQ(uintr_unregister_sender(rx.fd[2], 0), 0);
	te_rx_stop(&rx);
	/* The receiver never set UIF: nothing was delivered. */
	CHECK_EQ(te_total, 0);
	return T_PASS;
}
