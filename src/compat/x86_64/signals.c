/*
 * Keeping the emulation's signals usable, and the program's own uses of
 * them working.
 *
 * SIGILL (the instructions) and SIGSYS (the syscalls) need our handlers,
 * and must never be blocked: the kernel forces a fault signal that is
 * blocked (reset to its default action: the process dies).  So, while the
 * emulation is active:
 *   - sigaction(), signal(), bsd_signal(), sysv_signal() on SIGILL/SIGSYS
 *     record the program's action instead of installing it; we call it for
 *     every SIGILL/SIGSYS that is not an emulated instruction or syscall,
 *     as the kernel would (its mask, SA_SIGINFO, SA_RESETHAND), and for
 *     SIG_DFL/SIG_IGN the kernel takes the default action, at the same
 *     instruction, with the same siginfo;
 *   - on the engine's notification signal they set the action the engine
 *     passes every non-notification to (uintr__previous_action);
 *   - sigprocmask(), pthread_sigmask(), sigsuspend() and the sa_mask of
 *     every sigaction() never block SIGILL or SIGSYS.  What the program
 *     asked for is remembered per thread and shown in the old masks those
 *     calls return; a fault while the program "blocks" SIGILL/SIGSYS gets
 *     the kernel's treatment of a blocked fault: the default action.
 * What goes around these (a raw rt_sigaction/rt_sigprocmask syscall,
 * setcontext, the masks of ppoll/pselect/epoll_pwait) is not covered.
 *
 * The real functions: the next definition (dlsym RTLD_NEXT) in the shared
 * library; glibc's internal names in a static link, where our strong
 * definitions replace glibc's weak ones.
 */
#define _GNU_SOURCE
#include <string.h>
#ifndef UINTR_COMPAT_STATIC
#include <dlfcn.h>
#endif

#include "compat.h"

typedef int (*uintr__sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*uintr__sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*uintr__sigsuspend_fn)(const sigset_t *);

#ifdef UINTR_COMPAT_STATIC
int __sigaction(int, const struct sigaction *, struct sigaction *);
int __sigprocmask(int, const sigset_t *, sigset_t *);
int __pthread_sigmask(int, const sigset_t *, sigset_t *);
int __sigsuspend(const sigset_t *);

void uintr__compat_resolve(void)
{
}

#define uintr__real_sigaction __sigaction
#define uintr__real_sigprocmask __sigprocmask
#define uintr__real_pthread_sigmask __pthread_sigmask
#define uintr__real_sigsuspend __sigsuspend
#else
static uintr__sigaction_fn uintr__next_sigaction;
static uintr__sigmask_fn uintr__next_sigprocmask, uintr__next_pthread_sigmask;
static uintr__sigsuspend_fn uintr__next_sigsuspend;

/* Once from the constructor; again lazily if another library's
 * constructor calls us before ours ran. */
void uintr__compat_resolve(void)
{
	uintr__next_sigaction = (uintr__sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	uintr__next_sigprocmask = (uintr__sigmask_fn)dlsym(RTLD_NEXT, "sigprocmask");
	uintr__next_pthread_sigmask = (uintr__sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
	uintr__next_sigsuspend = (uintr__sigsuspend_fn)dlsym(RTLD_NEXT, "sigsuspend");
}

static int uintr__real_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
	if (!uintr__next_sigaction)
		uintr__compat_resolve();
	return uintr__next_sigaction(signo, act, old);
}

static int uintr__real_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (!uintr__next_sigprocmask)
		uintr__compat_resolve();
	return uintr__next_sigprocmask(how, set, old);
}

static int uintr__real_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (!uintr__next_pthread_sigmask)
		uintr__compat_resolve();
	return uintr__next_pthread_sigmask(how, set, old);
}

static int uintr__real_sigsuspend(const sigset_t *set)
{
	if (!uintr__next_sigsuspend)
		uintr__compat_resolve();
	return uintr__next_sigsuspend(set);
}
#endif

int uintr__compat_real_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
	return uintr__real_sigaction(signo, act, old);
}

int uintr__compat_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return uintr__real_pthread_sigmask(how, set, old);
}

void uintr__compat_keep_unblocked(sigset_t *set)
{
	sigdelset(set, SIGILL);
	sigdelset(set, SIGSYS);
}

/* Every signal but the synchronous faults (blocking those forces them). */
void uintr__compat_all_signals(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGSYS);
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGFPE);
	sigdelset(set, SIGTRAP);
}

/*
 * SIGILL (bit 0) and SIGSYS (bit 1) as this thread's program believes it
 * blocked them (sigprocmask/pthread_sigmask only: a new thread starts
 * with none, and a handler's sa_mask is not counted).
 */
static UINTR__TLS unsigned int uintr__program_blocked;

