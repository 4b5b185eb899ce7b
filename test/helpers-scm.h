/*
 * One message with `len` bytes and `nfds` file descriptors (SCM_RIGHTS),
 * for the tests and the fuzzer that pass uintr fds or forge look-alikes.
 * libc only (the fuzzer includes it without the test helpers).
 */
#ifndef UINTR_TEST_HELPERS_SCM_H
#define UINTR_TEST_HELPERS_SCM_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define T_SCM_MAX_FDS 8

/* sendmsg's result: the bytes sent, or -1 with errno. */
static inline ssize_t t_sendmsg_fds(int sock, const void *bytes, size_t len, const int *fds,
				    int nfds)
{
	union {
		char buf[CMSG_SPACE(T_SCM_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)bytes, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds < 0 || nfds > T_SCM_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	return sendmsg(sock, &msg, 0);
}

#endif
