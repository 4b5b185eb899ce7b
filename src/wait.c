/*
 * Waiting and polling: uintr_wait (reference 2.6, 6.3), and the libuintr
 * extensions uintr_wait_since_last, uintr_poll, uintr_set_polling,
 * uintr_set_wait_spin.  One wait path, uintr__wait(), serves both ABIs
 * (the later branch's timed wait, 3, is src/later.c).
 *
 * uintr__wait first polls for a short while with SN set, so that a sender
 * posts without notifying and neither side makes a syscall.  Then, as in
 * the RFC, it switches the UPID's notification vector to 0xEB (with SN
 * clear); senders then notify it with a futex wake on the UPID status
 * instead of a signal.
 *
 * When the wait is over (2.6): when an interrupt is delivered to the
 * thread during the call.  An interrupt posted or recognized but not yet
 * delivered when the call starts counts as arriving during it (it is
 * delivered now); one whose handler already ran before the call does not.
 * The switch to 0xEB is one atomic operation on the status word, after
 * which we sleep only if ON is clear and nothing is posted or pending, and
 * the futex sleeps only while the status word still has the value we
 * checked: a post just before the call is never slept through.
 *
 * uintr_wait_since_last (an extension) also ends at once if an interrupt
 * was delivered since the previous wait returned, like an event count:
 * that closes the race of `while (!flag) uintr_wait(0);`, where the
 * handler may run between the test of flag and the call.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "uintr-int.h"

/* The futex sleep rechecks the UPID this often.  Not needed by the
 * protocol (model/uintr.pml checks it without): it bounds what a sender
 * killed between setting ON and its futex wake costs (sender.c). */
#define UINTR__WAIT_RECHECK_NS 100000000ull

uint64_t uintr__default_wait_spin(void)
{
	static _Atomic int complained;
	const char *env = getenv("UINTR_WAIT_SPIN_NS");
	char why[UINTR__ENV_WHY];
	uint64_t ns;

	if (uintr__env_wait_spin(env, &ns, why, sizeof(why)) != 0)
		uintr__env_complain(&complained, "UINTR_WAIT_SPIN_NS", env, why,
				    "uintr_wait polls for the default 30000 ns");
	return ns;
}

static uint64_t uintr__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sequentially consistent loads: they follow our RMW of the status word
 * (SN or NV set), as the sender's status load follows its PIR fetch_or;
 * store buffering must not let both miss each other (model/README.md). */
static int uintr__anything_posted(struct uintr__receiver *r)
{
	return atomic_load(&r->upid->pir) || atomic_load(&r->info->uirr);
}

/* Was an interrupt delivered since `mark` (the count of deliveries when
 * the call started, or when the previous wait returned)? */
static int uintr__delivered_since(struct uintr__receiver *r, uint64_t mark)
{
	return atomic_load_explicit(&r->info->delivered, memory_order_relaxed) != mark;
}

static int uintr__wait_is_over(struct uintr__receiver *r, uint64_t mark)
{
	uintr__timers_check(r); /* a poll point (timer.c) */
	return uintr__anything_posted(r) || uintr__delivered_since(r, mark);
}

/* Set the status bits in `mask` to `value`, atomically; returns the new
 * word.  The word of a receiver that is gone (a handler nested in our
 * caller unregistered it) keeps SN set for good: left alone. */
uint32_t uintr__set_status(struct uintr__upid *upid, uint32_t mask, uint32_t value)
{
	uint32_t s = atomic_load(&upid->status), n;

	do {
		if (s & UINTR__UPID_DEAD)
			return s;
		n = (s & ~mask) | value;
	} while (!atomic_compare_exchange_weak(&upid->status, &s, n));
	return n;
}

/* The poll phase: SN = 1, watch PIR, until `end` (or the caller's
 * deadline, if earlier).  True if something arrived. */
