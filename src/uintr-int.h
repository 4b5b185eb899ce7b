/*
 * libuintr internals: the software UINTR machine.
 *
 * Where each part lives:
 *   receiver.c   uintr_register_handler / unregister, thread exit, state (2.1, 2.2, 2.7)
 *   vector_fd.c  uintr_create_fd, the uintr_fd object and its release (2.3)
 *   sender.c     UITT, uintr_register_sender / unregister, SENDUIPI = post + notify (2.4, 2.5, 5.1)
 *   delivery.c   notification processing and delivery, STUI/CLUI/TESTUI (5.2, 5.3, 5.5)
 *   wait.c       uintr_wait, uintr_wait_since_last (2.6, 6.3)
 *   later.c      the later ABI (Intel's uintr-linux-kernel branch, 3) onto the above
 *   timer.c      timer vectors: timers that post a vector of a receiver (ext.)
 *   loop.c       the event-loop state: uintr_loop_fd, uintr_loop_drain (libuintr's)
 *   safepoint.c  the instrumented state: uintr_set_safepoints, uintr_safepoint,
 *                the watchdog that notifies what a safepoint did not see (libuintr's)
 *   sys.c        the few syscalls, fault raising (SIGILL/SIGSEGV), fork handling
 *   arch/<arch>  what differs per architecture (frame, flags, cpu_relax)
 *
 * Memory shared between processes: a receiver owns two memfd pages.
 *   - the UPID page (struct uintr__upid): written by every sender (post).
 *   - the info page (struct uintr__info): written only by the receiver and
 *     sealed F_SEAL_FUTURE_WRITE, so senders map it read-only.  It holds the
 *     receiver's identity, liveness and per-vector fd generations.
 * A uintr_fd is one end of an AF_UNIX SOCK_SEQPACKET pair; the receiver keeps
 * the other end.  The uintr_fd end's receive queue holds one header message
 * carrying both memfds; a sender peeks it (MSG_PEEK) to register.  When the
 * last reference to the uintr_fd is closed, in any process, the kernel
 * signals the receiver's end (O_ASYNC, POLL_HUP): that is our release().
 */
#ifndef UINTR_INT_H
#define UINTR_INT_H

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "uintr.h"
#include "arch/arch.h"

#define UINTR__EXPORT __attribute__((visibility("default")))
#define UINTR__TLS __thread __attribute__((tls_model("initial-exec")))

/* UPID status bits (reference 4.1).  The status is 32 bits so that uintr_wait
 * can futex-wait on it. */
#define UINTR__UPID_ON  0x1u  /* outstanding notification */
#define UINTR__UPID_SN  0x2u  /* suppress notification */
/* Library-private (a reserved bit on hardware): the receiver is gone.  Set
 * with SN by unregister/exit; the receiver's own code then never clears SN
 * again (wait.c), so no notification can reach a thread that is no longer
 * this receiver (reference 8: lifetime). */
#define UINTR__UPID_DEAD 0x4u
/* Library-private (reserved bits on hardware): bumped by every run of the
 * notification handler, so that a sender's "set ON after my signal" CAS
 * (sender.c) fails once its signal has been consumed.  13 bits: it would
 * take 8192 handler runs while one sender sits between its status load
 * and that CAS to fool it. */
#define UINTR__UPID_EPOCH_SHIFT 3
#define UINTR__UPID_EPOCH_MASK  (0x1fffu << UINTR__UPID_EPOCH_SHIFT)
#define UINTR__UPID_NV_SHIFT 16
#define UINTR__UPID_NV_MASK  (0xffu << UINTR__UPID_NV_SHIFT)
/*
 * Notification vectors.  As in the RFC (6.3), NV says how the receiver is
 * to be notified: 0xEC while it runs (our carrier: a thread-directed
 * signal), 0xEB while it is blocked in uintr_wait (a futex wake).  0xEA is
 * ours (no RFC counterpart): the receiver is in the event-loop state
 * (loop.c) and is notified by making its eventfd readable.
 */
#define UINTR__NV_RUNNING 0xecu
#define UINTR__NV_BLOCKED 0xebu
#define UINTR__NV_LOOP    0xeau
#define UINTR__NV(v) ((uint32_t)(v) << UINTR__UPID_NV_SHIFT)

/* The RFC programs UISTACKADJUST := 128, the ABI red zone (2.1). */
#define UINTR__DEFAULT_STACK_ADJUST 128

