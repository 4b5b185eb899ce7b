/*
 * Notification processing and delivery (reference 5.2, 5.3, 5.4) and the
 * UIF instructions STUI, CLUI, TESTUI (5.5).
 *
 * A running receiver is notified by a signal aimed at exactly its thread
 * (sys.c); the signal handler plays the CPU: it recognizes the notification
 * (PIR -> UIRR) and, when UIF = 1, delivers.  Where a vector is delivered:
 * uintr__deliver() below.  What a handler may ask the interrupted context
 * to do after UIRET (switch user-level threads): uintr_frame_call() below.
 */
#define _GNU_SOURCE
#include <string.h>

#include "uintr-int.h"

/* Linux 4.7's sigaltstack flag (uapi <linux/signal.h>); glibc's headers
 * do not all define it. */
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1u << 31)
#endif

/* UIRR |= xchg(PIR, 0).  Only vectors with a live fd are recognized: a
 * post for anything else (a released vector, or a hostile process writing
 * the shared page) is dropped here rather than reaching the handler. */
static uint64_t uintr__recognize(struct uintr__receiver *r)
{
	uint64_t taken = atomic_exchange(&r->upid->pir, 0);
	uint64_t pending = taken & atomic_load(&r->vector_mask);

	/* The watchdog of the instrumented state notifies only posts that
	 * no recognition took since it last looked (safepoint.c).  Only
	 * this thread writes the count; a nested handler's increment that
	 * this store overwrites still leaves it changed. */
	if (taken)
		uintr__count_delivery(&r->recognized);
	if (pending)
		uintr__arch_local_or(&r->info->uirr, pending);
	return pending;
}

/* Notification processing (5.2) by the receiver's own code (uintr_poll,
 * uintr_wait): ON := 0; UIRR |= xchg(PIR, 0). */
uint64_t uintr__process_notification(struct uintr__receiver *r)
{
	/* Clearing an ON that is already clear would only bounce the line:
	 * whoever sets ON also notifies, and that notification clears it. */
	if (atomic_load(&r->upid->status) & UINTR__UPID_ON)
		atomic_fetch_and(&r->upid->status, ~UINTR__UPID_ON);
	return uintr__recognize(r);
}

/* The notification signal was consumed: bump EPOCH (a sender that sent it
 * and has not set ON yet then never will, sender.c) and, if clear_on,
 * clear ON in the same step. */
static void uintr__notification_consumed(struct uintr__receiver *r, int clear_on)
{
	uint32_t s = atomic_load(&r->upid->status), n;

	do
		n = (s & ~(UINTR__UPID_EPOCH_MASK | (clear_on ? UINTR__UPID_ON : 0))) |
		    ((s + (1u << UINTR__UPID_EPOCH_SHIFT)) & UINTR__UPID_EPOCH_MASK);
	while (!atomic_compare_exchange_weak(&r->upid->status, &s, n));
}

/*
 * Delivery (5.3) and UIRET (5.4): while UIF = 1 and UIRR != 0, take the
 * highest vector, clear it from UIRR, UIF := 0, run the handler, UIF := 1.
 * Taking UIF with an exchange makes "check UIF, claim vector, clear UIF"
 * one step with respect to a nested notification signal, which then only
 * processes (UIF = 0) and leaves delivery to this loop.
 *
 * UIF and UIRR are written only by this thread and its signal handlers,
 * so their read-modify-writes need not lock the bus (arch.h, local_*),
 * and UIF := 1 is a plain store, kept in program order by a signal fence:
 * only this thread's own handlers must see it in order.
 */
