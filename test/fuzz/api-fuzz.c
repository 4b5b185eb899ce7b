/*
 * libFuzzer target: random sequences of libuintr API calls against a model
 * (issue item "fuzz harness"; reference sections 2, 4.4, 5.1-5.5, 6.2).
 *
 * The input is a sequence of operations on a small world: thread slot 0 is
 * the fuzzer's own thread, slots 1 and 2 are worker threads that run the
 * calls they are given through a mailbox, so every per-thread call (handler,
 * STUI/CLUI, uintr_wait, UITT) happens on the thread it is meant for.  Any
 * slot may be a receiver and any slot a sender.  The operations: register
 * and unregister a handler (random flags, sometimes NULL), create a vector
 * fd (any u64 vector, random flags), open other kinds of fd (pipes, memfd,
 * /dev/null, eventfd, sockets, sockets with crafted messages), close and dup
 * fds (only the harness's own fds, or small numbers that are not open),
 * register and unregister senders on any of those fds or on small numbers,
 * SENDUIPI on valid, stale and bad indices (faults caught through a
 * sigsetjmp guard), STUI, CLUI, TESTUI, uintr_poll, uintr_set_polling,
 * uintr_set_wait_spin, uintr_read_state, uintr_get_stats, uintr_wait (only
 * when the model says it returns at once), and thread exit.
 *
 * After every operation the harness checks, against its model:
 *   - the return value and errno are exactly what that call must give;
 *   - SENDUIPI posted, or raised exactly SIGILL (ILL_ILLOPN) or SIGSEGV
 *     (SI_KERNEL);
 *   - every handler call that happened, on which thread, with which handler
 *     and vector, in order: coalescing (a vector posted again before it was
 *     recognized counts once), UIF, polling (SN), priority order, UIRR kept
 *     and PIR dropped at fd release, pending interrupts discarded at
 *     unregister and exit; nothing delivered that was not expected;
 *   - uintr_read_state and uintr_get_stats (thread and process) exactly.
 * Each input starts and ends with an empty world: at the end everything is
 * unregistered, closed and joined, and the number of open fds must be what
 * it was before the input.
 *
 * The notification is a signal: after an operation that may send one to
 * another thread, the harness makes every worker run a syscall (which
 * handles a pending signal on its way back) so that the model and the
 * library agree before the next operation.  Releases are done by the
 * library's watcher thread; the harness settles them after each last close.
 *
 * Environment: UINTR_FUZZ_TRACE=1 prints every operation.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uintr.h"
#include "../helpers-scm.h"

/* The library's settle step (src/vector_fd.c): completes every release
 * whose uintr_fd is gone. */
void uintr__vector_ends_settle(void);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define NSLOT 3        /* 0: the fuzzer's thread; 1, 2: workers */
#define MAXFDNUM 1024  /* fd numbers the harness can hold */
#define MAXHFD 40      /* harness fds open at once */
#define MAXOBJ 256     /* open file descriptions per input */
#define MAXRX 64       /* receiver registrations per input */
#define MAXOPS 300     /* operations per input */
#define LOGSZ 1024     /* handler log ring (per slot) */
#define RAWFDS 64      /* "random small ints" are 0..RAWFDS-1 */
#define NENT UINTR_UITT_ENTRIES

/* ---------------------------------------------------------------- model */

enum { K_UINTR = 1, K_OTHER = 2 };

struct obj {
	int kind;
	int refs;     /* harness fd numbers naming it */
	int rx;       /* K_UINTR: receiver registration */
	unsigned vec; /* K_UINTR: vector */
	int closed;   /* K_UINTR: last reference closed */
	int rel_done; /* K_UINTR: the release was processed (entries stale) */
	int ctrunc;   /* K_OTHER: forged header with more fds than a header has */
};

struct rxm {
	int slot, alive, handler, polling, on;
	uint64_t pir, uirr, live; /* live: vectors whose release is not processed */
	int vobj[UINTR_MAX_VECTORS]; /* fd of each live vector */
	unsigned long long delivered, wait_mark, notifications, spurious;
};

/* A signal queued to a worker that blocks the notification signal. */
enum { Q_NOTIF = 1, Q_HUP };
struct qsig {
	int type, id; /* Q_NOTIF: receiver registration; Q_HUP: obj */
};
#define MAXQ 512

struct call {
	int fn;
	unsigned long long a, b;
	void *p;
	long ret;
	int err;
	int sig, code; /* SENDUIPI: fault raised */
	struct uintr_state st;
	struct uintr_stats stats;
};

struct slot {
	int running;
	pthread_t th;
	_Atomic uint32_t req, done;
	struct call *call;
	int uif;
	int rx;          /* registration index or -1 */
	int uitt[NENT];  /* obj index, or -1 */
	_Atomic uint32_t nlog; /* handler calls on this thread */
	_Atomic uint16_t log[LOGSZ];
	uint32_t nexp;     /* handler calls the model expects */
	uint32_t checked;  /* handler calls compared so far */
	uint16_t exp[LOGSZ];
	int blocked;       /* the notification signal is blocked */
	int nq;
	struct qsig q[MAXQ];
	int hup_mark;      /* objs from here on may share an fd number with a
			    * closed end whose notice is still queued, or -1 */
};

static struct obj objs[MAXOBJ];
static int nobj;
static struct rxm rxs[MAXRX];
static int nrx;
static struct slot slots[NSLOT];
static int fdobj[MAXFDNUM]; /* fd number -> obj, -1 if not the harness's */
static int nhfd;
static unsigned long long tot_delivered, tot_notifications, tot_spurious; /* process */
static int uintr_signo;
static int trace;
/* Known library bugs the harness can be told to accept (UINTR_FUZZ_ALLOW,
 * comma-separated), so that fuzzing goes on past them:
 *   stale-sigsegv  SENDUIPI on a never-registered index gives SIGSEGV while
 *                  the thread's only entries are stale (released fds);
 *                  expected SIGILL, as when those entries are gone.
 *   ctrunc-emfile  uintr_register_sender/unregister_sender on a socket
 *                  holding a forged header with more than 4 fds attached
 *                  fail with EMFILE; expected EOPNOTSUPP. */
static int allow_stale_sigsegv, allow_ctrunc_emfile;

/* The operation trace of the current input, printed on failure. */
static char tracebuf[1 << 16];
static size_t tracelen;

static __thread struct slot *my_slot;
static _Atomic unsigned long long stray_deliveries;

