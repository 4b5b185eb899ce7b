/*
 * The instrumented state: uintr_set_safepoints, uintr_safepoint and
 * uintr_safepoint_word (a libuintr extension, issue 14).
 *
 * Code built with libuintr's GCC plugin checks a safepoint at every loop
 * back-edge and function entry:
 *
 *     if (__builtin_expect(*uintr_safepoint_word != 0, 0)) uintr_safepoint();
 *
 * For every thread the word points at a static zero, except for a
 * receiver in the instrumented state, whose word is its UPID's PIR:
 * nonzero exactly while something is posted and not yet recognized (5.1,
 * 5.2).  So the check is two loads that stay in L1 and a branch never
 * taken until a sender posts.
 *
 * The state is a state of the one receiver, posted through the one post
 * path (sender.c): SN is kept set, as uintr_set_polling(1) does (6.1), so
 * that a post makes no syscall and sends no signal; the receiver's next
 * safepoint recognizes (PIR -> UIRR, the exchange that hands each post to
 * exactly one recognition) and delivers exactly as uintr_poll does: UIF,
 * priority, coalescing, the frame describing the call (delivery.c).
 *
 * The fallback.  A receiver that runs code nobody instrumented (libc, a
 * syscall, a library) reaches no safepoint; its posts would wait for ever.
 * Who notices, without a syscall on the send path?  Not the sender: it
 * has posted and gone on, and only a timer or another thread can act
 * later.  A timer per receiver would interrupt the receiver itself (a
 * signal) at every period whether or not anything is posted: the cost we
 * want to avoid.  So one watchdog thread per process, alive while some
 * receiver is instrumented, scans the instrumented receivers every
 * deadline/2 (a futex sleep with a timeout, timer slack 1 ns, so that
 * entering or leaving the state can wake it at once) and, for a receiver whose
 * PIR was nonzero at a scan and still is at a scan deadline/2 later with
 * no recognition in between (`recognized`, bumped by uintr__recognize),
 * sends the notification signal through the sender's own notify code
 * (uintr__notify_deferred).  Its handler (delivery.c) recognizes with the
 * same PIR exchange: whichever of the safepoint and the signal gets there
 * first delivers, the other finds nothing; never twice, never lost
 * (model/uintr.pml, configurations sp*).  One signal per clock: after
 * it, the watchdog sends no other until a recognition restarts the clock
 * (or PIR is seen empty), so a receiver that blocks the signal gets no
 * flood, and a handler between its EPOCH bump and its PIR exchange (the
 * window where an earlier rule, "again once EPOCH moved", sent a second
 * signal for one post under qemu) gets none either.  Nothing is lost by
 * waiting: every path that consumes the signal recognizes (delivery.c,
 * uintr__notification; in uintr_wait, the wait does), and a recognition
 * that takes a nonzero PIR bumps `recognized`.
 *
 * The watchdog skips a receiver blocked in uintr_wait (NV 0xEB: the post
 * wakes it) and one also in uintr_set_polling(1) (the program asked for no
 * notification at all).  It exits at the first scan that finds no
 * instrumented receiver, so it never keeps a process alive; a fork child
 * has none and no watchdog until one of its threads enters the state.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "uintr-int.h"

/* The period never goes below this: a tiny deadline must not turn the
 * watchdog into a busy loop that starves the receiver on a small machine. */
#define UINTR__WATCHDOG_MIN_PERIOD_NS 500ull

const unsigned long long uintr__safepoint_zero;

UINTR__EXPORT __thread __attribute__((tls_model("initial-exec")))
const volatile unsigned long long *uintr_safepoint_word = &uintr__safepoint_zero;

static unsigned int uintr__sp_receivers; /* instrumented receivers, under uintr__lock */
static int uintr__wd_running;            /* a watchdog thread exists, under uintr__lock */
static _Atomic uint32_t uintr__wd_started;
/* Bumped (and the watchdog woken) when it must look again before its
 * period is over: the last receiver left, or a deadline changed. */