/* The UPID: the only memory every sender writes.  Hardware keeps NDST here;
 * our destination (the receiver thread) is in the info page instead. */
struct uintr__upid {
	_Atomic uint32_t status; /* ON, SN, NV */
	uint32_t reserved;
	_Atomic uint64_t pir;    /* posted-interrupt requests, bit v = vector v */
} __attribute__((aligned(64)));

#define UINTR__INFO_MAGIC 0x75696e7472696e66ull /* "uintrinf" */

/* Receiver-owned, read-only to senders. */
struct uintr__info {
	uint64_t magic;
	uint64_t token;          /* unique per registration (RFC: per UPID) */
	int32_t tgid;
	int32_t tid;
	uint64_t start_time;     /* the receiver thread's start, /proc .../stat field 22 */
	uint64_t pid_ino;        /* inode of a pidfd of the receiver thread (pidfs:
				  * unique per thread for the system's lifetime), or 0 */
	_Atomic uint32_t active; /* RFC receiver_active */
	_Atomic uint32_t vector_gen[UINTR_MAX_VECTORS]; /* bumped at fd release */
	_Atomic uint64_t registered; /* vectors with a live uintr_fd */
	/* Written by the receiver at every notification and delivery: on a
	 * line of their own, so that a send, which reads vector_gen[v], never
	 * reads a line the receiver keeps writing (vector_gen[53..63] shared
	 * one with these counters: 1 transfer per post). */
	_Alignas(64) _Atomic uint64_t notifications;
	_Atomic uint64_t delivered;
	_Atomic uint64_t spurious;
	_Atomic uint64_t uirr;       /* recognized, not yet delivered (private to the
				      * receiver; here so that uintrstat can read it) */
	uint64_t upid_ino;           /* inode of the UPID memfd, for uintrstat */
	int32_t signo;               /* the notification signal, for uintrstat */
};

/* Header message queued in every uintr_fd (SCM_RIGHTS: upid memfd, info memfd). */
#define UINTR__FD_MAGIC 0x75696e7472666421ull /* "uintrfd!" */
struct uintr__fd_header {
	uint64_t magic;
	uint64_t token;
	uint32_t vector;
	uint32_t gen;           /* info->vector_gen[vector] when this fd was made */
	int32_t tgid;
	int32_t tid;
};

/* Signal values that mark our notifications (si_code SI_QUEUE). */
#define UINTR__TOKEN_TAG  0x5549000000000000ull /* "UI" in the top 16 bits */
#define UINTR__TOKEN_MASK 0xffff000000000000ull

/* Timer vectors per process (timer.c). */
#define UINTR__TIMERS 256

/* A receiver thread (private memory). */
struct uintr__receiver {
	uintr_handler_t handler;
	struct uintr__upid *upid;
	struct uintr__info *info;     /* writable mapping, receiver only */
	int upid_memfd, info_memfd;
	uint64_t token;
	pid_t tid;
	uint64_t stack_adjust;
	_Atomic uint64_t vector_mask; /* RFC uvec_mask */
	/* our end of each vector's socket pair (vector_fd.c), under uintr__lock */
	struct uintr__end *vector_end[UINTR_MAX_VECTORS];
	int polling;                  /* uintr_set_polling(1): SN kept set */
	uint64_t wait_spin_ns;        /* uintr_wait's poll phase */
	uint64_t wait_mark;           /* info->delivered when uintr_wait last returned */
	int loop_efd;                 /* eventfd of the event-loop state (loop.c), sent
				       * to senders in every uintr_fd header */
	int loop;                     /* in the event-loop state: NV 0xEA when idle */
	int info_kept;                /* info page now owned by orphaned ends */
	/* The instrumented state (safepoint.c).  `safepoints`, `sp_deadline_ns`,
	 * `sp_pidfd` and the wd_* fields are under uintr__lock (the watchdog
	 * reads them); `sp_fallback` is safepoints && !polling, read by the
	 * watchdog without the lock. */
	int safepoints;
	_Atomic int sp_fallback;
	uint64_t sp_deadline_ns;
	int sp_pidfd;                 /* the watchdog's pidfd of this thread, or -1 */
	int sp_cpu;                   /* the one CPU the thread is pinned to, or -1 */
	uint64_t wd_since;            /* watchdog: the earliest its pending posts were made
				       * (ns), 0: PIR not seen nonzero */
	uint64_t wd_seq;              /* `recognized` when wd_since was taken */
	int wd_sent;                  /* a notification of the watchdog is on its way */
	int wd_confirm;               /* look again before the next scan */
	uint64_t wd_cpu;              /* the thread's CPU time (ns) at that first look */
	/* Recognitions that took a nonzero PIR (uintr__recognize): written by
	 * the receiver thread only, read by the watchdog. */
	_Atomic uint64_t recognized;
	/* Binary compatibility (src/compat): deliver by rewriting the
	 * interrupted context, as the CPU does, instead of calling handler. */
	void (*deliver_context)(struct uintr__receiver *r, ucontext_t *uc);
	/* Timers that post to this receiver (timer.c): their slots, and when
	 * a poll point must next look at them (CLOCK_MONOTONIC ns, 0: never). */
	_Atomic uint64_t timer_slots[UINTR__TIMERS / 64];
	_Atomic uint64_t timer_due;
	struct uintr__receiver *next; /* process list; then the thread's retired list */
};

