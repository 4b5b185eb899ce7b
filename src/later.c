/*
 * The later ABI: the syscalls of Intel's later kernel branch
 * (uintr-linux-kernel, reference 3), as uintr_later_* calls.  A thin
 * personality: each call checks and translates its arguments and errnos
 * in the branch's order, then runs the one engine (receiver.c, vector_fd.c,
 * sender.c, wait.c).  What the branch changes against the RFC (section 2):
 *
 *   register_handler   flags may be UINTR_HANDLER_FLAG_WAITING_* (0x1000,
 *                      0x2000, 0x3000); accepted, see uintr_later_register_handler(3)
 *   vector_fd          replaces create_fd: a vector stays registered for
 *                      good, may be registered again (no EBUSY), and closing
 *                      its fds unregisters neither the vector nor its senders
 *   register_sender    one sender table per process (not per thread): the
 *                      index is valid in every thread; no EISCONN (the same
 *                      fd twice gives two indexes)
 *   unregister_sender  takes the index, not the fd; EINVAL if it holds none
 *   wait               a timeout in microseconds: 0 when it passes, EINVAL
 *                      above 10^9 or for flags, 0 at once for usec 0
 *   register_self      (new) an index to the caller's own vector
 *   alt_stack          (new) the handler's stack
 *   ipi_fd             (new) the sender table as an fd; ioctl
 *                      UIPI_SET_TARGET_TABLE adopts it in another process
 *
 * The branch returns ENOSYS where the CPU lacks UINTR; the engine never
 * lacks it, so no call here returns ENOSYS.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uintr-int.h"

/* "For now, use a max value of 1000 seconds" (3: uintr_wait). */
#define UINTR__LATER_WAIT_MAX_USEC 1000000000ull

UINTR__EXPORT int uintr_later_register_handler(uintr_handler_t handler, unsigned int flags)
{
	if (flags & ~UINTR_HANDLER_FLAG_WAITING_ANY)
		return uintr__fail(EINVAL);
	if (!handler)
		return uintr__fail(EFAULT);
	/* The waiting flags choose who pays for waking a receiver blocked in
	 * the kernel (6.4); here a blocked receiver is always woken by the
	 * notification (uintr(7)), whoever pays. */
	return uintr_register_handler(handler, 0);
}

UINTR__EXPORT int uintr_later_unregister_handler(unsigned int flags)
{
	return uintr_unregister_handler(flags);
}

UINTR__EXPORT int uintr_later_vector_fd(unsigned long long vector, unsigned int flags)
{
	if (flags != 0 || !uintr__self.receiver)
		return uintr__fail(EINVAL);
	if (vector >= UINTR_MAX_VECTORS)
		return uintr__fail(ENOSPC);
	return uintr__vector_keep((unsigned int)vector, 1);
}

/* Add an entry to the process's table; memfds consumed. */
static int uintr__later_add(const struct uintr__fd_header *h, int memfds[3])
{
	struct uintr__uitt *u;
	int ret;

	uintr__lock();
	u = uintr__shared_uitt();
	if (u) {
		ret = uintr__uitt_add(u, h, memfds, 0);
	} else {
		close(memfds[0]);
		close(memfds[1]);
		if (memfds[2] >= 0)
			close(memfds[2]);
		ret = -1;
	}
	uintr__unlock();
	return ret;
}

UINTR__EXPORT int uintr_later_register_sender(int uvec_fd, unsigned int flags)
{
	struct uintr__fd_header h;
	int memfds[3];

	if (flags != 0)
		return uintr__fail(EINVAL);
	if (uintr__read_fd_header(uvec_fd, &h, memfds) != 0)
		return -1;
	return uintr__later_add(&h, memfds);
}

UINTR__EXPORT int uintr_later_unregister_sender(int uipi_index, unsigned int flags)
{
	int ret;

	if (flags != 0)
		return uintr__fail(EINVAL);
	uintr__lock();
	ret = uipi_index < 0 ? uintr__fail(EINVAL)
			     : uintr__uitt_remove(atomic_load(&uintr__process_uitt),
						  (unsigned long long)uipi_index);
	uintr__unlock();
	return ret;
}

UINTR__EXPORT int uintr_later_wait(unsigned long long usec, unsigned int flags)
{
	struct uintr__frame_call call = {0};
	struct uintr__receiver *r;
	int ret;

	if (flags != 0 || usec > UINTR__LATER_WAIT_MAX_USEC)
		return uintr__fail(EINVAL);
	if (usec == 0)
		return 0;
	r = uintr__enter();
	if (!r) {
		uintr__leave();
		return uintr__fail(EOPNOTSUPP);
	}
	/* The RFC's rule for what ends it (2.6), with a deadline. */
	ret = uintr__wait(r, 0, usec * 1000ull, __builtin_return_address(0),
			  __builtin_frame_address(0), &call);
	uintr__leave();
	uintr__frame_call_run(&call);
	if (ret != 0)
		errno = EINTR;
	return ret;
}

