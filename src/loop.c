/*
 * The event-loop state: uintr_loop_fd, uintr_loop_drain (a libuintr
 * extension; reference 8: tglx asked for "read() and poll() support",
 * Axboe for a way for io_uring to know "when to reap events rather than
 * sleep in the kernel").
 *
 * A receiver waiting in poll/epoll/select/io_uring sleeps in the kernel on
 * its fds, not on the UPID futex, and a signal would only interrupt the
 * sleep.  So the event-loop state is a third value of NV (0xEA) beside
 * 0xEC (running) and 0xEB (uintr_wait): a sender whose post finds ON and
 * SN clear and NV = 0xEA makes the receiver's eventfd readable (one write)
 * instead of sending the signal, then sets ON, so later posts coalesce
 * without a syscall until the loop drains.  Everything else is the one
 * post path (sender.c) and the one delivery path (delivery.c).
 *
 * The eventfd belongs to the receiver and is made at registration: every
 * uintr_fd header carries it (vector_fd.c), so a sender in any process
 * that registered through a uintr_fd holds a copy.  uintr_loop_fd() gives
 * the caller a duplicate to poll.
 *
 * uintr_loop_drain() is notification processing (5.2) for this state:
 *   1. in one step: SN := 1 (senders now post without notifying: the loop
 *      is busy), ON := 0, EPOCH += 1 (a sender that wrote the eventfd and
 *      has not set ON yet never will: its CAS fails, as after a consumed
 *      signal, sender.c);
 *   2. read the eventfd to zero: the fd is no longer readable;
 *   3. UIRR |= xchg(PIR, 0); deliver while UIF = 1 (5.3);
 *   4. SN := r->polling (0 unless the program keeps the loop busy with
 *      uintr_set_polling(1)), then look at PIR again: anything posted
 *      between 3 and 4 found SN = 1 and did not notify, so it is drained
 *      here (back to 3).  A post after 4 finds SN = 0 and notifies.  The
 *      RMW of 4 and the seq_cst PIR load against the sender's PIR RMW and
 *      status load is the store-buffering pair of uintr_wait's spin phase
 *      (model/README.md): one of the two sees the other, so nothing is
 *      lost between the last drain and the next wait, and PIR's exchange
 *      hands each post to exactly one delivery.
 * A sender slower than step 2 may still write after it: the fd is then
 * readable with nothing to drain (one spurious wake-up, never a lost one).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "uintr-int.h"

/* Is fd a non-blocking eventfd?  Senders write only into such an fd (a
 * forged header's third fd could be anything). */
int uintr__loop_efd_check(int fd)
{
	char path[32], link[32];
	ssize_t n;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || !(fl & O_NONBLOCK))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

/* The notification of the event-loop state: make the eventfd readable.
 * False only if the counter is full (EAGAIN): ON must stay clear then. */
int uintr__notify_loop(const struct uintr__target *t)
{
	uint64_t one = 1;

	return write(t->loop_efd, &one, sizeof(one)) == (ssize_t)sizeof(one) || errno != EAGAIN;
}

/* Set SN/ON as the drain's step 1 or 4 (see the top); the word of a
 * receiver that is gone is left alone, as uintr__set_status does. */
static void uintr__loop_status(struct uintr__receiver *r, int busy)
{
	uint32_t s = atomic_load(&r->upid->status), n;

	do {
		if (s & UINTR__UPID_DEAD)
			return;
		if (busy)
			n = ((s & ~(UINTR__UPID_ON | UINTR__UPID_EPOCH_MASK)) | UINTR__UPID_SN) |
			    ((s + (1u << UINTR__UPID_EPOCH_SHIFT)) & UINTR__UPID_EPOCH_MASK);
		else
			n = s & ~UINTR__UPID_SN;
	} while (!atomic_compare_exchange_weak(&r->upid->status, &s, n));
}

UINTR__EXPORT int uintr_loop_fd(unsigned int flags)
{
	struct uintr__receiver *r;
	uint32_t s, n;
	int fd;

	if (flags != 0)
		return uintr__fail(EINVAL);
	r = uintr__enter();
	if (!r) {
		uintr__leave();
		return uintr__fail(EOPNOTSUPP);
	}
	/* The drain sets and clears SN, which the instrumented state keeps
	 * set (safepoint.c): one or the other. */
	if (r->safepoints) {
		uintr__leave();
		return uintr__fail(EBUSY);
	}
	fd = fcntl(r->loop_efd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		int err = errno == EMFILE || errno == ENFILE ? errno : ENOMEM;

		uintr__leave();
		return uintr__fail(err);
	}
	if (!r->loop) {
		r->loop = 1;
		/* NV := 0xEA.  Not inside uintr_wait (a handler cannot call us
		 * there: it runs at the wait's end), so NV is 0xEC now. */
		s = atomic_load(&r->upid->status);
		do {
			if (s & UINTR__UPID_DEAD)
				break;
			n = (s & ~UINTR__UPID_NV_MASK) | UINTR__NV(UINTR__NV_LOOP);
		} while (!atomic_compare_exchange_weak(&r->upid->status, &s, n));
	}
	uintr__leave();
	return fd;
}

UINTR__EXPORT int uintr_loop_drain(unsigned int flags)
{
	struct uintr__frame_call call = {0};
	struct uintr__receiver *r;
	unsigned int delivered = 0;
	uint64_t count;

	if (flags != 0)
		return uintr__fail(EINVAL);
	r = uintr__enter();
	if (!r || !r->loop) {
		uintr__leave();
		return uintr__fail(r ? EINVAL : EOPNOTSUPP);
	}
	uintr__loop_status(r, 1);
	if (read(r->loop_efd, &count, sizeof(count)) < 0 && errno != EAGAIN) {
		/* Cannot happen to our own eventfd; go on draining. */
	}
	for (;;) {
		uintr__process_notification(r);
		if (atomic_load(&uintr__self.uif) && atomic_load(&r->info->uirr))
			delivered += uintr__deliver_here(__builtin_return_address(0),
							 __builtin_frame_address(0), &call);
		/* A handler may have unregistered r: it is only retired (we are
		 * inside uintr__enter), and its status word is DEAD. */
		if (uintr__self.receiver != r || r->polling)
			break;
		uintr__loop_status(r, 0);
		if (!atomic_load(&r->upid->pir))
			break;
		uintr__loop_status(r, 1);
	}
	uintr__leave();
	uintr__frame_call_run(&call);
	return (int)delivered;
}