static _Atomic uint32_t uintr__wd_kick;

static void uintr__watchdog_kick(void)
{
	atomic_fetch_add(&uintr__wd_kick, 1);
	uintr__futex_wake(&uintr__wd_kick);
}

uint64_t uintr__default_safepoint_deadline(void)
{
	static _Atomic int complained;
	const char *env = getenv("UINTR_SAFEPOINT_DEADLINE_NS");
	char why[UINTR__ENV_WHY];
	uint64_t ns;

	if (uintr__env_safepoint_deadline(env, &ns, why, sizeof(why)) != 0)
		uintr__env_complain(&complained, "UINTR_SAFEPOINT_DEADLINE_NS", env, why,
				    "the instrumented state uses the default 20000 ns");
	return ns;
}

static uint64_t uintr__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Under uintr__lock: look at one instrumented receiver at time `now`,
 * scanning every `period` ns; notify it if a post has waited too long. */
static void uintr__watch_one(struct uintr__receiver *r, uint64_t now, uint64_t period)
{
	uint64_t pir = atomic_load(&r->upid->pir);
	uint64_t seq = atomic_load_explicit(&r->recognized, memory_order_relaxed);
	uint32_t status = atomic_load(&r->upid->status);
	struct uintr__target t;

	if (!pir || !atomic_load(&r->sp_fallback) || (status & UINTR__UPID_DEAD) ||
	    (status & UINTR__UPID_NV_MASK) == UINTR__NV(UINTR__NV_BLOCKED)) {
		r->wd_since = 0;
		r->wd_sent = 0;
		return;
	}
	if (!r->wd_since || seq != r->wd_seq) {
		/* Nonzero now, and not since before the last recognition:
		 * these posts may be fresh; the clock starts here. */
		r->wd_since = now;
		r->wd_seq = seq;
		r->wd_sent = 0;
		return;
	}
	/* Posted at most one period before wd_since. */
	if (now - r->wd_since + period < r->sp_deadline_ns)
		return;
	if (r->wd_sent)
		return; /* our signal is on its way, being handled, or blocked */
	memset(&t, 0, sizeof(t));
	t.upid = r->upid;
	t.info = r->info;
	t.token = r->token;
	t.tgid = r->info->tgid;
	t.tid = r->tid;
	t.pidfd = r->sp_pidfd;
	t.loop_efd = -1;
	t.memfd[0] = t.memfd[1] = -1;
	t.sender_tgid = r->info->tgid;
	t.sender_uid = getuid();
	if (uintr__notify_deferred(&t))
		r->wd_sent = 1;
}

static void *uintr__watchdog(void *arg)
{
	uint64_t next = 0;

	(void)arg;
	/* A sleep of 10 us must not become 60 (the default slack, 50 us). */
	prctl(PR_SET_TIMERSLACK, 1ul, 0ul, 0ul, 0ul);
	atomic_store(&uintr__wd_started, 1);
	uintr__futex_wake(&uintr__wd_started);
	for (;;) {
		struct uintr__receiver *r;
		uint64_t now = uintr__mono_ns(), period = UINT64_MAX;
		uint32_t kick;

		uintr__lock_unmasked();
		kick = atomic_load(&uintr__wd_kick);
		if (!uintr__sp_receivers) {
			uintr__wd_running = 0;
			uintr__unlock_unmasked();
			return NULL;
		}
		for (r = uintr__receivers; r; r = r->next)
			if (r->safepoints && r->sp_deadline_ns / 2 < period)
				period = r->sp_deadline_ns / 2;
		if (period < UINTR__WATCHDOG_MIN_PERIOD_NS)
			period = UINTR__WATCHDOG_MIN_PERIOD_NS;
		for (r = uintr__receivers; r; r = r->next)
			if (r->safepoints)
				uintr__watch_one(r, now, period);
		uintr__unlock_unmasked();
		/* Periodic scans, each `period` after the last; a kick (the
		 * futex word changed) makes the next one at once. */
		next = next && next + period > now ? next + period : now + period;
		if (next > now && uintr__futex_wait(&uintr__wd_kick, kick, next - now) == 0)
			next = 0;
	}
}

