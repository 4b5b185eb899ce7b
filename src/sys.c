/*
 * The kernel interface of the library: the few syscalls it makes, the
 * notification signal, process-wide setup, fork and thread-exit hooks, and
 * the faults SENDUIPI raises (reference 2.4: #UD -> SIGILL, #GP -> SIGSEGV).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uintr-int.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd that names one thread */
#endif

UINTR__TLS struct uintr__thread uintr__self;
int uintr__signo;
_Atomic uint64_t uintr__process_spurious;
_Atomic uint64_t uintr__process_notifications;
_Atomic uint64_t uintr__process_delivered;
struct sigaction uintr__previous_action;

static pthread_mutex_t uintr__mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t uintr__setup_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int uintr__setup_done;
static int uintr__exit_key_made, uintr__atfork_made;
static pthread_key_t uintr__exit_key;
static int uintr__pidfd_thread_works = 1;
static int uintr__pidfd_siginfo_works = 1;

pid_t uintr__gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* A pidfd for one thread, or -1 where the kernel predates PIDFD_THREAD. */
/* CPU time a thread of this process has used (ns), or 0 if the kernel
 * will not say: the thread CPU clock of `tid`, clockid ((~tid) << 3) | 6
 * (CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED, clock_getcpuclockid(3)). */
uint64_t uintr__thread_cpu_ns(pid_t tid)
{
	struct timespec ts;

	if (clock_gettime((clockid_t)((~(unsigned int)tid << 3) | 6u), &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int uintr__pidfd_open_thread(pid_t tid)
{
	int fd;

	if (!uintr__pidfd_thread_works)
		return -1;
	fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd < 0 && (errno == EINVAL || errno == ENOSYS))
		uintr__pidfd_thread_works = 0;
	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

/*
 * The notification "IPI": a queued signal to exactly the receiver thread,
 * carrying the receiver's token so that the handler can tell a current
 * notification from a stale one (reference 6.2) and from the program's
 * own uses of the signal.
 */
int uintr__send_notification(const struct uintr__target *t)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = uintr__signo;
	si.si_code = SI_QUEUE;
	si.si_pid = t->sender_tgid;
	si.si_uid = t->sender_uid;
	si.si_value.sival_ptr = (void *)(uintptr_t)t->token;
	if (t->pidfd >= 0) {
		if (uintr__pidfd_siginfo_works) {
			int ret = (int)syscall(SYS_pidfd_send_signal, t->pidfd, uintr__signo, &si, 0);

			if (ret == 0 || errno != EINVAL)
				return ret;
			/* qemu-user does not translate a siginfo here. */
			uintr__pidfd_siginfo_works = 0;
		}
		/* Fallback: the thread must still be alive just before. */
		if (syscall(SYS_pidfd_send_signal, t->pidfd, 0, NULL, 0) != 0)
			return -1;
	}
	return (int)syscall(SYS_rt_tgsigqueueinfo, t->tgid, t->tid, uintr__signo, &si);
}

/* Futexes live in memfd pages that other processes map: never PRIVATE.
 * Sleeps while *word == expected, for at most timeout_ns. */
int uintr__futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000ull),
		.tv_nsec = (long)(timeout_ns % 1000000000ull),
	};

	return (int)syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, NULL, 0);
}

int uintr__futex_wake(_Atomic uint32_t *word)
{
	return (int)syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/*
 * Raise SIGILL or SIGSEGV on this thread as a faulting instruction does,
 * for architectures without a real faulting instruction to borrow (see
 * arch/arch.h): like the kernel's force_sig(), a blocked or ignored signal
 * is reset to its default action and unblocked, so it cannot be skipped.
 */
void uintr__raise_fault(int signo, int code)
{
	struct sigaction sa;
	sigset_t set, cur;
	siginfo_t si;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	if (sigaction(signo, NULL, &sa) == 0 &&
	    (sa.sa_handler == SIG_IGN || sigismember(&cur, signo))) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(signo, &sa, NULL);
	}
	sigemptyset(&set);
	sigaddset(&set, signo);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);

	memset(&si, 0, sizeof(si));
	si.si_signo = signo;
	si.si_code = code;
	si.si_addr = signo == SIGILL ? __builtin_return_address(0) : NULL;
	syscall(SYS_rt_tgsigqueueinfo, getpid(), uintr__gettid(), signo, &si);
}

/* Field 22 of /proc/<tgid>/task/<tid>/stat: when the thread started;
 * *state gets field 3 (R, S, ..., Z for a zombie). */
uint64_t uintr__thread_start_time(pid_t tgid, pid_t tid, char *state)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)tgid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p || p[1] != ' ')
		return 0;
	*state = p[2];
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* On pidfs (Linux 6.9) a pidfd's inode names one struct pid for good;
 * elsewhere all pidfds share one inode and the number proves nothing. */
uint64_t uintr__pidfd_ino(int pidfd)
{
	struct stat st;

	if (pidfd < 0 || fstat(pidfd, &st) != 0)
		return 0;
	return (uint64_t)st.st_ino;
}

/* The process lock of the slow paths.  Our signal stays blocked while it
 * is held: a handler that unregisters must not find its own thread
 * holding the lock. */
static UINTR__TLS sigset_t uintr__lock_mask;
/* Nonzero from just before this thread takes the lock until just after it
 * drops it: a signal handler on this thread that finds it set must not
 * take the lock (uintr__lock_held_here). */
static UINTR__TLS volatile sig_atomic_t uintr__lock_depth;

void uintr__lock(void)
{
	sigset_t old;

	uintr__lock_depth++;
	uintr__block_signal(&old);
	pthread_mutex_lock(&uintr__mutex);
	uintr__lock_mask = old;
}