static int uintr__spin_for_post(struct uintr__receiver *r, uint64_t mark, uint64_t end)
{
	uint64_t deadline;
	unsigned int i = 0;

	if (!r->wait_spin_ns)
		return 0;
	if (!uintr__sn(r))
		uintr__set_status(r->upid, UINTR__UPID_SN, UINTR__UPID_SN);
	deadline = uintr__now_ns() + r->wait_spin_ns;
	if (end && end < deadline)
		deadline = end;
	while (!uintr__wait_is_over(r, mark)) {
		uintr__arch_cpu_relax();
		if ((++i & 63) == 0 && uintr__now_ns() >= deadline)
			break;
	}
	if (!uintr__sn(r))
		uintr__set_status(r->upid, UINTR__UPID_SN, 0);
	return uintr__wait_is_over(r, mark);
}

/*
 * The block phase: NV := 0xEB, SN := 0 in one step, then futex-wait on the
 * status word.  While `blocking` is set, a late notification signal (its
 * sender decided to notify while we were still running) only bumps EPOCH:
 * were the handler to clear ON, the restarted futex_wait could find the
 * word it expects and sleep through the post.
 *
 * Returns 1 if the sleep was ended by the handler of another signal (not
 * ours): the RFC's wait sleeps TASK_INTERRUPTIBLE, so the caller returns
 * -1/EINTR then (2.6); 2 if the caller's deadline `end` (CLOCK_MONOTONIC
 * ns, 0 for none) passed.  The sleep has a timeout, so the kernel never
 * restarts it after a handler, SA_RESTART or not (-ERESTART_RESTARTBLOCK);
 * qemu-user does restart it after an SA_RESTART handler (documented).
 */
static int uintr__block_until_notified(struct uintr__receiver *r, uint64_t mark, uint64_t end)
{
	struct uintr__upid *upid = r->upid;
	int interrupted = 0;
	uint32_t s;

	atomic_store(&uintr__self.blocking, 1);
	/* Poll-point timers cannot fire while we sleep: the kernel's timers
	 * take over until we run again (timer.c). */
	if (atomic_load(&r->timer_due))
		uintr__timers_repoll(r, 0);
	s = uintr__set_status(upid, UINTR__UPID_NV_MASK | UINTR__UPID_SN,
			      UINTR__NV(UINTR__NV_BLOCKED));
	while (!(s & (UINTR__UPID_ON | UINTR__UPID_DEAD)) && !uintr__wait_is_over(r, mark)) {
		unsigned int runs = atomic_load_explicit(&uintr__self.own_signal_runs,
							 memory_order_relaxed);
		uint64_t sleep_ns = UINTR__WAIT_RECHECK_NS;

		if (end) {
			uint64_t now = uintr__now_ns();

			if (now >= end) {
				interrupted = 2;
				break;
			}
			if (end - now < sleep_ns)
				sleep_ns = end - now;
		}
		if (uintr__futex_wait(&upid->status, s, sleep_ns) != 0 &&
		    errno == EINTR &&
		    atomic_load_explicit(&uintr__self.own_signal_runs, memory_order_relaxed) == runs) {
			interrupted = 1;
			break;
		}
		s = atomic_load(&upid->status);
	}
	uintr__set_status(upid, UINTR__UPID_NV_MASK | UINTR__UPID_SN,
			  uintr__nv_idle(r) | uintr__sn(r));
	atomic_store(&uintr__self.blocking, 0);
	if (r->polling && uintr__self.receiver == r)
		uintr__timers_repoll(r, 1);
	return interrupted;
}

/*
 * The one wait path.  `since_last`: the wait is also over if an interrupt
 * was delivered since the previous wait returned (uintr_wait_since_last);
 * otherwise only a delivery during this call, or an interrupt pending at
 * its start, ends it (the RFC's uintr_wait, 2.6).  `timeout_ns`: 0 for
 * none (the later branch's timed wait, 3).
 *
 * Returns -1/EINTR, as the RFC's wake-up does: after a delivery, or with
 * UIF = 0 once something is pending (it stays pending: with UIF clear the
 * RFC's outcome depends on when the kernel looks; we choose "return,
 * deliver nothing"), when a signal handler unregistered the receiver
 * meanwhile, or when the handler of another signal ran while it slept.
 * Returns 0 when timeout_ns passed first.  The caller has checked flags
 * and that the thread is a receiver.
 */
