/*
 * A delivery from the notification signal keeps that signal blocked while
 * its handler runs, so UIRET pops the frame before the next delivery
 * (reference 5.4; issue 17, fault 1); STUI inside the handler lets nested
 * interrupts in (5.5), and the loop shuts them out again on return.
 *
 * The handler of vector 2 (delivered asynchronously to a spinning
 * receiver) finds the signal blocked, runs STUI and finds it unblocked,
 * takes vector 5 nested, runs CLUI, and returns once vector 1 was posted.
 * Vector 1 is then delivered by the same loop: its handler runs on the
 * very frame that vector 2's handler had (the frame was popped, not
 * stacked), with the signal blocked again.  Events: 2, 5, end of 2, 1.
 * The old library (SA_NODEFER) had the signal unblocked in every handler.
 * Skips under ThreadSanitizer, which defers signals that arrive in a
 * signal handler until it returns.
 */
#include "helpers-delivery.h"

enum { END2 = 102 };

static _Atomic int fd[3] = { -1, -1, -1 }, ready, started2, got5, clui2, posted1, done;
static _Atomic int blocked_entry2 = 7, blocked_after_stui = 7, blocked_in5 = 7, blocked_in1 = 7;
static _Atomic int blocked_after = 7;
static _Atomic uintptr_t frame2, frame1;

static int notification_blocked(void)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, uintr_notification_signal());
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	if (vector == 2) {
		frame2 = (uintptr_t)__builtin_frame_address(0);
		blocked_entry2 = notification_blocked();
		uintr_stui();
		blocked_after_stui = notification_blocked();
		/* Only now may 5 be posted: posted before the STUI, it would be
		 * delivered inside uintr_stui() itself, not by a nested signal. */
		started2 = 1;
		TD_HANDLER_WAIT(got5);
		uintr_clui();
		clui2 = 1;
		TD_HANDLER_WAIT(posted1);
		td_syscall(); /* its notification is processed here (UIF = 0) */
		td_record(END2);
	} else if (vector == 5) {
		blocked_in5 = notification_blocked();
		got5 = 1;
	} else {
		frame1 = (uintptr_t)__builtin_frame_address(0);
		blocked_in1 = notification_blocked();
		done = 1;
	}
}

static void *receiver(void *arg)
{
	static const unsigned long long vectors[3] = { 1, 2, 5 };
	int i;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	for (i = 0; i < 3; i++) {
		fd[i] = uintr_create_fd(vectors[i], 0);
		CHECK(fd[i] >= 0);
	}
	uintr_stui();
	ready = 1;
	WAIT_UNTIL(done);
	td_syscall();
	blocked_after = notification_blocked();
	CHECK_EQ(uintr_testui(), 1);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx[3], i;

	if (T_TSAN) {
		printf("skip: ThreadSanitizer defers nested signals\n");
		return T_SKIP;
	}
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	for (i = 0; i < 3; i++) {
		idx[i] = uintr_register_sender(fd[i], 0);
		CHECK(idx[i] >= 0);
	}
	uintr_senduipi((unsigned long long)idx[1]);
	WAIT_UNTIL(started2);
	uintr_senduipi((unsigned long long)idx[2]);
	WAIT_UNTIL(clui2);
	uintr_senduipi((unsigned long long)idx[0]);
	posted1 = 1;
	t_join(t);
	TD_CHECK_EVENTS(2, 5, END2, 1);
	CHECK_EQ(blocked_entry2, 1);
	CHECK_EQ(blocked_after_stui, 0);
	CHECK_EQ(blocked_in5, 1);
	CHECK_EQ(blocked_in1, 1);
	CHECK_EQ(blocked_after, 0);
	CHECK(frame1 == frame2);
	return T_PASS;
}
