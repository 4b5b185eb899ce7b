/*
 * What the library reads from the environment, and what it tells the user
 * on stderr (uintr(7) ENVIRONMENT).
 *
 * Every variable has one validator here, shared with uintrstat (which
 * checks the environment of the processes it shows).  A value the library
 * cannot honour is named, once per process, in a line on stderr: the user
 * set it and is not getting what it asked for, which no errno can say.
 *
 * UINTR_DEBUG=1 adds the reasons a receiver is not being interrupted
 * (uintr__debug_check): in a user-space implementation a running
 * receiver is interrupted by a signal (uintr(7), "Differences from the
 * RFC kernel"), so a thread that blocks it, or a program that took the
 * signal's disposition away from the library, gets no interrupt while it
 * runs, and nothing else would say so.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uintr-int.h"

/* uintr_wait's poll phase is at most this long from the environment: a
 * longer one is a typo more often than a wish (uintr_set_wait_spin takes
 * any value). */
#define UINTR__ENV_WAIT_SPIN_MAX 10000000000ull

int uintr__debug;

/* The message buffer: a handful of appends, then one write(2).  No stdio,
 * so that the check in uintr_stui stays async-signal-safe. */
struct uintr__msg {
	char buf[512];
	size_t n;
};

static void uintr__msg_str(struct uintr__msg *m, const char *s)
{
	while (*s && m->n < sizeof(m->buf) - 1)
		m->buf[m->n++] = *s++;
}

static void uintr__msg_int(struct uintr__msg *m, long long v)
{
	char tmp[24];
	int i = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;

	if (v < 0)
		uintr__msg_str(m, "-");
	do
		tmp[i++] = (char)('0' + u % 10);
	while ((u /= 10) && i < (int)sizeof(tmp));
	while (i > 0 && m->n < sizeof(m->buf) - 1)
		m->buf[m->n++] = tmp[--i];
}

static void uintr__msg_write(struct uintr__msg *m)
{
	ssize_t w;
	size_t off = 0;

	m->buf[m->n++] = '\n';
	while (off < m->n && ((w = write(STDERR_FILENO, m->buf + off, m->n - off)) > 0))
		off += (size_t)w;
}

/* "57 (SIGRTMAX-7)": the number and its name relative to SIGRTMIN/MAX. */
static void uintr__msg_signal(struct uintr__msg *m, int signo)
{
	uintr__msg_int(m, signo);
	uintr__msg_str(m, " (SIGRT");
	if (SIGRTMAX - signo <= signo - SIGRTMIN) {
		uintr__msg_str(m, "MAX");
		if (signo != SIGRTMAX)
			uintr__msg_int(m, signo - SIGRTMAX);
	} else {
		uintr__msg_str(m, "MIN+");
		uintr__msg_int(m, signo - SIGRTMIN);
	}
	uintr__msg_str(m, ")");
}

int uintr__env_signal(const char *value, int *signo, char *why, size_t len)
{
	char *end;
	long v;

	*signo = SIGRTMAX - 7;
	if (!value || !*value)
		return 0;
	v = strtol(value, &end, 10);
	if (*end != '\0' || end == value || *value == '+' || *value == ' ') {
		snprintf(why, len, "not a decimal signal number");
		return -1;
	}
	if (v < SIGRTMIN || v > SIGRTMAX) {
		snprintf(why, len, "not a real-time signal: the range is %d (SIGRTMIN) to %d (SIGRTMAX)",
			 SIGRTMIN, SIGRTMAX);
		return -1;
	}
	*signo = (int)v;
	return 0;
}

int uintr__env_wait_spin(const char *value, uint64_t *ns, char *why, size_t len)
{
	unsigned long long v;
	char *end;

	*ns = UINTR__DEFAULT_WAIT_SPIN_NS;
	if (!value || !*value)
		return 0;
	errno = 0;
	v = strtoull(value, &end, 10);
	if (*value < '0' || *value > '9' || *end != '\0') {
		snprintf(why, len, "not a decimal number of nanoseconds");
		return -1;
	}
	if (errno == ERANGE || v > UINTR__ENV_WAIT_SPIN_MAX) {
		snprintf(why, len, "more than %llu ns (10 s)", UINTR__ENV_WAIT_SPIN_MAX);
		return -1;
	}
	*ns = v;
	return 0;
}

/* UINTR_SAFEPOINT_DEADLINE_NS: the fallback deadline of the instrumented
 * state (safepoint.c) for uintr_set_safepoints(UINTR_SAFEPOINT_DEFAULT, 0).
 * 0 is no deadline (it would mean "leave the state"); above 10 s a typo. */
