/*
 * Errnos of uintr_register_sender (reference 2 "Common prologue", 2.4):
 * flags != 0 -> EINVAL (first); bad fd -> EBADF; anything that is not a
 * uintr_fd -> EOPNOTSUPP (regular file, pipe, memfd, eventfd, other
 * sockets, sockets forged with crafted contents, a recycled fd number);
 * this thread already connected through the fd (or a dup of it) ->
 * EISCONN, while another thread connects fine with its own index 0;
 * receiver unregistered or exited -> ESHUTDOWN; UITT full (257th) ->
 * ENOSPC, the first 256 getting 0..255 in order.  No failure consumes an
 * index: the next success always gets the lowest free one.
 */
#include "helpers-errno.h"

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <netinet/in.h>

static struct te_rx rx_a;
static unsigned char genuine[512];
static ssize_t genuine_len;

/* A SEQPACKET pair whose receiving end holds one message with `len`
 * bytes and `nfds` fds; the sending end is closed. */
static int crafted(const void *bytes, size_t len, const int *fds, int nfds)
{
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(t_sendmsg_fds(sv[0], bytes, len, fds, nfds) == (ssize_t)len);
	CHECK(close(sv[0]) == 0);
	return sv[1];
}

static int page_memfd(void)
{
	int fd = memfd_create("not-uintr", MFD_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 4096) == 0);
	return fd;
}

/* register_sender must fail with EOPNOTSUPP on fd (then closed), and so
 * must unregister_sender. */
static void expect_not_uintr(int fd)
{
	CHECK(fd >= 0);
	CHECK_ERR(uintr_register_sender(fd, 0), EOPNOTSUPP);
	CHECK_ERR(uintr_register_sender(fd, 0), EOPNOTSUPP);
	CHECK_ERR(uintr_register_sender(fd, 1), EINVAL);
	CHECK(close(fd) == 0);
}