static void tr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tr(const char *fmt, ...)
{
	va_list ap;
	char line[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (trace)
		fprintf(stderr, "%s\n", line);
	if (tracelen + (size_t)n + 2 < sizeof(tracebuf)) {
		memcpy(tracebuf + tracelen, line, (size_t)n);
		tracelen += (size_t)n;
		tracebuf[tracelen++] = '\n';
		tracebuf[tracelen] = '\0';
	}
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "==== api-fuzz: operations of this input:\n%s", tracebuf);
	fprintf(stderr, "==== api-fuzz: INVARIANT VIOLATED: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

/* ------------------------------------------------------------- handlers */

static void log_delivery(int hid, unsigned long long vector)
{
	struct slot *s = my_slot;
	uint32_t n;

	if (!s || vector >= UINTR_MAX_VECTORS) {
		atomic_fetch_add(&stray_deliveries, 1);
		return;
	}
	n = atomic_load_explicit(&s->nlog, memory_order_relaxed);
	atomic_store_explicit(&s->log[n % LOGSZ], (uint16_t)(hid << 8 | (int)vector),
			      memory_order_relaxed);
	atomic_store_explicit(&s->nlog, n + 1, memory_order_release);
}

static void handler1(struct uintr_frame *f, unsigned long long vector)
{
	(void)f;
	log_delivery(1, vector);
}

static void handler2(struct uintr_frame *f, unsigned long long vector)
{
	(void)f;
	log_delivery(2, vector);
}

/* --------------------------------------------------- guarded SENDUIPI */

static __thread sigjmp_buf *fault_jb;
static __thread volatile int fault_code;

static void fault_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!fault_jb) {
		/* A fault outside SENDUIPI: a real crash. */
		signal(sig, SIG_DFL);
		return;
	}
	fault_code = si->si_code;
	siglongjmp(*fault_jb, sig);
}

static int guarded_send(unsigned long long idx, int *code)
{
	struct sigaction sa, old_ill, old_segv;
	sigjmp_buf jb;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, &old_ill);
	sigaction(SIGSEGV, &sa, &old_segv);
	fault_code = 0;
	sig = sigsetjmp(jb, 1);
	if (sig == 0) {
		fault_jb = &jb;
		uintr_senduipi(idx);
	}
	fault_jb = NULL;
	sigaction(SIGILL, &old_ill, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	*code = fault_code;
	return sig;
}

/* ---------------------------------------------------- calls and workers */

enum {
	C_NOP, C_EXIT, C_REG, C_UNREG, C_CREATE, C_REGS, C_UNREGS, C_SEND, C_STUI, C_CLUI,
	C_TESTUI, C_POLL, C_SETPOLL, C_SPIN, C_STATE, C_STATS, C_WAIT, C_BLOCK, C_UNBLOCK,
};

static uintr_handler_t handler_of(int hid)
{
	return hid == 1 ? handler1 : hid == 2 ? handler2 : NULL;
}

