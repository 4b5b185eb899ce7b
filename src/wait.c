/*
 * uintr_wait (reference 2.6, 6.3): block until a user interrupt arrives.
 *
 * As in the RFC, a waiting receiver switches its UPID's notification vector
 * to 0xEB; senders then notify it with a futex wake on the UPID status
 * instead of a signal.  The RFC's own race (an interrupt posted just before
 * the call is lost until the next one) is closed: the switch is one atomic
 * operation on the status word, after which we sleep only if ON is clear
 * and nothing is posted or pending, and the futex sleeps only while the
 * status word still has the value we checked.
 */
#define _GNU_SOURCE
#include "uintr-int.h"

static uint32_t uintr__set_nv(struct uintr__upid *upid, uint32_t nv)
{
	uint32_t s = atomic_load(&upid->status), n;

	do
		n = (s & ~UINTR__UPID_NV_MASK) | UINTR__NV(nv);
	while (!atomic_compare_exchange_weak(&upid->status, &s, n));
	return n;
}

static void uintr__block_until_notified(struct uintr__receiver *r)
{
	struct uintr__upid *upid = r->upid;
	uint32_t s = uintr__set_nv(upid, UINTR__NV_BLOCKED);

	while (!(s & UINTR__UPID_ON) && !atomic_load(&upid->pir) && !atomic_load(&r->uirr)) {
		uintr__futex_wait(&upid->status, s);
		s = atomic_load(&upid->status);
	}
	uintr__set_nv(upid, UINTR__NV_RUNNING);
}

UINTR__EXPORT int uintr_wait(unsigned int flags)
{
	struct uintr__receiver *r = uintr__self.receiver;

	if (flags != 0)
		return uintr__fail(EINVAL);
	if (!r)
		return uintr__fail(EOPNOTSUPP);
	for (;;) {
		uintr__block_until_notified(r);
		uintr__process_notification(r);
		if (atomic_load(&r->uirr))
			break;
	}
	/* With UIF = 0 the interrupt stays pending and we return all the same,
	 * as the RFC's wake-up does. */
	if (atomic_load(&uintr__self.uif))
		uintr__deliver_here(__builtin_return_address(0), __builtin_frame_address(0));
	return uintr__fail(EINTR);
}
