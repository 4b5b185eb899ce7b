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
 *   2. UIRR |= xchg(PIR, 0); deliver while UIF = 1 (5.3).  The handlers
 *      run first, so the time from the post to the handler holds no read
 *      syscall; while they run the loop fd is still readable;
 *   3. read the eventfd to zero: the fd is no longer readable;
 *   4. in one step: SN := r->polling (0 unless the program keeps the loop
 *      busy with uintr_set_polling(1)), ON := 0, EPOCH += 1; then look at
 *      PIR again: anything posted between 2 and 4 found SN = 1 and did not
 *      notify, so it is drained here (back to 1).  A post after 4 finds
 *      SN = 0 and notifies.  The RMW of 4 and the seq_cst PIR load against
 *      the sender's PIR RMW and status load is the store-buffering pair of
 *      uintr_wait's spin phase (model/README.md): one of the two sees the
 *      other, so nothing is lost between the last drain and the next wait,
 *      and PIR's exchange hands each post to exactly one delivery.
 * Why 3 must come before 4 (model/uintr.pml, OLD_LOOP_RESET_LATE): after
 * SN := 0 an eventfd write is the notification of the next wait, and a
 * read after that could consume it while ON, set by its sender, makes
 * every later post coalesce: lost.  A write that 3 consumes was made after
 * its sender's post, so the post is in PIR for 4's look, or already taken
 * by a recognition.  Why 4 clears ON and bumps EPOCH again: with SN = 1
 * from 1 to 4 no sender can set ON, but a handler may clear SN for a while
 * (uintr_wait, a nested uintr_loop_drain); a write made then and consumed
 * by 3 must not leave its ON behind, nor let its sender set it later
 * (the model's handler only unregisters: this case is argued, not checked).
 * (EPOCH thus moves twice per drain, so the 13 bits cover 4096 drains of a
 * sender stalled between its status load and its CAS.)  3 reads the
 * receiver's eventfd even after a handler unregistered it: r is only
 * retired (we are inside uintr__enter), its eventfd stays open until we
 * leave, and the loop fd is left not readable, as before the handler ran.
 * A sender slower than step 1 (its status load before it) may still write
 * after step 3: the fd is then readable with nothing to drain (one spurious
 * wake-up, never a lost one).
 *
 * A uintr_frame_call a handler asks for is made after all of it, outside
 * uintr__enter, as at every poll point: a call that switches user-level
 * threads must not leave SN set behind it.
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

/* The drain's steps 1 and 4 (see the top): SN := sn, ON := 0,
 * EPOCH += 1, in one step; the word of a receiver that is gone is left
 * alone, as uintr__set_status does. */
static void uintr__loop_status(struct uintr__receiver *r, uint32_t sn)
{
	uint32_t s = atomic_load(&r->upid->status), n;

	do {
		if (s & UINTR__UPID_DEAD)
			return;
		n = ((s & ~(UINTR__UPID_ON | UINTR__UPID_SN | UINTR__UPID_EPOCH_MASK)) | sn) |
		    ((s + (1u << UINTR__UPID_EPOCH_SHIFT)) & UINTR__UPID_EPOCH_MASK);
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
	int saved_errno;

	if (flags != 0)
		return uintr__fail(EINVAL);
	r = uintr__enter();
	if (!r || !r->loop) {
		uintr__leave();
		return uintr__fail(r ? EINVAL : EOPNOTSUPP);
	}
	uintr__loop_status(r, UINTR__UPID_SN);
	for (;;) {
		uintr__process_notification(r);
		if (atomic_load(&uintr__self.uif) && atomic_load(&r->info->uirr))
			delivered += uintr__deliver_here(__builtin_return_address(0),
							 __builtin_frame_address(0), &call);
		/* Our own eventfd cannot fail but with EAGAIN (already zero, e.g.
		 * read by a nested drain); errno stays the caller's. */
		saved_errno = errno;
		if (read(r->loop_efd, &count, sizeof(count)) < 0) {
			/* nothing to do */
		}
		errno = saved_errno;
		/* A handler may have unregistered r: it is only retired (we are
		 * inside uintr__enter), and its status word is DEAD. */
		if (uintr__self.receiver != r || r->polling)
			break;
		uintr__loop_status(r, 0);
		if (!atomic_load(&r->upid->pir))
			break;
		uintr__loop_status(r, UINTR__UPID_SN);
	}
	uintr__leave();
	uintr__frame_call_run(&call);
	return (int)delivered;
}
