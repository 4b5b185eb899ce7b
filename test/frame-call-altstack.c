/*
 * uintr_frame_call (issue 13) refuses, with EOPNOTSUPP, a delivery whose
 * notification signal was taken on an alternate signal stack
 * (sigaltstack(2)): the call would have to outlive the kernel's signal
 * frame there, and the next signal taken while another user-level thread
 * runs would start at the top of that stack again and overwrite it.  The
 * handler still runs, once.  The same request succeeds without an
 * alternate stack (SS_DISABLE), and on one set up with SS_AUTODISARM,
 * which the kernel disarms until that handler's sigreturn.
 */
#include "helpers-delivery.h"

/* Linux 4.7's sigaltstack flag (uapi <linux/signal.h>); glibc's headers
 * do not all define it. */
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1u << 31)
#endif

static _Atomic int ufd = -1, ready, handled, calls, result_err = -1, phase;
static _Atomic int autodisarm = 1;

static void the_call(void *arg)
{
	(void)arg;
	atomic_fetch_add(&calls, 1);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)vector;
	errno = 0;
	result_err = uintr_frame_call(frame, the_call, NULL) == -1 ? errno : 0;
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	static unsigned char alt[256 * 1024] __attribute__((aligned(16)));
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0 };

	(void)arg;
	CHECK(sigaltstack(&ss, NULL) == 0);
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(7, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	ready = 1;
	while (atomic_load(&handled) < 1)
		;
	/* Without the alternate stack: the call is made. */
	ss.ss_flags = SS_DISABLE;
	CHECK(sigaltstack(&ss, NULL) == 0);
	phase = 1;
	while (atomic_load(&handled) < 2)
		;
	/* An alternate stack that the kernel disarms while a handler runs on
	 * it: the frame there is safe until its sigreturn, the call is made. */
	ss.ss_flags = SS_AUTODISARM;
	if (sigaltstack(&ss, NULL) != 0) {
		/* qemu-user 7.2 does not know the flag (EINVAL). */
		CHECK_EQ(errno, EINVAL);
		autodisarm = 0;
	}
	phase = 2;
	while (autodisarm && atomic_load(&handled) < 3)
		;
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx;

	if (T_TSAN) {
		printf("skip: ThreadSanitizer runs handlers on a copy of the context\n");
		return T_SKIP;
	}
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(handled == 1);
	CHECK_EQ(result_err, EOPNOTSUPP);
	CHECK_EQ(calls, 0);
	WAIT_UNTIL(phase == 1);
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(handled == 2);
	CHECK_EQ(result_err, 0);
	WAIT_UNTIL(calls == 1);
	WAIT_UNTIL(phase == 2);
	if (!autodisarm) {
		printf("note: SS_AUTODISARM not supported here (EINVAL), not checked\n");
		t_join(t);
		CHECK_EQ(handled, 2);
		CHECK_EQ(calls, 1);
		return T_PASS;
	}
	uintr_senduipi((unsigned long long)idx);
	t_join(t);
	CHECK_EQ(handled, 3);
	CHECK_EQ(result_err, 0);
	CHECK_EQ(calls, 2);
	return T_PASS;
}