static inline void uintr__uif_set(void)
{
	atomic_store_explicit(&uintr__self.uif, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}

unsigned int uintr__deliver(struct uintr_frame *frame, struct uintr__frame_call *call)
{
	struct uintr__receiver *r = uintr__enter();
	struct uintr_frame *outer_frame = uintr__self.call_frame;
	struct uintr__frame_call *outer_slot = uintr__self.call_slot;
	unsigned int delivered = 0;

	while (r && uintr__arch_local_take(&uintr__self.uif)) {
		uint64_t uirr, bit;
		unsigned int vector;
		unsigned char masked;

		/* The handler that ran last may have unregistered r (or
		 * registered anew): deliver no more of it; r stays mapped until
		 * we leave.  Checked with UIF = 0, when no delivery, hence no
		 * handler of the program, can nest until UIRET. */
		if (uintr__self.receiver != r) {
			uintr__uif_set();
			break;
		}
		uirr = atomic_load(&r->info->uirr);
		if (!uirr) {
			uintr__uif_set();
			if (!atomic_load(&r->info->uirr))
				break;
			continue;
		}
		vector = 63u - (unsigned int)__builtin_clzll(uirr);
		bit = 1ull << vector;
		uintr__arch_local_and(&r->info->uirr, ~bit);
		uintr__count_delivery(&r->info->delivered);
		masked = atomic_load_explicit(&uintr__self.notification_masked,
					      memory_order_relaxed);
		uintr__self.call_frame = frame;
		uintr__self.call_slot = call;
		atomic_signal_fence(memory_order_seq_cst);
		r->handler(frame, vector);
		atomic_signal_fence(memory_order_seq_cst);
		uintr__self.call_frame = outer_frame;
		uintr__self.call_slot = outer_slot;
		/* The handler ran STUI inside the signal handler and so let
		 * notifications in (uintr_stui): shut them out again before
		 * UIF = 1, or each one would stack a new loop on this frame. */
		if (masked && !atomic_load_explicit(&uintr__self.notification_masked,
						    memory_order_relaxed)) {
			uintr__set_signal_blocked(1);
			atomic_store_explicit(&uintr__self.notification_masked, 1,
					      memory_order_relaxed);
		}
		/* A notification sent while the handler ran waits for our
		 * sigreturn (the signal is blocked only because we are in its
		 * handler, ON still set).  A CPU would have processed it with
		 * UIF = 0 (5.2): recognize its posts now, so that the highest
		 * vector goes next.  Only then: a receiver whose notifications
		 * are suppressed (SN) or blocked by the program keeps its posts
		 * in PIR, as on hardware. */
		if (masked && (atomic_load_explicit(&r->upid->status, memory_order_relaxed) &
			       UINTR__UPID_ON))
			uintr__recognize(r);
		uintr__uif_set(); /* UIRET */
		delivered++;
	}
	uintr__leave();
	return delivered;
}

/* Delivery at a library call (STUI, uintr_wait): the "interrupted" context
 * is the caller's; changes a handler makes to this frame have no effect,
 * but a uintr_frame_call() is made, by the caller, before the library call
 * returns. */
unsigned int uintr__deliver_here(void *ip, void *sp, struct uintr__frame_call *call)
{
	struct uintr_frame frame = {
		.ip = (unsigned long long)(uintptr_t)ip,
		.flags = uintr__arch_flags(),
		.sp = (unsigned long long)(uintptr_t)sp,
	};

	return uintr__deliver(&frame, call);
}

/*
 * uintr_frame_call (libuintr extension): the handler of `frame` asks the
 * interrupted context to call fn(arg) after UIRET, before it resumes, as
 * if the interrupt had pushed a call (what Go's asynchronous preemption
 * does with a signal context).  fn runs with UIF = 1, outside the handler
 * and outside all library state, so it may switch to another user-level
 * thread and come back much later, or never.  Where the delivery was
 * asynchronous, the rest of the interrupted context (every register, the
 * FP/SIMD state, the red zone, the signal mask, errno) is kept by the
 * kernel in the notification signal's frame, below the interrupted stack
 * pointer, and restored by sigreturn when fn returns; at a poll point (a
 * library call) the call is made before that library call returns, where
 * the C ABI lets a call change what fn may change.
 */
UINTR__EXPORT int uintr_frame_call(struct uintr_frame *frame, void (*fn)(void *), void *arg)
{
	struct uintr__frame_call *slot = uintr__self.call_slot;

	if (!frame || !fn || !slot || frame != uintr__self.call_frame)
		return uintr__fail(EINVAL);
	if (slot->refused)
		return uintr__fail(slot->refused);
	if (slot->fn || uintr__self.call_granted)
		return uintr__fail(EBUSY);
	slot->fn = fn;
	slot->arg = arg;
	uintr__self.call_granted = 1;
	return 0;
}

/* Make the call a handler asked for, holding no library state. */
void uintr__frame_call_run(const struct uintr__frame_call *call)
{
	int saved_errno;

	if (!call->fn)
		return;
	saved_errno = errno;
	uintr__self.call_granted = 0;
	atomic_signal_fence(memory_order_seq_cst);
	call->fn(call->arg);
	errno = saved_errno;
}

static void uintr__chain(int signo, siginfo_t *si, void *uc)
{
	const struct sigaction *prev = &uintr__previous_action;

	if (prev->sa_flags & SA_SIGINFO) {
		if (prev->sa_sigaction)
			prev->sa_sigaction(signo, si, uc);
	} else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
		prev->sa_handler(signo);
	}
	/* SIG_DFL would terminate the process for a stray real-time signal;
	 * we ignore it instead (documented in uintr(7)). */
}

