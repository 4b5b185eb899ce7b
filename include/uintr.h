/*
 * libuintr: Intel User Interrupts (UINTR) in user space, on any Linux.
 *
 * The API is the 2021 Linux RFC "x86 User Interrupts support": each RFC
 * syscall(__NR_uintr_...) becomes the call of the same name, with the same
 * arguments, return values and errno.  The UINTR instructions (SENDUIPI,
 * STUI, CLUI, TESTUI) are functions.  See uintr(7) for the model and for
 * what a program may observe that the RFC kernel would not show it.
 */
#ifndef UINTR_H
#define UINTR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UINTR_VERSION_MAJOR 1
#define UINTR_VERSION_MINOR 0

/* Number of user vectors per receiver (RFC 2.3): 0 lowest, 63 highest. */
#define UINTR_MAX_VECTORS 64
/* Entries of a sender thread's UITT (RFC 4.2): indices 0..255. */
#define UINTR_UITT_ENTRIES 256

/*
 * The interrupted context, as the hardware pushes it (reference 5.3):
 * instruction pointer, flags (RFLAGS on x86-64, PSTATE on arm64, 0 where
 * the architecture has none) and stack pointer.  When the interrupt was
 * delivered asynchronously, a handler may change these and the interrupted
 * code resumes at the changed context, as UIRET would make it.
 */
struct uintr_frame {
	unsigned long long ip;
	unsigned long long flags;
	unsigned long long sp;
};

typedef void (*uintr_handler_t)(struct uintr_frame *frame,
				unsigned long long vector);

/*
 * libuintr extension (uintr_frame_call(3)): called by a handler, before it
 * returns, for the frame it was given: after UIRET the interrupted context
 * calls fn(arg) before it resumes, in every delivery mode (asynchronous, at
 * uintr_poll, uintr_stui, uintr_wait, uintr_loop_drain).  fn may switch to
 * other user-level threads; when it returns, the interrupted code resumes
 * with every register, flag, FP/SIMD register, the red zone and errno as
 * they were.  One call per delivery: EBUSY for a second, or while a call
 * granted earlier on this thread has not started; EINVAL when frame
 * is not the running handler's or fn is NULL; EOPNOTSUPP when the
 * notification was taken on an alternate signal stack (sigaltstack(2)).
 */
int uintr_frame_call(struct uintr_frame *frame, void (*fn)(void *), void *arg);

/* RFC syscalls (reference section 2).  All return -1 and set errno on error. */
int uintr_register_handler(uintr_handler_t handler, unsigned int flags);
int uintr_unregister_handler(unsigned int flags);
int uintr_create_fd(unsigned long long vector, unsigned int flags);
int uintr_register_sender(int uintr_fd, unsigned int flags);
int uintr_unregister_sender(int uintr_fd, unsigned int flags);
int uintr_wait(unsigned int flags);

/* UINTR instructions (reference section 5). */
void uintr_senduipi(unsigned long long uipi_index);
void uintr_stui(void);
void uintr_clui(void);
unsigned char uintr_testui(void);

/*
 * The calling thread's UINTR state in the layout of the RFC's XSAVE
 * component 14 (reference 4.4), for debuggers and tests.  Addresses are
 * this process's addresses of the library's UPID and UITT.
 */
struct uintr_state {
	unsigned long long handler;      /* UIHANDLER */
	unsigned long long stack_adjust; /* UISTACKADJUST */
	unsigned int uitt_size;          /* UITTSZ, MISC[31:0] */
	unsigned char uinv;              /* UINV, MISC[39:32] */
	unsigned char blocked;           /* libuintr, MISC[47:40]: UINTR_STATE_SIGNAL_* */
	unsigned char reserved[1];
	unsigned char uif_byte;          /* bit 7: UIF */
	unsigned long long upid_addr;    /* UPIDADDR */
	unsigned long long uirr;         /* UIRR */
	unsigned long long uitt_addr;    /* UITTADDR, bit 0 = SENDUIPI enabled */
};
#define UINTR_STATE_UIF 0x80
/*
 * Why a running receiver gets no interrupt (libuintr delivers to running
 * code with a signal, uintr(7)): the thread blocks the notification
 * signal; the program changed that signal's disposition.
 */