static unsigned int uintr__blocked_bits(const sigset_t *set)
{
	return (sigismember(set, SIGILL) == 1 ? 1u : 0u) | (sigismember(set, SIGSYS) == 1 ? 2u : 0u);
}

static void uintr__add_blocked(sigset_t *set, unsigned int bits)
{
	if (bits & 1u)
		sigaddset(set, SIGILL);
	if (bits & 2u)
		sigaddset(set, SIGSYS);
}

/*
 * The program's actions for SIGILL and SIGSYS.  Read from signal handlers
 * while another thread may write: each write fills the next of a few
 * copies and then publishes its index.
 */
#define UINTR__ACTION_COPIES 8
struct uintr__program_action {
	_Atomic unsigned int current, next;
	struct sigaction copy[UINTR__ACTION_COPIES];
};
static struct uintr__program_action uintr__program[2];

static struct uintr__program_action *uintr__kept(int signo)
{
	if (!uintr__compat_active)
		return NULL;
	if (signo == SIGILL)
		return &uintr__program[0];
	if (signo == SIGSYS)
		return &uintr__program[1];
	return NULL;
}

static void uintr__program_get(struct uintr__program_action *p, struct sigaction *out)
{
	*out = p->copy[atomic_load(&p->current) % UINTR__ACTION_COPIES];
}

static void uintr__program_set(struct uintr__program_action *p, const struct sigaction *act)
{
	unsigned int i = (atomic_fetch_add(&p->next, 1) + 1) % UINTR__ACTION_COPIES;

	p->copy[i] = *act;
	uintr__compat_keep_unblocked(&p->copy[i].sa_mask);
	atomic_store(&p->current, i);
}

/* Install our handlers, keeping what the program had (init.c, once). */
int uintr__compat_take_signals(void)
{
	struct sigaction sa, old;
	sigset_t all;

	uintr__compat_all_signals(&all);
	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;

	/* An instruction is atomic: every signal waits until it is done. */
	if (uintr__real_sigaction(SIGILL, NULL, &old) != 0)
		return -1;
	uintr__program_set(&uintr__program[0], &old);
	sa.sa_sigaction = uintr__compat_sigill;
	sa.sa_mask = all;
	if (uintr__real_sigaction(SIGILL, &sa, NULL) != 0)
		return -1;

	/* So is a syscall (uintr_wait lets the program's signals in while it
	 * blocks: syscall.c). */
	if (uintr__real_sigaction(SIGSYS, NULL, &old) != 0)
		return -1;
	uintr__program_set(&uintr__program[1], &old);
	sa.sa_sigaction = uintr__compat_sigsys;
	if (uintr__real_sigaction(SIGSYS, &sa, NULL) != 0)
		return -1;

	/* The notification signal: the engine's handler behind ours. */
	if (uintr__compat_notify_signo > 0) {
		sa.sa_sigaction = uintr__compat_notification;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sa.sa_mask = all;
		if (uintr__real_sigaction(uintr__compat_notify_signo, &sa, NULL) != 0)
			return -1;
	}
	return 0;
}

/*
 * Default action of a SIGILL/SIGSYS the program does not handle: core
 * dump.  Let the kernel take it, at the interrupted instruction.
 */
static void uintr__compat_default(int signo, siginfo_t *si, ucontext_t *uc)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	uintr__real_sigaction(signo, &sa, NULL);
	uintr__compat_raise(uc, signo, si);
}

/* A SIGILL or SIGSYS that is not ours: the program's action, as the
 * kernel would run it. */
