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
 * entering or leaving the state can wake it at once) and, for a receiver
 * whose PIR was nonzero at one look and still is at a later one with no
 * recognition in between (`recognized`, bumped by uintr__recognize),
 * sends the notification signal through the sender's own notify code
 * (uintr__notify_deferred) once the oldest post it may be looking at is
 * past the deadline, or would be by the next scan.
 *
 * When is the next scan?  Not `period` later: a timed sleep overshoots,
 * and on the KVM guests this was built on a 10 us futex or nanosleep
 * timeout returned after 26-30 us, a 0 ns one after 12 us (issue 14,
 * stop 30), longer than the 20 us default deadline.  Waiting for the next
 * scan then sent at 1.5-2 scans after the post (fallback p50 63 us where
 * deadline + one signal was 45 us).  So the watchdog keeps the interval
 * it really gets (an average), and when the scan that first sees a post
 * would be followed by the next one only after that post's deadline, it
 * looks again after a short spin (UINTR__WATCHDOG_CONFIRM_NS, with the
 * lock released) instead: a receiver at safepoints has taken its posts by
 * then and gets no signal; one in code without safepoints gets it about
 * one signal delivery after the first scan that saw the post.  That
 * second look counts only if the receiver ran meanwhile, for half the
 * spin at least (its thread CPU clock); if not (the watchdog, or another
 * thread, had its CPU), the next scan decides, as before.  Two looks
 * with no recognition between, whatever their spacing: the spin model's
 * watchdog scans at arbitrary times (it abstracts time), so the protocol
 * it checks is unchanged.  Where the watchdog runs: uintr__watchdog_cpus.
 *
 * Its handler (delivery.c) recognizes with the
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
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "uintr-int.h"

/* The period never goes below this: a tiny deadline must not turn the
 * watchdog into a busy loop that starves the receiver on a small machine. */
#define UINTR__WATCHDOG_MIN_PERIOD_NS 500ull
/* The second look of a post the next scan would find too late: long
 * enough for instrumented code to reach its next safepoint (the plugin
 * puts one on every loop back-edge and function entry: tens of ns apart),
 * short enough to cost the deadline little.  At most a quarter of the
 * deadline. */
#define UINTR__WATCHDOG_CONFIRM_NS 2000ull

const unsigned long long uintr__safepoint_zero;

UINTR__EXPORT __thread __attribute__((tls_model("initial-exec")))
const volatile unsigned long long *uintr_safepoint_word = &uintr__safepoint_zero;

static unsigned int uintr__sp_receivers; /* instrumented receivers, under uintr__lock */
/* Bumped when the set of instrumented receivers or their pinning changes:
 * the watchdog then places itself again.  Under uintr__lock. */
static unsigned int uintr__sp_generation;
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

/* Under uintr__lock: one look at an instrumented receiver at time `now`.
 * The watchdog's previous look was at `prev` (0: none), its next scan is
 * expected at `next_scan`.  Notifies r if a post has waited too long;
 * returns 1 if r's posts were seen for the first time and the next scan
 * would come after their deadline: look again soon (r->wd_confirm).
 * `confirm`: this is that second look, `confirm` ns after the first. */
static int uintr__watch_one(struct uintr__receiver *r, uint64_t now, uint64_t prev,
			    uint64_t next_scan, uint64_t confirm)
{
	uint64_t pir = atomic_load(&r->upid->pir);
	uint64_t seq = atomic_load_explicit(&r->recognized, memory_order_relaxed);
	uint32_t status = atomic_load(&r->upid->status);
	struct uintr__target t;

	if (!pir || !atomic_load(&r->sp_fallback) || (status & UINTR__UPID_DEAD) ||
	    (status & UINTR__UPID_NV_MASK) == UINTR__NV(UINTR__NV_BLOCKED)) {
		r->wd_since = 0;
		r->wd_sent = 0;
		return 0;
	}
	if (!r->wd_since || seq != r->wd_seq) {
		/* Nonzero now, and not since before the last recognition:
		 * these posts were made after our previous look at the
		 * earliest (it saw PIR empty, or came before the recognition
		 * that emptied it): their clock starts there. */
		r->wd_since = prev && prev < now ? prev : now;
		r->wd_seq = seq;
		r->wd_sent = 0;
		if (confirm || next_scan <= r->wd_since + r->sp_deadline_ns)
			return 0;
		r->wd_cpu = uintr__thread_cpu_ns(r->tid);
		return r->wd_cpu != 0;
	}
	if (r->wd_sent)
		return 0; /* our signal is on its way, being handled, or blocked */
	/* Seen at two looks, nothing recognized between: wait while the next
	 * scan is still within the deadline of the oldest possible post. */
	if (next_scan <= r->wd_since + r->sp_deadline_ns)
		return 0;
	/* A second look soon after the first proves nothing if the thread
	 * did not run between them (this thread, or another, may have had its
	 * CPU): it must have run for half the interval at least, else the
	 * next scan decides. */
	if (confirm && uintr__thread_cpu_ns(r->tid) < r->wd_cpu + confirm / 2)
		return 0;
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
	return 0;
}