/* Under uintr__lock: the watchdog thread, if there is none.  Every signal
 * blocked in it: nothing of the program's runs there. */
static int uintr__watchdog_start(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int err;

	if (uintr__wd_running)
		return 0;
	if (pthread_attr_init(&attr) != 0)
		return ENOMEM;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&uintr__wd_started, 0);
	err = pthread_create(&t, &attr, uintr__watchdog, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err)
		return err == EAGAIN ? EAGAIN : ENOMEM;
	/* As the release watcher (vector_fd.c): return only once the thread
	 * runs our code, so that a fork right after does not catch it in its
	 * start-up. */
	while (!atomic_load(&uintr__wd_started))
		uintr__futex_wait(&uintr__wd_started, 0, 1000000);
	uintr__wd_running = 1;
	return 0;
}

/* Under uintr__lock (uintr__receiver_detach): r leaves the state for good. */
void uintr__safepoints_gone(struct uintr__receiver *r)
{
	if (!r->safepoints)
		return;
	r->safepoints = 0;
	atomic_store(&r->sp_fallback, 0);
	if (--uintr__sp_receivers == 0)
		uintr__watchdog_kick(); /* so that it exits now */
}

/* fork child: no thread but the caller survives, and the parent's
 * receivers are gone (sys.c). */
void uintr__safepoint_fork_child(void)
{
	uintr__sp_receivers = 0;
	uintr__wd_running = 0;
	uintr_safepoint_word = &uintr__safepoint_zero;
}

/* The slow path of a safepoint: a poll point whose frame is the call. */
UINTR__EXPORT void uintr_safepoint(void)
{
	uintr__poll_point(__builtin_return_address(0), __builtin_frame_address(0));
}

UINTR__EXPORT int uintr_set_safepoints(unsigned long long deadline_ns, unsigned int flags)
{
	struct uintr__receiver *r;
	int err = 0;

	if (flags != 0)
		return uintr__fail(EINVAL);
	r = uintr__enter();
	if (!r) {
		uintr__leave();
		return uintr__fail(EOPNOTSUPP);
	}
	if (deadline_ns == 0) {
		uintr__lock();
		uintr__safepoints_gone(r);
		uintr__unlock();
		uintr_safepoint_word = &uintr__safepoint_zero;
		uintr__set_status(r->upid, UINTR__UPID_SN, uintr__sn(r));
		uintr__leave();
		/* As uintr_set_polling(0): what was posted meanwhile is
		 * delivered now, outside our uintr__enter(). */
		uintr_poll();
		return 0;
	}
	if (r->loop) {
		uintr__leave();
		return uintr__fail(EBUSY);
	}
	if (deadline_ns == UINTR_SAFEPOINT_DEFAULT)
		deadline_ns = uintr__default_safepoint_deadline();
	uintr__lock();
	if (!r->safepoints) {
		if (r->sp_pidfd < 0) {
			r->sp_pidfd = uintr__pidfd_open_thread(r->tid);
			if (r->sp_pidfd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM))
				err = errno;
		}
		if (!err)
			err = uintr__watchdog_start();
		if (!err) {
			r->safepoints = 1;
			r->wd_since = 0;
			r->sp_deadline_ns = 0; /* kicks the watchdog below */
			uintr__sp_receivers++;
		}
	}
	if (!err) {
		if (r->sp_deadline_ns != deadline_ns) {
			r->sp_deadline_ns = deadline_ns;
			uintr__watchdog_kick(); /* its period may be shorter now */
		}
		atomic_store(&r->sp_fallback, !r->polling);
	}
	uintr__unlock();
	if (err) {
		uintr__leave();
		return uintr__fail(err);
	}
	uintr__set_status(r->upid, UINTR__UPID_SN, UINTR__UPID_SN);
	uintr_safepoint_word = (const volatile unsigned long long *)&r->upid->pir;
	uintr__leave();
	return 0;
}
