/*
 * Timer vectors (libuintr extension; the RFC has no timers, reference 8:
 * "Timers: none in RFC"): a timer, made from a uintr_fd as a sender is,
 * posts that fd's vector of its receiver at each expiry, in the style of
 * timer_create(2): one-shot or periodic, nanoseconds, any clock the
 * kernel's timers take.
 *
 * An expiry posts through the post of a sender (sender.c, 5.1): it sets
 * PIR[vector] and notifies only if ON and SN are clear, so UIF, priority,
 * coalescing and the handler frame are those of a send.  An expiry that
 * finds its vector still pending (posted or recognized, not delivered)
 * coalesces and counts as an overrun, as timer_getoverrun(2) counts.
 *
 * Where a timer fires: on the receiver thread, never on another CPU.
 *   - kernel mode (the receiver does not poll): a POSIX timer of the
 *     kernel, SIGEV_THREAD_ID, aimed at the receiver thread with the
 *     library's notification signal; its handler posts there, and when a
 *     notification is due it processes it at once (as the RFC kernel's
 *     self-IPI, 6.1): one signal per expiry, no cross-thread wake-up.
 *   - poll mode (uintr_set_polling(1), and a clock the vDSO reads): no
 *     kernel timer is armed; the receiver's poll points (uintr_poll,
 *     uintr_wait's poll phase) compare the clock with the earliest
 *     deadline: no syscall, one clock read while a timer is armed.
 *     While such a receiver sleeps in uintr_wait its timers are kernel
 *     timers, and go back to its poll points when it runs again.
 *
 * Lifetime, as a sender's (2.3, 2.7): a timer stops posting for good when
 * its fd is released or its receiver unregisters or exits; it keeps its
 * id until uintr_timer_delete.  Timers are per process: a child of fork()
 * has none, exec ends them (timer_create(2)).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uintr-int.h"

enum { UINTR__TIMER_OFF, UINTR__TIMER_POLL, UINTR__TIMER_KERNEL };

struct uintr__timer {
	_Atomic int live;          /* allocated (between create and delete) */
	_Atomic int dead;          /* fd released or receiver gone: never posts */
	_Atomic int mode;          /* UINTR__TIMER_OFF, _POLL, _KERNEL */
	uint32_t gen;              /* bumped at each create: stale signals */
	struct uintr__receiver *r; /* under uintr__lock; NULL once gone */
	uint64_t token;            /* r->token */
	unsigned int vector;
	uint32_t vector_gen;       /* info->vector_gen[vector] of the fd */
	clockid_t clock;
	int poll_ok;               /* clock_gettime(clock) is a vDSO read */
	int ktimer;                /* the kernel's timer id */
	_Atomic uint64_t deadline; /* poll mode: absolute, on `clock`, ns */
	_Atomic uint64_t interval; /* ns, 0: one-shot */
	_Atomic int overrun;       /* expiries coalesced since the last post */
};

static struct uintr__timer uintr__timer_table[UINTR__TIMERS];
static pthread_once_t uintr__timer_once = PTHREAD_ONCE_INIT;

#define UINTR__NS 1000000000ull

static uint64_t uintr__clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * UINTR__NS + (uint64_t)ts.tv_nsec;
}

static void uintr__ns_to_ts(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / UINTR__NS);
	ts->tv_nsec = (long)(ns % UINTR__NS);
}

/* Kernel timers by raw syscall: their ids are the kernel's ints, and
 * SIGEV_THREAD_ID needs no librt. */
static int uintr__ktimer_set(int id, uint64_t abs_ns, uint64_t interval_ns)
{
	struct itimerspec its;

	uintr__ns_to_ts(interval_ns, &its.it_interval);
	uintr__ns_to_ts(abs_ns, &its.it_value);
	return (int)syscall(SYS_timer_settime, id, abs_ns ? TIMER_ABSTIME : 0, &its, NULL);
}

/* Clocks a poll point can read without a syscall (the vDSO's). */
static int uintr__clock_polls(clockid_t clock)
{
	return clock == CLOCK_MONOTONIC || clock == CLOCK_REALTIME || clock == CLOCK_BOOTTIME ||
	       clock == CLOCK_TAI;
}

/* A child of fork() has no timers (timer_create(2)); kernel timers are not
 * inherited, so forget the parent's slots. */
