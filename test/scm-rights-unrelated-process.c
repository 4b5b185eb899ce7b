/*
 * Issue item 6, reference 2.3 ("passable via SCM_RIGHTS ... any holder may
 * become a sender"): a process that shares nothing with the receiver but
 * what it is given (a new program image started with posix_spawn, so no
 * inherited library state; the uintr_fds are close-on-exec anyway) gets
 * three uintr_fds (vectors 2, 30, 61) in one SCM_RIGHTS message, registers
 * as a sender through each (UITT indexes 0, 1, 2 in that order) and sends
 * each vector N times, one at a time, waiting for every delivery (the
 * receiver's counters are in a memfd passed by fd number).  Each send is
 * delivered exactly once, with the vector of the fd it went through, on the
 * receiver thread; nothing else is delivered.
 */
#include "helpers-lifetime.h"

#define N 1000
#define NVEC 3
static const unsigned int vectors[NVEC] = { 2, 30, 61 };
#define STOP_VECTOR 0

/* 0 if the peer is gone. */
static int send_fds(int sock, const int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(NVEC * sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte = 'V';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1;
}

static void recv_fds(int sock, int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(NVEC * sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;

	CHECK(recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) == 1);
	CHECK(!(msg.msg_flags & MSG_CTRUNC));
	c = CMSG_FIRSTHDR(&msg);
	CHECK(c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS);
	CHECK_EQ(c->cmsg_len, CMSG_LEN(n * sizeof(int)));
	memcpy(fds, CMSG_DATA(c), n * sizeof(int));
}

/* The spawned sender program. */
static int sender(int sock, int counts_fd)
{
	int fds[NVEC], idx[NVEC], i, n;
	char done = 'D';

	lt_c = lt_counts_map(counts_fd);
	recv_fds(sock, fds, NVEC);
	for (i = 0; i < NVEC; i++) {
		idx[i] = uintr_register_sender(fds[i], 0);
		CHECK_EQ(idx[i], i);
	}
	for (i = 0; i < NVEC; i++) {
		for (n = 1; n <= N; n++) {
			unsigned long long total = atomic_load(&lt_c->total);

			uintr_senduipi((unsigned long long)idx[i]);
			/* The handler counts total, then count[v]: wait on the
			 * last one it writes. */
			WAIT_UNTIL(lt_count(vectors[i]) == (unsigned long long)n);
			CHECK_EQ(atomic_load(&lt_c->total), total + 1);
		}
	}
	CHECK(write(sock, &done, 1) == 1);
	return T_PASS;
}

int main(int argc, char **argv)
{
	unsigned int rx_vec[NVEC + 1];
	char sock_arg[16], counts_arg[16];
	char *args[] = { NULL, "--sender", sock_arg, counts_arg, NULL };
	struct lt_rx rx;
	int sv[2], counts_fd, status, i, stop_idx, r;
	unsigned int v;
	char done = 0;
	pid_t pid;

	if (argc == 4 && strcmp(argv[1], "--sender") == 0)
		return sender(atoi(argv[2]), atoi(argv[3]));

	counts_fd = lt_counts_init_memfd();
	for (i = 0; i < NVEC; i++)
		rx_vec[i] = vectors[i];
	rx_vec[NVEC] = STOP_VECTOR;
	lt_rx_start(&rx, NVEC + 1, rx_vec);

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(fcntl(sv[1], F_SETFD, 0) == 0);
	snprintf(sock_arg, sizeof(sock_arg), "%d", sv[1]);
	snprintf(counts_arg, sizeof(counts_arg), "%d", counts_fd);
	r = lt_spawn_self(args, &pid);
	if (r == ENOEXEC || r == ENOENT) {
		printf("skip: cannot start a new program image here\n");
		return T_SKIP;
	}
	CHECK_EQ(r, 0);
	CHECK(close(sv[1]) == 0);
	CHECK(close(counts_fd) == 0);

	/* If the program did not start, the socket is reset or at EOF. */
	if (!send_fds(sv[0], rx.fd, NVEC) || read(sv[0], &done, 1) != 1) {
		CHECK(waitpid(pid, &status, 0) == pid);
		lt_skip_if_not_executed(status);
		fprintf(stderr, "sender program: status 0x%x\n", status);
		return T_FAIL;
	}
	CHECK_EQ(done, 'D');
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	for (v = 0; v < UINTR_MAX_VECTORS; v++) {
		unsigned long long want = (v == 2 || v == 30 || v == 61) ? N : 0;

		CHECK_EQ(lt_count(v), want);
	}
	CHECK_EQ(atomic_load(&lt_c->total), NVEC * N);
	CHECK_EQ(atomic_load(&lt_c->wrong_thread), 0);
	CHECK_EQ(atomic_load(&lt_c->bad_vector), 0);

	stop_idx = uintr_register_sender(rx.fd[NVEC], 0);
	CHECK(stop_idx >= 0);
	lt_rx_stop(&rx, stop_idx);
	CHECK_EQ(lt_count(STOP_VECTOR), 1);
	return T_PASS;
}
