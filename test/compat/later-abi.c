/*
 * Intel's later ABI under uintr-run --abi=later (reference 3; run by
 * test/run-tests.sh with --abi=later for every test/compat/later-*): a
 * -muintr program that makes the branch's syscalls 471-479 by number.
 *  1. Errnos: register_handler with flag 1 -> EINVAL, WAITING_ANY
 *     accepted; vector_fd 64 -> ENOSPC, the same vector twice allowed;
 *     unregister_sender of a free index -> EINVAL; wait: usec > 10^9 or
 *     flags -> EINVAL, usec 0 -> 0, a timeout -> 0; alt_stack flags ->
 *     EINVAL; ioctl(UIPI_SET_TARGET_TABLE) on a uvec fd -> ENOTTY and
 *     UINTR_IS_ACTIVE -> ENOTTY; register_self 64 -> ENOSPC.
 *  2. The sender table is the process's: thread A registers the uvec fd
 *     (index 0), the main thread sends through it: delivered.
 *  3. register_self(5): index 1, sent by thread B: delivered.
 *  4. uintr_wait(10^9 us, 0) blocks until thread A sends: -1/EINTR after
 *     the handler ran, whose frame RIP is the instruction after the
 *     syscall.
 *  5. alt_stack(buf, 8192): the handler runs inside [buf, buf + 8192);
 *     alt_stack(NULL): on the interrupted stack again.
 *  6. A uipi fd (ipi_fd) passed to a child forked before the table
 *     existed: its ioctl UIPI_SET_TARGET_TABLE adopts it, SENDUIPI 1 in
 *     the child reaches us (vector 5).
 *  7. unregister_sender(0): SENDUIPI 0 takes SIGSEGV (the table stays).
 */
#include "helpers-compat.h"

#include <sys/ioctl.h>

#define NR_vector_fd 473
#define NR_register_self 477
#define NR_alt_stack 478
#define NR_ipi_fd 479
#define WAITING_ANY 0x3000
#define UIPI_SET_TARGET_TABLE 0x7500
#define UINTR_IS_ACTIVE 0x5500

static int count[64], total;
static unsigned long long seen_rip, seen_sp;
static int uvec = -1;
static char altstack[8192] __attribute__((aligned(16)));

static unsigned long long get_sp(void)
{
	unsigned long long sp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
}

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	STORE(seen_rip, frame->rip);
	STORE(seen_sp, get_sp());
	ADD(count[vector & 63], 1);
	ADD(total, 1);
}

static long sys(long nr, long a0, long a1, long a2)
{
	return syscall(nr, a0, a1, a2);
}

static void *register_and_wait(void *arg)
{
	(void)arg;
	CHECK_EQ(sys(NR_uintr_register_sender, uvec, 0, 0), 0);
	return NULL;
}

static void *send_1(void *arg)
{
	(void)arg;
	_senduipi(1);
	return NULL;
}

static pid_t receiver_tid;
static int phase;

static void *send_when_sleeping(void *arg)
{
	(void)arg;
	WAIT_UNTIL(LOAD(phase) == 4 && t_thread_state(LOAD(receiver_tid)) == 'S');
	_senduipi(0);
	return NULL;
}

static sigjmp_buf jump;
static void on_segv(int sig)
{
	siglongjmp(jump, sig);
}

/* The signal SENDUIPI takes through index i, or 0. */
static __attribute__((noinline)) int send_fault(unsigned long long i)
{
	int sig;

	signal(SIGSEGV, on_segv);
	sig = sigsetjmp(jump, 1);
	if (sig == 0)
		_senduipi(i);
	signal(SIGSEGV, SIG_DFL);
	return sig;
}