static void uintr__timers_fork_child(void)
{
	unsigned int i;

	for (i = 0; i < UINTR__TIMERS; i++) {
		atomic_store(&uintr__timer_table[i].live, 0);
		atomic_store(&uintr__timer_table[i].mode, UINTR__TIMER_OFF);
		uintr__timer_table[i].r = NULL;
	}
}

static void uintr__timers_init(void)
{
	pthread_atfork(NULL, NULL, uintr__timers_fork_child);
}

static struct uintr__timer *uintr__timer_get(int id)
{
	struct uintr__timer *t;

	if (id < 0 || id >= UINTR__TIMERS)
		return NULL;
	t = &uintr__timer_table[id];
	return atomic_load(&t->live) ? t : NULL;
}

static int uintr__timer_id(const struct uintr__timer *t)
{
	return (int)(t - uintr__timer_table);
}

/*
 * One expiry (or `extra` + 1 expiries found at once), on the receiver
 * thread.  uc: the signal context when a kernel timer fired, NULL at a
 * poll point.  Returns 0 if the timer turned out dead.
 */
static int uintr__timer_expire(struct uintr__timer *t, struct uintr__receiver *r,
			       unsigned int extra, ucontext_t *uc)
{
	uint64_t bit = 1ull << t->vector;
	int ov;

	if (atomic_load(&t->dead) || !atomic_load(&r->info->active) ||
	    atomic_load(&r->info->vector_gen[t->vector]) != t->vector_gen) {
		atomic_store(&t->dead, 1);
		return 0;
	}
	ov = atomic_load_explicit(&t->overrun, memory_order_relaxed);
	if ((atomic_load(&r->upid->pir) | atomic_load(&r->info->uirr)) & bit) {
		/* Still pending: coalesces (DELAYTIMER_MAX = INT_MAX caps it). */
		extra++;
	} else {
		ov = 0;
		if (uintr__post_self(r->upid, t->vector) && uc && !atomic_load(&uintr__self.blocking))
			uintr__notified(r, uc);
	}
	ov = extra > (unsigned int)(INT_MAX - ov) ? INT_MAX : ov + (int)extra;
	atomic_store_explicit(&t->overrun, ov, memory_order_relaxed);
	return 1;
}

/* uintr__timer_expire at a poll point for a due poll-mode timer.  Returns
 * its next deadline in CLOCK_MONOTONIC ns (0: none). */
static uint64_t uintr__timer_poll(struct uintr__timer *t, struct uintr__receiver *r,
				  uint64_t mono)
{
	uint64_t d = atomic_load(&t->deadline), now, next, k = 0, iv;

	if (atomic_load(&t->mode) != UINTR__TIMER_POLL || !d)
		return 0;
	now = t->clock == CLOCK_MONOTONIC ? mono : uintr__clock_ns(t->clock);
	if (now >= d) {
		iv = atomic_load(&t->interval);
		if (iv) {
			k = (now - d) / iv; /* expiries missed after the first */
			next = d + (k + 1) * iv;
		} else {
			next = 0;
		}
		/* A concurrent uintr_timer_settime wins. */
		if (!atomic_compare_exchange_strong(&t->deadline, &d, next))
			return 1;
		if (!next)
			atomic_store(&t->mode, UINTR__TIMER_OFF);
		if (!uintr__timer_expire(t, r, k > UINT_MAX ? UINT_MAX : (unsigned int)k, NULL)) {
			atomic_store(&t->deadline, 0);
			atomic_store(&t->mode, UINTR__TIMER_OFF);
			return 0;
		}
		d = next;
		if (!d)
			return 0;
	}
	return d - now + mono;
}

/* Lower r->timer_due to `due` (a CLOCK_MONOTONIC deadline). */
static void uintr__due_lower(struct uintr__receiver *r, uint64_t due)
{
	uint64_t h = atomic_load(&r->timer_due);

	if (!due)
		return;
	while ((h == 0 || due < h) && !atomic_compare_exchange_weak(&r->timer_due, &h, due))
		;
}

