/*
 * Nesting (reference 5.5: "STUI inside the handler allows nested user
 * interrupts of any vector"; 5.3: UIF = 0 on entry): the handler of
 * vector 1 runs STUI, then waits until vector 9 has been delivered; the
 * main thread posts 9 once the handler of 1 has started.  The events are
 * exactly: start of 1, 9, end of 1.  UIF is 0 on entry to both handlers
 * and 1 once everything returned.  Skips (77) under ThreadSanitizer,
 * which defers a signal that arrives in a signal handler until that
 * handler returns.
 */
#include "helpers-delivery.h"

enum { START1 = 101, END1 = 201 };

static _Atomic int fd1 = -1, fd9 = -1, ready, started1, got9, done1;
static _Atomic int uif_entry1 = 7, uif_after_stui = 7, uif_entry9 = 7, calls1, calls9;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector == 1) {
		atomic_fetch_add(&calls1, 1);
		uif_entry1 = uintr_testui();
		td_record(START1);
		uintr_stui();
		uif_after_stui = uintr_testui();
		started1 = 1;
		TD_HANDLER_WAIT(got9);
		td_record(END1);
		done1 = 1;
	} else {
		atomic_fetch_add(&calls9, 1);
		uif_entry9 = uintr_testui();
		td_record((int)vector);
		got9 = 1;
	}
}

static void *receiver(void *arg)
{
	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd1 = uintr_create_fd(1, 0);
	fd9 = uintr_create_fd(9, 0);
	CHECK(fd1 >= 0 && fd9 >= 0);
	uintr_stui();
	ready = 1;
	WAIT_UNTIL(done1);
	td_syscall();
	CHECK_EQ(uintr_testui(), 1);
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i1, i9;

	if (T_TSAN) {
		printf("skip: ThreadSanitizer defers nested signals\n");
		return T_SKIP;
	}
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	i1 = uintr_register_sender(fd1, 0);
	i9 = uintr_register_sender(fd9, 0);
	CHECK(i1 >= 0 && i9 >= 0);
	uintr_senduipi((unsigned long long)i1);
	WAIT_UNTIL(started1);
	uintr_senduipi((unsigned long long)i9);
	t_join(t);
	TD_CHECK_EVENTS(START1, 9, END1);
	CHECK_EQ(calls1, 1);
	CHECK_EQ(calls9, 1);
	CHECK_EQ(uif_entry1, 0);
	CHECK_EQ(uif_after_stui, 1);
	CHECK_EQ(uif_entry9, 0);
	return T_PASS;
}