/* A sender's view of one receiver, shared by its UITT entries. */
struct uintr__target {
	struct uintr__upid *upid;
	const struct uintr__info *info;
	uint64_t token;
	pid_t tgid, tid;
	int pidfd;                 /* thread pidfd, or -1 (then tgid/tid) */
	int loop_efd;              /* the receiver's eventfd (NV 0xEA), or -1 */
	ino_t upid_ino, info_ino;  /* the memfds' inodes: a forged copy differs */
	pid_t sender_tgid;         /* si_pid of our notifications */
	uid_t sender_uid;
	int memfd[2];              /* the process's table only: the UPID and info memfds */
	int refs;
	struct uintr__target *next;
};

struct uintr__uitt_entry {
	uint8_t valid;
	uint8_t vector;
	uint32_t gen;
	struct uintr__target *target;
};

/* A sender thread's UITT (RFC: 256 entries, per thread), or the process's
 * (later branch, reference 3: `shared`, read by every thread). */
struct uintr__uitt {
	struct uintr__uitt_entry entry[UINTR_UITT_ENTRIES];
	unsigned int used;
	struct uintr__target *targets;
	int shared;
	struct uintr__target *zombies; /* shared: unreferenced, freed when no send is in flight */
};

/* Which sender tables the process uses; the first registration decides. */
#define UINTR__SENDERS_UNDECIDED 0
#define UINTR__SENDERS_THREAD 1  /* RFC 2.4: one UITT per thread */
#define UINTR__SENDERS_PROCESS 2 /* later branch 3: one UITT per process */
extern _Atomic int uintr__sender_kind;
extern struct uintr__uitt *_Atomic uintr__process_uitt;

/*
 * A call that a handler asked the interrupted context to make after UIRET,
 * before it resumes (uintr_frame_call): one per delivery.  The delivery's
 * caller owns it (a local of the signal handler, uintr_poll, uintr_stui,
 * ...) and makes the call once it holds no library state.
 */
struct uintr__frame_call {
	void (*fn)(void *);
	void *arg;
	int refused; /* errno for uintr_frame_call, 0 if the call can be made */
};

/* Everything the library keeps per thread. */
struct uintr__thread {
	struct uintr__receiver *receiver;
	struct uintr__uitt *uitt;
	_Atomic unsigned char uif;
	_Atomic unsigned char blocking; /* in uintr_wait's futex phase */
	_Atomic unsigned int busy;      /* depth of library code using `receiver` */
	/* Runs of the library's own signal handler on this thread: a futex
	 * sleep that ends with EINTR while this did not change was ended by
	 * another signal's handler (wait.c: TASK_INTERRUPTIBLE, 2.6). */
	_Atomic unsigned int own_signal_runs;
	/* The kernel blocks the notification signal while our handler runs
	 * (no SA_NODEFER): 1 while this thread is inside that handler with
	 * the signal still blocked.  uintr_stui() inside a handler delivered
	 * from there unblocks it and clears this; the delivery loop blocks it
	 * again when that handler returns (delivery.c, fault 1 of issue 17:
	 * at most one handler frame, plus one per handler that sets UIF). */
	_Atomic unsigned char notification_masked;
	struct uintr__receiver *_Atomic retired; /* unregistered while busy */
	/* The handler running now (UIF = 0): its frame, and where a
	 * uintr_frame_call for it goes (NULL: none can be made).  Saved and
	 * restored around each handler, so nesting (a handler that ran STUI)
	 * keeps each level's own. */
	struct uintr_frame *call_frame;
	struct uintr__frame_call *call_slot;
	/* The innermost notification signal handler's slot, for the
	 * deliveries it makes (uintr__notified, also from timer.c). */
	struct uintr__frame_call *signal_call;
	/* A uintr_frame_call was granted and its fn has not started: until
	 * it does, nested deliveries get EBUSY, so that notifications that
	 * keep coming before fn runs (a quantum shorter than a signal) are
	 * delivered one after the other, not nested without bound. */
	unsigned char call_granted;
	unsigned char registered_exit; /* pthread key set for this thread */
};

