/*
 * Coalescing (reference 2.4 "multiple IPIs with the same vector ... are
 * coalesced", 5.1, 5.5, checklist 10.2/10.3): while the receiver has
 * UIF = 0, ten posts of vector 3 and five of vector 9 leave exactly the
 * two bits in UIRR; STUI then runs the handler exactly twice, 9 before 3,
 * and nothing more arrives afterwards.
 */
#include "helpers-delivery.h"

static _Atomic int fd3 = -1, fd9 = -1, ready, sent, handled;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	unsigned long long both = (1ull << 3) | (1ull << 9);

	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd3 = uintr_create_fd(3, 0);
	fd9 = uintr_create_fd(9, 0);
	CHECK(fd3 >= 0 && fd9 >= 0);
	CHECK_EQ(uintr_testui(), 0);
	ready = 1;

	/* Poll our own state until the sender is done and both vectors are
	 * recognized: UIF = 0 keeps them pending. */
	WAIT_UNTIL(sent);
	td_syscall(); /* notifications still in flight are processed now */
	WAIT_UNTIL(td_uirr() == both);
	CHECK_EQ(handled, 0);
	CHECK_EQ(td_uirr(), both);

	uintr_stui();
	CHECK_EQ(handled, 2); /* both delivered inside STUI */
	TD_CHECK_EVENTS(9, 3);
	CHECK_EQ(td_uirr(), 0);
	td_syscall();
	CHECK_EQ(handled, 2);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int i3, i9, i;

	WAIT_UNTIL(ready);
	i3 = uintr_register_sender(fd3, 0);
	i9 = uintr_register_sender(fd9, 0);
	CHECK(i3 >= 0 && i9 >= 0);
	for (i = 0; i < 10; i++)
		uintr_senduipi((unsigned long long)i3);
	for (i = 0; i < 5; i++)
		uintr_senduipi((unsigned long long)i9);
	sent = 1;
	t_join(t);
	CHECK_EQ(handled, 2);
	return T_PASS;
}
