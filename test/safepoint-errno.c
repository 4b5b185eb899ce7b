/*
 * uintr_set_safepoints(3) errors and the word's life: EOPNOTSUPP for a
 * thread that is not a receiver (uintr_safepoint() is harmless there, the
 * word is 0); EINVAL for flags; EBUSY with the event-loop state, both
 * ways; unregistering resets the word to the static zero; a fork child
 * is no receiver and its word is the static zero.
 */
#include "helpers-safepoint.h"

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
}

static void *loop_receiver(void *arg)
{
	int lfd;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	lfd = uintr_loop_fd(0);
	CHECK(lfd >= 0);
	CHECK_ERR(uintr_set_safepoints(1000000, 0), EBUSY);
	CHECK_EQ(ts_word(), 0);
	CHECK(close(lfd) == 0);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	const volatile unsigned long long *zero = uintr_safepoint_word;
	pid_t pid;

	CHECK(zero != NULL);
	CHECK_EQ(ts_word(), 0);
	CHECK_ERR(uintr_set_safepoints(1000000, 0), EOPNOTSUPP);
	CHECK_ERR(uintr_set_safepoints(0, 0), EOPNOTSUPP);
	CHECK_ERR(uintr_set_safepoints(UINTR_SAFEPOINT_DEFAULT, 0), EOPNOTSUPP);
	uintr_safepoint();
	CHECK(uintr_safepoint_word == zero);

	CHECK(uintr_register_handler(handler, 0) == 0);
	CHECK_ERR(uintr_set_safepoints(1000000, 1), EINVAL);
	CHECK_ERR(uintr_set_safepoints(0, 0x80000000u), EINVAL);
	CHECK(uintr_safepoint_word == zero);
	CHECK(uintr_set_safepoints(TS_NO_DEADLINE, 0) == 0);
	CHECK(uintr_safepoint_word != zero);
	CHECK_EQ(ts_word(), 0);
	CHECK(uintr_set_safepoints(TS_NO_DEADLINE / 2, 0) == 0); /* a new deadline */
	CHECK_ERR(uintr_loop_fd(0), EBUSY);
	CHECK_ERR(uintr_set_safepoints(1, 2), EINVAL);
	CHECK(uintr_safepoint_word != zero);

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (uintr_safepoint_word != zero || ts_word() != 0)
			_exit(1);
		if (uintr_set_safepoints(1000000, 0) != -1 || errno != EOPNOTSUPP)
			_exit(2);
		uintr_safepoint();
		_exit(0);
	}
	t_wait_child_ok(pid);

	CHECK(uintr_unregister_handler(0) == 0);
	CHECK(uintr_safepoint_word == zero);
	CHECK_ERR(uintr_set_safepoints(1000000, 0), EOPNOTSUPP);

	/* Registered again: not instrumented until asked. */
	CHECK(uintr_register_handler(handler, 0) == 0);
	CHECK(uintr_safepoint_word == zero);
	CHECK(uintr_set_safepoints(TS_NO_DEADLINE, 0) == 0);
	CHECK(uintr_set_safepoints(0, 0) == 0);
	CHECK(uintr_safepoint_word == zero);
	CHECK(uintr_unregister_handler(0) == 0);

	t_join(t_start(loop_receiver, NULL));
	return T_PASS;
}