extern UINTR__TLS struct uintr__thread uintr__self;
extern int uintr__signo;
/* Process totals of receivers that are gone, and of notifications that
 * reached threads which are no receivers (live receivers count their own). */
extern _Atomic uint64_t uintr__process_spurious;
extern _Atomic uint64_t uintr__process_notifications;
extern _Atomic uint64_t uintr__process_delivered;

/* sys.c */
pid_t uintr__gettid(void);
int uintr__pidfd_open_thread(pid_t tid);
uint64_t uintr__thread_cpu_ns(pid_t tid);
int uintr__send_notification(const struct uintr__target *t);
int uintr__futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns);
int uintr__futex_wake(_Atomic uint32_t *word);
void uintr__raise_fault(int signo, int code);
uint64_t uintr__thread_start_time(pid_t tgid, pid_t tid, char *state);
uint64_t uintr__pidfd_ino(int pidfd);
int uintr__setup_process(void);
int uintr__watch_thread_exit(void);
void uintr__block_signal(sigset_t *old);
void uintr__set_signal_blocked(int blocked);
void uintr__restore_signal(const sigset_t *old);
void uintr__lock(void);
void uintr__unlock(void);
void uintr__lock_unmasked(void);
void uintr__unlock_unmasked(void);
int uintr__lock_held_here(void);

/* wait.c */
#define UINTR__DEFAULT_WAIT_SPIN_NS 30000ull
uint64_t uintr__default_wait_spin(void);
int uintr__wait(struct uintr__receiver *r, int since_last, uint64_t timeout_ns, void *ip,
		void *sp, struct uintr__frame_call *call);
uint32_t uintr__set_status(struct uintr__upid *upid, uint32_t mask, uint32_t value);
int uintr__poll_point(void *ip, void *sp);
/* SN while running: kept set in uintr_set_polling(1) and in the
 * instrumented state (senders post without notifying). */
static inline uint32_t uintr__sn(const struct uintr__receiver *r)
{
	return r->polling || r->safepoints ? UINTR__UPID_SN : 0;
}

/* env.c: the environment (validated here, also for uintrstat) and the
 * messages on stderr. */
#define UINTR__ENV_WHY 160
extern int uintr__debug; /* UINTR_DEBUG=1 */
int uintr__env_signal(const char *value, int *signo, char *why, size_t len);
int uintr__env_wait_spin(const char *value, uint64_t *ns, char *why, size_t len);
int uintr__env_debug(const char *value, int *on, char *why, size_t len);
#define UINTR__DEFAULT_SAFEPOINT_DEADLINE_NS 20000ull
int uintr__env_safepoint_deadline(const char *value, uint64_t *ns, char *why, size_t len);
void uintr__env_complain(_Atomic int *once, const char *name, const char *value, const char *why,
			 const char *consequence);
void uintr__debug_init(void);
unsigned int uintr__delivery_blockers(void);
void uintr__debug_check(const char *call);

/* receiver.c */
extern struct uintr__receiver *uintr__receivers;
void *uintr__map_memfd(int fd, int writable);
int uintr__new_memfd(const char *name);
void uintr__receiver_exit(void);
void uintr__receiver_free(struct uintr__receiver *r);
void uintr__receivers_reclaim(void);

/* vector_fd.c */
struct uintr__end;
int uintr__vector_orphan_ends(struct uintr__receiver *r);
void uintr__vector_ends_forget(void);
void uintr__vector_ends_settle(void);
int uintr__vector_ends_settle_here(void);
int uintr__read_fd_header(int fd, struct uintr__fd_header *h, int fds[3]);
int uintr__vector_keep(unsigned int vector, int want_fd);

