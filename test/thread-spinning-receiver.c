/* Item 3/4: a receiver spinning in plain code (no library calls) is
 * interrupted asynchronously; the handler gets the vector and the
 * interrupted ip inside the spinning function; UIF is 0 inside, 1 after. */
#include "helpers.h"

static _Atomic int uipi_fd = -1;
static _Atomic int handled, ready, stop;
static _Atomic unsigned long long seen_vector = 99, seen_ip, seen_uif = 7;
static volatile unsigned long long spins;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	seen_vector = vector;
	seen_ip = frame->ip;
	seen_uif = uintr_testui();
	atomic_fetch_add(&handled, 1);
}

/* The spin loop sits alone in its section: the linker's __start_/__stop_
 * symbols bound the addresses an interrupted ip may have. */
extern const char __start_spin_text[], __stop_spin_text[];
__attribute__((noinline, section("spin_text"))) static void spin_until_handled(void)
{
	while (!atomic_load_explicit(&handled, memory_order_relaxed))
		spins++;
}

static void *receiver(void *arg)
{
	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	CHECK(uintr_testui() == 0); /* UIF = 0 right after registration */
	uipi_fd = uintr_create_fd(5, 0);
	CHECK(uipi_fd >= 0);
	uintr_stui();
	ready = 1;
	spin_until_handled();
	CHECK(uintr_testui() == 1);
	WAIT_UNTIL(stop);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int idx;

	WAIT_UNTIL(ready);
	idx = uintr_register_sender(uipi_fd, 0);
	CHECK_EQ(idx, 0);
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(handled);
	CHECK_EQ(seen_vector, 5);
	CHECK_EQ(seen_uif, 0);
	if (!T_TSAN)
		CHECK(seen_ip >= (unsigned long long)(uintptr_t)__start_spin_text &&
		      seen_ip < (unsigned long long)(uintptr_t)__stop_spin_text);
	stop = 1;
	t_join(t);
	CHECK_EQ(handled, 1);
	return T_PASS;
}