void uintr__compat_chain(int signo, siginfo_t *si, ucontext_t *uc)
{
	struct uintr__program_action *p = uintr__kept(signo);
	struct sigaction act, dfl;
	sigset_t mask, saved;
	int fault = si->si_code > 0; /* made by the kernel (SI_FROMKERNEL) */
	int blocked;

	if (!p) {
		uintr__compat_default(signo, si, uc);
		return;
	}
	uintr__program_get(p, &act);
	blocked = (uintr__program_blocked & (signo == SIGILL ? 1u : 2u)) != 0;
	if (act.sa_handler == SIG_IGN && !fault)
		return;
	/* A fault that is blocked or ignored: forced, the default action. */
	if (act.sa_handler == SIG_DFL || act.sa_handler == SIG_IGN || (fault && blocked)) {
		uintr__compat_default(signo, si, uc);
		return;
	}
	if (act.sa_flags & SA_RESETHAND) {
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		uintr__program_set(p, &dfl);
	}
	/* The kernel's mask for a handler: the interrupted one plus sa_mask
	 * (not the signal itself: SIGILL/SIGSYS stay deliverable). */
	mask = uc->uc_sigmask;
	sigorset(&mask, &mask, &act.sa_mask);
	uintr__compat_keep_unblocked(&mask);
	uintr__real_pthread_sigmask(SIG_SETMASK, &mask, &saved);
	if (act.sa_flags & SA_SIGINFO)
		act.sa_sigaction(signo, si, uc);
	else
		act.sa_handler(signo);
	uintr__real_pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

/* The interposed functions. */

UINTR__EXPORT int sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
	struct uintr__program_action *p;
	struct sigaction copy;

	if (uintr__compat_active && act &&
	    (sigismember(&act->sa_mask, SIGILL) == 1 || sigismember(&act->sa_mask, SIGSYS) == 1)) {
		copy = *act;
		uintr__compat_keep_unblocked(&copy.sa_mask);
		act = &copy;
	}
	p = uintr__kept(signo);
	if (p) {
		if (old)
			uintr__program_get(p, old);
		if (act)
			uintr__program_set(p, act);
		return 0;
	}
	if (uintr__compat_active && signo > 0 && signo == uintr__compat_notify_signo) {
		sigset_t block, saved;

		/* The engine reads it in its handler: not while we write. */
		sigemptyset(&block);
		sigaddset(&block, signo);
		uintr__real_pthread_sigmask(SIG_BLOCK, &block, &saved);
		if (old)
			*old = uintr__previous_action;
		if (act)
			uintr__previous_action = *act;
		uintr__real_pthread_sigmask(SIG_SETMASK, &saved, NULL);
		return 0;
	}
	return uintr__real_sigaction(signo, act, old);
}

static sighandler_t uintr__compat_signal(int signo, sighandler_t handler, int flags, int self_mask)
{
	struct sigaction sa, old;

	if (handler == SIG_ERR || signo <= 0 || signo >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (self_mask)
		sigaddset(&sa.sa_mask, signo);
	if (sigaction(signo, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* BSD semantics (glibc's signal): restart, the signal blocked in its handler. */
UINTR__EXPORT sighandler_t signal(int signo, sighandler_t handler)
{
	return uintr__compat_signal(signo, handler, SA_RESTART, 1);
}

/* Still in glibc's ABI; no longer declared by <signal.h> under _GNU_SOURCE. */
sighandler_t bsd_signal(int signo, sighandler_t handler);

UINTR__EXPORT sighandler_t bsd_signal(int signo, sighandler_t handler)
{
	return uintr__compat_signal(signo, handler, SA_RESTART, 1);
}

/* System V semantics: one shot, not blocked in its handler. */
UINTR__EXPORT sighandler_t sysv_signal(int signo, sighandler_t handler)
{
	return uintr__compat_signal(signo, handler, SA_RESETHAND | SA_NODEFER, 0);
}

UINTR__EXPORT sighandler_t __sysv_signal(int signo, sighandler_t handler)
{
	return uintr__compat_signal(signo, handler, SA_RESETHAND | SA_NODEFER, 0);
}

static const sigset_t *uintr__unblockable(int how, const sigset_t *set, sigset_t *copy)
{
	if (!uintr__compat_active || !set || how == SIG_UNBLOCK ||
	    (sigismember(set, SIGILL) != 1 && sigismember(set, SIGSYS) != 1))
		return set;
	*copy = *set;
	uintr__compat_keep_unblocked(copy);
	return copy;
}

/* What a successful mask change means for the program's own view. */
static void uintr__remember_mask(int how, unsigned int bits, int had_set, unsigned int before,
				 sigset_t *old)
{
	if (!uintr__compat_active)
		return;
	if (old)
		uintr__add_blocked(old, before);
	if (!had_set)
		return;
	if (how == SIG_BLOCK)
		uintr__program_blocked = before | bits;
	else if (how == SIG_UNBLOCK)
		uintr__program_blocked = before & ~bits;
	else if (how == SIG_SETMASK)
		uintr__program_blocked = bits;
}

UINTR__EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	unsigned int before = uintr__program_blocked, bits = set ? uintr__blocked_bits(set) : 0;
	sigset_t copy;
	int ret = uintr__real_sigprocmask(how, uintr__unblockable(how, set, &copy), old);

	if (ret == 0)
		uintr__remember_mask(how, bits, set != NULL, before, old);
	return ret;
}

UINTR__EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	unsigned int before = uintr__program_blocked, bits = set ? uintr__blocked_bits(set) : 0;
	sigset_t copy;
	int ret = uintr__real_pthread_sigmask(how, uintr__unblockable(how, set, &copy), old);

	if (ret == 0)
		uintr__remember_mask(how, bits, set != NULL, before, old);
	return ret;
}

UINTR__EXPORT int sigsuspend(const sigset_t *set)
{
	sigset_t copy;

	return uintr__real_sigsuspend(uintr__unblockable(SIG_SETMASK, set, &copy));
}