int uintr__env_safepoint_deadline(const char *value, uint64_t *ns, char *why, size_t len)
{
	unsigned long long v;
	char *end;

	*ns = UINTR__DEFAULT_SAFEPOINT_DEADLINE_NS;
	if (!value || !*value)
		return 0;
	errno = 0;
	v = strtoull(value, &end, 10);
	if (*value < '0' || *value > '9' || *end != '\0') {
		snprintf(why, len, "not a decimal number of nanoseconds");
		return -1;
	}
	if (v == 0) {
		snprintf(why, len, "0 is not a deadline");
		return -1;
	}
	if (errno == ERANGE || v > UINTR__ENV_WAIT_SPIN_MAX) {
		snprintf(why, len, "more than %llu ns (10 s)", UINTR__ENV_WAIT_SPIN_MAX);
		return -1;
	}
	*ns = v;
	return 0;
}

int uintr__env_debug(const char *value, int *on, char *why, size_t len)
{
	*on = 0;
	if (!value || !*value || !strcmp(value, "0"))
		return 0;
	if (!strcmp(value, "1")) {
		*on = 1;
		return 0;
	}
	snprintf(why, len, "not 0 or 1");
	return -1;
}

/* "libuintr: UINTR_X=value: why; consequence", once per `once` flag. */
void uintr__env_complain(_Atomic int *once, const char *name, const char *value, const char *why,
			 const char *consequence)
{
	struct uintr__msg m = { .n = 0 };

	if (atomic_exchange(once, 1))
		return;
	uintr__msg_str(&m, "libuintr: ");
	uintr__msg_str(&m, name);
	uintr__msg_str(&m, "=");
	uintr__msg_str(&m, value);
	uintr__msg_str(&m, ": ");
	uintr__msg_str(&m, why);
	uintr__msg_str(&m, "; ");
	uintr__msg_str(&m, consequence);
	uintr__msg_str(&m, " (see uintr(7), ENVIRONMENT)");
	uintr__msg_write(&m);
}

void uintr__debug_init(void)
{
	static _Atomic int once;
	const char *env = getenv("UINTR_DEBUG");
	char why[UINTR__ENV_WHY];

	if (uintr__env_debug(env, &uintr__debug, why, sizeof(why)) != 0)
		uintr__env_complain(&once, "UINTR_DEBUG", env, why, "debug messages stay off");
}

/* Defined only where the x86-64 binary compatibility is linked in: its
 * handler runs ours, and it keeps the program from replacing either. */
extern void uintr__compat_notification(int, siginfo_t *, void *)
	__attribute__((weak, visibility("hidden")));

/* Why the calling receiver thread cannot be interrupted while it runs:
 * UINTR_STATE_SIGNAL_* bits (uintr_read_state(3)). */
unsigned int uintr__delivery_blockers(void)
{
	unsigned int why = 0;
	struct sigaction sa;
	sigset_t cur;

	if (!uintr__signo)
		return 0;
	if (pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, uintr__signo) == 1)
		why |= UINTR_STATE_SIGNAL_BLOCKED;
	if (!uintr__compat_notification && sigaction(uintr__signo, NULL, &sa) == 0 &&
	    (!(sa.sa_flags & SA_SIGINFO) || sa.sa_sigaction != uintr__signal_handler))
		why |= UINTR_STATE_SIGNAL_LOST;
	return why;
}

/* UINTR_DEBUG=1: say once per process and reason why the calling receiver
 * is not being interrupted.  `call` names where we noticed. */
void uintr__debug_check(const char *call)
{
	static _Atomic int said_blocked, said_lost;
	unsigned int why = uintr__delivery_blockers();
	struct uintr__msg m = { .n = 0 };

	if ((why & UINTR_STATE_SIGNAL_BLOCKED) && !atomic_exchange(&said_blocked, 1)) {
		uintr__msg_str(&m, "libuintr: receiver thread ");
		uintr__msg_int(&m, uintr__gettid());
		uintr__msg_str(&m, " (at ");
		uintr__msg_str(&m, call);
		uintr__msg_str(&m, ") blocks signal ");
		uintr__msg_signal(&m, uintr__signo);
		uintr__msg_str(&m, ", the notification signal: while it runs it gets no interrupt;"
				   " they wait until it unblocks that signal or calls uintr_poll or"
				   " uintr_wait (see uintr_notification_signal(3))");
		uintr__msg_write(&m);
		m.n = 0;
	}
	if ((why & UINTR_STATE_SIGNAL_LOST) && !atomic_exchange(&said_lost, 1)) {
		uintr__msg_str(&m, "libuintr: signal ");
		uintr__msg_signal(&m, uintr__signo);
		uintr__msg_str(&m, ", the notification signal, no longer runs libuintr's handler"
				   " (the program changed its disposition): running receivers get no"
				   " interrupt; leave it to the library, or move the library to another"
				   " signal with UINTR_SIGNAL (see uintr_notification_signal(3))");
		uintr__msg_write(&m);
	}
}
