/*
 * Binary compatibility, a receiver blocked in uintr_wait (issue: syscalls
 * intercepted however the program issues them; uintr_wait blocks inside
 * the SIGSYS handler and delivery happens after it returns; RFC 2.6).
 *   1. A raw `syscall` instruction blocks until an interrupt arrives; the
 *      handler runs as if it interrupted the instruction right after the
 *      syscall (frame RIP), before the program sees the syscall return
 *      -EINTR.
 *   2. Through glibc's syscall(): -1/EINTR after the handler ran, and it
 *      really blocks again (the delivery of round 1 does not count as
 *      "delivered since the last uintr_wait returned").
 *   3. UIF = 0 with an interrupt pending: returns -EINTR at once, nothing
 *      delivered; STUI then delivers it.
 *   4. An interrupt was delivered since the last wait returned (by the
 *      STUI of round 3), before this call: it does not count, the call
 *      blocks until the next send (the RFC's wait; issue 12).
 *   5. Blocks again; a signal of the program (SIGUSR1, SA_RESTART) gets
 *      through while it blocks: its handler runs and the wait returns
 *      -EINTR with nothing delivered, as the RFC's TASK_INTERRUPTIBLE
 *      wait does (issue 17).
 *   6. Blocks again; the interrupt ends it as in 1.
 */
#include "helpers-compat.h"

static int uipi_fd = -1;
static int handled, ready, phase;
static pid_t receiver_tid;
static unsigned long long seen_rip[8], seen_vector[8];
static struct t_chan go;
static int usr1_count;

static void on_usr1(int sig)
{
	(void)sig;
	ADD(usr1_count, 1);
}

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	int n = LOAD(handled);

	if (n < 8) {
		STORE(seen_rip[n], frame->rip);
		STORE(seen_vector[n], vector);
	}
	ADD(handled, 1);
}

/* uintr_wait(0) by a `syscall` instruction; *after = the address after it. */
static long raw_wait(unsigned long long *after)
{
	unsigned long long a;
	long ret;

	__asm__ volatile("leaq 1f(%%rip), %1\n\t"
			 "syscall\n"
			 "1:"
			 : "=a"(ret), "=&r"(a)
			 : "0"((long)NR_uintr_wait), "D"(0L)
			 : "rcx", "r11", "memory");
	*after = a;
	return ret;
}

static void *receiver(void *arg)
{
	unsigned long long after = 0;
	long fd, r;
	int i;

	(void)arg;
	STORE(receiver_tid, t_gettid());
	CHECK_EQ(u_register_handler(handler, 0), 0);
	fd = u_create_fd(9, 0);
	CHECK(fd >= 0);
	STORE(uipi_fd, (int)fd);
	_stui();
	STORE(ready, 1);

	/* 1 */
	STORE(phase, 1);
	r = raw_wait(&after);
	CHECK_EQ(LOAD(handled), 1);
	CHECK_EQ(r, -EINTR);
	CHECK_EQ(LOAD(seen_rip[0]), after);

	/* 2 */
	STORE(phase, 2);
	CHECK_ERR(u_wait(0), EINTR);
	CHECK_EQ(LOAD(handled), 2);

	/* 3 */
	_clui();
	STORE(phase, 3);
	t_chan_wait(&go);
	r = raw_wait(&after);
	CHECK_EQ(r, -EINTR);
	CHECK_EQ(LOAD(handled), 2);
	CHECK_EQ(_testui(), 0);
	_stui();
	CHECK_EQ(LOAD(handled), 3);

	/* 4 */
	STORE(phase, 4);
	r = raw_wait(&after);
	CHECK_EQ(r, -EINTR);
	CHECK_EQ(LOAD(handled), 4);
	CHECK_EQ(LOAD(seen_rip[3]), after);

	/* 5 */
	STORE(phase, 5);
	r = raw_wait(&after);
	CHECK_EQ(r, -EINTR);
	CHECK_EQ(LOAD(usr1_count), 1);
	CHECK_EQ(LOAD(handled), 4);

	/* 6 */
	STORE(phase, 6);
	r = raw_wait(&after);
	CHECK_EQ(r, -EINTR);
	CHECK_EQ(LOAD(handled), 5);
	CHECK_EQ(LOAD(seen_rip[4]), after);

	for (i = 0; i < 5; i++)
		CHECK_EQ(LOAD(seen_vector[i]), 9);
	CHECK_EQ(_testui(), 1);
	CHECK_EQ(u_unregister_handler(0), 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	pid_t tid;
	long idx;

	t_chan_init(&go);
	CHECK(signal(SIGUSR1, on_usr1) != SIG_ERR);
	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	tid = LOAD(receiver_tid);
	idx = u_register_sender(LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);

	WAIT_UNTIL(LOAD(phase) == 1 && t_thread_state(tid) == 'S');
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(phase) == 2 && t_thread_state(tid) == 'S');
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(phase) == 3);
	_senduipi((unsigned long long)idx);
	t_chan_post(&go);
	WAIT_UNTIL(LOAD(phase) == 4 && t_thread_state(tid) == 'S');
	CHECK_EQ(LOAD(handled), 3);
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(phase) == 5 && t_thread_state(tid) == 'S');
	CHECK(syscall(SYS_tgkill, getpid(), tid, SIGUSR1) == 0);
	WAIT_UNTIL(LOAD(usr1_count) == 1);
	WAIT_UNTIL(LOAD(phase) == 6 && t_thread_state(tid) == 'S');
	CHECK_EQ(LOAD(handled), 4);
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(handled) == 5);
	t_join(t);
	CHECK_EQ(LOAD(handled), 5);
	return T_PASS;
}
