/*
 * Vector fds: uintr_create_fd and the release of a uintr_fd (reference 2.3).
 *
 * A uintr_fd is one end of an AF_UNIX SOCK_SEQPACKET pair; the receiver
 * keeps the other ("vector end").  The uintr_fd's receive queue holds one
 * header message: the receiver's identity, the vector, the generation of
 * this incarnation of the vector, and (SCM_RIGHTS) the UPID and info
 * memfds and the receiver's eventfd (loop.c).  Any holder of the fd, in any process, peeks it to register as a
 * sender (sender.c): holding the fd is the only credential.
 *
 * Release: when the last reference to the uintr_fd is closed, in every
 * process, the kernel marks the vector end hung up and, because the end is
 * O_ASYNC with F_SETSIG/F_SETOWN_EX, sends our signal with POLL_HUP to the
 * receiver thread.  That is the RFC's uintrfd_release + receiver_clear_uvec
 * task_work: senders connected through the fd are disconnected (their UITT
 * entries turn invalid: the vector's generation changes), the vector's PIR
 * bit is cleared, an interrupt already in UIRR is left to be delivered, and
 * the vector may be created again.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uintr-int.h"

/* Async-signal-safe: runs from the notification signal handler. */
void uintr__vector_release(struct uintr__receiver *r, unsigned int vector)
{
	uint64_t bit = 1ull << vector;

	if (!(atomic_load(&r->vector_mask) & bit) || (atomic_load(&r->released) & bit))
		return;
	atomic_fetch_add(&r->info->vector_gen[vector], 1);
	atomic_fetch_and(&r->upid->pir, ~bit);
	atomic_fetch_and(&r->info->registered, ~bit);
	atomic_fetch_or(&r->released, bit);
	atomic_fetch_and(&r->vector_mask, ~bit);
}

