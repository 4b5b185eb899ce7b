/*
 * close() of a uintr_fd: the release is complete when close returns
 * (reference 2.3, 2.5).
 *
 * In the RFC the last close runs uintrfd_release in the closing thread:
 * every sender connected through the fd is unregistered, its UITT entry
 * invalid at once (#GP), and a table left empty is switched off (TT := 0)
 * before the thread returns to user space.  Intel's senduipi_instr
 * selftest (test_after_closefd) relies on it: close(fd), then SENDUIPI on
 * the index it had registered through that fd must raise SIGILL.
 *
 * The engine notices a release in its watcher thread (src/vector_fd.c),
 * which runs a few microseconds later.  So the program's close() of a
 * descriptor that this process made with uintr_create_fd or registered a
 * sender through completes, on return, every release that close caused
 * in this process: when the receiver is in the closing process (the
 * selftest, and every program whose receiver and senders are threads of
 * one process), SENDUIPI right after close() faults as in the RFC.
 * Everything else is as before: a release made by a close in another
 * process, or by dup2()/close_range()/exit, is completed by the watcher
 * (uintr-run(1), NOTES).  Other descriptors cost close() one bit test.
 *
 * A close() from a signal handler that interrupted this thread inside the
 * library's lock leaves the release to the watcher rather than deadlock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

#include "compat.h"

/* Descriptor numbers below this are tracked; above, the watcher alone. */
#define UINTR__CLOSE_TRACKED 65536

static _Atomic uint64_t uintr__vector_fd_bits[UINTR__CLOSE_TRACKED / 64];

void uintr__compat_vector_fd_seen(int fd)
{
	if (fd >= 0 && fd < UINTR__CLOSE_TRACKED)
		atomic_fetch_or(&uintr__vector_fd_bits[fd / 64], 1ull << (fd % 64));
}

/* True (and forgotten) if fd was one. */
static int uintr__vector_fd_forget(int fd)
{
	uint64_t bit;

	if (fd < 0 || fd >= UINTR__CLOSE_TRACKED)
		return 0;
	bit = 1ull << (fd % 64);
	if (!(atomic_load_explicit(&uintr__vector_fd_bits[fd / 64], memory_order_relaxed) & bit))
		return 0;
	return (atomic_fetch_and(&uintr__vector_fd_bits[fd / 64], ~bit) & bit) != 0;
}

int __close(int fd);

#ifdef UINTR_COMPAT_STATIC
static int uintr__real_close(int fd)
{
	return __close(fd);
}
#else
typedef int (*uintr__close_fn)(int);
static uintr__close_fn _Atomic uintr__next_close;

static int uintr__real_close(int fd)
{
	uintr__close_fn next = atomic_load_explicit(&uintr__next_close, memory_order_relaxed);

	if (!next) {
		next = (uintr__close_fn)dlsym(RTLD_NEXT, "close");
		if (!next)
			next = __close;
		atomic_store_explicit(&uintr__next_close, next, memory_order_relaxed);
	}
	return next(fd);
}
#endif

UINTR__EXPORT int close(int fd)
{
	int was_vector_fd = uintr__vector_fd_forget(fd);
	int ret = uintr__real_close(fd);

	/* Linux releases the descriptor even when close fails with EINTR or
	 * EIO: only EBADF means nothing was closed. */
	if (was_vector_fd && !(ret < 0 && errno == EBADF)) {
		int saved_errno = errno;

		uintr__vector_ends_settle_here();
		errno = saved_errno;
	}
	return ret;
}
