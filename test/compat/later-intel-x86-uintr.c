/*
 * What the x86/uintr.c selftest of Intel's later branch
 * (uintr-linux-kernel) checks, under uintr-run --abi=later, as that
 * program does it: syscalls 471-476 by number through glibc's syscall(),
 * _stui() and _senduipi(), the main thread as the receiver, one sender
 * thread per round that registers the uvec fd, sends once and
 * unregisters its index, never joined (issue 12).
 *   1. test_base_ipi: handler with flags 0, uintr_vector_fd(0), STUI; the
 *      main thread spins in user space until the handler ran; then
 *      close(uvec fd) and uintr_unregister_handler(0).
 *   2. test_blocking_ipi: handler again, now with
 *      UINTR_HANDLER_FLAG_WAITING_ANY (accepted), uintr_vector_fd(0)
 *      again, STUI; uintr_wait(usec, 0) blocks until the sender sends
 *      (it sends once it sees the main thread asleep) and returns
 *      -1/EINTR after the handler ran.  Intel's program waits at most
 *      10^6 us and has the sender sleep 1 ms first; we wait at most the
 *      branch's maximum, 10^9 us, and never decide by sleeping.
 *   3. close and uintr_unregister_handler(0) succeed.
 */
#include "helpers-compat.h"

#define NR_vector_fd 473
#define WAITING_ANY 0x3000

static int received, handled, sent, sent_at_handler, senders_done;
static int uvec_fd = -1;
static int main_waiting;
static pid_t main_tid;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	(void)vector;
	ADD(handled, 1);
	STORE(sent_at_handler, LOAD(sent));
	STORE(received, 1);
}

static void *sender(void *arg)
{
	long idx = syscall(NR_uintr_register_sender, uvec_fd, 0);

	CHECK(idx >= 0);
	if (arg)
		WAIT_UNTIL(LOAD(main_waiting) && t_thread_state(main_tid) == 'S');
	ADD(sent, 1);
	_senduipi((unsigned long long)idx);
	CHECK_EQ(syscall(NR_uintr_unregister_sender, idx, 0), 0);
	ADD(senders_done, 1);
	return NULL;
}

static void setup(unsigned int flags)
{
	long fd;

	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)handler, flags), 0);
	fd = syscall(NR_vector_fd, 0, 0);
	CHECK(fd >= 0);
	uvec_fd = (int)fd;
	_stui();
	STORE(received, 0);
}

int main(void)
{
	pthread_t t;
	long r;

	main_tid = t_gettid();

	/* 1 */
	setup(0);
	t = t_start(sender, NULL);
	CHECK(pthread_detach(t) == 0);
	WAIT_UNTIL(LOAD(received));
	CHECK_EQ(LOAD(handled), 1);
	CHECK_EQ(LOAD(sent_at_handler), 1);
	/* The detached sender tears down before the receiver does, so that
	 * the test's teardown never races the sender's (as in
	 * intel-x86-uintr). */
	WAIT_UNTIL(LOAD(senders_done) == 1);
	CHECK_EQ(close(uvec_fd), 0);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);

	/* 2 */
	setup(WAITING_ANY);
	t = t_start(sender, (void *)1);
	CHECK(pthread_detach(t) == 0);
	STORE(main_waiting, 1);
	errno = 0;
	r = syscall(NR_uintr_wait, 1000000000L, 0L);
	STORE(main_waiting, 0);
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, EINTR);
	CHECK_EQ(LOAD(received), 1);
	CHECK_EQ(LOAD(handled), 2);
	CHECK_EQ(LOAD(sent_at_handler), 2);

	/* 3 */
	WAIT_UNTIL(LOAD(senders_done) == 2);
	CHECK_EQ(close(uvec_fd), 0);
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	return T_PASS;
}
