/*
 * Back-to-back delivery (reference 5.4: "a pending vector is delivered
 * immediately after UIRET ... before normal execution can resume"; 5.2:
 * notifications are processed while UIF = 0): while the handler of vector
 * 10 runs, the sender posts vector 4; when the handler returns, vector 4
 * is delivered before the interrupted code makes any progress.  The
 * interrupted loop increments a counter and each handler records its
 * value: both values are equal (not checked under ThreadSanitizer, which
 * defers the second signal to the next runtime call of the interrupted
 * code).
 */
#include "helpers-delivery.h"

static _Atomic int fd10 = -1, fd4 = -1, ready, in10, posted4, done;
static _Atomic int handled;
static _Atomic unsigned long long seen[2] = { 1, 2 };
static volatile unsigned long long spins;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	int n;

	(void)frame;
	n = atomic_load(&handled);
	if (n < 2)
		seen[n] = spins;
	td_record((int)vector);
	if (vector == 10) {
		in10 = 1;
		TD_HANDLER_WAIT(posted4);
	}
	if (vector == 4)
		done = 1;
	atomic_fetch_add(&handled, 1);
}

static void *receiver(void *arg)
{
	(void)arg;
	CHECK(uintr_register_handler(handler, 0) == 0);
	fd10 = uintr_create_fd(10, 0);
	fd4 = uintr_create_fd(4, 0);
	CHECK(fd10 >= 0 && fd4 >= 0);
	uintr_stui();
	ready = 1;
	/* Plain code, no calls: only user interrupts stop it. */
	while (!atomic_load_explicit(&done, memory_order_relaxed))
		spins++;
	return NULL;
}

int main(void)
{
	pthread_t t = t_start(receiver, NULL);
	int i10, i4;

	WAIT_UNTIL(ready);
	i10 = uintr_register_sender(fd10, 0);
	i4 = uintr_register_sender(fd4, 0);
	CHECK(i10 >= 0 && i4 >= 0);
	uintr_senduipi((unsigned long long)i10);
	WAIT_UNTIL(in10);
	uintr_senduipi((unsigned long long)i4);
	posted4 = 1;
	t_join(t);
	CHECK_EQ(handled, 2);
	TD_CHECK_EVENTS(10, 4);
	if (!T_TSAN && seen[0] != seen[1]) {
		fprintf(stderr, "interrupted code advanced between the deliveries: %llu -> %llu\n",
			(unsigned long long)seen[0], (unsigned long long)seen[1]);
		return T_FAIL;
	}
	return T_PASS;
}