/*
 * Where the watchdog runs.  Not on a CPU that an instrumented receiver is
 * pinned to: there it would take the receiver's CPU at every scan, and a
 * second look at a receiver it has just preempted proves nothing.  And
 * not where it happened to be created: it inherits the affinity of the
 * receiver thread that started it, pinned or not (on two vCPUs with a
 * receiver pinned to CPU 1, every scan ran on CPU 1).  So: the CPUs of the
 * process's main thread (a program run under taskset keeps them; a
 * runtime's dispatcher is usually there), minus the pinned receivers'
 * CPUs, or all of the main thread's CPUs if that leaves none.  Read again
 * whenever the set of instrumented receivers changes.  Under uintr__lock;
 * returns 0 if the main thread is gone (its affinity unknown: stay).
 */
static int uintr__watchdog_cpus(cpu_set_t *set)
{
	struct uintr__receiver *r;
	cpu_set_t main_cpus;

	if (sched_getaffinity(getpid(), sizeof(main_cpus), &main_cpus) != 0)
		return 0;
	*set = main_cpus;
	for (r = uintr__receivers; r; r = r->next)
		if (r->safepoints && r->sp_cpu >= 0)
			CPU_CLR(r->sp_cpu, set);
	if (CPU_COUNT(set) == 0)
		*set = main_cpus;
	return 1;
}

static void *uintr__watchdog(void *arg)
{
	uint64_t next = 0, last = 0, interval = 0;
	unsigned int placed = ~0u;

	(void)arg;
	/* A sleep of 10 us must not become 60 (the default slack, 50 us). */
	prctl(PR_SET_TIMERSLACK, 1ul, 0ul, 0ul, 0ul);
	prctl(PR_SET_NAME, (unsigned long)"uintr-watchdog", 0ul, 0ul, 0ul);
	atomic_store(&uintr__wd_started, 1);
	uintr__futex_wake(&uintr__wd_started);
	for (;;) {
		struct uintr__receiver *r;
		uint64_t now = uintr__mono_ns(), period = UINT64_MAX, confirm, next_scan;
		uint32_t kick;
		int again = 0, place = 0;
		cpu_set_t cpus;

		uintr__lock_unmasked();
		kick = atomic_load(&uintr__wd_kick);
		if (!uintr__sp_receivers) {
			uintr__wd_running = 0;
			uintr__unlock_unmasked();
			return NULL;
		}
		if (placed != uintr__sp_generation) {
			placed = uintr__sp_generation;
			place = uintr__watchdog_cpus(&cpus);
		}
		for (r = uintr__receivers; r; r = r->next)
			if (r->safepoints && r->sp_deadline_ns / 2 < period)
				period = r->sp_deadline_ns / 2;
		if (period < UINTR__WATCHDOG_MIN_PERIOD_NS)
			period = UINTR__WATCHDOG_MIN_PERIOD_NS;
		/* The interval we really get between scans: an average of
		 * the last ones (a kick's early scan included), never taken
		 * as shorter than the period asked for. */
		if (last && now > last)
			interval = interval ? (3 * interval + (now - last)) / 4 : now - last;
		next_scan = now + (interval > period ? interval : period);
		confirm = period / 2 < UINTR__WATCHDOG_CONFIRM_NS ? period / 2
								  : UINTR__WATCHDOG_CONFIRM_NS;
		for (r = uintr__receivers; r; r = r->next)
			if (r->safepoints) {
				r->wd_confirm = uintr__watch_one(r, now, last, next_scan, 0);
				again |= r->wd_confirm;
			}
		uintr__unlock_unmasked();
		if (place)
			sched_setaffinity(0, sizeof(cpus), &cpus);
		if (again) {
			/* The second look, before the next scan (see above). */
			uint64_t at = now + confirm, t;

			while ((t = uintr__mono_ns()) < at)
				uintr__arch_cpu_relax();
			uintr__lock_unmasked();
			for (r = uintr__receivers; r; r = r->next)
				if (r->safepoints && r->wd_confirm) {
					r->wd_confirm = 0;
					uintr__watch_one(r, t, now, next_scan, confirm);
				}
			uintr__unlock_unmasked();
		}
		last = now;
		/* Periodic scans, each `period` after the last; a kick (the
		 * futex word changed) makes the next one at once. */
		now = uintr__mono_ns();
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
	uintr__sp_generation++;
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
	int err = 0, sp_cpu;

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
	{
		/* The one CPU this thread is pinned to, if it is: the
		 * watchdog keeps off it (uintr__watchdog_cpus). */
		cpu_set_t mine;

		sp_cpu = -1;
		if (sched_getaffinity(0, sizeof(mine), &mine) == 0 && CPU_COUNT(&mine) == 1)
			for (int c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &mine))
					sp_cpu = c;
	}
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
			r->sp_cpu = -2; /* placed below */
			r->wd_since = 0;
			r->sp_deadline_ns = 0; /* kicks the watchdog below */
			uintr__sp_receivers++;
		}
	}
	if (!err) {
		if (r->sp_cpu != sp_cpu) {
			r->sp_cpu = sp_cpu;
			uintr__sp_generation++;
			uintr__watchdog_kick(); /* to place itself again */
		}
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