static void run_call(struct call *c)
{
	errno = 0;
	c->ret = 0;
	switch (c->fn) {
	case C_NOP:
	case C_EXIT:
		break;
	case C_REG:
		c->ret = uintr_register_handler(handler_of((int)c->b), (unsigned int)c->a);
		break;
	case C_UNREG:
		c->ret = uintr_unregister_handler((unsigned int)c->a);
		break;
	case C_CREATE:
		c->ret = uintr_create_fd(c->a, (unsigned int)c->b);
		break;
	case C_REGS:
		c->ret = uintr_register_sender((int)c->a, (unsigned int)c->b);
		break;
	case C_UNREGS:
		c->ret = uintr_unregister_sender((int)c->a, (unsigned int)c->b);
		break;
	case C_SEND:
		c->sig = guarded_send(c->a, &c->code);
		break;
	case C_STUI:
		uintr_stui();
		break;
	case C_CLUI:
		uintr_clui();
		break;
	case C_TESTUI:
		c->ret = uintr_testui();
		break;
	case C_POLL:
		c->ret = uintr_poll();
		break;
	case C_SETPOLL:
		c->ret = uintr_set_polling((int)c->a);
		break;
	case C_SPIN:
		c->ret = uintr_set_wait_spin(c->a);
		break;
	case C_STATE:
		memset(&c->st, 0xa5, sizeof(c->st));
		c->ret = uintr_read_state(c->a ? &c->st : NULL);
		break;
	case C_STATS:
		memset(&c->stats, 0xa5, sizeof(c->stats));
		c->ret = uintr_get_stats(c->b ? &c->stats : NULL, (unsigned int)c->a);
		break;
	case C_WAIT:
		c->ret = uintr_wait((unsigned int)c->a);
		break;
	case C_BLOCK:
	case C_UNBLOCK: {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, uintr_signo);
		c->ret = pthread_sigmask(c->fn == C_BLOCK ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
		break;
	}
	}
	c->err = errno;
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static void *worker(void *arg)
{
	struct slot *s = arg;
	uint32_t seen = 0;

	my_slot = s;
	for (;;) {
		struct call *c;
		int fn;

		while (atomic_load(&s->req) == seen)
			futex(&s->req, FUTEX_WAIT_PRIVATE, seen, NULL);
		seen = atomic_load(&s->req);
		c = s->call;
		run_call(c);
		fn = c->fn;
		/* A signal queued to this thread before the request was
		 * posted is handled on the way back from this syscall. */
		getppid();
		atomic_store(&s->done, seen);
		futex(&s->done, FUTEX_WAKE_PRIVATE, 1, NULL);
		if (fn == C_EXIT)
			return NULL;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void exec_on(int si, struct call *c)
{
	struct slot *s = &slots[si];
	uint32_t want;
	double until;

	if (si == 0) {
		run_call(c);
		getppid();
		return;
	}
	s->call = c;
	want = atomic_fetch_add(&s->req, 1) + 1;
	futex(&s->req, FUTEX_WAKE_PRIVATE, 1, NULL);
	until = now_s() + 20.0;
	for (;;) {
		uint32_t d = atomic_load(&s->done);
		struct timespec ts = { .tv_sec = 1 };

		if (d == want)
			break;
		futex(&s->done, FUTEX_WAIT_PRIVATE, d, &ts);
		if (now_s() > until)
			fail("slot %d: call %d did not return within 20 s (blocked?)", si, c->fn);
	}
	getppid();
}

static void slot_reset(int si)
{
	struct slot *s = &slots[si];
	int i;

	s->uif = 0;
	s->rx = -1;
	for (i = 0; i < NENT; i++)
		s->uitt[i] = -1;
	atomic_store(&s->nlog, 0);
	s->nexp = 0;
	s->checked = 0;
	s->blocked = 0;
	s->nq = 0;
	s->hup_mark = -1;
}

static void ensure_thread(int si)
{
	struct slot *s = &slots[si];

	if (s->running)
		return;
	slot_reset(si);
	atomic_store(&s->req, 0);
	atomic_store(&s->done, 0);
	if (pthread_create(&s->th, NULL, worker, s) != 0)
		fail("pthread_create failed");
	s->running = 1;
}

static void sync_workers(void)
{
	int si;

	for (si = 1; si < NSLOT; si++) {
		if (slots[si].running) {
			struct call c = { .fn = C_NOP };

			exec_on(si, &c);
		}
	}
}

/* ------------------------------------------------------- model actions */

static void expect_push(int si, int hid, unsigned v)
{
	struct slot *s = &slots[si];

	s->exp[s->nexp % LOGSZ] = (uint16_t)(hid << 8 | (int)v);
	s->nexp++;
}

/* Delivery (5.3): all of UIRR, highest vector first. */
static void model_deliver(int r)
{
	struct rxm *R = &rxs[r];

	while (R->uirr) {
		unsigned v = 63u - (unsigned)__builtin_clzll(R->uirr);

		R->uirr &= ~(1ull << v);
		R->delivered++;
		tot_delivered++;
		expect_push(R->slot, R->handler, v);
	}
}

/* Notification processing (5.2): ON := 0, PIR -> UIRR, live vectors only. */
static void model_recognize(int r)
{
	struct rxm *R = &rxs[r];

	R->on = 0;
	R->uirr |= R->pir & R->live;
	R->pir = 0;
}

static void queue_signal(int si, int type, int id)
{
	struct slot *s = &slots[si];

	if (s->nq == MAXQ)
		fail("model: signal queue of slot %d full", si);
	s->q[s->nq].type = type;
	s->q[s->nq].id = id;
	s->nq++;
}

/* A notification for registration rn reaches slot si (6.2: spurious if the
 * thread is no longer that receiver). */
static void model_notification(int si, int rn)
{
	int cur = slots[si].rx;

	if (cur != rn) {
		if (cur >= 0)
			rxs[cur].spurious++;
		tot_spurious++;
		return;
	}
	rxs[cur].notifications++;
	tot_notifications++;
	model_recognize(cur);
	if (slots[si].uif)
		model_deliver(cur);
}

/* SENDUIPI to a live entry (5.1): post, and notify on ON 0 -> 1 with SN 0;
 * an unblocked receiver has processed the notification before the next
 * operation, a blocked one keeps it queued. */
static void model_post(int r, unsigned v)
{
	struct rxm *R = &rxs[r];
	uint64_t bit = 1ull << v;

	if (!R->alive || (R->pir & bit))
		return;
	R->pir |= bit;
	if (R->on || R->polling)
		return;
	R->on = 1;
	if (slots[R->slot].blocked)
		queue_signal(R->slot, Q_NOTIF, r);
	else
		model_notification(R->slot, r);
}

/* An fd's release is processed (2.3): senders through it are disconnected,
 * the vector's PIR bit is dropped (UIRR stays: delivered later). */
static void model_release_done(int o)
{
	struct obj *O = &objs[o];
	struct rxm *R = &rxs[O->rx];

	O->rel_done = 1;
	if (R->alive && R->vobj[O->vec] == o) {
		uint64_t bit = 1ull << O->vec;

		R->vobj[O->vec] = -1;
		R->live &= ~bit;
		R->pir &= ~bit;
	}
}

static int hup_queued(int si, int o)
{
	int i;

	for (i = 0; i < slots[si].nq; i++)
		if (slots[si].q[i].type == Q_HUP && slots[si].q[i].id == o)
			return 1;
	return 0;
}

/* A release processed while its notice is still queued (create_fd, or the
 * receiver's unregistration): the end's fd number may be reused by an
 * end made from now on, which the stale notice would then name. */
static void release_before_notice(int o)
{
	struct slot *s = &slots[rxs[objs[o].rx].slot];

	if (hup_queued(rxs[objs[o].rx].slot, o) && s->hup_mark < 0)
		s->hup_mark = nobj;
	model_release_done(o);
}

/* Unregistration or exit (2.2, 2.7): releases whose notice has not been
 * processed are processed now; pending interrupts are discarded. */
static void model_rx_dies(int r)
{
	struct rxm *R = &rxs[r];
	int v;

	for (v = 0; v < UINTR_MAX_VECTORS; v++) {
		int o = R->vobj[v];

		if (o >= 0 && objs[o].closed && !objs[o].rel_done)
			release_before_notice(o);
	}
	R->alive = 0;
	R->pir = R->uirr = 0;
	slots[R->slot].rx = -1;
}

/* The last reference to a uintr fd is closed: the process's watcher
 * thread releases it (no signal: issue 17), whatever the receiver thread
 * does; the harness completes the release at once, as a test would. */
static void model_close_last(int o)
{
	objs[o].closed = 1;
	uintr__vector_ends_settle();
	model_release_done(o);
}

/* Would closing the last reference of o be ambiguous for the model (a
 * queued stale notice could name its end)? */
static int close_is_ambiguous(int o)
{
	struct rxm *R;

	if (objs[o].kind != K_UINTR || objs[o].refs != 1)
		return 0;
	R = &rxs[objs[o].rx];
	return R->alive && slots[R->slot].blocked && slots[R->slot].hup_mark >= 0 &&
	       o >= slots[R->slot].hup_mark;
}

static void fd_forget(int fd)
{
	int o = fdobj[fd];

	fdobj[fd] = -1;
	nhfd--;
	if (--objs[o].refs == 0 && objs[o].kind == K_UINTR)
		model_close_last(o);
}

static int new_obj(int kind)
{
	struct obj *O = &objs[nobj];

	memset(O, 0, sizeof(*O));
	O->kind = kind;
	O->rx = -1;
	return nobj++;
}

static void fd_add(int fd, int o)
{
	if (fd < 0 || fd >= MAXFDNUM)
		fail("fd %d out of the range the harness tracks", fd);
	if (fdobj[fd] >= 0)
		fail("new fd %d is already open as a harness fd", fd);
	fdobj[fd] = o;
	objs[o].refs++;
	nhfd++;
}

static int entry_stale(int si, int i)
{
	int o = slots[si].uitt[i];

	return o >= 0 && objs[o].rel_done;
}

static int uitt_used(int si)
{
	int i, n = 0;

	for (i = 0; i < NENT; i++)
		n += slots[si].uitt[i] >= 0;
	return n;
}

static int uitt_live(int si)
{
	int i;

	for (i = 0; i < NENT; i++)
		if (slots[si].uitt[i] >= 0 && !entry_stale(si, i))
			return 1;
	return 0;
}

/* register/unregister_sender free entries whose fd was released. */
static void uitt_sweep(int si)
{
	int i;

	for (i = 0; i < NENT; i++)
		if (entry_stale(si, i))
			slots[si].uitt[i] = -1;
}

static int uitt_find(int si, int o)
{
	int i;

	for (i = 0; i < NENT; i++)
		if (slots[si].uitt[i] == o)
			return i;
	return -1;
}

/* Check every handler call since the last check against the model. */
static void check_logs(void)
{
	int si;

	for (si = 0; si < NSLOT; si++) {
		struct slot *s = &slots[si];
		uint32_t n = atomic_load_explicit(&s->nlog, memory_order_acquire);

		if (n != s->nexp)
			fail("slot %d: %u handler calls, expected %u", si, n, s->nexp);
	}
	for (si = 0; si < NSLOT; si++) {
		struct slot *s = &slots[si];
		uint32_t i;

		for (i = s->checked; i < s->nexp; i++) {
			uint16_t got = atomic_load(&s->log[i % LOGSZ]), want = s->exp[i % LOGSZ];

			if (got != want)
				fail("slot %d: handler call #%u was handler %d vector %d, "
				     "expected handler %d vector %d", si, i, got >> 8, got & 0xff,
				     want >> 8, want & 0xff);
		}
		s->checked = s->nexp;
	}
	if (atomic_load(&stray_deliveries))
		fail("%llu handler calls on a thread that is no slot, or vector >= 64",
		     (unsigned long long)atomic_load(&stray_deliveries));
	for (si = 0; si < NSLOT; si++) {
		int r = slots[si].rx;

		if (r >= 0 && slots[si].uif && rxs[r].uirr)
			fail("model: slot %d has UIF=1 and UIRR %#llx", si,
			     (unsigned long long)rxs[r].uirr);
	}
}

static const char *ename(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case ENOSPC: return "ENOSPC";
	case EBADF: return "EBADF";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EISCONN: return "EISCONN";
	case ESHUTDOWN: return "ESHUTDOWN";
	case EINTR: return "EINTR";
	case EMFILE: return "EMFILE";
	case ENOMEM: return "ENOMEM";
	default: return strerror(e);
	}
}

/* What an fd number is to the harness. */
enum { F_HARNESS, F_CLOSED, F_FOREIGN };

/* Accept EMFILE where ctrunc-emfile is allowed. */
static int alt_err(int fd, int cls, int err, const struct call *c)
{
	if (allow_ctrunc_emfile && err == EOPNOTSUPP && cls == F_HARNESS && objs[fdobj[fd]].ctrunc &&
	    c->ret == -1 && c->err == EMFILE)
		return EMFILE;
	return err;
}

/* A call that must fail with err (0: must succeed, with ret >= 0). */
static void expect_result(const char *what, const struct call *c, int err)
{
	if (err == 0) {
		if (c->ret < 0)
			fail("%s returned %ld errno %s, expected success", what, c->ret,
			     ename(c->err));
	} else if (c->ret != -1 || c->err != err) {
		fail("%s returned %ld errno %s, expected -1 errno %s", what, c->ret, ename(c->err),
		     ename(err));
	}
}

/* ------------------------------------------------------- the operations */

struct input {
	const uint8_t *p;
	size_t n, i;
};

static int take(struct input *in)
{
	return in->i < in->n ? in->p[in->i++] : -1;
}

static unsigned take0(struct input *in)
{
	int b = take(in);

	return b < 0 ? 0u : (unsigned)b;
}

static unsigned int pick_flags(struct input *in)
{
	unsigned b = take0(in);

	if (b < 0xe0)
		return 0;
	switch (b & 7) {
	case 0: return 1;
	case 1: return 2;
	case 2: return 0x80000000u;
	case 3: return ~0u;
	case 4: return UINTR_STATS_PROCESS << 1;
	default: return (take0(in) << 8 | take0(in)) | 1u;
	}
}

static unsigned long long pick_vector(struct input *in)
{
	unsigned b = take0(in);

	if (b < 128)
		return b % 8;
	if (b < 232)
		return b % 64;
	switch (b & 7) {
	case 0: return 64;
	case 1: return 65;
	case 2: return 255;
	case 3: return 1ull << 32;
	case 4: return ~0ull;
	case 5: return 1ull << 63;
	case 6: return 63;
	default: return 128;
	}
}

static int fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static int nth_harness_fd(unsigned k)
{
	int fd;

	if (nhfd == 0)
		return -1;
	k %= (unsigned)nhfd;
	for (fd = 0; fd < MAXFDNUM; fd++)
		if (fdobj[fd] >= 0 && k-- == 0)
			return fd;
	return -1;
}

/* A harness fd (mostly) or a small number; *cls says which. */
static int pick_fd(struct input *in, int *cls)
{
	unsigned b = take0(in);
	int fd;

	if (b < 0xd0 && nhfd > 0) {
		fd = nth_harness_fd(b);
	} else {
		fd = (int)(b % RAWFDS);
		if (b == 0xff)
			fd = -1 - (int)(take0(in) & 3); /* negative numbers */
	}
	if (fd >= 0 && fd < MAXFDNUM && fdobj[fd] >= 0)
		*cls = F_HARNESS;
	else if (fd < 0 || !fd_is_open(fd))
		*cls = F_CLOSED;
	else
		*cls = F_FOREIGN;
	return fd;
}

static int pick_slot(struct input *in)
{
	return (int)(take0(in) % NSLOT);
}

static void op_register(struct input *in)
{
	int si = pick_slot(in);
	unsigned int flags = pick_flags(in);
	int hid = (int)(take0(in) % 5); /* 0: NULL */
	struct call c = { .fn = C_REG, .a = flags };
	int err;

	if (hid > 2)
		hid = hid - 2;
	c.b = (unsigned long long)hid;
	ensure_thread(si);
	err = flags ? EINVAL : hid == 0 ? EFAULT : slots[si].rx >= 0 ? EBUSY : 0;
	if (err == 0 && nrx == MAXRX)
		return;
	tr("slot %d: uintr_register_handler(%s, %#x)", si, hid ? (hid == 1 ? "h1" : "h2") : "NULL",
	   flags);
	exec_on(si, &c);
	expect_result("uintr_register_handler", &c, err);
	if (err == 0) {
		struct rxm *R = &rxs[nrx];
		int v;

		memset(R, 0, sizeof(*R));
		R->slot = si;
		R->alive = 1;
		R->handler = hid;
		for (v = 0; v < UINTR_MAX_VECTORS; v++)
			R->vobj[v] = -1;
		slots[si].rx = nrx++;
	}
}

static void op_unregister(struct input *in)
{
	int si = pick_slot(in);
	unsigned int flags = pick_flags(in);
	struct call c = { .fn = C_UNREG, .a = flags };
	int err;

	ensure_thread(si);
	err = flags || slots[si].rx < 0 ? EINVAL : 0;
	tr("slot %d: uintr_unregister_handler(%#x)", si, flags);
	exec_on(si, &c);
	expect_result("uintr_unregister_handler", &c, err);
	if (err == 0)
		model_rx_dies(slots[si].rx);
}

static void op_create(struct input *in)
{
	int si = pick_slot(in);
	unsigned long long vec = pick_vector(in);
	unsigned int flags = pick_flags(in);
	struct call c = { .fn = C_CREATE, .a = vec, .b = flags };
	int r, err, fd, fl;

	ensure_thread(si);
	r = slots[si].rx;
	err = flags || r < 0 ? EINVAL : vec >= UINTR_MAX_VECTORS ? ENOSPC :
	      rxs[r].vobj[vec] >= 0 && !objs[rxs[r].vobj[vec]].closed ? EBUSY : 0;
	if (err == 0 && (nhfd >= MAXHFD || nobj >= MAXOBJ))
		return;
	tr("slot %d: uintr_create_fd(%llu, %#x)", si, vec, flags);
	exec_on(si, &c);
	expect_result("uintr_create_fd", &c, err);
	if (err)
		return;
	/* A closed fd whose notice is not processed yet: released now. */
	if (rxs[r].vobj[vec] >= 0)
		release_before_notice(rxs[r].vobj[vec]);
	fd = (int)c.ret;
	fl = fcntl(fd, F_GETFD);
	if (fl < 0 || !(fl & FD_CLOEXEC))
		fail("uintr_create_fd: fd %d is not close-on-exec", fd);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || !(fl & O_NONBLOCK))
		fail("uintr_create_fd: fd %d is not O_NONBLOCK", fd);
	{
		int o = new_obj(K_UINTR);

		objs[o].rx = r;
		objs[o].vec = (unsigned)vec;
		fd_add(fd, o);
		rxs[r].vobj[vec] = o;
		rxs[r].live |= 1ull << vec;
	}
	tr("  -> fd %d", fd);
}

static void op_close(struct input *in)
{
	int cls, fd = pick_fd(in, &cls), ret;

	if (cls == F_FOREIGN)
		return; /* not ours: never closed */
	if (cls == F_HARNESS && close_is_ambiguous(fdobj[fd]))
		return;
	tr("close(%d)%s", fd, cls == F_CLOSED ? " (not open)" : "");
	errno = 0;
	ret = close(fd);
	if (cls == F_CLOSED) {
		if (ret != -1 || errno != EBADF)
			fail("close(%d) of a closed number returned %d errno %s", fd, ret,
			     ename(errno));
		return;
	}
	if (ret != 0)
		fail("close(%d) failed: %s", fd, ename(errno));
	fd_forget(fd);
	sync_workers();
}

static void op_dup(struct input *in)
{
	int cls, fd = pick_fd(in, &cls), target, tcls, ret;
	unsigned mode = take0(in);

	if (cls != F_HARNESS || nhfd >= MAXHFD)
		return;
	if (mode < 0x80) {
		ret = dup(fd);
		tr("dup(%d) -> %d", fd, ret);
		if (ret < 0)
			fail("dup(%d) failed: %s", fd, ename(errno));
		fd_add(ret, fdobj[fd]);
		return;
	}
	/* dup2 onto a harness fd (closing it) or onto a closed number. */
	target = pick_fd(in, &tcls);
	if (target < 0 || tcls == F_FOREIGN)
		return;
	if (tcls == F_HARNESS && fdobj[target] != fdobj[fd] && close_is_ambiguous(fdobj[target]))
		return;
	tr("dup2(%d, %d)", fd, target);
	ret = dup2(fd, target);
	if (ret != target)
		fail("dup2(%d, %d) returned %d: %s", fd, target, ret, ename(errno));
	if (target == fd)
		return;
	{
		int o = fdobj[fd];

		objs[o].refs++; /* hold it while the target is forgotten */
		if (tcls == F_HARNESS)
			fd_forget(target);
		objs[o].refs--;
		fd_add(target, o);
	}
	sync_workers();
}

/* A page-sized memfd, sealed as the library seals its own (or not). */
static int page_memfd(unsigned how)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (how & 1)
		(void)ftruncate(fd, 4096);
	if (how & 2)
		(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	if (how & 4)
		(void)fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE);
	return fd;
}