/* A poll point found timer_due set (uintr__timers_check). */
void uintr__timers_fire(struct uintr__receiver *r)
{
	uint64_t mono = uintr__clock_ns(CLOCK_MONOTONIC), due, h, next = 0;
	unsigned int w;

	h = atomic_load(&r->timer_due);
	if (!h || mono < h)
		return;
	atomic_store(&r->timer_due, 0);
	for (w = 0; w < UINTR__TIMERS / 64; w++) {
		uint64_t slots = atomic_load(&r->timer_slots[w]);

		while (slots) {
			unsigned int i = w * 64 + (unsigned int)__builtin_ctzll(slots);

			slots &= slots - 1;
			due = uintr__timer_poll(&uintr__timer_table[i], r, mono);
			if (due && (!next || due < next))
				next = due;
		}
	}
	uintr__due_lower(r, next);
}

/* A kernel timer's signal reached this thread (delivery.c). */
void uintr__timer_signal(siginfo_t *si, ucontext_t *uc)
{
	uint64_t v = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	unsigned int id = (unsigned int)(v & 0xffff);
	struct uintr__receiver *r = uintr__self.receiver;
	struct uintr__timer *t;

	if (id >= UINTR__TIMERS)
		return;
	t = &uintr__timer_table[id];
	/* Stale: the timer was deleted (and maybe made again) since, or this
	 * thread is no longer its receiver. */
	if (!atomic_load(&t->live) || (uint32_t)(v >> 16) != t->gen || !r || r->token != t->token ||
	    atomic_load(&t->mode) != UINTR__TIMER_KERNEL)
		return;
	if (!uintr__timer_expire(t, r, si->si_overrun > 0 ? (unsigned int)si->si_overrun : 0, uc))
		uintr__ktimer_set(t->ktimer, 0, 0);
}

/*
 * Arm (value_ns != 0, absolute on t->clock) or disarm t for receiver r,
 * in the mode r's polling asks for.  On r's own thread, or under
 * uintr__lock.
 */
static int uintr__timer_arm(struct uintr__timer *t, struct uintr__receiver *r, uint64_t abs_ns,
			    uint64_t interval_ns, int polling)
{
	int poll = abs_ns && polling && t->poll_ok;

	if (atomic_load(&t->mode) == UINTR__TIMER_KERNEL && !(abs_ns && !poll))
		uintr__ktimer_set(t->ktimer, 0, 0);
	atomic_store(&t->mode, UINTR__TIMER_OFF);
	atomic_store(&t->deadline, 0);
	atomic_store(&t->interval, interval_ns);
	if (!abs_ns)
		return 0;
	if (poll) {
		uint64_t now = uintr__clock_ns(t->clock), mono = uintr__clock_ns(CLOCK_MONOTONIC);

		atomic_store(&t->deadline, abs_ns);
		atomic_store(&t->mode, UINTR__TIMER_POLL);
		uintr__due_lower(r, abs_ns > now ? abs_ns - now + mono : 1);
		return 0;
	}
	atomic_store(&t->mode, UINTR__TIMER_KERNEL);
	if (uintr__ktimer_set(t->ktimer, abs_ns, interval_ns) != 0) {
		atomic_store(&t->mode, UINTR__TIMER_OFF);
		return -1;
	}
	return 0;
}

/* Time left and interval of an armed timer, ns. */
static void uintr__timer_read(struct uintr__timer *t, uint64_t *left, uint64_t *interval)
{
	*left = *interval = 0;
	if (atomic_load(&t->dead))
		return;
	switch (atomic_load(&t->mode)) {
	case UINTR__TIMER_POLL: {
		uint64_t d = atomic_load(&t->deadline), now = uintr__clock_ns(t->clock);

		*interval = atomic_load(&t->interval);
		/* Due but not yet seen by a poll point: 1 ns, still armed. */
		*left = d ? (d > now ? d - now : 1) : 0;
		break;
	}
	case UINTR__TIMER_KERNEL: {
		struct itimerspec its;

		if (syscall(SYS_timer_gettime, t->ktimer, &its) == 0) {
			*left = (uint64_t)its.it_value.tv_sec * UINTR__NS + (uint64_t)its.it_value.tv_nsec;
			*interval = (uint64_t)its.it_interval.tv_sec * UINTR__NS +
				    (uint64_t)its.it_interval.tv_nsec;
		}
		break;
	}
	}
}

/* Move r's armed timers to the mode `polling` asks for (uintr_set_polling,
 * uintr_wait's sleep).  On r's own thread. */
