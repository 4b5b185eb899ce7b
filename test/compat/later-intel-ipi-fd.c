/*
 * What selftests/uintr/syscall_ipi_fd.c of Intel's later branch checks,
 * under uintr-run --abi=later, as that program does it (issue 12): a
 * child forked before the parent has any UINTR state receives the
 * parent's uipi fd over a socketpair (SCM_RIGHTS), adopts the table with
 * ioctl(uipi_fd, UIPI_SET_TARGET_TABLE) and sends SENDUIPI 0; the parent
 * registered a handler, uintr_register_self(0) (index 0), made the uipi
 * fd with uintr_ipi_fd(0) and STUI, and spins until its handler ran.
 * The selftest then kills the child; ours exits once it sent.
 */
#include "helpers-compat.h"

#include <sys/ioctl.h>

#define NR_register_self 477
#define NR_ipi_fd 479
#define UIPI_SET_TARGET_TABLE 0x7500

static int received;

static void __attribute__((interrupt))
handler(struct __uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	if (vector == 0)
		STORE(received, 1);
}

int main(void)
{
	long idx, ipi_fd;
	int sv[2], fd;
	pid_t pid;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		fd = t_recv_fd(sv[1]);
		CHECK(fd >= 0);
		CHECK_EQ(ioctl(fd, UIPI_SET_TARGET_TABLE), 0);
		_senduipi(0);
		_exit(T_PASS);
	}
	close(sv[1]);
	CHECK_EQ(syscall(NR_uintr_register_handler, (uintptr_t)handler, 0), 0);
	idx = syscall(NR_register_self, 0, 0);
	CHECK_EQ(idx, 0);
	ipi_fd = syscall(NR_ipi_fd, 0);
	CHECK(ipi_fd >= 0);
	_stui();
	t_send_fd(sv[0], (int)ipi_fd);
	WAIT_UNTIL(LOAD(received));
	CHECK_EQ(syscall(NR_uintr_unregister_handler, 0), 0);
	t_wait_child_ok(pid);
	return T_PASS;
}