/* A SEQPACKET socket whose queue holds one crafted message: bytes from the
 * input (a header-sized message with the right magic if the input says
 * so) and up to 5 memfds. */
static int forged_socket(struct input *in, int *ctrunc)
{
	unsigned char msgbuf[48];
	int memfds[5], nfds = (int)(take0(in) % 6), sv[2], i;
	size_t len = take0(in) % sizeof(msgbuf);
	unsigned how = take0(in);

	for (i = 0; i < (int)sizeof(msgbuf); i++)
		msgbuf[i] = (unsigned char)take0(in);
	if (how & 0x80) {
		/* "uintrfd!" magic, the token tag, our pid as tgid. */
		uint64_t magic = 0x75696e7472666421ull;
		uint64_t token = 0x5549000000000000ull | ((uint64_t)msgbuf[8] << 8);
		int32_t tgid = getpid();

		len = 32;
		memcpy(msgbuf, &magic, 8);
		memcpy(msgbuf + 8, &token, 8);
		msgbuf[16] &= 63;
		memcpy(msgbuf + 24, &tgid, 4);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		fail("socketpair: %s", ename(errno));
	for (i = 0; i < nfds; i++)
		memfds[i] = page_memfd(how);
	if (t_sendmsg_fds(sv[0], msgbuf, len, memfds, nfds) != (ssize_t)len)
		fail("forged sendmsg: %s", ename(errno));
	{
		uint64_t magic = 0x75696e7472666421ull;

		*ctrunc = len == 32 && nfds > 4 && memcmp(msgbuf, &magic, 8) == 0;
	}
	for (i = 0; i < nfds; i++)
		close(memfds[i]);
	close(sv[0]);
	tr("  forged message: %zu bytes, %d memfds, how %#x", len, nfds, how);
	return sv[1];
}

static void op_open_other(struct input *in)
{
	unsigned kind = take0(in) % 9;
	int fds[2] = { -1, -1 }, n = 1, i, ctrunc = 0;

	if (nhfd + 2 > MAXHFD || nobj + 2 > MAXOBJ)
		return;
	switch (kind) {
	case 0:
		if (pipe2(fds, O_CLOEXEC) != 0)
			fail("pipe2: %s", ename(errno));
		n = 2;
		break;
	case 1:
		fds[0] = page_memfd(take0(in));
		break;
	case 2:
		fds[0] = open("/dev/null", O_RDWR | O_CLOEXEC);
		break;
	case 3:
		fds[0] = eventfd(0, EFD_CLOEXEC);
		break;
	case 4:
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
			fail("socketpair: %s", ename(errno));
		n = 2;
		break;
	case 5:
		fds[0] = forged_socket(in, &ctrunc);
		break;
	case 6:
	case 7:
		if (socketpair(AF_UNIX, (kind == 6 ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0,
			       fds) != 0)
			fail("socketpair: %s", ename(errno));
		n = 2;
		break;
	default:
		fds[0] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		break;
	}
	tr("open other kind %u -> %d %d", kind, fds[0], n == 2 ? fds[1] : -1);
	for (i = 0; i < n; i++) {
		if (fds[i] < 0)
			fail("opening a test fd of kind %u failed: %s", kind, ename(errno));
		int o = new_obj(K_OTHER);

		objs[o].ctrunc = ctrunc;
		fd_add(fds[i], o);
	}
}

/* The result uintr_register/unregister_sender must give for fd of class
 * cls, before anything that depends on the UITT. */
static int fd_class_error(int fd, int cls)
{
	if (cls == F_CLOSED)
		return EBADF;
	if (cls == F_FOREIGN || objs[fdobj[fd]].kind != K_UINTR)
		return EOPNOTSUPP;
	return 0;
}

static void op_register_sender(struct input *in)
{
	int si = pick_slot(in), cls, fd = pick_fd(in, &cls), err, o = -1, i, idx = -1;
	unsigned int flags = pick_flags(in);
	struct call c = { .fn = C_REGS, .a = (unsigned long long)(unsigned)fd, .b = flags };

	ensure_thread(si);
	err = flags ? EINVAL : fd_class_error(fd, cls);
	if (err == 0) {
		o = fdobj[fd];
		uitt_sweep(si);
		if (uitt_find(si, o) >= 0)
			err = EISCONN;
		else if (!rxs[objs[o].rx].alive)
			err = ESHUTDOWN;
		else {
			for (i = 0; i < NENT && idx < 0; i++)
				if (slots[si].uitt[i] < 0)
					idx = i;
			if (idx < 0)
				err = ENOSPC;
		}
	}
	tr("slot %d: uintr_register_sender(%d, %#x)", si, fd, flags);
	exec_on(si, &c);
	expect_result("uintr_register_sender", &c, alt_err(fd, cls, err, &c));
	if (err == 0) {
		if (c.ret != idx)
			fail("uintr_register_sender returned index %ld, expected %d (lowest free)",
			     c.ret, idx);
		slots[si].uitt[idx] = o;
		tr("  -> index %d", idx);
	}
}

static void op_unregister_sender(struct input *in)
{
	int si = pick_slot(in), cls, fd = pick_fd(in, &cls), err, idx = -1;
	unsigned int flags = pick_flags(in);
	struct call c = { .fn = C_UNREGS, .a = (unsigned long long)(unsigned)fd, .b = flags };

	ensure_thread(si);
	err = flags ? EINVAL : fd_class_error(fd, cls);
	if (err == 0) {
		uitt_sweep(si);
		idx = uitt_find(si, fdobj[fd]);
		if (idx < 0)
			err = EINVAL;
	}
	tr("slot %d: uintr_unregister_sender(%d, %#x)", si, fd, flags);
	exec_on(si, &c);
	expect_result("uintr_unregister_sender", &c, alt_err(fd, cls, err, &c));
	if (err == 0)
		slots[si].uitt[idx] = -1;
}

static void op_send(struct input *in)
{
	int si = pick_slot(in), want, used, i, o;
	unsigned b = take0(in);
	unsigned long long idx;
	struct call c = { .fn = C_SEND };

	ensure_thread(si);
	used = uitt_used(si);
	if (b < 0xc0 && used > 0) {
		unsigned k = b % (unsigned)used;

		for (i = 0; i < NENT; i++)
			if (slots[si].uitt[i] >= 0 && k-- == 0)
				break;
		idx = (unsigned long long)i;
	} else if (b < 0xf8) {
		idx = b % 8;
	} else {
		static const unsigned long long odd[] = { 255, 256, 257, 1ull << 32, ~0ull,
							  1ull << 63, 4096, 511 };
		idx = odd[b & 7];
	}
	c.a = idx;
	/* #UD when no entry is valid; #GP for a bad index or a stale entry
	 * while some entry is still valid. */
	if (used == 0)
		want = SIGILL;
	else if (idx >= NENT || slots[si].uitt[idx] < 0)
		want = !uitt_live(si) ? SIGILL : SIGSEGV;
	else if (entry_stale(si, (int)idx))
		want = uitt_live(si) ? SIGSEGV : SIGILL;
	else
		want = 0;
	tr("slot %d: uintr_senduipi(%llu)", si, idx);
	exec_on(si, &c);
	if (allow_stale_sigsegv && want == SIGILL && c.sig == SIGSEGV && used > 0 &&
	    (idx >= NENT || slots[si].uitt[idx] < 0)) {
		want = SIGSEGV;
	}
	if (c.sig != want)
		fail("uintr_senduipi(%llu) on slot %d raised signal %d (code %d), expected %d", idx,
		     si, c.sig, c.code, want);
#if defined(__x86_64__)
	if (want == SIGILL && c.code != ILL_ILLOPN)
		fail("SIGILL with si_code %d, expected ILL_ILLOPN", c.code);
	if (want == SIGSEGV && c.code != SI_KERNEL)
		fail("SIGSEGV with si_code %d, expected SI_KERNEL", c.code);
#endif
	if (want == 0) {
		o = slots[si].uitt[idx];
		model_post(objs[o].rx, objs[o].vec);
	}
	sync_workers();
}

static void op_uif(struct input *in, int fn)
{
	int si = pick_slot(in), r;
	struct call c = { .fn = fn };

	ensure_thread(si);
	tr("slot %d: %s", si, fn == C_STUI ? "stui" : fn == C_CLUI ? "clui" : "testui");
	exec_on(si, &c);
	r = slots[si].rx;
	if (fn == C_STUI) {
		slots[si].uif = 1;
		if (r >= 0)
			model_deliver(r);
	} else if (fn == C_CLUI) {
		slots[si].uif = 0;
	} else if (c.ret != slots[si].uif) {
		fail("uintr_testui() returned %ld, expected %d", c.ret, slots[si].uif);
	}
}

static void op_poll(struct input *in)
{
	int si = pick_slot(in), r, want = 0;
	struct call c = { .fn = C_POLL };

	ensure_thread(si);
	r = slots[si].rx;
	tr("slot %d: uintr_poll()", si);
	exec_on(si, &c);
	if (r < 0) {
		expect_result("uintr_poll", &c, EOPNOTSUPP);
		return;
	}
	if (rxs[r].pir || rxs[r].uirr) {
		model_recognize(r);
		if (slots[si].uif) {
			want = __builtin_popcountll(rxs[r].uirr);
			model_deliver(r);
		}
	}
	if (c.ret != want)
		fail("uintr_poll() returned %ld, expected %d", c.ret, want);
}

static void op_set_polling(struct input *in)
{
	int si = pick_slot(in), r;
	unsigned b = take0(in);
	int on = b < 0x80 ? 0 : b < 0xf0 ? 1 : (int)(0x80000000u | b);
	struct call c = { .fn = C_SETPOLL, .a = (unsigned long long)(unsigned)on };

	ensure_thread(si);
	r = slots[si].rx;
	tr("slot %d: uintr_set_polling(%d)", si, on);
	exec_on(si, &c);
	if (r < 0) {
		expect_result("uintr_set_polling", &c, EOPNOTSUPP);
		return;
	}
	if (c.ret != 0)
		fail("uintr_set_polling(%d) returned %ld errno %s", on, c.ret, ename(c.err));
	rxs[r].polling = on != 0;
	if (!on) {
		model_recognize(r);
		if (slots[si].uif)
			model_deliver(r);
	}
}

static void op_set_spin(struct input *in)
{
	static const unsigned long long ns[] = { 0, 1, 1000, 30000 };
	int si = pick_slot(in);
	struct call c = { .fn = C_SPIN, .a = ns[take0(in) & 3] };

	ensure_thread(si);
	tr("slot %d: uintr_set_wait_spin(%llu)", si, c.a);
	exec_on(si, &c);
	expect_result("uintr_set_wait_spin", &c, slots[si].rx < 0 ? EOPNOTSUPP : 0);
}

static void op_read_state(struct input *in)
{
	int si = pick_slot(in), r;
	int null = take0(in) >= 0xf0;
	struct call c = { .fn = C_STATE, .a = !null };
	const struct uintr_state *s = &c.st;
	int live;

	ensure_thread(si);
	tr("slot %d: uintr_read_state(%s)", si, null ? "NULL" : "&st");
	exec_on(si, &c);
	if (null) {
		expect_result("uintr_read_state(NULL)", &c, EFAULT);
		return;
	}
	expect_result("uintr_read_state", &c, 0);
	r = slots[si].rx;
	live = uitt_live(si);
	if (s->handler != (r >= 0 ? (unsigned long long)(uintptr_t)handler_of(rxs[r].handler) : 0) ||
	    s->stack_adjust != (r >= 0 ? 128u : 0u) || s->uinv != (r >= 0 ? 0xec : 0) ||
	    (s->upid_addr != 0) != (r >= 0) || s->uirr != (r >= 0 ? rxs[r].uirr : 0) ||
	    s->uitt_size != (live ? 256u : 0u) || (s->uitt_addr & 1) != (unsigned)live ||
	    (!live && s->uitt_addr != 0) || s->uif_byte != (slots[si].uif ? UINTR_STATE_UIF : 0) ||
	    s->reserved[0] ||
	    s->blocked != (r >= 0 && slots[si].blocked ? UINTR_STATE_SIGNAL_BLOCKED : 0))
		fail("uintr_read_state on slot %d: handler %#llx stack_adjust %llu uinv %#x upid %#llx "
		     "uirr %#llx uitt_size %u uitt_addr %#llx uif %#x blocked %#x; expected receiver %d "
		     "uirr %#llx sender %d uif %d blocked %d", si, s->handler, s->stack_adjust,
		     s->uinv, s->upid_addr, s->uirr, s->uitt_size, s->uitt_addr, s->uif_byte,
		     s->blocked, r, r >= 0 ? (unsigned long long)rxs[r].uirr : 0ull, live,
		     slots[si].uif, slots[si].blocked);
}

static void op_get_stats(struct input *in)
{
	int si = pick_slot(in), r;
	unsigned b = take0(in);
	unsigned int flags = b < 0x80 ? 0 : b < 0xf0 ? UINTR_STATS_PROCESS : (b & 0xf) | 2;
	int null = take0(in) >= 0xf0, err;
	struct call c = { .fn = C_STATS, .a = flags, .b = !null };
	unsigned long long wd, wn, ws;

	ensure_thread(si);
	r = slots[si].rx;
	err = (flags & ~UINTR_STATS_PROCESS) ? EINVAL : null ? EFAULT :
	      (!(flags & UINTR_STATS_PROCESS) && r < 0) ? EOPNOTSUPP : 0;
	tr("slot %d: uintr_get_stats(%s, %#x)", si, null ? "NULL" : "&st", flags);
	exec_on(si, &c);
	expect_result("uintr_get_stats", &c, err);
	if (err)
		return;
	if (flags & UINTR_STATS_PROCESS) {
		wd = tot_delivered;
		wn = tot_notifications;
		ws = tot_spurious;
	} else {
		wd = rxs[r].delivered;
		wn = rxs[r].notifications;
		ws = rxs[r].spurious;
	}
	if (c.stats.delivered != wd || c.stats.notifications != wn || c.stats.spurious != ws)
		fail("uintr_get_stats(%#x) on slot %d: notifications %llu delivered %llu spurious "
		     "%llu, expected %llu %llu %llu", flags, si, c.stats.notifications,
		     c.stats.delivered, c.stats.spurious, wn, wd, ws);
}

static void op_wait(struct input *in)
{
	int si = pick_slot(in), r;
	unsigned int flags = pick_flags(in);
	struct call c = { .fn = C_WAIT, .a = flags };
	struct rxm *R;

	ensure_thread(si);
	r = slots[si].rx;
	if (flags || r < 0) {
		tr("slot %d: uintr_wait(%#x)", si, flags);
		exec_on(si, &c);
		expect_result("uintr_wait", &c, flags ? EINVAL : EOPNOTSUPP);
		return;
	}
	R = &rxs[r];
	/* It returns at once only if something is posted or pending (2.6: a
	 * delivery before the call does not count, issue 12). */
	if (!R->pir && !R->uirr)
		return;
	tr("slot %d: uintr_wait(0)", si);
	exec_on(si, &c);
	expect_result("uintr_wait", &c, EINTR);
	model_recognize(r);
	if (slots[si].uif)
		model_deliver(r);
	R->wait_mark = R->delivered;
}

/*
 * Unblock: every queued signal is delivered before the thread returns to
 * user code.  The handler keeps its own signal blocked while it runs (no
 * SA_NODEFER, issue 17 fault 1), so the signals are taken one after the
 * other, in queue order (one real-time signal number).
 */
static void unblock_slot(int si)
{
	struct call c = { .fn = C_UNBLOCK };
	struct slot *s = &slots[si];
	int i;

	tr("slot %d: unblock the notification signal (%d queued)", si, s->nq);
	exec_on(si, &c);
	if (c.ret != 0)
		fail("pthread_sigmask: %ld", c.ret);
	for (i = 0; i < s->nq; i++) {
		int id = s->q[i].id;

		if (s->q[i].type == Q_NOTIF) {
			model_notification(si, id);
		} else if (!objs[id].rel_done && rxs[objs[id].rx].alive && s->rx == objs[id].rx) {
			model_release_done(id);
		}
	}
	s->nq = 0;
	s->blocked = 0;
	s->hup_mark = -1;
}

/* A worker blocks or unblocks the notification signal (reference 6.2). */
static void op_block(struct input *in)
{
	int si = 1 + (int)(take0(in) % (NSLOT - 1));
	struct call c = { .fn = C_BLOCK };

	ensure_thread(si);
	if (slots[si].blocked) {
		unblock_slot(si);
		return;
	}
	tr("slot %d: block the notification signal", si);
	exec_on(si, &c);
	if (c.ret != 0)
		fail("pthread_sigmask: %ld", c.ret);
	slots[si].blocked = 1;
}

static void op_exit(struct input *in)
{
	int si = 1 + (int)(take0(in) % (NSLOT - 1));
	struct call c = { .fn = C_EXIT };
	struct slot *s = &slots[si];

	if (!s->running)
		return;
	tr("slot %d: thread exits", si);
	exec_on(si, &c);
	if (pthread_join(s->th, NULL) != 0)
		fail("pthread_join failed");
	s->running = 0;
	if (s->rx >= 0)
		model_rx_dies(s->rx);
	check_logs();
	slot_reset(si);
}

/* ------------------------------------------------------------- the world */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		fail("opendir /proc/self/fd: %s", ename(errno));
	while ((e = readdir(d)) != NULL) {
		char path[300], target[64];
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		/* The library's release watcher keeps one epoll for the
		 * process's life (src/vector_fd.c): not a leak. */
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			if (strcmp(target, "anon_inode:[eventpoll]") == 0)
				continue;
		}
		n++;
	}
	closedir(d);
	return n - 1; /* the directory's own fd */
}