#define UINTR_STATE_SIGNAL_BLOCKED 0x01
#define UINTR_STATE_SIGNAL_LOST    0x02
int uintr_read_state(struct uintr_state *state);

/*
 * Counters (reference 6.2: the RFC counts spurious notifications as UIS in
 * /proc/interrupts).  A notification is spurious when it reaches a thread
 * that is not, or no longer, the receiver it was sent to.
 */
struct uintr_stats {
	unsigned long long notifications; /* notifications processed */
	unsigned long long delivered;     /* handler invocations */
	unsigned long long spurious;      /* spurious notifications */
};
#define UINTR_STATS_PROCESS 0x1u /* totals for the process, not the thread */
int uintr_get_stats(struct uintr_stats *stats, unsigned int flags);

/*
 * libuintr extensions (not in the RFC): polling and the wait policy.
 *
 * uintr_poll() is an explicit poll point: it recognizes posted interrupts
 * (as a notification would) and delivers them if UIF = 1, returning the
 * number of handler calls.  uintr_set_polling(1) sets SN, as the RFC
 * kernel does for a receiver that is not running: senders then post
 * without ever notifying (no signal, no syscall on either side) and the
 * interrupts are seen only at uintr_poll() and uintr_wait();
 * uintr_set_polling(0) clears SN and delivers what was posted meanwhile.
 * uintr_set_wait_spin() sets how long uintr_wait() polls before it
 * blocks (default 30000 ns, or UINTR_WAIT_SPIN_NS from the environment).
 * All three fail with EOPNOTSUPP when the caller is not a receiver.
 */
int uintr_poll(void);
int uintr_set_polling(int on);
/*
 * uintr_wait_since_last() is uintr_wait() that also returns at once if an
 * interrupt was delivered to the thread since the previous wait returned
 * (since the registration, for the first), so that
 * `while (!flag) uintr_wait_since_last(0);` cannot sleep through a handler
 * that ran between the test and the call.  uintr_wait() itself is the
 * RFC's: only a delivery during the call, or an interrupt pending at its
 * start, ends it.
 */
int uintr_wait_since_last(unsigned int flags);
int uintr_set_wait_spin(unsigned long long ns);

/*
 * libuintr extension: the event-loop state (uintr_loop_fd(3)).
 *
 * uintr_loop_fd() puts the calling receiver in the event-loop state and
 * returns a new fd (close-on-exec, the caller closes it) to add to
 * poll/epoll/select/libuv/libevent/io_uring: it becomes readable when an
 * interrupt is posted to the receiver while the loop may be blocked, and
 * no longer is after uintr_loop_drain(), which recognizes what was posted
 * and runs the handler for it (if UIF = 1), returning the number of
 * handler calls.  While the loop drains (or is in uintr_set_polling(1)),
 * senders post without any syscall; otherwise the first post after a
 * drain makes one.  EOPNOTSUPP when the caller is not a receiver; drain:
 * EINVAL before uintr_loop_fd().  flags must be 0.
 */
int uintr_loop_fd(unsigned int flags);
int uintr_loop_drain(unsigned int flags);

/*
 * libuintr extension: safepoints (uintr_set_safepoints(3)).
 *
 * Code compiled with libuintr's GCC plugin checks, at every loop back-edge
 * and function entry, `if (*uintr_safepoint_word != 0) uintr_safepoint();`.
 * The word is 0 for every thread that is not an instrumented receiver; for
 * one that is (uintr_set_safepoints(deadline_ns, 0), deadline_ns > 0) it
 * is nonzero while an interrupt is posted and not yet recognized, and
 * senders post without signalling it: uintr_safepoint() recognizes and
 * delivers as uintr_poll() does.  An interrupt still unrecognized after
 * about deadline_ns (the receiver runs uninstrumented code) is delivered
 * by the notification signal, exactly once.  UINTR_SAFEPOINT_DEFAULT:
 * UINTR_SAFEPOINT_DEADLINE_NS from the environment, or 20000 ns.
 * uintr_set_safepoints(0, 0) leaves the state and delivers what was
 * posted meanwhile.  EOPNOTSUPP: not a receiver; EINVAL: flags; EBUSY: the
 * receiver is in the event-loop state (uintr_loop_fd).
 */
