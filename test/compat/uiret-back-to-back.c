/*
 * Binary compatibility, back-to-back delivery after UIRET (reference 5.4:
 * "a pending vector is delivered immediately after UIRET"; issue: "a
 * further pending vector is delivered at once").  A spinning receiver is
 * interrupted with vector 4; its handler (UIF = 0) executes SENDUIPI to its
 * own vector 20, which stays pending until the handler's UIRET, and then
 * is delivered before the interrupted code runs one more instruction: the
 * second handler call sees the same interrupted RIP, RSP and RFLAGS as the
 * first, and the spin counter did not move in between.  Order 4, 20,
 * exactly two deliveries.
 */
#include "helpers-compat.h"

static int uipi_fd = -1;
static int handled, ready, done;
static long self_index = -1;
static unsigned long long rec_vector[4], rec_rip[4], rec_rsp[4], rec_flags[4], rec_count[4];
static volatile unsigned long long counter;

#ifdef __cplusplus
extern "C" {
#endif
extern const char __start_compat_b2b_text[], __stop_compat_b2b_text[];
#ifdef __cplusplus
}
#endif

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	int n = LOAD(handled);

	if (n < 4) {
		STORE(rec_vector[n], vector);
		STORE(rec_rip[n], frame->rip);
		STORE(rec_rsp[n], frame->rsp);
		STORE(rec_flags[n], frame->rflags);
		STORE(rec_count[n], counter);
	}
	if (vector == 4)
		_senduipi((unsigned long long)self_index);
	else
		STORE(done, 1);
	ADD(handled, 1);
}

__attribute__((noinline, section("compat_b2b_text"))) static void spin_until_done(void)
{
	while (!__atomic_load_n(&done, __ATOMIC_RELAXED))
		counter++;
}

static void *receiver(void *arg)
{
	long fd4, fd20;

	(void)arg;
	CHECK_EQ(u_register_handler(handler, 0), 0);
	fd4 = u_create_fd(4, 0);
	fd20 = u_create_fd(20, 0);
	CHECK(fd4 >= 0 && fd20 >= 0);
	self_index = u_register_sender((int)fd20, 0);
	CHECK_EQ(self_index, 0);
	STORE(uipi_fd, (int)fd4);
	_stui();
	STORE(ready, 1);
	spin_until_done();
	CHECK_EQ(LOAD(handled), 2);
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	long idx;

	WAIT_UNTIL(LOAD(ready));
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(handled) == 2);
	t_join(t);

	CHECK_EQ(LOAD(handled), 2);
	CHECK_EQ(LOAD(rec_vector[0]), 4);
	CHECK_EQ(LOAD(rec_vector[1]), 20);
	CHECK(LOAD(rec_rip[0]) >= (unsigned long long)(uintptr_t)__start_compat_b2b_text &&
	      LOAD(rec_rip[0]) < (unsigned long long)(uintptr_t)__stop_compat_b2b_text);
	CHECK_EQ(LOAD(rec_rip[1]), LOAD(rec_rip[0]));
	CHECK_EQ(LOAD(rec_rsp[1]), LOAD(rec_rsp[0]));
	CHECK_EQ(LOAD(rec_flags[1]), LOAD(rec_flags[0]));
	CHECK_EQ(LOAD(rec_count[1]), LOAD(rec_count[0]));
	return T_PASS;
}