static void world_begin(void)
{
	int i;

	nobj = 0;
	nrx = 0;
	nhfd = 0;
	for (i = 0; i < MAXFDNUM; i++)
		fdobj[i] = -1;
	tracelen = 0;
	tracebuf[0] = '\0';
	/* Slot 0 keeps its thread; its state carries over (and is empty). */
	slots[0].rx = -1;
	slots[0].nexp = 0;
	slots[0].checked = 0;
	atomic_store(&slots[0].nlog, 0);
}

/*
 * Back to an empty world: every fd closed (releases), every receiver
 * unregistered, every worker joined; then one short-lived receiver lets
 * slot 0 sweep the entries left stale in its UITT, and the library reap
 * the ends of fds that were released after their receiver was gone.
 */
static void world_end(void)
{
	struct call c;
	int fd, si, sweeper_fd, i;

	tr("teardown");
	for (si = 1; si < NSLOT; si++)
		if (slots[si].running && slots[si].blocked)
			unblock_slot(si);
	check_logs();
	for (fd = 0; fd < MAXFDNUM; fd++) {
		if (fdobj[fd] >= 0) {
			if (close(fd) != 0)
				fail("teardown close(%d): %s", fd, ename(errno));
			fd_forget(fd);
		}
	}
	sync_workers();
	check_logs();
	for (si = 0; si < NSLOT; si++) {
		if (slots[si].running && slots[si].rx >= 0) {
			c = (struct call){ .fn = C_UNREG };
			exec_on(si, &c);
			expect_result("teardown uintr_unregister_handler", &c, 0);
			model_rx_dies(slots[si].rx);
		}
	}
	c = (struct call){ .fn = C_CLUI };
	exec_on(0, &c);
	slots[0].uif = 0;
	for (si = 1; si < NSLOT; si++) {
		if (slots[si].running) {
			c = (struct call){ .fn = C_EXIT };
			exec_on(si, &c);
			pthread_join(slots[si].th, NULL);
			slots[si].running = 0;
		}
	}
	check_logs();

	/* The sweeper. */
	ensure_thread(1);
	c = (struct call){ .fn = C_REG, .b = 1 };
	exec_on(1, &c);
	expect_result("sweeper uintr_register_handler", &c, 0);
	c = (struct call){ .fn = C_CREATE, .a = 0 };
	exec_on(1, &c);
	expect_result("sweeper uintr_create_fd", &c, 0);
	sweeper_fd = (int)c.ret;
	c = (struct call){ .fn = C_UNREGS, .a = (unsigned)sweeper_fd };
	exec_on(0, &c);
	expect_result("sweeper uintr_unregister_sender", &c, EINVAL);
	for (i = 0; i < NENT; i++)
		slots[0].uitt[i] = -1;
	close(sweeper_fd);
	sync_workers();
	c = (struct call){ .fn = C_UNREG };
	exec_on(1, &c);
	expect_result("sweeper uintr_unregister_handler", &c, 0);
	c = (struct call){ .fn = C_EXIT };
	exec_on(1, &c);
	pthread_join(slots[1].th, NULL);
	slots[1].running = 0;
	if (atomic_load(&slots[1].nlog) != 0)
		fail("sweeper receiver got %u handler calls", atomic_load(&slots[1].nlog));

	/* Slot 0 is no receiver and no sender now. */
	c = (struct call){ .fn = C_STATE, .a = 1 };
	exec_on(0, &c);
	if (c.ret != 0 || c.st.handler || c.st.uitt_size || c.st.uitt_addr || c.st.uif_byte ||
	    c.st.upid_addr)
		fail("after teardown slot 0 state: handler %#llx uitt_size %u uitt_addr %#llx "
		     "uif %#x", c.st.handler, c.st.uitt_size, c.st.uitt_addr, c.st.uif_byte);
	c = (struct call){ .fn = C_STATS, .a = UINTR_STATS_PROCESS, .b = 1 };
	exec_on(0, &c);
	if (c.ret != 0 || c.stats.delivered != tot_delivered ||
	    c.stats.notifications != tot_notifications || c.stats.spurious != tot_spurious)
		fail("process stats after teardown: notifications %llu delivered %llu spurious "
		     "%llu, expected %llu %llu %llu", c.stats.notifications, c.stats.delivered,
		     c.stats.spurious, tot_notifications, tot_delivered, tot_spurious);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = getenv("UINTR_FUZZ_TRACE");
	const char *allow = getenv("UINTR_FUZZ_ALLOW");
	int si;

	(void)argc;
	(void)argv;
	trace = t && *t == '1';
	allow_stale_sigsegv = allow && strstr(allow, "stale-sigsegv") != NULL;
	allow_ctrunc_emfile = allow && strstr(allow, "ctrunc-emfile") != NULL;
	uintr_signo = uintr_notification_signal();
	if (uintr_signo <= 0)
		fail("uintr_notification_signal() = %d", uintr_signo);
	my_slot = &slots[0];
	for (si = 0; si < NSLOT; si++)
		slot_reset(si);
	slots[0].running = 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { .p = data, .n = size };
	int fds_before, fds_after, ops = 0;

	world_begin();
	fds_before = count_fds();
	while (in.i < in.n && ops++ < MAXOPS) {
		switch (take0(&in) % 23) {
		case 0: case 1: op_register(&in); break;
		case 2: op_unregister(&in); break;
		case 3: case 4: op_create(&in); break;
		case 5: op_close(&in); break;
		case 6: op_dup(&in); break;
		case 7: op_open_other(&in); break;
		case 8: case 9: op_register_sender(&in); break;
		case 10: op_unregister_sender(&in); break;
		case 11: case 12: case 13: op_send(&in); break;
		case 14: op_uif(&in, C_STUI); break;
		case 15: op_uif(&in, take0(&in) & 1 ? C_CLUI : C_TESTUI); break;
		case 16: op_poll(&in); break;
		case 17: op_set_polling(&in); break;
		case 18: take0(&in) & 1 ? op_set_spin(&in) : op_get_stats(&in); break;
		case 19: op_read_state(&in); break;
		case 20: op_wait(&in); break;
		case 21: op_exit(&in); break;
		default: op_block(&in); break;
		}
		check_logs();
	}
	world_end();
	fds_after = count_fds();
	if (fds_after != fds_before)
		fail("%d fds open after teardown, %d before the input", fds_after, fds_before);
	return 0;
}
