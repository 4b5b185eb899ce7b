/*
 * A thread that is its own sender, chained from its handler (reference
 * 2.4: any holder of the fd may register as a sender, including the
 * receiver; 5.1 SENDUIPI from any user code; 5.3 highest pending first):
 * the handler of vector v > 0 sends v - 1 through the thread's own UITT.
 * Sending 5 yields exactly 5, 4, 3, 2, 1, 0.
 */
#include "helpers-delivery.h"

static int idx[6];
static _Atomic int handled;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
	if (vector > 0)
		uintr_senduipi((unsigned long long)idx[vector - 1]);
}

static void *self_sender(void *arg)
{
	int fd[6], v;

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	for (v = 0; v < 6; v++) {
		fd[v] = uintr_create_fd((unsigned long long)v, 0);
		CHECK(fd[v] >= 0);
		idx[v] = uintr_register_sender(fd[v], 0);
		CHECK_EQ(idx[v], v);
	}
	uintr_stui();
	uintr_senduipi((unsigned long long)idx[5]);
	WAIT_UNTIL(handled == 6);
	td_syscall();
	CHECK_EQ(handled, 6);
	TD_CHECK_EVENTS(5, 4, 3, 2, 1, 0);
	CHECK_EQ(td_uirr(), 0);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	t_join(t_start(self_sender, NULL));
	CHECK_EQ(handled, 6);
	return T_PASS;
}