static int uintr__end_hung_up(int end_fd)
{
	struct pollfd p = { .fd = end_fd, .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/*
 * Orphaned vector ends: the fds of a receiver that unregistered or exited
 * stay deactivated (2.2), but their release must still disconnect their
 * senders (2.3).  So the ends live on here, owned by the process (any
 * thread takes the kernel's notice), with the receiver's info page.  The
 * signal handler only bumps the generation and marks the slot; slow paths
 * close the end and unmap the page, under uintr__lock.
 */
#define UINTR__MAX_ORPHANS 1024
struct uintr__orphan {
	_Atomic int end_fd;        /* -1: free */
	_Atomic int released;
	struct uintr__info *info;
	unsigned int vector;
};
static struct uintr__orphan uintr__orphans[UINTR__MAX_ORPHANS];
static _Atomic int uintr__orphans_init;

static void uintr__orphans_setup(void)
{
	unsigned int i;

	if (atomic_load(&uintr__orphans_init))
		return;
	for (i = 0; i < UINTR__MAX_ORPHANS; i++)
		atomic_store(&uintr__orphans[i].end_fd, -1);
	atomic_store(&uintr__orphans_init, 1);
}

/* Under uintr__lock: close released orphans, unmap pages nobody uses. */
static void uintr__orphans_reap(void)
{
	unsigned int i, j;

	for (i = 0; i < UINTR__MAX_ORPHANS; i++) {
		struct uintr__orphan *o = &uintr__orphans[i];
		struct uintr__info *info = o->info;
		int fd = atomic_load(&o->end_fd), shared = 0;

		if (fd < 0 || !atomic_load(&o->released))
			continue;
		atomic_store(&o->end_fd, -1);
		close(fd);
		for (j = 0; j < UINTR__MAX_ORPHANS; j++)
			if (atomic_load(&uintr__orphans[j].end_fd) >= 0 && uintr__orphans[j].info == info)
				shared = 1;
		if (!shared)
			munmap(info, 4096);
	}
}

/*
 * Receiver detach (2.2, 2.7): keep each live vector end as an orphan, its
 * kernel notice now going to the whole process.  Returns 1 if the info page
 * was handed over (the caller must not unmap it).
 */
int uintr__vector_orphan_ends(struct uintr__receiver *r)
{
	struct f_owner_ex owner = { .type = F_OWNER_PID, .pid = getpid() };
	unsigned int v, i = 0;
	int handed = 0;

	uintr__lock();
	uintr__orphans_setup();
	uintr__orphans_reap();
	for (v = 0; v < UINTR_MAX_VECTORS; v++) {
		int fd = r->vector_end[v];

		if (fd < 0)
			continue;
		r->vector_end[v] = -1;
		if (atomic_load(&r->released) & (1ull << v) || uintr__end_hung_up(fd)) {
			/* Released already: disconnect its senders now. */
			atomic_fetch_add(&r->info->vector_gen[v], 1);
			close(fd);
			continue;
		}
		while (i < UINTR__MAX_ORPHANS && atomic_load(&uintr__orphans[i].end_fd) >= 0)
			i++;
		if (i == UINTR__MAX_ORPHANS || fcntl(fd, F_SETOWN_EX, &owner) != 0) {
			close(fd); /* table full: its senders stay harmless */
			continue;
		}
		uintr__orphans[i].info = r->info;
		uintr__orphans[i].vector = v;
		atomic_store(&uintr__orphans[i].released, 0);
		atomic_store(&uintr__orphans[i].end_fd, fd);
		handed = 1;
	}
	uintr__unlock();
	return handed;
}

/* fork child: the parent's orphans are not ours. */
void uintr__vector_orphans_forget(void)
{
	unsigned int i;

	if (!atomic_load(&uintr__orphans_init))
		return;
	for (i = 0; i < UINTR__MAX_ORPHANS; i++) {
		int fd = atomic_exchange(&uintr__orphans[i].end_fd, -1);

		if (fd >= 0)
			close(fd);
	}
}

/* Slow paths tidy up released orphans. */
void uintr__vector_orphans_reap(void)
{
	if (!atomic_load(&uintr__orphans_init))
		return;
	uintr__lock();
	uintr__orphans_reap();
	uintr__unlock();
}

/* The kernel's SIGIO-style notice that a vector end's peer was released
 * (async-signal-safe).  False if end_fd is none of ours. */
int uintr__handle_release_signal(int end_fd)
{
	struct uintr__receiver *r = uintr__self.receiver;
	unsigned int v, i;

	for (v = 0; r && v < UINTR_MAX_VECTORS; v++) {
		if (r->vector_end[v] == end_fd) {
			if (uintr__end_hung_up(end_fd))
				uintr__vector_release(r, v);
			return 1;
		}
	}
	if (!atomic_load(&uintr__orphans_init))
		return 0;
	for (i = 0; i < UINTR__MAX_ORPHANS; i++) {
		struct uintr__orphan *o = &uintr__orphans[i];

		if (atomic_load(&o->end_fd) == end_fd) {
			if (!atomic_load(&o->released) && uintr__end_hung_up(end_fd)) {
				atomic_fetch_add(&o->info->vector_gen[o->vector], 1);
				atomic_store(&o->released, 1);
			}
			return 1;
		}
	}
	return 0;
}

/* Close the ends of released vectors (slow paths, our signal blocked). */
void uintr__close_released(struct uintr__receiver *r)
{
	uint64_t released = atomic_exchange(&r->released, 0);

	while (released) {
		unsigned int v = (unsigned int)__builtin_ctzll(released);

		released &= released - 1;
		if (r->vector_end[v] >= 0)
			close(r->vector_end[v]);
		r->vector_end[v] = -1;
	}
}

static int uintr__send_header(struct uintr__receiver *r, int end_fd, unsigned int vector)
{
	struct uintr__fd_header h;
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *c;
	int fds[3] = { r->upid_memfd, r->info_memfd, r->loop_efd };

	memset(&h, 0, sizeof(h));
	h.magic = UINTR__FD_MAGIC;
	h.token = r->token;
	h.vector = vector;
	h.gen = atomic_load(&r->info->vector_gen[vector]);
	h.tgid = r->info->tgid;
	h.tid = r->tid;
	memset(&control, 0, sizeof(control));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	return sendmsg(end_fd, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(h) ? 0 : -1;
}

/* Ask the kernel to tell this receiver thread when the peer is released. */
static int uintr__watch_release(struct uintr__receiver *r, int end_fd)
{
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = r->tid };
	int fl;

	if (fcntl(end_fd, F_SETOWN_EX, &owner) != 0 || fcntl(end_fd, F_SETSIG, uintr__signo) != 0)
		return -1;
	fl = fcntl(end_fd, F_GETFL);
	if (fl < 0 || fcntl(end_fd, F_SETFL, fl | O_ASYNC) != 0)
		return -1;
	return 0;
}

UINTR__EXPORT int uintr_create_fd(unsigned long long vector, unsigned int flags)
{
	struct uintr__receiver *r;
	uint64_t bit;
	sigset_t old;
	int sv[2], err;

	if (flags != 0 || !uintr__self.receiver)
		return uintr__fail(EINVAL);
	if (vector >= UINTR_MAX_VECTORS)
		return uintr__fail(ENOSPC);
	bit = 1ull << vector;

	uintr__block_signal(&old);
	/* Read only now: a handler may have unregistered it meanwhile. */
	r = uintr__self.receiver;
	if (!r) {
		uintr__restore_signal(&old);
		return uintr__fail(EINVAL);
	}
	/* A release whose notice has not arrived yet (our signal blocked, or
	 * still in flight) must not make the vector look busy. */
	if ((atomic_load(&r->vector_mask) & bit) && uintr__end_hung_up(r->vector_end[vector]))
		uintr__vector_release(r, (unsigned int)vector);
	uintr__close_released(r);
	if (atomic_load(&r->vector_mask) & bit) {
		uintr__restore_signal(&old);
		return uintr__fail(EBUSY);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) {
		err = errno;
		goto out;
	}
	if (uintr__send_header(r, sv[0], (unsigned int)vector) != 0 ||
	    uintr__watch_release(r, sv[0]) != 0) {
		err = errno == EMFILE || errno == ENFILE ? errno : ENOMEM;
		close(sv[0]);
		close(sv[1]);
		goto out;
	}
	r->vector_end[vector] = sv[0];
	atomic_fetch_or(&r->vector_mask, bit);
	atomic_fetch_or(&r->info->registered, bit);
	uintr__restore_signal(&old);
	return sv[1];
out:
	uintr__restore_signal(&old);
	return uintr__fail(err);
}

/*
 * A vector as the later branch keeps it (reference 3): "once registered
 * always stay registered", so it is set in the receiver's mask for good
 * and nothing watches for a release; registering it again is allowed.
 * With `want_fd`, a new uintr_fd for it (the later uvec_fd), whose close
 * releases nothing: our end of the pair is closed at once, the header
 * stays queued in the fd.  Returns 0 or the fd; -1 with errno (EINVAL: no
 * receiver; ENOMEM, EMFILE, ENFILE).  The caller checked the vector.
 */
int uintr__vector_keep(unsigned int vector, int want_fd)
{
	struct uintr__receiver *r;
	uint64_t bit = 1ull << vector;
	sigset_t old;
	int sv[2], err = 0;

	uintr__block_signal(&old);
	r = uintr__self.receiver;
	if (!r) {
		uintr__restore_signal(&old);
		return uintr__fail(EINVAL);
	}
	if (want_fd) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) {
			err = errno == EMFILE || errno == ENFILE ? errno : ENOMEM;
		} else if (uintr__send_header(r, sv[0], vector) != 0) {
			err = errno == EMFILE || errno == ENFILE ? errno : ENOMEM;
			close(sv[0]);
			close(sv[1]);
		}
		if (err) {
			uintr__restore_signal(&old);
			return uintr__fail(err);
		}
		close(sv[0]);
	}
	atomic_fetch_or(&r->vector_mask, bit);
	atomic_fetch_or(&r->info->registered, bit);
	uintr__restore_signal(&old);
	return want_fd ? sv[1] : 0;
}