static void not_uintr_fds(void)
{
	unsigned char junk[512], bad[512];
	int p[2], sv[2], mfd[2], fd, i;
	unsigned int seed = 12345;

	/* Regular file, directory, character device. */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	expect_not_uintr(fd);
	expect_not_uintr(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	expect_not_uintr(open("/dev/null", O_RDWR | O_CLOEXEC));
	/* Pipe, both ends. */
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	expect_not_uintr(p[0]);
	expect_not_uintr(p[1]);
	/* memfd, eventfd. */
	expect_not_uintr(page_memfd());
	expect_not_uintr(eventfd(0, EFD_CLOEXEC));
	/* Sockets of other kinds. */
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(write(sv[0], genuine, (size_t)genuine_len) == genuine_len);
	expect_not_uintr(sv[1]);
	expect_not_uintr(sv[0]);
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(write(sv[0], genuine, (size_t)genuine_len) == genuine_len);
	expect_not_uintr(sv[1]);
	expect_not_uintr(sv[0]);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		expect_not_uintr(fd);
	/* SEQPACKET: unconnected, and a connected pair with no message. */
	expect_not_uintr(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	expect_not_uintr(sv[1]);
	expect_not_uintr(sv[0]);

	/* Forged SEQPACKET sockets with crafted messages. */
	for (i = 0; i < (int)sizeof(junk); i++) {
		seed = seed * 1103515245u + 12345u;
		junk[i] = (unsigned char)(seed >> 16);
	}
	expect_not_uintr(crafted(junk, 1, NULL, 0));
	expect_not_uintr(crafted(junk, 17, NULL, 0));
	expect_not_uintr(crafted(junk, (size_t)genuine_len, NULL, 0));
	expect_not_uintr(crafted(junk, sizeof(junk), NULL, 0));
	mfd[0] = page_memfd();
	mfd[1] = page_memfd();
	expect_not_uintr(crafted(junk, (size_t)genuine_len, mfd, 2));
	/* The right length, the genuine bytes but a wrong magic (the first
	 * 8 bytes flipped), with and without two memfds attached. */
	memcpy(bad, genuine, (size_t)genuine_len);
	for (i = 0; i < 8; i++)
		bad[i] ^= 0xff;
	expect_not_uintr(crafted(bad, (size_t)genuine_len, NULL, 0));
	expect_not_uintr(crafted(bad, (size_t)genuine_len, mfd, 2));
	/* The genuine bytes: with no fds, one fd, too many fds, and one
	 * byte short or long (the genuine bytes with two foreign memfds:
	 * register-sender-forged-copy). */
	expect_not_uintr(crafted(genuine, (size_t)genuine_len, NULL, 0));
	expect_not_uintr(crafted(genuine, (size_t)genuine_len, mfd, 1));
	{
		int four[4] = { mfd[0], mfd[1], mfd[0], mfd[1] };

		expect_not_uintr(crafted(genuine, (size_t)genuine_len, four, 4));
	}
	expect_not_uintr(crafted(genuine, (size_t)genuine_len - 1, mfd, 2));
	memcpy(bad, genuine, (size_t)genuine_len);
	bad[genuine_len] = 0;
	expect_not_uintr(crafted(bad, (size_t)genuine_len + 1, mfd, 2));
	CHECK(close(mfd[0]) == 0);
	CHECK(close(mfd[1]) == 0);
}

/*
 * A forked child peeks a genuine uintr_fd, memfds and all, and queues an
 * exact copy in a socket pair of its own, whose end it passes back: not a
 * uintr_fd either.
 */
static void forged_by_other_process(void)
{
	int link[2], forged, status;
	pid_t pid;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		union {
			char buf[CMSG_SPACE(4 * sizeof(int))];
			struct cmsghdr align;
		} u;
		unsigned char data[512];
		struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				      .msg_controllen = sizeof(u.buf) };
		struct cmsghdr *c;
		int fds[3], copy;
		ssize_t n;

		n = recvmsg(rx_a.fd[0], &msg, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n != genuine_len || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
			_exit(2);
		/* The UPID and info memfds and the receiver's eventfd. */
		c = CMSG_FIRSTHDR(&msg);
		if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(3 * sizeof(int)))
			_exit(3);
		memcpy(fds, CMSG_DATA(c), sizeof(fds));
		copy = crafted(data, (size_t)n, fds, 3);
		t_send_fd(link[1], copy);
		_exit(0);
	}
	forged = t_recv_fd(link[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	expect_not_uintr(forged);
	CHECK(close(link[0]) == 0);
	CHECK(close(link[1]) == 0);
}

static void *second_sender(void *arg)
{
	int d;

	(void)arg;
	/* Its own table: index 0 again, through the same fds. */
	CHECK_EQ(uintr_register_sender(rx_a.fd[1], 0), 0);
	CHECK_ERR(uintr_register_sender(rx_a.fd[1], 0), EISCONN);
	d = dup(rx_a.fd[1]);
	CHECK(d >= 0);
	CHECK_ERR(uintr_register_sender(d, 0), EISCONN);
	CHECK(close(d) == 0);
	CHECK_EQ(uintr_register_sender(rx_a.fd[0], 0), 1);
	CHECK_EQ(te_state().uitt_size, 256);
	return NULL;
}

static void *fresh_sender_shutdown(void *arg)
{
	int fd = *(int *)arg;

	CHECK_ERR(uintr_register_sender(fd, 0), ESHUTDOWN);
	CHECK_ERR(uintr_register_sender(fd, 0), ESHUTDOWN);
	te_check_state_zero();
	/* Nothing consumed: the first success gets 0. */
	CHECK_EQ(uintr_register_sender(rx_a.fd[5], 0), 0);
	return NULL;
}

/* 257 registrations in one thread: 5 receivers x 52 vectors. */
#define NRX 5
#define PER_RX 52
static struct te_rx rx_many[NRX];

static void *fill_uitt(void *arg)
{
	int i, fd;

	(void)arg;
	for (i = 0; i < UINTR_UITT_ENTRIES; i++) {
		fd = rx_many[i / PER_RX].fd[i % PER_RX];
		CHECK_EQ(uintr_register_sender(fd, 0), i);
	}
	fd = rx_many[256 / PER_RX].fd[256 % PER_RX];
	CHECK_ERR(uintr_register_sender(fd, 0), ENOSPC);
	CHECK_ERR(uintr_register_sender(fd, 0), ENOSPC);
	CHECK_ERR(uintr_register_sender(rx_many[4].fd[51], 0), ENOSPC);
	/* Already connected is still reported as such. */
	CHECK_ERR(uintr_register_sender(rx_many[0].fd[0], 0), EISCONN);
	CHECK_EQ(te_state().uitt_size, 256);
	/* Free index 100 (receiver 1, vector 48): the 257th fd gets 100. */
	CHECK_EQ(uintr_unregister_sender(rx_many[100 / PER_RX].fd[100 % PER_RX], 0), 0);
	CHECK_EQ(uintr_register_sender(fd, 0), 100);
	CHECK_ERR(uintr_register_sender(rx_many[4].fd[51], 0), ENOSPC);
	/* Free 0 and 255: lowest first. */
	CHECK_EQ(uintr_unregister_sender(rx_many[255 / PER_RX].fd[255 % PER_RX], 0), 0);
	CHECK_EQ(uintr_unregister_sender(rx_many[0].fd[0], 0), 0);
	CHECK_EQ(uintr_register_sender(rx_many[4].fd[51], 0), 0);
	CHECK_EQ(uintr_register_sender(rx_many[4].fd[50], 0), 255);
	CHECK_ERR(uintr_register_sender(rx_many[0].fd[0], 0), ENOSPC);
	return NULL;
}

static void uitt_full(void)
{
	int i;

	for (i = 0; i < NRX; i++)
		te_rx_start(&rx_many[i], 0, PER_RX);
	te_in_thread(fill_uitt, NULL);
	for (i = 0; i < NRX; i++)
		te_rx_stop(&rx_many[i]);
}

int main(void)
{
	struct te_rx rx_b, rx_c, rx_d;
	int fd, d, num, dead;

	te_need_fds(1024);
	te_rx_start(&rx_a, 0, 8);
	genuine_len = recv(rx_a.fd[0], genuine, sizeof(genuine), MSG_PEEK | MSG_DONTWAIT);
	CHECK(genuine_len > 8 && genuine_len < (ssize_t)sizeof(genuine) - 1);

	/* flags first, whatever the fd. */
	CHECK_ERR(uintr_register_sender(rx_a.fd[0], 1), EINVAL);
	CHECK_ERR(uintr_register_sender(rx_a.fd[0], 0x80000000u), EINVAL);
	CHECK_ERR(uintr_register_sender(-1, 1), EINVAL);
	CHECK_ERR(uintr_register_sender(0, ~0u), EINVAL);

	/* EBADF: -1, a closed fd, numbers beyond the table. */
	CHECK_ERR(uintr_register_sender(-1, 0), EBADF);
	CHECK_ERR(uintr_register_sender(-1000, 0), EBADF);
	dead = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(dead >= 0);
	CHECK(close(dead) == 0);
	CHECK_ERR(uintr_register_sender(dead, 0), EBADF);
	CHECK_ERR(uintr_register_sender(100000, 0), EBADF);
	CHECK_ERR(uintr_register_sender(0x7fffffff, 0), EBADF);

	/* Not a uintr_fd, before this thread has any UITT entry. */
	not_uintr_fds();
	forged_by_other_process();
	te_check_state_zero();

	/* The first success gets index 0; then failures again. */
	CHECK_EQ(uintr_register_sender(rx_a.fd[0], 0), 0);
	not_uintr_fds();
	CHECK_ERR(uintr_register_sender(-1, 0), EBADF);
	CHECK_ERR(uintr_register_sender(rx_a.fd[1], 3), EINVAL);
	CHECK_EQ(uintr_register_sender(rx_a.fd[1], 0), 1);

	/* EISCONN: same fd, a dup, an fd passed through SCM_RIGHTS. */
	CHECK_ERR(uintr_register_sender(rx_a.fd[0], 0), EISCONN);
	CHECK_ERR(uintr_register_sender(rx_a.fd[1], 0), EISCONN);
	d = dup(rx_a.fd[0]);
	CHECK(d >= 0);
	CHECK_ERR(uintr_register_sender(d, 0), EISCONN);
	CHECK(close(d) == 0);
	{
		int link[2], passed;

		CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link) == 0);
		t_send_fd(link[0], rx_a.fd[1]);
		passed = t_recv_fd(link[1]);
		CHECK(passed != rx_a.fd[1]);
		CHECK_ERR(uintr_register_sender(passed, 0), EISCONN);
		CHECK(close(passed) == 0);
		CHECK(close(link[0]) == 0);
		CHECK(close(link[1]) == 0);
	}
	CHECK_EQ(uintr_register_sender(rx_a.fd[2], 0), 2);

	/* Another thread, same fds: its own indices from 0. */
	te_in_thread(second_sender, NULL);
	CHECK_ERR(uintr_register_sender(rx_a.fd[0], 0), EISCONN);

	/* A recycled fd number: the uintr_fd is closed and a regular file
	 * takes its number. */
	num = rx_a.fd[7];
	CHECK(close(num) == 0);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd != num) {
		CHECK(dup2(fd, num) == num);
		CHECK(close(fd) == 0);
	}
	CHECK_ERR(uintr_register_sender(num, 0), EOPNOTSUPP);
	CHECK_ERR(uintr_unregister_sender(num, 0), EOPNOTSUPP);
	CHECK(close(num) == 0);
	CHECK_ERR(uintr_register_sender(num, 0), EBADF);
	rx_a.fd[7] = -1;

	/* ESHUTDOWN after the receiver unregistered: for a sender already
	 * connected to it and for a fresh one. */
	te_rx_start(&rx_b, 10, 4);
	CHECK_EQ(uintr_register_sender(rx_b.fd[0], 0), 3);
	te_rx_unregister(&rx_b);
	CHECK_ERR(uintr_register_sender(rx_b.fd[1], 0), ESHUTDOWN);
	CHECK_ERR(uintr_register_sender(rx_b.fd[2], 0), ESHUTDOWN);
	d = dup(rx_b.fd[3]);
	CHECK(d >= 0);
	CHECK_ERR(uintr_register_sender(d, 0), ESHUTDOWN);
	CHECK(close(d) == 0);
	te_in_thread(fresh_sender_shutdown, &rx_b.fd[1]);
	CHECK_EQ(uintr_register_sender(rx_a.fd[3], 0), 4);

	/* ESHUTDOWN after the receiver thread exited (joined): fresh
	 * sender, and a sender already connected to it. */
	te_rx_start(&rx_c, 20, 3);
	te_rx_stop(&rx_c);
	CHECK_ERR(uintr_register_sender(rx_c.fd[0], 0), ESHUTDOWN);
	te_in_thread(fresh_sender_shutdown, &rx_c.fd[1]);
	te_rx_start(&rx_d, 30, 2);
	CHECK_EQ(uintr_register_sender(rx_d.fd[0], 0), 5);
	te_rx_stop(&rx_d);
	CHECK_ERR(uintr_register_sender(rx_d.fd[1], 0), ESHUTDOWN);
	CHECK_EQ(uintr_register_sender(rx_a.fd[4], 0), 6);

	/* The UITT holds 256 entries; the 257th is ENOSPC. */
	uitt_full();

	CHECK_EQ(te_total, 0);
	te_rx_stop(&rx_a);
	return T_PASS;
}
