/*
 * Vector fds: uintr_create_fd and the release of a uintr_fd (reference 2.3).
 *
 * A uintr_fd is one end of an AF_UNIX SOCK_SEQPACKET pair; the receiver
 * keeps the other ("vector end").  The uintr_fd's receive queue holds one
 * header message: the receiver's identity, the vector, the generation of
 * this incarnation of the vector, and (SCM_RIGHTS) the UPID and info
 * memfds and the receiver's eventfd (loop.c).  Any holder of the fd, in
 * any process, peeks it to register as a sender (sender.c): holding the fd
 * is the only credential.  A socket is the one kind of fd that carries the
 * memfds to a holder of another user.
 *
 * What a holder can do to the socket must not reach the receiver (issue
 * 17; uintr(7), SECURITY):
 *   - The vector end is shut down for reading at creation, so a holder's
 *     write, send or sendmsg (SCM_RIGHTS included: the fd cannot be parked
 *     in our own queue, which would pin the vector) fails with EPIPE.
 *   - No O_ASYNC on the vector end: no queued signal, hence no SIGIO when
 *     RLIMIT_SIGPENDING is reached, is ever sent for it.
 *   - Release is noticed by one watcher thread per process, which waits in
 *     epoll for the vector ends to hang up.  A holder's shutdown() also
 *     hangs the end up, so the watcher checks that the uintr_fd socket is
 *     really gone before it releases (uintr__end_released).
 *
 * Release, when the last reference to the uintr_fd is closed in every
 * process: the RFC's uintrfd_release + receiver_clear_uvec.  Senders
 * connected through the fd are disconnected (their UITT entries turn
 * invalid: the vector's generation changes), the vector's PIR bit is
 * cleared, an interrupt already in UIRR is left to be delivered, and the
 * vector may be created again.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uintr-int.h"

/*
 * Every vector end of the process, live or orphaned (its receiver
 * unregistered or exited: the fd stays deactivated (2.2), but its release
 * must still disconnect its senders (2.3)).  All under uintr__lock.  The
 * watcher's epoll events carry an end's id, not its address: an end may be
 * released (and freed) by uintr_create_fd between epoll_wait and the lock.
 */
struct uintr__end {
	uint64_t id;
	int fd;                       /* our end of the pair */
	unsigned int vector;
	ino_t peer_ino;               /* the uintr_fd socket's inode */
	struct uintr__receiver *r;    /* NULL once orphaned */
	struct uintr__info *info;     /* the receiver's; owned by the ends once orphaned */
	struct uintr__end *next;
};

static struct uintr__end *uintr__ends;
static uint64_t uintr__end_ids;
static int uintr__watch_fd = -1;      /* the watcher's epoll */

/* Is the uintr_fd socket with this inode still open anywhere?  The kernel
 * lists every AF_UNIX socket of this network namespace in /proc/net/unix;
 * without it, a hang-up is taken for a release (the old rule). */
static int uintr__socket_exists(ino_t ino)
{
	char line[512];
	FILE *f = fopen("/proc/net/unix", "re");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long inode;

		/* Num RefCount Protocol Flags Type St Inode [Path] */
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %llu", &inode) == 1 &&
		    (ino_t)inode == ino)
			found = 1;
	}
	fclose(f);
	return found;
}

/*
 * Was this end's uintr_fd released, or did a holder only shut it down?
 * Both hang the end up.  On release the kernel purges the uintr_fd's
 * queue: if the header was still there, it sets ECONNRESET on our end
 * (one that nobody can forge) and our send queue empties; a header still
 * queued means the socket lives.  Only when a holder consumed the header
 * does it take a look in /proc/net/unix.
 */
static int uintr__end_released(struct uintr__end *e)
{
	struct pollfd p = { .fd = e->fd, .events = 0 };
	socklen_t len = sizeof(int);
	int err = 0, queued = 0;

	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLHUP))
		return 0;
	if (getsockopt(e->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == ECONNRESET)
		return 1;
	if (ioctl(e->fd, SIOCOUTQ, &queued) == 0 && queued > 0)
		return 0;
	return !uintr__socket_exists(e->peer_ino);
}