UINTR__EXPORT int uintr_later_register_self(unsigned long long vector, unsigned int flags)
{
	struct uintr__fd_header h;
	struct uintr__receiver *r;
	int memfds[3];
	sigset_t old;

	if (flags != 0 || !uintr__self.receiver)
		return uintr__fail(EINVAL);
	if (vector >= UINTR_MAX_VECTORS)
		return uintr__fail(ENOSPC);
	if (uintr__vector_keep((unsigned int)vector, 0) != 0)
		return -1;
	/* Our own receiver as a sender sees it through a uintr fd. */
	uintr__block_signal(&old);
	r = uintr__self.receiver;
	if (!r) {
		uintr__restore_signal(&old);
		return uintr__fail(EINVAL);
	}
	memset(&h, 0, sizeof(h));
	h.magic = UINTR__FD_MAGIC;
	h.token = r->token;
	h.vector = (uint32_t)vector;
	h.gen = atomic_load(&r->info->vector_gen[vector]);
	h.tgid = r->info->tgid;
	h.tid = r->tid;
	memfds[0] = fcntl(r->upid_memfd, F_DUPFD_CLOEXEC, 0);
	memfds[1] = fcntl(r->info_memfd, F_DUPFD_CLOEXEC, 0);
	memfds[2] = -1; /* our own event loop, if any, is woken by our own post */
	uintr__restore_signal(&old);
	if (memfds[0] < 0 || memfds[1] < 0) {
		int err = errno;

		if (memfds[0] >= 0)
			close(memfds[0]);
		if (memfds[1] >= 0)
			close(memfds[1]);
		return uintr__fail(err == EMFILE || err == ENFILE ? err : ENOMEM);
	}
	return uintr__later_add(&h, memfds);
}

/*
 * UISTACKADJUST := top | 1: the hardware then loads RSP := top & ~15
 * (5.3).  The branch writes sp | 1 and ignores size, but its selftest
 * passes the lowest address of a malloc'ed block and expects the handler
 * to run inside [sp, sp + size): so the top is sp + size (reference 3).
 */
UINTR__EXPORT int uintr_later_alt_stack(void *sp, size_t size, unsigned int flags)
{
	struct uintr__receiver *r;

	if (flags != 0)
		return uintr__fail(EINVAL);
	r = uintr__self.receiver;
	if (!r)
		return uintr__fail(EOPNOTSUPP);
	r->stack_adjust = sp ? ((uint64_t)(uintptr_t)sp + size) | 1 : UINTR__DEFAULT_STACK_ADJUST;
	return 0;
}

UINTR__EXPORT int uintr_later_ipi_fd(unsigned int flags)
{
	struct uintr__uitt *u;
	int sv[2], ret = -1;

	if (flags != 0)
		return uintr__fail(EINVAL);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0)
		return uintr__fail(errno == EMFILE || errno == ENFILE ? errno : ENOMEM);
	uintr__lock();
	u = uintr__shared_uitt();
	if (u)
		ret = uintr__uitt_export(u, sv[0]);
	uintr__unlock();
	close(sv[0]);
	if (ret != 0) {
		int err = errno;

		close(sv[1]);
		return uintr__fail(err);
	}
	return sv[1];
}

/*
 * The branch's ioctls.  On a uipi fd: UIPI_SET_TARGET_TABLE makes its
 * table this process's (EBUSY if the process has a sender table already);
 * any other request is EINVAL (UIPI_CLEAR_TARGET_TABLE too: the branch
 * compiles it out).  The uvec fd has no ioctl in the branch (UINTR_IS_ACTIVE,
 * UINTR_DISABLE and UINTR_NOTIFY are only defined): ENOTTY, as for any
 * other fd.
 */
UINTR__EXPORT int uintr_later_ioctl(int fd, unsigned long request)
{
	struct uintr__uitt *u;
	int ret;

	if (!uintr__is_uitt_fd(fd))
		return -1; /* EBADF, ENOTTY */
	if (request != UIPI_SET_TARGET_TABLE)
		return uintr__fail(EINVAL);
	uintr__lock();
	if (atomic_load(&uintr__process_uitt) ||
	    atomic_load(&uintr__sender_kind) == UINTR__SENDERS_THREAD) {
		uintr__unlock();
		return uintr__fail(EBUSY);
	}
	u = uintr__shared_uitt();
	ret = u ? uintr__uitt_import(u, fd) : -1;
	uintr__unlock();
	return ret;
}
