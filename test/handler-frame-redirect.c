/*
 * Issue item 3 (reference 5.3, 5.4): the handler receives the interrupted
 * ip, flags and sp, and changing the frame changes where the interrupted
 * code resumes, as UIRET pops it -- the preemptive scheduler use case.
 * The receiver spins in a function alone in its own section: frame->ip
 * lies inside it, frame->sp inside the receiver thread's stack, and on
 * x86-64 frame->flags has RFLAGS bit 1 (always 1) set.  The handler then
 * points ip at escape() and sp at the top of a static stack; escape()
 * runs there, on the receiver thread, and siglongjmp()s back to the
 * receiver's sigsetjmp point.  It must run exactly once and the spin loop
 * must never resume.  Skips (77) under ThreadSanitizer, which runs
 * handlers on a copy of the context (helpers.h, T_TSAN).
 */
#undef _FORTIFY_SOURCE /* the jump leaves a foreign stack on purpose */
#include "helpers-delivery.h"

static _Atomic int ufd = -1, ready, handled, escaped, resumed, spin_returned;
static _Atomic unsigned long long seen_ip, seen_sp, seen_flags, seen_vector = 99;
static _Atomic unsigned long long escape_local, escape_tid;
static unsigned long long stack_lo, stack_hi;
static _Atomic pid_t receiver_tid;
static sigjmp_buf back;

#define ESCAPE_STACK_SIZE (64 * 1024)
static unsigned char escape_stack[ESCAPE_STACK_SIZE] __attribute__((aligned(16)));

__attribute__((noreturn, noinline)) static void escape(void)
{
	volatile int local = 0;

	escape_local = (unsigned long long)(uintptr_t)&local;
	escape_tid = (unsigned long long)t_gettid();
	atomic_fetch_add(&escaped, 1);
	siglongjmp(back, 1);
}

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	unsigned long long top = (unsigned long long)(uintptr_t)(escape_stack + ESCAPE_STACK_SIZE);

	seen_vector = vector;
	seen_ip = frame->ip;
	seen_sp = frame->sp;
	seen_flags = frame->flags;
	atomic_fetch_add(&handled, 1);

	frame->ip = (unsigned long long)(uintptr_t)escape;
#if defined(__x86_64__)
	/* At a function's entry RSP + 8 is 16-aligned (the return address
	 * slot; escape never returns). */
	frame->sp = top - 8;
#else
	frame->sp = top; /* aarch64, riscv64: sp 16-aligned at entry */
#endif
}

extern const char __start_redirect_spin[], __stop_redirect_spin[];
__attribute__((noinline, section("redirect_spin"))) static void spin(void)
{
	while (!atomic_load_explicit(&handled, memory_order_relaxed))
		;
}

static void *receiver(void *arg)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	(void)arg;
	receiver_tid = t_gettid();
	CHECK(pthread_getattr_np(pthread_self(), &attr) == 0);
	CHECK(pthread_attr_getstack(&attr, &addr, &size) == 0);
	pthread_attr_destroy(&attr);
	stack_lo = (unsigned long long)(uintptr_t)addr;
	stack_hi = stack_lo + size;

	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(12, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	if (sigsetjmp(back, 1) == 0) {
		ready = 1;
		spin();
		/* Only reached if the changed frame was ignored. */
		atomic_fetch_add(&spin_returned, 1);
		return NULL;
	}
	atomic_fetch_add(&resumed, 1);
	CHECK_EQ(uintr_testui(), 1); /* the delivery completed normally */
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	unsigned long long lo = (unsigned long long)(uintptr_t)escape_stack;
	int idx;

	WAIT_UNTIL(ready);
	if (T_TSAN) {
		printf("skip: ThreadSanitizer loses frame changes\n");
		exit(T_SKIP);
	}
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	uintr_senduipi((unsigned long long)idx);
	t_join(t);

	CHECK_EQ(spin_returned, 0);
	CHECK_EQ(handled, 1);
	CHECK_EQ(seen_vector, 12);
	CHECK(seen_ip >= (unsigned long long)(uintptr_t)__start_redirect_spin &&
	      seen_ip < (unsigned long long)(uintptr_t)__stop_redirect_spin);
	CHECK(seen_sp >= stack_lo && seen_sp < stack_hi);
#if defined(__x86_64__)
	CHECK(seen_flags & 0x2);
#endif
	CHECK_EQ(escaped, 1);
	CHECK_EQ(resumed, 1);
	CHECK_EQ(escape_tid, receiver_tid); /* escape ran on the receiver thread */
	CHECK(escape_local >= lo && escape_local < lo + ESCAPE_STACK_SIZE);
	return T_PASS;
}
