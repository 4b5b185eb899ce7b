/*
 * Binary compatibility, a receiver blocked in an ordinary syscall (RFC 6.1;
 * issue: delivery by rewriting the interrupted context): a receiver with
 * UIF = 1 blocked in read() on an empty pipe is interrupted; the handler
 * runs while the read is pending and its frame RIP is the `syscall`
 * instruction itself (0F 05: the kernel rewound it to restart the call),
 * so after UIRET the read resumes blocking and later returns the byte
 * written, not EINTR.  Exactly one delivery.
 */
#include "helpers-compat.h"

static int uipi_fd = -1, ready, handled;
static pid_t receiver_tid;
static unsigned long long seen_rip, seen_vector;
static int pipefd[2];
static unsigned char read_byte;
static long read_result;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	STORE(seen_rip, frame->rip);
	STORE(seen_vector, vector);
	ADD(handled, 1);
}

static void *receiver(void *arg)
{
	unsigned char b = 0;
	long fd;

	(void)arg;
	STORE(receiver_tid, t_gettid());
	CHECK_EQ(u_register_handler(handler, 0), 0);
	fd = u_create_fd(50, 0);
	CHECK(fd >= 0);
	STORE(uipi_fd, (int)fd);
	_stui();
	STORE(ready, 1);
	read_result = read(pipefd[0], &b, 1);
	read_byte = b;
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	const unsigned char *insn;
	pthread_t t;
	pid_t tid;
	long idx;

	CHECK(pipe(pipefd) == 0);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	tid = LOAD(receiver_tid);
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);
	WAIT_UNTIL(t_thread_state(tid) == 'S');
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(handled) == 1);
	CHECK_EQ(LOAD(seen_vector), 50);
	insn = (const unsigned char *)(uintptr_t)LOAD(seen_rip);
	CHECK(insn[0] == 0x0f && insn[1] == 0x05);
	/* Back in read(), blocked again. */
	WAIT_UNTIL(t_thread_state(tid) == 'S');
	CHECK(write(pipefd[1], "\x5a", 1) == 1);
	t_join(t);
	CHECK_EQ(read_result, 1);
	CHECK_EQ(read_byte, 0x5a);
	CHECK_EQ(LOAD(handled), 1);
	return T_PASS;
}
