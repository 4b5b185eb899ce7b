/*
 * The later ABI's uipi fd (reference 3; the branch's selftest
 * syscall_ipi_fd): a process hands its sender table to another one.
 *   The child is forked before the parent registers anything, so it
 *   inherits no table.  The parent registers a handler, vector 6 through
 *   uintr_later_register_self (index 0) and vector 3 through a uvec fd it
 *   registers as a sender (index 1), makes a uipi fd (uintr_later_ipi_fd)
 *   and passes it over a socket.  The child adopts it
 *   (uintr_later_ioctl(fd, UIPI_SET_TARGET_TABLE): 0, a second time
 *   EBUSY), sends through index 1 then 0: the parent's handler runs for 3,
 *   then 6; index 2 takes #GP in the child.
 * Also: a child forked after the table exists inherits it (the branch's
 * child mm shares the UITT): its send through index 0 is delivered and
 * it cannot adopt a uipi fd (EBUSY).
 */
#include "helpers-delivery.h"

#include <sys/wait.h>

static _Atomic int count[UINTR_MAX_VECTORS];

static void handler(struct uintr_frame *frame, unsigned long long vector)
{
	(void)frame;
	td_record((int)vector);
	atomic_fetch_add(&count[vector], 1);
}

static void adopting_child(int sock)
{
	char ok = 0;
	int ipi = t_recv_fd(sock);

	CHECK(ipi >= 0);
	CHECK_EQ(uintr_later_ioctl(ipi, UIPI_SET_TARGET_TABLE), 0);
	CHECK_ERR(uintr_later_ioctl(ipi, UIPI_SET_TARGET_TABLE), EBUSY);
	uintr_senduipi(1);
	CHECK(read(sock, &ok, 1) == 1);
	uintr_senduipi(0);
	CHECK(read(sock, &ok, 1) == 1);
	CHECK_EQ(t_catch_fault(t_send_index, (void *)(uintptr_t)2, NULL), SIGSEGV);
	_exit(T_PASS);
}

int main(void)
{
	int sv[2], ufd, ipi;
	pid_t child, child2;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		close(sv[0]);
		adopting_child(sv[1]);
	}
	close(sv[1]);
	CHECK_EQ(uintr_later_register_handler(handler, 0), 0);
	CHECK_EQ(uintr_later_register_self(6, 0), 0);
	ufd = uintr_later_vector_fd(3, 0);
	CHECK(ufd >= 0);
	CHECK_EQ(uintr_later_register_sender(ufd, 0), 1);
	ipi = uintr_later_ipi_fd(0);
	CHECK(ipi >= 0);
	uintr_stui();
	t_send_fd(sv[0], ipi);
	WAIT_UNTIL(count[3] == 1);
	CHECK(write(sv[0], "1", 1) == 1);
	WAIT_UNTIL(count[6] == 1);
	CHECK(write(sv[0], "2", 1) == 1);
	t_wait_child_ok(child);

	child2 = fork();
	CHECK(child2 >= 0);
	if (child2 == 0) {
		CHECK_ERR(uintr_later_ioctl(ipi, UIPI_SET_TARGET_TABLE), EBUSY);
		uintr_senduipi(0);
		_exit(T_PASS);
	}
	t_wait_child_ok(child2);
	WAIT_UNTIL(count[6] == 2);
	td_syscall();
	CHECK_EQ(count[3], 1);
	CHECK_EQ(count[6], 2);
	TD_CHECK_EVENTS(3, 6, 6);
	close(ipi);
	close(ufd);
	CHECK_EQ(uintr_later_unregister_handler(0), 0);
	return T_PASS;
}