/*
 * Read a uintr_fd's header without consuming it.  EBADF for a bad fd,
 * EOPNOTSUPP for anything that is not a uintr_fd made by the process that
 * created the socket pair (SO_PEERCRED cannot be forged).  On success
 * out[0], out[1] hold fresh fds of the UPID and info pages and out[2] one
 * of the receiver's eventfd, or -1 (a header without it: the sender then
 * notifies the event-loop state by the signal).
 */
int uintr__read_fd_header(int fd, struct uintr__fd_header *h, int out[3])
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} control;
	char data[sizeof(*h) + 1];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct ucred cred;
	socklen_t len;
	struct cmsghdr *c;
	struct stat st;
	int type = 0, domain = 0, nfds = 0, fds[4], i;
	ssize_t n;

	if (fstat(fd, &st) != 0)
		return uintr__fail(EBADF);
	if (!S_ISSOCK(st.st_mode))
		return uintr__fail(EOPNOTSUPP);
	len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET)
		return uintr__fail(EOPNOTSUPP);
	len = sizeof(domain);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX)
		return uintr__fail(EOPNOTSUPP);
	len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return uintr__fail(EOPNOTSUPP);

	memset(&control, 0, sizeof(control));
	n = recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return uintr__fail(errno == EMFILE || errno == ENFILE ? errno : EOPNOTSUPP);
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (i = 0; i < k && nfds < 4; i++)
				memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		}
	}
	memcpy(h, data, sizeof(*h));
	/* With no free fd slot the kernel truncates SCM_RIGHTS, not recvmsg. */
	if (n == (ssize_t)sizeof(*h) && (msg.msg_flags & MSG_CTRUNC) && nfds < 3 &&
	    h->magic == UINTR__FD_MAGIC) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return uintr__fail(EMFILE);
	}
	if (n != (ssize_t)sizeof(*h) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    nfds < 2 || nfds > 3 ||
	    h->magic != UINTR__FD_MAGIC || h->vector >= UINTR_MAX_VECTORS ||
	    (h->token & UINTR__TOKEN_MASK) != UINTR__TOKEN_TAG || cred.pid != h->tgid) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return uintr__fail(EOPNOTSUPP);
	}
	out[0] = fds[0];
	out[1] = fds[1];
	out[2] = -1;
	/* A third fd that is not a non-blocking eventfd is not used: a post
	 * must never block, nor write into something else. */
	if (nfds == 3) {
		if (uintr__loop_efd_check(fds[2]))
			out[2] = fds[2];
		else
			close(fds[2]);
	}
	return 0;
}