int main(void)
{
	unsigned long long after;
	int sv[2], ipi, fd2;
	long r;
	pid_t child;
	pthread_t t;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		/* 6, the child: no table of its own yet. */
		close(sv[0]);
		ipi = t_recv_fd(sv[1]);
		CHECK(ipi >= 0);
		CHECK_EQ(ioctl(ipi, UIPI_SET_TARGET_TABLE), 0);
		_senduipi(1);
		_exit(T_PASS);
	}
	close(sv[1]);
	STORE(receiver_tid, t_gettid());

	/* 1 */
	CHECK_ERR(sys(NR_uintr_register_handler, (long)handler, 1, 0), EINVAL);
	CHECK_EQ(sys(NR_uintr_register_handler, (long)handler, WAITING_ANY, 0), 0);
	CHECK_ERR(sys(NR_vector_fd, 64, 0, 0), ENOSPC);
	uvec = (int)sys(NR_vector_fd, 3, 0, 0);
	CHECK(uvec >= 0);
	fd2 = (int)sys(NR_vector_fd, 3, 0, 0);
	CHECK(fd2 >= 0);
	CHECK_ERR(sys(NR_uintr_unregister_sender, 0, 0, 0), EINVAL);
	CHECK_ERR(sys(NR_uintr_wait, 1000000001L, 0, 0), EINVAL);
	CHECK_ERR(sys(NR_uintr_wait, 10, 1, 0), EINVAL);
	CHECK_EQ(sys(NR_uintr_wait, 0, 0, 0), 0);
	CHECK_EQ(sys(NR_uintr_wait, 2000, 0, 0), 0);
	CHECK_ERR(sys(NR_alt_stack, 0, 0, 1), EINVAL);
	CHECK_ERR(ioctl(uvec, UIPI_SET_TARGET_TABLE), ENOTTY);
	CHECK_ERR(ioctl(uvec, UINTR_IS_ACTIVE), ENOTTY);
	CHECK_ERR(sys(NR_register_self, 64, 0, 0), ENOSPC);
	_stui();

	/* 2 */
	t_join(t_start(register_and_wait, NULL));
	_senduipi(0);
	WAIT_UNTIL(LOAD(count[3]) == 1);

	/* 3 */
	CHECK_EQ(sys(NR_register_self, 5, 0, 0), 1);
	t_join(t_start(send_1, NULL));
	WAIT_UNTIL(LOAD(count[5]) == 1);

	/* 4 */
	t = t_start(send_when_sleeping, NULL);
	STORE(phase, 4);
	__asm__ volatile("leaq 1f(%%rip), %1\n\t"
			 "syscall\n"
			 "1:"
			 : "=a"(r), "=&r"(after)
			 : "0"((long)NR_uintr_wait), "D"(1000000000L), "S"(0L)
			 : "rcx", "r11", "memory");
	CHECK_EQ(r, -EINTR);
	CHECK_EQ(LOAD(count[3]), 2);
	CHECK_EQ(LOAD(seen_rip), after);
	t_join(t);

	/* 5 */
	CHECK_EQ(sys(NR_alt_stack, (long)altstack, sizeof(altstack), 0), 0);
	_senduipi(0);
	WAIT_UNTIL(LOAD(count[3]) == 3);
	CHECK(LOAD(seen_sp) >= (unsigned long long)(uintptr_t)altstack);
	CHECK(LOAD(seen_sp) < (unsigned long long)(uintptr_t)(altstack + sizeof(altstack)));
	CHECK_EQ(sys(NR_alt_stack, 0, 0, 0), 0);
	_senduipi(0);
	WAIT_UNTIL(LOAD(count[3]) == 4);
	CHECK(LOAD(seen_sp) < (unsigned long long)(uintptr_t)altstack ||
	      LOAD(seen_sp) >= (unsigned long long)(uintptr_t)(altstack + sizeof(altstack)));

	/* 6 */
	ipi = (int)sys(NR_ipi_fd, 0, 0, 0);
	CHECK(ipi >= 0);
	t_send_fd(sv[0], ipi);
	t_wait_child_ok(child);
	WAIT_UNTIL(LOAD(count[5]) == 2);

	/* 7 */
	CHECK_EQ(sys(NR_uintr_unregister_sender, 0, 0, 0), 0);
	CHECK_EQ(send_fault(0), SIGSEGV);

	CHECK_EQ(LOAD(total), 6);
	close(ipi);
	close(uvec);
	close(fd2);
	CHECK_EQ(u_unregister_handler(0), 0);
	return T_PASS;
}
