/*
 * The instrumented state (uintr_set_safepoints(3)): 200 sends from another
 * thread, each delivered exactly once, at a safepoint of the receiver's
 * loop, with no notification signal taken; the handler's frame describes
 * the uintr_safepoint() call (ip inside the looping function); UIF is 0
 * inside the handler, 1 after.
 */
#include "helpers-safepoint.h"

#define N 200

static _Atomic int fd = -1, ready, stop, handled, bad;
static _Atomic unsigned long long seen_ip;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	if (vector != 7 || uintr_testui() != 0)
		bad = 1;
	seen_ip = frame->ip;
	atomic_fetch_add(&handled, 1);
}

extern const char __start_sp_text[], __stop_sp_text[];
__attribute__((noinline, section("sp_text"))) static void loop_with_safepoints(void)
{
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		ts_safepoint();
}

static void *receiver(void *arg)
{
	struct uintr_stats s;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd = uintr_create_fd(7, 0);
	CHECK(fd >= 0);
	CHECK_EQ(ts_word(), 0);
	CHECK(uintr_set_safepoints(TS_NO_DEADLINE, 0) == 0);
	CHECK_EQ(ts_word(), 0);
	uintr_stui();
	ready = 1;
	loop_with_safepoints();
	CHECK_EQ(uintr_testui(), 1);
	s = ts_stats();
	CHECK_EQ(s.notifications, 0);
	CHECK_EQ(s.spurious, 0);
	CHECK_EQ(s.delivered, N);
	CHECK(uintr_set_safepoints(0, 0) == 0);
	CHECK_EQ(ts_stats().delivered, N);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int idx, i;

	WAIT_UNTIL(ready);
	idx = uintr_register_sender(fd, 0);
	CHECK(idx >= 0);
	for (i = 0; i < N; i++) {
		uintr_senduipi((unsigned long long)idx);
		WAIT_UNTIL(handled == i + 1);
	}
	stop = 1;
	t_join(t);
	CHECK_EQ(handled, N);
	CHECK_EQ(bad, 0);
	CHECK(seen_ip >= (unsigned long long)(uintptr_t)__start_sp_text &&
	      seen_ip < (unsigned long long)(uintptr_t)__stop_sp_text);
	return T_PASS;
}
