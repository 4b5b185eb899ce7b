/*
 * Issue item 4 (reference 6.1: a receiver in the kernel gets its interrupt
 * "when the task enters ring-3 again"): a receiver blocked in read() on an
 * empty pipe gets the interrupt; the handler writes one byte into that same
 * pipe, and the read, restarted after the delivery, returns that byte.
 * The handler runs exactly once.  Skips (77) under ThreadSanitizer,
 * which defers the signal until the thread enters its runtime, and a
 * restarted read() never does.
 */
#include "helpers-delivery.h"

static _Atomic int ufd = -1, ready, reading, handled;
static _Atomic pid_t receiver_tid;
static int pipefd[2];
static _Atomic long read_ret = -2;
static _Atomic int read_errno, handled_at_return = -1;
static _Atomic char read_byte;

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	char b = 'U';

	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&handled, 1);
	if (write(pipefd[1], &b, 1) != 1)
		td_fail_async("handler: write to the pipe failed\n");
}

static void *receiver(void *arg)
{
	char b = 0;
	ssize_t n;

	(void)arg;
	receiver_tid = t_gettid();
	CHECK(uintr_register_handler(handler, 0) == 0);
	ufd = uintr_create_fd(6, 0);
	CHECK(ufd >= 0);
	uintr_stui();
	ready = 1;
	reading = 1;
	n = read(pipefd[0], &b, 1);
	read_errno = errno;
	handled_at_return = handled;
	read_ret = n;
	read_byte = b;
	CHECK(uintr_unregister_handler(0) == 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int idx;

	if (T_TSAN) {
		printf("skip: ThreadSanitizer defers signals during read()\n");
		return T_SKIP;
	}
	CHECK(pipe(pipefd) == 0);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(ready);
	idx = uintr_register_sender(ufd, 0);
	CHECK(idx >= 0);
	WAIT_UNTIL(reading && t_thread_state(receiver_tid) == 'S');
	uintr_senduipi((unsigned long long)idx);
	WAIT_UNTIL(read_ret != -2); /* a read that never returns fails here */
	t_join(t);
	if (read_ret != 1)
		fprintf(stderr, "read returned %ld errno %d\n", (long)read_ret, (int)read_errno);
	CHECK_EQ(read_ret, 1);
	CHECK_EQ(read_byte, 'U');
	CHECK_EQ(handled_at_return, 1);
	CHECK_EQ(handled, 1);
	TD_CHECK_EVENTS(6);
	return T_PASS;
}