/* A notification of this running receiver, in a signal handler whose
 * context is uc: recognize, and deliver if UIF = 1 (5.2, 5.3).  Also the
 * self-notification of a timer that fired on this thread (timer.c). */
void uintr__notified(struct uintr__receiver *r, ucontext_t *uc)
{
	struct uintr__frame_call *call = uintr__self.signal_call;
	struct uintr_frame frame;

	uintr__recognize(r);
	if (!atomic_load(&uintr__self.uif) || !atomic_load(&r->info->uirr))
		return;
	if (r->deliver_context) {
		r->deliver_context(r, uc);
		return;
	}
	uintr__arch_frame_read(uc, &frame);
	/* The call runs on the stack that holds the kernel's signal frame,
	 * and that frame must outlive it until the interrupted context runs
	 * again.  On an armed alternate signal stack (SA_ONSTACK, sys.c) the
	 * next signal, taken while another user-level thread runs, would
	 * start at its top again and overwrite the frame.  Safe: no alternate
	 * stack (SS_DISABLE: the frame is below the interrupted sp), or one
	 * set up with SS_AUTODISARM (the kernel disarms it until this
	 * handler's sigreturn).  uc_stack holds the thread's sigaltstack
	 * flags as they were when the signal came. */
	if (call && !(uc->uc_stack.ss_flags & (SS_DISABLE | SS_AUTODISARM)))
		call->refused = EOPNOTSUPP;
	uintr__deliver(&frame, call);
	/* The handler may have changed the frame: resume where UIRET would. */
	uintr__arch_frame_write(uc, &frame);
}

/* The notification signal, inside uintr__enter() (uintr__signal_handler). */
static void uintr__notification(siginfo_t *si, ucontext_t *uc)
{
	struct uintr__receiver *r = uintr__self.receiver;
	uint64_t token = (uint64_t)(uintptr_t)si->si_value.sival_ptr;

	if (!r) {
		/* Sent to a receiver this thread no longer is (6.2: UIS). */
		atomic_fetch_add_explicit(&uintr__process_spurious, 1, memory_order_relaxed);
		return;
	}
	if (r->token != token) {
		uintr__count_notification(&r->info->spurious);
		return;
	}
	uintr__count_notification(&r->info->notifications);
	/* Blocked in uintr_wait: the wait processes the post (wait.c); ON
	 * stays for its futex loop to see. */
	if (atomic_load(&uintr__self.blocking)) {
		uintr__notification_consumed(r, 0);
		return;
	}
	uintr__notification_consumed(r, 1);
	uintr__notified(r, uc);
}

/*
 * The end of a run of the notification handler whose frame call has
 * returned.  fn runs with the interrupted code's signal mask (the
 * notification signal unblocked), and so does what follows it: the
 * handler's epilogue and the restorer's sigreturn.  A notification taken
 * there is a new handler run on the same stack, below the first one's
 * kernel frame; if it too granted a call, and fn switched away and came
 * back just before the next quantum, every quantum would add a frame and
 * a runtime that preempts every 10 us overflowed its user-level stacks
 * (issue 13: uintr-preempt, uintr-timer at 10 us, where 8% of the timer's
 * notifications landed there).  So a handler whose interrupted ip is in
 * that code gets EBUSY from uintr_frame_call: the interrupt is delivered
 * as always, only the call is refused; the code it interrupted is a few
 * instructions from resuming the preempted context, and the next
 * interrupt can preempt that.
 *
 * The code is this handler (in a section of its own, so that its bounds
 * are the linker's __start_/__stop_ symbols) and the restorer it returns
 * to (libc's sa_restorer or the vDSO's sigreturn trampoline: two
 * instructions, within 16 bytes on the three architectures).  Before fn
 * is called the rule changes nothing: call_granted already refuses a
 * second call there.
 */
