/*
 * The later ABI's sender table is the process's (reference 3): an index
 * from uintr_later_register_sender or uintr_later_register_self, made on
 * any thread, sends from every thread.
 *  1. The receiver (main thread, UIF = 1) makes vector 4's uvec fd;
 *     thread A registers it: index 0.  A, the main thread and thread B
 *     (which never registered anything) each send through 0: three
 *     deliveries of vector 4.
 *  2. Closing the uvec fd unregisters nothing: a send through 0 is still
 *     delivered.
 *  3. uintr_later_register_self(9): index 1, used by thread B: vector 9
 *     delivered to the main thread.
 *  4. A unregisters index 0: a send through it now takes #GP (SIGSEGV,
 *     not SIGILL: the table stays), on A and on B; index 1 still works.
 */
#include "helpers-delivery.h"

static _Atomic int count[UINTR_MAX_VECTORS], total;
static int ufd = -1;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&count[vector], 1);
	atomic_fetch_add(&total, 1);
}

static void *register_and_send(void *arg)
{
	(void)arg;
	CHECK_EQ(uintr_later_register_sender(ufd, 0), 0);
	uintr_senduipi(0);
	return NULL;
}

static void *send_index(void *arg)
{
	uintr_senduipi((unsigned long long)(uintptr_t)arg);
	return NULL;
}

static void *unregister_and_fault(void *arg)
{
	(void)arg;
	CHECK_EQ(uintr_later_unregister_sender(0, 0), 0);
	CHECK_EQ(t_catch_fault(t_send_index, (void *)(uintptr_t)0, NULL), SIGSEGV);
	return NULL;
}

static void *fault_on_0(void *arg)
{
	(void)arg;
	CHECK_EQ(t_catch_fault(t_send_index, (void *)(uintptr_t)0, NULL), SIGSEGV);
	return NULL;
}

int main(void)
{
	CHECK_EQ(uintr_later_register_handler(handler, 0), 0);
	ufd = uintr_later_vector_fd(4, 0);
	CHECK(ufd >= 0);
	uintr_stui();

	/* 1 */
	t_join(t_start(register_and_send, NULL));
	WAIT_UNTIL(count[4] == 1);
	uintr_senduipi(0);
	WAIT_UNTIL(count[4] == 2);
	t_join(t_start(send_index, (void *)(uintptr_t)0));
	WAIT_UNTIL(count[4] == 3);

	/* 2 */
	CHECK(close(ufd) == 0);
	t_join(t_start(send_index, (void *)(uintptr_t)0));
	WAIT_UNTIL(count[4] == 4);

	/* 3 */
	CHECK_EQ(uintr_later_register_self(9, 0), 1);
	t_join(t_start(send_index, (void *)(uintptr_t)1));
	WAIT_UNTIL(count[9] == 1);

	/* 4 */
	t_join(t_start(unregister_and_fault, NULL));
	t_join(t_start(fault_on_0, NULL));
	CHECK_EQ(t_catch_fault(t_send_index, (void *)(uintptr_t)0, NULL), SIGSEGV);
	t_join(t_start(send_index, (void *)(uintptr_t)1));
	WAIT_UNTIL(count[9] == 2);
	td_syscall();
	CHECK_EQ(total, 6);
	CHECK_EQ(count[4], 4);
	TD_CHECK_EVENTS(4, 4, 4, 4, 9, 9);
	CHECK_EQ(uintr_later_unregister_handler(0), 0);
	return T_PASS;
}