int uintr__wait(struct uintr__receiver *r, int since_last, uint64_t timeout_ns, void *ip,
		void *sp, struct uintr__frame_call *call)
{
	uint64_t mark = since_last ? r->wait_mark
				   : atomic_load_explicit(&r->info->delivered, memory_order_relaxed);
	uint64_t end = timeout_ns ? uintr__now_ns() + timeout_ns : 0;
	int ret = -1;

	while (!uintr__delivered_since(r, mark)) {
		int interrupted = 0;

		if (!uintr__spin_for_post(r, mark, end))
			interrupted = uintr__block_until_notified(r, mark, end);
		if (uintr__self.receiver != r)
			break;
		uintr__process_notification(r);
		if (atomic_load(&r->info->uirr))
			break;
		if (interrupted == 2 && !uintr__delivered_since(r, mark)) {
			ret = 0;
			break;
		}
		if (interrupted)
			break;
	}
	if (uintr__self.receiver == r && atomic_load(&uintr__self.uif))
		uintr__deliver_here(ip, sp, call);
	r->wait_mark = atomic_load_explicit(&r->info->delivered, memory_order_relaxed);
	return ret == 0 ? 0 : uintr__fail(EINTR);
}

static int uintr__wait_call(unsigned int flags, int since_last, void *ip, void *sp)
{
	struct uintr__frame_call call = {0};
	struct uintr__receiver *r;
	int ret;

	if (flags != 0)
		return uintr__fail(EINVAL);
	r = uintr__enter();
	if (!r) {
		uintr__leave();
		return uintr__fail(EOPNOTSUPP);
	}
	ret = uintr__wait(r, since_last, 0, ip, sp, &call);
	uintr__leave();
	uintr__frame_call_run(&call);
	if (ret != 0)
		errno = EINTR;
	return ret;
}

UINTR__EXPORT int uintr_wait(unsigned int flags)
{
	return uintr__wait_call(flags, 0, __builtin_return_address(0), __builtin_frame_address(0));
}

UINTR__EXPORT int uintr_wait_since_last(unsigned int flags)
{
	return uintr__wait_call(flags, 1, __builtin_return_address(0), __builtin_frame_address(0));
}

/* A poll point (uintr_poll, uintr_safepoint): recognize what was posted
 * and deliver it if UIF = 1; ip and sp describe the caller's call.
 * -1 when the caller is not a receiver. */
int uintr__poll_point(void *ip, void *sp)
{
	struct uintr__receiver *r = uintr__enter();
	struct uintr__frame_call call = {0};
	int delivered = 0;

	if (!r) {
		uintr__leave();
		return -1;
	}
	uintr__timers_check(r);
	if (uintr__anything_posted(r)) {
		uintr__process_notification(r);
		if (atomic_load(&uintr__self.uif))
			delivered = (int)uintr__deliver_here(ip, sp, &call);
	}
	uintr__leave();
	uintr__frame_call_run(&call);
	return delivered;
}

UINTR__EXPORT int uintr_poll(void)
{
	int delivered = uintr__poll_point(__builtin_return_address(0), __builtin_frame_address(0));

	return delivered < 0 ? uintr__fail(EOPNOTSUPP) : delivered;
}

UINTR__EXPORT int uintr_set_polling(int on)
{
	struct uintr__receiver *r = uintr__enter();

	if (!r) {
		uintr__leave();
		return uintr__fail(EOPNOTSUPP);
	}
	on = on != 0;
	r->polling = on;
	uintr__timers_repoll(r, on);
	/* Clearing SN: what was posted meanwhile is recognized now (6.1), by
	 * a poll made outside our own uintr__enter(), so that a call a
	 * handler asks for there runs with no library state held. */
	uintr__set_status(r->upid, UINTR__UPID_SN, on ? UINTR__UPID_SN : 0);
	uintr__leave();
	if (!on)
		uintr_poll();
	return 0;
}

UINTR__EXPORT int uintr_set_wait_spin(unsigned long long ns)
{
	struct uintr__receiver *r = uintr__enter();

	if (r)
		r->wait_spin_ns = ns;
	uintr__leave();
	return r ? 0 : uintr__fail(EOPNOTSUPP);
}