void uintr__timers_repoll(struct uintr__receiver *r, int polling)
{
	unsigned int w;

	for (w = 0; w < UINTR__TIMERS / 64; w++) {
		uint64_t slots = atomic_load(&r->timer_slots[w]);

		while (slots) {
			struct uintr__timer *t = &uintr__timer_table[w * 64 + __builtin_ctzll(slots)];
			int mode = atomic_load(&t->mode);
			uint64_t left, interval;

			slots &= slots - 1;
			if (atomic_load(&t->dead) || mode == UINTR__TIMER_OFF ||
			    (mode == UINTR__TIMER_POLL) == (polling && t->poll_ok))
				continue;
			uintr__timer_read(t, &left, &interval);
			if (!left)
				continue;
			uintr__timer_arm(t, r, uintr__clock_ns(t->clock) + left, interval, polling);
		}
	}
	if (!polling)
		atomic_store(&r->timer_due, 0);
}

/* Receiver r unregisters or exits: its timers die (2.7).  Signals blocked. */
void uintr__timers_receiver_gone(struct uintr__receiver *r)
{
	unsigned int i;

	uintr__lock();
	for (i = 0; i < UINTR__TIMERS; i++) {
		struct uintr__timer *t = &uintr__timer_table[i];

		if (!atomic_load(&t->live) || t->r != r)
			continue;
		atomic_store(&t->dead, 1);
		if (atomic_load(&t->mode) == UINTR__TIMER_KERNEL)
			uintr__ktimer_set(t->ktimer, 0, 0);
		atomic_store(&t->mode, UINTR__TIMER_OFF);
		t->r = NULL;
	}
	atomic_store(&r->timer_due, 0);
	uintr__unlock();
}

/* The receiver that owns the fd's vector, in this process, under the lock. */
static struct uintr__receiver *uintr__fd_receiver(const struct uintr__fd_header *h)
{
	struct uintr__receiver *r;

	for (r = uintr__receivers; r; r = r->next)
		if (r->token == h->token)
			return r;
	return NULL;
}

UINTR__EXPORT int uintr_timer_create(int uintr_fd, int clockid, unsigned int flags)
{
	struct uintr__fd_header h;
	struct uintr__receiver *r;
	struct uintr__timer *t = NULL;
	struct sigevent sev;
	int memfds[3], i, kid, err;

	if (flags != 0)
		return uintr__fail(EINVAL);
	if (uintr__read_fd_header(uintr_fd, &h, memfds) != 0)
		return -1;
	for (i = 0; i < 3; i++)
		if (memfds[i] >= 0)
			close(memfds[i]);
	if (h.tgid != getpid())
		return uintr__fail(EXDEV);
	pthread_once(&uintr__timer_once, uintr__timers_init);

	uintr__lock();
	r = uintr__fd_receiver(&h);
	err = ESHUTDOWN;
	if (!r || !atomic_load(&r->info->active) ||
	    atomic_load(&r->info->vector_gen[h.vector]) != h.gen)
		goto fail;
	err = EAGAIN;
	for (i = 0; i < UINTR__TIMERS; i++) {
		if (!atomic_load(&uintr__timer_table[i].live)) {
			t = &uintr__timer_table[i];
			break;
		}
	}
	if (!t)
		goto fail;
	t->gen++;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = uintr__signo;
	sev._sigev_un._tid = r->tid;
	sev.sigev_value.sival_ptr =
		(void *)(uintptr_t)(UINTR__TOKEN_TAG | ((uint64_t)t->gen << 16) | (uint64_t)i);
	/* The kernel checks the clock: EINVAL, ENOTSUP, EPERM (alarm clocks),
	 * EAGAIN (RLIMIT_SIGPENDING), as timer_create(2). */
	if (syscall(SYS_timer_create, (clockid_t)clockid, &sev, &kid) != 0) {
		err = errno;
		goto fail;
	}
	t->ktimer = kid;
	t->r = r;
	t->token = r->token;
	t->vector = h.vector;
	t->vector_gen = h.gen;
	t->clock = (clockid_t)clockid;
	t->poll_ok = uintr__clock_polls((clockid_t)clockid);
	atomic_store(&t->dead, 0);
	atomic_store(&t->mode, UINTR__TIMER_OFF);
	atomic_store(&t->deadline, 0);
	atomic_store(&t->interval, 0);
	atomic_store(&t->overrun, 0);
	atomic_store(&t->live, 1);
	atomic_fetch_or(&r->timer_slots[i / 64], 1ull << (i % 64));
	uintr__unlock();
	return i;
fail:
	uintr__unlock();
	return uintr__fail(err);
}