/* Under uintr__lock: is any other end still using this info page? */
static int uintr__info_shared(const struct uintr__info *info, const struct uintr__end *except)
{
	const struct uintr__end *e;

	for (e = uintr__ends; e; e = e->next)
		if (e != except && e->info == info)
			return 1;
	return 0;
}

/* Under uintr__lock: the release (2.3) of a released end, then forget it. */
static void uintr__end_release(struct uintr__end *e)
{
	struct uintr__end **pp;

	atomic_fetch_add(&e->info->vector_gen[e->vector], 1);
	if (e->r) {
		uint64_t bit = 1ull << e->vector;

		atomic_fetch_and(&e->r->upid->pir, ~bit);
		atomic_fetch_and(&e->info->registered, ~bit);
		atomic_fetch_and(&e->r->vector_mask, ~bit);
		e->r->vector_end[e->vector] = NULL;
	} else if (!uintr__info_shared(e->info, e)) {
		munmap(e->info, 4096);
	}
	if (uintr__watch_fd >= 0)
		epoll_ctl(uintr__watch_fd, EPOLL_CTL_DEL, e->fd, NULL);
	close(e->fd);
	for (pp = &uintr__ends; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	}
	free(e);
}

/* The watcher: its own thread, every signal blocked, so that nothing a
 * holder does to a uintr_fd is ever a signal to the program. */
static _Atomic uint32_t uintr__watch_started;

static void *uintr__watch(void *arg)
{
	struct epoll_event ev[16];

	(void)arg;
	atomic_store(&uintr__watch_started, 1);
	uintr__futex_wake(&uintr__watch_started);
	for (;;) {
		int n = epoll_wait(uintr__watch_fd, ev, 16, -1), i;

		if (n < 0 && errno != EINTR)
			return NULL;
		uintr__lock();
		for (i = 0; i < n; i++) {
			struct uintr__end *e;

			for (e = uintr__ends; e && e->id != ev[i].data.u64; e = e->next)
				;
			if (e && uintr__end_released(e))
				uintr__end_release(e);
		}
		uintr__unlock();
	}
}

/* Under uintr__lock: the epoll and its thread, once per process (again in
 * a fork child, which has neither). */
static int uintr__watch_start(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int err;

	if (uintr__watch_fd >= 0)
		return 0;
	uintr__watch_fd = epoll_create1(EPOLL_CLOEXEC);
	if (uintr__watch_fd < 0)
		return -1;
	sigfillset(&all);
	if (pthread_attr_init(&attr) != 0)
		goto fail;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&uintr__watch_started, 0);
	err = pthread_create(&t, &attr, uintr__watch, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err == 0) {
		/* Return only once the thread runs our code: a fork right after
		 * must not find it inside its start-up (a sanitizer's runtime
		 * may hold its allocator lock there, which the child inherits). */
		while (!atomic_load(&uintr__watch_started))
			uintr__futex_wait(&uintr__watch_started, 0, 1000000);
		return 0;
	}
	errno = err;
fail:
	err = errno;
	close(uintr__watch_fd);
	uintr__watch_fd = -1;
	errno = err;
	return -1;
}

/* Under uintr__lock: watch a new vector end. */
static int uintr__end_add(struct uintr__receiver *r, int end_fd, int peer_fd, unsigned int vector)
{
	struct uintr__end *e;
	struct epoll_event ev = { .events = EPOLLHUP | EPOLLET };
	struct stat st;

	if (fstat(peer_fd, &st) != 0 || uintr__watch_start() != 0)
		return -1;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -1;
	e->id = ++uintr__end_ids;
	e->fd = end_fd;
	e->vector = vector;
	e->peer_ino = st.st_ino;
	e->r = r;
	e->info = r->info;
	ev.data.u64 = e->id;
	if (epoll_ctl(uintr__watch_fd, EPOLL_CTL_ADD, end_fd, &ev) != 0) {
		free(e);
		return -1;
	}
	e->next = uintr__ends;
	uintr__ends = e;
	r->vector_end[vector] = e;
	return 0;
}