extern const char __start_uintr_signal_text[], __stop_uintr_signal_text[];
#define UINTR__RESTORER_BYTES 16u

static int uintr__interrupted_call_tail(const ucontext_t *uc, const void *restorer)
{
	struct uintr_frame frame;
	uintptr_t ip;

	uintr__arch_frame_read(uc, &frame);
	ip = (uintptr_t)frame.ip;
	return (ip >= (uintptr_t)__start_uintr_signal_text &&
		ip < (uintptr_t)__stop_uintr_signal_text) ||
	       ip - (uintptr_t)restorer < UINTR__RESTORER_BYTES;
}

__attribute__((section("uintr_signal_text"), noinline))
void uintr__signal_handler(int signo, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	unsigned char was_masked = atomic_load_explicit(&uintr__self.notification_masked,
							memory_order_relaxed);
	struct uintr__frame_call call = {0}, *outer_call = uintr__self.signal_call;

	if (uintr__interrupted_call_tail(uc, __builtin_return_address(0)))
		call.refused = EBUSY;
	uintr__self.signal_call = &call;
	uintr__enter();
	/* The kernel blocked this signal for the handler's run (sys.c). */
	atomic_store_explicit(&uintr__self.notification_masked, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&uintr__self.own_signal_runs,
			      atomic_load_explicit(&uintr__self.own_signal_runs, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (si->si_code == SI_QUEUE &&
	    ((uint64_t)(uintptr_t)si->si_value.sival_ptr & UINTR__TOKEN_MASK) == UINTR__TOKEN_TAG)
		uintr__notification(si, uc);
	else if (si->si_code == SI_TIMER &&
		 ((uint64_t)(uintptr_t)si->si_value.sival_ptr & UINTR__TOKEN_MASK) == UINTR__TOKEN_TAG)
		uintr__timer_signal(si, uc);
	else
		uintr__chain(signo, si, uc);
	uintr__leave();
	uintr__self.signal_call = outer_call;
	/* sigreturn restores the interrupted code's mask. */
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&uintr__self.notification_masked, was_masked, memory_order_relaxed);
	if (call.fn) {
		/* After UIRET, as the interrupted code: its own signal mask
		 * (the notification signal unblocked, so that fn and whatever
		 * it switches to can be interrupted again), errno as it was. */
		uintr__restore_signal(&((ucontext_t *)uc)->uc_sigmask);
		errno = saved_errno;
		uintr__frame_call_run(&call);
	}
	errno = saved_errno;
}

UINTR__EXPORT void uintr_stui(void)
{
	struct uintr__receiver *r = uintr__enter();
	struct uintr__frame_call call = {0};

	/* Inside a handler delivered from the notification signal (or code
	 * that left one without returning): nested interrupts must reach
	 * this code (5.5), so let the signal in; the delivery loop shuts it
	 * out again when the handler returns. */
	if (atomic_load_explicit(&uintr__self.notification_masked, memory_order_relaxed)) {
		atomic_store_explicit(&uintr__self.notification_masked, 0, memory_order_relaxed);
		uintr__set_signal_blocked(0);
	}
	atomic_store(&uintr__self.uif, 1);
	if (r && uintr__debug)
		uintr__debug_check("uintr_stui");
	if (r && atomic_load(&r->info->uirr))
		uintr__deliver_here(__builtin_return_address(0), __builtin_frame_address(0), &call);
	uintr__leave();
	uintr__frame_call_run(&call);
}

UINTR__EXPORT void uintr_clui(void)
{
	atomic_store(&uintr__self.uif, 0);
}

UINTR__EXPORT unsigned char uintr_testui(void)
{
	return atomic_load(&uintr__self.uif);
}