static int uintr__timespec_ns(const struct timespec *ts, uint64_t *ns)
{
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= (long)UINTR__NS ||
	    (uint64_t)ts->tv_sec > (UINT64_MAX - UINTR__NS) / UINTR__NS)
		return -1;
	*ns = (uint64_t)ts->tv_sec * UINTR__NS + (uint64_t)ts->tv_nsec;
	return 0;
}

static void uintr__fill_itimerspec(struct itimerspec *its, uint64_t left, uint64_t interval)
{
	uintr__ns_to_ts(left, &its->it_value);
	uintr__ns_to_ts(interval, &its->it_interval);
}

/*
 * On the receiver's own thread the timer is armed without a lock (the
 * quantum of a user-level thread is re-armed this way, at no syscall in
 * poll mode); from any other thread under uintr__lock, which keeps the
 * receiver from going away meanwhile.
 */
UINTR__EXPORT int uintr_timer_settime(int timerid, int flags, const struct itimerspec *new_value,
				      struct itimerspec *old_value)
{
	struct uintr__timer *t = uintr__timer_get(timerid);
	struct uintr__receiver *self, *r;
	uint64_t value, interval, left, old_interval;
	int locked = 0, ret = 0;

	if (!t || (flags & ~TIMER_ABSTIME))
		return uintr__fail(EINVAL);
	if (!new_value)
		return uintr__fail(EFAULT);
	if (uintr__timespec_ns(&new_value->it_value, &value) != 0 ||
	    uintr__timespec_ns(&new_value->it_interval, &interval) != 0)
		return uintr__fail(EINVAL);
	self = uintr__enter();
	if (self && self->token == t->token) {
		r = self;
	} else {
		uintr__lock();
		locked = 1;
		r = t->r;
	}
	if (!r || atomic_load(&t->dead) || !atomic_load(&t->live) ||
	    atomic_load(&r->info->vector_gen[t->vector]) != t->vector_gen) {
		ret = uintr__fail(ESHUTDOWN);
		goto out;
	}
	if (old_value) {
		uintr__timer_read(t, &left, &old_interval);
		uintr__fill_itimerspec(old_value, left, old_interval);
	}
	if (value && !(flags & TIMER_ABSTIME))
		value += uintr__clock_ns(t->clock);
	ret = uintr__timer_arm(t, r, value, value ? interval : 0, r->polling);
out:
	if (locked)
		uintr__unlock();
	uintr__leave();
	return ret;
}

UINTR__EXPORT int uintr_timer_gettime(int timerid, struct itimerspec *curr_value)
{
	struct uintr__timer *t = uintr__timer_get(timerid);
	uint64_t left, interval;

	if (!t)
		return uintr__fail(EINVAL);
	if (!curr_value)
		return uintr__fail(EFAULT);
	uintr__timer_read(t, &left, &interval);
	uintr__fill_itimerspec(curr_value, left, interval);
	return 0;
}

UINTR__EXPORT int uintr_timer_getoverrun(int timerid)
{
	struct uintr__timer *t = uintr__timer_get(timerid);

	if (!t)
		return uintr__fail(EINVAL);
	return atomic_load_explicit(&t->overrun, memory_order_relaxed);
}

UINTR__EXPORT int uintr_timer_delete(int timerid)
{
	struct uintr__timer *t;
	int id;

	uintr__lock();
	t = uintr__timer_get(timerid);
	if (!t) {
		uintr__unlock();
		return uintr__fail(EINVAL);
	}
	id = uintr__timer_id(t);
	atomic_store(&t->dead, 1);
	atomic_store(&t->mode, UINTR__TIMER_OFF);
	syscall(SYS_timer_delete, t->ktimer);
	if (t->r)
		atomic_fetch_and(&t->r->timer_slots[id / 64], ~(1ull << (id % 64)));
	t->r = NULL;
	atomic_store(&t->live, 0);
	uintr__unlock();
	return 0;
}