extern __thread __attribute__((tls_model("initial-exec")))
const volatile unsigned long long *uintr_safepoint_word;
#define UINTR_SAFEPOINT_DEFAULT (~0ull)
void uintr_safepoint(void);
int uintr_set_safepoints(unsigned long long deadline_ns, unsigned int flags);

/*
 * Intel's later ABI (the uintr-linux-kernel branch; uintr(7), "The two
 * ABIs"): its syscalls under names that cannot be confused with the RFC's.
 * One process-wide consequence: the first sender registration decides
 * whether the process's sender tables are per thread (uintr_register_sender,
 * RFC) or one per process (uintr_later_register_sender,
 * uintr_later_register_self, uintr_later_ipi_fd, UIPI_SET_TARGET_TABLE);
 * the other kind then fails with EINVAL.  Receivers, vector fds and
 * uintr_senduipi() work with either.
 */
#define UINTR_HANDLER_FLAG_WAITING_NONE     0x0
#define UINTR_HANDLER_FLAG_WAITING_RECEIVER 0x1000
#define UINTR_HANDLER_FLAG_WAITING_SENDER   0x2000
#define UINTR_HANDLER_FLAG_WAITING_ANY      0x3000
/* The branch's ioctl numbers (its uapi <asm/uintr.h>): _IO('U', n) on a
 * uvec fd, _IO('u', n) on a uipi fd. */
#ifndef UIPI_SET_TARGET_TABLE
#define UINTR_IS_ACTIVE         0x5500
#define UINTR_DISABLE           0x5501
#define UINTR_NOTIFY            0x5502
#define UIPI_SET_TARGET_TABLE   0x7500
#define UIPI_CLEAR_TARGET_TABLE 0x7501
#endif
int uintr_later_register_handler(uintr_handler_t handler, unsigned int flags);
int uintr_later_unregister_handler(unsigned int flags);
int uintr_later_vector_fd(unsigned long long vector, unsigned int flags);
int uintr_later_register_sender(int uvec_fd, unsigned int flags);
int uintr_later_unregister_sender(int uipi_index, unsigned int flags);
int uintr_later_wait(unsigned long long usec, unsigned int flags);
int uintr_later_register_self(unsigned long long vector, unsigned int flags);
int uintr_later_alt_stack(void *sp, size_t size, unsigned int flags);
int uintr_later_ipi_fd(unsigned int flags);
int uintr_later_ioctl(int fd, unsigned long request);

/*
 * The signal that carries notifications to running receivers (default
 * SIGRTMAX-7; the environment variable UINTR_SIGNAL overrides it before the
 * first registration).  The library keeps any handler the program installed
 * for it before and passes it every signal that is not a notification.
 */
int uintr_notification_signal(void);

/*
 * Timer vectors (libuintr extension, uintr_timer_create(3)): a timer that
 * posts the vector of a uintr_fd to its receiver at each expiry, exactly
 * as a send would, in the style of timer_create(2).  clockid is a
 * clockid_t (CLOCK_MONOTONIC, ...); timer ids are small ints.
 */
struct itimerspec;
int uintr_timer_create(int uintr_fd, int clockid, unsigned int flags);
int uintr_timer_settime(int timerid, int flags, const struct itimerspec *new_value,
			struct itimerspec *old_value);
int uintr_timer_gettime(int timerid, struct itimerspec *curr_value);
int uintr_timer_getoverrun(int timerid);
int uintr_timer_delete(int timerid);

#ifdef __cplusplus
}
#endif

#endif /* UINTR_H */