/* sender.c */
void uintr__sender_exit(void);
void uintr__sender_fork_child(void);
void uintr__target_unmap(struct uintr__target *t);
int uintr__uitt_live(const struct uintr__uitt *u);
int uintr__senduipi_try(unsigned long long index);
int uintr__uitt_add(struct uintr__uitt *u, const struct uintr__fd_header *h, int memfds[3],
		    int isconn);
int uintr__uitt_remove(struct uintr__uitt *u, unsigned long long index);
struct uintr__uitt *uintr__shared_uitt(void);
int uintr__uitt_export(struct uintr__uitt *u, int sock);
int uintr__uitt_import(struct uintr__uitt *u, int fd);
int uintr__is_uitt_fd(int fd);
int uintr__sender_kind_claim(int kind);
int uintr__post_self(struct uintr__upid *upid, unsigned int vector);
int uintr__notify_deferred(const struct uintr__target *t);

/* timer.c */
void uintr__timers_fire(struct uintr__receiver *r);
void uintr__timer_signal(siginfo_t *si, ucontext_t *uc);
void uintr__timers_receiver_gone(struct uintr__receiver *r);
void uintr__timers_repoll(struct uintr__receiver *r, int polling);

/* A poll point (uintr_poll, uintr_wait's poll phase): a timer of this
 * receiver armed for poll points may be due.  No syscall, no clock read
 * while none is armed. */
static inline void uintr__timers_check(struct uintr__receiver *r)
{
	if (atomic_load_explicit(&r->timer_due, memory_order_relaxed))
		uintr__timers_fire(r);
}


/* safepoint.c */
extern const unsigned long long uintr__safepoint_zero;
void uintr__safepoints_gone(struct uintr__receiver *r);
void uintr__safepoint_fork_child(void);
uint64_t uintr__default_safepoint_deadline(void);

/* loop.c */
int uintr__loop_efd_check(int fd);
int uintr__notify_loop(const struct uintr__target *t);

/* NV while the receiver is not blocked in uintr_wait: how it is notified. */
static inline uint32_t uintr__nv_idle(const struct uintr__receiver *r)
{
	return UINTR__NV(r->loop ? UINTR__NV_LOOP : UINTR__NV_RUNNING);
}

/* delivery.c */
void uintr__signal_handler(int signo, siginfo_t *info, void *uc);
uint64_t uintr__process_notification(struct uintr__receiver *r);
unsigned int uintr__deliver(struct uintr_frame *frame, struct uintr__frame_call *call);
unsigned int uintr__deliver_here(void *ip, void *sp, struct uintr__frame_call *call);
void uintr__frame_call_run(const struct uintr__frame_call *call);
void uintr__notified(struct uintr__receiver *r, ucontext_t *uc);
extern struct sigaction uintr__previous_action;

/*
 * Library code that uses this thread's receiver runs between uintr__enter()
 * and uintr__leave().  A handler nested anywhere inside it (the user's
 * interrupt handler, or any signal handler) may unregister the receiver:
 * the receiver is then only retired, and freed when the outermost such code
 * leaves, so no frame below ever touches freed memory.  Same-thread only:
 * relaxed atomics and signal fences are all it takes, and nested handlers
 * always leave `busy` as they found it.
 */
static inline struct uintr__receiver *uintr__enter(void)
{
	atomic_store_explicit(&uintr__self.busy,
			      atomic_load_explicit(&uintr__self.busy, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return uintr__self.receiver;
}

static inline void uintr__leave(void)
{
	unsigned int depth = atomic_load_explicit(&uintr__self.busy, memory_order_relaxed) - 1;

	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&uintr__self.busy, depth, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (depth == 0 && atomic_load_explicit(&uintr__self.retired, memory_order_relaxed))
		uintr__receivers_reclaim();
}

/*
 * Counting a delivery: only a delivery writes `delivered`, and deliveries
 * never nest inside that increment (it happens with UIF = 0, when a nested
 * notification only recognizes), so a plain add is exact and takes no
 * locked instruction on the polling path.  Counters the signal handler
 * writes (notifications, spurious) can be interrupted by the same handler
 * (it nests on top of uintr_poll, or of a handler that ran STUI) and use
 * an atomic add instead.
 */
static inline void uintr__count_delivery(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static inline void uintr__count_notification(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* Return -1 with errno set, as every failing RFC syscall does. */
static inline int uintr__fail(int err)
{
	errno = err;
	return -1;
}

#endif
