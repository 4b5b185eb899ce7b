/*
 * uintr_frame_call (issue 13) refuses, with EBUSY, a delivery that
 * interrupted the end of an earlier asynchronous delivery whose call has
 * returned: the code between fn's return and the sigreturn runs with the
 * notification signal unblocked, on the stack below the first kernel
 * frame.  A call granted there would nest a second frame below the first;
 * a runtime preempting every quantum at that point grew its user-level
 * stacks until they overflowed (bench uintr-preempt, uintr-timer at 10 us).
 *
 * No timing decides where the second interrupt lands: the first call sets
 * the trap flag, a SIGTRAP handler single-steps until the interrupted ip
 * is in the library's notification handler (the tail), stops stepping,
 * and has the sender thread post while the notification signal is blocked
 * in that SIGTRAP handler; its sigreturn restores the tail's mask and the
 * kernel delivers the notification exactly there.  The handler of that
 * second delivery must still run (once) and see EBUSY; a third, ordinary
 * delivery gets its call again.  x86-64 only (the trap flag).
 */
#include "helpers-delivery.h"

#if defined(__x86_64__)

/* The bounds of the library's notification handler (src/delivery.c puts
 * it in a section of its own). */
extern const char __start_uintr_signal_text[], __stop_uintr_signal_text[];

#define TRAP_FLAG 0x100ull

static _Atomic int ufd = -1, ready, handled, calls, second_calls, done;
static _Atomic int please_send, sent, stepped_into_tail;
static _Atomic unsigned long long receiver_loops;
static _Atomic int err_at[4] = { -1, -1, -1, -1 };
static _Atomic unsigned long long ip_at[4];

static int in_tail(unsigned long long ip)
{
	return ip >= (uintptr_t)__start_uintr_signal_text && ip < (uintptr_t)__stop_uintr_signal_text;
}

static void second_call(void *arg)
{
	(void)arg;
	atomic_fetch_add(&second_calls, 1);
}

/* The first delivery's call: count, then single-step what follows it. */
static void first_call(void *arg)
{
	(void)arg;
	atomic_fetch_add(&calls, 1);
	if (atomic_load(&calls) == 1)
		__asm__ volatile("pushfq\n\torq $0x100, (%%rsp)\n\tpopfq" ::: "memory", "cc");
}

static void on_trap(int signo, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	unsigned long long ip = (unsigned long long)uc->uc_mcontext.gregs[REG_RIP];

	(void)signo;
	(void)si;
	if (!in_tail(ip))
		return; /* still in first_call: step on */
	uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TRAP_FLAG;
	atomic_store(&stepped_into_tail, 1);
	/* The sender posts; the notification stays pending here (sa_mask)
	 * and comes right after this handler's sigreturn, at ip. */
	atomic_store(&please_send, 1);
	while (!atomic_load(&sent))
		;
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	int n = atomic_load(&handled);

	(void)vector;
	if (n < 4) {
		ip_at[n] = frame->ip;
		errno = 0;
		err_at[n] = uintr_frame_call(frame, n == 1 ? second_call : first_call, NULL) == -1
				    ? errno : 0;
	}
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(5, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	ready = 1;
	while (!atomic_load(&done))
		atomic_fetch_add(&receiver_loops, 1);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t;
	int idx;

	if (T_TSAN) {
		printf("skip: ThreadSanitizer runs handlers on a copy of the context\n");
		return T_SKIP;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, uintr_notification_signal());
	CHECK(sigaction(SIGTRAP, &sa, NULL) == 0);

	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);

	/* 1: an ordinary delivery; its call steps into the tail. */
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(please_send);
	/* 2: lands in the tail of 1. */
	uintr_senduipi((unsigned long long)idx);
	atomic_store(&sent, 1);
	WAIT_UNTIL(handled == 2);
	CHECK_EQ(stepped_into_tail, 1);
	CHECK_EQ(err_at[0], 0);
	CHECK(in_tail(ip_at[1]));
	CHECK_EQ(err_at[1], EBUSY);
	/* 3: after both have unwound, the call is granted again.  Wait for
	 * that: the receiver's loop runs only outside both signal frames.
	 * (Posted as soon as handled == 2, 3 could land in 2's own tail on a
	 * loaded machine and be refused with EBUSY too: CI-equivalent run of
	 * stop 30, "gave up waiting for calls == 2".) */
	{
		unsigned long long loops = atomic_load(&receiver_loops);

		WAIT_UNTIL(atomic_load(&receiver_loops) != loops);
	}
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(handled == 3);
	WAIT_UNTIL(calls == 2);
	CHECK(!in_tail(ip_at[2]));
	CHECK_EQ(err_at[2], 0);
	done = 1;
	t_join(t);
	CHECK_EQ(handled, 3);
	CHECK_EQ(calls, 2);
	CHECK_EQ(second_calls, 0);
	return T_PASS;
}

#else

int main(void)
{
	printf("skip: the tail is reached by single-stepping with x86-64's trap flag\n");
	return T_SKIP;
}

#endif
