/*
 * uintr_frame_call (issue 13) where the library delivers from its own
 * calls: uintr_poll, uintr_wait, uintr_set_polling(0), uintr_stui and
 * uintr_loop_drain.  The call runs after every handler that this library
 * call delivers (UIRET, UIF = 1), exactly once, before the library call
 * returns, and leaves the library call's result and errno alone.  One call
 * per delivery: the second handler's request is EBUSY.  Outside a handler,
 * and for a frame that is not the handler's, it is EINVAL.
 *
 * The event log (td_record): vector numbers for handlers, CALL when the
 * call runs (CALL_UIF0 if it found UIF = 0), BUSY when the second request
 * was refused with EBUSY, SWITCHED when the call's switch to a second
 * user-level thread ran there, RETURNED once the library call returned.
 */
#include <sys/eventfd.h>
#include <ucontext.h>

#include "helpers-delivery.h"

enum { CALL = 50, CALL_UIF0 = 51, BUSY = 52, SWITCHED = 53, RETURNED = 60 };

static int want_call;           /* ask for a call in the next handler(s) */
static int nest_idx = -1;       /* vector 9's handler sends this and runs STUI */
static int switch_in_call;      /* the call swapcontext()s to `other` and back */
static ucontext_t call_ctx, other_ctx;
static unsigned char other_stack[128 * 1024] __attribute__((aligned(16)));

static void other_main(void)
{
	for (;;) {
		td_record(SWITCHED);
		CHECK(swapcontext(&other_ctx, &call_ctx) == 0);
	}
}

static void the_call(void *arg)
{
	CHECK(arg == &want_call);
	td_record(uintr_testui() ? CALL : CALL_UIF0);
	if (switch_in_call)
		CHECK(swapcontext(&call_ctx, &other_ctx) == 0);
	errno = 1; /* must not reach the library call's caller */
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	struct uintr_frame copy = *frame;
	int saved_errno = errno; /* a handler keeps errno, as a signal handler would */

	td_record((int)vector);
	if (want_call) {
		CHECK_ERR(uintr_frame_call(&copy, the_call, &want_call), EINVAL);
		CHECK_ERR(uintr_frame_call(frame, NULL, NULL), EINVAL);
		if (uintr_frame_call(frame, the_call, &want_call) == -1) {
			CHECK_EQ(errno, EBUSY);
			td_record(BUSY);
		}
	}
	if (vector == 9 && nest_idx >= 0) {
		/* A nested delivery before the granted call has started: its
		 * handler's request (for its own frame) is EBUSY too, so that
		 * interrupts that keep coming cannot stack calls. */
		uintr_senduipi((unsigned long long)nest_idx);
		CHECK_EQ(uintr_poll(), 0); /* UIF = 0: recognizes only */
		nest_idx = -1;
		uintr_stui();
	}
	errno = saved_errno;
}

static void reset(void)
{
	atomic_store(&td_nevents, 0);
}

int main(void)
{
	struct uintr_frame outside = {0};
	int fd5, fd9, idx5, idx9, lfd;

	CHECK(uintr_register_handler(handler, 0) == 0);
	fd5 = uintr_create_fd(5, 0);
	fd9 = uintr_create_fd(9, 0);
	CHECK(fd5 >= 0 && fd9 >= 0);
	idx5 = uintr_register_sender(fd5, 0);
	idx9 = uintr_register_sender(fd9, 0);
	CHECK(idx5 >= 0 && idx9 >= 0);
	CHECK_ERR(uintr_frame_call(&outside, the_call, &want_call), EINVAL);
	want_call = 1;

	/* uintr_poll: both vectors pending, highest first, then the call
	 * (which switches to a second user-level thread and back, except
	 * under ThreadSanitizer, which needs fiber annotations for that). */
	switch_in_call = !T_TSAN;
	if (switch_in_call) {
		CHECK(getcontext(&other_ctx) == 0);
		other_ctx.uc_stack.ss_sp = other_stack;
		other_ctx.uc_stack.ss_size = sizeof(other_stack);
		other_ctx.uc_link = NULL;
		makecontext(&other_ctx, other_main, 0);
	}
	CHECK(uintr_set_polling(1) == 0);
	uintr_stui();
	uintr_senduipi((unsigned long long)idx5);
	uintr_senduipi((unsigned long long)idx9);
	errno = 33;
	CHECK_EQ(uintr_poll(), 2);
	CHECK_EQ(errno, 33);
	td_record(RETURNED);
	if (switch_in_call)
		TD_CHECK_EVENTS(9, 5, BUSY, CALL, SWITCHED, RETURNED);
	else
		TD_CHECK_EVENTS(9, 5, BUSY, CALL, RETURNED);
	switch_in_call = 0;

	/* uintr_poll with nothing posted: no handler, no call. */
	reset();
	CHECK_EQ(uintr_poll(), 0);
	td_record(RETURNED);
	TD_CHECK_EVENTS(RETURNED);

	/* uintr_wait: a post pending at the call ends it (2.6) with EINTR,
	 * whatever errno the call left. */
	reset();
	uintr_senduipi((unsigned long long)idx9);
	CHECK_ERR(uintr_wait(0), EINTR);
	td_record(RETURNED);
	TD_CHECK_EVENTS(9, CALL, RETURNED);

	/* uintr_set_polling(0) delivers what was posted meanwhile. */
	reset();
	uintr_senduipi((unsigned long long)idx5);
	errno = 34;
	CHECK_EQ(uintr_set_polling(0), 0);
	CHECK_EQ(errno, 34);
	td_record(RETURNED);
	TD_CHECK_EVENTS(5, CALL, RETURNED);

	/* uintr_stui: with UIF = 0 a send to ourselves is recognized (our
	 * own notification signal, taken before the send returns) and
	 * delivered by STUI; the call runs before STUI returns. */
	reset();
	uintr_clui();
	uintr_senduipi((unsigned long long)idx9);
	td_syscall();
	CHECK_EQ(td_uirr(), 1ull << 9);
	TD_CHECK_EVENTS();
	uintr_stui();
	td_record(RETURNED);
	TD_CHECK_EVENTS(9, CALL, RETURNED);

	/* uintr_loop_drain: the event-loop state. */
	reset();
	lfd = uintr_loop_fd(0);
	CHECK(lfd >= 0);
	uintr_senduipi((unsigned long long)idx5);
	CHECK_EQ(uintr_loop_drain(0), 1);
	td_record(RETURNED);
	TD_CHECK_EVENTS(5, CALL, RETURNED);
	CHECK(close(lfd) == 0);

	/* Nested: vector 9's handler asks for the call, then posts 5 and
	 * runs STUI; 5's handler is refused; the one call runs last. */
	reset();
	CHECK(uintr_set_polling(1) == 0);
	nest_idx = idx5;
	uintr_senduipi((unsigned long long)idx9);
	CHECK_EQ(uintr_poll(), 1);
	td_record(RETURNED);
	TD_CHECK_EVENTS(9, 5, BUSY, CALL, RETURNED);

	/* A handler that asks for nothing: no call. */
	reset();
	want_call = 0;
	uintr_senduipi((unsigned long long)idx9);
	CHECK_EQ(uintr_poll(), 1);
	td_record(RETURNED);
	TD_CHECK_EVENTS(9, RETURNED);

	CHECK(uintr_unregister_handler(0) == 0);
	return T_PASS;
}