/*
 * Receiver detach (2.2, 2.7), under uintr__lock: its ends become orphans,
 * still watched.  Returns 1 if the info page was handed over to them (the
 * caller must not unmap it).
 */
int uintr__vector_orphan_ends(struct uintr__receiver *r)
{
	unsigned int v;
	int handed = 0;

	for (v = 0; v < UINTR_MAX_VECTORS; v++) {
		struct uintr__end *e = r->vector_end[v];

		if (!e)
			continue;
		if (uintr__end_released(e)) {
			uintr__end_release(e); /* its senders are disconnected now */
			continue;
		}
		e->r = NULL;
		r->vector_end[v] = NULL;
		handed = 1;
	}
	return handed;
}

/* Complete every release whose hang-up the watcher has not handled yet.
 * The tests call it where they need a release to be finished (the last
 * close returned, so the kernel has hung the end up already). */
void uintr__vector_ends_settle(void)
{
	struct uintr__end *e, *next;

	uintr__lock();
	for (e = uintr__ends; e; e = next) {
		next = e->next;
		if (uintr__end_released(e))
			uintr__end_release(e);
	}
	uintr__unlock();
}

/* The same from any context of the calling thread, a signal handler
 * included (the close() of uintr-run, src/compat/x86_64/close.c): 0 if
 * done, -1 if this thread is inside the lock already (the watcher then
 * completes the release, as before). */
int uintr__vector_ends_settle_here(void)
{
	if (uintr__lock_held_here())
		return -1;
	uintr__vector_ends_settle();
	return 0;
}

/* fork child: the parent's ends and watcher are not ours (the child's
 * copies of the uintr_fds are; it may create vectors of its own). */
void uintr__vector_ends_forget(void)
{
	struct uintr__end *e, *next;
	struct uintr__receiver *r;

	for (r = uintr__receivers; r; r = r->next)
		memset(r->vector_end, 0, sizeof(r->vector_end));
	for (e = uintr__ends; e; e = next) {
		next = e->next;
		close(e->fd);
		free(e);
	}
	uintr__ends = NULL;
	if (uintr__watch_fd >= 0)
		close(uintr__watch_fd);
	uintr__watch_fd = -1;
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

UINTR__EXPORT int uintr_create_fd(unsigned long long vector, unsigned int flags)
{
	struct uintr__receiver *r;
	uint64_t bit;
	int sv[2], err;

	if (flags != 0 || !uintr__self.receiver)
		return uintr__fail(EINVAL);
	if (vector >= UINTR_MAX_VECTORS)
		return uintr__fail(ENOSPC);
	bit = 1ull << vector;

	uintr__lock();
	/* Read only now: a handler may have unregistered it meanwhile. */
	r = uintr__self.receiver;
	if (!r) {
		uintr__unlock();
		return uintr__fail(EINVAL);
	}
	/* A release the watcher has not seen yet must not make the vector
	 * look busy. */
	if (r->vector_end[vector] && uintr__end_released(r->vector_end[vector]))
		uintr__end_release(r->vector_end[vector]);
	if (atomic_load(&r->vector_mask) & bit) {
		uintr__unlock();
		return uintr__fail(EBUSY);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) {
		err = errno;
		goto out;
	}
	if (uintr__send_header(r, sv[0], (unsigned int)vector) != 0 ||
	    shutdown(sv[0], SHUT_RD) != 0 || uintr__end_add(r, sv[0], sv[1], (unsigned int)vector) != 0) {
		err = errno == EMFILE || errno == ENFILE ? errno : ENOMEM;
		close(sv[0]);
		close(sv[1]);
		goto out;
	}
	atomic_fetch_or(&r->vector_mask, bit);
	atomic_fetch_or(&r->info->registered, bit);
	uintr__unlock();
	return sv[1];
out:
	uintr__unlock();
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

	/* A holder may have set a peek offset on the shared socket: the
	 * header is at offset 0. */
	{
		int off = -1;

		setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof(off));
	}
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