void uintr__unlock(void)
{
	sigset_t old = uintr__lock_mask;

	pthread_mutex_unlock(&uintr__mutex);
	uintr__restore_signal(&old);
	uintr__lock_depth--;
}

int uintr__lock_held_here(void)
{
	return uintr__lock_depth != 0;
}

/* The lock for a library thread that blocks every signal (the safepoint
 * watchdog): no handler can run on it, so no masking, two syscalls
 * fewer per scan. */
void uintr__lock_unmasked(void)
{
	uintr__lock_depth++;
	pthread_mutex_lock(&uintr__mutex);
}

void uintr__unlock_unmasked(void)
{
	pthread_mutex_unlock(&uintr__mutex);
	uintr__lock_depth--;
}

/* Slow paths that change receiver state keep our own signal out. */
void uintr__block_signal(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	if (uintr__signo)
		sigaddset(&set, uintr__signo);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

/* Block or unblock the notification signal on this thread (delivery.c:
 * only around handlers that ran STUI inside the signal handler). */
void uintr__set_signal_blocked(int blocked)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, uintr__signo);
	pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

void uintr__restore_signal(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void uintr__thread_exit(void *arg)
{
	(void)arg;
	uintr__receiver_exit();
	uintr__sender_exit();
}

/* Call once per thread that registers anything: thread exit then runs
 * uintr__thread_exit (reference 2.7: exit_thread -> uintr_free). */
int uintr__watch_thread_exit(void)
{
	if (uintr__self.registered_exit)
		return 0;
	if (pthread_setspecific(uintr__exit_key, &uintr__self) != 0)
		return uintr__fail(ENOMEM);
	uintr__self.registered_exit = 1;
	return 0;
}

/* fork: the child inherits fds only (RFC patch "Clean up uintr task fork and
 * exit paths"): no handler, no UITT, UIF = 0.  The library's private fds
 * and mappings of the parent's receivers are dropped. */
static void uintr__fork_prepare(void)
{
	pthread_mutex_lock(&uintr__mutex);
}

static void uintr__fork_parent(void)
{
	pthread_mutex_unlock(&uintr__mutex);
}

static void uintr__fork_child(void)
{
	struct uintr__receiver *r, *next;
	struct uintr__uitt *u = uintr__self.uitt;

	uintr__vector_ends_forget();
	for (r = uintr__receivers; r; r = next) {
		next = r->next;
		uintr__receiver_free(r);
	}
	uintr__receivers = NULL;
	if (u) {
		struct uintr__target *t, *tn;

		for (t = u->targets; t; t = tn) {
			tn = t->next;
			uintr__target_unmap(t);
		}
		free(u);
	}
	uintr__self.receiver = NULL;
	uintr__receivers_reclaim();
	atomic_store(&uintr__self.busy, 0);
	uintr__self.uitt = NULL;
	uintr__sender_fork_child();
	uintr__safepoint_fork_child();
	atomic_store(&uintr__self.uif, 0);
	pthread_mutex_init(&uintr__mutex, NULL);
	pthread_mutex_unlock(&uintr__mutex);
}

static int uintr__choose_signal(void)
{
	static _Atomic int complained;
	const char *env = getenv("UINTR_SIGNAL");
	char why[UINTR__ENV_WHY];
	int signo;

	if (uintr__env_signal(env, &signo, why, sizeof(why)) != 0) {
		uintr__env_complain(&complained, "UINTR_SIGNAL", env, why,
				    "uintr_register_handler, uintr_register_sender and "
				    "uintr_notification_signal fail with EINVAL");
		return -1;
	}
	return signo;
}

/* Returns 0 or an errno; on failure nothing is left half done, and the
 * next registration tries again. */
static int uintr__setup_once(void)
{
	struct sigaction sa;
	int signo;

	uintr__debug_init();
	signo = uintr__choose_signal();
	if (signo < 0)
		return EINVAL;
	if (!uintr__exit_key_made) {
		if (pthread_key_create(&uintr__exit_key, uintr__thread_exit) != 0)
			return ENOMEM;
		uintr__exit_key_made = 1;
	}
	if (!uintr__atfork_made) {
		if (pthread_atfork(uintr__fork_prepare, uintr__fork_parent, uintr__fork_child) != 0)
			return ENOMEM;
		uintr__atfork_made = 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = uintr__signal_handler;
	/* No SA_NODEFER: while the handler runs, the kernel keeps this signal
	 * blocked, so a notification that lands after a delivery has set UIF
	 * back to 1 waits for sigreturn and starts on a fresh frame, as UIRET
	 * pops the frame before the next delivery on hardware (5.4).  Posts
	 * made meanwhile are still recognized at once by the delivery loop
	 * (delivery.c), and a handler that runs STUI unblocks the signal for
	 * its own nested interrupts (uintr_stui).  SA_RESTART: a restartable
	 * syscall in the receiver resumes after delivery (6.1). */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, &uintr__previous_action) != 0)
		return errno;
	uintr__signo = signo;
	return 0;
}

/* Install the process-wide pieces at the first registration. */
int uintr__setup_process(void)
{
	int err = 0;

	if (atomic_load(&uintr__setup_done))
		return 0;
	pthread_mutex_lock(&uintr__setup_mutex);
	if (!atomic_load(&uintr__setup_done)) {
		err = uintr__setup_once();
		if (!err)
			atomic_store(&uintr__setup_done, 1);
	}
	pthread_mutex_unlock(&uintr__setup_mutex);
	return err ? uintr__fail(err) : 0;
}

UINTR__EXPORT int uintr_notification_signal(void)
{
	if (uintr__setup_process() != 0)
		return -1;
	return uintr__signo;
}
