/*
 * Binary compatibility with the RFC's own syscall numbers (issue: "numbers
 * 471-476 (default) and 449-454 (opt-in, e.g. env UINTR_SYSCALL_BASE=449)";
 * reference 1).  The test re-executes itself with UINTR_SYSCALL_BASE=449;
 * then a whole exchange runs on 449..454: uintr_register_handler (449),
 * uintr_create_fd (451), uintr_register_sender (452), uintr_wait (454, a
 * raw syscall instruction, blocking until the send), uintr_unregister_sender
 * (453), uintr_unregister_handler (450), with the RFC's errnos
 * (449 with a NULL handler: EFAULT, where mainline's futex_waitv would say
 * EINVAL).  The filter the first execution installed for 471..476 is
 * inherited across execve (seccomp filters are) and keeps working there.
 */
#include "helpers-compat.h"

#define BASE 449

static int uipi_fd = -1, ready, phase, handled;
static pid_t receiver_tid;
static unsigned long long seen_vector;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	STORE(seen_vector, vector);
	ADD(handled, 1);
}

static void *receiver(void *arg)
{
	long fd;

	(void)arg;
	STORE(receiver_tid, t_gettid());
	CHECK_EQ(t_raw_syscall(BASE + 0, 0, 0), -EFAULT);
	CHECK_EQ(syscall(BASE + 0, (uintptr_t)handler, 0), 0);
	fd = syscall(BASE + 2, 17, 0);
	CHECK(fd >= 0);
	STORE(uipi_fd, (int)fd);
	_stui();
	STORE(ready, 1);
	STORE(phase, 1);
	CHECK_EQ(t_raw_syscall(BASE + 5, 0, 0), -EINTR);
	CHECK_EQ(LOAD(handled), 1);
	CHECK_EQ(LOAD(seen_vector), 17);
	WAIT_UNTIL(LOAD(phase) == 2);
	CHECK_EQ(syscall(BASE + 1, 0), 0);
	CHECK_EQ(t_raw_syscall(BASE + 1, 0, 0), -EINVAL);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *base = getenv("UINTR_SYSCALL_BASE");
	pthread_t t;
	pid_t tid;
	long idx;

	(void)argc;
	if (!base) {
		CHECK(setenv("UINTR_SYSCALL_BASE", "449", 1) == 0);
		CHECK(setenv("COMPAT_TEST_REEXECUTED", "1", 1) == 0);
		execv("/proc/self/exe", argv);
		CHECK(0);
	}
	CHECK(strcmp(base, "449") == 0);

	t = t_start(receiver, NULL);
	WAIT_UNTIL(LOAD(ready));
	tid = LOAD(receiver_tid);
	idx = syscall(BASE + 3, LOAD(uipi_fd), 0);
	CHECK_EQ(idx, 0);
	CHECK_ERR(syscall(BASE + 3, LOAD(uipi_fd), 0), EISCONN);
	WAIT_UNTIL(LOAD(phase) == 1 && t_thread_state(tid) == 'S');
	_senduipi((unsigned long long)idx);
	WAIT_UNTIL(LOAD(handled) == 1);
	CHECK_EQ(syscall(BASE + 4, LOAD(uipi_fd), 0), 0);
	CHECK_ERR(syscall(BASE + 4, LOAD(uipi_fd), 0), EINVAL);
	STORE(phase, 2);
	t_join(t);

	/* 471..476: the inherited filter of the first execution. */
	if (getenv("COMPAT_TEST_REEXECUTED")) {
		CHECK_EQ(t_raw_syscall(NR_uintr_register_handler, 0, 0), -EFAULT);
		CHECK_ERR(u_wait(0), EOPNOTSUPP);
	}
	CHECK_EQ(LOAD(handled), 1);
	return T_PASS;
}
